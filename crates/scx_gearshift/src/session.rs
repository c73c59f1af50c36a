//! The scheduling loop: receive queued tasks, order them, send decisions back, answer control
//! requests, and yield the CPU. BPF only dispatches this thread again when there is work.

use std::mem::MaybeUninit;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use gearshift_types::{Mode, Request, Response, Settings, Stats};
use libbpf_rs::OpenObject;

use crate::bpf::{Bpf, BpfTunables};
use crate::control::ControlServer;
use crate::memlock::{thread_page_faults, LockedMemory};
use crate::policy::{Policy, PolicyConfig};
use crate::startup::StartupPriority;

/// Everything the scheduler can be told at start.
#[derive(Debug, Clone)]
pub struct Options {
    pub slice_max_ns: u64,
    pub slice_min_ns: u64,
    pub starvation_ns: u64,
    pub interactive_nvcsw_per_s: u64,
    pub weight_cap: u64,
    pub mode: Mode,
    pub preemption: bool,
    pub control_socket: Option<PathBuf>,
    pub stats_interval: Option<Duration>,
    pub watchdog_timeout_ms: u32,
    /// Print lifecycle events for a supervisor (see [`event`]).
    pub report_events: bool,
    /// Test builds only: stop dispatching after this long, so the kernel's watchdog ejects
    /// the scheduler (how gearshiftd's stall handling is tested).
    pub debug_stall_after: Option<Duration>,
    /// Test builds only: stop dispatching while this mode is in effect, so that one mode fails
    /// and the others work (how gearshiftd's fallback to a known good profile is tested).
    pub debug_fail_in_mode: Option<Mode>,
    /// Test builds only: a pause between reading the topology and loading (how a hotplug
    /// while loading is tested).
    pub debug_load_delay: Option<Duration>,
}

/// A lifecycle event line on stderr, in order with the kernel's exit report ("EXIT: …")
/// that precedes a restart: `gearshift-event: attached` or `gearshift-event: restarting`.
pub fn event(opts: &Options, name: &str) {
    if opts.report_events {
        eprintln!("gearshift-event: {name}");
    }
}

/// Room for this many tasks before the policy's tables would have to grow.
const TASK_CAPACITY: usize = 65536;
const HOUSEKEEPING: Duration = Duration::from_secs(1);

/// Runs the scheduler until `shutdown` is set or the kernel ends it; restarts it when the
/// kernel asks (BPF handles CPU hotplug itself, but a kernel may still ask). Returns why it
/// ended (the kernel's reason is printed).
pub fn run(opts: &Options, shutdown: &AtomicBool) -> Result<scx_utils::UserExitInfo> {
    let control = opts
        .control_socket
        .as_deref()
        .map(ControlServer::bind)
        .transpose()
        .context("binding the control socket")?;
    let mut boost = boost_for_startup();
    prefault_stack();
    let _locked = LockedMemory::lock().context("locking the scheduler's memory")?;
    let mut settings = Settings {
        mode: opts.mode,
        preemption: opts.preemption,
    };
    // Not an option: gearshiftd sets it as focus moves, and a restart keeps it.
    let mut foreground_cgroup_id = 0;
    loop {
        let mut open_object = MaybeUninit::<OpenObject>::uninit();
        let tid = nix::unistd::gettid().as_raw();
        // Taken again for a restart: the kernel's scheduler runs everything until we attach.
        let boosted = boost.take().or_else(boost_for_startup);
        let bpf = Bpf::attach(
            &mut open_object,
            BpfTunables {
                slice_max_ns: opts.slice_max_ns,
                slice_min_ns: opts.slice_min_ns,
                starvation_ns: opts.starvation_ns,
                weight_cap: opts.weight_cap,
                watchdog_timeout_ms: opts.watchdog_timeout_ms,
                debug_load_delay: opts.debug_load_delay,
            },
            tid,
        )?;
        drop(boosted);
        tracing::info!("scx_gearshift attached ({} mode)", settings.mode);
        event(opts, "attached");
        let mut session = Session::new(bpf, opts, settings, foreground_cgroup_id);
        session.run(shutdown, control.as_ref())?;
        settings = session.settings;
        foreground_cgroup_id = session.bpf.foreground();
        let exit = session.bpf.detach()?;
        if !exit.should_restart() || shutdown.load(Ordering::Relaxed) {
            return Ok(exit);
        }
        tracing::info!("the kernel asked for a restart; restarting");
        event(opts, "restarting");
    }
}

/// The loading thread at the highest nice until attached ([`StartupPriority`]); without the
/// privilege it loads at its own priority, only slower on a loaded machine.
fn boost_for_startup() -> Option<StartupPriority> {
    StartupPriority::raise()
        .map_err(|e| tracing::warn!("loading at normal priority: cannot raise it: {e}"))
        .ok()
}

/// Touches stack pages now, so that deeper calls later do not fault them in.
#[inline(never)]
fn prefault_stack() {
    let mut buf = [0u8; 512 * 1024];
    std::hint::black_box(&mut buf);
}

struct Session<'obj> {
    bpf: Bpf<'obj>,
    policy: Policy,
    settings: Settings,
    started: Instant,
    faults_at_start: u64,
    faults_reported: u64,
    stats_interval: Option<Duration>,
    stall_at: Option<Instant>,
    fail_in_mode: Option<Mode>,
}

impl<'obj> Session<'obj> {
    fn new(mut bpf: Bpf<'obj>, opts: &Options, settings: Settings, foreground: u64) -> Self {
        bpf.set_preemption(settings.preemption);
        bpf.set_mode(settings.mode);
        bpf.set_foreground(foreground);
        let nr_cpus = bpf.counters().nr_online_cpus.max(1);
        let policy = Policy::new(
            PolicyConfig {
                nr_cpus,
                slice_max_ns: opts.slice_max_ns,
                slice_min_ns: opts.slice_min_ns,
                interactive_nvcsw_per_s: opts.interactive_nvcsw_per_s,
                weight_cap: opts.weight_cap,
                ..PolicyConfig::default()
            },
            TASK_CAPACITY,
        );
        Self {
            bpf,
            policy,
            settings,
            started: Instant::now(),
            faults_at_start: thread_page_faults(),
            faults_reported: 0,
            stats_interval: opts.stats_interval,
            stall_at: opts.debug_stall_after.map(|d| Instant::now() + d),
            fail_in_mode: opts.debug_fail_in_mode,
        }
    }

    fn run(&mut self, shutdown: &AtomicBool, control: Option<&ControlServer>) -> Result<()> {
        let mut next_housekeeping = Instant::now() + HOUSEKEEPING;
        let mut next_stats = self.stats_interval.map(|i| Instant::now() + i);
        while !shutdown.load(Ordering::Relaxed) && !self.bpf.exited() {
            let stalled = self.stall_at.is_some_and(|at| Instant::now() >= at)
                || self.fail_in_mode == Some(self.settings.mode);
            if stalled {
                // Deliberately dispatch nothing until the kernel gives up on us.
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            self.schedule()?;
            if let Some(control) = control {
                control.serve_pending(|request| self.answer(request));
            }
            let now = Instant::now();
            if now >= next_housekeeping {
                self.policy.forget_idle(monotonic_ns());
                self.report_new_faults();
                next_housekeeping = now + HOUSEKEEPING;
            }
            if let (Some(at), Some(every)) = (next_stats, self.stats_interval) {
                // A quarter interval early rather than a heartbeat late: see next_on_grid().
                if now + every / 4 >= at {
                    print_stats(&self.stats());
                    next_stats = Some(next_on_grid(at, every, now));
                }
            }
            // BPF keeps us off the CPU until tasks are queued or the heartbeat fires.
            std::thread::yield_now();
        }
        Ok(())
    }

    /// A page fault here stalls every task waiting to be dispatched: say so when one happened.
    fn report_new_faults(&mut self) {
        let faults = thread_page_faults().saturating_sub(self.faults_at_start);
        if faults > self.faults_reported {
            tracing::warn!(
                "the scheduling thread page-faulted: {} fault(s) since attaching ({} new)",
                faults,
                faults - self.faults_reported
            );
            self.faults_reported = faults;
        }
    }

    /// One round: everything queued goes through the policy and back out, most urgent first.
    fn schedule(&mut self) -> Result<()> {
        let policy = &mut self.policy;
        policy.note_kernel_vruntime(self.bpf.kernel_vruntime_max());
        self.bpf.receive(|task| policy.enqueue(task))?;
        let kernel_waiting = self.bpf.counters().nr_shared_waiting;
        let bpf = &self.bpf;
        self.policy
            .dispatch_all(kernel_waiting, |decision| bpf.dispatch(decision));
        self.bpf.set_user_pending(self.policy.pending() as u64);
        Ok(())
    }

    fn answer(&mut self, request: &Request) -> Response {
        match request {
            Request::SetSettings { settings } => {
                self.bpf.set_mode(settings.mode);
                self.bpf.set_preemption(settings.preemption);
                self.settings = *settings;
                Response::Settings {
                    settings: self.settings,
                }
            }
            Request::SetForeground { cgroup_id } => {
                self.bpf.set_foreground(*cgroup_id);
                Response::Foreground {
                    cgroup_id: self.bpf.foreground(),
                }
            }
            Request::GetSettings => Response::Settings {
                settings: self.settings,
            },
            Request::GetStats => Response::Stats {
                stats: Box::new(self.stats()),
            },
        }
    }

    fn stats(&self) -> Stats {
        let c = self.bpf.counters();
        Stats {
            // What BPF has in effect, read back: a write that did not land shows here.
            mode: self.bpf.mode().unwrap_or(self.settings.mode),
            preemption: self.bpf.preemption(),
            fifo_active: c.fifo_active != 0,
            fifo_time_ms: c.fifo_ns / 1_000_000,
            fifo_overload_time_ms: c.fifo_overload_ns / 1_000_000,
            nr_fifo_dispatches: c.nr_fifo_dispatches,
            nr_active_cpus: c.nr_active_cpus,
            uptime_ms: self.started.elapsed().as_millis() as u64,
            nr_online_cpus: c.nr_online_cpus,
            nr_running: c.nr_running,
            nr_queued: c.nr_queued,
            nr_user_pending: self.policy.pending() as u64,
            nr_shared_waiting: c.nr_shared_waiting,
            nr_scheduled: self.policy.nr_scheduled(),
            nr_user_dispatches: c.nr_user_dispatches,
            nr_kernel_dispatches: c.nr_kernel_dispatches,
            nr_cancel_dispatches: c.nr_cancel_dispatches,
            nr_bounce_dispatches: c.nr_bounce_dispatches,
            nr_failed_dispatches: c.nr_failed_dispatches,
            nr_sched_congested: c.nr_sched_congested,
            nr_usersched_runs: c.nr_usersched_runs,
            nr_starvation_guard: c.nr_starvation_guard,
            nr_rescue_kicks: c.nr_rescue_kicks,
            nr_weight_turns: c.nr_weight_turns,
            nr_slice_requeues: c.nr_slice_requeues,
            foreground_cgroup_id: self.bpf.foreground(),
            nr_foreground_boosts: c.nr_foreground_boosts,
            nr_interactive_wakeups: c.nr_interactive_wakeups,
            nr_preemptions: c.nr_preemptions,
            nr_latency_wakeups: c.nr_latency_wakeups,
            nr_latency_local: c.nr_latency_local,
            nr_latency_idle: c.nr_latency_idle,
            nr_latency_preempt: c.nr_latency_preempt,
            nr_latency_waited: c.nr_latency_waited,
            nr_latency_slow_local: c.nr_latency_slow_local,
            nr_latency_slow_idle: c.nr_latency_slow_idle,
            nr_latency_slow_preempt: c.nr_latency_slow_preempt,
            nr_latency_slow_waited: c.nr_latency_slow_waited,
            nr_latency_rank_lost: c.nr_latency_rank_lost,
            nr_latency_catch_ups: c.nr_latency_catch_ups,
            nr_latency_held: c.nr_latency_held,
            nr_hotplug_events: c.nr_hotplug_events,
            nr_hotplug_requeues: c.nr_hotplug_requeues,
            nr_interactive: self.policy.nr_interactive(),
            page_faults: thread_page_faults().saturating_sub(self.faults_at_start),
            arena_used_bytes: crate::alloc::ARENA.used_bytes(),
        }
    }
}

fn monotonic_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// One line per interval, `key=value` pairs a human and `grep` can both read.
fn print_stats(s: &Stats) {
    println!(
        "[gearshift] mode={} preempt={} fifo_active={} fifo_ms={} fifo_overload_ms={} fifo={} active_cpus={} cpus={} running={} queued={} scheduled={} pending={} shared={} \
         user={} kernel={} cancel={} bounce={} failed={} congested={} starved={} rescued={} weighted={} requeued={} fastwake={} latency={} latency_slow={} latency_lost={} latency_catch_ups={} preempted={} interactive={} \
         foreground={} foreground_boosts={} hotplug={} hotplug_requeued={} \
         page_faults={} arena_kib={}",
        s.mode,
        s.preemption,
        s.fifo_active,
        s.fifo_time_ms,
        s.fifo_overload_time_ms,
        s.nr_fifo_dispatches,
        s.nr_active_cpus,
        s.nr_online_cpus,
        s.nr_running,
        s.nr_queued,
        s.nr_scheduled,
        s.nr_user_pending,
        s.nr_shared_waiting,
        s.nr_user_dispatches,
        s.nr_kernel_dispatches,
        s.nr_cancel_dispatches,
        s.nr_bounce_dispatches,
        s.nr_failed_dispatches,
        s.nr_sched_congested,
        s.nr_starvation_guard,
        s.nr_rescue_kicks,
        s.nr_weight_turns,
        s.nr_slice_requeues,
        s.nr_interactive_wakeups,
        s.nr_latency_wakeups,
        s.nr_latency_slow(),
        s.nr_latency_rank_lost,
        s.nr_latency_catch_ups,
        s.nr_preemptions,
        s.nr_interactive,
        s.foreground_cgroup_id,
        s.nr_foreground_boosts,
        s.nr_hotplug_events,
        s.nr_hotplug_requeues,
        s.page_faults,
        s.arena_used_bytes / 1024,
    );
}

/// The first point after `now` of the grid `at + k * every`. While the machine is idle this
/// thread wakes only on a heartbeat of up to a second; counting the next line from the moment
/// the last one was printed, or waiting for a heartbeat that comes a millisecond before the
/// line is due, would skip every other heartbeat and halve the line rate.
fn next_on_grid(at: Instant, every: Duration, now: Instant) -> Instant {
    if every.is_zero() {
        return now;
    }
    let behind = now.saturating_duration_since(at).as_nanos();
    let steps = behind / every.as_nanos() + 1;
    let step = u32::try_from(steps).unwrap_or(u32::MAX);
    at + every.saturating_mul(step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_lines_keep_their_grid_when_printed_late() {
        let at = Instant::now();
        let every = Duration::from_secs(1);
        // Printed 30 ms late: the next line is still due one interval after the last was due.
        let next = next_on_grid(at, every, at + Duration::from_millis(30));
        assert_eq!(next, at + every);
        // Printed 2.5 intervals late: skipped points are not printed in a burst.
        let next = next_on_grid(at, every, at + Duration::from_millis(2500));
        assert_eq!(next, at + Duration::from_secs(3));
    }
}
