/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one contract between scx_gearshift's BPF dispatcher and its Rust policy.
 * Every struct and constant crossing the boundary is defined here; bindgen turns it into Rust.
 */
#ifndef __GEARSHIFT_INTF_H
#define __GEARSHIFT_INTF_H

#ifndef __VMLINUX_H__
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed int s32;
typedef signed long long s64;
#endif

#define GS_COMM_LEN 16

enum gs_consts {
	/* Upper bound of possible CPU ids: per-CPU DSQ ids are 0..GS_MAX_CPUS-1. */
	GS_MAX_CPUS		= 4096,
	/* DSQ shared by all CPUs, ordered by the deadline user space assigns. */
	GS_SHARED_DSQ		= GS_MAX_CPUS,
	/* DSQ holding only the user-space scheduler task. */
	GS_SCHED_DSQ		= GS_MAX_CPUS + 1,
	/* Shared DSQ of interactive tasks, served before GS_SHARED_DSQ (within the starvation bound). */
	GS_PRIO_DSQ		= GS_MAX_CPUS + 2,
	/* Shared DSQ of latency-critical bursts (timer- or device-woken, short, periodic),
	 * served before every other DSQ (within the starvation bound). */
	GS_LAT_DSQ		= GS_MAX_CPUS + 3,
	/* Capacity (entries) of the queued-task ring buffer. */
	GS_MAX_QUEUED		= 8192,
	/* Heartbeat: user space runs at least this often, even with nothing queued. */
	GS_HEARTBEAT_NS		= 250 * 1000 * 1000,
	/* Longest heartbeat period while the machine is idle (a quarter of the watchdog
	 * timeout at most: the scheduler waits in its DSQ, runnable, between heartbeats). */
	GS_HEARTBEAT_IDLE_MAX_NS = 1000 * 1000 * 1000,
	/* Period of the load sampling behind fifo and low-power decisions. */
	GS_LOAD_TICK_NS		= 10 * 1000 * 1000,
	/* Fixed-point scale of load averages. */
	GS_LOAD_SCALE		= 256,
	/* Upper bound of NUMA node ids BPF keeps placement state for. */
	GS_MAX_NODES		= 64,
	/* Node id of a CPU the topology does not know (not online at attach). */
	GS_NO_NODE		= 0xffff,
	/*
	 * Defaults of the tunables: scx_gearshift's command line (cli.rs) and the rodata
	 * main.bpf.c starts with (user space writes the values in effect before load).
	 */
	GS_DFL_SLICE_MAX_NS	= 5 * 1000 * 1000,
	GS_DFL_SLICE_MIN_NS	= 500 * 1000,
	GS_DFL_STARVATION_NS	= 10 * 1000 * 1000,
	GS_DFL_WEIGHT_CAP	= 1000,
	/*
	 * The most CPU time since its last wakeup a regular task's deadline is charged for, in
	 * time slices as long as the ones handed out now (shorter with more waiters): the policy
	 * (policy.rs) and BPF's own requeues charge alike.
	 */
	GS_BURST_CHARGE_SLICES	= 10,
	/* A latency-critical burst queued this long before it ran counts as slow (stats):
	 * one scheduler tick at HZ=250, a frame's whole margin at 144 Hz. */
	GS_LATENCY_SLOW_NS	= 4 * 1000 * 1000,
};

/* Live modes (gearshift_types::Mode), written by user space into `mode`. */
enum gs_mode {
	GS_MODE_INTERACTIVE	= 0,
	GS_MODE_FIFO		= 1,
	GS_MODE_LOWPOWER	= 2,
};

/* Target CPU in a dispatch: run on the first allowed CPU that frees up. */
#define GS_CPU_ANY (-1)

/* Flags of a queued task (gs_queued_task.flags). */
enum gs_task_flags {
	/* The task woke up (as opposed to being preempted or yielding). */
	GS_TASK_WAKEUP		= 1 << 0,
	/* Kernel thread. */
	GS_TASK_KTHREAD		= 1 << 1,
	/* Known interactive to BPF: last classified so, or forked by an interactive task. */
	GS_TASK_INTERACTIVE	= 1 << 2,
	/* Woken mostly by messages (task.bpf.h, message_driven()): never interactive. */
	GS_TASK_MESSAGE_DRIVEN	= 1 << 3,
};

/* Flags of a dispatch decision (gs_dispatched_task.flags). */
enum gs_dispatch_flags {
	/* The policy classifies the task interactive: it goes to GS_PRIO_DSQ. */
	GS_DISPATCH_INTERACTIVE	= 1 << 0,
};

/*
 * A task that became runnable, sent by BPF to user space through the `queued` ring buffer.
 */
struct gs_queued_task {
	s32 pid;
	/* CPU the task last ran on. */
	s32 cpu;
	/* Generation of the task's cpumask when queued (bumped by ops.set_cpumask). */
	u32 cpumask_gen;
	u32 nr_cpus_allowed;
	/* Sequence number of this enqueue; a dispatch must echo it back. */
	u64 enq_seq;
	/* enum gs_task_flags. */
	u64 flags;
	/* Total CPU time consumed (ns), p->se.sum_exec_runtime. */
	u64 sum_exec_runtime;
	/* Voluntary context switches so far, p->nvcsw. */
	u64 nvcsw;
	/* sched_ext weight, 1..10000 (100 = nice 0). */
	u64 weight;
	/* Time of the enqueue (scx_bpf_now, ns). */
	u64 enq_ns;
	/* How long the task slept before this wakeup (ns); 0 for any other enqueue. */
	u64 slept_ns;
	char comm[GS_COMM_LEN];
};

/*
 * A scheduling decision, sent by user space to BPF through the `dispatched` user ring buffer.
 */
struct gs_dispatched_task {
	s32 pid;
	/* Target CPU, or GS_CPU_ANY. */
	s32 cpu;
	/* cpumask generation the decision was made with (from gs_queued_task). */
	u32 cpumask_gen;
	/* enum gs_dispatch_flags. */
	u32 flags;
	/* Echo of gs_queued_task.enq_seq: stale decisions are dropped. */
	u64 enq_seq;
	u64 slice_ns;
	/* Deadline: the task's position in its DSQ. */
	u64 vtime;
	/* The task's weighted vruntime in the policy: BPF carries it on while it queues the
	 * task's ended slices itself (gs_counters.nr_slice_requeues). */
	u64 vruntime;
};

/*
 * Counters BPF maintains for stats (in .bss, read by user space).
 */
struct gs_counters {
	/* Tasks sent to user space. */
	u64 nr_queued;
	/* Tasks currently running on a CPU (the scheduler itself excluded). */
	u64 nr_running;
	u64 nr_online_cpus;
	/* Dispatches decided by user space and placed as asked. */
	u64 nr_user_dispatches;
	/* Dispatches done directly by BPF (idle CPU fast path, kthreads, congestion). */
	u64 nr_kernel_dispatches;
	/* User dispatches dropped: a newer enqueue of the task superseded them. */
	u64 nr_cancel_dispatches;
	/* User dispatches redirected to the shared DSQ: their cpumask changed meanwhile. */
	u64 nr_bounce_dispatches;
	/* User dispatches for tasks that no longer exist. */
	u64 nr_failed_dispatches;
	/* Ring buffer full: tasks dispatched by BPF without user space. */
	u64 nr_sched_congested;
	/* Times the user-space scheduler was dispatched to run. */
	u64 nr_usersched_runs;
	/* Tasks waiting in the shared and interactive DSQs at the last dispatch. */
	u64 nr_shared_waiting;
	/* Times regular tasks went ahead of interactive ones because they waited too long. */
	u64 nr_starvation_guard;
	/* Interactive tasks BPF queued itself (wakeups, slices ending early in a burst). */
	u64 nr_interactive_wakeups;
	/* CPUs taken from non-interactive tasks for interactive ones. */
	u64 nr_preemptions;
	/* Wakeups BPF found latency-critical and queued ahead of everything else. */
	u64 nr_latency_wakeups;
	/* In fifo mode: time with FIFO dispatch active, and with the interactive policy (ns). */
	u64 fifo_ns;
	u64 fifo_overload_ns;
	/* Tasks BPF dispatched in FIFO order. */
	u64 nr_fifo_dispatches;
	/* FIFO dispatch active right now (0/1). */
	u64 fifo_active;
	/* CPUs tasks are packed onto (low-power mode; all online CPUs otherwise). */
	u64 nr_active_cpus;
	/* Idle CPUs the load tick woke for a task left waiting too long (should stay rare). */
	u64 nr_rescue_kicks;
	/* Slices a regular task ran in a row ahead of a lighter one (weight.bpf.h). */
	u64 nr_weight_turns;
	/* Regular tasks whose slice ended, queued again by BPF at the policy's deadline without
	 * a user-space round trip (dispatch.bpf.h: requeue_slice_end()). */
	u64 nr_slice_requeues;
	/* Enqueues of foreground tasks (foreground.bpf.h), each ordered with the boost. */
	u64 nr_foreground_boosts;
	/*
	 * Latency-critical bursts by how they got a CPU (latency.bpf.h): the CPU they woke on,
	 * taken at once; an idle CPU woken for them; a CPU preempted for them; none of these
	 * (they waited for a CPU to look for work). nr_latency_slow_*: of those, the ones that
	 * started running GS_LATENCY_SLOW_NS or more after they were queued.
	 */
	u64 nr_latency_local;
	u64 nr_latency_idle;
	u64 nr_latency_preempt;
	u64 nr_latency_waited;
	u64 nr_latency_slow_local;
	u64 nr_latency_slow_idle;
	u64 nr_latency_slow_preempt;
	u64 nr_latency_slow_waited;
	/* Bursts that ran their whole latency budget without sleeping and lost the rank. */
	u64 nr_latency_rank_lost;
	/* Times a CPU passed over a waiting latency-critical burst for the starvation guard. */
	u64 nr_latency_held;
	/* Ended slices of a proven periodic task's long burst queued as interactive while it
	 * catches up (within 3/4 of a CPU; latency.bpf.h: latency_catching_up()). */
	u64 nr_latency_catch_ups;
	/* CPUs that went offline or came online while attached (hotplug.bpf.h). */
	u64 nr_hotplug_events;
	/* Tasks moved from the DSQ of a CPU that went offline to the shared DSQ. */
	u64 nr_hotplug_requeues;
};

#endif /* __GEARSHIFT_INTF_H */
