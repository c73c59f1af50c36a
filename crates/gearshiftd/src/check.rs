//! The responsiveness check (`StartCheck`): the core measures a frame-like task under a
//! background load (gearshift-probe) first under the kernel's default scheduler, then under
//! each chosen profile, and puts back what it found.
//!
//! It switches through the daemon's own operations: the default scheduler is a stop, a
//! profile is a hold (holds are never saved, so the user's choice stays theirs, and a
//! SetProfile meanwhile takes effect when the check ends). What it found is written to the
//! state directory before the first switch, so a daemon killed mid-check starts the scheduler
//! again if it ran before (`recover_interrupted`). A client that started a check and leaves
//! the bus cancels it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gearshift_dbus::check::DEFAULT_SCHEDULER;
use gearshift_dbus::{CheckOptions, CheckReport, CheckResult, Error};
use gearshift_probe::{ProbePlan, ProbeResult};
use serde::{Deserialize, Serialize};

use crate::daemon::Daemon;
use crate::model::Changed;
use crate::notices::Notice;
use crate::persist::write_atomically;
use crate::state::lock;

/// The application id of the check's holds, as ActiveHolds shows them.
const HOLD_APP_ID: &str = "io.github.gearshift.Check";
/// Time a scheduler gets after a switch before the load starts.
const SETTLE: Duration = Duration::from_secs(1);
/// How often progress is reported while a scheduler is measured.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// What was in effect when a check started; kept on disk while it runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Found {
    scheduler_ran: bool,
}

struct Running {
    owner: String,
    cancel: Arc<AtomicBool>,
}

pub struct Checks {
    daemon: Arc<Daemon>,
    /// The last report, kept across restarts.
    report_file: PathBuf,
    /// What a running check found, for a daemon that restarts in the middle of it.
    found_file: PathBuf,
    running: Mutex<Option<Running>>,
    last: Mutex<Option<CheckReport>>,
}

impl Checks {
    pub fn new(daemon: Arc<Daemon>, state_dir: PathBuf) -> Arc<Self> {
        let report_file = state_dir.join("check.json");
        let last = std::fs::read(&report_file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        Arc::new(Self {
            daemon,
            report_file,
            found_file: state_dir.join("check-in-progress.json"),
            running: Mutex::new(None),
            last: Mutex::new(last),
        })
    }

    /// A check the daemon did not finish (it was killed or crashed): whether the scheduler
    /// ran before it, so the caller starts it again. Forgets the check.
    pub fn recover_interrupted(&self) -> Option<bool> {
        let bytes = std::fs::read(&self.found_file).ok()?;
        let _ = std::fs::remove_file(&self.found_file);
        let found: Found = serde_json::from_slice(&bytes).ok()?;
        tracing::warn!(
            "a responsiveness check was interrupted; the scheduler {} before it",
            if found.scheduler_ran {
                "ran"
            } else {
                "was stopped"
            }
        );
        Some(found.scheduler_ran)
    }

    pub fn running(&self) -> bool {
        lock(&self.running).is_some()
    }

    pub fn last(&self) -> Option<CheckReport> {
        lock(&self.last).clone()
    }

    /// Starts a check for `owner` (a bus name); returns once it is under way.
    pub async fn start(self: &Arc<Self>, options: CheckOptions, owner: &str) -> Result<(), Error> {
        if !self.daemon.sched_ext_supported() {
            return Err(Error::Unsupported(self.daemon.model().reason));
        }
        let model = self.daemon.model();
        if model.on_battery && !options.allow_battery {
            return Err(Error::Failed(
                "The machine runs on battery: a check would drain it. Plug it in, or allow \
                 running on battery."
                    .into(),
            ));
        }
        let profiles = if options.profiles.is_empty() {
            self.daemon.profiles().into_iter().map(|p| p.name).collect()
        } else {
            options.profiles.clone()
        };
        for name in &profiles {
            if self.daemon.config().profile(name).is_none() {
                return Err(Error::InvalidProfile(format!("No profile named {name:?}.")));
            }
        }
        let cancel = Arc::new(AtomicBool::new(false));
        {
            let mut running = lock(&self.running);
            // The daemon's claim is the one guard: it is held exactly while `running` is set.
            if !self.daemon.claim_for_check(true) {
                return Err(Error::LimitExceeded(
                    "A responsiveness check is running already.".into(),
                ));
            }
            *running = Some(Running {
                owner: owner.to_owned(),
                cancel: Arc::clone(&cancel),
            });
        }
        let found = Found {
            scheduler_ran: model.scheduler_active(),
        };
        if let Err(e) = self.remember(found) {
            *lock(&self.running) = None;
            self.daemon.claim_for_check(false);
            return Err(Error::Failed(format!("Cannot save the state: {e}.")));
        }
        self.announce_changed().await;
        tracing::info!(
            "responsiveness check: default scheduler and {} for {} s each",
            profiles.join(", "),
            options.seconds
        );
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let outcome = this.measure_all(&profiles, options.seconds, cancel).await;
            this.finish(found, options.seconds, outcome).await;
        });
        Ok(())
    }

    /// Cancels the running check (any caller allowed to manage the scheduler may).
    pub fn cancel(&self) -> Result<(), Error> {
        match &*lock(&self.running) {
            Some(r) => {
                r.cancel.store(true, Ordering::Relaxed);
                Ok(())
            }
            None => Err(Error::Failed("No responsiveness check is running.".into())),
        }
    }

    /// A client left the bus: a check it started ends.
    pub fn owner_left(&self, name: &str) {
        if let Some(r) = lock(&self.running).as_ref().filter(|r| r.owner == name) {
            tracing::info!("responsiveness check: its client {name} left; cancelling");
            r.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// CheckRunning and LastCheck changed: through the same PropertiesChanged as the model's.
    async fn announce_changed(&self) {
        let changed = Changed {
            check: true,
            ..Changed::default()
        };
        self.daemon.notify(Notice::PropertiesChanged(changed)).await;
    }

    fn remember(&self, found: Found) -> std::io::Result<()> {
        let text = serde_json::to_vec(&found).map_err(std::io::Error::other)?;
        write_atomically(&self.found_file, &text)
    }

    async fn measure_all(
        &self,
        profiles: &[String],
        seconds: u32,
        cancel: Arc<AtomicBool>,
    ) -> Result<Vec<CheckResult>, String> {
        let steps = 1 + profiles.len();
        let mut results = Vec::with_capacity(steps);
        let schedulers =
            std::iter::once(DEFAULT_SCHEDULER).chain(profiles.iter().map(String::as_str));
        for (step, scheduler) in schedulers.enumerate() {
            if cancel.load(Ordering::Relaxed) {
                return Err("cancelled".into());
            }
            let hold = self.switch_to(scheduler).await?;
            let measured = self.measure(scheduler, seconds, step, steps, &cancel).await;
            // A user's SetProfile ends every hold: the run measured their profile instead.
            let held = hold.is_none() || self.daemon.model().profile == scheduler;
            if let Some(cookie) = hold {
                self.release(cookie).await;
            }
            let probe = measured?;
            if !held {
                return Err(format!(
                    "the profile was changed while {scheduler} was measured"
                ));
            }
            results.push(row(scheduler, &probe));
        }
        Ok(results)
    }

    /// Puts `scheduler` in effect; Some(cookie) of the hold a profile takes.
    async fn switch_to(&self, scheduler: &str) -> Result<Option<u32>, String> {
        if scheduler == DEFAULT_SCHEDULER {
            self.daemon
                .stop_for_check()
                .await
                .map_err(|e| e.to_string())?;
            self.daemon
                .explain("Responsiveness check: measuring the kernel's default scheduler")
                .await;
            return Ok(None);
        }
        let cookie = self
            .daemon
            .choices()
            .hold_profile(scheduler, "Responsiveness check", HOLD_APP_ID, HOLD_OWNER)
            .await
            .map_err(|e| e.to_string())?;
        if let Err(e) = self.daemon.start_for_check().await {
            self.release(cookie).await;
            return Err(format!("profile {scheduler}: {e}"));
        }
        Ok(Some(cookie))
    }

    async fn release(&self, cookie: u32) {
        if let Err(e) = self
            .daemon
            .choices()
            .release_profile(cookie, HOLD_OWNER)
            .await
        {
            tracing::warn!("responsiveness check: releasing its hold: {e}");
        }
    }

    /// Runs the probe under the scheduler in effect, reporting progress while it runs.
    async fn measure(
        &self,
        scheduler: &str,
        seconds: u32,
        step: usize,
        steps: usize,
        cancel: &Arc<AtomicBool>,
    ) -> Result<ProbeResult, String> {
        tokio::time::sleep(SETTLE).await;
        let plan = ProbePlan::for_this_machine(Duration::from_secs(u64::from(seconds)));
        let total = (plan.warmup + plan.duration).as_secs_f64();
        let flag = Arc::clone(cancel);
        let mut probe = tokio::task::spawn_blocking(move || gearshift_probe::run(&plan, &flag));
        let started = tokio::time::Instant::now();
        let mut ticks = tokio::time::interval(PROGRESS_EVERY);
        loop {
            tokio::select! {
                joined = &mut probe => {
                    return match joined {
                        Ok(Ok(result)) => Ok(result),
                        Ok(Err(gearshift_probe::ProbeError::Cancelled)) => Err("cancelled".into()),
                        Ok(Err(e)) => Err(e.to_string()),
                        Err(e) => Err(format!("the probe failed: {e}")),
                    };
                }
                _ = ticks.tick() => {
                    let within = (started.elapsed().as_secs_f64() / total).min(1.0);
                    let fraction = (step as f64 + within) / steps as f64;
                    self.daemon
                        .notify(Notice::CheckProgress { fraction, scheduler: scheduler.to_owned() })
                        .await;
                }
            }
        }
    }

    /// Puts back what the check found, keeps the report and tells the clients.
    async fn finish(&self, found: Found, seconds: u32, outcome: Result<Vec<CheckResult>, String>) {
        let restored = if found.scheduler_ran {
            self.daemon.start_for_check().await
        } else {
            self.daemon.stop_for_check().await
        };
        if let Err(e) = &restored {
            tracing::error!("responsiveness check: putting the scheduler back: {e}");
        }
        let _ = std::fs::remove_file(&self.found_file);
        let (completed, message) = match outcome {
            Ok(results) => {
                let report = CheckReport {
                    finished: unix_now(),
                    seconds,
                    results,
                };
                self.keep(report);
                (true, String::new())
            }
            Err(why) => (false, why),
        };
        let message = match restored {
            Err(e) if message.is_empty() => format!("putting the scheduler back failed: {e}"),
            Err(e) => format!("{message}; putting the scheduler back failed: {e}"),
            Ok(()) => message,
        };
        tracing::info!(
            "responsiveness check {}{}",
            if completed { "finished" } else { "ended: " },
            message
        );
        *lock(&self.running) = None;
        self.daemon.claim_for_check(false);
        self.announce_changed().await;
        self.daemon
            .notify(Notice::CheckFinished { completed, message })
            .await;
    }

    fn keep(&self, report: CheckReport) {
        match serde_json::to_vec_pretty(&report) {
            Ok(text) => {
                if let Err(e) = write_atomically(&self.report_file, &text) {
                    tracing::error!("cannot save the check's report: {e}");
                }
            }
            Err(e) => tracing::error!("cannot save the check's report: {e}"),
        }
        *lock(&self.last) = Some(report);
    }
}

/// The holder name of the check's holds: not a bus name, so no client's departure ends them.
const HOLD_OWNER: &str = "gearshiftd:check";

fn row(scheduler: &str, probe: &ProbeResult) -> CheckResult {
    let f = &probe.frames;
    CheckResult {
        scheduler: scheduler.to_owned(),
        expected: f.expected,
        on_time: f.on_time,
        miss_pct: f.miss_pct(),
        wakeup_p50_us: f.wakeup_percentile_us(50.0),
        wakeup_p99_us: f.wakeup_percentile_us(99.0),
        load_per_s: probe.load_per_s,
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
