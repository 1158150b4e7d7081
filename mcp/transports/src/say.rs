//! What the proxy tells the human running it, on its stderr: never the protocol's
//! stream. Much of it quotes a server, a client, a file or a URL, so all of it is printed
//! as a few inert lines (R12): none of it can write to the terminal or flood it.

/// The longest line of what the proxy says, and the most lines.
const LINE_CAP: usize = 1000;
const LINES: usize = 40;

/// How many characters of another party's words a message quotes.
const QUOTE_CAP: usize = 300;

/// Another party's words (a server's challenge, an authorization server's refusal) as a
/// message quotes them: inert, on one line, short. The message may reach a client's
/// model as well as the human.
pub(crate) fn quoted(words: &str) -> String {
    reasons_inert::inert(words.trim(), QUOTE_CAP)
}

/// `text` on stderr, after the proxy's name, as inert lines.
pub fn say(text: &str) {
    eprintln!("reasons: {}", reasons_inert::lines(text, LINE_CAP, LINES));
}
