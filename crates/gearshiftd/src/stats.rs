//! The scheduler's stats: a snapshot on request, and subscriptions: the Stats notice runs only
//! while someone is subscribed, at the shortest interval asked for; a subscriber that leaves
//! the bus is dropped.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, Weak};
use std::time::Duration;

use gearshift_dbus::{Error, SchedulerState};
use gearshift_types::Stats;
use tokio::task::JoinHandle;

use crate::config::StatsConfig;
use crate::notices::Notice;
use crate::state::DaemonState;

/// Longest interval accepted (an hour): longer is surely a unit mistake.
const MAX_INTERVAL_MS: u32 = 3_600_000;

struct Subscription {
    owner: String,
    interval: Duration,
}

#[derive(Default)]
struct Subscriptions {
    next_cookie: u32,
    by_cookie: HashMap<u32, Subscription>,
    ticker: Option<(Duration, JoinHandle<()>)>,
}

/// A stats snapshot from the running scheduler.
pub async fn snapshot(state: &DaemonState) -> Result<Stats, Error> {
    let scheduler = state.model().state;
    if scheduler != SchedulerState::Running {
        return Err(Error::NotRunning(format!(
            "The scheduler is not running (state: {scheduler})."
        )));
    }
    state
        .control
        .stats()
        .await
        .map_err(|e| Error::Failed(format!("The scheduler did not report its stats: {e}.")))
}

pub struct StatsHub {
    min_interval: Duration,
    max_subscriptions: usize,
    subs: Mutex<Subscriptions>,
    /// Where the snapshots come from and the notices go; the ticker ends with it.
    state: Weak<DaemonState>,
}

impl StatsHub {
    pub fn new(config: &StatsConfig, state: Weak<DaemonState>) -> Self {
        Self {
            min_interval: Duration::from_millis(config.min_interval_ms.into()),
            max_subscriptions: config.max_subscriptions as usize,
            subs: Mutex::new(Subscriptions::default()),
            state,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Subscriptions> {
        crate::state::lock(&self.subs)
    }

    pub fn subscribe(&self, owner: &str, interval_ms: u32) -> Result<u32, Error> {
        if interval_ms == 0 || interval_ms > MAX_INTERVAL_MS {
            return Err(Error::InvalidArgs(format!(
                "interval_ms must be between 1 and {MAX_INTERVAL_MS}, not {interval_ms}"
            )));
        }
        let mut subs = self.lock();
        if subs.by_cookie.len() >= self.max_subscriptions {
            return Err(Error::LimitExceeded(format!(
                "There are already {} stats subscriptions, the most allowed.",
                self.max_subscriptions
            )));
        }
        let interval = Duration::from_millis(interval_ms.into()).max(self.min_interval);
        subs.next_cookie = subs.next_cookie.wrapping_add(1).max(1);
        while subs.by_cookie.contains_key(&subs.next_cookie) {
            subs.next_cookie = subs.next_cookie.wrapping_add(1).max(1);
        }
        let cookie = subs.next_cookie;
        subs.by_cookie.insert(
            cookie,
            Subscription {
                owner: owner.to_owned(),
                interval,
            },
        );
        retune(&mut subs, self.state.clone());
        Ok(cookie)
    }

    /// Ends `cookie`, which only the client that made it may do.
    pub fn unsubscribe(&self, owner: &str, cookie: u32) -> Result<(), Error> {
        let mut subs = self.lock();
        match subs.by_cookie.get(&cookie) {
            Some(s) if s.owner == owner => {
                subs.by_cookie.remove(&cookie);
                retune(&mut subs, self.state.clone());
                Ok(())
            }
            _ => Err(Error::InvalidArgs(format!(
                "No stats subscription {cookie} of yours"
            ))),
        }
    }

    /// Drops every subscription of a client that left the bus.
    pub fn owner_left(&self, owner: &str) {
        let mut subs = self.lock();
        let before = subs.by_cookie.len();
        subs.by_cookie.retain(|_, s| s.owner != owner);
        if subs.by_cookie.len() != before {
            tracing::debug!(
                "{owner} left: dropped {} stats subscriptions",
                before - subs.by_cookie.len()
            );
            retune(&mut subs, self.state.clone());
        }
    }
}

/// Runs the timer at the shortest subscribed interval, or not at all.
fn retune(subs: &mut Subscriptions, state: Weak<DaemonState>) {
    let wanted = subs.by_cookie.values().map(|s| s.interval).min();
    if subs.ticker.as_ref().map(|(d, _)| *d) == wanted {
        return;
    }
    if let Some((_, handle)) = subs.ticker.take() {
        handle.abort();
    }
    if let Some(interval) = wanted {
        subs.ticker = Some((interval, tokio::spawn(tick(state, interval))));
    }
}

async fn tick(state: Weak<DaemonState>, interval: Duration) {
    let mut timer = tokio::time::interval(interval);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        timer.tick().await;
        let Some(state) = state.upgrade() else {
            return;
        };
        // Nothing to report while the scheduler is not running: skip, keep the cadence.
        if let Ok(stats) = snapshot(&state).await {
            state.notices.emit(Notice::Stats(Box::new(stats))).await;
        }
    }
}
