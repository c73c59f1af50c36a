/* SPDX-License-Identifier: GPL-2.0 */
/* Per-task state kept by BPF, and which tasks never wait for user space. */
#ifndef __GEARSHIFT_TASK_BPF_H
#define __GEARSHIFT_TASK_BPF_H

struct task_ctx {
	/* Bumped on every enqueue to user space; dispatches must match it. */
	u64 enq_seq;
	/* Bumped by ops.set_cpumask: a dispatch made with an older mask is redirected. */
	u32 cpumask_gen;
	/* When the task was last enqueued (how long it has been waiting). */
	u64 enq_at;
	/* When it last entered a DSQ: at enqueue, or when user space's decision arrived. */
	u64 queued_at;
	/* NUMA node the task belongs on (topo.bpf.h); -1 until it first runs. */
	s32 home_node;
	/* When the task last woke up: the start of its current burst. */
	u64 woke_at;
	/* When the task last started running, and last stopped (its sleep began then). */
	u64 last_run_ns;
	u64 stopped_ns;
	/* CPU time since the task last woke up, and its running average per wakeup (ns). */
	u64 awake_ns;
	u64 avg_burst_ns;
	/*
	 * The policy's weighted vruntime of the task as of its CPU time @vruntime_exec
	 * (p->se.sum_exec_runtime), from its latest decision @policy_seen_at, carried on by
	 * requeue_slice_end(); @sent_exec: the CPU time in the latest enqueue sent to user space.
	 */
	u64 vruntime;
	u64 vruntime_exec;
	u64 sent_exec;
	u64 policy_seen_at;
	/* The policy's last classification (inherited by forked children). */
	bool interactive;
	/* Queued in GS_PRIO_DSQ, whose deadlines are in real time (prio_deadline()). */
	bool in_prio;
	/* Set by ops.select_cpu for ops.runnable: woken synchronously (SCX_WAKE_SYNC), by a
	 * waker about to wait for its answer. */
	bool sync_wakeup;
	/* The current burst began with such a wakeup. */
	bool burst_sync;
	/* Share of its recent wakeups that were synchronous, out of GS_SYNC_SCALE
	 * (message_driven()): a plain mean over its first GS_SYNC_SAMPLES wakeups, then
	 * exponentially averaged; @nr_kind_samples counts those first ones. */
	u32 avg_sync;
	u32 nr_kind_samples;
	/* The current burst is latency-critical (latency.bpf.h). */
	bool latency_critical;
	/* ops.select_cpu kept this wakeup on the CPU it runs on, to take it from the task
	 * there (latency_wake_here()). */
	bool wake_here;
	/* How its queued latency-critical burst was given a CPU (enum latency_path), for the
	 * stats when it starts running; LATENCY_NONE when none is queued. */
	u8 latency_path;
	/* Time between the task's wakeups, exponentially averaged (ns); 0 until it woke twice. */
	u64 avg_period_ns;
	/* Its record of periodic wakeups from interruptible sleeps (latency.bpf.h: periodic_score). */
	u32 periodic_score;
	/* Its cgroups' combined cpu.weight (weight.bpf.h), as of weights_gen cgroup_gen. */
	u32 cgroup_weight;
	u32 cgroup_gen;
	/* In the foreground cgroup (foreground.bpf.h), as of foreground_cgid @foreground_of
	 * and its own cgroup v2 @foreground_cgid_seen. */
	bool foreground;
	u64 foreground_of;
	u64 foreground_cgid_seen;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctx_stor SEC(".maps");

static struct task_ctx *lookup_task_ctx(const struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctx_stor, (struct task_struct *)p, 0, 0);
}

/*
 * Time from @t to @now (ns), 0 if @t is later. scx_bpf_now() is each CPU's own clock, and a
 * time another CPU recorded can be slightly ahead of it: an unsigned difference would then
 * wrap to an enormous wait.
 */
static inline u64 time_between(u64 t, u64 now)
{
	return time_after(now, t) ? now - t : 0;
}

/* Time since @t (ns), as time_between(). */
static inline u64 elapsed_since(u64 t)
{
	return time_between(t, scx_bpf_now());
}

/* avg_sync's scale, and the share of synchronous wakeups from which a task is message-driven. */
#define GS_SYNC_SCALE 1024
#define GS_MESSAGE_DRIVEN_MIN (GS_SYNC_SCALE * 3 / 4)
/* avg_sync is a plain mean over this many first wakeups, then weighs each new one 1/this. */
#define GS_SYNC_SAMPLES 8

/*
 * A wakeup of @tctx's task (ops.runnable): @sync, from a waker about to wait (SCX_WAKE_SYNC).
 * A new task's first wakeups count in full rather than against a starting value of 0: an
 * average decaying from 0 took a message storm's new tasks 11 wakeups to turn, and a loop of
 * hackbench runs (160 new tasks each) kept GS_PRIO_DSQ full of them; a frame that lost its
 * latency-critical rank waited there behind them for 0.3 s.
 */
static void note_wakeup_kind(struct task_ctx *tctx, bool sync)
{
	u32 n = tctx->nr_kind_samples < GS_SYNC_SAMPLES ? ++tctx->nr_kind_samples : GS_SYNC_SAMPLES;

	tctx->avg_sync = (tctx->avg_sync * (n - 1) + (sync ? GS_SYNC_SCALE : 0)) / n;
}

/*
 * Whether @tctx's task is woken mostly by messages: at least three of four recent wakeups
 * synchronous (a pipe, a socket, a child's exit: a message storm's tasks, make and the
 * compiler drivers waiting on their children). Such a task is never interactive, however
 * often it sleeps (main.bpf.c: enqueue_interactive(); the policy alike). Classed
 * interactive by their switch rate, a storm's tasks were each queued and given an idle CPU
 * the moment they woke, and hackbench made 1.2-1.4x EEVDF's context switches; classed
 * regular, their wakeups wait for the policy, which lets a waker write its messages before
 * the readers run, and it made about half as many (docs/benchmarks.md, twenty-seventh
 * pass). Frames, audio and input are woken by timers and devices, asynchronously, and keep
 * their class; the foreground app's wakeups stay interactive whatever woke them
 * (foreground.bpf.h).
 */
static inline bool message_driven(const struct task_ctx *tctx)
{
	return tctx->avg_sync >= GS_MESSAGE_DRIVEN_MIN;
}

/* Number of possible CPU ids (set in ops.init). */
static u64 nr_cpu_ids;

/* Thread id of the user-space scheduling loop (set before load). */
const volatile s32 usersched_tid;

/* Its process: the scheduler's other threads (control connections, signal handling). */
const volatile s32 usersched_tgid;

static inline bool is_usersched(const struct task_struct *p)
{
	return p->pid == usersched_tid;
}

/*
 * Another thread of the scheduler's process. The scheduling loop shares locks with these
 * (the allocator's, stdout's, the mm's), so they must never wait on it: one preempted while
 * holding such a lock and queued to user space would leave the loop waiting for a thread
 * only the loop can dispatch (a control request under load stalled every CPU for 30 s).
 */
static inline bool is_usersched_helper(const struct task_struct *p)
{
	return usersched_tgid && p->tgid == usersched_tgid && p->pid != usersched_tid;
}

static inline bool is_kthread(const struct task_struct *p)
{
	return p->flags & PF_KTHREAD;
}

static inline bool comm_starts_with(const struct task_struct *p, const char *prefix, u32 len)
{
	return !bpf_strncmp(p->comm, len, prefix);
}

/*
 * Kernel threads the user-space scheduler itself depends on: per-CPU kthreads (ksoftirqd,
 * rcu, workers bound to a CPU) and the memory-management threads that must make progress for
 * user space to make progress (kswapd, khugepaged, kcompactd). They never wait for it.
 */
static bool is_critical_kthread(const struct task_struct *p)
{
	if (!is_kthread(p))
		return false;
	if (p->nr_cpus_allowed == 1 || (p->flags & PF_KSWAPD))
		return true;
	return comm_starts_with(p, "khugepaged", 10) || comm_starts_with(p, "kcompactd", 9) ||
	       comm_starts_with(p, "kswapd", 6);
}

#endif
