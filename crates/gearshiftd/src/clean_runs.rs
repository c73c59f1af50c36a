//! The last known good profile in the running daemon: timing clean runs of the scheduler, and
//! falling back to the last profile that ran cleanly when the restart policy gives up on
//! another. The bookkeeping itself is known_good.rs.

use std::time::{Duration, Instant};

use gearshift_dbus::SchedulerState;

use crate::known_good::{FellBack, Target};
use crate::state::DaemonState;
use crate::supervision::{Event, Supervision};

/// How soon a clean run whose scheduler did not look healthy is looked at again.
const RECHECK: Duration = Duration::from_secs(1);

/// The restart policy gave up on `failing`: puts `good` (the last known good profile) in
/// effect in place of every choice and hold (rules.rs says why), and starts it with a fresh
/// restart policy after the first backoff. If it fails as often, the daemon gives up.
pub(crate) async fn fall_back(
    state: &DaemonState,
    sup: &mut Supervision,
    failing: Target,
    good: Target,
    reason: &str,
) -> FellBack {
    let restart = &state.config.restart;
    let note = FellBack {
        failed_profile: failing.profile,
        fallback_profile: good.profile.clone(),
        failures: restart.max_failures,
        reason: reason.to_owned(),
    };
    let text = note.describe(restart.window_s, false);
    tracing::warn!("{text}");
    let released = sup.rules.fall_back(good.profile, good.settings);
    let effective = sup.rules.effective();
    let holds = sup.rules.holds().to_vec();
    state.update(|m| m.show_choice(effective, holds)).await;
    state.save(sup);
    sup.policy.reset();
    sup.fell_back = Some(note.clone());
    state.schedule_restart(sup, Duration::from_millis(restart.initial_backoff_ms));
    state.set_state(SchedulerState::Starting, text).await;
    state.announce_released(&released).await;
    note
}

/// The effective profile changed to `target`: a fallback's words no longer apply (true when
/// there were some), and a running scheduler's clean run starts over with it.
pub(crate) fn target_changed(state: &DaemonState, sup: &mut Supervision, target: Target) -> bool {
    if state.model().state == SchedulerState::Running {
        started(state, sup, target);
    } else {
        sup.known_good.run_ended();
    }
    sup.fell_back.take().is_some()
}

/// Times a clean run of `target`: if nothing ends it first, it becomes the last known good
/// profile.
pub(crate) fn started(state: &DaemonState, sup: &mut Supervision, target: Target) {
    if let Some(after) = sup.known_good.run_started(target, Instant::now()) {
        check_after(state, after);
    }
}

fn check_after(state: &DaemonState, delay: Duration) {
    let events = state.events.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let _ = events.send(Event::CleanRunDue);
    });
}

/// A clean run's timer fired: saves the run's profile if it is newly known good. The daemon
/// hears of an ejection only once the scheduler has printed the kernel's report and exited, a
/// moment after the kernel acted; so the run counts only if the kernel still runs the
/// scheduler and it answers. Otherwise this looks again shortly: by then the failure has
/// ended the run, or the scheduler has recovered (a kernel-requested restart).
pub(crate) async fn due(state: &DaemonState, sup: &mut Supervision) {
    if !sup.known_good.is_due(Instant::now()) {
        return;
    }
    let healthy = state.model().state == SchedulerState::Running
        && sup.child_alive()
        && state.kernel_enabled()
        && state.control.stats().await.is_ok();
    if !healthy {
        check_after(state, RECHECK);
        return;
    }
    if let Some(good) = sup.known_good.check(Instant::now()) {
        tracing::info!(
            "profile {} ran cleanly for {} s: it is the last known good one",
            good.profile,
            state.config.restart.known_good_after_s
        );
        state.save(sup);
    }
}
