//! The client side of the contract: an async proxy (the daemon's clients all run an async
//! runtime: tokio in gearshiftctl and the tray, glib in the app). Clients change settings
//! through [`crate::settings`], which says whether polkit may prompt.

use std::collections::HashMap;

use zbus::zvariant::OwnedValue;

use crate::Error;

#[zbus::proxy(
    interface = "io.github.gearshift.Scheduler1",
    default_service = "io.github.gearshift.Scheduler1",
    default_path = "/io/github/gearshift/Scheduler1",
    gen_blocking = false
)]
pub trait Scheduler1 {
    #[zbus(allow_interactive_auth)]
    fn set_profile(&self, profile: &str) -> Result<(), Error>;
    #[zbus(allow_interactive_auth)]
    fn set_mode(&self, mode: &str) -> Result<(), Error>;
    #[zbus(allow_interactive_auth)]
    fn set_preemption(&self, enabled: bool) -> Result<(), Error>;
    #[zbus(allow_interactive_auth)]
    fn start(&self) -> Result<(), Error>;
    #[zbus(allow_interactive_auth)]
    fn stop(&self) -> Result<(), Error>;
    #[zbus(allow_interactive_auth)]
    fn restart(&self) -> Result<(), Error>;
    #[zbus(allow_interactive_auth)]
    fn hold_profile(&self, profile: &str, reason: &str, application_id: &str)
        -> Result<u32, Error>;
    fn release_profile(&self, cookie: u32) -> Result<(), Error>;
    /// No interactive authorization: the Shell extension calls it on every focus change, and a
    /// prompt for that would be worse than no boost.
    fn set_foreground(&self, pid: u32) -> Result<(), Error>;
    fn get_stats(&self) -> Result<HashMap<String, OwnedValue>, Error>;
    fn subscribe_stats(&self, interval_ms: u32) -> Result<u32, Error>;
    fn unsubscribe_stats(&self, cookie: u32) -> Result<(), Error>;
    #[zbus(allow_interactive_auth)]
    fn start_check(&self, options: HashMap<String, OwnedValue>) -> Result<(), Error>;
    #[zbus(allow_interactive_auth)]
    fn cancel_check(&self) -> Result<(), Error>;

    #[zbus(signal)]
    fn stats(&self, stats: HashMap<String, OwnedValue>) -> zbus::Result<()>;
    #[zbus(signal)]
    fn check_progress(&self, fraction: f64, scheduler: String) -> zbus::Result<()>;
    #[zbus(signal)]
    fn check_finished(&self, completed: bool, message: String) -> zbus::Result<()>;
    #[zbus(signal)]
    fn profile_released(&self, cookie: u32) -> zbus::Result<()>;
    #[zbus(signal)]
    fn scheduler_exited(&self, reason: String, will_restart: bool) -> zbus::Result<()>;
    #[zbus(signal)]
    fn fell_back(
        &self,
        failed_profile: String,
        fallback_profile: String,
        failures: u32,
        reason: String,
    ) -> zbus::Result<()>;

    #[zbus(property)]
    fn state(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn state_reason(&self) -> zbus::Result<String>;
    /// Writable too; clients call SetProfile instead (same effect, and its name would clash).
    #[zbus(property)]
    fn profile(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn profile_reason(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn active_holds(&self) -> zbus::Result<Vec<HashMap<String, OwnedValue>>>;
    #[zbus(property)]
    fn on_battery(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn power_profile(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn profiles(&self) -> zbus::Result<Vec<HashMap<String, OwnedValue>>>;
    #[zbus(property)]
    fn mode(&self) -> zbus::Result<String>;
    /// Writable too; clients call SetPreemption instead (same effect, and its name would
    /// clash).
    #[zbus(property)]
    fn preemption(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn auto_power_source(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn set_auto_power_source(&self, value: bool) -> zbus::Result<()>;
    #[zbus(property)]
    fn follow_power_profile(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn set_follow_power_profile(&self, value: bool) -> zbus::Result<()>;
    #[zbus(property)]
    fn foreground_app(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn foreground_boost(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn sched_ext_supported(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn version(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn check_running(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn last_check(&self) -> zbus::Result<HashMap<String, OwnedValue>>;
}
