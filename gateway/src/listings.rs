//! Listings kept for reuse, only as each listing's own rules allow: a 2026-07-28
//! `tools/list` result says how long it may be reused (`ttlMs`) and by whom
//! (`cacheScope`). A `private` listing (the default) is kept for its caller alone, under
//! a digest of the headers the caller sent (never the credentials themselves); a
//! `public` one for every caller. A result that says nothing (every earlier era) is never
//! reused, and a `notifications/tools/list_changed` from the server drops everything.
//! What a result allows ([`Reuse`]) comes from the proxy, which read it with the page.
//!
//! The cache is an optimisation, never a condition of correctness: a listing not found
//! is listed again. It lives in the instance's memory, which serves every request an
//! engine sends the same instance (jco's one instance; `wasmtime serve
//! --max-instance-reuse-count`). `wasi:keyvalue` is not imported: a component's imports
//! are not optional, so an engine without it (jco, `wasmtime serve` without `-S
//! keyvalue`) would refuse to load the gateway at all.

use reasons_mcp::Reuse;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::time::Instant;

/// Headers that change from request to request and name no caller: left out of the
/// caller's digest so that they do not defeat reuse. Every other header the client
/// sends counts, so that a header an upstream authorises by can never be shared.
const NOT_THE_CALLER: &[&str] = &["traceparent", "tracestate"];

/// Which listing: for whom, in which protocol version, from which cursor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// A digest of the caller's headers, or `None` for a `public` listing.
    caller: Option<[u8; 32]>,
    version: Option<String>,
    cursor: Option<String>,
}

impl Key {
    /// The key of a listing made for the caller who sent `headers`, and of the public
    /// listing that would serve them: the private one is looked for first.
    pub fn both(
        headers: &[(String, Vec<u8>)],
        version: Option<&str>,
        cursor: Option<&str>,
    ) -> [Key; 2] {
        let public = Key {
            caller: None,
            version: version.map(str::to_string),
            cursor: cursor.map(str::to_string),
        };
        let private = Key {
            caller: Some(digest(headers)),
            ..public.clone()
        };
        [private, public]
    }
}

/// A digest of `headers`, in an order and an encoding that no two different sets share:
/// names are lowercased and sorted, and every part is prefixed by its length.
fn digest(headers: &[(String, Vec<u8>)]) -> [u8; 32] {
    let mut named: Vec<(String, &[u8])> = headers
        .iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), value.as_slice()))
        .filter(|(name, _)| !NOT_THE_CALLER.contains(&name.as_str()))
        .collect();
    named.sort();
    let mut hasher = Sha256::new();
    for (name, value) in named {
        for part in [name.as_bytes(), value] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
    }
    hasher.finalize().into()
}

/// One listing kept.
struct Kept {
    result: String,
    until: Instant,
}

/// The listings kept, at most `cap` bytes of results at a time.
#[derive(Default)]
pub struct Listings {
    kept: HashMap<Key, Kept>,
}

impl Listings {
    /// A listing that may serve the caller of `keys` (see [`Key::both`]) at `now`.
    pub fn find(&mut self, keys: &[Key; 2], now: Instant) -> Option<&str> {
        self.kept.retain(|_, kept| kept.until > now);
        let key = keys.iter().find(|key| self.kept.contains_key(key))?;
        Some(&self.kept[key].result)
    }

    /// Keeps `result`, listed at `now` for the caller of `keys`, as far as it allows
    /// (`reuse`) and `cap` bytes leave room: the listings nearest their end make room
    /// first.
    pub fn keep(&mut self, keys: [Key; 2], result: &str, reuse: Reuse, now: Instant, cap: usize) {
        let [private, public] = keys;
        let (key, ttl) = match reuse {
            Reuse::Never => return,
            Reuse::Private(ttl) => (private, ttl),
            Reuse::Public(ttl) => (public, ttl),
        };
        // A time so far off that the clock cannot say it is not reuse the gateway can
        // keep track of.
        let Some(until) = now.checked_add(ttl) else {
            return;
        };
        if result.len() > cap {
            return;
        }
        self.kept.remove(&key);
        while self.bytes() + result.len() > cap {
            let Some(soonest) = self
                .kept
                .iter()
                .min_by_key(|(_, kept)| kept.until)
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            self.kept.remove(&soonest);
        }
        let result = result.to_string();
        self.kept.insert(key, Kept { result, until });
    }

    /// Drops every listing: the server said its tools changed.
    pub fn forget(&mut self) {
        self.kept.clear();
    }

    /// The bytes of the results kept.
    fn bytes(&self) -> usize {
        self.kept.values().map(|kept| kept.result.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.as_bytes().to_vec()))
            .collect()
    }

    fn keys(pairs: &[(&str, &str)]) -> [Key; 2] {
        Key::both(&headers(pairs), Some("2026-07-28"), None)
    }

    const ALICE: &[(&str, &str)] = &[("Authorization", "Bearer alice")];
    const BOB: &[(&str, &str)] = &[("Authorization", "Bearer bob")];
    const PRIVATE: &str = r#"{"tools":[],"ttlMs":60000,"cacheScope":"private"}"#;
    const PUBLIC: &str = r#"{"tools":[],"ttlMs":60000,"cacheScope":"public"}"#;
    const MIB: usize = 1 << 20;

    /// Keeps `result` as the gateway does: with what its page, as the proxy reads it,
    /// allows.
    fn keep(listings: &mut Listings, keys: [Key; 2], result: &str, now: Instant, cap: usize) {
        let reuse = reasons_mcp::jsonrpc::Page::read(result).unwrap().reuse;
        listings.keep(keys, result, reuse, now, cap);
    }

    #[test]
    fn a_private_listing_serves_its_own_caller_alone() {
        let now = Instant::now();
        let mut listings = Listings::default();
        keep(&mut listings, keys(ALICE), PRIVATE, now, MIB);
        assert_eq!(listings.find(&keys(ALICE), now), Some(PRIVATE));
        assert_eq!(listings.find(&keys(BOB), now), None);
        // No header may be dropped: one more, another caller.
        let more = [ALICE[0], ("Cookie", "tenant=b")];
        assert_eq!(listings.find(&keys(&more), now), None);
        // Header names are case-insensitive, and a trace is no caller.
        let same = [("authorization", "Bearer alice"), ("traceparent", "00-ab")];
        assert_eq!(listings.find(&keys(&same), now), Some(PRIVATE));
    }

    #[test]
    fn a_caller_is_kept_as_a_digest_never_as_its_credentials() {
        let [private, public] = keys(ALICE);
        assert!(public.caller.is_none());
        let caller = private.caller.expect("a private key names its caller");
        let token = b"alice";
        assert!(!caller.windows(token.len()).any(|part| part == token));
        assert!(!format!("{private:?}").contains("alice"));
        // Names and values are not run together: these two sets differ.
        let joined = keys(&[("a", "bc")]);
        let split = keys(&[("ab", "c")]);
        assert_ne!(joined[0], split[0]);
    }

    #[test]
    fn a_public_listing_serves_every_caller() {
        let now = Instant::now();
        let mut listings = Listings::default();
        keep(&mut listings, keys(ALICE), PUBLIC, now, MIB);
        assert_eq!(listings.find(&keys(BOB), now), Some(PUBLIC));
        // Not across protocol versions, nor for another page.
        let legacy = Key::both(&headers(BOB), None, None);
        assert_eq!(listings.find(&legacy, now), None);
        let page = Key::both(&headers(BOB), Some("2026-07-28"), Some("2"));
        assert_eq!(listings.find(&page, now), None);
    }

    #[test]
    fn a_listing_ends_at_its_time_and_when_the_server_says_its_tools_changed() {
        let now = Instant::now();
        let mut listings = Listings::default();
        keep(&mut listings, keys(ALICE), PRIVATE, now, MIB);
        let nearly = now + Duration::from_millis(59_999);
        assert_eq!(listings.find(&keys(ALICE), nearly), Some(PRIVATE));
        let after = now + Duration::from_millis(60_000);
        assert_eq!(listings.find(&keys(ALICE), after), None);

        keep(&mut listings, keys(ALICE), PRIVATE, now, MIB);
        keep(&mut listings, keys(BOB), PUBLIC, now, MIB);
        listings.forget();
        assert_eq!(listings.find(&keys(ALICE), now), None);
        assert_eq!(listings.find(&keys(BOB), now), None);
    }

    #[test]
    fn what_a_listing_does_not_allow_is_not_kept() {
        let now = Instant::now();
        let mut listings = Listings::default();
        keep(&mut listings, keys(ALICE), r#"{"tools":[]}"#, now, MIB);
        keep(
            &mut listings,
            keys(BOB),
            r#"{"tools":[],"ttlMs":0}"#,
            now,
            MIB,
        );
        assert_eq!(listings.find(&keys(ALICE), now), None);
        assert_eq!(listings.find(&keys(BOB), now), None);
        // The longest time a listing can say is taken as said, without overflow.
        let longest = format!(r#"{{"tools":[],"ttlMs":{}}}"#, u64::MAX);
        keep(&mut listings, keys(BOB), &longest, now, MIB);
        let later = now + Duration::from_secs(3600 * 24 * 365);
        assert_eq!(listings.find(&keys(BOB), later), Some(longest.as_str()));
    }

    #[test]
    fn the_listings_kept_stay_within_their_bytes() {
        let now = Instant::now();
        let mut listings = Listings::default();
        let cap = PRIVATE.len() * 2;
        let callers: Vec<[Key; 2]> = (0..5)
            .map(|n| keys(&[("Authorization", &format!("Bearer {n}"))]))
            .collect();
        for (n, keys) in callers.iter().enumerate() {
            keep(
                &mut listings,
                keys.clone(),
                PRIVATE,
                now + Duration::from_millis(n as u64),
                cap,
            );
        }
        assert!(listings.bytes() <= cap);
        // The two listed last are kept; the first ones made room.
        let kept: Vec<bool> = callers
            .iter()
            .map(|keys| listings.find(keys, now).is_some())
            .collect();
        assert_eq!(kept, [false, false, false, true, true]);
        // A listing larger than the whole cache is not kept, nor does it empty it.
        let large = format!(r#"{{"tools":[],"ttlMs":60000,"x":"{}"}}"#, "y".repeat(cap));
        keep(&mut listings, keys(ALICE), &large, now, cap);
        assert_eq!(listings.find(&keys(ALICE), now), None);
        assert!(listings.find(&callers[4], now).is_some());
        // No room at all: nothing kept.
        let mut none = Listings::default();
        keep(&mut none, keys(ALICE), PRIVATE, now, 0);
        assert_eq!(none.find(&keys(ALICE), now), None);
    }
}
