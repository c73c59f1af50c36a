//! What the app knows about gearshiftd (gearshift-dbus's model of its properties) and the
//! words the UI shows for it. No GTK here: the unit tests cover every state's text.

use gearshift_dbus::{DaemonProperties, ProfileReason, SchedulerState};
use gettextrs::gettext;

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
    /// The app in front of the user and whether the profile favours it; "" for none.
    pub foreground: String,
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
        foreground: String::new(),
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

/// The daemon's model in the UI's words.
pub trait DaemonText {
    /// The status area's contents.
    fn status_view(&self) -> StatusView;
    /// Why the current profile is in effect, in words; `None` from a daemon that does not say.
    fn reason_text(&self) -> Option<String>;
    /// What the automatic rules see now: power source and power mode.
    fn power_text(&self) -> String;
    /// The app in front of the user and whether the profile favours it; "" for none.
    fn foreground_text(&self) -> String;
}

impl DaemonText for DaemonProperties {
    fn status_view(&self) -> StatusView {
        let details = self.state_reason.trim().to_owned();
        let mut view = match self.state {
            SchedulerState::Running => StatusView {
                icon: "emblem-ok-symbolic",
                title: gettext("Gearshift is running"),
                description: fill(
                    &gettext("Profile “{}” is active."),
                    &profile_title(&self.profile),
                ),
                action: Some(Action::Stop),
                style: "success",
                details: String::new(),
                foreground: String::new(),
            },
            SchedulerState::Starting => StatusView {
                icon: "content-loading-symbolic",
                title: gettext("Gearshift is starting"),
                description: gettext("Waiting for the kernel to enable the scheduler."),
                action: None,
                style: "dim-label",
                details: String::new(),
                foreground: String::new(),
            },
            SchedulerState::Stopped => StatusView {
                icon: "media-playback-stop-symbolic",
                title: gettext("Gearshift is stopped"),
                description: gettext("The kernel's default scheduler is in charge."),
                action: Some(Action::Start),
                style: "dim-label",
                details: String::new(),
                foreground: String::new(),
            },
            SchedulerState::Failed => StatusView {
                icon: "dialog-error-symbolic",
                title: gettext("Gearshift failed"),
                description: gettext(
                    "The scheduler stopped after crashing repeatedly; the kernel's default scheduler is in charge.",
                ),
                action: Some(Action::Retry),
                style: "error",
                details: String::new(),
                foreground: String::new(),
            },
            SchedulerState::Unsupported => StatusView {
                icon: "dialog-warning-symbolic",
                title: gettext("Your kernel has no sched_ext"),
                description: gettext(
                    "Gearshift needs a kernel built with CONFIG_SCHED_CLASS_EXT (Linux 6.12 or newer). Boot such a kernel to use it; until then the kernel's default scheduler runs.",
                ),
                action: None,
                style: "warning",
                details: String::new(),
                foreground: String::new(),
            },
        };
        if self.state != SchedulerState::Running {
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
        view.foreground = self.foreground_text();
        view
    }

    fn foreground_text(&self) -> String {
        match self.foreground() {
            None => String::new(),
            Some((app, true)) => fill(
                &gettext("Foreground app: {} (favoured by this profile)"),
                app,
            ),
            Some((app, false)) => fill(
                &gettext("Foreground app: {} (not favoured by this profile)"),
                app,
            ),
        }
    }

    fn reason_text(&self) -> Option<String> {
        Some(match self.profile_reason.as_ref()? {
            ProfileReason::User => gettext("You chose this profile."),
            ProfileReason::Hold => match self.hold_in_effect() {
                Some(h) if !h.reason.is_empty() => fill(
                    &fill(&gettext("{} asked for this profile: {}"), &h.application_id),
                    &h.reason,
                ),
                Some(h) => fill(&gettext("{} asked for this profile."), &h.application_id),
                None => gettext("An application asked for this profile."),
            },
            ProfileReason::Battery => gettext("The computer runs on battery."),
            ProfileReason::LowBattery => gettext("The battery is low."),
            ProfileReason::Ac => gettext("The computer runs on AC power."),
            ProfileReason::PowerProfile => match self.power_profile.as_deref() {
                Some(p) if !p.is_empty() => fill(&gettext("The power mode is “{}”."), p),
                _ => gettext("It follows the power mode."),
            },
            ProfileReason::Default => gettext("It is the default: no profile was chosen yet."),
            ProfileReason::Fallback => {
                gettext("It is the last profile that worked; the chosen one kept failing.")
            }
            ProfileReason::Other(other) => other.clone(),
        })
    }

    fn power_text(&self) -> String {
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
