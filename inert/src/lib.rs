//! Text another party wrote, made safe to put in front of a human (R12): it is shown,
//! never obeyed by the terminal. Escape sequences and control characters go, characters
//! that reorder or hide text go, and the length is capped. The model's reason is such
//! text; so is everything a server, a client or a config says that the proxy, the gateway
//! or the command prints.
#![deny(missing_docs)]

/// How many characters of a reason a prompt shows.
pub const REASON_CAP: usize = 280;

/// `text` as inert, single-line text of at most `cap` characters (an ellipsis marks a cut).
pub fn inert(text: &str, cap: usize) -> String {
    let stripped = strip_ansi_escapes::strip_str(text);
    let chars = stripped.chars().filter_map(|c| match c {
        // Line breaks and tabs would let a reason draw its own prompt lines.
        '\n' | '\r' | '\t' => Some(' '),
        c if c.is_control() || is_hiding(c) => None,
        c => Some(c),
    });
    let mut out = String::with_capacity(stripped.len().min(cap * 4));
    for (at, c) in chars.enumerate() {
        if at == cap {
            out.pop();
            out.push('…');
            break;
        }
        out.push(c);
    }
    out
}

/// `text`, which may run to many lines (an error quoting a file, a server or a URL), as
/// at most `most` inert lines of at most `cap` characters each; an ellipsis line marks
/// what was left out. No one's text may write to the terminal or flood it.
pub fn lines(text: &str, cap: usize, most: usize) -> String {
    let mut kept: Vec<String> = text
        .lines()
        .take(most)
        .map(|line| inert(line, cap))
        .collect();
    if text.lines().nth(most).is_some() {
        kept.push("…".into());
    }
    kept.join("\n")
}

/// `text` with every control character but the line break, and every character that
/// hides or reorders text, spelled as a `\u` escape: shown exactly, line for line, and as
/// what it is. JSON reads the escapes as the same value, so arguments stay arguments.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hiding(c) || (c.is_control() && !matches!(c, '\n' | ' ')) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Bidirectional overrides and isolates, zero-width characters and the byte-order mark:
/// invisible on a terminal, and able to make one string read as another.
fn is_hiding(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2069}'
        | '\u{FEFF}'
        | '\u{061C}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_are_removed() {
        // R12
        assert_eq!(
            inert("\u{1b}[31mred\u{1b}[0m\u{7}\nnext\u{202E}evil", 100),
            "red nextevil"
        );
        assert_eq!(inert("\u{1b}]0;title\u{7}ok", 100), "ok");
    }

    #[test]
    fn length_is_capped() {
        // R12
        assert_eq!(inert("abcdef", 4), "abc…");
        assert_eq!(inert("abcd", 4), "abcd");
        assert_eq!(
            inert(&"é".repeat(500), REASON_CAP).chars().count(),
            REASON_CAP
        );
    }

    #[test]
    fn many_lines_are_kept_few_and_each_inert() {
        // R12
        assert_eq!(lines("a\u{1b}[2J\nb\nc", 10, 2), "a\nb\n…");
        assert_eq!(lines("one\ntwo", 10, 2), "one\ntwo");
        assert_eq!(lines("abcdef", 4, 1), "abc…");
    }

    #[test]
    fn arguments_show_hidden_characters_as_escapes() {
        assert_eq!(visible("\"a\u{202E}b\""), "\"a\\u202eb\"");
    }
}
