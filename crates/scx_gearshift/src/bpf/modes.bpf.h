/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live modes. A load tick averages the number of running tasks; from it, fifo mode decides
 * when BPF may dispatch in arrival order on its own (underutilized) and low-power mode sizes
 * the set of CPUs tasks are packed onto.
 */
#ifndef __GEARSHIFT_MODES_BPF_H
#define __GEARSHIFT_MODES_BPF_H

/* enum gs_mode; written by user space, read on every scheduling event. */
volatile u32 mode = GS_MODE_INTERACTIVE;

/*
 * CPUs in packing order (set before load from the topology: cores of one LLC together, SMT
 * siblings next to each other), and how many entries are valid.
 */
const volatile s32 pack_order[GS_MAX_CPUS];
const volatile u32 nr_pack;

/* Running plus waiting tasks, exponentially averaged, times GS_LOAD_SCALE. */
static u64 avg_running;
static u64 last_tick_ns;
static bool fifo_active;
/* Consecutive ticks the system has looked underutilized. */
static u32 calm_ticks;

/* Ticks of calm before FIFO dispatch resumes (hysteresis in time as well as in load). */
#define FIFO_CALM_TICKS 20

struct mask_holder {
	struct bpf_cpumask __kptr *mask;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct mask_holder);
} active_mask_stor SEC(".maps");

static inline bool lowpower(void)
{
	return mode == GS_MODE_LOWPOWER;
}

/* Tasks that could use a CPU now but wait for one. */
static u64 nr_waiting(void)
{
	return scx_bpf_dsq_nr_queued(GS_SHARED_DSQ) + scx_bpf_dsq_nr_queued(GS_PRIO_DSQ) +
	       nr_user_pending;
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

static void update_fifo(u64 delta_ns)
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
	 * with nothing waiting, for FIFO_CALM_TICKS ticks in a row.
	 */
	if (!nr_waiting() && cpus > 1 && avg_running + GS_LOAD_SCALE / 2 <= (cpus - 1) * GS_LOAD_SCALE)
		calm_ticks++;
	else
		calm_ticks = 0;
	if (!fifo_active && calm_ticks >= FIFO_CALM_TICKS)
		fifo_active = true;
	else if (fifo_active && fifo_overloaded())
		fifo_active = false;
	counters.fifo_active = fifo_active;
}

/*
 * Low-power: the first N CPUs of the packing order, N = the average load (running plus
 * waiting tasks) rounded up; waiting tasks raise the load, so bursts widen the set within a
 * few ticks. (The packing order holds the CPUs online when the scheduler attached; hotplug
 * restarts it.)
 */
static void update_active_mask(void)
{
	struct mask_holder *h;
	struct bpf_cpumask *mask;
	u32 key = 0, want, i;

	want = lowpower() ? (avg_running + GS_LOAD_SCALE - 1) / GS_LOAD_SCALE : GS_MAX_CPUS;
	if (want < 1)
		want = 1;
	if (want > nr_pack)
		want = nr_pack;
	h = bpf_map_lookup_elem(&active_mask_stor, &key);
	if (!h)
		return;
	bpf_rcu_read_lock();
	mask = h->mask;
	if (mask) {
		bpf_for(i, 0, nr_pack) {
			s32 cpu;

			if (i >= GS_MAX_CPUS)
				break;
			cpu = pack_order[i];
			if (cpu < 0 || cpu >= GS_MAX_CPUS)
				continue;
			if (i < want)
				bpf_cpumask_set_cpu(cpu, mask);
			else
				bpf_cpumask_clear_cpu(cpu, mask);
		}
	}
	bpf_rcu_read_unlock();
	counters.nr_active_cpus = want;
}

/* True if @cpu may take regular work (always, outside low-power mode). */
static bool cpu_is_active(s32 cpu)
{
	struct mask_holder *h;
	struct bpf_cpumask *mask;
	u32 key = 0;
	bool active = true;

	if (!lowpower())
		return true;
	h = bpf_map_lookup_elem(&active_mask_stor, &key);
	if (!h)
		return true;
	bpf_rcu_read_lock();
	mask = h->mask;
	if (mask)
		active = bpf_cpumask_test_cpu(cpu, cast_mask(mask));
	bpf_rcu_read_unlock();
	return active;
}

/*
 * Wakes an idle CPU for a regular task. In low-power mode, not while other CPUs run tasks
 * (they take it at their next dispatch), and then only one of the active CPUs — unless the
 * task may not run on any of them.
 */
static void kick_idle_for_regular(struct task_struct *p)
{
	struct mask_holder *h;
	struct bpf_cpumask *mask;
	u32 key = 0;
	s32 cpu = -1;
	bool reachable = false;

	if (!lowpower()) {
		kick_idle_cpu(p->cpus_ptr);
		return;
	}
	h = bpf_map_lookup_elem(&active_mask_stor, &key);
	if (!h)
		return;
	bpf_rcu_read_lock();
	mask = h->mask;
	if (mask) {
		reachable = bpf_cpumask_intersects(cast_mask(mask), p->cpus_ptr);
		if (reachable && !counters.nr_running)
			cpu = scx_bpf_pick_idle_cpu(cast_mask(mask), 0);
	}
	bpf_rcu_read_unlock();
	if (!reachable)
		kick_idle_cpu(p->cpus_ptr);
	else if (cpu >= 0)
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

/*
 * Finds a CPU for an interactive task, which runs at once in every mode: an idle one, or in
 * low-power mode preferably a busy one it preempts (no idle CPU woken), else an idle one of
 * the packed set. False when nothing was kicked.
 */
static bool kick_idle_for_interactive(struct task_struct *p)
{
	struct mask_holder *h;
	struct bpf_cpumask *mask;
	u32 key = 0;
	s32 cpu = -1;

	if (lowpower() && preempt_for(p, scx_bpf_task_cpu(p), nr_cpu_ids))
		return true;
	if (lowpower() && (h = bpf_map_lookup_elem(&active_mask_stor, &key))) {
		bpf_rcu_read_lock();
		mask = h->mask;
		if (mask && bpf_cpumask_intersects(cast_mask(mask), p->cpus_ptr))
			cpu = scx_bpf_pick_idle_cpu(cast_mask(mask), 0);
		bpf_rcu_read_unlock();
		if (cpu >= 0 && bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			return true;
		}
	}
	return kick_idle_cpu(p->cpus_ptr);
}

/* An idle CPU among the active ones for @p (low-power mode), claimed; negative if none. */
static s32 pick_idle_active_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct mask_holder *h;
	struct bpf_cpumask *mask;
	u32 key = 0;
	s32 cpu = -EBUSY;

	h = bpf_map_lookup_elem(&active_mask_stor, &key);
	if (!h)
		return cpu;
	bpf_rcu_read_lock();
	mask = h->mask;
	if (mask)
		cpu = scx_bpf_select_cpu_and(p, prev_cpu, wake_flags, cast_mask(mask), 0);
	bpf_rcu_read_unlock();
	return cpu;
}

static s32 load_tick_fn(void *map, int *key, struct bpf_timer *timer)
{
	/*
	 * Not scx_bpf_now(): in a timer callback it can return the clock of the CPU's last
	 * scheduling event, which on a CPU running one task for a whole slice is stale.
	 */
	u64 now = bpf_ktime_get_ns();
	u64 delta = last_tick_ns ? now - last_tick_ns : 0;

	last_tick_ns = now;
	avg_running = (avg_running * 3 + (counters.nr_running + nr_waiting()) * GS_LOAD_SCALE) / 4;
	update_fifo(delta);
	update_active_mask();
	bpf_timer_start(timer, GS_LOAD_TICK_NS, 0);
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

static s32 modes_init(void)
{
	struct mask_holder *h;
	struct bpf_cpumask *mask;
	struct bpf_timer *timer;
	u32 key = 0;

	h = bpf_map_lookup_elem(&active_mask_stor, &key);
	if (!h)
		return -ESRCH;
	mask = bpf_cpumask_create();
	if (!mask)
		return -ENOMEM;
	mask = bpf_kptr_xchg(&h->mask, mask);
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
