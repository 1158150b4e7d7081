//! Publishing: the released components and their WIT package pushed to an OCI registry with
//! `wkg` (the Bytecode Alliance's package tool) and pulled back byte for byte. The
//! registry is Debian's `docker-registry`, on loopback, storing into a temporary folder.

use reasons_host::plugin::{REASONS_WASM, WIT_PACKAGE_WASM};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The wasi:http gateway component, as released (built by the package's `build.rs`).
const GATEWAY_WASM: &[u8] = include_bytes!(env!("REASONS_GATEWAY_WASM"));

/// `wkg`, pinned, installed into the workspace's `target/tools` on first use (`./test`
/// installs it there before the tests), unoptimised: it compiles in less than half the
/// time, and moves a few MiB.
fn wkg() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tools");
    let wkg = root.join("bin/wkg");
    if !wkg.exists() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "install",
                "--locked",
                "--debug",
                "wkg",
                "--version",
                "0.13.0",
                "--root",
            ])
            .arg(&root)
            .env("CARGO_TARGET_DIR", root.join("build"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "installing wkg 0.13.0 failed");
    }
    wkg
}

/// A registry on a free loopback port, stopped when dropped.
struct Registry {
    child: Child,
    address: String,
    _storage: tempfile::TempDir,
}

impl Registry {
    fn start() -> Registry {
        let storage = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap()
            .port();
        let address = format!("127.0.0.1:{port}");
        let config = storage.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {address}\n",
                storage.path().join("data").display()
            ),
        )
        .unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry runs (Debian's package; `./test` installs it)");
        let until = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&address).is_err() {
            assert!(Instant::now() < until, "no registry on {address}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Registry {
            child,
            address,
            _storage: storage,
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_components_and_their_wit_package_travel_through_a_registry_unchanged() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    let status = Command::new(env!("CARGO_BIN_EXE_reasons"))
        .args(["component", "--out"])
        .arg(&dist)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let wkg = wkg();
    for (file, reference, shipped) in [
        ("reasons.wasm", "reasons/reasons:0.1.0", REASONS_WASM),
        (
            "reasons-gateway.wasm",
            "reasons/gateway:0.1.0",
            GATEWAY_WASM,
        ),
        ("agent-tools.wasm", "agent/tools:0.1.1", WIT_PACKAGE_WASM),
    ] {
        let reference = format!("{}/{reference}", registry.address);
        let wkg_oci = |verb: &str| {
            let mut command = Command::new(&wkg);
            command.args(["oci", verb, "--insecure", &registry.address]);
            command
        };
        let pushed = wkg_oci("push")
            .arg(&reference)
            .arg(dist.join(file))
            .output()
            .unwrap();
        assert!(
            pushed.status.success(),
            "{}",
            String::from_utf8_lossy(&pushed.stderr)
        );
        let pulled_file = dir.path().join(format!("pulled-{file}"));
        let pulled = wkg_oci("pull")
            .arg(&reference)
            .arg("-o")
            .arg(&pulled_file)
            .output()
            .unwrap();
        assert!(
            pulled.status.success(),
            "{}",
            String::from_utf8_lossy(&pulled.stderr)
        );
        let pulled = std::fs::read(&pulled_file).unwrap();
        assert!(
            pulled == shipped,
            "{file} came back changed ({} bytes)",
            pulled.len()
        );
    }
}
