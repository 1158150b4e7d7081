//! What of a setting a message may show. A URL may carry credentials (a user and
//! password before its host, a token in its query) and a header's value often is one;
//! a message that names a setting goes to stderr, which clients keep in their logs, and
//! from the gateway to every client that asks while its settings are wrong. So a
//! message shows a URL through [`url`], and a header by its name alone.

/// `url` without what may be a secret in it: the user and password before its host, its
/// query and its fragment, and each path segment that looks like a key ([`key_like`]),
/// shown as `…` (servers of the `…/s/<token>/mcp` kind put the credential there).
pub fn url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = rest[..end]
        .rsplit_once('@')
        .map_or(&rest[..end], |(_, host)| host);
    let path = rest[end..].split(['?', '#']).next().unwrap_or_default();
    let path: Vec<&str> = path
        .split('/')
        .map(|segment| if key_like(segment) { "…" } else { segment })
        .collect();
    let path = path.join("/");
    match scheme {
        "" => format!("{host}{path}"),
        scheme => format!("{scheme}://{host}{path}"),
    }
}

/// Whether a URL's path `segment` looks like a key: 16 characters or more of those tokens
/// are spelt with (letters, digits, `-_.~+=%`), letters and digits both among them, or
/// 32 or more of any. Words and version numbers (`mcp`, `v1`, `server-everything`) are
/// not.
fn key_like(segment: &str) -> bool {
    let token = |c: char| c.is_ascii_alphanumeric() || "-_.~+=%".contains(c);
    let mixed = segment.chars().any(|c| c.is_ascii_digit())
        && segment.chars().any(|c| c.is_ascii_alphabetic());
    let length = segment.chars().count();
    length >= 32 || (length >= 16 && mixed && segment.chars().all(token))
}

/// Whether `url`'s authority names a user (and perhaps a password) before its host.
pub fn has_user(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    rest[..end].contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_credentials() {
        let cases = [
            (
                "https://user:s3cret@host:8443/mcp?token=s3cret#s3cret",
                "https://host:8443/mcp",
            ),
            ("http://a@b@host/x", "http://host/x"),
            ("http://host?key=s3cret", "http://host"),
            ("host/path", "host/path"),
            ("ftp://u:s3cret@host", "ftp://host"),
            ("", ""),
            // A key in the path, as Zapier's and others' server URLs carry one.
            (
                "https://mcp.example.com/api/mcp/s/Zs3cretQ1w2e3r4t5y6u7i8o9/mcp",
                "https://mcp.example.com/api/mcp/s/…/mcp",
            ),
            (
                "https://h/v1/servers/server-everything/mcp",
                "https://h/v1/servers/server-everything/mcp",
            ),
            (
                "https://h/s3cret0123456789abcdefabcdef0123456789/x",
                "https://h/…/x",
            ),
        ];
        for (given, shown) in cases {
            assert_eq!(url(given), shown, "{given}");
            assert!(!url(given).contains("s3cret"));
        }
    }

    #[test]
    fn a_user_is_found_in_the_authority_alone() {
        assert!(has_user("http://user@host/mcp"));
        assert!(has_user("https://user:password@host"));
        assert!(!has_user("http://host/mcp?to=a@b"));
        assert!(!has_user("http://host/@me"));
    }
}
