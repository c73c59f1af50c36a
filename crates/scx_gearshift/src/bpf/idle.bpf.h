/* SPDX-License-Identifier: GPL-2.0 */
/* Idle CPU selection: the kernel's built-in policy (prev CPU, idle core, LLC, node). */
#ifndef __GEARSHIFT_IDLE_BPF_H
#define __GEARSHIFT_IDLE_BPF_H

/* Returns an idle CPU @p may use, claimed for it, or a negative value. */
static s32 pick_idle_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu;

	if (__COMPAT_HAS_scx_bpf_select_cpu_and)
		return scx_bpf_select_cpu_and(p, prev_cpu, wake_flags, p->cpus_ptr, 0);

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	return is_idle ? cpu : -EBUSY;
}

/* Wakes an idle CPU allowed by @mask so it runs ops.dispatch(); false when none is idle. */
static bool kick_idle_cpu(const struct cpumask *mask)
{
	s32 cpu = scx_bpf_pick_idle_cpu(mask, 0);

	if (cpu < 0)
		return false;
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	return true;
}

/* Wakes any idle CPU, so the user-space scheduler gets to run. */
static void kick_any_idle_cpu(void)
{
	const struct cpumask *online = scx_bpf_get_online_cpumask();

	kick_idle_cpu(online);
	scx_bpf_put_cpumask(online);
}

#endif
