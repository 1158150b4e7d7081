//! RFC 8259's grammar, checked over a text without building anything: a [`Reader`]
//! walks one value at a time and says where it ends, or `None` if the text breaks the
//! grammar there.
//!
//! Every byte is looked at before it is consumed, so when a read fails, [`Reader::at`]
//! is the offset of the byte that broke the grammar (or the text's length, when it
//! ended early): the position a refusal names (R10).
//!
//! Nesting is tracked on the heap, not the stack, so a value nested as deep as the text
//! allows is read like any other (a component's stack is small, and a trap would fail a
//! call that servers' parsers read).

use alloc::vec::Vec;

/// A position in a JSON text.
pub(crate) struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(text: &'a str) -> Reader<'a> {
        Reader { text, at: 0 }
    }

    /// Reads one value, as [`Reader::value`] does; its text.
    pub fn value_text(&mut self) -> Option<&'a str> {
        let start = self.at;
        self.value()?;
        self.text.get(start..self.at)
    }

    /// How far the reader has got, in bytes.
    pub fn at(&self) -> usize {
        self.at
    }

    /// The text from `start` to where the reader has got.
    pub fn since(&self, start: usize) -> Option<&'a str> {
        self.text.get(start..self.at)
    }

    /// Whether everything was read.
    pub fn at_end(&self) -> bool {
        self.at == self.text.len()
    }

    /// Steps over JSON's four whitespace characters (§2), and no others.
    pub fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(is_whitespace) {
            self.at += 1;
        }
    }

    pub fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Consumes `byte` if it is next.
    pub fn eat(&mut self, byte: u8) -> bool {
        let next = self.peek() == Some(byte);
        self.at += usize::from(next);
        next
    }

    /// Reads one value (§3), from its first byte (not whitespace) to its last.
    pub fn value(&mut self) -> Option<()> {
        // The containers the value is inside, innermost last: `true` for an object.
        let mut open: Vec<bool> = Vec::new();
        loop {
            // One value, or the opening of a container holding at least one.
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    self.string()?;
                }
                b'{' => {
                    self.at += 1;
                    self.skip_whitespace();
                    if !self.eat(b'}') {
                        self.key()?;
                        if cfg!(feature = "mutant-depth-limit") && open.len() >= 128 {
                            return None;
                        }
                        open.push(true);
                        continue;
                    }
                }
                b'[' => {
                    self.at += 1;
                    self.skip_whitespace();
                    if !self.eat(b']') {
                        if cfg!(feature = "mutant-depth-limit") && open.len() >= 128 {
                            return None;
                        }
                        open.push(false);
                        continue;
                    }
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => self.number()?,
            }
            // After a value: close what it ends, or step to the container's next one.
            loop {
                let Some(&in_object) = open.last() else {
                    return Some(());
                };
                self.skip_whitespace();
                match (self.peek()?, in_object) {
                    (b',', true) => {
                        self.at += 1;
                        self.skip_whitespace();
                        self.key()?;
                        break;
                    }
                    (b',', false) => {
                        self.at += 1;
                        self.skip_whitespace();
                        break;
                    }
                    (b'}', true) | (b']', false) => {
                        self.at += 1;
                        open.pop();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Reads a member's key and its colon, up to the value's first byte.
    fn key(&mut self) -> Option<()> {
        self.string_contents()?;
        self.colon()
    }

    /// Reads a string from its opening quote to after its closing one; its contents
    /// (between the quotes, escapes as written) and whether it had escapes.
    pub fn string_contents(&mut self) -> Option<(&'a [u8], bool)> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        let escaped = self.string()?;
        let contents = self.text.as_bytes().get(start..self.at.checked_sub(1)?)?;
        Some((contents, escaped))
    }

    /// Reads the colon after a key, and the whitespace around it.
    pub fn colon(&mut self) -> Option<()> {
        self.skip_whitespace();
        if !self.eat(b':') {
            return None;
        }
        self.skip_whitespace();
        Some(())
    }

    /// Reads a string (§7) from after its opening quote to after its closing one;
    /// whether it had escapes. Any `\u` escape is grammatical, a lone surrogate's too.
    fn string(&mut self) -> Option<bool> {
        let mut escaped = false;
        loop {
            self.skip_plain();
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    self.at += 1;
                    match self.peek()? {
                        b'u' => {
                            self.at += 1;
                            for _ in 0..4 {
                                self.peek().filter(is_hex)?;
                                self.at += 1;
                            }
                        }
                        byte if is_short_escape(byte) => self.at += 1,
                        _ => return None,
                    }
                }
                // A control character, which must be escaped.
                _ => return None,
            }
        }
    }

    /// Steps over characters that stand for themselves in a string: eight bytes at a
    /// time while none of them is a quote, a backslash or a control character.
    fn skip_plain(&mut self) {
        while let Some(word) = self
            .text
            .as_bytes()
            .get(self.at..self.at + 8)
            .and_then(|chunk| <[u8; 8]>::try_from(chunk).ok())
        {
            if special(u64::from_le_bytes(word)) {
                break;
            }
            self.at += 8;
        }
        while self.peek().is_some_and(|byte| !is_special(byte)) {
            self.at += 1;
        }
    }

    /// Reads a number (§6) from its first byte.
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        match self.peek()? {
            // No leading zeros: a digit after this one ends the number, and the
            // container then finds a digit where it wants a comma.
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.') {
            self.some_digits()?;
        }
        if !cfg!(feature = "mutant-number-no-exponent") && (self.eat(b'e') || self.eat(b'E')) {
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            self.at += 1;
        }
    }

    /// At least one digit.
    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }

    /// `true`, `false` or `null`, from its first byte; a misspelling fails at the
    /// first byte that differs.
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        for &expected in word {
            self.peek().filter(|&byte| byte == expected)?;
            self.at += 1;
        }
        Some(())
    }
}

/// JSON's whitespace.
pub(crate) fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
        || cfg!(feature = "mutant-whitespace-formfeed") && matches!(byte, 0x0b | 0x0c)
}

/// Whether a backslash and `byte` are one of the escapes of one character (§7).
fn is_short_escape(byte: u8) -> bool {
    // Each mutant (`.ci/mutants`) forgets one escape.
    match byte {
        b'"' | b'\\' | b'n' => true,
        b't' => !cfg!(feature = "mutant-escape-tab"),
        b'r' => !cfg!(feature = "mutant-escape-cr"),
        b'b' => !cfg!(feature = "mutant-escape-backspace"),
        b'f' => !cfg!(feature = "mutant-escape-formfeed"),
        b'/' => !cfg!(feature = "mutant-escape-solidus"),
        _ => false,
    }
}

/// A hex digit of a `\u` escape, in either case.
fn is_hex(byte: &u8) -> bool {
    byte.is_ascii_digit()
        || (b'a'..=b'f').contains(byte)
        || (b'A'..=b'F').contains(byte) && !cfg!(feature = "mutant-escape-upper-hex")
}

/// Whether a byte ends a run of plain string characters.
fn is_special(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Whether any of eight bytes [`is_special`] (the bit tricks of "Bit Twiddling Hacks":
/// `x - 0x01…` borrows into a byte's high bit exactly when the byte was below 1).
fn special(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGHS != 0;
    below(word, 0x20) || below(word ^ (ONES * 0x22), 1) || below(word ^ (ONES * 0x5C), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Option<usize> {
        let mut reader = Reader::new(text);
        reader.value().map(|()| reader.at())
    }

    #[test]
    fn a_value_ends_where_its_grammar_does() {
        for (text, end) in [
            ("0", 1),
            ("-0.5e+3,", 7),
            ("1.10]", 4),
            ("01", 1),
            ("true ", 4),
            (r#""a\"b" x"#, 6),
            (r#"{"a" : [1, {"b":null}] } x"#, 24),
            ("[[], {}]", 8),
        ] {
            assert_eq!(value(text), Some(end), "{text}");
        }
    }

    #[test]
    fn the_grammar_is_kept() {
        for text in [
            "",
            "-",
            "+1",
            ".5",
            "1.",
            "1e",
            "1e+",
            "tru",
            "nul",
            "True",
            "\"",
            "\"\\x\"",
            "\"\\u12g4\"",
            "\"a\u{1}\"",
            "[",
            "[1,]",
            "[,1]",
            "{\"a\"}",
            "{\"a\":1,}",
            "{a:1}",
            "{\"a\":1 \"b\":2}",
            "[1 2]",
            "{\"a\":1]",
            "[1}",
        ] {
            assert_eq!(value(text), None, "{text:?}");
        }
    }

    #[test]
    fn the_word_scan_stops_at_every_special_byte_in_every_position() {
        for special in ['"', '\\', '\u{0}', '\u{1f}'] {
            for at in 0..16 {
                let text: String = (0..16)
                    .map(|i| if i == at { special } else { 'a' })
                    .collect();
                let mut reader = Reader::new(&text);
                reader.skip_plain();
                assert_eq!(reader.at(), at, "{special:?} at {at}");
            }
        }
        // Bytes from 0x20 up, high ones among them, are plain.
        for plain in [" ", "\u{7f}", "é", "€", "\u{10ffff}", "!", "#", "[", "]"] {
            let text = plain.repeat(16);
            let mut reader = Reader::new(&text);
            reader.skip_plain();
            assert_eq!(reader.at(), text.len(), "{plain:?}");
        }
    }
}
