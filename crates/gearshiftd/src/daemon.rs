//! The daemon's state and its operations: supervising the scheduler and changing its
//! settings. The D-Bus interface (iface.rs) is a thin layer over this; what clients should
//! hear of goes out as notices (notices.rs).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gearshift_dbus::{Error, ProfileInfo, SchedulerState};
use gearshift_types::{Settings, Stats};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use zbus::Connection;

use crate::child::{ChildEvent, ChildSpec, EventSink, RunningChild};
use crate::choices::battery::BatteryLevel;
use crate::choices::initial_model;
use crate::config::Config;
use crate::control::Control;
use crate::known_good::{FellBack, KnownGood, Target};
use crate::model::{Changed, Model};
use crate::notices::{Notice, Notices};
use crate::persist::{SavedProfile, SavedState, StateFile};
use crate::restart::{Decision, RestartPolicy};
use crate::rules::Rules;
use crate::stats::StatsHub;
use crate::sysfs::SchedExt;

/// Where the daemon keeps things.
#[derive(Debug, Clone)]
pub struct Paths {
    pub state_dir: PathBuf,
    pub runtime_dir: PathBuf,
    pub sysfs_root: PathBuf,
}

/// The scheduler process and its restart bookkeeping; one operation at a time holds it.
pub(crate) struct Supervision {
    pub(crate) rules: Rules,
    /// What UPower and power-profiles-daemon said last (None: not heard from yet).
    pub(crate) on_battery: Option<bool>,
    pub(crate) power_profile: Option<String>,
    pub(crate) battery_level: BatteryLevel,
    child: Option<RunningChild>,
    pub(crate) policy: RestartPolicy,
    pending_restart: Option<(u64, JoinHandle<()>)>,
    next_generation: u64,
    pub(crate) known_good: KnownGood,
    /// The fallback in effect, if the effective profile is one (its words stay the state
    /// reason while it runs, until the profile changes or someone stops or starts).
    pub(crate) fell_back: Option<FellBack>,
}

impl Supervision {
    /// A scheduler process is running (changes must reach it).
    pub(crate) fn has_child(&self) -> bool {
        self.child.is_some()
    }

    /// The scheduler process has not ended.
    pub(crate) fn child_alive(&self) -> bool {
        self.child
            .as_ref()
            .is_some_and(|c| c.exit_reason().is_none())
    }
}

pub(crate) enum Event {
    Child {
        generation: u64,
        event: ChildEvent,
    },
    RestartDue {
        token: u64,
    },
    /// A clean run may have lasted long enough to be the last known good one.
    CleanRunDue,
}

pub struct Daemon {
    pub config: Config,
    sched_ext: SchedExt,
    spec: ChildSpec,
    pub(crate) control: Control,
    state_file: StateFile,
    model: Mutex<Model>,
    pub(crate) supervision: tokio::sync::Mutex<Supervision>,
    pub(crate) notices: Notices,
    pub(crate) events: mpsc::UnboundedSender<Event>,
    pub stats_hub: StatsHub,
}

impl Daemon {
    /// Builds the daemon from its config and saved state, and starts its event loop.
    pub fn new(config: Config, paths: &Paths) -> Arc<Self> {
        let sched_ext = SchedExt::new(&paths.sysfs_root);
        let state_file = StateFile::in_dir(&paths.state_dir);
        let (model, rules, known_good) = initial_model(&config, state_file.load(), &sched_ext);
        let control_socket = paths.runtime_dir.join("control.sock");
        let (events, rx) = mpsc::unbounded_channel();
        let daemon = Arc::new(Self {
            spec: ChildSpec {
                path: config.scheduler.path.clone(),
                extra_args: config.scheduler.args.clone(),
                control_socket: control_socket.clone(),
            },
            control: Control::new(control_socket),
            sched_ext,
            state_file,
            model: Mutex::new(model),
            supervision: tokio::sync::Mutex::new(Supervision {
                rules,
                on_battery: None,
                power_profile: None,
                battery_level: BatteryLevel::new(&config),
                child: None,
                policy: RestartPolicy::new(config.restart.clone()),
                pending_restart: None,
                next_generation: 1,
                known_good: KnownGood::new(config.restart.known_good_after_s, known_good),
                fell_back: None,
            }),
            notices: Notices::default(),
            events,
            stats_hub: StatsHub::new(&config.stats),
            config,
        });
        tokio::spawn(Arc::clone(&daemon).event_loop(rx));
        daemon
    }

    /// What the daemon tells its clients from now on, for the D-Bus layer to relay; None if
    /// someone listens already.
    pub fn listen(&self) -> Option<mpsc::UnboundedReceiver<crate::notices::Delivery>> {
        self.notices.listen()
    }

    fn lock_model(&self) -> MutexGuard<'_, Model> {
        // A panic while holding the lock cannot leave the model half-written (plain fields),
        // so a poisoned lock is still usable.
        self.model.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn model(&self) -> Model {
        self.lock_model().clone()
    }

    pub fn sched_ext_supported(&self) -> bool {
        self.sched_ext.supported()
    }

    /// The kernel reports our scheduler enabled right now.
    pub(crate) fn kernel_enabled(&self) -> bool {
        self.sched_ext.gearshift_enabled()
    }

    pub fn profiles(&self) -> Vec<ProfileInfo> {
        self.config.profiles.iter().map(|p| p.info()).collect()
    }

    /// Changes the model, then tells the clients (and the service manager) what changed.
    pub(crate) async fn update(&self, f: impl FnOnce(&mut Model)) {
        let (before, after) = {
            let mut model = self.lock_model();
            let before = model.clone();
            f(&mut model);
            (before, model.clone())
        };
        let changed = Changed::between(&before, &after);
        if changed.state || changed.reason || changed.profile {
            notify_status(&after);
        }
        self.notices.emit(Notice::PropertiesChanged(changed)).await;
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

    // ---- supervision ----

    /// Starts the scheduler unless it runs; returns once the kernel reports it enabled.
    pub async fn start(self: &Arc<Self>) -> Result<(), Error> {
        self.ensure_supported()?;
        let mut sup = self.supervision.lock().await;
        if sup.child.is_some() {
            return Ok(());
        }
        cancel_pending_restart(&mut sup);
        sup.policy.reset();
        sup.fell_back = None;
        self.start_attempt(&mut sup).await.map_err(Error::Failed)
    }

    /// Stops the scheduler (and any pending restart); the kernel's default scheduler takes over.
    pub async fn stop(&self) -> Result<(), Error> {
        self.ensure_supported()?;
        let mut sup = self.supervision.lock().await;
        self.stop_locked(&mut sup).await;
        Ok(())
    }

    pub async fn restart(self: &Arc<Self>) -> Result<(), Error> {
        self.ensure_supported()?;
        let mut sup = self.supervision.lock().await;
        self.stop_locked(&mut sup).await;
        self.start_attempt(&mut sup).await.map_err(Error::Failed)
    }

    /// Stops everything before the daemon exits.
    pub async fn shutdown(&self) {
        let mut sup = self.supervision.lock().await;
        if sup.child.is_some() || sup.pending_restart.is_some() {
            self.stop_locked(&mut sup).await;
        }
    }

    fn ensure_supported(&self) -> Result<(), Error> {
        if self.sched_ext.supported() {
            Ok(())
        } else {
            Err(Error::Unsupported(self.sched_ext.unsupported_reason()))
        }
    }

    async fn stop_locked(&self, sup: &mut Supervision) {
        cancel_pending_restart(sup);
        sup.policy.reset();
        sup.known_good.run_ended();
        sup.fell_back = None;
        self.end_child(sup).await;
        self.set_state(SchedulerState::Stopped, "Stopped on request")
            .await;
    }

    /// Ends the scheduler process, if any, within the configured grace period.
    async fn end_child(&self, sup: &mut Supervision) {
        if let Some(child) = sup.child.take() {
            let grace = Duration::from_millis(self.config.scheduler.stop_timeout_ms);
            let reason = child.terminate(grace).await;
            tracing::info!("scheduler stopped: {reason}");
        }
    }

    /// One try at starting; a failure goes through the restart policy like a crash.
    async fn start_attempt(self: &Arc<Self>, sup: &mut Supervision) -> Result<(), String> {
        let generation = sup.next_generation;
        sup.next_generation += 1;
        let settings = self.model().settings;
        self.set_state(
            SchedulerState::Starting,
            "Waiting for the kernel to enable the scheduler",
        )
        .await;
        let events = self.events.clone();
        let sink: EventSink = Arc::new(move |generation, event| {
            let _ = events.send(Event::Child { generation, event });
        });
        let spawned = RunningChild::spawn(&self.spec, settings, generation, sink);
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let reason = format!("cannot run {}: {e}", self.spec.path.display());
                self.on_failure(sup, reason.clone()).await;
                return Err(reason);
            }
        };
        match self.wait_ready(&mut child, settings).await {
            Ok(()) => {
                sup.child = Some(child);
                self.set_state(SchedulerState::Running, running_reason(sup, &self.config))
                    .await;
                let model = self.model();
                self.clean_run_started(sup, target_of(&model));
                Ok(())
            }
            Err(why) => {
                let grace = Duration::from_millis(self.config.scheduler.stop_timeout_ms);
                let ended = child.terminate(grace).await;
                let reason = if why.is_empty() {
                    ended
                } else {
                    format!("{why} ({ended})")
                };
                self.on_failure(sup, reason.clone()).await;
                Err(reason)
            }
        }
    }

    /// Waits until the kernel reports the scheduler enabled and it answers on its control
    /// socket with `settings` in effect. Err("") when it exited meanwhile.
    async fn wait_ready(&self, child: &mut RunningChild, settings: Settings) -> Result<(), String> {
        let timeout = Duration::from_millis(self.config.scheduler.start_timeout_ms);
        let deadline = Instant::now() + timeout;
        let mut last_error = String::from("no answer on the control socket");
        while Instant::now() < deadline {
            if child.exit_reason().is_some() {
                return Err(String::new());
            }
            if self.sched_ext.gearshift_enabled() {
                match self.control.settings().await {
                    Ok(s) if s == settings => return Ok(()),
                    Ok(s) => last_error = format!("it runs with {s:?}, not {settings:?}"),
                    Err(e) => last_error = e.to_string(),
                }
            }
            tokio::select! {
                _ = child.wait() => return Err(String::new()),
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
        Err(format!(
            "the kernel did not enable the scheduler within {} ms (sched_ext state: {}; {last_error})",
            timeout.as_millis(),
            self.sched_ext.state()
        ))
    }

    async fn on_failure(self: &Arc<Self>, sup: &mut Supervision, reason: String) {
        sup.known_good.run_ended();
        let decision = sup.policy.on_failure(Instant::now());
        let mut fell_back = None;
        match decision {
            Decision::RestartAfter(delay) => {
                self.schedule_restart(sup, delay);
                let text = format!("Restarting in {:.1} s after: {reason}", delay.as_secs_f64());
                self.set_state(SchedulerState::Starting, text).await;
            }
            Decision::GiveUp => {
                let failing = target_of(&self.model());
                match sup.known_good.fallback_for(&failing) {
                    Some(good) => {
                        fell_back = Some(self.fall_back(sup, failing, good, &reason).await);
                    }
                    None => {
                        let r = &self.config.restart;
                        let text = format!(
                            "Stopped after {} failures within {} s. Last: {reason}",
                            r.max_failures, r.window_s
                        );
                        self.set_state(SchedulerState::Failed, text).await;
                    }
                }
            }
        }
        let will_restart = matches!(decision, Decision::RestartAfter(_)) || fell_back.is_some();
        self.notices
            .emit(Notice::SchedulerExited {
                reason,
                will_restart,
            })
            .await;
        if let Some(f) = fell_back {
            self.notices.emit(Notice::FellBack(f)).await;
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

    async fn on_child_event(self: &Arc<Self>, sup: &mut Supervision, event: ChildEvent) {
        match event {
            ChildEvent::Exited { reason } => {
                sup.child = None;
                tracing::warn!("scheduler exited unexpectedly: {reason}");
                self.on_failure(sup, reason).await;
            }
            // The kernel asked for it (CPU hotplug): no failure, the process re-attaches.
            ChildEvent::Restarting { reason } => {
                tracing::info!("scheduler restarting at the kernel's request: {reason}");
                let text = format!("Restarting at the kernel's request: {reason}");
                self.set_state(SchedulerState::Starting, text).await;
                self.notices
                    .emit(Notice::SchedulerExited {
                        reason,
                        will_restart: true,
                    })
                    .await;
            }
            ChildEvent::Attached => {
                if self.model().state != SchedulerState::Running {
                    // It kept its settings across the restart; changes made meanwhile follow.
                    let want = self.model().settings;
                    if self.control.settings().await.is_ok_and(|have| have != want) {
                        if let Err(e) = self.control.apply(want).await {
                            tracing::warn!("re-applying the settings after a restart: {e}");
                        }
                    }
                    self.set_state(SchedulerState::Running, running_reason(sup, &self.config))
                        .await;
                    // A clean run starts again: a change made while it re-attached ended the
                    // one being timed, and nothing else would start one for the new target.
                    let model = self.model();
                    self.clean_run_started(sup, target_of(&model));
                }
            }
        }
    }

    async fn event_loop(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<Event>) {
        while let Some(event) = rx.recv().await {
            let mut sup = self.supervision.lock().await;
            match event {
                Event::Child { generation, event } => {
                    // Events of processes we stopped, or that failed to start, are handled
                    // where that happened.
                    if sup
                        .child
                        .as_ref()
                        .is_some_and(|c| c.generation == generation)
                    {
                        self.on_child_event(&mut sup, event).await;
                    }
                }
                Event::RestartDue { token } => {
                    if sup
                        .pending_restart
                        .as_ref()
                        .is_some_and(|(t, _)| *t == token)
                    {
                        sup.pending_restart = None;
                        let _ = self.start_attempt(&mut sup).await;
                    }
                }
                Event::CleanRunDue => self.clean_run_due(&mut sup).await,
            }
        }
    }

    /// Follows logind's sleep announcements (sleep.rs) and checks the scheduler on resume.
    pub async fn follow_sleep(self: Arc<Self>, conn: Connection) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            if let Err(e) = crate::sleep::watch(conn, tx).await {
                tracing::warn!("cannot watch logind for sleep and resume: {e}");
            }
        });
        while let Some(sleeping) = rx.recv().await {
            if sleeping {
                tracing::info!("the machine is going to sleep");
            } else {
                self.check_after_resume().await;
            }
        }
    }

    /// After a resume the scheduler should still run, enabled in the kernel and answering. One
    /// that is not is handled as a failure: stopped, reported and restarted by the restart
    /// policy, instead of leaving the machine on the kernel's scheduler with State "running".
    pub async fn check_after_resume(self: &Arc<Self>) {
        let Some(generation) = self.running_generation().await else {
            return;
        };
        // A CPU hotplug around the sleep makes the kernel end the scheduler, which re-attaches
        // on its own and says so (State "starting"), but only once its loop sees the exit:
        // under load, after this check has run. So the kernel gets the start timeout to run
        // it again before a disabled scheduler counts as a failure.
        let deadline =
            Instant::now() + Duration::from_millis(self.config.scheduler.start_timeout_ms);
        while !self.kernel_enabled() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let mut sup = self.supervision.lock().await;
        if self.running_child(&sup) != Some(generation) {
            tracing::info!("resumed from sleep (scheduler {})", self.model().state);
            return;
        }
        let problem = if !self.kernel_enabled() {
            Some(format!(
                "after resume the kernel no longer runs the scheduler (sched_ext state: {})",
                self.sched_ext.state()
            ))
        } else {
            self.control
                .stats()
                .await
                .err()
                .map(|e| format!("after resume the scheduler does not answer: {e}"))
        };
        match problem {
            None => tracing::info!("resumed from sleep: the scheduler runs"),
            Some(reason) => {
                tracing::warn!("resumed from sleep: {reason}");
                self.end_child(&mut sup).await;
                self.on_failure(&mut sup, reason).await;
            }
        }
    }

    /// The generation of the scheduler process if it runs (State "running", alive).
    async fn running_generation(&self) -> Option<u64> {
        let sup = self.supervision.lock().await;
        let generation = self.running_child(&sup);
        if generation.is_none() {
            tracing::info!("resumed from sleep (scheduler {})", self.model().state);
        }
        generation
    }

    fn running_child(&self, sup: &Supervision) -> Option<u64> {
        let running = self.model().state == SchedulerState::Running && sup.child_alive();
        sup.child.as_ref().filter(|_| running).map(|c| c.generation)
    }

    /// A stats snapshot from the running scheduler.
    pub async fn stats(&self) -> Result<Stats, Error> {
        let state = self.model().state;
        if state != SchedulerState::Running {
            return Err(Error::NotRunning(format!(
                "The scheduler is not running (state: {state})."
            )));
        }
        self.control
            .stats()
            .await
            .map_err(|e| Error::Failed(format!("The scheduler did not report its stats: {e}.")))
    }
}

/// The profile in effect, as the known-good bookkeeping names it.
fn target_of(model: &Model) -> Target {
    Target {
        profile: model.profile.clone(),
        settings: model.settings,
    }
}

/// The state reason while running: empty, or the fallback in effect.
fn running_reason(sup: &Supervision, config: &Config) -> String {
    sup.fell_back
        .as_ref()
        .map(|f| f.describe(config.restart.window_s, true))
        .unwrap_or_default()
}

fn cancel_pending_restart(sup: &mut Supervision) {
    if let Some((_, handle)) = sup.pending_restart.take() {
        handle.abort();
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
