//! Request ids (and progress tokens, the same kinds of value): when two are one, and the
//! proxy's and the front's own, which no client can guess.

use reasons_transform::json;
use std::hash::{Hash, Hasher};

/// A request id. Two ids are one when their values are (`1`, `1.0` and `1e0` are one id;
/// `"a"` and `"\u0061"` are one id), whatever their spelling; the text is the sender's,
/// to answer under.
#[derive(Clone, Debug)]
pub struct Id {
    value: Value,
    text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Value {
    /// A string's characters, as WTF-8.
    String(Vec<u8>),
    /// A number's value: its significant digits and the power of ten after them.
    Number {
        negative: bool,
        digits: String,
        exponent: i64,
    },
}

impl PartialEq for Id {
    fn eq(&self, other: &Id) -> bool {
        self.value == other.value
    }
}

impl Eq for Id {}

impl Hash for Id {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl Id {
    /// A string or number id; `None` for any other value.
    pub(super) fn read(text: &str) -> Option<Id> {
        let value = match text.as_bytes().first()? {
            b'"' => Value::String(json::wtf8(text)?.into_owned()),
            b'-' | b'0'..=b'9' => number(text)?,
            _ => return None,
        };
        Some(Id {
            value,
            text: text.to_string(),
        })
    }

    /// The id, or progress token (the same kinds of value), whose JSON text is `text`.
    pub fn parse(text: &str) -> Option<Id> {
        let text = text.trim_matches([' ', '\t', '\n', '\r']);
        json::is_value(text).then(|| Id::read(text)).flatten()
    }

    /// An id of the proxy's own: a string no client can guess, so no client's can equal it.
    pub fn own() -> Id {
        Id::minted("reasons-proxy")
    }

    /// The id the HTTP front gives a request of its shared session, in place of its
    /// client's (which another client may also use): unguessable as the proxy's own are,
    /// and told apart from them.
    pub fn front() -> Id {
        Id::minted("reasons-front")
    }

    /// A fresh id of `kind`, drawn for this request alone from the operating system's
    /// random source: an id one has seen (a server may echo it) tells nothing of the next.
    fn minted(kind: &str) -> Id {
        let text = format!("\"{kind}/{}\"", crate::unguessable());
        Id {
            value: Value::String(text.trim_matches('"').as_bytes().to_vec()),
            text,
        }
    }

    /// The id as the sender wrote it.
    pub fn json(&self) -> &str {
        &self.text
    }
}

/// A JSON number's value, exactly: `1`, `1.0`, `10e-1` and `0.1e1` are one value.
fn number(text: &str) -> Option<Value> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{whole}{fraction}");
    let significant = all.trim_start_matches('0');
    let digits = significant.trim_end_matches('0');
    if digits.is_empty() {
        return Some(Value::Number {
            negative: false,
            digits: "0".into(),
            exponent: 0,
        });
    }
    let trailing = (significant.len() - digits.len()) as i64;
    Some(Value::Number {
        negative,
        digits: digits.to_string(),
        exponent: exponent
            .checked_sub(fraction.len() as i64)?
            .checked_add(trailing)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_id_of_the_proxy_s_own_can_be_derived_from_another() {
        // R19: a server that echoes ids shows a client some of the proxy's and the
        // front's own; each is 128 bits of its own, so none tells anything of the next
        // (a session's nonce and a counter did, as RandomState's keys counting up would).
        let ids: Vec<String> = (0..64)
            .flat_map(|_| [Id::own(), Id::front()])
            .map(|id| id.json().trim_matches('"').to_string())
            .collect();
        assert_eq!(ids.len(), 128);
        let bits: Vec<u128> = ids
            .iter()
            .map(|id| {
                let (kind, hex) = id.split_once('/').unwrap();
                assert!(matches!(kind, "reasons-proxy" | "reasons-front"), "{id}");
                assert_eq!(hex.len(), 32, "{id}");
                u128::from_str_radix(hex, 16).unwrap()
            })
            .collect();
        for (at, a) in bits.iter().enumerate() {
            for b in &bits[at + 1..] {
                // Independent draws differ in about 64 bits; fewer than 24 would take
                // odds past 1 in 10^10.
                let differing = (a ^ b).count_ones();
                assert!(
                    differing >= 24,
                    "{a:032x} and {b:032x} differ in {differing} bits"
                );
            }
        }
    }

    fn id(text: &str) -> Id {
        Id::read(text).unwrap()
    }

    #[test]
    fn ids_are_one_when_their_values_are() {
        // R19
        for (a, b) in [
            ("1", "1.0"),
            ("1", "10e-1"),
            ("0", "-0.0"),
            ("120", "1.2e2"),
            (r#""a/b""#, r#""a\/b""#),
            (r#""\u0061""#, r#""a""#),
        ] {
            assert_eq!(id(a), id(b), "{a} {b}");
        }
        for (a, b) in [
            ("1", "2"),
            ("1", r#""1""#),
            ("1", "-1"),
            ("9007199254740993", "9007199254740992"),
        ] {
            assert_ne!(id(a), id(b), "{a} {b}");
        }
        assert_eq!(id("1.0").json(), "1.0", "answered as it was written");
    }
}
