//! A kernel `config` file (`CONFIG_X=y`, `# CONFIG_X is not set`) and the options sched_ext needs.

use std::collections::HashMap;

use thiserror::Error;

/// Options the scheduler and its BPF programs cannot work without.
pub const REQUIRED: &[&str] = &[
    "CONFIG_SCHED_CLASS_EXT",
    "CONFIG_BPF_SYSCALL",
    "CONFIG_BPF_JIT",
    "CONFIG_DEBUG_INFO_BTF",
];

#[derive(Debug, Error, PartialEq, Eq)]
#[error("kernel config lacks {}: sched_ext schedulers cannot run on this kernel", .missing.join(", "))]
pub struct MissingOptions {
    pub missing: Vec<String>,
}

#[derive(Debug, Default)]
pub struct KernelConfig {
    options: HashMap<String, String>,
}

impl KernelConfig {
    pub fn parse(text: &str) -> Self {
        let mut options = HashMap::new();
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("# ") {
                if let Some(name) = rest.strip_suffix(" is not set") {
                    options.insert(name.to_owned(), "n".to_owned());
                }
            } else if let Some((name, value)) = line.split_once('=') {
                if name.starts_with("CONFIG_") {
                    options.insert(name.to_owned(), value.trim_matches('"').to_owned());
                }
            }
        }
        Self { options }
    }

    /// The value of `name` (`y`, `m`, a string), `n` when explicitly unset, None when absent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }

    /// Checks every [`REQUIRED`] option is built in.
    pub fn check_sched_ext(&self) -> Result<(), MissingOptions> {
        let missing: Vec<String> = REQUIRED
            .iter()
            .filter(|o| self.get(o) != Some("y"))
            .map(|o| (*o).to_owned())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(MissingOptions { missing })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "#\n# Automatically generated file\n\
CONFIG_BPF_SYSCALL=y\nCONFIG_BPF_JIT=y\nCONFIG_DEBUG_INFO_BTF=y\nCONFIG_SCHED_CLASS_EXT=y\n\
CONFIG_LOCALVERSION=\"\"\nCONFIG_9P_FS=m\n";

    #[test]
    fn accepts_a_sched_ext_kernel() {
        let c = KernelConfig::parse(GOOD);
        assert_eq!(c.check_sched_ext(), Ok(()));
        assert_eq!(c.get("CONFIG_9P_FS"), Some("m"));
        assert_eq!(c.get("CONFIG_LOCALVERSION"), Some(""));
        assert_eq!(c.get("CONFIG_NOPE"), None);
    }

    #[test]
    fn names_what_is_missing() {
        // Debian's 6.12 kernels: sched_ext explicitly off.
        let text = GOOD.replace(
            "CONFIG_SCHED_CLASS_EXT=y",
            "# CONFIG_SCHED_CLASS_EXT is not set",
        );
        let err = KernelConfig::parse(&text).check_sched_ext().unwrap_err();
        assert_eq!(err.missing, vec!["CONFIG_SCHED_CLASS_EXT"]);
        assert!(err.to_string().contains("CONFIG_SCHED_CLASS_EXT"));
        assert_eq!(
            KernelConfig::parse(&text).get("CONFIG_SCHED_CLASS_EXT"),
            Some("n")
        );

        let none = KernelConfig::parse("").check_sched_ext().unwrap_err();
        assert_eq!(none.missing.len(), REQUIRED.len());
    }
}
