//! What a transport needs to know of a line the proxy writes to the client, told with
//! the line so that no transport reads it again (the [`Outline`](crate::Outline) of the
//! other side): each message in it, where it lies, and the client's request it is
//! about, with where it names that request. A transport that serves each request on a
//! stream of its own (the HTTP front) sends each message to its request's stream, under
//! the name its client gave, by these alone.

use crate::jsonrpc::{self, Id, Message, Read};
use std::ops::Range;

/// The `_meta` key under which an event of a subscription names the request that opened
/// it.
const SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// A line for the client.
#[derive(Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The line's bytes, without its line break.
    pub line: Vec<u8>,
    /// Its messages, in order: one, or a batch's elements.
    pub parts: Vec<Part>,
}

/// One message of a line for the client.
#[derive(Debug, PartialEq, Eq)]
pub struct Part {
    /// Where it lies in the line.
    pub text: Range<usize>,
    /// Which request of the client's it is about.
    pub about: About,
}

/// The client's request a message is about, and where in the message it is named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum About {
    /// An answer to the request `id`; its id lies at `at`.
    Answer {
        /// The request.
        id: Id,
        /// Where it is named in the message.
        at: Range<usize>,
        /// The error's code, where the answer is an error whose code is an integer
        /// (what an HTTP front answers its status by); `None` for a result.
        code: Option<i64>,
    },
    /// The progress of the request given the progress token `token`, which lies at `at`.
    Progress {
        /// The progress token.
        token: Id,
        /// Where it is named in the message.
        at: Range<usize>,
    },
    /// The server's word that it cancelled the request `id` (no answer follows), whose
    /// id lies at `at`.
    Cancelled {
        /// The request.
        id: Id,
        /// Where it is named in the message.
        at: Range<usize>,
    },
    /// An event of the subscription the request `id` (a `subscriptions/listen`) opened,
    /// which names it at `at` (2026-07-28: `_meta`'s subscription id is the request's).
    Listened {
        /// The request that opened the subscription.
        id: Id,
        /// Where it is named in the message.
        at: Range<usize>,
    },
    /// No request of the client's: a server's request, another notification, an error
    /// under no id.
    Other,
}

impl About {
    /// What `read`, a message the proxy read, is about.
    pub(crate) fn of(read: &Read) -> About {
        // The request a note's params name, and where.
        let named = |named: Option<&str>| {
            let named = named?;
            Some((Id::parse(named)?, jsonrpc::span(read.text, named)))
        };
        match &read.message {
            Ok(Message::Response {
                id: Some(id),
                named,
                code,
                ..
            }) => About::Answer {
                id: id.clone(),
                at: jsonrpc::span(read.text, named),
                code: *code,
            },
            Ok(Message::Notification { method, params }) if method == "notifications/progress" => {
                named(
                    params
                        .as_ref()
                        .and_then(|params| params.get("progressToken")),
                )
                .map_or(About::Other, |(token, at)| About::Progress { token, at })
            }
            Ok(Message::Notification { method, params }) if method == "notifications/cancelled" => {
                named(params.as_ref().and_then(|params| params.get("requestId")))
                    .map_or(About::Other, |(id, at)| About::Cancelled { id, at })
            }
            Ok(Message::Notification { params, .. }) => named(
                params
                    .as_ref()
                    .and_then(|params| params.in_meta(SUBSCRIPTION)),
            )
            .map_or(About::Other, |(id, at)| About::Listened { id, at }),
            _ => About::Other,
        }
    }

    /// What a response the proxy made ([`jsonrpc::result`], [`jsonrpc::error`]) under
    /// `id` is about: an error with `code`, or a result (`None`).
    pub(crate) fn made(id: Option<&Id>, code: Option<i64>) -> About {
        match id {
            Some(id) => About::Answer {
                id: id.clone(),
                at: jsonrpc::ID_AT..jsonrpc::ID_AT + id.json().len(),
                code,
            },
            None => About::Other,
        }
    }

    /// What it is about once `replaced`, a range of its message that it does not
    /// overlap, was replaced by `by` bytes: where it names its request moves with what
    /// came before.
    pub(crate) fn after(self, replaced: Range<usize>, by: usize) -> About {
        let moved = |mut at: Range<usize>| {
            jsonrpc::moved(&mut at, &replaced, by);
            at
        };
        match self {
            About::Answer { id, at, code } => About::Answer {
                id,
                at: moved(at),
                code,
            },
            About::Progress { token, at } => About::Progress {
                token,
                at: moved(at),
            },
            About::Cancelled { id, at } => About::Cancelled { id, at: moved(at) },
            About::Listened { id, at } => About::Listened { id, at: moved(at) },
            About::Other => About::Other,
        }
    }
}

impl Delivery {
    /// A line of one message.
    pub fn one(line: Vec<u8>, about: About) -> Delivery {
        let text = 0..line.len();
        Delivery {
            line,
            parts: vec![Part { text, about }],
        }
    }

    /// A batch of `messages`, each with what it is about.
    pub(crate) fn batch(messages: Vec<(String, About)>) -> Delivery {
        let mut line = String::from("[");
        let mut parts = Vec::with_capacity(messages.len());
        for (at, (message, about)) in messages.into_iter().enumerate() {
            if at > 0 {
                line.push(',');
            }
            let start = line.len();
            line.push_str(&message);
            parts.push(Part {
                text: start..line.len(),
                about,
            });
        }
        line.push(']');
        Delivery {
            line: line.into_bytes(),
            parts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{Line, read_line};

    fn about(text: &str) -> About {
        let Ok(Line::One(read)) = read_line(text.as_bytes()) else {
            panic!("one message: {text}");
        };
        About::of(&read)
    }

    #[test]
    fn each_message_names_its_request_where_it_says() {
        let answer = r#"{"result":{},"id" : 1.0,"jsonrpc":"2.0"}"#;
        let About::Answer { id, at, code } = about(answer) else {
            panic!("an answer");
        };
        assert_eq!(
            (id, &answer[at], code),
            (Id::parse("1").unwrap(), "1.0", None)
        );
        // An error says its code, where it is an integer.
        for (error, said) in [
            (
                r#"{"jsonrpc":"2.0","id":2,"error":{"message":"m","code":-32601}}"#,
                Some(-32601),
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":"-32601","message":"m"}}"#,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":1.5,"message":"m"}}"#,
                None,
            ),
        ] {
            let About::Answer { code, .. } = about(error) else {
                panic!("an answer: {error}");
            };
            assert_eq!(code, said, "{error}");
        }
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":"t"}}"#;
        let About::Progress { token, at } = about(progress) else {
            panic!("a progress note");
        };
        assert_eq!(
            (token, &progress[at]),
            (Id::parse(r#""t""#).unwrap(), r#""t""#)
        );
        let cancelled =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#;
        let About::Cancelled { id, at } = about(cancelled) else {
            panic!("a cancellation");
        };
        assert_eq!((id, &cancelled[at]), (Id::parse("7").unwrap(), "7"));
        let listened = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}"#;
        let About::Listened { id, at } = about(listened) else {
            panic!("a subscription's event");
        };
        assert_eq!(
            (id, &listened[at]),
            (Id::parse(r#""L1""#).unwrap(), r#""L1""#)
        );
        // A note that names no request, under no id, or whose token is no id.
        for other in [
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage"}"#,
        ] {
            assert_eq!(about(other), About::Other, "{other}");
        }
    }

    #[test]
    fn a_made_answer_names_its_id_where_it_is() {
        let id = Id::parse(r#""x""#).unwrap();
        let made = jsonrpc::error(Some(&id), 1, "no");
        let About::Answer { at, code, .. } = About::made(Some(&id), Some(1)) else {
            panic!("an answer");
        };
        assert_eq!((&made[at], code), (r#""x""#, Some(1)));
        assert_eq!(About::made(None, Some(1)), About::Other);
    }

    #[test]
    fn a_batch_says_where_each_message_lies() {
        let batch = Delivery::batch(vec![
            ("{\"a\":1}".into(), About::Other),
            ("{}".into(), About::Other),
        ]);
        assert_eq!(batch.line, b"[{\"a\":1},{}]");
        assert_eq!(batch.parts.len(), 2);
        assert_eq!(&batch.line[batch.parts[0].text.clone()], b"{\"a\":1}");
        assert_eq!(&batch.line[batch.parts[1].text.clone()], b"{}");
    }

    #[test]
    fn a_replacement_before_the_name_moves_it() {
        let id = Id::parse("1").unwrap();
        let at = About::Answer {
            id: id.clone(),
            at: 20..21,
            code: None,
        };
        assert_eq!(
            at.clone().after(5..10, 8),
            About::Answer {
                id: id.clone(),
                at: 23..24,
                code: None,
            }
        );
        assert_eq!(at.clone().after(30..40, 2), at);
    }
}
