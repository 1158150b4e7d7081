//! Where sign-ins are kept between runs: one JSON file, for its owner alone (0600, in a
//! 0700 directory of the user's config directory), replaced whole under a lock that
//! every `reasons` of the user takes, so that two proxies refreshing at once do not lose
//! a rotated refresh token. A file others could read is refused, never used.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;

/// The sign-ins of one user.
#[derive(Clone, Debug)]
pub struct Store {
    /// None where the user has no config directory (no HOME): then nothing is kept, and
    /// a sign-in says why, while a server that asks for none works as ever.
    dir: Option<PathBuf>,
}

/// What is kept for one server (by its URL): the authorization server it signed in
/// with, the client that server knows the proxy as, and the tokens it issued.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Kept {
    /// The resource identifier the server's metadata published: every token request
    /// names it.
    pub resource: String,
    pub issuer: String,
    /// Where tokens are refreshed.
    pub token_endpoint: String,
    /// Where they are revoked, when the authorization server takes revocations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    pub client: Registered,
    pub token: Option<Token>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Registered {
    pub id: String,
    pub secret: Option<String>,
    /// How the client authenticates at the token endpoint (`none`,
    /// `client_secret_basic`, `client_secret_post`).
    pub method: String,
    /// The redirect URI it was registered with, whose port a later sign-in listens on
    /// again, so that an authorization server comparing it exactly still knows it.
    pub redirect_uri: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Token {
    pub access: String,
    pub refresh: Option<String>,
    /// When the access token expires, in seconds since the epoch.
    pub expires_at: Option<u64>,
    pub scopes: Vec<String>,
}

#[derive(Default, Serialize, Deserialize)]
struct Contents {
    servers: BTreeMap<String, Kept>,
}

const FILE: &str = "sign-in.json";
const LOCK: &str = "sign-in.lock";

impl Store {
    /// The user's store, in `reasons/` of the config directory: `~/.config` here, from
    /// `HOME` alone (the platform's elsewhere). One store whatever the environment: MCP
    /// clients start servers with an environment of their own, often without
    /// `XDG_CONFIG_HOME`, and a proxy started so must find what `reasons login` kept.
    pub fn of_user() -> Store {
        let config = match cfg!(any(target_os = "linux", target_os = "freebsd")) {
            true => dirs::home_dir().map(|home| home.join(".config")),
            false => dirs::config_dir(),
        };
        Store {
            dir: config.map(|config| config.join("reasons")),
        }
    }

    fn dir(&self) -> Result<&PathBuf, String> {
        self.dir
            .as_ref()
            .ok_or_else(|| "no config directory to keep sign-ins in (HOME is not set)".into())
    }

    /// Where the sign-ins are kept, for messages.
    pub fn path(&self) -> Result<PathBuf, String> {
        Ok(self.dir()?.join(FILE))
    }

    /// What is kept for `server`.
    pub fn load(&self, server: &str) -> Result<Option<Kept>, String> {
        let _lock = self.lock()?;
        Ok(self.read()?.servers.remove(server))
    }

    /// Keeps `kept` for `server`, in place of what was.
    pub fn save(&self, server: &str, kept: Kept) -> Result<(), String> {
        self.update(server, |_| Some(kept)).map(drop)
    }

    /// Changes what is kept for `server` as `change` says (`None`: nothing to write),
    /// every other `reasons` of the user held off meanwhile: a refresh then uses the
    /// newest refresh token, and keeps the one it gets before another can use the old.
    pub fn update(
        &self,
        server: &str,
        change: impl FnOnce(Option<Kept>) -> Option<Kept>,
    ) -> Result<Option<Kept>, String> {
        let _lock = self.lock()?;
        let mut contents = self.read()?;
        let Some(kept) = change(contents.servers.get(server).cloned()) else {
            return Ok(None);
        };
        contents.servers.insert(server.to_string(), kept.clone());
        self.write(&contents)?;
        Ok(Some(kept))
    }

    /// Forgets `server`: what was kept for it, under each spelling of its URL.
    pub fn forget(&self, server: &str) -> Result<Vec<Kept>, String> {
        let _lock = self.lock()?;
        let mut contents = self.read()?;
        // The URL as the user spells it now may differ from the one signed in with by a
        // trailing slash or the case of its host: every sign-in of the same server goes.
        let same = spelt(server);
        let (forgotten, kept) = std::mem::take(&mut contents.servers)
            .into_iter()
            .partition(|(kept, _)| spelt(kept) == same);
        contents.servers = kept;
        let forgotten: Vec<Kept> = forgotten.into_values().collect();
        if !forgotten.is_empty() {
            self.write(&contents)?;
        }
        Ok(forgotten)
    }

    /// The lock every reader and writer holds (released when the file closes).
    fn lock(&self) -> Result<File, String> {
        let dir = self.dir()?;
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
        let path = dir.join(LOCK);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|error| format!("cannot open {}: {error}", path.display()))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|error| format!("cannot lock {}: {error}", path.display()))?;
        Ok(lock)
    }

    fn read(&self) -> Result<Contents, String> {
        let path = self.path()?;
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Contents::default());
            }
            Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
        };
        let mode = std::fs::metadata(&path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "{} holds tokens but others may read it (mode {:o}): it is not used; \
                 `chmod 600` it if nobody else could have, else delete it and sign in again",
                path.display(),
                mode & 0o777
            ));
        }
        serde_json::from_slice(&text).map_err(|error| {
            format!(
                "{} is not a sign-in file reasons wrote ({error}); delete it and sign in again",
                path.display()
            )
        })
    }

    /// Replaces the file whole: a new one, for its owner alone, renamed over the old.
    fn write(&self, contents: &Contents) -> Result<(), String> {
        let path = self.path()?;
        let failed = |error: std::io::Error| format!("cannot write {}: {error}", path.display());
        let mut new = tempfile::Builder::new()
            .prefix(".sign-in")
            .permissions(std::fs::Permissions::from_mode(0o600))
            .tempfile_in(self.dir()?)
            .map_err(failed)?;
        let text = serde_json::to_vec_pretty(contents).map_err(|error| error.to_string())?;
        new.write_all(&text).map_err(failed)?;
        new.as_file().sync_all().map_err(failed)?;
        new.persist(&path).map_err(|error| failed(error.error))?;
        Ok(())
    }
}

/// `server` as one URL whatever its spelling: the host's case, a default port and a
/// trailing slash do not make another server.
fn spelt(server: &str) -> String {
    match url::Url::parse(server) {
        Ok(url) => url.as_str().trim_end_matches('/').to_string(),
        Err(_) => server.to_string(),
    }
}

#[cfg(test)]
impl Store {
    pub fn at(dir: PathBuf) -> Store {
        Store { dir: Some(dir) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(access: &str) -> Kept {
        Kept {
            resource: "http://a/mcp".into(),
            issuer: "https://as".into(),
            token_endpoint: "https://as/token".into(),
            revocation_endpoint: None,
            client: Registered {
                id: "c".into(),
                secret: None,
                method: "none".into(),
                redirect_uri: None,
            },
            token: Some(Token {
                access: access.into(),
                refresh: Some("r".into()),
                expires_at: Some(1),
                scopes: vec!["a".into()],
            }),
        }
    }

    #[test]
    fn sign_ins_are_kept_per_server_for_the_owner_alone() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::at(home.path().join("reasons"));
        assert_eq!(store.load("http://a/mcp").unwrap(), None);
        store.save("http://a/mcp", kept("t1")).unwrap();
        store.save("http://b/mcp", kept("t2")).unwrap();
        assert_eq!(store.load("http://a/mcp").unwrap(), Some(kept("t1")));
        let mode = |path: PathBuf| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(store.path().unwrap()), 0o600);
        assert_eq!(mode(home.path().join("reasons")), 0o700);
        assert_eq!(store.forget("http://a/mcp").unwrap().len(), 1);
        assert!(store.forget("http://a/mcp").unwrap().is_empty());
        // Spelt otherwise, the same server is forgotten all the same.
        store
            .save("https://Mcp.Example.com:443/mcp", kept("t3"))
            .unwrap();
        assert!(
            !store
                .forget("https://mcp.example.com/mcp/")
                .unwrap()
                .is_empty()
        );
        assert_eq!(store.load("https://Mcp.Example.com:443/mcp").unwrap(), None);
        assert_eq!(store.load("http://a/mcp").unwrap(), None);
        assert_eq!(store.load("http://b/mcp").unwrap(), Some(kept("t2")));
    }

    #[test]
    fn a_file_others_may_read_or_one_not_ours_is_refused_with_why() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::at(home.path().to_path_buf());
        store.save("http://a/mcp", kept("t1")).unwrap();
        let path = store.path().unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let why = store.load("http://a/mcp").unwrap_err();
        assert!(
            why.contains("others may read it") && !why.contains("t1"),
            "{why}"
        );
        std::fs::write(&path, "not json").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let why = store.load("http://a/mcp").unwrap_err();
        assert!(why.contains("not a sign-in file"), "{why}");
    }

    #[test]
    fn without_a_config_directory_nothing_is_kept_and_each_use_says_why() {
        let store = Store { dir: None };
        for why in [
            store.load("http://a/mcp").map(|_| ()).unwrap_err(),
            store.forget("http://a/mcp").map(|_| ()).unwrap_err(),
            store.path().map(|_| ()).unwrap_err(),
        ] {
            assert!(why.contains("HOME is not set"), "{why}");
        }
    }
}
