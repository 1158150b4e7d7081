//! What a server's `WWW-Authenticate` asks for (RFC 6750 §3, RFC 9728 §5.1): where its
//! protected resource metadata is, the scopes it wants, and why it refused.

/// The `Bearer` challenge of a 401 or 403, as far as signing in reads it.
#[derive(Debug, Default, PartialEq)]
pub struct Challenge {
    /// `resource_metadata`: where the server's protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, ….
    pub error: Option<String>,
}

impl Challenge {
    /// The `Bearer` challenge among `header`'s (a header may list several schemes); none
    /// when the header is absent, unreadable, or asks for another scheme.
    pub fn read(header: Option<&str>) -> Option<Challenge> {
        let challenges = http_auth::parse_challenges(header?).ok()?;
        let bearer = challenges
            .into_iter()
            .find(|challenge| challenge.scheme.eq_ignore_ascii_case("bearer"))?;
        let mut read = Challenge::default();
        for (name, value) in bearer.params {
            let value = Some(value.to_unescaped());
            match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => read.resource_metadata = value,
                "scope" => read.scope = value,
                "error" => read.error = value,
                _ => {}
            }
        }
        Some(read)
    }

    /// Whether the server refused the token for the scopes it carries (a 403's step-up).
    pub fn wants_more_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_is_read_among_others() {
        let header = r#"Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#;
        let read = Challenge::read(Some(header)).unwrap();
        assert_eq!(
            read,
            Challenge {
                resource_metadata: Some("http://h/.well-known/oauth-protected-resource/mcp".into()),
                scope: Some("a b".into()),
                error: Some("insufficient_scope".into()),
            }
        );
        assert!(read.wants_more_scope());
        // Names are read in any case; quoted escapes are undone.
        let read = Challenge::read(Some(r#"bearer SCOPE="q\"s""#)).unwrap();
        assert_eq!(read.scope.as_deref(), Some("q\"s"));
        assert_eq!(Challenge::read(Some("Basic realm=\"x\"")), None);
        assert_eq!(Challenge::read(Some("Bearer scope=\"unterminated")), None);
        assert_eq!(Challenge::read(None), None);
        assert_eq!(Challenge::read(Some("Bearer")), Some(Challenge::default()));
    }
}
