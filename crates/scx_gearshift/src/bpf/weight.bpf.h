/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Weights: a task's share of the CPU follows its nice level and its cgroup's cpu.weight (a
 * systemd slice's CPUWeight=, GNOME's app scopes), as under the kernel's own scheduler.
 *
 * A task's weight is its nice weight times the cpu.weight of each cgroup above it, relative
 * to the default 100 at every level: a build reniced to 10, or in a slice at weight 10, counts
 * one tenth. (The kernel divides among siblings; with siblings at the default weight, as on a
 * desktop, the shares are the same.)
 *
 * Two things carry the weight. The deadlines: the policy's vruntime and the interactive
 * deadlines advance by CPU time divided by the weight. And the turns: CPU-bound tasks that
 * share a CPU take turns, because the end of a slice hands the CPU to the task waiting before
 * the one that ran is queued again, so the order of the queue cannot give a heavier task more
 * of them; nor can shorter slices for lighter tasks, as the kernel ends a slice only at a tick
 * (4 ms at HZ=250, about a whole slice). So a heavier task whose slice ends keeps the CPU for
 * as many slices in a row as it outweighs the task that would replace it.
 */
#ifndef __GEARSHIFT_WEIGHT_BPF_H
#define __GEARSHIFT_WEIGHT_BPF_H

/* The weight of nice 0 and of a cgroup left at its default cpu.weight. */
#define GS_WEIGHT_DFL 100
#define GS_WEIGHT_MAX 10000

struct cgroup_ctx {
	/* The cgroup's own cpu.weight. */
	u32 weight;
	/* Its weight with its ancestors', as of weights_gen @gen. */
	u32 effective;
	u32 gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_CGRP_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cgroup_ctx);
} cgroup_ctx_stor SEC(".maps");

/* Bumped whenever a cgroup's weight changes: every effective weight is recomputed lazily. */
static u32 weights_gen = 1;

static u64 clamp_weight(u64 w)
{
	return w < 1 ? 1 : (w > GS_WEIGHT_MAX ? GS_WEIGHT_MAX : w);
}

/* @cgrp's weight combined with its ancestors' (the root has none). */
static u32 cgroup_effective_weight(struct cgroup *cgrp)
{
	struct cgroup_ctx *cctx = bpf_cgrp_storage_get(&cgroup_ctx_stor, cgrp, 0, 0);
	struct cgroup_ctx *actx;
	struct cgroup *anc;
	u32 gen = weights_gen;
	u64 w = GS_WEIGHT_DFL;
	s32 level, depth = cgrp->level;

	if (cctx && cctx->gen == gen)
		return cctx->effective;
	bpf_for(level, 1, depth + 1) {
		if (level > GS_MAX_CGROUP_DEPTH)
			break;
		anc = bpf_cgroup_ancestor(cgrp, level);
		if (!anc)
			break;
		actx = bpf_cgrp_storage_get(&cgroup_ctx_stor, anc, 0, 0);
		if (actx && actx->weight)
			w = clamp_weight(w * actx->weight / GS_WEIGHT_DFL);
		bpf_cgroup_release(anc);
	}
	if (cctx) {
		cctx->effective = w;
		cctx->gen = gen;
	}
	return w;
}

/*
 * Looks up @p's cgroup weight again if any weight changed since it was last looked up. Only
 * in callbacks handed @p with its runqueue locked (ops.enqueue(), ops.runnable()): the kernel
 * ejects a scheduler that asks for another task's cgroup (scx_bpf_task_cgroup()).
 */
static void weight_refresh(struct task_struct *p, struct task_ctx *tctx)
{
	struct cgroup *cgrp;

	if (tctx->cgroup_gen == weights_gen)
		return;
	cgrp = scx_bpf_task_cgroup(p);
	/* NULL without cgroup support (CONFIG_EXT_GROUP_SCHED off): nice alone counts. */
	tctx->cgroup_weight = cgrp ? cgroup_effective_weight(cgrp) : GS_WEIGHT_DFL;
	tctx->cgroup_gen = weights_gen;
	if (cgrp)
		bpf_cgroup_release(cgrp);
}

/*
 * @p's weight, 1..GS_WEIGHT_MAX (GS_WEIGHT_DFL: nice 0 in cgroups at the default weight, out
 * of the foreground).
 */
static u64 task_weight(const struct task_struct *p, const struct task_ctx *tctx)
{
	u64 nice_weight = p->scx.weight ? p->scx.weight : 1;
	u64 boosted = nice_weight * foreground_factor(tctx);

	if (!tctx || !tctx->cgroup_weight)
		return clamp_weight(boosted);
	return clamp_weight(boosted * tctx->cgroup_weight / GS_WEIGHT_DFL);
}

static void weight_cgroup_init(struct cgroup *cgrp, u32 weight)
{
	struct cgroup_ctx *cctx;

	cctx = bpf_cgrp_storage_get(&cgroup_ctx_stor, cgrp, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!cctx)
		return;
	cctx->weight = weight;
	cctx->gen = 0;
}

static void weight_cgroup_set(struct cgroup *cgrp, u32 weight)
{
	struct cgroup_ctx *cctx = bpf_cgrp_storage_get(&cgroup_ctx_stor, cgrp, 0, 0);

	if (cctx)
		cctx->weight = weight;
	/* Its descendants' effective weights change too. */
	__sync_fetch_and_add(&weights_gen, 1);
}

/* @tctx's task moved to cgroup @to. */
static void weight_task_moved(struct task_ctx *tctx, struct cgroup *to)
{
	tctx->cgroup_weight = cgroup_effective_weight(to);
	tctx->cgroup_gen = weights_gen;
}

/* Per CPU: the regular task last kept past the end of its slice, and how many times in a row. */
struct keep_streak {
	s32 pid;
	u32 kept;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct keep_streak);
} keep_stor SEC(".maps");

/* The most slices in a row a heavier task keeps before a lighter one gets a turn. */
#define GS_MAX_KEPT_TURNS 16

/*
 * Whether regular @pid, of weight @weight, whose slice just ended on this CPU, runs another
 * slice ahead of the regular task of weight @next_weight that would replace it: it runs
 * @weight / @next_weight slices in a row (up to GS_MAX_KEPT_TURNS), then that one gets one.
 */
static bool weight_keeps_turn(s32 pid, u64 weight, u64 next_weight)
{
	struct keep_streak *ks;
	u64 turns = next_weight ? weight / next_weight : 0;
	u32 key = 0;

	if (turns < 2)
		return false;
	if (turns > GS_MAX_KEPT_TURNS)
		turns = GS_MAX_KEPT_TURNS;
	ks = bpf_map_lookup_elem(&keep_stor, &key);
	if (!ks)
		return false;
	if (ks->pid != pid) {
		ks->pid = pid;
		ks->kept = 0;
	}
	if (ks->kept + 1 >= turns) {
		ks->kept = 0;
		return false;
	}
	ks->kept++;
	return true;
}

#endif
