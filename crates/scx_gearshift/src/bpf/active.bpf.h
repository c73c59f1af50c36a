/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mode in effect and low-power mode's active set: the CPUs regular work is packed onto.
 * Every placement decision (wakeups, preemption, pulls from shared queues) consults it, so
 * that no CPU outside the set is woken or handed work it must leave alone.
 */
#ifndef __GEARSHIFT_ACTIVE_BPF_H
#define __GEARSHIFT_ACTIVE_BPF_H

/* enum gs_mode; written by user space, read on every scheduling event. */
volatile u32 mode = GS_MODE_INTERACTIVE;

/* CPUs low-power mode packs regular tasks onto (updated by the load tick, modes.bpf.h). */
private(GEARSHIFT) struct bpf_cpumask __kptr *active_mask;

static inline bool lowpower(void)
{
	return mode == GS_MODE_LOWPOWER;
}

/* The active set in low-power mode; NULL in other modes (every CPU is active). */
static __always_inline const struct cpumask *lowpower_cpus(void)
{
	return lowpower() ? cast_mask(active_mask) : NULL;
}

/* True if @cpu may take regular work (always, outside low-power mode). */
static bool cpu_is_active(s32 cpu)
{
	const struct cpumask *active = lowpower_cpus();

	return !active || bpf_cpumask_test_cpu(cpu, active);
}

/* True unless low-power mode keeps @p's allowed CPUs all out of service. */
static bool reaches_active(const struct task_struct *p)
{
	const struct cpumask *active = lowpower_cpus();

	return !active || bpf_cpumask_intersects(active, p->cpus_ptr);
}

/*
 * Whether a BPF timer last run on @timer_cpu should move to @cpu: low-power mode keeps
 * @timer_cpu out of service and @cpu in it. A BPF timer fires on the CPU that armed it and
 * its callback re-arms it there, so the scheduler's timers stayed on whichever CPU ops.init
 * ran on: a CPU kept out of service was woken 100 times a second by the load tick alone.
 */
static __always_inline bool timer_off_active(s32 timer_cpu, s32 cpu)
{
	return timer_cpu != cpu && lowpower() && !cpu_is_active(timer_cpu) && cpu_is_active(cpu);
}

/*
 * Re-arms @timer (period @period_ns, last run on *@timer_cpu) from @cpu, where a task starts
 * running (ops.running): armed from a CPU that is not idle, the hrtimer moves there.
 */
static void timer_rearm_here(struct bpf_timer *timer, s32 *timer_cpu, u64 period_ns, s32 cpu)
{
	if (on_cpu_in_hotplug())
		return;
	*timer_cpu = cpu;
	bpf_timer_start(timer, period_ns, 0);
}

#endif
