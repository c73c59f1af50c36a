//! The D-Bus contract of `io.github.gearshift.Scheduler1`, shared by the daemon and its clients.
//!
//! `dbus/io.github.gearshift.Scheduler1.xml` is the contract; this crate holds its names, the
//! typed error, the client proxy, the conversions of its values and dictionaries (both ways:
//! the daemon builds them, clients read them), the clients' model of the daemon
//! ([`DaemonProperties`], kept up to date by [`follow()`]) and the one way each setting
//! changes ([`settings`]).

pub mod check;
#[cfg(feature = "text")]
pub mod check_text;
pub mod error;
pub mod follow;
pub mod model;
pub mod properties;
pub mod proxy;
pub mod settings;
pub mod values;

pub use check::{CheckOptions, CheckReport, CheckResult, Verdict};
pub use error::Error;
pub use follow::{follow, Followed};
pub use model::{
    HoldInfo, ProfileInfo, ProfileReason, SchedulerState, UnknownState, CUSTOM_PROFILE,
};
pub use properties::DaemonProperties;
pub use proxy::Scheduler1Proxy;
pub use settings::Prompt;

/// Well-known bus name of gearshiftd on the system bus.
pub const BUS_NAME: &str = "io.github.gearshift.Scheduler1";
/// Object path of the scheduler object.
pub const OBJECT_PATH: &str = "/io/github/gearshift/Scheduler1";
/// Interface name (versioned: an incompatible change gets a new name).
pub const INTERFACE: &str = "io.github.gearshift.Scheduler1";
/// polkit action for profile, mode and preemption changes (and holds).
pub const ACTION_SWITCH_PROFILE: &str = "io.github.gearshift.switch-profile";
/// polkit action for naming the app in front of the user (SetForeground): the GNOME Shell
/// extension of the active session calls it on every focus change.
pub const ACTION_SET_FOREGROUND: &str = "io.github.gearshift.set-foreground";
/// polkit action for starting/stopping the scheduler and the automatic rules.
pub const ACTION_MANAGE: &str = "io.github.gearshift.manage";

/// The introspection XML that is the contract.
pub const INTROSPECTION_XML: &str =
    include_str!("../../../dbus/io.github.gearshift.Scheduler1.xml");
