//! Scheduling modes. Names are part of the D-Bus and control-socket contracts: lowercase words.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// How the scheduler orders tasks. Switchable live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// User space orders tasks by deadline, favouring interactive ones.
    #[default]
    Interactive,
    /// While the system is underutilized, BPF runs tasks in arrival order without the
    /// user-space round trip; the interactive policy takes over when most CPUs are busy.
    Fifo,
    /// Non-work-conserving: tasks are packed onto as few CPUs as the load needs so the others
    /// stay in deep idle; interactive tasks still run at once.
    LowPower,
}

impl Mode {
    pub const ALL: &'static [Mode] = &[Mode::Interactive, Mode::Fifo, Mode::LowPower];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Interactive => "interactive",
            Mode::Fifo => "fifo",
            Mode::LowPower => "low-power",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown mode {given:?}; known modes: {}", Mode::ALL.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", "))]
pub struct UnknownMode {
    pub given: String,
}

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .iter()
            .copied()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownMode {
                given: s.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_text_and_json() {
        for m in Mode::ALL {
            assert_eq!(m.as_str().parse::<Mode>(), Ok(*m));
            let json = serde_json::to_string(m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.as_str()));
            assert_eq!(serde_json::from_str::<Mode>(&json).unwrap(), *m);
        }
    }

    #[test]
    fn unknown_mode_error_lists_the_known_ones() {
        let err = "turbo".parse::<Mode>().unwrap_err();
        assert_eq!(err.given, "turbo");
        assert!(
            err.to_string().contains("interactive, fifo, low-power"),
            "{err}"
        );
        assert!(serde_json::from_str::<Mode>("\"turbo\"").is_err());
    }
}
