//! Typed views of the interface's strings and dictionaries.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use gearshift_types::{Mode, Stats};
use zbus::zvariant::{OwnedValue, Value};

/// What `Profile` says when the settings were changed one by one and match no profile.
pub const CUSTOM_PROFILE: &str = "custom";

/// The supervisor's state, as the `State` property spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchedulerState {
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
}

impl ProfileInfo {
    pub fn to_dict(&self) -> HashMap<String, OwnedValue> {
        HashMap::from([
            ("name".to_owned(), owned(Value::from(self.name.as_str()))),
            (
                "description".to_owned(),
                owned(Value::from(self.description.as_str())),
            ),
            ("mode".to_owned(), owned(Value::from(self.mode.as_str()))),
            ("preemption".to_owned(), owned(Value::from(self.preemption))),
        ])
    }

    /// Reads an entry; `None` when a key is missing or has the wrong type.
    pub fn from_dict(dict: &HashMap<String, OwnedValue>) -> Option<Self> {
        let text = |key: &str| -> Option<String> {
            match &**dict.get(key)? {
                Value::Str(s) => Some(s.to_string()),
                _ => None,
            }
        };
        let preemption = match &**dict.get("preemption")? {
            Value::Bool(b) => *b,
            _ => return None,
        };
        Some(Self {
            name: text("name")?,
            description: text("description")?,
            mode: text("mode")?.parse().ok()?,
            preemption,
        })
    }
}

fn owned(v: Value<'_>) -> OwnedValue {
    // Only plain values are built here; they never hold file descriptors, which is the one
    // case try_into can fail.
    OwnedValue::try_from(v).unwrap_or_else(|_| OwnedValue::from(false))
}

/// Stats as `a{sv}`: each field of [`Stats`] under its own name; counters as `t`, flags as
/// `b`, the mode as `s`.
pub fn stats_to_dict(stats: &Stats) -> HashMap<String, OwnedValue> {
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
pub fn stats_from_dict(dict: &HashMap<String, OwnedValue>) -> Stats {
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
        };
        assert_eq!(ProfileInfo::from_dict(&p.to_dict()), Some(p.clone()));
        let mut broken = p.to_dict();
        broken.insert("mode".into(), owned(Value::from("turbo")));
        assert_eq!(ProfileInfo::from_dict(&broken), None);
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
