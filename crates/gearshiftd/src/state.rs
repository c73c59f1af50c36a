//! What every part of the daemon's core shares: the config, the model the properties show,
//! the supervision state, and the outlets they all use (the kernel's sysfs, the scheduler's
//! control socket, the saved state, the event queue and the notices).

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use gearshift_dbus::SchedulerState;
use tokio::sync::mpsc;

use crate::config::Config;
use crate::control::Control;
use crate::model::{Changed, Model};
use crate::notices::{Notice, Notices};
use crate::persist::{SavedProfile, SavedState, StateFile};
use crate::supervision::{Event, Supervision};
use crate::sysfs::SchedExt;

/// Locks `m` even if a panic poisoned it: the core's mutexes guard plain values (a model, a
/// table, a few flags), which a panic elsewhere cannot leave half-written.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct DaemonState {
    pub config: Config,
    sched_ext: SchedExt,
    pub(crate) control: Control,
    state_file: StateFile,
    model: Mutex<Model>,
    /// Serializes telling the scheduler the favoured cgroup, so the last word sent is the
    /// model's latest (see `update`).
    favoured: tokio::sync::Mutex<()>,
    pub(crate) supervision: tokio::sync::Mutex<Supervision>,
    /// The event loop's queue (daemon.rs).
    pub(crate) events: mpsc::UnboundedSender<Event>,
    pub(crate) notices: Notices,
}

/// Where the daemon's state comes from at start.
pub(crate) struct Beginning {
    pub config: Config,
    pub sched_ext: SchedExt,
    pub control: Control,
    pub state_file: StateFile,
    pub model: Model,
    pub supervision: Supervision,
}

impl DaemonState {
    pub(crate) fn new(start: Beginning, events: mpsc::UnboundedSender<Event>) -> Self {
        Self {
            config: start.config,
            sched_ext: start.sched_ext,
            control: start.control,
            state_file: start.state_file,
            model: Mutex::new(start.model),
            favoured: tokio::sync::Mutex::new(()),
            supervision: tokio::sync::Mutex::new(start.supervision),
            events,
            notices: Notices::default(),
        }
    }

    fn lock_model(&self) -> MutexGuard<'_, Model> {
        lock(&self.model)
    }

    pub fn model(&self) -> Model {
        self.lock_model().clone()
    }

    pub(crate) fn sched_ext(&self) -> &SchedExt {
        &self.sched_ext
    }

    /// The kernel reports our scheduler enabled right now.
    pub(crate) fn kernel_enabled(&self) -> bool {
        self.sched_ext.gearshift_enabled()
    }

    /// Changes the model, then tells the scheduler which cgroup to favour if that changed or
    /// it just began running, and the clients (and the service manager) what changed.
    pub(crate) async fn update(&self, f: impl FnOnce(&mut Model)) {
        let (before, after) = {
            let mut model = self.lock_model();
            let before = model.clone();
            f(&mut model);
            // Every change of the profile in effect turns the boost on or off with it.
            model.foreground_boost = self.config.foreground_boost(&model.profile);
            (before, model.clone())
        };
        let began_running =
            after.state == SchedulerState::Running && before.state != SchedulerState::Running;
        if began_running || before.favoured_cgroup() != after.favoured_cgroup() {
            self.send_favoured().await;
        }
        let changed = Changed::between(&before, &after);
        if changed.state || changed.reason || changed.profile {
            notify_status(&after);
        }
        self.notices.emit(Notice::PropertiesChanged(changed)).await;
    }

    /// Tells the running scheduler the cgroup to favour. Sent again at every start and
    /// re-attach, so a failure is only logged: the foreground is a hint, and the desktop that
    /// named it could do nothing about the scheduler not taking it.
    async fn send_favoured(&self) {
        let _one_at_a_time = self.favoured.lock().await;
        // Read under the lock: of two updates racing, the later send carries the newer value.
        let model = self.model();
        if model.state != SchedulerState::Running {
            return; // sent when it runs
        }
        let cgroup_id = model.favoured_cgroup();
        match self.control.set_foreground(cgroup_id).await {
            Ok(_) => tracing::debug!("scheduler favours cgroup {cgroup_id}"),
            Err(e) => tracing::warn!("cannot tell the scheduler the foreground cgroup: {e}"),
        }
    }

    pub(crate) async fn set_state(&self, state: SchedulerState, reason: impl Into<String>) {
        let reason = reason.into();
        match state {
            SchedulerState::Failed => tracing::error!("scheduler {state}: {reason}"),
            _ => tracing::info!(
                "scheduler {state}{}{reason}",
                if reason.is_empty() { "" } else { ": " }
            ),
        }
        self.update(|m| {
            m.state = state;
            m.reason = reason;
        })
        .await;
    }

    /// Saves the base choice (holds end with their holders), the rule switches and the last
    /// known good profile.
    pub(crate) fn save(&self, sup: &Supervision) {
        let m = self.model();
        let base = sup.rules.base();
        let saved = SavedState {
            profile: base.profile.clone(),
            mode: base.settings.mode,
            preemption: base.settings.preemption,
            profile_reason: base.reason.as_str().to_owned(),
            auto_power_source: m.auto_power_source,
            follow_power_profile: m.follow_power_profile,
            known_good: sup.known_good.known().map(|k| SavedProfile {
                profile: k.profile.clone(),
                mode: k.settings.mode,
                preemption: k.settings.preemption,
            }),
        };
        if let Err(e) = self.state_file.save(&saved) {
            tracing::error!("cannot save the state: {e}");
        }
    }

    /// Starts the scheduler again after `delay` (a newer start or a stop cancels it).
    pub(crate) fn schedule_restart(&self, sup: &mut Supervision, delay: Duration) {
        let token = sup.next_generation;
        sup.next_generation += 1;
        let events = self.events.clone();
        let handle = tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = events.send(Event::RestartDue { token });
        });
        sup.pending_restart = Some((token, handle));
    }

    /// Tells the clients that these holds ended.
    pub(crate) async fn announce_released(&self, cookies: &[u32]) {
        for cookie in cookies {
            self.notices.emit(Notice::ProfileReleased(*cookie)).await;
        }
    }
}

/// `systemctl status` shows this line.
fn notify_status(model: &Model) {
    let mut status = format!("{}, profile {}", model.state, model.profile);
    if !model.reason.is_empty() {
        status.push_str(": ");
        status.push_str(&model.reason);
    }
    let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Status(&status)]);
}
