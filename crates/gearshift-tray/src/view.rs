//! What the tray shows, derived from gearshiftd's properties (gearshift-dbus's model): icon
//! names, tooltip and the status line. Pure functions, so the presentation is tested without a
//! bus.

use gearshift_dbus::{DaemonProperties, SchedulerState};

/// Prefix of the tray's icon names (data/icons/hicolor/symbolic/apps/).
pub const ICON_PREFIX: &str = "io.github.gearshift.Gearshift";

/// The whole picture: the daemon (none while gearshiftd is not on the bus) and the outcome
/// of the last request that failed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    pub daemon: Option<DaemonProperties>,
    pub last_error: Option<String>,
}

/// The line the menu and tooltip show while gearshiftd is absent.
pub const DAEMON_ABSENT: &str = "gearshiftd is not running";

impl View {
    /// Icon name: the mode while the scheduler runs, "stopped" otherwise.
    pub fn icon_name(&self) -> String {
        let kind = match &self.daemon {
            Some(d) if d.state == SchedulerState::Running => match d.mode.as_str() {
                "fifo" => "fifo",
                "low-power" => "low-power",
                _ => "interactive",
            },
            _ => "stopped",
        };
        format!("{ICON_PREFIX}-{kind}-symbolic")
    }

    /// The state in words, with the reason when the scheduler is not running; `None` while
    /// it runs.
    pub fn status_line(&self) -> Option<String> {
        let Some(d) = &self.daemon else {
            return Some(DAEMON_ABSENT.to_owned());
        };
        let state = d.state;
        if state == SchedulerState::Running {
            // A fallback runs: the daemon's words name the profile that failed and why.
            return d.fell_back().then(|| {
                if d.state_reason.is_empty() {
                    "Running the last profile that worked".to_owned()
                } else {
                    d.state_reason.clone()
                }
            });
        }
        let words = match state {
            SchedulerState::Stopped => "Scheduler stopped",
            SchedulerState::Starting => "Scheduler starting",
            SchedulerState::Failed => "Scheduler failed",
            SchedulerState::Unsupported => "sched_ext not supported by this kernel",
            SchedulerState::Running => "Scheduler running",
        };
        Some(if d.state_reason.is_empty() {
            words.to_owned()
        } else {
            format!("{words}: {}", d.state_reason)
        })
    }

    /// Whether the item asks for the user's attention: the scheduler failed, or runs a
    /// fallback because the chosen profile kept failing.
    pub fn needs_attention(&self) -> bool {
        self.daemon
            .as_ref()
            .is_some_and(|d| d.state == SchedulerState::Failed || d.fell_back())
    }

    /// Tooltip title and body.
    pub fn tooltip(&self) -> (String, String) {
        let mut lines = Vec::new();
        match &self.daemon {
            None => lines.push(DAEMON_ABSENT.to_owned()),
            Some(d) => {
                lines.push(
                    self.status_line()
                        .unwrap_or_else(|| "Scheduler running".into()),
                );
                lines.push(format!("Profile: {}", d.profile));
                lines.push(format!(
                    "Mode: {}, preemption {}",
                    d.mode,
                    if d.preemption { "on" } else { "off" }
                ));
            }
        }
        if let Some(err) = &self.last_error {
            lines.push(err.clone());
        }
        ("Gearshift".to_owned(), lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use gearshift_dbus::ProfileInfo;
    use gearshift_types::Mode;
    use zbus::zvariant::{OwnedValue, Value};

    fn owned(v: Value<'_>) -> OwnedValue {
        OwnedValue::try_from(v).expect("plain value")
    }

    fn status(state: &str, mode: &str) -> DaemonProperties {
        let profiles: Vec<HashMap<String, OwnedValue>> = [("interactive", Mode::Interactive)]
            .into_iter()
            .map(|(name, mode)| {
                ProfileInfo {
                    name: name.into(),
                    description: "d".into(),
                    mode,
                    preemption: true,
                    foreground_boost: true,
                }
                .to_dict()
            })
            .collect();
        DaemonProperties::from_props(&HashMap::from([
            ("State".to_owned(), owned(Value::from(state))),
            ("StateReason".to_owned(), owned(Value::from(""))),
            ("Profile".to_owned(), owned(Value::from("interactive"))),
            ("Mode".to_owned(), owned(Value::from(mode))),
            ("Preemption".to_owned(), owned(Value::from(true))),
            ("Profiles".to_owned(), owned(Value::from(profiles))),
            // A property the tray does not show is read and left alone.
            ("OnBattery".to_owned(), owned(Value::from(false))),
        ]))
    }

    #[test]
    fn icon_follows_mode_and_state() {
        let mut view = View {
            daemon: Some(status("running", "fifo")),
            last_error: None,
        };
        assert_eq!(
            view.icon_name(),
            "io.github.gearshift.Gearshift-fifo-symbolic"
        );
        view.daemon = Some(status("running", "low-power"));
        assert!(view.icon_name().ends_with("-low-power-symbolic"));
        view.daemon = Some(status("running", "interactive"));
        assert!(view.icon_name().ends_with("-interactive-symbolic"));
        view.daemon = Some(status("failed", "interactive"));
        assert!(view.icon_name().ends_with("-stopped-symbolic"));
        view.daemon = None;
        assert!(view.icon_name().ends_with("-stopped-symbolic"));
    }

    #[test]
    fn status_line_and_tooltip() {
        let mut d = status("failed", "interactive");
        d.apply(&HashMap::from([(
            "StateReason".to_owned(),
            owned(Value::from("crashed 3 times")),
        )]));
        let view = View {
            daemon: Some(d),
            last_error: None,
        };
        assert_eq!(
            view.status_line().as_deref(),
            Some("Scheduler failed: crashed 3 times")
        );
        let (_, body) = view.tooltip();
        assert!(body.contains("Scheduler failed"), "{body}");
        assert!(body.contains("Profile: interactive"), "{body}");
        assert!(body.contains("crashed 3 times"), "{body}");

        let absent = View::default();
        assert_eq!(absent.status_line().as_deref(), Some(DAEMON_ABSENT));
        assert!(absent.tooltip().1.contains(DAEMON_ABSENT));

        let running = View {
            daemon: Some(status("running", "fifo")),
            last_error: None,
        };
        assert_eq!(running.status_line(), None);
    }

    #[test]
    fn a_fallback_is_shown_while_running_and_asks_for_attention() {
        let mut d = status("running", "interactive");
        let plain = View {
            daemon: Some(d.clone()),
            last_error: None,
        };
        assert!(!plain.needs_attention());
        d.apply(&HashMap::from([
            ("ProfileReason".to_owned(), owned(Value::from("fallback"))),
            (
                "StateReason".to_owned(),
                owned(Value::from(
                    "Fell back to profile interactive: profile fifo failed 3 times",
                )),
            ),
        ]));
        let view = View {
            daemon: Some(d.clone()),
            last_error: None,
        };
        assert_eq!(
            view.status_line().as_deref(),
            Some("Fell back to profile interactive: profile fifo failed 3 times")
        );
        assert!(view.tooltip().1.contains("profile fifo failed"));
        assert!(view.needs_attention());
        // The next choice is the user's again: the line and the attention go.
        d.apply(&HashMap::from([
            ("ProfileReason".to_owned(), owned(Value::from("user"))),
            ("StateReason".to_owned(), owned(Value::from(""))),
        ]));
        let view = View {
            daemon: Some(d),
            last_error: None,
        };
        assert_eq!(view.status_line(), None);
        assert!(!view.needs_attention());
        assert!(View {
            daemon: Some(status("failed", "interactive")),
            last_error: None
        }
        .needs_attention());
    }

    #[test]
    fn profiles_parse() {
        let d = status("running", "fifo");
        let profiles = &d.profiles;
        assert_eq!(profiles.len(), 1);
        assert_eq!(profiles[0].name, "interactive");
        assert!(d.preemption);
    }
}
