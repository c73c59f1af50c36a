//! Test tools newer than Debian 12 ships, taken from Debian 13 (trixie) binary packages and run
//! with trixie's own dynamic loader and libraries from a private root under the cache dir.
//!
//! stress-ng 0.15 (bookworm) has no `--race-sched`, the stressor that ejects schedulers racing
//! affinity changes; 0.19 (trixie) has it. Nothing is installed into the system.
//!
//! Also scxctl, scx_loader's client, built from crates.io at a pinned version into the cache.

use std::path::PathBuf;
use std::process::Command;

use crate::apt::PrivateApt;
use crate::cache::Cache;
use crate::download;
use crate::kernel::KernelError;

const SUITE: &str = "trixie";
/// The version the tests were written against; a different one is refused, not silently used.
const STRESS_NG_VERSION: &str = "0.19.02";

/// A launcher for trixie's stress-ng; downloads and unpacks it on first use.
pub fn stress_ng(cache: &Cache) -> Result<PathBuf, KernelError> {
    let dir = cache
        .root()
        .join("tools")
        .join(format!("stress-ng-{STRESS_NG_VERSION}"));
    let launcher = dir.join("stress-ng");
    if launcher.is_file() {
        return Ok(launcher);
    }
    let io = |what: &str| {
        let what = what.to_owned();
        move |source| KernelError::Io { what, source }
    };
    eprintln!("tools: fetching stress-ng {STRESS_NG_VERSION} from Debian {SUITE}");
    let apt = PrivateApt::new(cache.apt_dir(SUITE), SUITE);
    apt.update()?;
    let debs = apt.print_install_uris(&["stress-ng".to_owned()])?;
    let wanted = debs
        .iter()
        .find(|d| d.file_name.starts_with("stress-ng_"))
        .map(|d| d.file_name.clone())
        .unwrap_or_default();
    if !wanted.starts_with(&format!("stress-ng_{STRESS_NG_VERSION}-")) {
        return Err(KernelError::NotFound(format!(
            "{SUITE} offers {wanted}, the tests expect stress-ng {STRESS_NG_VERSION}"
        )));
    }
    let staging = dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&staging);
    let root = staging.join("root");
    std::fs::create_dir_all(&root).map_err(io("creating the tools dir"))?;
    for deb in &debs {
        let file = download::fetch_verified(deb, &cache.debs_dir())?;
        let status = Command::new("dpkg-deb")
            .arg("-x")
            .arg(&file)
            .arg(&root)
            .status()
            .map_err(io("running dpkg-deb"))?;
        if !status.success() {
            return Err(KernelError::Tool(format!("dpkg-deb -x {}", file.display())));
        }
    }
    let final_root = dir.join("root");
    let libs = final_root.join("usr/lib/x86_64-linux-gnu");
    let script = format!(
        "#!/bin/sh\n# stress-ng {STRESS_NG_VERSION} from Debian {SUITE}, with its own loader and libraries.\n\
         exec '{ld}' --library-path '{libs}' '{bin}' \"$@\"\n",
        ld = libs.join("ld-linux-x86-64.so.2").display(),
        libs = libs.display(),
        bin = final_root.join("usr/bin/stress-ng").display(),
    );
    let staged_launcher = staging.join("stress-ng");
    std::fs::write(&staged_launcher, script).map_err(io("writing the stress-ng launcher"))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&staged_launcher, std::fs::Permissions::from_mode(0o755))
        .map_err(io("making the launcher executable"))?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).map_err(io("moving the tools into place"))?;
    let ok = Command::new(&launcher)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return Err(KernelError::Tool(format!(
            "{} --version",
            launcher.display()
        )));
    }
    Ok(launcher)
}

/// scx_loader's command-line client, pinned: gearshiftd's `org.scx.Loader` is tested with it.
pub const SCXCTL_VERSION: &str = "1.1.3";

/// scxctl from crates.io, built into the cache on first use (a few minutes, once).
pub fn scxctl(cache: &Cache) -> Result<PathBuf, KernelError> {
    let name = format!("scxctl-{SCXCTL_VERSION}");
    let root = cache.root().join("tools").join(&name);
    let bin = root.join("bin/scxctl");
    if bin.is_file() {
        return Ok(bin);
    }
    eprintln!("tools: building scxctl {SCXCTL_VERSION} from crates.io (a few minutes, once)");
    let build_dir = cache.root().join("tools").join(format!("{name}.build"));
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "install",
            "--locked",
            "--quiet",
            "--version",
            SCXCTL_VERSION,
        ])
        .arg("--root")
        .arg(&root)
        // Its own target dir: the tests that call this run under `cargo test`, which holds
        // the lock of the workspace's.
        .arg("--target-dir")
        .arg(&build_dir)
        .arg("scxctl")
        .env_remove("CARGO_TARGET_DIR")
        // From the checkout, so that rust-toolchain.toml picks the project's toolchain.
        .current_dir(crate::bus::repo_root())
        .status()
        .map_err(|source| KernelError::Io {
            what: "running cargo install scxctl".into(),
            source,
        })?;
    // The build tree is large and never reused.
    let _ = std::fs::remove_dir_all(&build_dir);
    if !status.success() || !bin.is_file() {
        return Err(KernelError::Tool(format!(
            "cargo install --version {SCXCTL_VERSION} scxctl"
        )));
    }
    Ok(bin)
}
