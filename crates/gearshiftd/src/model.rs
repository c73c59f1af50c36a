//! What the daemon's properties show, and which of them differ between two moments.

use gearshift_dbus::SchedulerState;
use gearshift_types::Settings;

use crate::known_good::Target;
use crate::rules::{Choice, Hold, Reason};

/// What the properties show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    pub state: SchedulerState,
    pub reason: String,
    pub profile: String,
    pub settings: Settings,
    pub profile_reason: Reason,
    pub auto_power_source: bool,
    pub follow_power_profile: bool,
    /// UPower's last word (false without UPower).
    pub on_battery: bool,
    /// power-profiles-daemon's active profile ("" without it).
    pub power_profile: String,
    pub holds: Vec<Hold>,
    /// The app in front of the user, as the desktop last named it.
    pub foreground: Option<ForegroundApp>,
    /// The profile in effect favours the foreground app (its foreground_boost); kept in step
    /// with `profile` by every model update (state.rs).
    pub foreground_boost: bool,
}

/// The app in front of the user: the cgroup v2 of the process the desktop named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForegroundApp {
    /// The cgroup's id (its inode number in the cgroup file system), what the scheduler takes.
    pub cgroup_id: u64,
    /// The cgroup's last path component, e.g. "app-gnome-org.gnome.Calculator-1234.scope".
    pub name: String,
    /// The bus name of the client that named it; the foreground ends when it leaves the bus.
    pub setter: String,
}

impl Model {
    /// The scheduler is loaded or being (re)loaded (scx_loader calls that "running"; a
    /// responsiveness check puts it back afterwards).
    pub fn scheduler_active(&self) -> bool {
        matches!(
            self.state,
            SchedulerState::Running | SchedulerState::Starting
        )
    }

    /// The cgroup the scheduler should favour now (0: none): the foreground app's, while the
    /// profile in effect has the boost.
    pub fn favoured_cgroup(&self) -> u64 {
        match &self.foreground {
            Some(app) if self.foreground_boost => app.cgroup_id,
            _ => 0,
        }
    }

    /// The foreground app's name, "" for none, as `ForegroundApp` shows it.
    pub fn foreground_name(&self) -> &str {
        self.foreground.as_ref().map_or("", |app| app.name.as_str())
    }

    /// Shows the rules' answer: the effective profile, its settings and reason, and the holds.
    pub fn show_choice(&mut self, effective: Choice, holds: Vec<Hold>) {
        self.settings = effective.settings;
        self.profile = effective.profile;
        self.profile_reason = effective.reason;
        self.holds = holds;
    }

    /// The profile in effect, as the known-good bookkeeping names it.
    pub fn target(&self) -> Target {
        Target {
            profile: self.profile.clone(),
            settings: self.settings,
        }
    }
}

/// Which properties differ between two models.
#[derive(Debug, Default, Clone, Copy)]
pub struct Changed {
    pub state: bool,
    pub reason: bool,
    pub profile: bool,
    pub profile_reason: bool,
    pub holds: bool,
    pub on_battery: bool,
    pub power_profile: bool,
    pub mode: bool,
    pub preemption: bool,
    pub auto_power_source: bool,
    pub follow_power_profile: bool,
    pub foreground_app: bool,
    pub foreground_boost: bool,
    /// CheckRunning and LastCheck (check.rs; not in the model, so `between` never sets it).
    pub check: bool,
}

impl Changed {
    pub fn between(a: &Model, b: &Model) -> Self {
        Self {
            state: a.state != b.state,
            reason: a.reason != b.reason,
            profile: a.profile != b.profile,
            profile_reason: a.profile_reason != b.profile_reason,
            holds: a.holds != b.holds,
            on_battery: a.on_battery != b.on_battery,
            power_profile: a.power_profile != b.power_profile,
            mode: a.settings.mode != b.settings.mode,
            preemption: a.settings.preemption != b.settings.preemption,
            auto_power_source: a.auto_power_source != b.auto_power_source,
            follow_power_profile: a.follow_power_profile != b.follow_power_profile,
            foreground_app: a.foreground_name() != b.foreground_name(),
            foreground_boost: a.foreground_boost != b.foreground_boost,
            check: false,
        }
    }
}
