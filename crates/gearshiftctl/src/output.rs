//! What each command prints: a view that serializes to one JSON object for scripts and reads as
//! a few lines of text for people.

use std::io::{self, Write};

use gearshift_dbus::{DaemonProperties, ProfileReason};
use gearshift_i18n::{fill_named, gettext};
use gearshift_types::Mode;
use serde::{Serialize, Serializer};

use crate::stats_text;
use crate::text::{aligned, on_off};

/// A command's result: JSON through serde, text through `human`.
pub trait View: Serialize {
    fn human(&self) -> String;
}

/// Prints a view as one JSON line or as text.
pub fn emit(view: &impl View, json: bool) -> io::Result<()> {
    let mut line = if json {
        serde_json::to_string(view).map_err(io::Error::other)?
    } else {
        view.human()
    };
    line.push('\n');
    let mut out = io::stdout().lock();
    out.write_all(line.as_bytes())?;
    out.flush()
}

/// "on"/"off" alone, as `preempt` takes them: the value a script or a person types back.
fn on_off_value(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// `status`: the daemon's properties.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusView {
    pub daemon: DaemonProperties,
}

/// The JSON object of `status`: one key per property, in the contract's spelling.
#[derive(Serialize)]
struct StatusJson<'a> {
    state: &'a str,
    state_reason: &'a str,
    profile: &'a str,
    /// Why the profile is in effect: default, user, hold, battery, power-profile, fallback.
    profile_reason: &'a str,
    mode: &'a str,
    preemption: bool,
    auto_power_source: bool,
    follow_power_profile: bool,
    sched_ext_supported: bool,
    version: &'a str,
    /// The foreground app's cgroup name, "" for none.
    foreground_app: &'a str,
    /// The profile in effect favours the foreground app.
    foreground_boost: bool,
}

impl Serialize for StatusView {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let d = &self.daemon;
        StatusJson {
            state: d.state.as_str(),
            state_reason: &d.state_reason,
            profile: &d.profile,
            profile_reason: d.profile_reason.as_ref().map_or("", |r| r.as_str()),
            mode: &d.mode,
            preemption: d.preemption,
            auto_power_source: d.auto_power_source,
            follow_power_profile: d.follow_power_profile,
            sched_ext_supported: d.sched_ext_supported,
            version: &d.version,
            foreground_app: &d.foreground_app,
            foreground_boost: d.foreground_boost,
        }
        .serialize(serializer)
    }
}

impl View for StatusView {
    fn human(&self) -> String {
        let d = &self.daemon;
        let mut rows = vec![
            (
                gettext("State:"),
                state_text(d.state.as_str(), &d.state_reason, d.fell_back()),
            ),
            (
                gettext("Profile:"),
                fill_named(
                    &gettext("{profile} ({reason})"),
                    &[
                        ("profile", &d.profile),
                        ("reason", &reason_text(d.profile_reason.as_ref())),
                    ],
                ),
            ),
            (gettext("Mode:"), d.mode.clone()),
            (gettext("Preemption:"), on_off(d.preemption)),
            (
                gettext("Auto rules:"),
                fill_named(
                    &gettext("power source {source}, follow power profile {follow}"),
                    &[
                        ("source", &on_off(d.auto_power_source)),
                        ("follow", &on_off(d.follow_power_profile)),
                    ],
                ),
            ),
        ];
        if let Some((app, favoured)) = d.foreground() {
            let text = if favoured {
                gettext("{app} (favoured by this profile)")
            } else {
                gettext("{app} (not favoured by this profile)")
            };
            rows.push((
                gettext("Foreground app:"),
                fill_named(&text, &[("app", app)]),
            ));
        }
        if !d.sched_ext_supported {
            rows.push(("sched_ext:".into(), gettext("not available in this kernel")));
        }
        rows.push((
            gettext("Version:"),
            fill_named(&gettext("gearshiftd {version}"), &[("version", &d.version)]),
        ));
        aligned(&rows).join("\n")
    }
}

/// Why a profile is in effect, in words (nothing from a daemon that does not say).
fn reason_text(reason: Option<&ProfileReason>) -> String {
    let Some(reason) = reason else {
        return String::new();
    };
    match reason {
        ProfileReason::Default => gettext("the default"),
        ProfileReason::User => gettext("chosen"),
        ProfileReason::Hold => gettext("held by an application"),
        ProfileReason::Battery => gettext("on battery"),
        ProfileReason::LowBattery => gettext("battery low"),
        ProfileReason::Ac => gettext("on AC power"),
        ProfileReason::PowerProfile => gettext("following the power mode"),
        ProfileReason::Fallback => {
            gettext("the last that worked, after the chosen one kept failing")
        }
        ProfileReason::Other(other) => other.clone(),
    }
}

/// A state of the daemon's State property, in words.
fn state_word(state: &str) -> String {
    match state {
        "running" => gettext("running"),
        "starting" => gettext("starting"),
        "stopping" => gettext("stopping"),
        "stopped" => gettext("stopped"),
        "failed" => gettext("failed"),
        "unsupported" => gettext("unsupported"),
        other => other.into(),
    }
}

/// The state, with the reason unless the scheduler runs normally (or the daemon gave none):
/// running on a fallback profile, the reason says which profile failed and why. The reason is
/// the daemon's own sentence (in English: the daemon writes it for the journal too).
fn state_text(state: &str, reason: &str, fell_back: bool) -> String {
    let word = state_word(state);
    if (state == "running" && !fell_back) || reason.trim().is_empty() {
        word
    } else {
        fill_named(
            &gettext("{state}: {reason}"),
            &[("state", &word), ("reason", reason.trim())],
        )
    }
}

/// What a settings command shows in text: the one value asked for, or all after a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Profile,
    Mode,
    Preemption,
    Changed,
}

/// `profile`, `mode`, `preempt`: the settings in effect (after the change, if one was asked).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingsView {
    pub profile: String,
    pub mode: String,
    pub preemption: bool,
    #[serde(skip)]
    pub focus: Focus,
}

impl SettingsView {
    pub fn of(d: &DaemonProperties, focus: Focus) -> Self {
        Self {
            profile: d.profile.clone(),
            mode: d.mode.clone(),
            preemption: d.preemption,
            focus,
        }
    }
}

impl View for SettingsView {
    fn human(&self) -> String {
        match self.focus {
            Focus::Profile => self.profile.clone(),
            Focus::Mode => self.mode.clone(),
            Focus::Preemption => on_off_value(self.preemption).to_owned(),
            Focus::Changed => fill_named(
                &gettext("Profile {profile}: mode {mode}, preemption {preemption}"),
                &[
                    ("profile", &self.profile),
                    ("mode", &self.mode),
                    ("preemption", &on_off(self.preemption)),
                ],
            ),
        }
    }
}

/// `start`, `stop`, `restart`: the state afterwards.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateView {
    pub state: String,
    pub state_reason: String,
}

impl StateView {
    pub fn of(d: &DaemonProperties) -> Self {
        Self {
            state: d.state.as_str().to_owned(),
            state_reason: d.state_reason.clone(),
        }
    }
}

impl View for StateView {
    fn human(&self) -> String {
        fill_named(
            &gettext("Scheduler {state}"),
            &[("state", &state_text(&self.state, &self.state_reason, false))],
        )
    }
}

/// One profile of `list-profiles`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileEntry {
    pub name: String,
    pub description: String,
    pub mode: Mode,
    pub preemption: bool,
    pub active: bool,
}

/// `list-profiles`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfilesView {
    pub active: String,
    pub profiles: Vec<ProfileEntry>,
}

impl View for ProfilesView {
    fn human(&self) -> String {
        let width = self
            .profiles
            .iter()
            .map(|p| p.name.chars().count())
            .max()
            .unwrap_or(0);
        let mut lines: Vec<String> = self
            .profiles
            .iter()
            .map(|p| {
                let mark = if p.active { '*' } else { ' ' };
                let settings = fill_named(
                    &gettext("{mode}, preemption {preemption}"),
                    &[
                        ("mode", p.mode.as_str()),
                        ("preemption", &on_off(p.preemption)),
                    ],
                );
                format!("{mark} {:width$}  {settings:28}  {}", p.name, p.description)
                    .trim_end()
                    .to_owned()
            })
            .collect();
        if !self.profiles.iter().any(|p| p.active) {
            lines.push(fill_named(
                &gettext("(active: {profile})"),
                &[("profile", &self.active)],
            ));
        }
        lines.join("\n")
    }
}

/// `stats`, and each update of `stats --watch`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct StatsView {
    pub stats: gearshift_types::Stats,
    #[serde(skip)]
    pub one_line: bool,
}

impl View for StatsView {
    fn human(&self) -> String {
        if self.one_line {
            stats_text::line(&self.stats)
        } else {
            stats_text::block(&self.stats)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn status(state: &str, reason: &str) -> StatusView {
        StatusView {
            daemon: DaemonProperties {
                state: state.parse().expect("a state"),
                state_reason: reason.into(),
                profile: "default".into(),
                profile_reason: Some(ProfileReason::User),
                mode: "interactive".into(),
                preemption: true,
                auto_power_source: false,
                follow_power_profile: true,
                sched_ext_supported: true,
                version: "0.1.0".into(),
                ..DaemonProperties::default()
            },
        }
    }

    fn json(view: &impl View) -> serde_json::Map<String, Value> {
        let text = serde_json::to_string(view).expect("serializes");
        assert!(!text.contains('\n'));
        match serde_json::from_str(&text).expect("parses") {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn status_json_has_every_key() {
        let map = json(&status("running", ""));
        let keys = [
            "state",
            "state_reason",
            "profile",
            "profile_reason",
            "mode",
            "preemption",
            "auto_power_source",
            "follow_power_profile",
            "sched_ext_supported",
            "version",
            "foreground_app",
            "foreground_boost",
        ];
        assert_eq!(map.len(), keys.len());
        for key in keys {
            assert!(map.contains_key(key), "{key}");
        }
        assert_eq!(map["state"], "running");
        assert_eq!(map["preemption"], true);
        assert_eq!(map["foreground_app"], "");
        assert_eq!(map["foreground_boost"], false);
    }

    #[test]
    fn status_text_names_the_foreground_app_only_when_there_is_one() {
        let mut view = status("running", "");
        assert!(!view.human().contains("Foreground"), "{}", view.human());
        view.daemon.foreground_app = "app-gnome-org.gnome.Calculator-1234.scope".into();
        view.daemon.foreground_boost = true;
        let text = view.human();
        assert!(
            text.contains("Foreground app:  app-gnome-org.gnome.Calculator-1234.scope (favoured by this profile)"),
            "{text}"
        );
        view.daemon.foreground_boost = false;
        assert!(
            view.human().contains("(not favoured by this profile)"),
            "{}",
            view.human()
        );
        let map = json(&view);
        assert_eq!(
            map["foreground_app"],
            "app-gnome-org.gnome.Calculator-1234.scope"
        );
        assert_eq!(map["foreground_boost"], false);
    }

    #[test]
    fn status_text_gives_the_reason_when_not_running() {
        let text = status("failed", "EXIT: runtime error (stall)").human();
        assert!(
            text.starts_with("State:       failed: EXIT: runtime error (stall)\n"),
            "{text}"
        );
        assert!(text.contains("Preemption:  on"));
        assert!(text.contains("power source off, follow power profile on"));
        assert!(text.ends_with("gearshiftd 0.1.0"));
        let text = status("running", "started at boot").human();
        assert!(text.starts_with("State:       running\n"), "{text}");
        // Running on a fallback: the reason says what failed.
        let mut fallback = status("running", "Fell back to profile interactive: …");
        fallback.daemon.profile_reason = Some(ProfileReason::Fallback);
        let text = fallback.human();
        assert!(
            text.starts_with("State:       running: Fell back to profile interactive: …\n"),
            "{text}"
        );
        assert!(text.contains("after the chosen one kept failing"), "{text}");
        let mut unsupported = status("unsupported", "no sched_ext");
        unsupported.daemon.sched_ext_supported = false;
        assert!(unsupported.human().contains("sched_ext:   not available"));
    }

    #[test]
    fn settings_focus_on_what_was_asked() {
        let mut view = SettingsView {
            profile: "custom".into(),
            mode: "fifo".into(),
            preemption: false,
            focus: Focus::Mode,
        };
        assert_eq!(view.human(), "fifo");
        view.focus = Focus::Preemption;
        assert_eq!(view.human(), "off");
        view.focus = Focus::Changed;
        assert_eq!(view.human(), "Profile custom: mode fifo, preemption off");
        let map = json(&view);
        assert_eq!(map.len(), 3);
        assert_eq!(map["profile"], "custom");
        assert_eq!(map["mode"], "fifo");
    }

    #[test]
    fn profiles_mark_the_active_one() {
        let entry = |name: &str, mode, active| ProfileEntry {
            name: name.into(),
            description: format!("{name} things"),
            mode,
            preemption: true,
            active,
        };
        let view = ProfilesView {
            active: "low-power".into(),
            profiles: vec![
                entry("default", Mode::Interactive, false),
                entry("low-power", Mode::LowPower, true),
            ],
        };
        let text = view.human();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("  default  "), "{text}");
        assert!(lines[1].starts_with("* low-power"), "{text}");
        assert!(lines[1].contains("low-power, preemption on"), "{text}");
        let map = json(&view);
        assert_eq!(map["active"], "low-power");
        assert_eq!(map["profiles"][1]["mode"], "low-power");
        assert_eq!(map["profiles"][1]["active"], true);
    }

    #[test]
    fn status_text_says_which_battery_rule_chose_the_profile() {
        for (reason, words) in [
            ("battery", "(on battery)"),
            ("low-battery", "(battery low)"),
            ("ac", "(on AC power)"),
            ("something-new", "(something-new)"),
        ] {
            let mut view = status("running", "");
            view.daemon.profile_reason = Some(ProfileReason::from(reason));
            let text = view.human();
            assert!(text.contains(words), "{reason}: {text}");
        }
    }

    #[test]
    fn stats_json_is_the_stats_object() {
        let view = StatsView {
            stats: gearshift_types::Stats {
                nr_queued: 5,
                ..Default::default()
            },
            one_line: true,
        };
        let map = json(&view);
        assert_eq!(map["nr_queued"], 5);
        assert_eq!(map["mode"], "interactive");
        assert!(map.contains_key("page_faults"));
    }
}
