/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_gearshift: BPF dispatcher. Ordering decisions come from the Rust policy in user space;
 * this side does what must happen in the kernel: the idle-CPU fast path, keeping CPUs busy,
 * kthreads that cannot wait, and validating every user-space decision before acting on it.
 *
 * Topics live in their own headers, included lower layers first (none calls one included
 * after it): task state (task.bpf.h), counters (stats.bpf.h), what waits in the shared DSQs
 * (queues.bpf.h), NUMA placement (topo.bpf.h), the foreground app (foreground.bpf.h),
 * weights (weight.bpf.h), the mode in effect and low-power mode's active set (active.bpf.h),
 * wakeup preemption (preempt.bpf.h), idle selection and wakeups (idle.bpf.h), the user-space
 * channel (usersched.bpf.h), DSQs (dispatch.bpf.h), CPU hotplug (hotplug.bpf.h), live modes
 * and their load tick (modes.bpf.h), latency-critical bursts (latency.bpf.h).
 */
#include <scx/common.bpf.h>
#include "intf.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

/* Tunables, set before load. Default and maximum time slice: */
const volatile u64 slice_max_ns = GS_DFL_SLICE_MAX_NS;
/* Shortest slice user space may ask for, and the least a task runs before being preempted: */
const volatile u64 slice_min_ns = GS_DFL_SLICE_MIN_NS;
/* Longest the regular tasks wait behind interactive ones while no CPU runs one (the
 * starvation guard): */
const volatile u64 starvation_ns = GS_DFL_STARVATION_NS;
/* Weight above which the policy treats tasks as if at this weight: */
const volatile u64 weight_cap = GS_DFL_WEIGHT_CAP;

#include "task.bpf.h"
#include "stats.bpf.h"
#include "queues.bpf.h"
#include "topo.bpf.h"
#include "foreground.bpf.h"
#include "weight.bpf.h"
#include "active.bpf.h"
#include "preempt.bpf.h"
#include "idle.bpf.h"
#include "usersched.bpf.h"
#include "dispatch.bpf.h"
#include "hotplug.bpf.h"
#include "modes.bpf.h"
#include "latency.bpf.h"

/* Deadline of the latest user-space dispatch: where tasks BPF places itself go. */
static u64 vtime_now;

s32 BPF_STRUCT_OPS(gearshift_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx;
	bool idle;
	s32 cpu;

	if (is_usersched(p))
		return prev_cpu;
	if ((tctx = lookup_task_ctx(p))) {
		tctx->sync_wakeup = wake_flags & SCX_WAKE_SYNC;
		tctx->wake_here = latency_wake_here(p, tctx, prev_cpu, wake_flags);
		if (tctx->wake_here)
			return bpf_get_smp_processor_id();
	}
	cpu = select_wake_cpu(p, prev_cpu, wake_flags, &idle);
	/* Fast path: an idle CPU and nobody waiting for it, no user-space round trip. */
	if (idle && can_direct_dispatch(cpu)) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_max_ns, 0);
		stat_inc(nr_kernel_dispatches);
	}
	return cpu;
}

/*
 * Whether interactive @p, just queued in GS_PRIO_DSQ, takes a busy CPU from a task it goes
 * ahead of. Not when it was woken synchronously (a message through a pipe or a socket): its
 * waker is about to wait and free its CPU. In a message storm every wakeup is one, and
 * preempting for them switched CPUs so often that hackbench ran 4x slower than under EEVDF.
 * Nor, on its wakeup or later in the same burst, when the burst began with an uninterruptible
 * wait (a disk or a 9p read; the flag lasts until the task next sleeps): likely a compiler or
 * a file scan between reads, not a frame, audio or input, which wait interruptibly (a timer,
 * poll, a futex). At 2 vCPUs under a build this left 0.78x the preemptions, frames and audio
 * missing no more (docs/benchmarks.md, fifty-sixth pass).
 * The foreground app's bursts preempt after an uninterruptible wait too (a synchronous
 * wakeup preempts for no one, the foreground app's included). (In low-power mode
 * kick_idle_for_interactive() takes a busy CPU of the active set for any interactive task it
 * does not wake an idle one for: there a preemption stands in for a CPU woken.)
 */
static bool interactive_preempts(const struct task_struct *p, const struct task_ctx *tctx,
				 u64 enq_flags)
{
	if (tctx->burst_sync && (enq_flags & SCX_ENQ_WAKEUP))
		return false;
	return in_foreground(tctx) || !woke_from_kernel_wait(p);
}

/*
 * An interactive task goes straight to the interactive DSQ when it wakes up, and when its
 * slice ends before it has run slice_max_ns since waking: the policy has already classified
 * it, and a user-space round trip per slice would cost it more than the slice (its deadline
 * grows with what it ran, so it does not crowd out other interactive tasks). Once it runs
 * longer without sleeping, user space sees it again and reclassifies it.
 */
static bool enqueue_interactive(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	/* A foreground task's wakeups are interactive even unclassified (foreground.bpf.h). */
	bool foreground_wakeup = in_foreground(tctx) && (enq_flags & SCX_ENQ_WAKEUP);

	bool catching_up = latency_catching_up(tctx, enq_flags);

	if (!foreground_wakeup && !catching_up && (!tctx->interactive || message_driven(tctx)))
		return false;
	if (!(enq_flags & SCX_ENQ_WAKEUP) && tctx->awake_ns >= slice_max_ns && !catching_up)
		return false;
	if (catching_up)
		stat_inc(nr_latency_catch_ups);
	insert_prio(p, tctx, queue_slice(), enq_flags);
	stat_inc(nr_interactive_wakeups);
	if (!kick_idle_for_interactive(p, false) && interactive_preempts(p, tctx, enq_flags))
		preempt_for(p, scx_bpf_task_cpu(p), nr_cpu_ids, false);
	return true;
}

void BPF_STRUCT_OPS(gearshift_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx;

	if (is_usersched(p)) {
		scx_bpf_dsq_insert(p, GS_SCHED_DSQ, slice_max_ns, enq_flags);
		return;
	}
	/*
	 * SCX_OPS_ENQ_LAST is set for the scheduler's own sake (above: with no work it waits in
	 * its DSQ and the CPU idles). Any other task that is the last one runnable here keeps
	 * the CPU: nothing waits for it, and a trip through user space would only idle it. A
	 * task away from its node goes back instead when a CPU there is idle (the tick ended its
	 * slice for that).
	 */
	if (enq_flags & SCX_ENQ_LAST) {
		if (!go_home(p, enq_flags))
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_max_ns, enq_flags);
		return;
	}
	tctx = lookup_task_ctx(p);
	if (tctx) {
		tctx->enq_at = scx_bpf_now();
		tctx->queued_at = tctx->enq_at;
		/* enqueue_latency() sets it again if this burst is still latency-critical. */
		tctx->latency_path = LATENCY_NONE;
		weight_refresh(p, tctx);
		foreground_refresh(p, tctx);
		if (in_foreground(tctx))
			stat_inc(nr_foreground_boosts);
	}
	if (is_critical_kthread(p) || is_usersched_helper(p)) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_max_ns, enq_flags);
		stat_inc(nr_kernel_dispatches);
		return;
	}
	if (tctx && enqueue_latency(p, tctx, enq_flags))
		return;
	if (tctx && enqueue_interactive(p, tctx, enq_flags))
		return;
	if (fifo_now()) {
		/* Underutilized: arrival order, no user-space round trip. */
		scx_bpf_dsq_insert_vtime(p, GS_SHARED_DSQ, slice_max_ns, vtime_now, enq_flags);
		stat_inc(nr_fifo_dispatches);
		kick_idle_cpu(p->cpus_ptr);
		return;
	}
	if (tctx && requeue_slice_end(p, tctx, enq_flags))
		return;
	if (!queue_to_usersched(p, enq_flags)) {
		/* User space is congested: keep the task moving without it. */
		scx_bpf_dsq_insert_vtime(p, GS_SHARED_DSQ, slice_max_ns, vtime_now, enq_flags);
		stat_inc(nr_kernel_dispatches);
		kick_idle_for_regular(p);
		return;
	}
	/* Get the scheduler running somewhere if a CPU is idle. */
	kick_for_usersched();
}

void BPF_STRUCT_OPS(gearshift_dispatch, s32 cpu, struct task_struct *prev)
{
	bool sched_work, interactive_first;
	struct cpu_ctx *dctx = lookup_cpu_ctx(cpu);

	if (dctx)
		dctx->dispatched_ns = scx_bpf_now();
	drain_user_dispatches();
	if (gone_cpus_queued)
		requeue_from_gone_cpus();
	counters.nr_shared_waiting = nr_shared_queued();
	/* Latency-critical bursts go before everything, the scheduler included. */
	if (take_latency(cpu))
		return;

	/*
	 * The scheduler goes first when it has work: everything else waits on it (on an active
	 * CPU in low-power mode: it is regular work too). Interactive tasks already queued do
	 * not wait on it, though, while it ran less than slice_max_ns ago: they need nothing from
	 * it, and a CPU kicked for a frame would otherwise serve user space first.
	 */
	sched_work = usersched_has_work();
	interactive_first = sched_work && scx_bpf_dsq_nr_queued(GS_PRIO_DSQ) &&
			    elapsed_since(usersched_last_run_ns) < slice_max_ns;
	if (interactive_first && take_from(GS_PRIO_DSQ, cpu, false))
		return;
	if (sched_work && take_from(GS_SCHED_DSQ, cpu, false)) {
		stat_inc(nr_usersched_runs);
		return;
	}
	if (keep_heavier_prev(cpu, prev))
		return;
	if (scx_bpf_dsq_move_to_local(cpu_dsq(cpu), 0))
		return;
	if (take_shared(cpu))
		return;
	/*
	 * take_latency() held a burst back for the other queues, and none of them had a task
	 * this CPU may run (their work may still be with user space): the burst goes now rather
	 * than leaving the CPU idle, or to the task that already had its turn.
	 */
	if (take_from(GS_LAT_DSQ, cpu, false))
		return;
	/*
	 * Nothing else wants this CPU: let the previous task keep it rather than sending it
	 * through user space and idling meanwhile (the scheduler only while it has work; a
	 * task away from its node only while no CPU there is idle).
	 */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) &&
	    (!is_usersched(prev) || usersched_has_work()) && !should_go_home(prev))
		scx_bpf_task_set_slice(prev, slice_max_ns);
}

void BPF_STRUCT_OPS(gearshift_running, struct task_struct *p)
{
	struct task_ctx *tctx;
	s32 cpu = scx_bpf_task_cpu(p);
	bool prio;

	timers_follow_running(cpu);
	if (is_usersched(p)) {
		usersched_needed = 0;
		usersched_last_run_ns = scx_bpf_now();
		note_running(cpu, RUN_PROTECTED, 0, false);
		latency_note_running(false);
		return;
	}
	tctx = lookup_task_ctx(p);
	if (!tctx) {
		note_running(cpu, is_kthread(p) ? RUN_PROTECTED : RUN_REGULAR, 0, true);
		latency_note_running(false);
		return;
	}
	tctx->last_run_ns = scx_bpf_now();
	latency_note_started(tctx);
	prio = tctx->in_prio;
	tctx->in_prio = false;
	if (tctx->home_node < 0)
		tctx->home_node = cpu_node(cpu);
	/* Kernel threads are never preempted for user tasks. */
	if (is_kthread(p))
		note_running(cpu, RUN_PROTECTED, 0, true);
	else if (latency_running(tctx))
		note_running(cpu, RUN_LATENCY, latency_deadline(p, tctx), true);
	else if (tctx->interactive || (prio && in_foreground(tctx)))
		note_running(cpu, RUN_INTERACTIVE, prio ? p->scx.dsq_vtime : 0, true);
	else
		note_running(cpu, RUN_REGULAR, 0, true);
	latency_note_running(latency_running(tctx));
	/* vtime_now follows the policy's deadlines; GS_PRIO_DSQ's are in real time. */
	if (!prio && p->scx.dsq_vtime > vtime_now)
		vtime_now = p->scx.dsq_vtime;
}

/* A task waking up starts a new burst; the one it ends feeds the average. */
void BPF_STRUCT_OPS(gearshift_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx;
	u64 now;

	if (!(enq_flags & SCX_ENQ_WAKEUP) || !(tctx = lookup_task_ctx(p)))
		return;
	now = scx_bpf_now();
	tctx->avg_burst_ns = (tctx->avg_burst_ns * 3 + tctx->awake_ns) / 4;
	tctx->awake_ns = 0;
	/* select_cpu's note is for this wakeup only (pinned tasks skip select_cpu). */
	tctx->burst_sync = tctx->sync_wakeup;
	tctx->sync_wakeup = false;
	note_wakeup_kind(tctx, tctx->burst_sync);
	weight_refresh(p, tctx);
	latency_note_wakeup(p, tctx, now);
	tctx->woke_at = now;
}

/* A task running away from its node goes back as soon as a CPU there is idle. */
void BPF_STRUCT_OPS(gearshift_tick, struct task_struct *p)
{
	load_tick_follow_load(p, scx_bpf_task_cpu(p));
	if (!lowpower() && !is_usersched(p) && should_go_home(p))
		scx_bpf_task_set_slice(p, 0);
	else
		latency_tick(p);
}

void BPF_STRUCT_OPS(gearshift_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	u64 now;

	note_stopping(scx_bpf_task_cpu(p));
	/*
	 * A thread of the scheduler's process stops: it may have forwarded a control request to
	 * the scheduling loop (control.rs) and now waits for the answer. Run the loop at the next
	 * dispatch instead of at the heartbeat, up to heartbeat_idle_ns away on an idle machine.
	 */
	if (is_usersched_helper(p))
		set_usersched_needed();
	if (!tctx)
		return;
	now = scx_bpf_now();
	if (tctx->last_run_ns)
		tctx->awake_ns += time_between(tctx->last_run_ns, now);
	tctx->stopped_ns = now;
}

void BPF_STRUCT_OPS(gearshift_set_cpumask, struct task_struct *p, const struct cpumask *cpumask)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx)
		tctx->cpumask_gen++;
}

s32 BPF_STRUCT_OPS(gearshift_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_struct *parent = bpf_get_current_task_btf();
	struct task_ctx *tctx, *parent_ctx;

	tctx = bpf_task_storage_get(&task_ctx_stor, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->home_node = -1;
	if (!args->fork)
		return 0;
	parent_ctx = lookup_task_ctx(parent);
	if (!parent_ctx)
		return 0;
	/* A command started from an interactive shell starts out interactive too. */
	tctx->interactive = parent_ctx->interactive;
	/* Threads share memory: they belong on their creator's node. */
	if (p->tgid == parent->tgid)
		tctx->home_node = parent_ctx->home_node >= 0 ?
				  parent_ctx->home_node : cpu_node(bpf_get_smp_processor_id());
	return 0;
}

void BPF_STRUCT_OPS(gearshift_cpu_online, s32 cpu)
{
	hotplug_cpu_back(cpu);
	refresh_online_cpus();
	update_active_mask();
}

void BPF_STRUCT_OPS(gearshift_cpu_offline, s32 cpu)
{
	hotplug_cpu_gone(cpu);
	refresh_online_cpus();
	update_active_mask();
}

s32 BPF_STRUCT_OPS(gearshift_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
{
	weight_cgroup_init(cgrp, args->weight);
	return 0;
}

void BPF_STRUCT_OPS(gearshift_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	weight_cgroup_set(cgrp, weight);
}

void BPF_STRUCT_OPS(gearshift_cgroup_move, struct task_struct *p, struct cgroup *from,
		    struct cgroup *to)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx)
		weight_task_moved(tctx, to);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(gearshift_init)
{
	s32 err;

	nr_cpu_ids = scx_bpf_nr_cpu_ids();
	err = topo_init();
	if (err)
		return err;
	refresh_online_cpus();
	err = create_dsqs();
	if (err)
		return err;
	err = modes_init();
	if (err)
		return err;
	return heartbeat_init();
}

void BPF_STRUCT_OPS(gearshift_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(gearshift_ops,
	       .select_cpu		= (void *)gearshift_select_cpu,
	       .enqueue			= (void *)gearshift_enqueue,
	       .dispatch		= (void *)gearshift_dispatch,
	       .runnable		= (void *)gearshift_runnable,
	       .running			= (void *)gearshift_running,
	       .tick			= (void *)gearshift_tick,
	       .stopping		= (void *)gearshift_stopping,
	       .set_cpumask		= (void *)gearshift_set_cpumask,
	       .init_task		= (void *)gearshift_init_task,
	       .cgroup_init		= (void *)gearshift_cgroup_init,
	       .cgroup_set_weight	= (void *)gearshift_cgroup_set_weight,
	       .cgroup_move		= (void *)gearshift_cgroup_move,
	       .cpu_online		= (void *)gearshift_cpu_online,
	       .cpu_offline		= (void *)gearshift_cpu_offline,
	       .init			= (void *)gearshift_init,
	       .exit			= (void *)gearshift_exit,
	       .name			= "gearshift");
