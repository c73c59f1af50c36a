/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The foreground boost. gearshiftd names the cgroup of the app that has focus (its systemd
 * scope, from the focused window's pid); the tasks of that cgroup and of its descendants are
 * favoured over everything else of their kind:
 *  - their weight counts GS_FOREGROUND_FACTOR times (weight.bpf.h's task_weight()):
 *    the policy's vruntime and every BPF deadline advance that much slower for them, so their
 *    bursts are due before the same bursts of other tasks (a foreground frame goes ahead of a
 *    background one in the latency-critical and interactive queues, and takes the CPU from
 *    it), and a CPU-bound foreground task keeps its CPU for that many slices in a row;
 *  - their bursts stay latency-critical that many times longer (latency.bpf.h's
 *    latency_budget()): a foreground frame that overran its period, and so runs on into the
 *    next one without sleeping, keeps its rank until it has caught up, instead of being
 *    pushed down for good by the background's frames;
 *  - their wakeups are interactive even before the policy has classified them so (a game's
 *    render thread that just started): they skip user space and may preempt regular work.
 * The starvation guard is untouched: regular work still runs once it has waited
 * starvation_ns, whatever the foreground does, and a CPU-bound foreground task only gets a
 * larger share, as a heavier cpu.weight would, never the whole machine.
 *
 * The cgroup is the task's cgroup in the default (v2) hierarchy, not the cpu controller's
 * (scx_bpf_task_cgroup()): app scopes rarely have the cpu controller enabled, and the id
 * user space knows is the directory's under /sys/fs/cgroup.
 */
#ifndef __GEARSHIFT_FOREGROUND_BPF_H
#define __GEARSHIFT_FOREGROUND_BPF_H

/* The foreground cgroup's id (cgroup v2: kn->id, its directory's inode); 0: none. Written by
 * user space. */
volatile u64 foreground_cgid;

/* How many times a foreground task's weight and latency-critical budget count. */
#define GS_FOREGROUND_FACTOR 4

/* Deeper cgroups than this are matched (and weighted) by their ancestors down to this level. */
#define GS_MAX_CGROUP_DEPTH 16

/* Whether @cgrp is the cgroup of id @id or one of its descendants. */
static bool cgroup_within(struct cgroup *cgrp, u64 id)
{
	struct cgroup *anc;
	s32 level, depth = cgrp->level;
	bool found = false;

	if (cgrp->kn->id == id)
		return true;
	bpf_for(level, 1, depth) {
		if (level > GS_MAX_CGROUP_DEPTH)
			break;
		anc = bpf_cgroup_ancestor(cgrp, level);
		if (!anc)
			break;
		found = anc->kn->id == id;
		bpf_cgroup_release(anc);
		if (found)
			break;
	}
	return found;
}

/*
 * Whether @p belongs to the foreground now, cached in @tctx: looked up again only when the
 * foreground changed or @p moved to another cgroup (one id compared per enqueue otherwise;
 * nothing at all while there is no foreground).
 */
static void foreground_refresh(struct task_struct *p, struct task_ctx *tctx)
{
	u64 fg = foreground_cgid;
	struct cgroup *cgrp;
	u64 cgid;

	if (!fg) {
		tctx->foreground = false;
		tctx->foreground_of = 0;
		return;
	}
	cgrp = p->cgroups->dfl_cgrp;
	if (!cgrp)
		return;
	cgid = cgrp->kn->id;
	if (tctx->foreground_of == fg && tctx->foreground_cgid_seen == cgid)
		return;
	tctx->foreground = cgroup_within(cgrp, fg);
	tctx->foreground_of = fg;
	tctx->foreground_cgid_seen = cgid;
}

/* @tctx's task is in the foreground (as of its last enqueue). */
static inline bool in_foreground(const struct task_ctx *tctx)
{
	return tctx && tctx->foreground && foreground_cgid;
}

/* The factor @tctx's task's weight and latency-critical budget count with. */
static inline u64 foreground_factor(const struct task_ctx *tctx)
{
	return in_foreground(tctx) ? GS_FOREGROUND_FACTOR : 1;
}

#endif
