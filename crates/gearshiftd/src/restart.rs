//! When to restart a scheduler that exited unexpectedly, and when to give up.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::config::RestartConfig;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    RestartAfter(Duration),
    GiveUp,
}

/// Exponential backoff over the failures of a sliding window.
#[derive(Debug)]
pub struct RestartPolicy {
    config: RestartConfig,
    failures: VecDeque<Instant>,
}

impl RestartPolicy {
    pub fn new(config: RestartConfig) -> Self {
        Self {
            config,
            failures: VecDeque::new(),
        }
    }

    /// Records a failure at `now` and decides what follows.
    pub fn on_failure(&mut self, now: Instant) -> Decision {
        let window = Duration::from_secs(self.config.window_s);
        while self
            .failures
            .front()
            .is_some_and(|t| now.duration_since(*t) > window)
        {
            self.failures.pop_front();
        }
        self.failures.push_back(now);
        let n = self.failures.len() as u32;
        if n >= self.config.max_failures {
            return Decision::GiveUp;
        }
        let factor = 1u64 << (n - 1).min(20);
        let delay = self.config.initial_backoff_ms.saturating_mul(factor).min(
            self.config
                .max_backoff_ms
                .max(self.config.initial_backoff_ms),
        );
        Decision::RestartAfter(Duration::from_millis(delay))
    }

    /// Forgets past failures (an explicit start, stop or restart).
    pub fn reset(&mut self) {
        self.failures.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RestartPolicy {
        RestartPolicy::new(RestartConfig {
            max_failures: 4,
            window_s: 60,
            initial_backoff_ms: 100,
            max_backoff_ms: 300,
            known_good_after_s: 60,
        })
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_then_gives_up() {
        let mut p = policy();
        let t = Instant::now();
        let ms = |d| Decision::RestartAfter(Duration::from_millis(d));
        assert_eq!(p.on_failure(t), ms(100));
        assert_eq!(p.on_failure(t), ms(200));
        assert_eq!(p.on_failure(t), ms(300));
        assert_eq!(p.on_failure(t), Decision::GiveUp);
    }

    #[test]
    fn old_failures_leave_the_window() {
        let mut p = policy();
        let t = Instant::now();
        for _ in 0..3 {
            p.on_failure(t);
        }
        let later = t + Duration::from_secs(61);
        assert_eq!(
            p.on_failure(later),
            Decision::RestartAfter(Duration::from_millis(100))
        );
    }

    #[test]
    fn reset_forgets() {
        let mut p = policy();
        let t = Instant::now();
        for _ in 0..3 {
            p.on_failure(t);
        }
        p.reset();
        assert_eq!(
            p.on_failure(t),
            Decision::RestartAfter(Duration::from_millis(100))
        );
    }
}
