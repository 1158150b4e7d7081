//! A line read once and kept with its reading, owned: so that it can go where it is
//! needed (from the HTTP front's handler to its session's thread, into the proxy's hold)
//! and be looked at again without being read again, and so that an id the front gives a
//! request in place of its client's goes in by the places the reading found.

use super::read::{not_utf8, read_text};
use super::{Id, Line, Message, Params, Read, Refusal, moved, span};
use reasons_transform::json::Member;
use std::borrow::Cow;
use std::ops::Range;

/// A line that was read: a message or a batch, each message taken or refused.
#[derive(Debug)]
pub struct Parsed {
    text: String,
    shape: Shape,
}

#[derive(Debug)]
enum Shape {
    One(Kept),
    Batch(Vec<Kept>),
}

/// One message's reading, as places in the line.
#[derive(Debug)]
struct Kept {
    text: Range<usize>,
    message: Result<Placed, Refusal>,
}

/// [`Message`], its slices kept as places in the line.
#[derive(Debug)]
enum Placed {
    Request {
        id: Id,
        named: Range<usize>,
        method: String,
        params: Option<PlacedParams>,
    },
    Notification {
        method: String,
        params: Option<PlacedParams>,
    },
    Response {
        id: Option<Id>,
        named: Range<usize>,
        result: Option<Range<usize>>,
        code: Option<i64>,
    },
}

/// [`Params`], kept as places in the line: their text, and the values of their members
/// and of `_meta`'s, each under its decoded key.
#[derive(Debug)]
struct PlacedParams {
    text: Range<usize>,
    members: Option<Vec<PlacedMember>>,
    repeated: Option<String>,
    meta: Option<Vec<PlacedMember>>,
}

/// A member's decoded key, and where its value lies in the line.
#[derive(Debug)]
struct PlacedMember {
    key: Box<[u8]>,
    value: Range<usize>,
}

impl PlacedParams {
    fn of(text: &str, params: &Params) -> PlacedParams {
        let place = |part: &str| span(text, part);
        let placed = |members: &[Member]| -> Vec<PlacedMember> {
            members
                .iter()
                .map(|member| PlacedMember {
                    key: member.key.as_ref().into(),
                    value: place(member.value),
                })
                .collect()
        };
        PlacedParams {
            text: place(params.text),
            members: params.all_members().map(placed),
            repeated: params.repeated().map(str::to_string),
            meta: params.meta_members().map(placed),
        }
    }

    fn read<'a>(&'a self, text: &'a str) -> Params<'a> {
        let members = |placed: &'a [PlacedMember]| -> Vec<Member<'a>> {
            placed
                .iter()
                .map(|member| Member {
                    key: Cow::Borrowed(&member.key),
                    value: &text[member.value.clone()],
                })
                .collect()
        };
        Params::of(
            &text[self.text.clone()],
            self.members.as_deref().map(members),
            self.repeated.clone(),
            self.meta.as_deref().map(members),
        )
    }

    /// Every place it keeps, to move as the line is edited.
    fn places(&mut self) -> Vec<&mut Range<usize>> {
        let mut places = vec![&mut self.text];
        if let Some(members) = &mut self.members {
            places.extend(members.iter_mut().map(|member| &mut member.value));
        }
        if let Some(meta) = &mut self.meta {
            places.extend(meta.iter_mut().map(|member| &mut member.value));
        }
        places
    }
}

impl Parsed {
    /// Reads `line`, or says why the whole of it is refused.
    pub fn read(line: Vec<u8>) -> Result<Parsed, Refusal> {
        let text = String::from_utf8(line).map_err(|error| not_utf8(error.utf8_error()))?;
        let shape = match read_text(&text)? {
            Line::One(read) => Shape::One(Kept::of(&text, &read)),
            Line::Batch(reads) => Shape::Batch(reads.iter().map(|r| Kept::of(&text, r)).collect()),
        };
        Ok(Parsed { text, shape })
    }

    /// The line as it was read, looked at again.
    pub fn line(&self) -> Line<'_> {
        match &self.shape {
            Shape::One(kept) => Line::One(kept.read(&self.text)),
            Shape::Batch(kept) => Line::Batch(kept.iter().map(|k| k.read(&self.text)).collect()),
        }
    }

    /// The line's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line, to send on as it came.
    pub fn into_bytes(self) -> Vec<u8> {
        self.text.into_bytes()
    }

    /// The line, its one request given the id `id` in place of its own, and the part of
    /// it at `token` (its progress token, say) replaced by the same; `None` when it is
    /// not one request. How the HTTP front tells apart the requests of clients that
    /// share a session, without reading the request again.
    pub fn renamed(mut self, id: &Id, token: Option<Range<usize>>) -> Option<Parsed> {
        let Shape::One(Kept {
            message: Ok(Placed::Request { named, .. }),
            ..
        }) = &self.shape
        else {
            return None;
        };
        let named = named.clone();
        // The later place first, so that the earlier one is where it was.
        let mut places = vec![named];
        places.extend(token);
        places.sort_by_key(|place| std::cmp::Reverse(place.start));
        for place in places {
            self.replace(place, id.json());
        }
        if let Shape::One(Kept {
            message: Ok(Placed::Request { id: own, .. }),
            ..
        }) = &mut self.shape
        {
            *own = id.clone();
        }
        Some(self)
    }

    /// Replaces the text at `place`, a value the reading found or one inside it, with
    /// `with`, moving every place after it and stretching every place around it.
    fn replace(&mut self, place: Range<usize>, with: &str) {
        self.text.replace_range(place.clone(), with);
        let moved = |at: &mut Range<usize>| moved(at, &place, with.len());
        let kept = match &mut self.shape {
            Shape::One(kept) => std::slice::from_mut(kept),
            Shape::Batch(kept) => kept.as_mut_slice(),
        };
        for kept in kept {
            moved(&mut kept.text);
            match &mut kept.message {
                Ok(Placed::Request { named, params, .. }) => {
                    moved(named);
                    params
                        .iter_mut()
                        .flat_map(PlacedParams::places)
                        .for_each(moved);
                }
                Ok(Placed::Response { named, result, .. }) => {
                    moved(named);
                    result.iter_mut().for_each(moved);
                }
                Ok(Placed::Notification { params, .. }) => params
                    .iter_mut()
                    .flat_map(PlacedParams::places)
                    .for_each(moved),
                Err(_) => {}
            }
        }
    }
}

impl Kept {
    /// `read`, a message of the line `text`, as places in it.
    fn of(text: &str, read: &Read) -> Kept {
        let place = |part: &str| span(text, part);
        let message = read
            .message
            .as_ref()
            .map_err(Refusal::clone)
            .map(|message| match message {
                Message::Request {
                    id,
                    named,
                    method,
                    params,
                } => Placed::Request {
                    id: id.clone(),
                    named: place(named),
                    method: method.clone(),
                    params: params.as_ref().map(|params| PlacedParams::of(text, params)),
                },
                Message::Notification { method, params } => Placed::Notification {
                    method: method.clone(),
                    params: params.as_ref().map(|params| PlacedParams::of(text, params)),
                },
                Message::Response {
                    id,
                    named,
                    result,
                    code,
                } => Placed::Response {
                    id: id.clone(),
                    named: place(named),
                    result: result.map(place),
                    code: *code,
                },
            });
        Kept {
            text: place(read.text),
            message,
        }
    }

    /// The message again, as a [`Read`] of the line `text`.
    fn read<'a>(&'a self, text: &'a str) -> Read<'a> {
        let at = |place: &Range<usize>| &text[place.clone()];
        let message = self
            .message
            .as_ref()
            .map_err(Refusal::clone)
            .map(|placed| match placed {
                Placed::Request {
                    id,
                    named,
                    method,
                    params,
                } => Message::Request {
                    id: id.clone(),
                    named: at(named),
                    method: method.clone(),
                    params: params.as_ref().map(|params| params.read(text)),
                },
                Placed::Notification { method, params } => Message::Notification {
                    method: method.clone(),
                    params: params.as_ref().map(|params| params.read(text)),
                },
                Placed::Response {
                    id,
                    named,
                    result,
                    code,
                } => Message::Response {
                    id: id.clone(),
                    named: at(named),
                    result: result.as_ref().map(at),
                    code: *code,
                },
            });
        Read {
            text: at(&self.text),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::read_line;
    use super::*;

    /// What a reading says, as text to compare: each message's text, and its parts.
    fn outline(line: &Line) -> Vec<String> {
        line.reads()
            .iter()
            .map(|read| match &read.message {
                Ok(Message::Request {
                    id,
                    named,
                    method,
                    params,
                }) => format!(
                    "{} request {} {named} {method} {params:?}",
                    read.text,
                    id.json()
                ),
                Ok(Message::Notification { method, params }) => {
                    format!("{} note {method} {params:?}", read.text)
                }
                Ok(Message::Response {
                    id,
                    named,
                    result,
                    code,
                }) => {
                    let id = id.as_ref().map(Id::json);
                    format!("{} response {id:?} {named} {result:?} {code:?}", read.text)
                }
                Err(refusal) => format!("{} refused {}", read.text, refusal.message),
            })
            .collect()
    }

    #[test]
    fn a_line_looked_at_again_is_what_its_reading_was() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"a"}}"#,
            r#" [{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"x","result":{}},{"id":2}] "#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}"#,
        ];
        assert_eq!(lines.len(), 3);
        for line in lines {
            let parsed = Parsed::read(line.as_bytes().to_vec()).unwrap();
            let again = outline(&parsed.line());
            assert_eq!(
                again,
                outline(&read_line(line.as_bytes()).unwrap()),
                "{line}"
            );
            assert!(!again.is_empty());
            assert_eq!(parsed.text(), line);
        }
        for refused in [&b"\xff"[..], b"\xef\xbb\xbf{}", b"[]", b"{"] {
            assert!(Parsed::read(refused.to_vec()).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn a_request_renamed_is_the_request_read_under_its_new_names() {
        // The id after the params, and the token inside them: both places move, and
        // the params stretch around the token.
        let line = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"progressToken":7},"name":"a"},"id":"mine"}"#;
        let parsed = Parsed::read(line.as_bytes().to_vec()).unwrap();
        let Line::One(read) = parsed.line() else {
            panic!("one message")
        };
        let Ok(Message::Request { params, .. }) = &read.message else {
            panic!("a request")
        };
        let token = params.as_ref().unwrap().in_meta("progressToken").unwrap();
        let token = span(parsed.text(), token);
        let own = Id::front();
        let renamed = parsed.renamed(&own, Some(token)).unwrap();
        let expected = line.replace(r#""mine""#, own.json()).replace(
            r#""progressToken":7"#,
            &format!(r#""progressToken":{}"#, own.json()),
        );
        assert_eq!(renamed.text(), expected);
        let fresh = read_line(expected.as_bytes()).unwrap();
        assert_eq!(outline(&renamed.line()), outline(&fresh));
        // Only one request can be renamed.
        let note = Parsed::read(br#"{"jsonrpc":"2.0","method":"n"}"#.to_vec()).unwrap();
        assert!(note.renamed(&own, None).is_none());
    }
}
