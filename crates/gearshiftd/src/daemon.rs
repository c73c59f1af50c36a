//! The daemon: the core that decides. It supervises the scheduler (starts, stops, restarts
//! and falls back, below) and owns the parts that change its settings (choices.rs,
//! power_follow.rs) and report on it (stats.rs), over the state they share (state.rs). The
//! D-Bus layer (iface.rs, scx_loader.rs) calls it; what clients should hear of goes out as
//! notices (notices.rs).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gearshift_dbus::{Error, ProfileInfo, SchedulerState};
use gearshift_types::{Settings, Stats};
use tokio::sync::mpsc;

use crate::child::{ChildEvent, ChildSpec, EventSink, RunningChild};
use crate::choices::{initial_model, Choices};
use crate::clean_runs;
use crate::config::Config;
use crate::control::Control;
use crate::foreground::Foreground;
use crate::model::Model;
use crate::notices::{Delivery, Notice};
use crate::persist::StateFile;
use crate::power_follow::PowerFollow;
use crate::processes::Processes;
use crate::restart::Decision;
use crate::state::{Beginning, DaemonState};
use crate::stats::{self, StatsHub};
use crate::supervision::{Event, Supervision};
use crate::sysfs::SchedExt;

/// Where the daemon keeps things.
#[derive(Debug, Clone)]
pub struct Paths {
    pub state_dir: PathBuf,
    pub runtime_dir: PathBuf,
    pub sysfs_root: PathBuf,
    /// Where procfs is mounted (/proc), to check the processes SetForeground names.
    pub procfs_root: PathBuf,
    /// Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup), for their cgroups' ids.
    pub cgroupfs_root: PathBuf,
}

pub struct Daemon {
    state: Arc<DaemonState>,
    spec: ChildSpec,
    choices: Choices,
    foreground: Foreground,
    pub(crate) power: PowerFollow,
    pub stats_hub: StatsHub,
    /// A responsiveness check (check.rs) switches the scheduler: Start, Stop and Restart
    /// from anyone else are refused meanwhile.
    check_active: AtomicBool,
}

impl Daemon {
    /// Builds the daemon from its config and saved state, and starts its event loop.
    pub fn new(config: Config, paths: &Paths) -> Arc<Self> {
        let sched_ext = SchedExt::new(&paths.sysfs_root);
        let state_file = StateFile::in_dir(&paths.state_dir);
        let (model, rules, known_good) = initial_model(&config, state_file.load(), &sched_ext);
        let control_socket = paths.runtime_dir.join("control.sock");
        let spec = ChildSpec {
            path: config.scheduler.path.clone(),
            extra_args: config.scheduler.args.clone(),
            control_socket: control_socket.clone(),
        };
        let (events, rx) = mpsc::unbounded_channel();
        let beginning = Beginning {
            supervision: Supervision::new(&config, rules, known_good),
            config,
            sched_ext,
            control: Control::new(control_socket),
            state_file,
            model,
        };
        let state = Arc::new(DaemonState::new(beginning, events));
        let choices = Choices::new(Arc::clone(&state));
        let daemon = Arc::new(Self {
            spec,
            power: PowerFollow::new(Arc::clone(&state), choices.clone()),
            choices,
            foreground: Foreground::new(
                Arc::clone(&state),
                Processes::new(&paths.procfs_root, &paths.cgroupfs_root),
            ),
            stats_hub: StatsHub::new(&state.config.stats, Arc::downgrade(&state)),
            state,
            check_active: AtomicBool::new(false),
        });
        tokio::spawn(Arc::clone(&daemon).event_loop(rx));
        daemon
    }

    /// What the daemon tells its clients from now on, for the D-Bus layer to relay; None if
    /// someone listens already.
    pub fn listen(&self) -> Option<mpsc::UnboundedReceiver<Delivery>> {
        self.state.notices.listen()
    }

    pub fn config(&self) -> &Config {
        &self.state.config
    }

    pub fn model(&self) -> Model {
        self.state.model()
    }

    pub fn sched_ext_supported(&self) -> bool {
        self.state.sched_ext().supported()
    }

    /// The profile choice, holds included.
    pub(crate) fn choices(&self) -> &Choices {
        &self.choices
    }

    pub fn profiles(&self) -> Vec<ProfileInfo> {
        self.state
            .config
            .profiles
            .iter()
            .map(|p| p.info())
            .collect()
    }

    // ---- settings (choices.rs, power_follow.rs) ----

    pub async fn set_profile(&self, name: &str) -> Result<(), Error> {
        self.choices.set_profile(name).await
    }

    pub async fn set_mode(&self, mode: &str) -> Result<(), Error> {
        self.choices.set_mode(mode).await
    }

    pub async fn set_preemption(&self, preemption: bool) -> Result<(), Error> {
        self.choices.set_preemption(preemption).await
    }

    /// The app in front of the user (foreground.rs).
    pub(crate) fn foreground(&self) -> &Foreground {
        &self.foreground
    }

    pub async fn set_auto_power_source(&self, on: bool) {
        self.power.set_auto_power_source(on).await;
    }

    pub async fn set_follow_power_profile(&self, on: bool) {
        self.power.set_follow_power_profile(on).await;
    }

    // ---- supervision ----

    /// Starts the scheduler unless it runs; returns once the kernel reports it enabled.
    pub async fn start(self: &Arc<Self>) -> Result<(), Error> {
        self.ensure_no_check()?;
        self.start_for_check().await
    }

    /// `start`, for the responsiveness check while it runs.
    pub(crate) async fn start_for_check(self: &Arc<Self>) -> Result<(), Error> {
        self.ensure_supported()?;
        let mut sup = self.state.supervision.lock().await;
        if sup.child.is_some() {
            return Ok(());
        }
        sup.cancel_pending_restart();
        sup.policy.reset();
        sup.fell_back = None;
        self.start_attempt(&mut sup).await.map_err(Error::Failed)
    }

    /// Stops the scheduler (and any pending restart); the kernel's default scheduler takes over.
    pub async fn stop(&self) -> Result<(), Error> {
        self.ensure_no_check()?;
        self.stop_for_check().await
    }

    /// `stop`, for the responsiveness check while it runs.
    pub(crate) async fn stop_for_check(&self) -> Result<(), Error> {
        self.ensure_supported()?;
        let mut sup = self.state.supervision.lock().await;
        self.stop_locked(&mut sup).await;
        Ok(())
    }

    pub async fn restart(self: &Arc<Self>) -> Result<(), Error> {
        self.ensure_no_check()?;
        self.ensure_supported()?;
        let mut sup = self.state.supervision.lock().await;
        self.stop_locked(&mut sup).await;
        self.start_attempt(&mut sup).await.map_err(Error::Failed)
    }

    /// Stops everything before the daemon exits.
    pub async fn shutdown(&self) {
        let mut sup = self.state.supervision.lock().await;
        if sup.child.is_some() || sup.pending_restart.is_some() {
            self.stop_locked(&mut sup).await;
        }
    }

    /// Marks a responsiveness check as running (or ended); false if one ran already.
    pub(crate) fn claim_for_check(&self, active: bool) -> bool {
        self.check_active
            .compare_exchange(!active, active, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    fn ensure_no_check(&self) -> Result<(), Error> {
        if self.check_active.load(Ordering::SeqCst) {
            return Err(Error::Failed(
                "A responsiveness check is running; it puts the scheduler back when it ends \
                 (CancelCheck ends it now)."
                    .into(),
            ));
        }
        Ok(())
    }

    fn ensure_supported(&self) -> Result<(), Error> {
        if self.state.sched_ext().supported() {
            Ok(())
        } else {
            Err(Error::Unsupported(
                self.state.sched_ext().unsupported_reason(),
            ))
        }
    }

    async fn stop_locked(&self, sup: &mut Supervision) {
        sup.cancel_pending_restart();
        sup.policy.reset();
        sup.known_good.run_ended();
        sup.fell_back = None;
        self.end_child(sup).await;
        self.state
            .set_state(SchedulerState::Stopped, "Stopped on request")
            .await;
    }

    /// Ends the scheduler process, if any, within the configured grace period.
    async fn end_child(&self, sup: &mut Supervision) {
        if let Some(child) = sup.child.take() {
            let grace = Duration::from_millis(self.state.config.scheduler.stop_timeout_ms);
            let reason = child.terminate(grace).await;
            tracing::info!("scheduler stopped: {reason}");
        }
    }

    /// One try at starting; a failure goes through the restart policy like a crash.
    async fn start_attempt(self: &Arc<Self>, sup: &mut Supervision) -> Result<(), String> {
        let generation = sup.next_generation;
        sup.next_generation += 1;
        let settings = self.state.model().settings;
        self.state
            .set_state(
                SchedulerState::Starting,
                "Waiting for the kernel to enable the scheduler",
            )
            .await;
        let events = self.state.events.clone();
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
                self.state
                    .set_state(
                        SchedulerState::Running,
                        sup.running_reason(&self.state.config),
                    )
                    .await;
                let model = self.state.model();
                clean_runs::started(&self.state, sup, model.target());
                Ok(())
            }
            Err(why) => {
                let grace = Duration::from_millis(self.state.config.scheduler.stop_timeout_ms);
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
        let timeout = Duration::from_millis(self.state.config.scheduler.start_timeout_ms);
        let deadline = Instant::now() + timeout;
        let mut last_error = String::from("no answer on the control socket");
        while Instant::now() < deadline {
            if child.exit_reason().is_some() {
                return Err(String::new());
            }
            if self.state.sched_ext().gearshift_enabled() {
                match self.state.control.settings().await {
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
            self.state.sched_ext().state()
        ))
    }

    async fn on_failure(self: &Arc<Self>, sup: &mut Supervision, reason: String) {
        sup.known_good.run_ended();
        let decision = sup.policy.on_failure(Instant::now());
        let mut fell_back = None;
        match decision {
            Decision::RestartAfter(delay) => {
                self.state.schedule_restart(sup, delay);
                let text = format!("Restarting in {:.1} s after: {reason}", delay.as_secs_f64());
                self.state.set_state(SchedulerState::Starting, text).await;
            }
            Decision::GiveUp => {
                let failing = self.state.model().target();
                match sup.known_good.fallback_for(&failing) {
                    Some(good) => {
                        fell_back = Some(
                            clean_runs::fall_back(&self.state, sup, failing, good, &reason).await,
                        );
                    }
                    None => {
                        let r = &self.state.config.restart;
                        let text = format!(
                            "Stopped after {} failures within {} s. Last: {reason}",
                            r.max_failures, r.window_s
                        );
                        self.state.set_state(SchedulerState::Failed, text).await;
                    }
                }
            }
        }
        let will_restart = matches!(decision, Decision::RestartAfter(_)) || fell_back.is_some();
        self.state
            .notices
            .emit(Notice::SchedulerExited {
                reason,
                will_restart,
            })
            .await;
        if let Some(f) = fell_back {
            self.state.notices.emit(Notice::FellBack(f)).await;
        }
    }

    async fn on_child_event(self: &Arc<Self>, sup: &mut Supervision, event: ChildEvent) {
        match event {
            ChildEvent::Exited { reason } => {
                sup.child = None;
                tracing::warn!("scheduler exited unexpectedly: {reason}");
                self.on_failure(sup, reason).await;
            }
            // The kernel asked for it (an exit code with the restart bit; a scheduler built
            // without hotplug handling gets one per CPU hotplug): no failure, it re-attaches.
            ChildEvent::Restarting { reason } => {
                tracing::info!("scheduler restarting at the kernel's request: {reason}");
                let text = format!("Restarting at the kernel's request: {reason}");
                self.state.set_state(SchedulerState::Starting, text).await;
                self.state
                    .notices
                    .emit(Notice::SchedulerExited {
                        reason,
                        will_restart: true,
                    })
                    .await;
            }
            ChildEvent::Attached => {
                if self.state.model().state != SchedulerState::Running {
                    // It kept its settings across the restart; changes made meanwhile follow.
                    let want = self.state.model().settings;
                    if self
                        .state
                        .control
                        .settings()
                        .await
                        .is_ok_and(|have| have != want)
                    {
                        if let Err(e) = self.state.control.apply(want).await {
                            tracing::warn!("re-applying the settings after a restart: {e}");
                        }
                    }
                    self.state
                        .set_state(
                            SchedulerState::Running,
                            sup.running_reason(&self.state.config),
                        )
                        .await;
                    // A clean run starts again: a change made while it re-attached ended the
                    // one being timed, and nothing else would start one for the new target.
                    let model = self.state.model();
                    clean_runs::started(&self.state, sup, model.target());
                }
            }
        }
    }

    async fn event_loop(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<Event>) {
        while let Some(event) = rx.recv().await {
            let mut sup = self.state.supervision.lock().await;
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
                Event::CleanRunDue => clean_runs::due(&self.state, &mut sup).await,
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
        // A kernel-requested restart around the sleep (a CPU hotplug, for a scheduler without
        // hotplug handling) ends the scheduler, which re-attaches on its own and says so
        // (State "starting"), but only once its loop sees the exit:
        // under load, after this check has run. So the kernel gets the start timeout to run
        // it again before a disabled scheduler counts as a failure.
        let deadline =
            Instant::now() + Duration::from_millis(self.state.config.scheduler.start_timeout_ms);
        while !self.state.kernel_enabled() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let mut sup = self.state.supervision.lock().await;
        if self.running_child(&sup) != Some(generation) {
            tracing::info!(
                "resumed from sleep (scheduler {})",
                self.state.model().state
            );
            return;
        }
        let problem = if !self.state.kernel_enabled() {
            Some(format!(
                "after resume the kernel no longer runs the scheduler (sched_ext state: {})",
                self.state.sched_ext().state()
            ))
        } else {
            self.state
                .control
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
        let sup = self.state.supervision.lock().await;
        let generation = self.running_child(&sup);
        if generation.is_none() {
            tracing::info!(
                "resumed from sleep (scheduler {})",
                self.state.model().state
            );
        }
        generation
    }

    fn running_child(&self, sup: &Supervision) -> Option<u64> {
        let running = self.state.model().state == SchedulerState::Running && sup.child_alive();
        sup.child.as_ref().filter(|_| running).map(|c| c.generation)
    }

    /// Tells the clients `notice` (for the parts of the core outside this file).
    pub(crate) async fn notify(&self, notice: Notice) {
        self.state.notices.emit(notice).await;
    }

    /// Replaces the state's reason (StateReason) without changing the state.
    pub(crate) async fn explain(&self, reason: &str) {
        self.state.update(|m| m.reason = reason.to_owned()).await;
    }

    /// A stats snapshot from the running scheduler.
    pub async fn stats(&self) -> Result<Stats, Error> {
        stats::snapshot(&self.state).await
    }
}
