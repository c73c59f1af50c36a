//! Typed views of the interface's strings and dictionaries.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use gearshift_types::{Mode, Stats};
use zbus::zvariant::{OwnedValue, Value};

use crate::values::{flag, owned, text, unsigned, Dict};

/// What `Profile` says when the settings were changed one by one and match no profile.
pub const CUSTOM_PROFILE: &str = "custom";

/// The supervisor's state, as the `State` property spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SchedulerState {
    #[default]
    Stopped,
    Starting,
    Running,
    Failed,
    Unsupported,
}

impl SchedulerState {
    pub const ALL: [SchedulerState; 5] = [
        SchedulerState::Stopped,
        SchedulerState::Starting,
        SchedulerState::Running,
        SchedulerState::Failed,
        SchedulerState::Unsupported,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SchedulerState::Stopped => "stopped",
            SchedulerState::Starting => "starting",
            SchedulerState::Running => "running",
            SchedulerState::Failed => "failed",
            SchedulerState::Unsupported => "unsupported",
        }
    }
}

impl fmt::Display for SchedulerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheduler state {0:?}")]
pub struct UnknownState(pub String);

impl FromStr for SchedulerState {
    type Err = UnknownState;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| UnknownState(s.to_owned()))
    }
}

/// One entry of the `Profiles` property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileInfo {
    pub name: String,
    pub description: String,
    pub mode: Mode,
    pub preemption: bool,
    /// The profile favours the app in front of the user (see the `ForegroundApp` property).
    pub foreground_boost: bool,
}

impl ProfileInfo {
    pub fn to_dict(&self) -> Dict {
        HashMap::from([
            ("name".to_owned(), owned(Value::from(self.name.as_str()))),
            (
                "description".to_owned(),
                owned(Value::from(self.description.as_str())),
            ),
            ("mode".to_owned(), owned(Value::from(self.mode.as_str()))),
            ("preemption".to_owned(), owned(Value::from(self.preemption))),
            (
                "foreground_boost".to_owned(),
                owned(Value::from(self.foreground_boost)),
            ),
        ])
    }

    /// Reads an entry; `None` when a key is missing or has the wrong type.
    pub fn from_dict(dict: &Dict) -> Option<Self> {
        let text_of = |key: &str| text(dict.get(key)?);
        Some(Self {
            name: text_of("name")?,
            description: text_of("description")?,
            mode: text_of("mode")?.parse().ok()?,
            preemption: flag(dict.get("preemption")?)?,
            // Daemons older than the key favour no app.
            foreground_boost: dict
                .get("foreground_boost")
                .and_then(|v| flag(v))
                .unwrap_or(false),
        })
    }
}

/// An application's hold on a profile: one entry of the `ActiveHolds` property.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HoldInfo {
    pub cookie: u32,
    pub profile: String,
    pub reason: String,
    pub application_id: String,
}

impl HoldInfo {
    /// The entry as the daemon publishes it.
    pub fn to_dict(&self) -> Dict {
        HashMap::from([
            ("cookie".to_owned(), OwnedValue::from(self.cookie)),
            (
                "profile".to_owned(),
                owned(Value::from(self.profile.as_str())),
            ),
            (
                "reason".to_owned(),
                owned(Value::from(self.reason.as_str())),
            ),
            (
                "application_id".to_owned(),
                owned(Value::from(self.application_id.as_str())),
            ),
        ])
    }

    /// Reads an entry; `None` without a cookie, empty words for missing ones.
    pub fn from_dict(dict: &Dict) -> Option<Self> {
        let text_of = |key: &str| dict.get(key).and_then(|v| text(v)).unwrap_or_default();
        Some(Self {
            cookie: unsigned(dict.get("cookie")?)?,
            profile: text_of("profile"),
            reason: text_of("reason"),
            application_id: text_of("application_id"),
        })
    }
}

/// Why the profile is in effect: the `ProfileReason` property. A reason this version does
/// not know is kept as the daemon spells it, so clients can show it that way.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProfileReason {
    /// Nobody chose yet: the configured default.
    Default,
    User,
    Hold,
    Battery,
    LowBattery,
    Ac,
    PowerProfile,
    /// The chosen profile kept failing: the last known good one runs instead.
    Fallback,
    Other(String),
}

impl ProfileReason {
    const KNOWN: [ProfileReason; 8] = [
        ProfileReason::Default,
        ProfileReason::User,
        ProfileReason::Hold,
        ProfileReason::Battery,
        ProfileReason::LowBattery,
        ProfileReason::Ac,
        ProfileReason::PowerProfile,
        ProfileReason::Fallback,
    ];

    pub fn as_str(&self) -> &str {
        match self {
            ProfileReason::Other(other) => other,
            known => known.known_spelling().unwrap_or_default(),
        }
    }

    /// The contract's word for a reason this version knows (`None` for [`ProfileReason::Other`]):
    /// the daemon spells its reasons with it, so each word is written once.
    pub fn known_spelling(&self) -> Option<&'static str> {
        Some(match self {
            ProfileReason::Default => "default",
            ProfileReason::User => "user",
            ProfileReason::Hold => "hold",
            ProfileReason::Battery => "battery",
            ProfileReason::LowBattery => "low-battery",
            ProfileReason::Ac => "ac",
            ProfileReason::PowerProfile => "power-profile",
            ProfileReason::Fallback => "fallback",
            ProfileReason::Other(_) => return None,
        })
    }
}

impl From<&str> for ProfileReason {
    fn from(s: &str) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|reason| reason.as_str() == s)
            .unwrap_or_else(|| ProfileReason::Other(s.to_owned()))
    }
}

impl fmt::Display for ProfileReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Stats as `a{sv}`: each field of [`Stats`] under its own name; counters as `t`, flags as
/// `b`, the mode as `s`.
pub fn stats_to_dict(stats: &Stats) -> Dict {
    let json = serde_json::to_value(stats).unwrap_or_default();
    let Some(fields) = json.as_object() else {
        return HashMap::new();
    };
    fields
        .iter()
        .filter_map(|(key, value)| {
            let value = match value {
                serde_json::Value::Bool(b) => Value::from(*b),
                serde_json::Value::Number(n) => Value::from(n.as_u64()?),
                serde_json::Value::String(s) => Value::from(s.as_str()),
                _ => return None,
            };
            Some((key.clone(), owned(value)))
        })
        .collect()
}

/// The inverse of [`stats_to_dict`]; keys it does not know are ignored, missing ones are 0.
pub fn stats_from_dict(dict: &Dict) -> Stats {
    let mut fields = serde_json::to_value(Stats::default()).unwrap_or_default();
    if let Some(fields) = fields.as_object_mut() {
        for (key, slot) in fields.iter_mut() {
            let Some(value) = dict.get(key) else { continue };
            *slot = match &**value {
                Value::Bool(b) => serde_json::Value::from(*b),
                Value::U64(n) => serde_json::Value::from(*n),
                Value::Str(s) => serde_json::Value::from(s.as_str()),
                _ => continue,
            };
        }
    }
    serde_json::from_value(fields).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_parse_back() {
        for state in SchedulerState::ALL {
            assert_eq!(state.as_str().parse::<SchedulerState>(), Ok(state));
        }
        assert!("runing".parse::<SchedulerState>().is_err());
    }

    #[test]
    fn profile_dict_round_trip() {
        let p = ProfileInfo {
            name: "low-power".into(),
            description: "Pack work on few cores".into(),
            mode: Mode::LowPower,
            preemption: false,
            foreground_boost: true,
        };
        assert_eq!(ProfileInfo::from_dict(&p.to_dict()), Some(p.clone()));
        let mut older = p.to_dict();
        older.remove("foreground_boost");
        let read = ProfileInfo::from_dict(&older).expect("an older daemon's entry reads");
        assert!(!read.foreground_boost);
        let mut broken = p.to_dict();
        broken.insert("mode".into(), owned(Value::from("turbo")));
        assert_eq!(ProfileInfo::from_dict(&broken), None);
    }

    #[test]
    fn hold_dict_round_trip() {
        let hold = HoldInfo {
            cookie: 7,
            profile: "fifo".into(),
            reason: "video call".into(),
            application_id: "org.example.Call".into(),
        };
        let dict = hold.to_dict();
        assert!(matches!(&*dict["cookie"], Value::U32(7)));
        assert_eq!(HoldInfo::from_dict(&dict), Some(hold));
        let mut no_cookie = dict.clone();
        no_cookie.remove("cookie");
        assert_eq!(HoldInfo::from_dict(&no_cookie), None);
        let mut wrong_cookie = dict;
        wrong_cookie.insert("cookie".into(), owned(Value::from("7")));
        assert_eq!(HoldInfo::from_dict(&wrong_cookie), None);
    }

    #[test]
    fn profile_reasons_keep_unknown_spellings() {
        for reason in ProfileReason::KNOWN {
            assert_eq!(ProfileReason::from(reason.as_str()), reason);
        }
        let new = ProfileReason::from("moon-phase");
        assert_eq!(new, ProfileReason::Other("moon-phase".into()));
        assert_eq!(new.to_string(), "moon-phase");
    }

    #[test]
    fn stats_dict_round_trip() {
        let stats = Stats {
            mode: Mode::Fifo,
            preemption: true,
            nr_queued: 42,
            nr_user_dispatches: 7,
            page_faults: 1,
            ..Stats::default()
        };
        let dict = stats_to_dict(&stats);
        assert!(matches!(&*dict["nr_queued"], Value::U64(42)));
        assert!(matches!(&*dict["mode"], Value::Str(s) if s.as_str() == "fifo"));
        assert_eq!(stats_from_dict(&dict), stats);
    }
}
