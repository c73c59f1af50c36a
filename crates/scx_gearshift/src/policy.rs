//! The user-space scheduling policy, free of any BPF or kernel dependency (host-testable).
//!
//! - Ordering: each task carries a weighted vruntime; its deadline adds the CPU time it used
//!   since it last slept, up to ten of the time slices handed out now, so tasks that run long
//!   without sleeping line up behind those that sleep often. Tasks leave in deadline order.
//! - Interactive tasks, classified from their rate of voluntary context switches (an EWMA),
//!   are not charged for the current burst: their deadline is their vruntime. BPF queues them
//!   in its interactive DSQ, ordered by a real-time deadline of its own (when their burst
//!   began, i.e. their wakeup, plus their expected burst), the same order as the ones it
//!   queues itself on wakeup, with a slice that covers the rest of that burst; this deadline
//!   only orders tasks pinned to one CPU.
//! - Sleepers get at most one slice of credit, so waking up never buys a monopoly; a
//!   message-driven one in a crowded queue gets at most what it slept.
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
/// The most CPU time since its last wakeup a regular task's deadline is charged for, in time
/// slices as long as the ones handed out now: with many waiters slices shrink, and so does the
/// charge, so a hog's deadline stays within a few rounds of the queue instead of landing
/// behind every fresh task for 50 ms. BPF charges its own requeues alike
/// (`GS_BURST_CHARGE_SLICES`).
pub const BURST_CHARGE_SLICES: u64 = 10;

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
    /// How long the task slept before this wakeup; 0 for any other enqueue.
    pub slept_ns: u64,
    /// BPF knows the task as interactive (last classification, or inherited at fork).
    pub interactive_hint: bool,
    /// Most of the task's recent wakeups were synchronous (messages through pipes and
    /// sockets): it is not interactive, however often it sleeps.
    pub message_driven: bool,
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
    /// The task's weighted vruntime, from which BPF carries its deadline on while it queues
    /// the task's ended slices itself.
    pub vruntime: u64,
    /// Served before regular tasks (within the starvation bound).
    pub interactive: bool,
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
            interactive_nvcsw_per_s: 2,
            weight_cap: 1000,
            forget_after_ns: 10 * NSEC_PER_SEC,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct TaskState {
    pid: i32,
    vruntime: u64,
    last_sum_exec: u64,
    /// CPU time since the task last woke up.
    burst_ns: u64,
    window_start_ns: u64,
    window_nvcsw: u64,
    /// Voluntary switches per second, exponentially averaged; None until a window ended.
    nvcsw_rate: Option<u64>,
    interactive: bool,
    last_seen_ns: u64,
    // The latest enqueue, as BPF sent it, waiting for a decision.
    queued: bool,
    queued_arrival: u32,
    cpu: i32,
    cpumask_gen: u32,
    enq_seq: u64,
    deadline: u64,
}

/// Shortest window over which a switch rate is measured; shorter ones are too noisy.
const RATE_WINDOW_NS: u64 = 100_000_000;

/// A queue entry packed into one integer, so ordering is one comparison: deadline first, then
/// arrival (FIFO among equals), then the task's slot in the table.
fn queue_key(deadline: u64, arrival: u32, slot: u32) -> u128 {
    (deadline as u128) << 64 | (arrival as u128) << 32 | slot as u128
}

fn unpack_key(key: u128) -> (u32, u32) {
    ((key >> 32) as u32, key as u32)
}

pub struct Policy {
    cfg: PolicyConfig,
    /// pid -> slot in `slots`.
    index: FxHashMap<i32, u32>,
    slots: Vec<TaskState>,
    free_slots: Vec<u32>,
    queue: BinaryHeap<Reverse<u128>>,
    nr_pending: usize,
    arrivals: u32,
    /// Lower bound of the vruntime of tasks dispatched so far.
    min_vruntime: u64,
    nr_interactive: u64,
    nr_scheduled: u64,
    /// The time slice of the latest decisions: the unit a burst's charge is capped in.
    last_slice_ns: u64,
}

impl Policy {
    /// A policy with room for `capacity` tasks before its tables grow.
    pub fn new(cfg: PolicyConfig, capacity: usize) -> Self {
        Self {
            cfg,
            index: FxHashMap::with_capacity_and_hasher(capacity, Default::default()),
            slots: Vec::with_capacity(capacity),
            free_slots: Vec::with_capacity(capacity),
            queue: BinaryHeap::with_capacity(capacity),
            nr_pending: 0,
            arrivals: 0,
            min_vruntime: 0,
            nr_interactive: 0,
            nr_scheduled: 0,
            last_slice_ns: cfg.slice_max_ns,
        }
    }

    pub fn config(&self) -> &PolicyConfig {
        &self.cfg
    }

    /// Tasks received and not yet dispatched.
    pub fn pending(&self) -> usize {
        self.nr_pending
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
        self.index
            .get(&pid)
            .is_some_and(|&slot| self.slots[slot as usize].interactive)
    }

    /// State of a task first seen (or seen again under a recycled pid) as `t`.
    /// A new task starts as BPF knows it: children of interactive tasks start interactive,
    /// until their own switch rate has been measured (and unless BPF finds them
    /// message-driven: `enqueue()` decides that on every enqueue).
    fn fresh_state(t: &QueuedTask, vruntime: u64) -> TaskState {
        TaskState {
            pid: t.pid,
            vruntime,
            last_sum_exec: t.sum_exec_runtime,
            window_start_ns: t.enq_ns,
            window_nvcsw: t.nvcsw,
            interactive: t.interactive_hint,
            ..TaskState::default()
        }
    }

    fn slot_of(&mut self, t: &QueuedTask, floor: u64) -> u32 {
        if let Some(&slot) = self.index.get(&t.pid) {
            return slot;
        }
        let state = Self::fresh_state(t, floor);
        self.nr_interactive += state.interactive as u64;
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot as usize] = state;
                slot
            }
            None => {
                self.slots.push(state);
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(t.pid, slot);
        slot
    }

    /// Takes a task BPF queued.
    pub fn enqueue(&mut self, t: &QueuedTask) {
        let charge_cap = self.last_slice_ns * BURST_CHARGE_SLICES;
        let crowded = self.last_slice_ns < self.cfg.slice_max_ns;
        let min_vruntime = self.min_vruntime;
        let full_floor = min_vruntime.saturating_sub(self.cfg.slice_max_ns);
        let slot = self.slot_of(t, full_floor);
        let cfg = &self.cfg;
        let state = &mut self.slots[slot as usize];
        // A recycled pid shows up as a counter going backwards: start over.
        if t.sum_exec_runtime < state.last_sum_exec || t.nvcsw < state.window_nvcsw {
            if state.interactive {
                self.nr_interactive -= 1;
            }
            let queued = (state.queued, state.queued_arrival);
            *state = Self::fresh_state(t, full_floor);
            (state.queued, state.queued_arrival) = queued;
            self.nr_interactive += state.interactive as u64;
        }
        // A sleeper's credit is at most one slice, and for a message-driven wakeup in a crowd
        // (more than one task waiting per CPU: slices are cut short) at most what it slept:
        // with a whole slice, every reader of a message storm, woken microseconds after it
        // last ran, went to the head of the queue, ran while its writer still wrote, read one
        // message and slept again (at 4 vCPUs twice EEVDF's voluntary switches and 1.9x its
        // hackbench time). make and a compiler driver, woken by a child's exit after sleeping
        // through its whole run, keep theirs: without it a 4-vCPU build took 1.2x the time.
        let credit = if t.wakeup && t.message_driven && crowded {
            t.slept_ns.min(cfg.slice_max_ns)
        } else {
            cfg.slice_max_ns
        };
        let floor = min_vruntime.saturating_sub(credit);
        let ran = t.sum_exec_runtime - state.last_sum_exec;
        state.last_sum_exec = t.sum_exec_runtime;
        state.last_seen_ns = t.enq_ns;
        let weight = t.weight.clamp(1, cfg.weight_cap);
        state.vruntime = (state.vruntime + ran * DEFAULT_WEIGHT / weight).max(floor);
        state.burst_ns = if t.wakeup { 0 } else { state.burst_ns + ran };

        let mut interactive = state.interactive;
        let window = t.enq_ns.saturating_sub(state.window_start_ns);
        if window >= RATE_WINDOW_NS {
            let rate = (t.nvcsw - state.window_nvcsw) * NSEC_PER_SEC / window;
            // The first window is the first measurement, not a step from zero: averaged
            // with 0, a task switching 5 times a second read as 1 and lost its class. The
            // policy sees a frame only when a burst ran past its latency-critical budget, so
            // a new frame's first window may span a wait it did not cause: declassified so
            // after a 0.3 s wait under a message storm, a 60 Hz frame then queued with the
            // storm and ran 79 of its 600 periods.
            let rate = state.nvcsw_rate.map_or(rate, |old| (old * 3 + rate) / 4);
            state.nvcsw_rate = Some(rate);
            state.window_start_ns = t.enq_ns;
            state.window_nvcsw = t.nvcsw;
            interactive = rate >= cfg.interactive_nvcsw_per_s;
        }
        // A message storm's tasks switch more often than any desktop task: their rate says
        // nothing about latency (BPF's message_driven(), task.bpf.h).
        interactive &= !t.message_driven;
        if interactive != state.interactive {
            state.interactive = interactive;
            if interactive {
                self.nr_interactive += 1;
            } else {
                self.nr_interactive -= 1;
            }
        }

        let charge = if state.interactive {
            0
        } else {
            // Capped so a long-running task still gets its turn among fresh ones.
            state.burst_ns.min(charge_cap) * DEFAULT_WEIGHT / weight
        };
        state.deadline = state.vruntime + charge;
        state.cpu = if t.nr_cpus_allowed == 1 {
            t.cpu
        } else {
            CPU_ANY
        };
        state.cpumask_gen = t.cpumask_gen;
        state.enq_seq = t.enq_seq;
        // A newer enqueue supersedes one still waiting here: its queue entry goes stale.
        if !state.queued {
            self.nr_pending += 1;
        }
        state.queued = true;
        self.arrivals = self.arrivals.wrapping_add(1);
        state.queued_arrival = self.arrivals;
        self.queue
            .push(Reverse(queue_key(state.deadline, self.arrivals, slot)));
    }

    /// Takes in the highest vruntime BPF gave a task whose ended slices it queued itself:
    /// sleepers' credit is bounded against those tasks too, though the policy does not see
    /// every one of their slices.
    pub fn note_kernel_vruntime(&mut self, vruntime: u64) {
        self.min_vruntime = self.min_vruntime.max(vruntime);
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
        let slice_ns = self.slice_ns(self.nr_pending as u64 + kernel_waiting);
        self.last_slice_ns = slice_ns;
        self.pop(slice_ns)
    }

    /// Hands every pending decision to `send`, most urgent first, until it returns false (the
    /// decision is then kept for later). All leave together, so they share one time slice,
    /// sized for everything waiting now.
    pub fn dispatch_all(&mut self, kernel_waiting: u64, mut send: impl FnMut(&Decision) -> bool) {
        let slice_ns = self.slice_ns(self.nr_pending as u64 + kernel_waiting);
        self.last_slice_ns = slice_ns;
        while let Some(decision) = self.pop(slice_ns) {
            if !send(&decision) {
                self.requeue(&decision);
                return;
            }
        }
    }

    #[inline(always)]
    fn pop(&mut self, slice_ns: u64) -> Option<Decision> {
        loop {
            let Reverse(key) = self.queue.pop()?;
            let (arrival, slot) = unpack_key(key);
            let state = &mut self.slots[slot as usize];
            if !state.queued || state.queued_arrival != arrival {
                continue;
            }
            state.queued = false;
            self.nr_pending -= 1;
            self.min_vruntime = self.min_vruntime.max(state.vruntime);
            self.nr_scheduled += 1;
            return Some(Decision {
                pid: state.pid,
                cpu: state.cpu,
                cpumask_gen: state.cpumask_gen,
                enq_seq: state.enq_seq,
                slice_ns,
                vtime: state.deadline,
                vruntime: state.vruntime,
                interactive: state.interactive,
            });
        }
    }

    /// Puts back a decision that could not be delivered (the dispatch ring was full).
    pub fn requeue(&mut self, d: &Decision) {
        let Some(&slot) = self.index.get(&d.pid) else {
            return;
        };
        let state = &mut self.slots[slot as usize];
        if state.queued {
            // Superseded meanwhile by a newer enqueue, which is queued already.
            return;
        }
        self.nr_scheduled -= 1;
        self.nr_pending += 1;
        state.queued = true;
        // Ahead of everything with the same deadline: it was due first.
        state.queued_arrival = 0;
        self.queue.push(Reverse(queue_key(d.vtime, 0, slot)));
    }

    /// Drops state of tasks not seen for a while (exited, or asleep for long).
    pub fn forget_idle(&mut self, now_ns: u64) {
        let horizon = now_ns.saturating_sub(self.cfg.forget_after_ns);
        let slots = &self.slots;
        let free = &mut self.free_slots;
        let mut dropped_interactive = 0;
        self.index.retain(|_, &mut slot| {
            let t = &slots[slot as usize];
            let keep = t.queued || t.last_seen_ns >= horizon;
            if !keep {
                free.push(slot);
                if t.interactive {
                    dropped_interactive += 1;
                }
            }
            keep
        });
        self.nr_interactive -= dropped_interactive;
    }

    pub fn tracked_tasks(&self) -> usize {
        self.index.len()
    }
}

#[cfg(test)]
mod tests;
