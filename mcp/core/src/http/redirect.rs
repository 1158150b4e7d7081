//! An upstream's answer that sends its client elsewhere (a 3xx redirect), which no
//! transport relays or follows: a client told to go elsewhere re-sends its own message
//! there, reason and all, where no layer strips it, and is answered by the server itself.
//! Every transport answers such a status with an error of its own, from here.

/// Why an answer with `status` is not relayed, when it is a redirect (what the server
/// did, for a sentence that starts by naming the server), naming where it
/// sends the client (`location`, its `Location` header if any) and what the operator
/// sets to reach the server where it wants to be reached (`setting`).
pub fn refusal(status: u16, location: Option<&[u8]>, setting: &str) -> Option<String> {
    if !(300..400).contains(&status) {
        return None;
    }
    // Quoted and cut short: the target is the server's text, for a person's terminal.
    let target = match location {
        Some(location) => {
            let text = String::from_utf8_lossy(location);
            let short: String = text.chars().take(MOST_SHOWN).collect();
            format!(" to {short:?}")
        }
        None => String::new(),
    };
    Some(format!(
        "answered HTTP {status}, sending its clients{target}: a redirect is \
         neither relayed nor followed, since the message would go there with what the layer \
         strips from it; set {setting} to the URL the server wants"
    ))
}

/// How much of a `Location` an error shows.
const MOST_SHOWN: usize = 512;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_redirect_is_refused_naming_its_target_and_the_setting() {
        for status in [300, 301, 302, 303, 304, 307, 308, 399] {
            let why = refusal(status, Some(b"http://other/mcp/"), "--url").unwrap();
            assert!(why.contains(&format!("HTTP {status}")), "{why}");
            assert!(why.contains(r#""http://other/mcp/""#), "{why}");
            assert!(why.contains("set --url"), "{why}");
        }
        assert!(refusal(307, None, "X").unwrap().contains("HTTP 307"));
        for status in [200, 202, 299, 400, 401, 404, 500] {
            assert_eq!(refusal(status, Some(b"/x"), "X"), None, "{status}");
        }
    }

    #[test]
    fn a_target_reaches_no_terminal_raw_nor_at_length() {
        let hostile = format!("/x\u{1b}]52;c;AAAA\u{7}\n{}", "y".repeat(10_000));
        let why = refusal(308, Some(hostile.as_bytes()), "X").unwrap();
        assert!(!why.chars().any(char::is_control), "{why:?}");
        assert!(why.len() < 1_000, "{}", why.len());
    }
}
