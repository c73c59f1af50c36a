/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where tasks run and which idle CPUs get woken. The kernel's built-in policy picks idle CPUs
 * (prev CPU, idle core, LLC, node) within the task's home node unless it is overloaded; in
 * low-power mode only the packed set of active CPUs is used, and no idle CPU is woken while
 * an active CPU the task may use runs one.
 */
#ifndef __GEARSHIFT_IDLE_BPF_H
#define __GEARSHIFT_IDLE_BPF_H

/*
 * CPUs in packing order (set before load from the topology: node by node, cores of one LLC
 * together, SMT siblings next to each other), and how many entries are valid. The active set
 * is a prefix of it.
 */
const volatile s32 pack_order[GS_MAX_CPUS];
const volatile u32 nr_pack;

/*
 * An idle CPU of @mask, claimed: marked busy until it next goes idle, so it must be kicked
 * (or given a task). None from a CPU in hotplug, which may not kick (on_cpu_in_hotplug()):
 * a CPU claimed and not kicked would idle on, marked busy.
 */
static s32 claim_idle_cpu(const struct cpumask *mask)
{
	if (on_cpu_in_hotplug())
		return -EBUSY;
	return scx_bpf_pick_idle_cpu(mask, 0);
}

/* An idle CPU of @mask (and @p's affinity), claimed for @p; negative if none. */
static s32 pick_idle_in(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
			const struct cpumask *mask)
{
	bool is_idle = false;
	s32 cpu;

	if (on_cpu_in_hotplug())
		return -EBUSY;

	if (__COMPAT_HAS_scx_bpf_select_cpu_and)
		return scx_bpf_select_cpu_and(p, prev_cpu, wake_flags, mask, 0);
	/*
	 * Kernels without scx_bpf_select_cpu_and() (6.12 to 6.15): the default pick, kept if it
	 * lies in @mask. One outside was claimed all the same: kick it, so that it passes through
	 * idle again and is not left marked busy, and look for one in @mask instead.
	 */
	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (!is_idle)
		return -EBUSY;
	if (mask == p->cpus_ptr || bpf_cpumask_test_cpu(cpu, mask))
		return cpu;
	kick_idle(cpu);
	cpu = claim_idle_cpu(mask);
	if (cpu < 0)
		return -EBUSY;
	if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		return cpu;
	kick_idle(cpu);
	return -EBUSY;
}

/* @prev_cpu if it is in @mask, else a CPU of @mask @p may use, else @prev_cpu. */
static s32 cpu_within(struct task_struct *p, s32 prev_cpu, const struct cpumask *mask)
{
	u32 cpu;

	if (bpf_cpumask_test_cpu(prev_cpu, mask))
		return prev_cpu;
	cpu = bpf_cpumask_any_and_distribute(mask, p->cpus_ptr);
	return cpu < nr_cpu_ids ? cpu : prev_cpu;
}

/*
 * One pass over the active set in packing order, among the CPUs @p may use: the first busy
 * one (negative if none), in *@first_idle the first idle one (negative if none) and in
 * *@nr_busy how many are busy. @idle: the idle cpumask, held by the caller.
 */
static s32 active_cpus_for(const struct task_struct *p, const struct cpumask *active,
			   const struct cpumask *idle, s32 *first_idle, u32 *nr_busy)
{
	s32 first_busy = -1;
	u32 i;

	*first_idle = -1;
	*nr_busy = 0;
	bpf_for(i, 0, nr_pack) {
		s32 c = pack_order[i & (GS_MAX_CPUS - 1)];

		if (c < 0)
			break;
		/* Offline CPUs are holes in the active prefix (update_active_mask()). */
		if (cpu_is_offline(c))
			continue;
		if (!bpf_cpumask_test_cpu(c, active))
			break;
		if (!bpf_cpumask_test_cpu(c, p->cpus_ptr))
			continue;
		if (!bpf_cpumask_test_cpu(c, idle)) {
			if (first_busy < 0)
				first_busy = c;
			(*nr_busy)++;
		} else if (*first_idle < 0) {
			*first_idle = c;
		}
	}
	return first_busy;
}

/*
 * Low-power mode: a busy active CPU for a waking @p (@prev_cpu first), so the wakeup wakes no
 * idle CPU (an interactive task preempts it, a regular one waits for its next dispatch);
 * negative when no active CPU @p may use is busy.
 */
static s32 busy_active_cpu(struct task_struct *p, s32 prev_cpu, const struct cpumask *active)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	s32 cpu, first_idle;
	u32 nr_busy;

	if (bpf_cpumask_test_cpu(prev_cpu, active) && bpf_cpumask_test_cpu(prev_cpu, p->cpus_ptr) &&
	    !bpf_cpumask_test_cpu(prev_cpu, idle))
		cpu = prev_cpu;
	else
		cpu = active_cpus_for(p, active, idle, &first_idle, &nr_busy);
	scx_bpf_put_idle_cpumask(idle);
	return cpu;
}

/*
 * The CPU for a waking @p; *@idle tells whether it is idle and claimed (direct dispatch).
 * A task that cannot have an idle CPU is queued on a CPU of its node (or of the active set),
 * so the wakeup does not wake an idle CPU it must not use.
 */
static s32 select_wake_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags, bool *idle)
{
	const struct cpumask *active = lowpower_cpus(), *home;
	s32 node, cpu;

	*idle = false;
	if (active) {
		if (!bpf_cpumask_intersects(active, p->cpus_ptr))
			return prev_cpu;
		/*
		 * Only a busy *active* CPU takes the task at its next dispatch: CPUs outside the
		 * set leave regular work alone, so with every busy CPU outside it (pinned tasks,
		 * tasks still running where the set shrank), an active CPU must be woken.
		 */
		cpu = busy_active_cpu(p, prev_cpu, active);
		if (cpu >= 0)
			return cpu;
		cpu = pick_idle_in(p, prev_cpu, wake_flags, active);
		if (cpu < 0)
			return cpu_within(p, prev_cpu, active);
		*idle = true;
		return cpu;
	}
	node = home_node(p);
	if (node >= 0 && (home = node_cpus(node))) {
		cpu = pick_idle_in(p, prev_cpu, wake_flags, home);
		if (cpu >= 0) {
			*idle = true;
			return cpu;
		}
		/* Wait at home; another node's CPU takes it if the wait lasts (may_pull()). */
		return cpu_within(p, prev_cpu, home);
	}
	cpu = pick_idle_in(p, prev_cpu, wake_flags, p->cpus_ptr);
	if (cpu < 0)
		return prev_cpu;
	*idle = true;
	return cpu;
}

/* Wakes an idle CPU allowed by @mask so it runs ops.dispatch(); false when none is idle. */
static bool kick_idle_cpu(const struct cpumask *mask)
{
	s32 cpu = claim_idle_cpu(mask);

	if (cpu < 0)
		return false;
	kick_idle(cpu);
	return true;
}

/* Wakes an idle CPU so the user-space scheduler gets to run (an active one in low-power). */
static void kick_for_usersched(void)
{
	const struct cpumask *active = lowpower_cpus(), *online;

	if (active) {
		kick_idle_cpu(active);
		return;
	}
	online = scx_bpf_get_online_cpumask();
	kick_idle_cpu(online);
	scx_bpf_put_cpumask(online);
}

/*
 * Low-power mode: an idle active CPU @p may use that a waiter should wake, or negative. Busy
 * active CPUs take one waiter each at their next dispatch (or one preemption), so a waiter
 * wakes no CPU while they can absorb the queue; beyond that it does: the active set is sized
 * to the load, and a CPU of it left asleep beside a queue is capacity lost.
 */
static s32 spare_active_cpu(const struct task_struct *p, const struct cpumask *active)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	s32 busy, cpu;
	u32 nr_busy;

	busy = active_cpus_for(p, active, idle, &cpu, &nr_busy);
	scx_bpf_put_idle_cpumask(idle);
	if (cpu >= 0 && busy >= 0 && nr_shared_queued() <= nr_busy)
		return -1;
	return cpu;
}

/*
 * Low-power mode, from the load tick: @p has waited a whole slice in a shared queue, so the
 * busy active CPUs that were to absorb it (spare_active_cpu()) have not turned over in time:
 * a task held up in the kernel, as under memory pressure, runs on past its slice. An idle
 * active CPU @p may use is woken for it anyway. (Other modes wake a CPU for a waiter at once.)
 */
static void kick_active_for_overdue(const struct task_struct *p, const struct cpumask *active)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	s32 cpu;
	u32 nr_busy;

	active_cpus_for(p, active, idle, &cpu, &nr_busy);
	scx_bpf_put_idle_cpumask(idle);
	if (cpu >= 0 && !wakeup_pending(cpu))
		kick_idle(cpu);
}

/*
 * Wakes an idle CPU for a regular task: one of its home node, or of another node only when
 * it may leave home (the load tick retries while it waits). In low-power mode, only an active
 * CPU, and only the one spare_active_cpu() names (or any, if @p may use none of them).
 */
static void kick_idle_for_regular(struct task_struct *p)
{
	const struct cpumask *active = lowpower_cpus(), *home;
	s32 node, cpu;

	if (active && bpf_cpumask_intersects(active, p->cpus_ptr)) {
		cpu = spare_active_cpu(p, active);
		if (cpu >= 0)
			kick_idle(cpu);
		return;
	}
	node = home_node(p);
	if (!active && node >= 0 && (home = node_cpus(node))) {
		if (kick_idle_cpu(home) || !may_leave_home(p, node))
			return;
	}
	kick_idle_cpu(p->cpus_ptr);
}

/*
 * Finds a CPU for an interactive task, which runs at once in every mode: an idle one (of its
 * home node first), or in low-power mode a busy one it preempts unless the queue has outgrown
 * the busy CPUs (spare_active_cpu()), else an idle active one; CPUs outside the active set
 * are never woken for it. False when nothing was kicked. @latency: the task's burst is
 * latency-critical (preempt_for()).
 */
static bool kick_idle_for_interactive(struct task_struct *p, bool latency)
{
	const struct cpumask *active = lowpower_cpus(), *home;
	s32 cpu, node;

	if (active && bpf_cpumask_intersects(active, p->cpus_ptr)) {
		cpu = spare_active_cpu(p, active);
		if (cpu >= 0) {
			kick_idle(cpu);
			return true;
		}
		if (preempt_for(p, scx_bpf_task_cpu(p), nr_cpu_ids, latency))
			return true;
		cpu = claim_idle_cpu(active);
		if (cpu < 0)
			return false;
		/* Claimed: kick it even if @p may not use it, so it is not left marked busy. */
		kick_idle(cpu);
		return bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
	}
	node = home_node(p);
	if (!active && node >= 0 && (home = node_cpus(node)) && kick_idle_cpu(home))
		return true;
	return kick_idle_cpu(p->cpus_ptr);
}

#endif
