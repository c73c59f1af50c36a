//! What the app knows about gearshiftd, built from its property dictionaries, and the words
//! the UI shows for it. No GTK here: the unit tests cover every state's text.

use std::collections::HashMap;

use gearshift_dbus::{ProfileInfo, SchedulerState};
use gettextrs::gettext;
use zbus::zvariant::{OwnedValue, Value};

use crate::client::Props;
use crate::i18n::fill;

/// Built-in profile descriptions (gearshiftd's defaults), so their translations are in the
/// catalog; a description the catalog does not know is shown as the daemon sends it.
const BUILTIN_DESCRIPTIONS: [&str; 4] = [
    gettext_noop("Responsive desktop: interactive tasks go first and may preempt CPU-bound work"),
    gettext_noop(
        "Interactive ordering without preemption: fewer switches for builds and batch jobs",
    ),
    gettext_noop("Packs work onto few cores so the others stay in deep idle; for battery"),
    gettext_noop(
        "Lightest scheduling: arrival order in the kernel while the system is lightly loaded",
    ),
];

/// Marks a string for xgettext without translating it here.
const fn gettext_noop(s: &'static str) -> &'static str {
    s
}

/// An application's hold on a profile (the `ActiveHolds` property).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hold {
    pub cookie: u32,
    pub profile: String,
    pub reason: String,
    pub application_id: String,
}

/// The daemon's properties. The ones newer daemons added are `Option`s: `None` when this
/// daemon does not have them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DaemonState {
    pub state: Option<SchedulerState>,
    pub state_reason: String,
    pub profile: String,
    pub profiles: Vec<ProfileInfo>,
    pub mode: String,
    pub preemption: bool,
    pub auto_power_source: bool,
    pub follow_power_profile: bool,
    pub sched_ext_supported: bool,
    pub version: String,
    pub profile_reason: Option<String>,
    pub active_holds: Option<Vec<Hold>>,
    pub on_battery: Option<bool>,
    pub power_profile: Option<String>,
}

fn text(v: &OwnedValue) -> Option<String> {
    match &**v {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

fn flag(v: &OwnedValue) -> Option<bool> {
    match &**v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

fn dicts(v: &OwnedValue) -> Vec<HashMap<String, OwnedValue>> {
    let Value::Array(items) = &**v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let Value::Dict(dict) = item else { return None };
            let mut out = HashMap::new();
            for (k, v) in dict.iter() {
                let Value::Str(k) = k else { continue };
                let v = match v {
                    Value::Value(inner) => inner.try_to_owned().ok()?,
                    other => other.try_to_owned().ok()?,
                };
                out.insert(k.to_string(), v);
            }
            Some(out)
        })
        .collect()
}

fn hold_from(dict: &HashMap<String, OwnedValue>) -> Option<Hold> {
    let cookie = match &**dict.get("cookie")? {
        Value::U32(c) => *c,
        _ => return None,
    };
    let get = |k: &str| dict.get(k).and_then(text).unwrap_or_default();
    Some(Hold {
        cookie,
        profile: get("profile"),
        reason: get("reason"),
        application_id: get("application_id"),
    })
}

impl DaemonState {
    pub fn from_props(props: &Props) -> Self {
        let mut state = DaemonState::default();
        state.apply(props);
        state
    }

    /// Takes in changed properties; unknown names and wrong types are ignored.
    pub fn apply(&mut self, props: &Props) {
        for (name, v) in props {
            match name.as_str() {
                "State" => self.state = text(v).and_then(|s| s.parse().ok()),
                "StateReason" => self.state_reason = text(v).unwrap_or_default(),
                "Profile" => self.profile = text(v).unwrap_or_default(),
                "Profiles" => {
                    self.profiles = dicts(v).iter().filter_map(ProfileInfo::from_dict).collect()
                }
                "Mode" => self.mode = text(v).unwrap_or_default(),
                "Preemption" => self.preemption = flag(v).unwrap_or_default(),
                "AutoPowerSource" => self.auto_power_source = flag(v).unwrap_or_default(),
                "FollowPowerProfile" => self.follow_power_profile = flag(v).unwrap_or_default(),
                "SchedExtSupported" => self.sched_ext_supported = flag(v).unwrap_or_default(),
                "Version" => self.version = text(v).unwrap_or_default(),
                "ProfileReason" => self.profile_reason = text(v),
                "ActiveHolds" => {
                    self.active_holds = Some(dicts(v).iter().filter_map(hold_from).collect())
                }
                "OnBattery" => self.on_battery = flag(v),
                "PowerProfile" => self.power_profile = text(v),
                _ => {}
            }
        }
    }
}

/// What the status area offers to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Start,
    Stop,
    Retry,
}

impl Action {
    pub fn label(self) -> String {
        match self {
            Action::Start => gettext("Start"),
            Action::Stop => gettext("Stop"),
            Action::Retry => gettext("Retry"),
        }
    }
}

/// The status area's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusView {
    pub icon: &'static str,
    pub title: String,
    pub description: String,
    /// The daemon's own words (untranslated), shown smaller.
    pub details: String,
    pub action: Option<Action>,
    /// A CSS class for the icon: "success", "warning", "error" or "dim-label".
    pub style: &'static str,
}

/// The status of a daemon that is absent (`absent` is why, in words).
pub fn absent_view(absent: &str) -> StatusView {
    StatusView {
        icon: "network-offline-symbolic",
        title: gettext("Gearshift service unavailable"),
        description: fill(
            &gettext("{}\nThe app reconnects as soon as it is back."),
            absent,
        ),
        action: None,
        style: "dim-label",
        details: String::new(),
    }
}

/// The mode's name for people.
pub fn mode_label(mode: &str) -> String {
    match mode {
        "interactive" => gettext("Interactive"),
        "fifo" => gettext("FIFO"),
        "low-power" => gettext("Low power"),
        other => other.to_owned(),
    }
}

/// A profile's name for people ("low-power" → "Low power").
pub fn profile_title(name: &str) -> String {
    match name {
        gearshift_dbus::CUSTOM_PROFILE => return gettext("Custom"),
        // The built-in profiles.
        "interactive" => return gettext("Interactive"),
        "throughput" => return gettext("Throughput"),
        "low-power" => return gettext("Low power"),
        "fifo" => return gettext("FIFO"),
        _ => {}
    }
    let spaced = name.replace('-', " ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => spaced,
    }
}

/// A profile's description, translated when it is one of the built-in ones.
pub fn profile_description(description: &str) -> String {
    if BUILTIN_DESCRIPTIONS.contains(&description) {
        gettext(description)
    } else {
        description.to_owned()
    }
}

impl DaemonState {
    pub fn status_view(&self) -> StatusView {
        let details = self.state_reason.trim().to_owned();
        let mut view = match self.state {
            Some(SchedulerState::Running) => StatusView {
                icon: "emblem-ok-symbolic",
                title: gettext("Gearshift is running"),
                description: fill(
                    &gettext("Profile “{}” is active."),
                    &profile_title(&self.profile),
                ),
                action: Some(Action::Stop),
                style: "success",
                details: String::new(),
            },
            Some(SchedulerState::Starting) => StatusView {
                icon: "content-loading-symbolic",
                title: gettext("Gearshift is starting"),
                description: gettext("Waiting for the kernel to enable the scheduler."),
                action: None,
                style: "dim-label",
                details: String::new(),
            },
            Some(SchedulerState::Stopped) | None => StatusView {
                icon: "media-playback-stop-symbolic",
                title: gettext("Gearshift is stopped"),
                description: gettext("The kernel's default scheduler is in charge."),
                action: Some(Action::Start),
                style: "dim-label",
                details: String::new(),
            },
            Some(SchedulerState::Failed) => StatusView {
                icon: "dialog-error-symbolic",
                title: gettext("Gearshift failed"),
                description: gettext(
                    "The scheduler stopped after crashing repeatedly; the kernel's default scheduler is in charge.",
                ),
                action: Some(Action::Retry),
                style: "error",
                details: String::new(),
            },
            Some(SchedulerState::Unsupported) => StatusView {
                icon: "dialog-warning-symbolic",
                title: gettext("Your kernel has no sched_ext"),
                description: gettext(
                    "Gearshift needs a kernel built with CONFIG_SCHED_CLASS_EXT (Linux 6.12 or newer). Boot such a kernel to use it; until then the kernel's default scheduler runs.",
                ),
                action: None,
                style: "warning",
                details: String::new(),
            },
        };
        if self.state != Some(SchedulerState::Running) {
            view.details = details;
        } else if self.fell_back() {
            // The daemon runs a fallback: say so where the state is, with its words on what
            // failed, until the profile changes.
            view.icon = "dialog-warning-symbolic";
            view.style = "warning";
            view.title = gettext("Gearshift is running a fallback profile");
            view.description = fill(
                &gettext("The chosen profile kept failing, so Gearshift went back to “{}”, the last profile that worked. Choose a profile to leave it."),
                &profile_title(&self.profile),
            );
            view.details = details;
        }
        view
    }

    /// The daemon fell back to the last known good profile after the chosen one kept failing.
    pub fn fell_back(&self) -> bool {
        self.profile_reason.as_deref() == Some("fallback")
    }

    /// Why the current profile is in effect, in words; `None` from a daemon that does not say.
    pub fn reason_text(&self) -> Option<String> {
        let reason = self.profile_reason.as_deref()?;
        Some(match reason {
            "user" => gettext("You chose this profile."),
            "hold" => {
                let hold = self
                    .active_holds
                    .as_ref()
                    .and_then(|holds| holds.iter().rev().find(|h| h.profile == self.profile));
                match hold {
                    Some(h) if !h.reason.is_empty() => fill(
                        &fill(&gettext("{} asked for this profile: {}"), &h.application_id),
                        &h.reason,
                    ),
                    Some(h) => fill(&gettext("{} asked for this profile."), &h.application_id),
                    None => gettext("An application asked for this profile."),
                }
            }
            "battery" => gettext("The computer runs on battery."),
            "low-battery" => gettext("The battery is low."),
            "ac" => gettext("The computer runs on AC power."),
            "power-profile" => match self.power_profile.as_deref() {
                Some(p) if !p.is_empty() => fill(&gettext("The power mode is “{}”."), p),
                _ => gettext("It follows the power mode."),
            },
            "default" => gettext("It is the default: no profile was chosen yet."),
            "fallback" => {
                gettext("It is the last profile that worked; the chosen one kept failing.")
            }
            other => other.to_owned(),
        })
    }

    /// What the automatic rules see now: power source and power mode.
    pub fn power_text(&self) -> String {
        let source = match self.on_battery {
            Some(true) => gettext("On battery"),
            Some(false) => gettext("On AC power"),
            None => return String::new(),
        };
        match self.power_profile.as_deref() {
            Some("") | None => fill(&gettext("{}; no power mode service"), &source),
            Some(p) => fill(&fill(&gettext("{}; power mode “{}”"), &source), p),
        }
    }
}

#[cfg(test)]
mod tests;
