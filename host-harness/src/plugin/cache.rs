//! Compiled plugins, kept. Compiling a component with Cranelift takes a good part of a
//! second; loading its compiled form takes milliseconds. So a component is compiled once
//! per process (a map by digest) and once per machine (a file per digest in the cache
//! directory), and a file is only trusted after its own digest checks out.
//!
//! A file is `MAGIC`, the SHA-256 of the rest, then what `Component::serialize` wrote.
//! Its name is the SHA-256 of the engine's compatibility hash and the component's bytes,
//! so another wasmtime, another engine configuration or another component never finds it.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use wasmtime::Engine;
use wasmtime::component::Component;

const MAGIC: &[u8; 8] = b"RSNCWSM1";

/// Where a component came from this time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Compiled from its bytes (and, with a cache directory, stored there).
    Compiled,
    /// Already compiled by this process.
    InProcess,
    /// Loaded from the cache directory.
    FromDisk,
    /// The cached file could not be used (it says why) and the component was compiled
    /// again, and the file replaced.
    Rebuilt(String),
    /// The cache directory is not private to this user (it says why), so it was not
    /// used at all: the component was compiled in memory.
    Untrusted(String),
}

/// Where compiled components are kept: in this process, and across runs if a directory
/// is given.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    dir: Option<PathBuf>,
    compiled: Arc<Mutex<HashMap<Key, Component>>>,
}

impl Cache {
    /// `$REASONS_CACHE_DIR` (empty: no cache), else `$XDG_CACHE_HOME/reasons`, else
    /// `$HOME/.cache/reasons`.
    pub fn from_env() -> Cache {
        let var = |name| std::env::var_os(name).filter(|value| !value.is_empty());
        let dir = match std::env::var_os("REASONS_CACHE_DIR") {
            Some(dir) if dir.is_empty() => None,
            Some(dir) => Some(PathBuf::from(dir)),
            None => var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|home| Path::new(&home).join(".cache")))
                .map(|base| base.join("reasons")),
        };
        Cache {
            dir,
            ..Cache::default()
        }
    }

    /// A cache in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Cache {
        Cache {
            dir: Some(dir.into()),
            ..Cache::default()
        }
    }

    /// `bytes` compiled for `engine`, from wherever it is cheapest to get.
    pub fn component(
        &self,
        engine: &Engine,
        bytes: &[u8],
    ) -> wasmtime::Result<(Component, Origin)> {
        let key = key(engine, bytes);
        // Held while compiling, so that two threads loading one plugin compile it once.
        let mut compiled = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(component) = compiled.get(&key) {
            return Ok((component.clone(), Origin::InProcess));
        }
        let (component, origin) = match &self.dir {
            None => (compile(engine, bytes)?, Origin::Compiled),
            Some(dir) => from_dir(dir, &key, engine, bytes)?,
        };
        compiled.insert(key, component.clone());
        Ok((component, origin))
    }
}

/// The stack compiling is given: Cranelift runs on the calling thread (the engine does
/// not compile in parallel), and deep in a debug build it needs far more than a small
/// thread (an embedder's worker, 256 KiB) has, which it would overflow, ending the process.
const COMPILE_STACK: usize = 8 << 20;

/// `bytes` compiled for `engine`, on a stack of its own when this thread's is short.
fn compile(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Component> {
    stacker::maybe_grow(COMPILE_STACK / 2, COMPILE_STACK, || {
        Component::new(engine, bytes)
    })
}

fn from_dir(
    dir: &Path,
    key: &Key,
    engine: &Engine,
    bytes: &[u8],
) -> wasmtime::Result<(Component, Origin)> {
    if let Err(why) = trusted(dir) {
        return Ok((compile(engine, bytes)?, Origin::Untrusted(why)));
    }
    let path = dir.join(format!("{key:x}.cwasm"));
    let origin = match private_file(&path).and_then(|()| std::fs::read(&path)) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Origin::Compiled,
        Err(error) => Origin::Rebuilt(format!("cannot read {}: {error}", path.display())),
        Ok(file) => match load(engine, &file) {
            Ok(component) => return Ok((component, Origin::FromDisk)),
            Err(why) => Origin::Rebuilt(format!("{}: {why}", path.display())),
        },
    };
    let component = compile(engine, bytes)?;
    // A cache that cannot be written is only a slower start, never a failure.
    let _ = store(dir, &path, &component.serialize()?);
    Ok((component, origin))
}

/// A cached file's component, if the file is whole and was made by this engine.
fn load(engine: &Engine, file: &[u8]) -> Result<Component, String> {
    let rest = file.strip_prefix(MAGIC).ok_or("not a reasons cache file")?;
    let (digest, serialized) = rest.split_at_checked(32).ok_or("truncated")?;
    if digest != Sha256::digest(serialized).as_slice() {
        return Err("its digest does not match its contents (corrupt)".into());
    }
    // SAFETY: `deserialize` runs the machine code in the file. The file is one this
    // process's code wrote (its digest checks out, so it is whole), under a name that only
    // this engine's configuration and this component produce, owned by this user in a
    // directory that is this user's alone (`trusted`, `private_file`); wasmtime checks its
    // own version and configuration header as well.
    unsafe { Component::deserialize(engine, serialized) }
        .map_err(|error| format!("made by another engine: {error}"))
}

/// Writes the file atomically: a reader sees the old file, no file, or the whole new one.
fn store(dir: &Path, path: &Path, serialized: &[u8]) -> std::io::Result<()> {
    private_dir(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(MAGIC)?;
    file.write_all(&Sha256::digest(serialized))?;
    file.write_all(serialized)?;
    file.as_file().sync_all()?;
    file.persist(path)?;
    Ok(())
}

/// Whether `dir` (made if missing) is this user's alone, as ssh asks of its key files: a
/// file in it is native code this process will run, so anyone who could write there
/// could run code as this user. The digest proves a file whole, not who wrote it.
fn trusted(dir: &Path) -> Result<(), String> {
    private_dir(dir).map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
    owned_and_private(dir).map_err(|why| {
        format!(
            "{} {why}; it is not used (`chmod 700` it, or set REASONS_CACHE_DIR)",
            dir.display()
        )
    })
}

/// A cached file must be this user's and writable by no one else, like its directory.
fn private_file(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(error) => Err(error),
        Ok(_) => owned_and_private(path).map_err(std::io::Error::other),
    }
}

#[cfg(unix)]
fn owned_and_private(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::symlink_metadata(path).map_err(|error| error.to_string())?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if metadata.uid() != me {
        return Err(format!(
            "belongs to user {}, not to this user ({me})",
            metadata.uid()
        ));
    }
    if metadata.mode() & 0o022 != 0 {
        return Err(format!(
            "can be written by others (mode {:o})",
            metadata.mode() & 0o777
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn owned_and_private(_: &Path) -> Result<(), String> {
    Ok(())
}

/// The cache directory holds code that will be run: only its owner may write there.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A compiled component's name: SHA-256, which prints as hex.
type Key = sha2::digest::Output<Sha256>;

fn key(engine: &Engine, bytes: &[u8]) -> Key {
    let mut hasher = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.update(bytes);
    hasher.0.finalize()
}

/// Feeds what `Hash` writes into SHA-256: a digest that is the same in every run,
/// unlike std's randomly keyed hasher.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        unreachable!("only the SHA-256 digest is used")
    }
}
