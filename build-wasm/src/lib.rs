//! Builds workspace packages as `wasm32-wasip2` components from a build script: the
//! plugin host's (the reasons component it embeds) and the tests' (their fixtures). The
//! nested cargo gets its own target directory, so it never waits on the lock of the
//! build that runs it, and none of the outer build's flags or wrappers.
//!
//! A build is reproducible: the same sources give the same bytes wherever they are built,
//! because the one machine-specific thing rustc would write into them, the path of
//! cargo's registry (in the locations of panics the component can never print), is
//! written as `/cargo`. What a released component says of itself goes into its metadata
//! ([`with_metadata`]), and its WIT package can be encoded on its own ([`wit_package`]).

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

/// The workspace's root: this crate sits there, whichever package's build script calls it.
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// Builds `package` in release and returns the path of its component, `artifact`.
pub fn build_component(package: &str, artifact: &str) -> PathBuf {
    ensure_target();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    // The mutation check builds the guest again for every mutant, each time from a build
    // script of its own: one folder it names for all of them builds the guest's
    // dependencies once.
    println!("cargo:rerun-if-env-changed=REASONS_MUTANT_WASM_TARGET");
    let target_dir = std::env::var_os("REASONS_MUTANT_WASM_TARGET")
        .map(PathBuf::from)
        .unwrap_or_else(|| out_dir.join("wasm-target"));
    let mut build = Build::new(package, artifact, &target_dir);
    if package == "reasons-guest"
        && let Some(mutant) = mutant()
    {
        build.features.push(format!("reasons-transform/{mutant}"));
    }
    let built = build.run();
    watch_what_built(&built);
    built
}

/// Has the build script run again when anything that went into `built` changes, and
/// nothing else: its sources in the workspace (the dep-info file cargo writes beside each
/// artifact names them), the manifests of the packages they belong to, and the
/// workspace's own. An edit to the MCP core builds the gateway component again, not the
/// reasons component, which no test of the core then waits for.
fn watch_what_built(built: &Path) {
    let info = built.with_extension("d");
    let text = std::fs::read_to_string(&info)
        .unwrap_or_else(|_| panic!("cargo writes the dep-info file {}", info.display()));
    let sources = (text.lines().next())
        .and_then(|line| line.split_once(": "))
        .map(|(_, sources)| sources)
        .unwrap_or_else(|| panic!("{} names no sources", info.display()));
    let workspace = workspace();
    let mut watched = std::collections::BTreeSet::new();
    // The registry's sources are left out: under one Cargo.lock they never change.
    for source in dep_info_paths(sources).map(PathBuf::from) {
        if !source.starts_with(workspace) {
            continue;
        }
        let manifest = (source.ancestors().skip(1))
            .take_while(|folder| folder.starts_with(workspace))
            .map(|folder| folder.join("Cargo.toml"))
            .find(|manifest| manifest.exists());
        watched.extend(manifest);
        watched.insert(source);
    }
    for shared in ["Cargo.toml", "Cargo.lock", ".cargo/config.toml"] {
        watched.insert(workspace.join(shared));
    }
    for path in watched {
        rerun_if_changed(&path);
    }
}

/// The paths of a dep-info list, which are separated by spaces and escape their own
/// spaces with a backslash.
fn dep_info_paths(list: &str) -> impl Iterator<Item = String> {
    let mut paths = vec![String::new()];
    let mut chars = list.chars();
    while let Some(char) = chars.next() {
        match char {
            '\\' => paths.last_mut().unwrap().extend(chars.next()),
            ' ' | '\t' => paths.push(String::new()),
            char => paths.last_mut().unwrap().push(char),
        }
    }
    paths.into_iter().filter(|path| !path.is_empty())
}

/// The deliberate bug of the transform's (a `mutant-*` feature) that `REASONS_MUTANT`
/// names, for the mutation check (`.ci/mutants`), which builds the native transform with
/// the same feature: the component then carries it too.
fn mutant() -> Option<String> {
    println!("cargo:rerun-if-env-changed=REASONS_MUTANT");
    let mutant = std::env::var("REASONS_MUTANT").ok()?;
    assert!(
        mutant.starts_with("mutant-"),
        "REASONS_MUTANT must name a mutant-* feature of the transform, not {mutant:?}"
    );
    Some(mutant)
}

/// Builds `package` for `wasm32-wasip2` in release, in `target_dir`, with the
/// environment of no outer build; the path of its component, `artifact`.
pub fn build_in(package: &str, artifact: &str, target_dir: &Path) -> PathBuf {
    Build::new(package, artifact, target_dir).run()
}

/// One nested build of a component.
struct Build<'a> {
    package: &'a str,
    artifact: &'a str,
    target_dir: &'a Path,
    /// `--features` to build it with.
    features: Vec<String>,
}

impl<'a> Build<'a> {
    fn new(package: &'a str, artifact: &'a str, target_dir: &'a Path) -> Build<'a> {
        Build {
            package,
            artifact,
            target_dir,
            features: Vec::new(),
        }
    }

    fn run(&self) -> PathBuf {
        let Build {
            package,
            artifact,
            target_dir,
            ref features,
        } = *self;
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let registry = cargo_home().join("registry");
        // Added to the workspace's own flags for the target (`--config` arrays append).
        let remap = format!(
            "target.{TARGET}.rustflags=[\"--remap-path-prefix={}=/cargo/registry\"]",
            registry.display()
        );
        let mut command = Command::new(cargo);
        command
            .current_dir(workspace())
            .args(["build", "--release", "--target", TARGET, "-p", package])
            .args(["--config", &remap])
            // A component is bytes a host fetches and compiles before its first call: it
            // is built for size, across crates (the gateway measured 615 kB at the host's
            // settings, 424 kB so). The transform and the guest keep the "s" of their
            // own profiles, which the native benchmarks share.
            .args(["--config", "profile.release.opt-level=\"z\""])
            .args(["--config", "profile.release.codegen-units=1"])
            .args(["--config", "profile.release.lto=true"])
            .arg("--target-dir")
            .arg(target_dir);
        if !features.is_empty() {
            command.args(["--features", &features.join(",")]);
        }
        let status = command
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("RUSTFLAGS")
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("REASONS_MUTANT")
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building `{package}` for {TARGET} failed");
        target_dir.join(TARGET).join("release").join(artifact)
    }
}

/// Cargo's home, where the registry's sources are unpacked.
fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .expect("CARGO_HOME or HOME is set")
}

/// The reasons component's description, as its metadata gives it.
pub const REASONS_DESCRIPTION: &str = "Adds an optional `reason` parameter to every tool \
    declaration a model sees and strips it from every call before the call reaches the \
    tool's server.";

/// The gateway component's description, as its metadata gives it.
pub const GATEWAY_DESCRIPTION: &str = "The reasons layer as a Streamable HTTP MCP gateway: \
    a wasi:http/proxy component that adds an optional `reason` parameter to every tool an \
    upstream MCP server lists and strips it from every call before the call reaches it.";

/// What a released component says of itself, in the metadata `wasm-tools metadata show`
/// prints.
pub struct About<'a> {
    pub name: &'a str,
    pub version: &'a str,
    pub description: &'a str,
    /// An SPDX expression.
    pub licenses: &'a str,
    /// Where its source is.
    pub source: &'a str,
}

/// Builds `package` (see [`build_component`]) and writes its component `artifact` to
/// `released` as it is released: named `name`, described by `description`, with the
/// version, licence and source of the package whose build script calls this.
pub fn build_release(
    package: &str,
    artifact: &str,
    name: &str,
    description: &str,
    released: &Path,
) {
    let built = build_component(package, artifact);
    let cargo = |variable: &str| {
        std::env::var(variable)
            .unwrap_or_else(|_| panic!("cargo sets {variable} from the workspace"))
    };
    let (version, licenses, source) = (
        cargo("CARGO_PKG_VERSION"),
        cargo("CARGO_PKG_LICENSE"),
        cargo("CARGO_PKG_REPOSITORY"),
    );
    let about = About {
        name,
        version: &version,
        description,
        licenses: &licenses,
        source: &source,
    };
    with_metadata(&built, &about, released);
}

/// `component` with `about` in its metadata, written to `out`.
pub fn with_metadata(component: &Path, about: &About, out: &Path) {
    use wasm_metadata::{AddMetadata, AddMetadataField, Description, Licenses, Source, Version};
    let bytes = std::fs::read(component).expect("the component was built");
    let mut metadata = AddMetadata::default();
    metadata.name = AddMetadataField::Set(about.name.to_string());
    metadata.description = AddMetadataField::Set(Description::new(about.description.to_string()));
    metadata.licenses =
        AddMetadataField::Set(Licenses::new(about.licenses).expect("an SPDX expression"));
    metadata.source = AddMetadataField::Set(Source::new(about.source).expect("a source URL"));
    metadata.version = AddMetadataField::Set(Version::new(about.version.to_string()));
    let released = metadata.to_wasm(&bytes).expect("the metadata is added");
    std::fs::write(out, released).expect("the released component is written");
}

/// The WIT package in the folder `wit` (of the workspace), encoded as a binary package
/// (what `wasm-tools component wit --wasm` writes) to `out`; its name and version.
pub fn wit_package(wit: &str, out: &Path) -> String {
    let folder = workspace().join(wit);
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve.push_dir(&folder).expect("the WIT package parses");
    let encoded = wit_component::encode(&resolve, package, false).expect("the WIT package encodes");
    std::fs::write(out, encoded).expect("the WIT package is written");
    rerun_if_changed(&folder);
    resolve.packages[package].name.to_string()
}

/// Adds the wasm target to the toolchain building this when it lacks it: a fresh
/// machine's rustup does not add a toolchain file's targets to an installed toolchain.
fn ensure_target() {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if sysroot.join("lib/rustlib").join(TARGET).exists() {
        return;
    }
    println!(
        "cargo:warning=adding the {TARGET} target to this toolchain (rustup target add {TARGET})"
    );
    let added = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status();
    assert!(
        added.is_ok_and(|status| status.success()),
        "the {TARGET} target is missing and `rustup target add {TARGET}` failed: add it by hand"
    );
}

fn rerun_if_changed(path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dep_info_list_is_read_with_its_escaped_spaces() {
        let paths: Vec<String> =
            dep_info_paths("/w/a.rs /w/my\\ dir/b.rs  /w/c.wit\t/w/d.rs").collect();
        assert_eq!(paths, ["/w/a.rs", "/w/my dir/b.rs", "/w/c.wit", "/w/d.rs"]);
    }
}
