/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wakeup preemption: an interactive task that wakes up while every CPU it may use is busy
 * takes a CPU from a task that is not interactive, instead of waiting for a slice to end.
 */
#ifndef __GEARSHIFT_PREEMPT_BPF_H
#define __GEARSHIFT_PREEMPT_BPF_H

/* Live setting, written by user space. */
volatile bool preempt_enabled = true;

struct cpu_ctx {
	/* What runs there now may not be preempted for an interactive task. */
	bool protected;
	/* When it started running: a task keeps the CPU for at least slice_min_ns. */
	u64 started_ns;
	/* A task counted in counters.nr_running runs here. */
	bool counted;
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
 * Records the task starting on @cpu: whether it may be preempted, and whether it counts as a
 * running task (the scheduler itself does not). Counting per CPU keeps nr_running exact even
 * for tasks that were already running when the scheduler attached.
 */
static void note_running(s32 cpu, bool protected, bool counts)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	if (!cctx)
		return;
	cctx->protected = protected;
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
	cctx->protected = true;
	if (cctx->counted) {
		cctx->counted = false;
		stat_dec(nr_running);
		node_note_running(cpu, -1);
	}
}

static bool is_victim(s32 cpu, const struct task_struct *p)
{
	struct cpu_ctx *cctx;

	if (cpu < 0 || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		return false;
	cctx = lookup_cpu_ctx(cpu);
	/* Preempting a task that only just started buys little and thrashes the CPU. */
	return cctx && !cctx->protected && scx_bpf_now() - cctx->started_ns >= slice_min_ns;
}

/*
 * Kicks a CPU running a non-interactive task that @p may use, its previous CPU first.
 * False when preemption is off or there is no such CPU.
 */
static bool preempt_for(struct task_struct *p, s32 prev_cpu, s32 nr_cpus)
{
	s32 cpu;

	if (!preempt_enabled)
		return false;
	if (is_victim(prev_cpu, p)) {
		scx_bpf_kick_cpu(prev_cpu, SCX_KICK_PREEMPT);
		stat_inc(nr_preemptions);
		return true;
	}
	bpf_for(cpu, 0, nr_cpus) {
		if (cpu >= GS_MAX_CPUS)
			break;
		if (is_victim(cpu, p)) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
			stat_inc(nr_preemptions);
			return true;
		}
	}
	return false;
}

#endif
