//! What a `tools/list` result allows of its reuse (2026-07-28's cacheable results): how
//! long (`ttlMs`) and by whom (`cacheScope`), read with the rest of the page, for a
//! transport that keeps listings (the wasi:http gateway).

use crate::jsonrpc::member;
use reasons_transform::json::{self, Member};
use std::time::Duration;

/// What a listing's result allows of its reuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reuse {
    /// Nothing: no `ttlMs`, `0`, or one that is not a whole number of milliseconds.
    Never,
    /// By the caller it was made for, for this long.
    Private(Duration),
    /// By every caller, for this long.
    Public(Duration),
}

impl Reuse {
    /// What a result whose members are `members` allows.
    pub(crate) fn of(members: &[Member]) -> Reuse {
        let ttl = member(members, "ttlMs").and_then(|ms| ms.parse::<u64>().ok());
        let Some(ttl) = ttl.filter(|ms| *ms > 0).map(Duration::from_millis) else {
            return Reuse::Never;
        };
        // A scope not known is taken as the narrower one.
        match member(members, "cacheScope").and_then(json::string) {
            Some(scope) if scope == "public" => Reuse::Public(ttl),
            _ => Reuse::Private(ttl),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::Page;

    #[test]
    fn a_listing_says_how_long_and_by_whom_it_may_be_reused() {
        let minute = Duration::from_secs(60);
        let cases = [
            (r#"{"tools":[]}"#, Reuse::Never),
            (r#"{"tools":[],"ttlMs":0}"#, Reuse::Never),
            (r#"{"tools":[],"ttlMs":-5}"#, Reuse::Never),
            (r#"{"tools":[],"ttlMs":1.5}"#, Reuse::Never),
            (r#"{"tools":[],"ttlMs":"60000"}"#, Reuse::Never),
            (r#"{"tools":[],"ttlMs":1e3}"#, Reuse::Never),
            (r#"{"tools":[],"ttlMs":60000}"#, Reuse::Private(minute)),
            (
                r#"{"tools":[],"ttlMs":60000,"cacheScope":"private"}"#,
                Reuse::Private(minute),
            ),
            (
                r#"{"tools":[],"ttlMs":60000,"cacheScope":"public"}"#,
                Reuse::Public(minute),
            ),
            (
                r#"{"tools":[],"ttlMs":60000,"cacheScope":"everyone"}"#,
                Reuse::Private(minute),
            ),
        ];
        assert_eq!(cases.len(), 10);
        for (result, reuse) in cases {
            assert_eq!(
                Page::read(result).map(|page| page.reuse),
                Some(reuse),
                "{result}"
            );
        }
        // Two answers in one: no reading of it is trusted, nor is it a page.
        assert!(Page::read(r#"{"tools":[],"ttlMs":60000,"ttlMs":1}"#).is_none());
    }
}
