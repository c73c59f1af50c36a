//! A short responsiveness probe, what `gearshiftctl check` runs under each scheduler: a
//! frame-like periodic task (it wakes on an absolute timer every period and needs a fixed
//! amount of CPU time before the period ends) while a background load sized to the machine
//! keeps every CPU busy, and how much work that load got done.
//!
//! It measures what a user feels: the share of frames that missed their deadline and the
//! tail of the frame's wakeup latency, not averages. The measure is the benchmark's (`cargo
//! xtask bench`, rt-app's periodic tasks), written without rt-app so it runs on any machine.

mod clock;
mod load;
mod periodic;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use periodic::Frames;

/// What one probe run does.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbePlan {
    /// The frame's period (60 Hz: 16.667 ms).
    pub period: Duration,
    /// CPU time the frame needs every period.
    pub work: Duration,
    /// How long the frame runs under the load (after `warmup`).
    pub duration: Duration,
    /// Load running before the frame is measured, so the scheduler has seen it.
    pub warmup: Duration,
    /// CPU-bound threads of the background load (a build's compilers).
    pub hogs: usize,
    /// Pairs of threads passing a message back and forth with a little work in between (a
    /// compositor and its clients, a build's make and jobserver).
    pub pairs: usize,
}

impl ProbePlan {
    /// A 60 Hz frame needing 3 ms a frame, under two CPU-bound threads per CPU and one
    /// message-passing pair per CPU, for `duration`.
    pub fn for_this_machine(duration: Duration) -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            period: Duration::from_micros(16_667),
            work: Duration::from_millis(3),
            duration,
            warmup: Duration::from_secs(1),
            hogs: 2 * cpus,
            pairs: cpus,
        }
    }

    fn check(&self) -> Result<(), ProbeError> {
        if self.period.is_zero() || self.work >= self.period {
            return Err(ProbeError::Plan(format!(
                "the work ({} µs) must be shorter than the period ({} µs)",
                self.work.as_micros(),
                self.period.as_micros()
            )));
        }
        if self.duration < self.period {
            return Err(ProbeError::Plan(format!(
                "the duration ({} ms) must hold at least one period",
                self.duration.as_millis()
            )));
        }
        Ok(())
    }
}

/// What one probe run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeResult {
    pub frames: Frames,
    /// Units of work the background load finished per second while the frame ran.
    pub load_per_s: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("invalid probe plan: {0}")]
    Plan(String),
    #[error("cannot start the probe's threads: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("the probe was cancelled")]
    Cancelled,
    #[error("a thread of the probe failed")]
    Thread,
}

/// Runs the probe; `cancel` set from another thread ends it early with `Cancelled` (within
/// a period or so). Blocks for about `plan.warmup + plan.duration`.
pub fn run(plan: &ProbePlan, cancel: &AtomicBool) -> Result<ProbeResult, ProbeError> {
    plan.check()?;
    let load = load::Load::start(plan.hogs, plan.pairs)?;
    let outcome = (|| {
        clock::sleep_until_or_cancel(clock::now() + plan.warmup, cancel);
        let done_before = load.units();
        let started = clock::now();
        let frames = periodic::run(plan.period, plan.work, plan.duration, cancel)?;
        let elapsed = clock::now().saturating_sub(started);
        let units = load.units().saturating_sub(done_before);
        Ok(ProbeResult {
            frames,
            load_per_s: units as f64 / elapsed.as_secs_f64().max(1e-3),
        })
    })();
    load.stop()?;
    outcome
}

#[cfg(test)]
mod tests;
