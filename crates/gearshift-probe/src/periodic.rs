//! The frame: a periodic task with a deadline at the end of each period.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::clock;
use crate::ProbeError;

/// The frame task's record over one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Frames {
    /// Periods in the run (duration / period).
    pub expected: u32,
    /// Frames that started (a frame late by whole periods skips the ones it missed).
    pub ran: u32,
    /// Frames whose work was done before their period ended.
    pub on_time: u32,
    /// How late each frame's timer wakeup ran, sorted, in microseconds.
    pub wakeup_us: Vec<u64>,
}

impl Frames {
    /// Periods whose frame did not finish in time (skipped ones included), in %.
    pub fn miss_pct(&self) -> f64 {
        if self.expected == 0 {
            return 0.0;
        }
        let missed = self.expected.saturating_sub(self.on_time);
        100.0 * f64::from(missed) / f64::from(self.expected)
    }

    /// The wakeup latency at percentile `p` (0–100), in microseconds; 0 without frames.
    pub fn wakeup_percentile_us(&self, p: f64) -> u64 {
        if self.wakeup_us.is_empty() {
            return 0;
        }
        // Nearest rank: the smallest value with at least p % of the values at or below it.
        let rank = ((p / 100.0) * self.wakeup_us.len() as f64).ceil() as usize;
        self.wakeup_us[rank.clamp(1, self.wakeup_us.len()) - 1]
    }
}

/// Runs the frame on the calling thread for `duration`.
pub fn run(
    period: Duration,
    work: Duration,
    duration: Duration,
    cancel: &AtomicBool,
) -> Result<Frames, ProbeError> {
    let expected = (duration.as_nanos() / period.as_nanos().max(1)) as u32;
    let start = clock::now() + period;
    let end = start + period * expected;
    let mut frames = Frames {
        expected,
        ran: 0,
        on_time: 0,
        wakeup_us: Vec::with_capacity(expected as usize),
    };
    let mut release = start;
    while release < end {
        if cancel.load(Ordering::Relaxed) {
            return Err(ProbeError::Cancelled);
        }
        clock::sleep_until(release);
        let woke = clock::now();
        frames.ran += 1;
        frames
            .wakeup_us
            .push(woke.saturating_sub(release).as_micros() as u64);
        clock::spin_cpu(work);
        let deadline = release + period;
        let finished = clock::now();
        if finished <= deadline {
            frames.on_time += 1;
        }
        // The next release is the next period boundary still ahead: a frame that overran by
        // whole periods skips those (they count as missed), as a game's frame loop does.
        release = deadline;
        if finished > release {
            let behind = (finished - release).as_nanos() / period.as_nanos();
            release += period * (behind as u32 + 1);
        }
    }
    frames.wakeup_us.sort_unstable();
    Ok(frames)
}
