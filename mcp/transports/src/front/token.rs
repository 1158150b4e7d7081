//! The HTTP front serves only its own user's clients. Loopback is every local user's: whoever
//! reaches the port would run the server's tools with the rights of whoever started the
//! proxy. So every request carries a secret the proxy holds, as `Authorization: Bearer
//! TOKEN` or `?token=TOKEN` in the URL (for clients that take only a URL), compared in
//! constant time; anything else is answered 403 (`front.rs` says why not 401). The token is drawn at start and printed
//! with the URL, or kept in the token file the settings name, a file only its owner may read, so that a
//! client's config outlives a restart.

use axum::http::{HeaderMap, header};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use subtle::ConstantTimeEq;

/// The fewest characters a token of the user's own may have: what one drawn here has.
const SHORTEST: usize = 32;

/// The secret every request carries.
pub struct Token(String);

impl Token {
    /// A token drawn from the operating system's random source.
    pub fn fresh() -> Token {
        Token(reasons_mcp::unguessable())
    }

    /// The token kept in `file`, made there (only its owner may read it) when it is not
    /// there yet. A file another user owns, or one others may read or write, is refused:
    /// its token is not a secret of this user's.
    pub fn kept_in(file: &Path) -> Result<Token, String> {
        let shown = file.display();
        let made = std::fs::File::options()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(file);
        match made {
            Ok(mut made) => {
                let token = Token::fresh();
                made.write_all(format!("{}\n", token.0).as_bytes())
                    .and_then(|()| made.sync_all())
                    .map_err(|error| format!("--token-file {shown}: cannot write it: {error}"))?;
                return Ok(token);
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(format!("--token-file {shown}: cannot make it: {error}")),
        }
        let metadata = std::fs::symlink_metadata(file)
            .map_err(|error| format!("--token-file {shown}: {error}"))?;
        if !metadata.is_file() {
            return Err(format!(
                "--token-file {shown}: not a file (a link is not followed)"
            ));
        }
        // SAFETY: getuid has no preconditions and cannot fail.
        let user = unsafe { libc::getuid() };
        if metadata.uid() != user {
            return Err(format!(
                "--token-file {shown}: owned by user {}, not by this one ({user}): its token is \
                 not this user's secret",
                metadata.uid()
            ));
        }
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "--token-file {shown}: others may read or write it (mode {mode:o}): \
                 `chmod 600 {shown}`, then give every client the token again"
            ));
        }
        let text = std::fs::read_to_string(file)
            .map_err(|error| format!("--token-file {shown}: cannot read it: {error}"))?;
        let token = text.trim();
        let fit = token.len() >= SHORTEST
            && token
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || b"-._~".contains(&byte));
        if !fit {
            return Err(format!(
                "--token-file {shown}: not a token: at least {SHORTEST} letters, digits or \
                 `-._~` on one line (delete the file to have one made)"
            ));
        }
        Ok(Token(token.to_string()))
    }

    /// The token, for the URL the proxy prints.
    pub fn text(&self) -> &str {
        &self.0
    }

    /// Whether a request with `headers` and the URL `query` carries the token.
    pub fn admits(&self, headers: &HeaderMap, query: Option<&str>) -> bool {
        let bearer = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .filter_map(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim().to_string());
        let in_query = query
            .into_iter()
            .flat_map(|query| url::form_urlencoded::parse(query.as_bytes()))
            .filter(|(name, _)| name == "token")
            .map(|(_, token)| token.into_owned());
        bearer.chain(in_query).any(|given| self.is(&given))
    }

    fn is(&self, given: &str) -> bool {
        given.as_bytes().ct_eq(self.0.as_bytes()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn bearer(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn only_the_token_itself_is_admitted_by_header_or_in_the_query() {
        let token = Token("a".repeat(32));
        let none = HeaderMap::new();
        let own = format!("Bearer {}", "a".repeat(32));
        assert!(token.admits(&bearer(&own), None));
        assert!(token.admits(&bearer(&own.replace("Bearer", "bearer")), None));
        assert!(token.admits(&none, Some(&format!("x=1&token={}", "a".repeat(32)))));
        for wrong in ["", "a", &"a".repeat(31), &"a".repeat(33), &"b".repeat(32)] {
            assert!(
                !token.admits(&bearer(&format!("Bearer {wrong}")), None),
                "{wrong}"
            );
            assert!(
                !token.admits(&none, Some(&format!("token={wrong}"))),
                "{wrong}"
            );
        }
        assert!(!token.admits(&bearer(&format!("Basic {}", "a".repeat(32))), None));
        assert!(!token.admits(&none, Some(&format!("tokens={}", "a".repeat(32)))));
        assert!(!token.admits(&none, None));
    }

    #[test]
    fn a_token_file_is_made_for_its_owner_alone_and_refused_when_others_may_read_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        let made = Token::kept_in(&file).unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(Token::kept_in(&file).unwrap().text(), made.text());
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = Token::kept_in(&file).err().unwrap();
        assert!(refused.contains("mode 644"), "{refused}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&file, "short\n").unwrap();
        let refused = Token::kept_in(&file).err().unwrap();
        assert!(refused.contains("not a token"), "{refused}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let refused = Token::kept_in(&link).err().unwrap();
        assert!(refused.contains("not a file"), "{refused}");
    }
}
