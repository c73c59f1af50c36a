/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live modes. A load tick averages the number of running tasks; from it, fifo mode decides
 * when BPF may dispatch in arrival order on its own (underutilized) and low-power mode sizes
 * the set of CPUs tasks are packed onto.
 */
#ifndef __GEARSHIFT_MODES_BPF_H
#define __GEARSHIFT_MODES_BPF_H

/* Running plus waiting tasks, exponentially averaged, times GS_LOAD_SCALE. */
static u64 avg_running;
/*
 * The same, averaged over ~16 ticks, for sizing low-power's active set: low-power makes tasks
 * wait by design, and a short burst of waiters must not widen the set at once.
 */
static u64 avg_pack;
static u64 last_tick_ns;
/* The CPU the load tick last ran on (timers_follow_running()); -1 before its first run. */
static s32 load_tick_cpu = -1;
static bool fifo_active;
/* How long the system has looked underutilized, without a break. */
static u64 calm_ns;

/* Load tick period while nothing runs or waits (load_tick_fn()). */
#define GS_LOAD_IDLE_TICK_NS (1000 * 1000 * 1000ULL)

/*
 * Calm before FIFO dispatch resumes (hysteresis in time as well as in load). In time, not in
 * ticks: the tick slows to a second on an idle machine.
 */
#define FIFO_CALM_NS (20 * GS_LOAD_TICK_NS)

/* Tasks that could use a CPU now but wait for one. */
static u64 nr_waiting(void)
{
	return nr_shared_queued() + nr_user_pending;
}

/* True when FIFO dispatch must stop: most CPUs are busy. */
static bool fifo_overloaded(void)
{
	u64 cpus = counters.nr_online_cpus;

	return counters.nr_running + nr_waiting() + 1 >= cpus;
}

/* Whether enqueue may dispatch @p in FIFO order, without user space. */
static bool fifo_now(void)
{
	if (mode != GS_MODE_FIFO || !fifo_active)
		return false;
	/* Leave at once when the load arrives; the tick decides when to come back. */
	if (fifo_overloaded()) {
		fifo_active = false;
		counters.fifo_active = 0;
		return false;
	}
	return true;
}

/* @idle: nothing runs or waits, and the averages have decayed (load_tick_fn()). */
static void update_fifo(u64 delta_ns, bool idle)
{
	u64 cpus = counters.nr_online_cpus;

	if (mode != GS_MODE_FIFO) {
		fifo_active = false;
		counters.fifo_active = 0;
		return;
	}
	if (fifo_active)
		counters.fifo_ns += delta_ns;
	else
		counters.fifo_overload_ns += delta_ns;
	/*
	 * Hysteresis: back to FIFO only once the average has stayed half a CPU below the limit,
	 * with nothing waiting, for FIFO_CALM_NS; or at once when the machine goes idle, as
	 * calm as it gets (the next tick may be a second away, and light work that arrives
	 * meanwhile may never run long enough to bring the fast tick back).
	 */
	if (!nr_waiting() && cpus > 1 && avg_running + GS_LOAD_SCALE / 2 <= (cpus - 1) * GS_LOAD_SCALE)
		calm_ns += delta_ns;
	else
		calm_ns = 0;
	if (!fifo_active && (calm_ns >= FIFO_CALM_NS || idle))
		fifo_active = true;
	else if (fifo_active && fifo_overloaded())
		fifo_active = false;
	counters.fifo_active = fifo_active;
}

/*
 * Low-power: the first N online CPUs of the packing order, N = the slow average load (running
 * plus waiting tasks) rounded up past a quarter; sustained waiting widens the set within ~20
 * ticks. (The packing order holds the CPUs online when user space read the topology: one that
 * came online later is left out of it.)
 */
static void update_active_mask(void)
{
	struct bpf_cpumask *mask;
	u32 want, i, nr_set = 0;

	/* Rounded up only past a quarter CPU: a trickle of light work needs no extra CPU. */
	want = lowpower() ? (avg_pack + GS_LOAD_SCALE * 3 / 4) / GS_LOAD_SCALE : GS_MAX_CPUS;
	if (want < 1)
		want = 1;
	if (want > nr_pack)
		want = nr_pack;
	bpf_rcu_read_lock();
	mask = active_mask;
	if (mask) {
		bpf_for(i, 0, nr_pack) {
			s32 cpu;

			if (i >= GS_MAX_CPUS)
				break;
			cpu = pack_order[i];
			if (cpu < 0 || cpu >= GS_MAX_CPUS)
				continue;
			if (nr_set < want && !cpu_is_offline(cpu)) {
				bpf_cpumask_set_cpu(cpu, mask);
				nr_set++;
			} else {
				bpf_cpumask_clear_cpu(cpu, mask);
			}
		}
	}
	bpf_rcu_read_unlock();
	counters.nr_active_cpus = nr_set;
}

/*
 * Wakes an idle CPU the first task of @dsq may use, as a regular wakeup would; in low-power
 * mode, once it has waited a whole slice, an idle active CPU even while busy ones were to
 * take it (kick_active_for_overdue()).
 */
static void kick_for_first(u64 dsq)
{
	const struct cpumask *active = lowpower_cpus();
	struct task_struct *p;
	struct task_ctx *tctx;

	bpf_for_each(scx_dsq, p, dsq, 0) {
		tctx = lookup_task_ctx(p);
		if (active && tctx && bpf_cpumask_intersects(active, p->cpus_ptr) &&
		    time_after(scx_bpf_now(), tctx->queued_at + slice_max_ns))
			kick_active_for_overdue(p, active);
		else
			kick_idle_for_regular(p);
		break;
	}
}

/*
 * A task queued while every CPU it could use looked busy waits for one to free up; if one
 * went idle meanwhile without taking it (or low-power mode's active set grew), wake it now.
 */
static void kick_for_waiting(void)
{
	kick_for_first(GS_LAT_DSQ);
	kick_for_first(GS_PRIO_DSQ);
	kick_for_first(GS_SHARED_DSQ);
}

static s32 load_tick_fn(void *map, int *key, struct bpf_timer *timer)
{
	/*
	 * Not scx_bpf_now(): in a timer callback it can return the clock of the CPU's last
	 * scheduling event, which on a CPU running one task for a whole slice is stale.
	 */
	u64 now = bpf_ktime_get_ns();
	u64 delta = last_tick_ns ? now - last_tick_ns : 0, load;
	bool idle;

	last_tick_ns = now;
	load_tick_cpu = bpf_get_smp_processor_id();
	load = (counters.nr_running + nr_waiting()) * GS_LOAD_SCALE;
	avg_running = (avg_running * 3 + load) / 4;
	avg_pack = (avg_pack * 15 + load) / 16;
	idle = !load && avg_running < GS_LOAD_SCALE / 16 && avg_pack < GS_LOAD_SCALE / 4;
	update_fifo(delta, idle);
	update_active_mask();
	/*
	 * The callback belongs to ops.init, a sleepable program: kernels before 6.13 verify it
	 * as sleepable too, and then the active mask may only be read inside an RCU read-side
	 * section (update_active_mask() takes its own; they must not nest on those kernels).
	 */
	bpf_rcu_read_lock();
	kick_for_waiting();
	rescue_overdue_tasks();
	gone_cpus_check();
	bpf_rcu_read_unlock();
	/*
	 * Nothing runs or waits and the averages have decayed (low-power's set is down to one
	 * CPU): tick once a second instead of a hundred times until a scheduler tick finds a
	 * task running on an active CPU (load_tick_follow_load()), and slow the heartbeat too.
	 * An idle laptop was woken 100 times a second to average zeros. Nothing waited when the
	 * tick slowed; a task queued later that no CPU takes (what rescue_overdue_tasks() is
	 * for) waits for the next slow tick, up to a second, well inside the watchdog's 30.
	 */
	machine_idle = idle;
	bpf_timer_start(timer, machine_idle ? GS_LOAD_IDLE_TICK_NS : GS_LOAD_TICK_NS, 0);
	return 0;
}

struct load_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct load_timer);
} load_timer_stor SEC(".maps");

/* The load tick back at its period, re-armed from @cpu (it moves there: timer_rearm_here()). */
static void load_tick_resume(s32 cpu)
{
	struct load_timer *lt;
	u32 key = 0;

	if (!(lt = bpf_map_lookup_elem(&load_timer_stor, &key)))
		return;
	machine_idle = false;
	timer_rearm_here(&lt->timer, &load_tick_cpu, GS_LOAD_TICK_NS, cpu);
}

/*
 * A task starts running on @cpu (ops.running). Low-power keeps the CPU a timer last fired on
 * out of service and @cpu in it (timer_off_active()): re-armed from here, the timer moves to
 * @cpu. At most one re-arm per timer and event: on 7.x kernels each costs an irq_work.
 */
static void timers_follow_running(s32 cpu)
{
	struct heartbeat *hb;
	u32 key = 0;

	if (timer_off_active(load_tick_cpu, cpu))
		load_tick_resume(cpu);
	if (timer_off_active(heartbeat_cpu, cpu) &&
	    (hb = bpf_map_lookup_elem(&heartbeat_timer, &key)))
		timer_rearm_here(&hb->timer, &heartbeat_cpu, GS_HEARTBEAT_NS, cpu);
}

/* How long a task runs without stopping before an idle machine counts as loaded again. */
#define GS_LOAD_WAKE_RUN_NS (4 * 1000 * 1000ULL)

/*
 * The scheduler tick (ops.tick) finds @p running on @cpu while the load tick runs slowly
 * (load_tick_fn()): once @p has run GS_LOAD_WAKE_RUN_NS without stopping, or tasks wait for
 * a CPU, the machine has work again, and the load tick goes back to its period, armed from
 * @cpu if it is active (from a CPU low-power keeps out of service, it would move there). Not
 * when a task merely starts: on an idle machine kernel workers and a shell's commands run for
 * microseconds several times a second, and each brought a 10 ms tick that woke the CPU again
 * to find nothing.
 */
static void load_tick_follow_load(struct task_struct *p, s32 cpu)
{
	struct task_ctx *tctx;

	if (!machine_idle || is_usersched(p) || !cpu_is_active(cpu) ||
	    !(tctx = lookup_task_ctx(p)))
		return;
	if (elapsed_since(tctx->last_run_ns) >= GS_LOAD_WAKE_RUN_NS || nr_waiting())
		load_tick_resume(cpu);
}

static s32 modes_init(void)
{
	struct bpf_cpumask *mask;
	struct bpf_timer *timer;
	u32 key = 0;

	mask = bpf_cpumask_create();
	if (!mask)
		return -ENOMEM;
	mask = bpf_kptr_xchg(&active_mask, mask);
	if (mask)
		bpf_cpumask_release(mask);

	timer = bpf_map_lookup_elem(&load_timer_stor, &key);
	if (!timer)
		return -ESRCH;
	bpf_timer_init(timer, &load_timer_stor, CLOCK_MONOTONIC);
	bpf_timer_set_callback(timer, load_tick_fn);
	return bpf_timer_start(timer, GS_LOAD_TICK_NS, 0);
}

#endif
