/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Placing tasks in DSQs: per-CPU DSQs for decisions naming a CPU, one shared DSQ for the rest,
 * and the checks that make user-space decisions safe however stale they are.
 */
#ifndef __GEARSHIFT_DISPATCH_BPF_H
#define __GEARSHIFT_DISPATCH_BPF_H

/* When a CPU last took a task from the regular shared DSQ. */
static u64 last_regular_ns;

static inline u64 cpu_dsq(s32 cpu)
{
	return (u64)cpu;
}

static inline u64 clamp_slice(u64 slice)
{
	if (!slice || slice > slice_max_ns)
		return slice_max_ns;
	return slice < slice_min_ns ? slice_min_ns : slice;
}

/*
 * Slice of a task in a shared DSQ: slice_max_ns while at most one task per CPU waits, shorter
 * as more wait, so that a task waking behind all of them waits about one slice_max_ns (the
 * policy sizes the slices of its own decisions the same way).
 */
static u64 queue_slice(void)
{
	u64 waiting = nr_shared_queued();
	u64 cpus = counters.nr_online_cpus ? counters.nr_online_cpus : 1;
	u64 per_cpu = waiting / cpus;

	return clamp_slice(slice_max_ns / (per_cpu ? per_cpu : 1));
}

/* The most CPU time a burst is charged for in an interactive deadline. */
#define GS_BURST_CAP_NS (20 * 1000 * 1000ULL)

/* The CPU time @tctx's task is expected to need per wakeup: its average burst, or what it
 * has run since waking if that is more. */
static u64 expected_burst(const struct task_ctx *tctx)
{
	u64 burst = tctx->avg_burst_ns > tctx->awake_ns ? tctx->avg_burst_ns : tctx->awake_ns;

	return burst > GS_BURST_CAP_NS ? GS_BURST_CAP_NS : burst;
}

/* expected_burst() scaled by the task's weight: the span a deadline gives its burst. */
static u64 weighted_burst(const struct task_struct *p, const struct task_ctx *tctx)
{
	return expected_burst(tctx) * GS_WEIGHT_DFL / task_weight(p, tctx);
}

/*
 * Deadline of an interactive task in GS_PRIO_DSQ, in real time: when its burst began plus the
 * CPU time it is expected to need, scaled by its weight. Tasks that need the CPU briefly go
 * first, yet one that woke long ago is not overtaken by ever newer short ones: a message
 * storm cannot push a frame or audio task back by more than the frame's own burst.
 *
 * The burst begins at the wakeup, and a burst cut by its slice keeps that deadline (like a
 * job in EDF): a frame preempted halfway does not go behind every task that woke since. Once
 * it has run slice_max_ns without sleeping it starts over from now (user space has it by
 * then anyway).
 *
 * A burst that began with a synchronous wakeup (a message through a pipe or a socket) is due
 * slice_max_ns later: a message storm's tasks are all woken that way, while timers, input and
 * devices wake frames and audio asynchronously, so those go ahead of the storm's recent
 * wakeups. The storm still runs within that bound.
 */
static u64 prio_deadline(const struct task_struct *p, struct task_ctx *tctx)
{
	u64 start = tctx->enq_at;

	if (tctx->awake_ns < slice_max_ns && time_before(tctx->woke_at, start))
		start = tctx->woke_at;
	return start + weighted_burst(p, tctx) + (tctx->burst_sync ? slice_max_ns : 0);
}

/*
 * Slice of an interactive task: at least @slice, and enough for the rest of its expected
 * burst (a quarter more, up to slice_max_ns). A 3 ms frame is not cut into 0.5 ms pieces
 * because a message storm fills the queue: every piece would wait its turn again, while the
 * storm's own tasks give the CPU back within their short bursts anyway.
 */
static u64 burst_slice(const struct task_ctx *tctx, u64 slice)
{
	u64 want = expected_burst(tctx) * 5 / 4;

	want = want > tctx->awake_ns ? want - tctx->awake_ns : 0;
	if (want > slice_max_ns)
		want = slice_max_ns;
	return want > slice ? want : slice;
}

/* Queues interactive @p in GS_PRIO_DSQ at its deadline. */
static void insert_prio(struct task_struct *p, struct task_ctx *tctx, u64 slice, u64 enq_flags)
{
	tctx->in_prio = true;
	scx_bpf_dsq_insert_vtime(p, GS_PRIO_DSQ, burst_slice(tctx, slice), prio_deadline(p, tctx),
				 enq_flags);
}

/*
 * Queues regular @p at @deadline in @cpu's DSQ, or with GS_CPU_ANY in the shared one, and
 * wakes a CPU that will take it.
 */
static void insert_regular(struct task_struct *p, s32 cpu, u64 slice, u64 deadline, u64 enq_flags)
{
	/* A CPU that went offline after the decision: any CPU the task may use takes it. */
	if (cpu != GS_CPU_ANY && cpu_is_offline(cpu))
		cpu = GS_CPU_ANY;
	if (cpu == GS_CPU_ANY) {
		scx_bpf_dsq_insert_vtime(p, GS_SHARED_DSQ, slice, deadline, enq_flags);
		kick_idle_for_regular(p);
	} else {
		scx_bpf_dsq_insert_vtime(p, cpu_dsq(cpu), slice, deadline, enq_flags);
		kick_idle(cpu);
	}
}

/*
 * Applies one decision from user space. Nothing is inserted unless every check passed, so
 * there is never anything to cancel (scx_bpf_dispatch_cancel() underflows when the kernel
 * already dropped the insertion, which ejects the scheduler under affinity churn).
 */
static void dispatch_from_user(const struct gs_dispatched_task *d)
{
	struct task_struct *p;
	struct task_ctx *tctx;
	u64 slice = clamp_slice(d->slice_ns);
	s32 cpu = d->cpu;

	p = bpf_task_from_pid(d->pid);
	if (!p) {
		stat_inc(nr_failed_dispatches);
		return;
	}
	tctx = lookup_task_ctx(p);
	if (!tctx) {
		stat_inc(nr_failed_dispatches);
		goto out;
	}
	/* A newer enqueue superseded this decision; its own decision will follow. */
	if (tctx->enq_seq != d->enq_seq) {
		stat_inc(nr_cancel_dispatches);
		goto out;
	}
	/*
	 * The task's cpumask changed after user space decided: the named CPU may no longer be
	 * allowed. The shared DSQ is safe for any mask (a CPU only takes tasks it may run).
	 */
	if (cpu != GS_CPU_ANY &&
	    (d->cpumask_gen != tctx->cpumask_gen || cpu < 0 || cpu >= nr_cpu_ids ||
	     !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))) {
		stat_inc(nr_bounce_dispatches);
		cpu = GS_CPU_ANY;
	} else {
		stat_inc(nr_user_dispatches);
	}
	tctx->interactive = d->flags & GS_DISPATCH_INTERACTIVE;
	tctx->in_prio = false;
	tctx->queued_at = scx_bpf_now();
	tctx->vruntime = d->vruntime;
	tctx->vruntime_exec = tctx->sent_exec;
	tctx->policy_seen_at = tctx->queued_at;

	if (cpu == GS_CPU_ANY && tctx->interactive) {
		/* The policy's deadline is in vruntime; this DSQ orders by prio_deadline(). */
		insert_prio(p, tctx, slice, 0);
		kick_idle_for_interactive(p, false);
	} else {
		insert_regular(p, cpu, slice, d->vtime, 0);
	}
out:
	bpf_task_release(p);
}

static long drain_one(struct bpf_dynptr *dynptr, void *ctx)
{
	const struct gs_dispatched_task *d;

	d = bpf_dynptr_data(dynptr, 0, sizeof(*d));
	if (d)
		dispatch_from_user(d);
	/* 0: keep draining while the dispatch buffer has room; 1: stop. */
	return scx_bpf_dispatch_nr_slots() ? 0 : 1;
}

static void drain_user_dispatches(void)
{
	/*
	 * BPF_RB_NO_WAKEUP: user space never sleeps waiting for room in this ring (it reserves
	 * without blocking), and the default wakeup queues an irq_work, a self-interrupt, after
	 * every drain that took something: hundreds per second under load, each one slow under
	 * emulation and on a busy CPU that a frame may be waiting for.
	 */
	bpf_user_ringbuf_drain(&dispatched, drain_one, NULL, BPF_RB_NO_WAKEUP);
}

/*
 * How long BPF queues a task's ended slices itself after the policy last decided on it; then
 * the policy sees the task again (it forgets tasks it has not seen for seconds, and its
 * vruntime floor for sleepers follows what it dispatches).
 */
#define GS_POLICY_REFRESH_NS (100 * 1000 * 1000ULL)

/*
 * A regular task whose slice ended (or that was preempted) goes back to its queue at the
 * deadline the policy would give it, computed here: its vruntime carried on by the CPU time
 * it used, weighted, plus the time it has run since it last woke, weighted and capped, as in
 * policy.rs. Nothing about the task changed that the policy would look at (it did not sleep,
 * so its switch rate did not move), yet the round trip through user space cost every CPU-bound
 * slice a switch to the scheduling thread and back, and its ring buffers: under CPU hogs a
 * fifth of the machine, and dispatches that frames and audio wait behind. Wakeups, interactive
 * tasks and tasks the policy has not decided on lately still go through user space.
 */
static bool requeue_slice_end(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	u64 exec = p->se.sum_exec_runtime;
	u64 slice, burst_cap, weight, burst, deadline;
	s32 cpu;

	if ((enq_flags & SCX_ENQ_WAKEUP) || tctx->interactive || !tctx->policy_seen_at ||
	    elapsed_since(tctx->policy_seen_at) >= GS_POLICY_REFRESH_NS)
		return false;
	/* The slice it gets is also the unit its burst's charge is capped in. */
	slice = queue_slice();
	burst_cap = GS_BURST_CHARGE_SLICES * slice;
	weight = task_weight(p, tctx);
	if (weight > weight_cap)
		weight = weight_cap;
	if (exec > tctx->vruntime_exec)
		tctx->vruntime += (exec - tctx->vruntime_exec) * GS_WEIGHT_DFL / weight;
	tctx->vruntime_exec = exec;
	burst = tctx->awake_ns;
	if (burst > burst_cap)
		burst = burst_cap;
	deadline = tctx->vruntime + burst * GS_WEIGHT_DFL / weight;
	if (tctx->vruntime > kernel_vruntime_max)
		kernel_vruntime_max = tctx->vruntime;
	/* A decision still on its way for an earlier enqueue is stale now. */
	tctx->enq_seq++;
	stat_inc(nr_slice_requeues);

	cpu = scx_bpf_task_cpu(p);
	if (p->nr_cpus_allowed != 1 || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		cpu = GS_CPU_ANY;
	insert_regular(p, cpu, slice, deadline, enq_flags);
	return true;
}

/* Direct dispatch is only fair when nothing is already waiting for @cpu. */
static bool can_direct_dispatch(s32 cpu)
{
	return !nr_shared_queued() && !scx_bpf_dsq_nr_queued(cpu_dsq(cpu));
}

/*
 * @p, away from its home node, goes to an idle CPU there, claimed and woken for it; false
 * when it is at home or no CPU there is idle. The kernel keeps the last runnable task of a
 * CPU where it is (SCX_ENQ_LAST), so without this a thread that spilled over while its node
 * was full stayed away from its memory and its siblings long after the node had room again.
 */
static bool go_home(struct task_struct *p, u64 enq_flags)
{
	const struct cpumask *home;
	s32 cpu;

	if (lowpower() || !(home = home_cpus_if_away(p)))
		return false;
	/* home_node() only names a node @p's affinity covers. */
	cpu = claim_idle_cpu(home);
	if (cpu < 0)
		return false;
	/* Some kernels keep a CPU that went offline marked idle: claimed, it is not again. */
	if (cpu_is_offline(cpu))
		return false;
	scx_bpf_dsq_insert(p, cpu_dsq(cpu), slice_max_ns, enq_flags);
	kick_idle(cpu);
	return true;
}

/* How far down a shared DSQ a CPU looks for a task it may take. */
#define GS_PULL_SCAN 32

/*
 * Whether @cpu may take @p from a shared DSQ: a CPU low-power mode keeps out of service only
 * takes tasks that may run on no active CPU; with @numa, a CPU takes a regular task of
 * another node only when it may leave home.
 */
static bool may_pull(s32 cpu, struct task_struct *p, bool numa)
{
	s32 node;

	if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		return false;
	if (lowpower())
		return cpu_is_active(cpu) || !reaches_active(p);
	if (!numa)
		return true;
	node = home_node(p);
	return node < 0 || node == cpu_node(cpu) || may_leave_home(p, node);
}

/* Moves the first task of @dsq that @cpu may take to its local DSQ. */
static bool take_from(u64 dsq, s32 cpu, bool numa)
{
	struct task_struct *p;
	u32 seen = 0;

	if (!lowpower() && (!numa || !numa_enabled()))
		return scx_bpf_dsq_move_to_local(dsq, 0);
	bpf_for_each(scx_dsq, p, dsq, 0) {
		if (++seen > GS_PULL_SCAN)
			break;
		if (may_pull(cpu, p, numa) &&
		    scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return false;
}

/*
 * The load tick's backstop for every mode: a task that has waited in a shared DSQ well past
 * a slice while an idle CPU that would take it sleeps, and nobody has woken that CPU, gets
 * it woken. The wakeup paths and kick_for_waiting() should never leave such a task behind;
 * this bounds the wait if they do, instead of the sched_ext watchdog ejecting the scheduler
 * ~30 s later, and nr_rescue_kicks says they did (the soak expects 0). The wait counts from
 * when the task entered the DSQ, not from its enqueue: time spent with user space is not a
 * CPU left asleep. A CPU kicked that has not run ops.dispatch() since is on its way (in an
 * emulated machine a woken vCPU can take several milliseconds to run).
 */
static void rescue_overdue(u64 dsq, bool numa)
{
	const struct cpumask *idle;
	struct task_struct *p;
	struct task_ctx *tctx;
	u64 now = scx_bpf_now();
	s32 cpu, found = -1;
	u32 seen = 0;

	bpf_for_each(scx_dsq, p, dsq, 0) {
		if (++seen > GS_PULL_SCAN)
			break;
		tctx = lookup_task_ctx(p);
		if (!tctx || !time_after(now, tctx->queued_at + starvation_ns + 2 * slice_max_ns))
			continue;
		idle = scx_bpf_get_idle_cpumask();
		bpf_for(cpu, 0, nr_cpu_ids) {
			if (cpu >= GS_MAX_CPUS)
				break;
			if (bpf_cpumask_test_cpu(cpu, idle) && !wakeup_pending(cpu) &&
			    may_pull(cpu, p, numa)) {
				found = cpu;
				break;
			}
		}
		scx_bpf_put_idle_cpumask(idle);
		/* One CPU per tick and queue: it takes the oldest waiters first anyway. */
		break;
	}
	if (found >= 0) {
		kick_idle(found);
		stat_inc(nr_rescue_kicks);
	}
}

static void rescue_overdue_tasks(void)
{
	rescue_overdue(GS_LAT_DSQ, false);
	rescue_overdue(GS_PRIO_DSQ, false);
	rescue_overdue(GS_SHARED_DSQ, true);
}

/*
 * Moves a regular task to @cpu: the first one it may take, or one that last ran on @cpu if
 * its deadline is at most slice_max_ns after that first one's (the first of them, of the
 * first few). Taken strictly in deadline order, a shared queue hands CPU-bound tasks from CPU
 * to CPU at each slice end: with twice as many hogs as CPUs, a third of their context
 * switches were migrations (EEVDF's: 1 in 160), each one a cold cache on a real machine and
 * the costliest thing ops.dispatch() does (the task's old runqueue locked and left). A slice
 * of slack keeps the order's fairness: no task waits more than a slice longer for it.
 */
static bool take_regular_near(s32 cpu)
{
	struct task_struct *p;
	u64 first_deadline = 0;
	bool first_seen = false;
	u32 seen = 0;

	bpf_for_each(scx_dsq, p, GS_SHARED_DSQ, 0) {
		if (++seen > GS_PULL_SCAN)
			break;
		if (!may_pull(cpu, p, true))
			continue;
		if (!first_seen) {
			first_deadline = p->scx.dsq_vtime;
			first_seen = true;
		} else if (time_after(p->scx.dsq_vtime, first_deadline + slice_max_ns)) {
			break;
		}
		if (scx_bpf_task_cpu(p) == cpu &&
		    scx_bpf_dsq_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return first_seen && take_from(GS_SHARED_DSQ, cpu, true);
}

static bool take_regular(s32 cpu)
{
	if (!take_regular_near(cpu))
		return false;
	last_regular_ns = scx_bpf_now();
	return true;
}

/*
 * Interactive tasks first, regular ones after; but once no CPU has taken a regular task for
 * starvation_ns and none runs one, one of them goes first, so CPU-bound work always
 * progresses. A regular task running on another CPU is that progress: CPU-bound tasks that
 * keep their CPU (the last runnable one there, or a heavier one keeping its turn) never move
 * last_regular_ns, and under a build at 4 vCPUs the guard, blind to them, gave a compiler's
 * slice ahead of a 60 Hz frame or an audio callback on the CPU they were about to get back,
 * 50-70 times a second. What a CPU may take is filtered by may_pull(): low-power mode's
 * idle CPUs stay out of service (the active ones serve the starvation guard too), and nodes
 * keep their tasks.
 */
static bool take_shared(s32 cpu)
{
	if (scx_bpf_dsq_nr_queued(GS_SHARED_DSQ) &&
	    elapsed_since(last_regular_ns) >= starvation_ns && !runs_elsewhere(cpu, false)) {
		if (take_regular(cpu)) {
			stat_inc(nr_starvation_guard);
			return true;
		}
	}
	if (take_from(GS_PRIO_DSQ, cpu, false))
		return true;
	return take_regular(cpu);
}

/* Weight of the first task in @dsq that @cpu may run (of the first few); 0 if none. */
static u64 first_waiter_weight(u64 dsq, s32 cpu)
{
	struct task_struct *p;
	u32 seen = 0;

	bpf_for_each(scx_dsq, p, dsq, 0) {
		if (++seen > GS_PULL_SCAN)
			break;
		if (may_pull(cpu, p, dsq == GS_SHARED_DSQ))
			return task_weight(p, lookup_task_ctx(p));
	}
	return 0;
}

/*
 * Regular @prev, whose slice ended, runs another slice instead of the regular task that
 * would replace it if it outweighs it (weight.bpf.h: weight_keeps_turn()). Only while no
 * interactive or latency-critical task waits: they go first whatever the weights.
 */
static bool keep_heavier_prev(s32 cpu, struct task_struct *prev)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);
	u64 next_weight;

	/* RUN_REGULAR: neither the scheduler nor a kernel thread, which run protected. */
	if (!prev || !(prev->scx.flags & SCX_TASK_QUEUED) || !cctx || cctx->kind != RUN_REGULAR ||
	    scx_bpf_dsq_nr_queued(GS_PRIO_DSQ) || scx_bpf_dsq_nr_queued(GS_LAT_DSQ))
		return false;
	next_weight = first_waiter_weight(cpu_dsq(cpu), cpu);
	if (!next_weight)
		next_weight = first_waiter_weight(GS_SHARED_DSQ, cpu);
	if (!weight_keeps_turn(prev->pid, task_weight(prev, lookup_task_ctx(prev)), next_weight))
		return false;
	scx_bpf_task_set_slice(prev, queue_slice());
	stat_inc(nr_weight_turns);
	return true;
}

static s32 create_dsqs(void)
{
	s32 err, cpu;

	bpf_for(cpu, 0, nr_cpu_ids) {
		if (cpu >= GS_MAX_CPUS)
			break;
		err = scx_bpf_create_dsq(cpu_dsq(cpu), -1);
		if (err) {
			scx_bpf_error("failed to create DSQ of CPU %d: %d", cpu, err);
			return err;
		}
	}
	err = scx_bpf_create_dsq(GS_SHARED_DSQ, -1);
	if (err)
		return err;
	err = scx_bpf_create_dsq(GS_PRIO_DSQ, -1);
	if (err)
		return err;
	err = scx_bpf_create_dsq(GS_LAT_DSQ, -1);
	if (err)
		return err;
	return scx_bpf_create_dsq(GS_SCHED_DSQ, -1);
}

#endif
