//! What the kernel says about sched_ext, under `/sys/kernel/sched_ext`.

use std::path::{Path, PathBuf};

/// The ops name the scheduler's BPF part registers (`.name` in main.bpf.c).
pub const OPS_NAME: &str = "gearshift";

#[derive(Debug, Clone)]
pub struct SchedExt {
    dir: PathBuf,
}

impl SchedExt {
    /// `sysfs_root` is `/sys` except in tests.
    pub fn new(sysfs_root: &Path) -> Self {
        Self {
            dir: sysfs_root.join("kernel/sched_ext"),
        }
    }

    pub fn supported(&self) -> bool {
        self.dir.is_dir()
    }

    /// Why there is no sched_ext, for people.
    pub fn unsupported_reason(&self) -> String {
        let release = nix::sys::utsname::uname()
            .map(|u| u.release().to_string_lossy().into_owned())
            .unwrap_or_else(|_| "this kernel".into());
        format!(
            "The running kernel ({release}) has no sched_ext ({} is missing). Gearshift needs \
             Linux 6.12 or later built with CONFIG_SCHED_CLASS_EXT=y.",
            self.dir.display()
        )
    }

    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name))
            .ok()
            .map(|s| s.trim().to_owned())
    }

    /// True when the kernel reports a scheduler named `gearshift` enabled.
    pub fn gearshift_enabled(&self) -> bool {
        self.read("state").as_deref() == Some("enabled")
            && self
                .read("root/ops")
                .is_some_and(|ops| ops.split('_').next() == Some(OPS_NAME))
    }

    /// The kernel's state string ("enabled", "disabled", ...), for messages.
    pub fn state(&self) -> String {
        self.read("state").unwrap_or_else(|| "unknown".into())
    }
}
