//! What the scheduler reports about itself.

use serde::{Deserialize, Serialize};

use crate::mode::Mode;

/// A snapshot of the scheduler's counters. Counters are totals since the scheduler attached
/// unless the name says otherwise.
///
/// Missing fields read as 0, so a daemon and a scheduler of different versions still agree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stats {
    /// Mode in effect.
    pub mode: Mode,
    /// Wakeup preemption in effect.
    pub preemption: bool,
    /// In fifo mode: whether BPF is running tasks in arrival order right now.
    pub fifo_active: bool,
    /// Milliseconds spent in fifo mode with FIFO dispatch active.
    pub fifo_time_ms: u64,
    /// Milliseconds spent in fifo mode with the interactive policy in charge (overload).
    pub fifo_overload_time_ms: u64,
    /// Tasks dispatched in FIFO order by BPF.
    pub nr_fifo_dispatches: u64,
    /// CPUs tasks are packed onto in low-power mode (all online CPUs otherwise).
    pub nr_active_cpus: u64,
    /// Milliseconds since the scheduler attached.
    pub uptime_ms: u64,
    /// CPUs online now.
    pub nr_online_cpus: u64,
    /// Tasks running on a CPU now (the scheduler itself excluded).
    pub nr_running: u64,
    /// Tasks handed to the user-space policy.
    pub nr_queued: u64,
    /// Tasks the user-space policy holds but has not dispatched yet (now).
    pub nr_user_pending: u64,
    /// Tasks waiting in the shared queues (interactive and regular) at the last dispatch (now).
    pub nr_shared_waiting: u64,
    /// Tasks the user-space policy dispatched.
    pub nr_scheduled: u64,
    /// Dispatches placed where user space asked.
    pub nr_user_dispatches: u64,
    /// Dispatches BPF made on its own: idle-CPU fast path, critical kthreads, congestion.
    pub nr_kernel_dispatches: u64,
    /// User dispatches dropped because a newer enqueue of the task superseded them.
    pub nr_cancel_dispatches: u64,
    /// User dispatches redirected to the shared queue because the task's CPU affinity changed.
    pub nr_bounce_dispatches: u64,
    /// User dispatches for tasks that had exited.
    pub nr_failed_dispatches: u64,
    /// Times the queue to user space was full and BPF dispatched without it.
    pub nr_sched_congested: u64,
    /// Times the user-space scheduler was given a CPU.
    pub nr_usersched_runs: u64,
    /// Times a regular task went ahead of interactive ones because it had waited too long.
    pub nr_starvation_guard: u64,
    /// Idle CPUs woken by the backstop for a task that waited well past a slice (should be
    /// rare: each one is a wakeup the scheduler's normal paths missed).
    pub nr_rescue_kicks: u64,
    /// Slices a CPU-bound task ran in a row ahead of a lighter one it outweighs (nice,
    /// cgroup cpu.weight).
    pub nr_weight_turns: u64,
    /// CPU-bound tasks whose slice ended, queued again by BPF at the policy's deadline
    /// without a round trip through the user-space policy.
    pub nr_slice_requeues: u64,
    /// Interactive tasks BPF queued itself, without a user-space round trip (wakeups, and
    /// slices ending early in a burst).
    pub nr_interactive_wakeups: u64,
    /// CPUs taken from non-interactive tasks for waking interactive ones.
    pub nr_preemptions: u64,
    /// Wakeups of latency-critical bursts (timer- or device-woken, short, periodic: frames,
    /// audio, input), queued ahead of everything else.
    pub nr_latency_wakeups: u64,
    /// Of those: bursts that took the CPU they woke on at once (its task preempted there).
    pub nr_latency_local: u64,
    /// Bursts an idle CPU was woken for.
    pub nr_latency_idle: u64,
    /// Bursts a busy CPU was preempted for.
    pub nr_latency_preempt: u64,
    /// Bursts that found no CPU to take and waited for one to look for work.
    pub nr_latency_waited: u64,
    /// Of the bursts that took the CPU they woke on: those that still started 4 ms or more
    /// after they were queued (likewise for the other three below). Where these are many,
    /// frames and audio wait.
    pub nr_latency_slow_local: u64,
    pub nr_latency_slow_idle: u64,
    pub nr_latency_slow_preempt: u64,
    pub nr_latency_slow_waited: u64,
    /// Latency-critical bursts that ran their whole budget without sleeping and went on as
    /// ordinary work (a frame that overran its period).
    pub nr_latency_rank_lost: u64,
    /// Ended slices of long bursts queued with the interactive tasks because their task is a
    /// proven periodic one (timer-woken on its period, over and over) that sleeps at least a
    /// quarter of the time and has used at most three quarters of a CPU since its wakeup (a
    /// frame catching up with its periods).
    pub nr_latency_catch_ups: u64,
    /// Times a CPU passed over a waiting latency-critical burst to serve work that had waited
    /// too long (the starvation guard).
    pub nr_latency_held: u64,
    /// CPUs that went offline or came online while the scheduler ran (handled without a
    /// restart).
    pub nr_hotplug_events: u64,
    /// Tasks moved off a CPU that went offline while they waited for it.
    pub nr_hotplug_requeues: u64,
    /// The foreground cgroup in effect (its cgroup v2 id; 0: none), read back from BPF.
    pub foreground_cgroup_id: u64,
    /// Enqueues of tasks of the foreground cgroup, each ordered with the foreground boost.
    pub nr_foreground_boosts: u64,
    /// Tasks classified interactive among those seen in the last second.
    pub nr_interactive: u64,
    /// Page faults of the scheduling thread since it locked its memory (should stay 0).
    pub page_faults: u64,
    /// Bytes in use in the scheduler's locked allocation arena.
    pub arena_used_bytes: u64,
}

impl Stats {
    /// Latency-critical bursts that started 4 ms or more after they were queued, by any path.
    pub fn nr_latency_slow(&self) -> u64 {
        self.nr_latency_slow_local
            + self.nr_latency_slow_idle
            + self.nr_latency_slow_preempt
            + self.nr_latency_slow_waited
    }
}
