//! The user's choices, kept across restarts in `/var/lib/gearshift/state.json`.

use std::io::Write;
use std::path::{Path, PathBuf};

use gearshift_types::Mode;
use serde::{Deserialize, Serialize};

pub const FILE_NAME: &str = "state.json";

/// What is restored at start. A profile name that no longer exists falls back to the
/// default profile; "custom" restores the mode and preemption.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedState {
    pub profile: String,
    pub mode: Mode,
    pub preemption: bool,
    /// Why the saved profile was chosen ("user", "battery", "power-profile", "default").
    #[serde(default = "user")]
    pub profile_reason: String,
    pub auto_power_source: bool,
    pub follow_power_profile: bool,
    /// The last profile that ran cleanly for a while (`[restart] known_good_after_s`), the one
    /// to fall back to; absent in files of older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_good: Option<SavedProfile>,
}

/// A profile and its settings; the settings count for "custom" only (a named profile takes
/// the config's, which may have changed since).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedProfile {
    pub profile: String,
    pub mode: Mode,
    pub preemption: bool,
}

fn user() -> String {
    "user".into()
}

impl SavedState {
    /// Decodes the state file's contents (any bytes: a damaged file is an error, never a panic;
    /// fuzzed by `fuzz/fuzz_targets/state.rs`).
    pub fn from_json(bytes: &[u8]) -> Result<SavedState, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

pub struct StateFile {
    path: PathBuf,
}

impl StateFile {
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            path: dir.join(FILE_NAME),
        }
    }

    /// The saved state; `None` (with a warning when the file is damaged) if there is none.
    pub fn load(&self) -> Option<SavedState> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!("ignoring {}: {e}", self.path.display());
                return None;
            }
        };
        match SavedState::from_json(&text) {
            Ok(state) => Some(state),
            Err(e) => {
                tracing::warn!("ignoring damaged {}: {e}", self.path.display());
                None
            }
        }
    }

    /// Replaces the file atomically: a crash leaves the old or the new state, never half.
    pub fn save(&self, state: &SavedState) -> std::io::Result<()> {
        let mut text = serde_json::to_vec_pretty(state).map_err(std::io::Error::other)?;
        text.push(b'\n');
        write_atomically(&self.path, &text)
    }
}

/// Replaces `path` with `bytes` atomically and durably: a crash leaves the old content or the
/// new, never half.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename is durable once the directory is synced.
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SavedState {
        SavedState {
            profile: "low-power".into(),
            mode: Mode::LowPower,
            preemption: false,
            profile_reason: "user".into(),
            auto_power_source: true,
            follow_power_profile: false,
            known_good: Some(SavedProfile {
                profile: "interactive".into(),
                mode: Mode::Interactive,
                preemption: true,
            }),
        }
    }

    #[test]
    fn files_of_older_daemons_have_no_known_good_profile() {
        let old = br#"{"profile": "fifo", "mode": "fifo", "preemption": true,
            "profile_reason": "user", "auto_power_source": false, "follow_power_profile": false}"#;
        let state = SavedState::from_json(old).expect("an older file still loads");
        assert_eq!(state.known_good, None);
    }

    #[test]
    fn save_then_load() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = StateFile::in_dir(&dir.path().join("sub"));
        assert_eq!(file.load(), None);
        file.save(&sample()).expect("save");
        assert_eq!(file.load(), Some(sample()));
        // No temporary files are left behind.
        let entries = std::fs::read_dir(dir.path().join("sub"))
            .expect("dir")
            .count();
        assert_eq!(entries, 1);
    }

    #[test]
    fn damaged_file_is_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = StateFile::in_dir(dir.path());
        std::fs::write(dir.path().join(FILE_NAME), b"{\"profile\": \"x\", \"mo").expect("write");
        assert_eq!(file.load(), None);
        std::fs::write(dir.path().join(FILE_NAME), b"{\"profile\": 1}").expect("write");
        assert_eq!(file.load(), None);
    }
}
