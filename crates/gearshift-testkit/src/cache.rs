//! Where the harness keeps downloads, extracted kernels, the virtme-ng venv and VM run dirs.
//!
//! The same location rule as `tools/bootstrap.sh`: `$GEARSHIFT_CACHE`, else
//! `$XDG_CACHE_HOME/gearshift`, else `~/.cache/gearshift`.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    pub fn from_env() -> Self {
        let root = if let Some(dir) = std::env::var_os("GEARSHIFT_CACHE") {
            PathBuf::from(dir)
        } else if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME") {
            PathBuf::from(xdg).join("gearshift")
        } else {
            let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
            PathBuf::from(home).join(".cache/gearshift")
        };
        Self { root }
    }

    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Private apt state used to resolve kernels from `suite`.
    pub fn apt_dir(&self, suite: &str) -> PathBuf {
        self.root.join("apt-kernel").join(suite)
    }

    /// Downloaded `.deb` files.
    pub fn debs_dir(&self) -> PathBuf {
        self.root.join("debs")
    }

    /// Extracted kernel trees, one per kernel ABI name (e.g. `7.3.4+deb13-amd64`).
    pub fn kernels_dir(&self) -> PathBuf {
        self.root.join("kernels")
    }

    /// Scratch directories shared read-write with the guest, one per VM run.
    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// The `vng` launcher: `$GEARSHIFT_VNG`, else the bootstrap's venv.
    pub fn vng(&self) -> PathBuf {
        std::env::var_os("GEARSHIFT_VNG")
            .map(PathBuf::from)
            .unwrap_or_else(|| self.root.join("venv/bin/vng"))
    }
}
