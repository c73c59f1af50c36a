/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency-critical bursts. A frame, an audio callback or an input handler is woken by a timer
 * or a device, runs briefly and sleeps until its next period. A message storm's tasks are
 * woken by each other (synchronously, SCX_WAKE_SYNC), and so are a build's make and gcc by
 * their children and pipes. Ordering every short burst by when it is due (GS_PRIO_DSQ) puts a
 * frame behind each storm task that woke a little earlier: under a storm that queue is deep,
 * and the frame waits for all of it.
 *
 * So a burst that
 *  - began with an asynchronous wakeup (not SCX_WAKE_SYNC) of a user task, out of a sleep
 *    the kernel does not count as uninterruptible, and
 *  - belongs to a task that sleeps at least as long as it runs (average burst at most half its
 *    average time between wakeups)
 * goes to GS_LAT_DSQ, ordered by when it is due, which CPUs serve before any other queue; it
 * takes a CPU from anything but another such burst due earlier. Each task can hold that rank
 * for at most half a CPU (the last rule), a burst loses it once it has run its budget
 * (GS_LATENCY_BURST_MAX_NS, more for the foreground app: latency_budget()), and the other
 * queues go first once they have waited starvation_ns.
 *
 * The budget bounds each burst, not the average one: a frame that overran its period runs on
 * into the next without sleeping, so its bursts merge and their average grows with how far
 * behind it is (a 3 ms frame at 60 Hz averaged 8-19 ms at 2 vCPUs under CPU hogs once it fell
 * behind), while its share of the CPU stays what it was. Admitting by the average kept such a
 * frame out of the rank for the rest of the run (13-34 % of its periods missed, in 4 of 12
 * traced runs); admitting by the share lets it catch up at its next wakeup.
 *
 * This is decided in BPF, not by the user-space policy: it is a property of each wakeup, and
 * a round trip per frame would cost the frame the latency this is for.
 */
#ifndef __GEARSHIFT_LATENCY_BPF_H
#define __GEARSHIFT_LATENCY_BPF_H

/*
 * The longest burst that keeps the latency-critical rank (it ends there): 10 ms of CPU time.
 * A 60 Hz frame of 3 ms ran 5 ms of CPU time under a message storm (a slowed CPU, caches
 * thrashed) and up to 13 ms on an emulated vCPU under CPU hogs; the rank it loses there
 * returns at its next wakeup. Half a CPU per task (the period rule) bounds what the rank can
 * take. It is a property of the work, not of the time slice: a shorter slice for CPU hogs
 * must not take the rank from a game's longer frames.
 */
#define GS_LATENCY_BURST_MAX_NS (10 * 1000 * 1000ULL)

/*
 * The longest burst of @tctx's task that is latency-critical: GS_LATENCY_BURST_MAX_NS, times the
 * foreground factor for the foreground app (foreground.bpf.h). A frame that overran its
 * period runs on into the next one without sleeping; past its budget it is no longer
 * latency-critical, and a background frame's bursts then keep taking the CPU from it, so it
 * never catches up. The foreground's frame gets the longer run it needs to catch up; half a
 * CPU per task (the period rule) still bounds what it takes.
 */
static inline u64 latency_budget(const struct task_ctx *tctx)
{
	return GS_LATENCY_BURST_MAX_NS * foreground_factor(tctx);
}

/* When a CPU last started something other than a latency-critical burst. */
static u64 last_other_run_ns;

/*
 * task_ctx.periodic_score: a task's record of periodic wakeups, for latency_catching_up(). A
 * wakeup adds one (up to GS_PERIODIC_SCORE_MAX) when it is latency-critical, ended an
 * interruptible sleep of a user task (a timer, poll, a futex: what frames, audio callbacks
 * and input handlers wait on) and came within a quarter of the average period; one that is
 * latency-critical but off that period changes nothing, and any other halves the record. From
 * GS_PERIODIC_SCORE_MIN on the task is a proven periodic one. With no record, vm_modes' fifo
 * test failed: under its eight CPU hogs on four CPUs the overload's own tasks caught up ahead
 * of the user-space policy (a hog's averages stay as its first wakeups left them, and at half
 * a CPU it is within the bound). A record of latency-critical wakeups alone still let 2,062
 * catch-ups through in that test, of tasks not traced; a process reading files is one that
 * would get there, as it sleeps as long as it runs and is woken by the disk's (or 9p's)
 * interrupt like a frame by its timer, but its waits are uninterruptible and a frame's are not.
 */
#define GS_PERIODIC_SCORE_MIN 8
#define GS_PERIODIC_SCORE_MAX 16

/* @period, the time since @tctx's task last woke, is within a quarter of its average. */
static bool on_period(const struct task_ctx *tctx, u64 period)
{
	u64 avg = tctx->avg_period_ns;

	return avg && period * 4 >= avg * 3 && period * 4 <= avg * 5;
}

/* Whether @task last blocked in a wait that counts toward the load average (uninterruptible). */
static bool woke_from_kernel_wait(const struct task_struct *task)
{
	/* Named apart from the macro's own `p`, which would shadow it. */
	return BPF_CORE_READ_BITFIELD(task, sched_contributes_to_load);
}

/* Kernel threads and kernel waits are never latency-critical (latency_note_wakeup()). */
static void note_periodic(struct task_ctx *tctx, bool periodic)
{
	if (!tctx->latency_critical)
		tctx->periodic_score /= 2;
	else if (periodic && tctx->periodic_score < GS_PERIODIC_SCORE_MAX)
		tctx->periodic_score++;
}

/* Called on every wakeup of @p (ops.runnable): the period estimate and the admission. */
static void latency_note_wakeup(const struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	bool periodic = false;
	u64 period;

	if (tctx->woke_at && time_after(now, tctx->woke_at)) {
		period = now - tctx->woke_at;
		periodic = on_period(tctx, period);
		tctx->avg_period_ns = tctx->avg_period_ns ?
				      (tctx->avg_period_ns * 3 + period) / 4 : period;
	}
	tctx->latency_critical = !tctx->burst_sync && !is_usersched(p) && !is_kthread(p) &&
				 !woke_from_kernel_wait(p) && tctx->avg_period_ns &&
				 tctx->avg_burst_ns * 2 <= tctx->avg_period_ns;
	note_periodic(tctx, periodic);
}

/*
 * Whether @tctx's task, whose slice ended past slice_max_ns since its wakeup, catches up in the
 * interactive DSQ (enqueue_interactive()): a proven periodic task (its periodic_score), that
 * sleeps at least a quarter of the time (average burst at most three quarters of its average
 * period), woken asynchronously, that has used at most three quarters of a CPU since its
 * wakeup. A frame that fell behind runs on into its next periods without sleeping, so no
 * wakeup admits it again; as regular work under a message storm it got 1.5-2 % of a CPU and
 * ran 149 of its 1,200 periods. The interactive DSQ, not GS_LAT_DSQ: behind it the shared
 * queue's starvation guard still serves regular work, however many tasks catch up (a per-task
 * share in GS_LAT_DSQ let three periodic tasks ask for more than two CPUs, and an RCU stall
 * ejected the scheduler).
 */
static bool latency_catching_up(const struct task_ctx *tctx, u64 enq_flags)
{
	/* The scheduler is never latency-critical, so its record stays below the minimum. */
	return !(enq_flags & SCX_ENQ_WAKEUP) && !tctx->burst_sync &&
	       tctx->periodic_score >= GS_PERIODIC_SCORE_MIN &&
	       tctx->avg_burst_ns * 4 <= tctx->avg_period_ns * 3 &&
	       tctx->awake_ns >= slice_max_ns &&
	       tctx->awake_ns * 4 <= elapsed_since(tctx->woke_at) * 3;
}

/* Deadline of a latency-critical burst: its wakeup plus the CPU time it is expected to need. */
static u64 latency_deadline(const struct task_struct *p, const struct task_ctx *tctx)
{
	return tctx->woke_at + weighted_burst(p, tctx);
}

/*
 * Slice of a latency-critical burst: the rest of its budget. A slice sized by the
 * expected burst ran out whenever a burst was slowed (an emulated or throttled CPU, a cache
 * gone cold), and the burst went back to the queue in the middle of its work, where the
 * starvation guard could hand the CPU to a hog for a whole slice. Only a burst due earlier
 * takes the CPU from it (preempt.bpf.h), and it loses its rank at the end of its budget anyway.
 */
static u64 latency_slice(const struct task_ctx *tctx)
{
	u64 budget = latency_budget(tctx);
	u64 left = budget > tctx->awake_ns ? budget - tctx->awake_ns : 0;

	return left > slice_min_ns ? left : slice_min_ns;
}

/* Whether @p, about to run, is in a latency-critical burst. */
static bool latency_running(const struct task_ctx *tctx)
{
	return tctx->latency_critical && tctx->awake_ns < latency_budget(tctx);
}

/*
 * Whether @cpu was claimed by a latency-critical burst (queued at the head of its local DSQ,
 * not started yet) due later than @deadline: then a burst due at @deadline goes at the head
 * too, and runs first. Timers that expire together (a frame's and an audio callback's, or any
 * whose interrupt an emulated vCPU took late) wake their tasks on one CPU in one interrupt;
 * each taking that CPU's head stacked them last-queued-first, and an audio callback waited
 * out a frame's whole burst. A burst due later than the claimer goes to GS_LAT_DSQ instead
 * (waking an idle CPU or preempting one that runs other work), where the next CPU to look
 * for work takes the earliest: this one only once its local DSQ is empty, and the
 * starvation guard may hold it even then.
 */
static bool latency_claimed_for(s32 cpu, u64 deadline)
{
	struct cpu_ctx *cctx = lookup_cpu_ctx(cpu);

	return cctx && cpu_claimed(cctx) && time_before(deadline, cctx->claim_deadline);
}

/*
 * Whether @p, due at @deadline, may take the head of @cpu's local DSQ: @cpu runs regular or
 * interactive work (rank 2; the deadline only ranks bursts), or a burst due later claimed it.
 */
static bool latency_takes_head(s32 cpu, const struct task_struct *p, u64 deadline)
{
	return victim_rank(cpu, p, 0, true) == 2 || latency_claimed_for(cpu, deadline);
}

/*
 * Whether @p's wakeup should take the CPU it wakes on, where the timer or the device
 * interrupt that woke it runs (ops.select_cpu): when that CPU runs regular or interactive
 * work, preempting it there starts the burst as the interrupt returns. Any other CPU has to
 * be kicked or woken first, and a halted or busy vCPU of an emulated machine runs only once
 * the running one's host turn ends (under a build, with CPUs busy and idle by turns, that
 * doubled the wait). Whether it is the task's previous CPU does not matter for a burst this
 * short: under a build at 2 vCPUs, 31 % of these wakeups came on the other CPU and were sent
 * back to their previous one with an interrupt. Only for a task whose last burst was
 * latency-critical, woken asynchronously, and never onto a CPU running another
 * latency-critical burst (frame and audio timers that share a CPU are spread, not stacked),
 * nor onto one another burst has claimed unless @p is due earlier (latency_claimed_for()), nor
 * away from its previous CPU's node (its memory stays there). In low-power mode too, on an
 * active CPU (victim_rank()): preempting it there costs no CPU woken and no interrupt, where
 * a kick costs the kicking CPU an irq_work and the kicked one an IPI.
 */
static bool latency_wake_here(const struct task_struct *p, const struct task_ctx *tctx,
			      s32 prev_cpu, u64 wake_flags)
{
	/* Its deadline if it wakes now (ops.runnable sets woke_at after this). */
	u64 deadline = scx_bpf_now() + weighted_burst(p, tctx);
	s32 cpu = bpf_get_smp_processor_id();

	return preempt_enabled && !(wake_flags & SCX_WAKE_SYNC) &&
	       tctx->latency_critical && cpu_node(cpu) == cpu_node(prev_cpu) &&
	       latency_takes_head(cpu, p, deadline);
}

/* How a queued latency-critical burst was given a CPU (task_ctx.latency_path). */
enum latency_path {
	LATENCY_NONE,
	/* The CPU it woke on, at the head of its local DSQ (latency_wake_here()). */
	LATENCY_LOCAL,
	/* An idle CPU woken for it. */
	LATENCY_IDLE,
	/* A CPU kicked to preempt what runs there. */
	LATENCY_PREEMPT,
	/* None: it waits for a CPU to look for work (a slice's end, latency_tick()). */
	LATENCY_WAITED,
};

static void latency_note_queued(struct task_ctx *tctx, enum latency_path path)
{
	tctx->latency_path = path;
	switch (path) {
	case LATENCY_LOCAL:
		stat_inc(nr_latency_local);
		break;
	case LATENCY_IDLE:
		stat_inc(nr_latency_idle);
		break;
	case LATENCY_PREEMPT:
		stat_inc(nr_latency_preempt);
		break;
	default:
		stat_inc(nr_latency_waited);
	}
}

/*
 * @tctx's task starts running (ops.running): a latency-critical burst queued since its
 * enqueue for GS_LATENCY_SLOW_NS or more is counted as slow, by the path that was to give it
 * a CPU. The stats then say which path the long waits come from.
 */
static void latency_note_started(struct task_ctx *tctx)
{
	u32 path = tctx->latency_path;

	tctx->latency_path = LATENCY_NONE;
	if (path == LATENCY_NONE || elapsed_since(tctx->enq_at) < GS_LATENCY_SLOW_NS)
		return;
	switch (path) {
	case LATENCY_LOCAL:
		stat_inc(nr_latency_slow_local);
		break;
	case LATENCY_IDLE:
		stat_inc(nr_latency_slow_idle);
		break;
	case LATENCY_PREEMPT:
		stat_inc(nr_latency_slow_preempt);
		break;
	default:
		stat_inc(nr_latency_slow_waited);
	}
}

/*
 * Queues @p in GS_LAT_DSQ if its burst is latency-critical, and finds it a CPU: an idle one,
 * else one it preempts. False when the burst is not latency-critical (or no longer is: it
 * has run its budget).
 */
static bool enqueue_latency(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	bool here = tctx->wake_here;
	u64 deadline;
	s32 cpu;

	tctx->wake_here = false;
	if (!latency_running(tctx)) {
		/* Still runnable with the rank it woke with: it ran its whole budget. */
		if (tctx->latency_critical && !(enq_flags & SCX_ENQ_WAKEUP))
			stat_inc(nr_latency_rank_lost);
		/* Not latency-critical, or no longer: it has run its budget. */
		tctx->latency_critical = false;
		return false;
	}
	/* Its deadline is in real time, like GS_PRIO_DSQ's (vtime_now must not follow it). */
	tctx->in_prio = true;
	stat_inc(nr_latency_wakeups);
	/*
	 * Kept on this CPU by latency_wake_here(): at the head of its local DSQ, displacing the
	 * task running there at once (no kick, no interrupt), unless a latency-critical burst
	 * started there meanwhile, or one queued there first is due no later than @p.
	 */
	cpu = scx_bpf_task_cpu(p);
	deadline = latency_deadline(p, tctx);
	if (here && (enq_flags & SCX_ENQ_WAKEUP) && cpu == bpf_get_smp_processor_id() &&
	    latency_takes_head(cpu, p, deadline)) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, latency_slice(tctx),
				   enq_flags | SCX_ENQ_HEAD | SCX_ENQ_PREEMPT);
		claim_cpu(cpu, deadline);
		stat_inc(nr_preemptions);
		latency_note_queued(tctx, LATENCY_LOCAL);
		return true;
	}
	scx_bpf_dsq_insert_vtime(p, GS_LAT_DSQ, latency_slice(tctx), deadline, enq_flags);
	if (kick_idle_for_interactive(p, true))
		latency_note_queued(tctx, LATENCY_IDLE);
	else if (preempt_for(p, cpu, nr_cpu_ids, true))
		latency_note_queued(tctx, LATENCY_PREEMPT);
	else
		latency_note_queued(tctx, LATENCY_WAITED);
	return true;
}

/* Whether anything but latency-critical bursts waits for @cpu. */
static bool others_waiting(s32 cpu)
{
	return usersched_has_work() || scx_bpf_dsq_nr_queued(GS_PRIO_DSQ) ||
	       scx_bpf_dsq_nr_queued(GS_SHARED_DSQ) || scx_bpf_dsq_nr_queued(cpu_dsq(cpu));
}

/*
 * Moves the earliest latency-critical burst to @cpu, unless the other queues have waited
 * starvation_ns for a CPU to serve anything else. "Serve" counts any CPU running their work:
 * last_other_run_ns only moves when such a task starts, so with a hog in the middle of its
 * slice on the next CPU it looked starved, and a frame waited a whole tick (latency_tick())
 * behind a task this CPU picked to end a starvation that was not there.
 */
static bool take_latency(s32 cpu)
{
	if (!scx_bpf_dsq_nr_queued(GS_LAT_DSQ))
		return false;
	if (elapsed_since(last_other_run_ns) >= starvation_ns && others_waiting(cpu) &&
	    !runs_elsewhere(cpu, true)) {
		stat_inc(nr_starvation_guard);
		stat_inc(nr_latency_held);
		return false;
	}
	return take_from(GS_LAT_DSQ, cpu, false);
}

/* Records what @cpu starts running, for take_latency()'s guard. */
static void latency_note_running(bool latency)
{
	if (!latency)
		last_other_run_ns = scx_bpf_now();
}

/*
 * At the tick: a latency-critical burst still waits (its wakeup found no victim), so the
 * CPU's current task gives way unless it is one too, the scheduler or a kernel thread.
 */
static void latency_tick(struct task_struct *p)
{
	struct task_struct *waiter;
	struct task_ctx *tctx;
	s32 cpu = scx_bpf_task_cpu(p);

	if (!preempt_enabled || !scx_bpf_dsq_nr_queued(GS_LAT_DSQ) || is_usersched(p) ||
	    is_kthread(p))
		return;
	tctx = lookup_task_ctx(p);
	if (tctx && latency_running(tctx))
		return;
	bpf_for_each(scx_dsq, waiter, GS_LAT_DSQ, 0) {
		/* The earliest one only: whether this CPU is one that would take it (may_pull()). */
		if (bpf_cpumask_test_cpu(cpu, waiter->cpus_ptr) &&
		    (cpu_is_active(cpu) || !reaches_active(waiter)))
			scx_bpf_task_set_slice(p, 0);
		break;
	}
}

#endif
