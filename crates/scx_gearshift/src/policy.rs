//! The user-space scheduling policy, free of any BPF or kernel dependency (host-testable).
//!
//! - Ordering: each task carries a weighted vruntime; its deadline adds the CPU time it used
//!   since it last slept, so tasks that run long without sleeping line up behind those that
//!   sleep often. Tasks leave in deadline order.
//! - Interactive tasks, classified from their rate of voluntary context switches (an EWMA),
//!   are not charged for the current burst: their deadline is their vruntime.
//! - Sleepers get at most one slice of credit, so waking up never buys a monopoly.
//! - Weights are capped, so one task at high priority cannot starve the desktop.
//! - The time slice shrinks as more tasks wait, bounding how long any waiter waits.
//!
//! Per task: one hash lookup and one heap push/pop, O(log n), and no allocation once the table
//! and heap have reached their working size (both are preallocated).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// Target CPU meaning "the first allowed CPU that frees up".
pub const CPU_ANY: i32 = -1;
/// Default weight of a nice-0 task.
pub const DEFAULT_WEIGHT: u64 = 100;
const NSEC_PER_SEC: u64 = 1_000_000_000;

/// A runnable task as BPF reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueuedTask {
    pub pid: i32,
    pub cpu: i32,
    pub cpumask_gen: u32,
    pub nr_cpus_allowed: u32,
    pub enq_seq: u64,
    pub wakeup: bool,
    pub sum_exec_runtime: u64,
    pub nvcsw: u64,
    pub weight: u64,
    pub enq_ns: u64,
}

/// Where and how long a task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub pid: i32,
    pub cpu: i32,
    pub cpumask_gen: u32,
    pub enq_seq: u64,
    pub slice_ns: u64,
    /// Deadline: the task's position in its queue.
    pub vtime: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct PolicyConfig {
    pub nr_cpus: u64,
    pub slice_max_ns: u64,
    pub slice_min_ns: u64,
    /// Voluntary switches per second from which a task counts as interactive.
    pub interactive_nvcsw_per_s: u64,
    /// Weight above which tasks are treated as if at this weight.
    pub weight_cap: u64,
    /// Forget tasks not seen for this long.
    pub forget_after_ns: u64,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self {
            nr_cpus: 1,
            slice_max_ns: 5_000_000,
            slice_min_ns: 500_000,
            interactive_nvcsw_per_s: 10,
            weight_cap: 1000,
            forget_after_ns: 10 * NSEC_PER_SEC,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct TaskState {
    vruntime: u64,
    last_sum_exec: u64,
    /// CPU time since the task last woke up.
    burst_ns: u64,
    window_start_ns: u64,
    window_nvcsw: u64,
    /// Voluntary switches per second, exponentially averaged.
    nvcsw_rate: u64,
    interactive: bool,
    last_seen_ns: u64,
}

/// Shortest window over which a switch rate is measured; shorter ones are too noisy.
const RATE_WINDOW_NS: u64 = 100_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    deadline: u64,
    /// Arrival order among equal deadlines (FIFO).
    arrival: u64,
    vruntime: u64,
    pid: i32,
    cpu: i32,
    cpumask_gen: u32,
    enq_seq: u64,
}

pub struct Policy {
    cfg: PolicyConfig,
    tasks: FxHashMap<i32, TaskState>,
    queue: BinaryHeap<Reverse<Pending>>,
    arrivals: u64,
    /// Lower bound of the vruntime of tasks dispatched so far.
    min_vruntime: u64,
    nr_interactive: u64,
    nr_scheduled: u64,
}

impl Policy {
    /// A policy with room for `capacity` tasks before its tables grow.
    pub fn new(cfg: PolicyConfig, capacity: usize) -> Self {
        Self {
            cfg,
            tasks: FxHashMap::with_capacity_and_hasher(capacity, Default::default()),
            queue: BinaryHeap::with_capacity(capacity),
            arrivals: 0,
            min_vruntime: 0,
            nr_interactive: 0,
            nr_scheduled: 0,
        }
    }

    pub fn config(&self) -> &PolicyConfig {
        &self.cfg
    }

    /// Tasks received and not yet dispatched.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Tracked tasks classified interactive now.
    pub fn nr_interactive(&self) -> u64 {
        self.nr_interactive
    }

    /// Decisions handed out so far.
    pub fn nr_scheduled(&self) -> u64 {
        self.nr_scheduled
    }

    pub fn is_interactive(&self, pid: i32) -> bool {
        self.tasks.get(&pid).is_some_and(|t| t.interactive)
    }

    /// Takes a task BPF queued.
    pub fn enqueue(&mut self, t: &QueuedTask) {
        let cfg = self.cfg;
        let floor = self.min_vruntime.saturating_sub(cfg.slice_max_ns);
        let state = self.tasks.entry(t.pid).or_insert(TaskState {
            vruntime: floor,
            last_sum_exec: t.sum_exec_runtime,
            window_start_ns: t.enq_ns,
            window_nvcsw: t.nvcsw,
            ..TaskState::default()
        });
        // A recycled pid shows up as a counter going backwards: start over.
        if t.sum_exec_runtime < state.last_sum_exec || t.nvcsw < state.window_nvcsw {
            if state.interactive {
                self.nr_interactive -= 1;
            }
            *state = TaskState {
                vruntime: floor,
                last_sum_exec: t.sum_exec_runtime,
                window_start_ns: t.enq_ns,
                window_nvcsw: t.nvcsw,
                ..TaskState::default()
            };
        }
        let ran = t.sum_exec_runtime - state.last_sum_exec;
        state.last_sum_exec = t.sum_exec_runtime;
        state.last_seen_ns = t.enq_ns;
        let weight = t.weight.clamp(1, cfg.weight_cap);
        state.vruntime = (state.vruntime + ran * DEFAULT_WEIGHT / weight).max(floor);
        state.burst_ns = if t.wakeup { 0 } else { state.burst_ns + ran };

        let window = t.enq_ns.saturating_sub(state.window_start_ns);
        if window >= RATE_WINDOW_NS {
            let rate = (t.nvcsw - state.window_nvcsw) * NSEC_PER_SEC / window;
            state.nvcsw_rate = (state.nvcsw_rate * 3 + rate) / 4;
            state.window_start_ns = t.enq_ns;
            state.window_nvcsw = t.nvcsw;
            let interactive = state.nvcsw_rate >= cfg.interactive_nvcsw_per_s;
            if interactive != state.interactive {
                state.interactive = interactive;
                if interactive {
                    self.nr_interactive += 1;
                } else {
                    self.nr_interactive -= 1;
                }
            }
        }

        let charge = if state.interactive {
            0
        } else {
            // Capped so a long-running task still gets its turn among fresh ones.
            state.burst_ns.min(cfg.slice_max_ns * 10) * DEFAULT_WEIGHT / weight
        };
        self.arrivals += 1;
        self.queue.push(Reverse(Pending {
            deadline: state.vruntime + charge,
            arrival: self.arrivals,
            vruntime: state.vruntime,
            pid: t.pid,
            cpu: if t.nr_cpus_allowed == 1 {
                t.cpu
            } else {
                CPU_ANY
            },
            cpumask_gen: t.cpumask_gen,
            enq_seq: t.enq_seq,
        }));
    }

    /// Time slice when `waiting` tasks wait: the full slice up to one waiter per CPU, then
    /// shrinking so a full round over the waiters takes about one full slice.
    pub fn slice_ns(&self, waiting: u64) -> u64 {
        let cfg = &self.cfg;
        let per_cpu_waiters = (waiting / cfg.nr_cpus.max(1)).max(1);
        (cfg.slice_max_ns / per_cpu_waiters).clamp(cfg.slice_min_ns, cfg.slice_max_ns)
    }

    /// The most urgent task's decision, given `kernel_waiting` tasks already queued in BPF.
    pub fn next(&mut self, kernel_waiting: u64) -> Option<Decision> {
        let waiting = self.queue.len() as u64 + kernel_waiting;
        let Reverse(p) = self.queue.pop()?;
        self.min_vruntime = self.min_vruntime.max(p.vruntime);
        self.nr_scheduled += 1;
        Some(Decision {
            pid: p.pid,
            cpu: p.cpu,
            cpumask_gen: p.cpumask_gen,
            enq_seq: p.enq_seq,
            slice_ns: self.slice_ns(waiting),
            vtime: p.deadline,
        })
    }

    /// Puts back a decision that could not be delivered (the dispatch ring was full).
    pub fn requeue(&mut self, d: &Decision) {
        self.nr_scheduled -= 1;
        self.arrivals += 1;
        self.queue.push(Reverse(Pending {
            deadline: d.vtime,
            arrival: 0,
            vruntime: self.min_vruntime,
            pid: d.pid,
            cpu: d.cpu,
            cpumask_gen: d.cpumask_gen,
            enq_seq: d.enq_seq,
        }));
    }

    /// Drops state of tasks not seen for a while (exited, or asleep for long).
    pub fn forget_idle(&mut self, now_ns: u64) {
        let horizon = now_ns.saturating_sub(self.cfg.forget_after_ns);
        let mut dropped_interactive = 0;
        self.tasks.retain(|_, t| {
            let keep = t.last_seen_ns >= horizon;
            if !keep && t.interactive {
                dropped_interactive += 1;
            }
            keep
        });
        self.nr_interactive -= dropped_interactive;
    }

    pub fn tracked_tasks(&self) -> usize {
        self.tasks.len()
    }
}

#[cfg(test)]
mod tests;
