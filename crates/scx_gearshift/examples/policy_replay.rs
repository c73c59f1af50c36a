//! Replays a synthetic stream of queued tasks through the policy, the way the scheduling loop
//! does (batches in, decisions out), and reports allocations per task. `cargo xtask
//! bench-policy` runs it under callgrind twice to get instructions per task.
//!
//! Usage: policy_replay [--events N] [--tasks T]

use scx_gearshift::alloc::{GlobalArena, ARENA};
use scx_gearshift::policy::{Policy, PolicyConfig, QueuedTask};

#[global_allocator]
static GLOBAL: GlobalArena = GlobalArena;

const BATCH: usize = 8;

struct Stream {
    tasks: Vec<QueuedTask>,
    clock_ns: u64,
    step: u64,
}

impl Stream {
    fn new(n: usize) -> Self {
        let tasks = (0..n)
            .map(|i| QueuedTask {
                pid: 1000 + i as i32,
                cpu: (i % 8) as i32,
                nr_cpus_allowed: if i.is_multiple_of(16) { 1 } else { 8 },
                weight: [100, 100, 100, 1024, 10][i % 5],
                ..QueuedTask::default()
            })
            .collect();
        Self {
            tasks,
            clock_ns: 0,
            step: 0,
        }
    }

    /// The next task to become runnable: a third are interactive (short runs, many voluntary
    /// switches), the rest CPU-bound.
    fn next(&mut self) -> QueuedTask {
        self.step += 1;
        self.clock_ns += 50_000;
        let n = self.tasks.len() as u64;
        let i = (self.step.wrapping_mul(7919) % n) as usize;
        let interactive = i.is_multiple_of(3);
        let t = &mut self.tasks[i];
        t.enq_seq += 1;
        t.enq_ns = self.clock_ns;
        t.sum_exec_runtime += if interactive { 40_000 } else { 2_000_000 };
        t.wakeup = interactive;
        if interactive {
            t.nvcsw += 1;
        }
        *t
    }
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.windows(2)
        .find(|w| w[0] == name)
        .and_then(|w| w[1].parse().ok())
        .unwrap_or(default)
}

/// The measured part: only the policy's work per event. `cargo xtask bench-policy` counts
/// the instructions executed inside this function.
#[inline(never)]
fn replay(policy: &mut Policy, events: &[QueuedTask]) -> u64 {
    let mut checksum = 0u64;
    for batch in events.chunks(BATCH) {
        for task in batch {
            policy.enqueue(task);
        }
        policy.dispatch_all(2, |d| {
            checksum = checksum.wrapping_add(d.vtime ^ d.slice_ns);
            true
        });
    }
    checksum
}

fn main() {
    let events = arg("--events", 200_000);
    let tasks = arg("--tasks", 512) as usize;
    let mut policy = Policy::new(
        PolicyConfig {
            nr_cpus: 8,
            ..PolicyConfig::default()
        },
        65536,
    );
    let mut stream = Stream::new(tasks);
    let warmup: Vec<QueuedTask> = (0..20_000).map(|_| stream.next()).collect();
    let measured: Vec<QueuedTask> = (0..events).map(|_| stream.next()).collect();
    // Warm-up: every task seen, tables at working size.
    replay(&mut policy, &warmup);
    let before = ARENA.allocations();
    let checksum = replay(&mut policy, &measured);
    let allocations = ARENA.allocations() - before;
    println!(
        "events={events} tasks={tasks} allocations={allocations} allocations_per_task={:.4} checksum={checksum}",
        allocations as f64 / events as f64
    );
}
