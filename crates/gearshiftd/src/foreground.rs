//! The app in front of the user: the desktop names the focused window's process, the core
//! checks it and remembers its cgroup; the scheduler favours it while the profile in effect
//! has foreground_boost (state.rs tells it whenever that changes). Logged at debug level: the
//! desktop names one at every focus change.

use std::sync::Arc;

use gearshift_dbus::Error;

use crate::model::ForegroundApp;
use crate::processes::{ProcessError, Processes};
use crate::state::DaemonState;

pub struct Foreground {
    state: Arc<DaemonState>,
    processes: Processes,
}

impl Foreground {
    pub fn new(state: Arc<DaemonState>, processes: Processes) -> Self {
        Self { state, processes }
    }

    /// Makes process `pid`'s app the foreground for `setter` (a bus name), on behalf of user
    /// `caller_uid`; pid 0 clears it. A process that does not exist, belongs to another user
    /// (root may name any) or has no cgroup v2 is refused and changes nothing.
    pub async fn set(&self, pid: u32, caller_uid: u32, setter: &str) -> Result<(), Error> {
        let app = if pid == 0 {
            None
        } else {
            Some(self.app_of(pid, caller_uid, setter)?)
        };
        match &app {
            Some(app) => tracing::debug!(
                "foreground: {} (cgroup {}, process {pid}, named by {setter})",
                app.name,
                app.cgroup_id
            ),
            None => tracing::debug!("foreground: none (named by {setter})"),
        }
        self.state.update(|m| m.foreground = app).await;
        Ok(())
    }

    fn app_of(&self, pid: u32, caller_uid: u32, setter: &str) -> Result<ForegroundApp, Error> {
        let invalid = |e: ProcessError| Error::InvalidProcess(e.to_string());
        let owner = self.processes.owner(pid).map_err(invalid)?;
        if caller_uid != 0 && owner != caller_uid {
            return Err(Error::InvalidProcess(format!(
                "Process {pid} belongs to another user."
            )));
        }
        let cgroup = self.processes.cgroup(pid).map_err(invalid)?;
        Ok(ForegroundApp {
            cgroup_id: cgroup.id,
            name: cgroup.name,
            setter: setter.to_owned(),
        })
    }

    /// A client left the bus: the foreground it named ends with it, as nobody would update it.
    pub async fn setter_left(&self, name: &str) {
        let named = self
            .state
            .model()
            .foreground
            .is_some_and(|app| app.setter == name);
        if named {
            tracing::info!("foreground: none ({name} left the bus)");
            self.state
                .update(|m| {
                    // Unless someone else named one meanwhile.
                    if m.foreground.as_ref().is_some_and(|app| app.setter == name) {
                        m.foreground = None;
                    }
                })
                .await;
        }
    }
}
