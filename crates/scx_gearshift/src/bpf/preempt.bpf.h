/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wakeup preemption: an interactive task that wakes up while every CPU it may use is busy
 * takes a CPU from a task that is not interactive, instead of waiting for a slice to end; or,
 * failing that, from an interactive task whose deadline is later than its own (an audio
 * callback does not wait out a frame's whole burst). A latency-critical burst
 * (latency.bpf.h) takes any CPU not running another one, at once; and one running a
 * latency-critical burst due later than its own. A CPU another burst has claimed (queued at
 * the head of its local DSQ, not started yet) is taken by none of them.
 */
#ifndef __GEARSHIFT_PREEMPT_BPF_H
#define __GEARSHIFT_PREEMPT_BPF_H

/* Live setting, written by user space. */
volatile bool preempt_enabled = true;

/* What runs on a CPU, as far as choosing a victim goes. */
enum run_kind {
	/* Regular work: any waking interactive task may take the CPU. */
	RUN_REGULAR,
	/* An interactive burst: taken for an earlier deadline, or by a latency-critical one. */
	RUN_INTERACTIVE,
	/* A latency-critical burst: taken only by one due earlier. */
	RUN_LATENCY,
	/* Kernel threads, the scheduler itself, or nothing: never taken. */
	RUN_PROTECTED,
};

struct cpu_ctx {
	/* enum run_kind of what runs there now. */
	u32 kind;
	/* Deadline of the burst running there (real time, as in GS_PRIO_DSQ); 0: none. */
	u64 prio_deadline;
	/* When it started running: a task keeps the CPU for at least slice_min_ns. */
	u64 started_ns;
	/* A task counted in counters.nr_running runs here. */
	bool counted;
	/* When it was last kicked out of idle, and when it last looked for work (ops.dispatch). */
	u64 kicked_ns;
	u64 dispatched_ns;
	/*
	 * When a latency-critical burst was last queued at the head of this CPU's local DSQ, and
	 * its deadline: until something starts running here (started_ns), the CPU is spoken for
	 * (latency.bpf.h, latency_claimed_for()).
	 */
	u64 claimed_ns;
	u64 claim_deadline;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GS_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctx_stor SEC(".maps");

static struct cpu_ctx *lookup_cpu_ctx(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_ctx_stor, &key);
}

/*
 * Wakes @cpu if it is idle, so that it looks for work (ops.dispatch()). Not from a CPU in
 * hotplug (on_cpu_in_hotplug()): the load tick and the heartbeat kick for what waits.
 */
static void kick_idle(s32 cpu)
{
	struct cpu_ctx *cctx;

	if (on_cpu_in_hotplug())
		return;
	if ((cctx = lookup_cpu_ctx(cpu)))
		cctx->kicked_ns = scx_bpf_now();
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

/* Whether @cpu was kicked and has not looked for work since: a wakeup is on its way. */
static bool wakeup_pending(s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	return cctx && time_after(cctx->kicked_ns, cctx->dispatched_ns);
}

/*
 * Records the task starting on @cpu: whether it may be preempted, and whether it counts as a
 * running task (the scheduler itself does not). Counting per CPU keeps nr_running exact even
 * for tasks that were already running when the scheduler attached.
 */
static void note_running(s32 cpu, enum run_kind kind, u64 prio_deadline, bool counts)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return;
	cctx->kind = kind;
	cctx->prio_deadline = prio_deadline;
	cctx->started_ns = scx_bpf_now();
	if (counts && !cctx->counted) {
		stat_inc(nr_running);
		node_note_running(cpu, 1);
	} else if (!counts && cctx->counted) {
		stat_dec(nr_running);
		node_note_running(cpu, -1);
	}
	cctx->counted = counts;
}

static void note_stopping(s32 cpu)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return;
	/* Until something runs here again, there is nothing to preempt. */
	cctx->kind = RUN_PROTECTED;
	cctx->prio_deadline = 0;
	if (cctx->counted) {
		cctx->counted = false;
		stat_dec(nr_running);
		node_note_running(cpu, -1);
	}
}

/*
 * Whether a CPU other than @cpu runs regular work, or with @interactive_too interactive work
 * as well: then that work is progressing, and the starvation guards (dispatch.bpf.h:
 * take_shared(), latency.bpf.h: take_latency()) need not put it first here. Their clocks only
 * move when a CPU takes such a task from a queue, not while one keeps running.
 */
static bool runs_elsewhere(s32 cpu, bool interactive_too)
{
	struct cpu_ctx *cctx;
	s32 i;

	bpf_for(i, 0, nr_cpu_ids) {
		if (i >= GS_MAX_CPUS)
			break;
		if (i == cpu || !(cctx = lookup_cpu_ctx(i)))
			continue;
		if (cctx->kind == RUN_REGULAR ||
		    (interactive_too && cctx->kind == RUN_INTERACTIVE))
			return true;
	}
	return false;
}

/* Marks @cpu as given to a waking burst due at @deadline that has not started running yet. */
static void claim_cpu(s32 cpu, u64 deadline)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return;
	cctx->claimed_ns = scx_bpf_now();
	cctx->claim_deadline = deadline;
}

/* Whether @cctx's CPU was given to a waking burst that has not started yet. */
static bool cpu_claimed(const struct cpu_ctx *cctx)
{
	return time_after(cctx->claimed_ns, cctx->started_ns);
}

/*
 * How good a victim @cpu is for @p, due at @deadline: 0 none, 1 a burst due later than @p,
 * 2 work @p's kind always goes ahead of (@latency: @p's burst is latency-critical).
 */
static u32 victim_rank(s32 cpu, const struct task_struct *p, u64 deadline, bool latency)
{
	struct cpu_ctx *cctx;
	bool later;

	if (cpu < 0 || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		return 0;
	/* A CPU low-power mode keeps out of service would not take @p from the queue. */
	if (!cpu_is_active(cpu) && reaches_active(p))
		return 0;
	cctx = lookup_cpu_ctx(cpu);
	/* A claimed CPU runs its claimer first, whatever a kick would ask of it. */
	if (!cctx || cctx->kind == RUN_PROTECTED || cpu_claimed(cctx))
		return 0;
	later = cctx->prio_deadline && time_after(cctx->prio_deadline, deadline);
	/*
	 * Latency-critical bursts are rare by construction (latency.bpf.h): they need no
	 * minimum run of their victim, which would make an audio callback wait a whole tick.
	 */
	if (latency)
		return cctx->kind != RUN_LATENCY ? 2 : (later ? 1 : 0);
	/* Preempting a task that only just started buys little and thrashes the CPU. */
	if (elapsed_since(cctx->started_ns) < slice_min_ns)
		return 0;
	if (cctx->kind == RUN_REGULAR)
		return 2;
	return cctx->kind == RUN_INTERACTIVE && later ? 1 : 0;
}

static void preempt_cpu(s32 cpu)
{
	if (on_cpu_in_hotplug())
		return;
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	stat_inc(nr_preemptions);
}

/*
 * Kicks a CPU @p may use that runs work @p goes ahead of (its previous CPU first), else one
 * running a burst due later than @p's (@p was just queued in GS_PRIO_DSQ or GS_LAT_DSQ, so
 * its dsq_vtime is its deadline). False when preemption is off or there is no such CPU.
 */
static bool preempt_for(struct task_struct *p, s32 prev_cpu, s32 nr_cpus, bool latency)
{
	u64 deadline = p->scx.dsq_vtime;
	s32 cpu, later = -1;
	u32 rank;

	if (!preempt_enabled)
		return false;
	rank = victim_rank(prev_cpu, p, deadline, latency);
	if (rank == 2) {
		preempt_cpu(prev_cpu);
		return true;
	}
	if (rank == 1)
		later = prev_cpu;
	bpf_for(cpu, 0, nr_cpus) {
		if (cpu >= GS_MAX_CPUS)
			break;
		rank = victim_rank(cpu, p, deadline, latency);
		if (rank == 2) {
			preempt_cpu(cpu);
			return true;
		}
		if (rank == 1 && later < 0)
			later = cpu;
	}
	if (later < 0)
		return false;
	preempt_cpu(later);
	return true;
}

#endif
