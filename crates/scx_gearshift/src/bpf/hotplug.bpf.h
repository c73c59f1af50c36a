/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU hotplug without a restart. The kernel ends a scheduler that does not implement
 * ops.cpu_online()/cpu_offline(), and reloading this one under load took ~25 s of the
 * verifier, with the kernel's scheduler in charge meanwhile. Instead, a CPU that goes offline
 * stops being a place for work (topo.bpf.h's CPU states, its node, low-power's active set), and
 * the tasks already queued for it move to the shared DSQ, where any CPU they may use takes
 * them. A CPU that comes online runs tasks at once; the packing order and the nodes user
 * space read at attach still leave it out of low-power packing and NUMA placement if it was
 * not in them.
 */
#ifndef __GEARSHIFT_HOTPLUG_BPF_H
#define __GEARSHIFT_HOTPLUG_BPF_H

/* How many CPUs are CPU_GONE (topo.bpf.h): offline since the scheduler ran, not back. */
static u32 nr_cpus_gone;
/* The DSQ of a CPU that went offline may hold tasks: the next ops.dispatch() moves them. */
static bool gone_cpus_queued;

/* Whether @cpu went offline with tasks left in its DSQ. */
static bool gone_cpu_queued(s32 cpu)
{
	return cpu_state(cpu) == CPU_GONE && scx_bpf_dsq_nr_queued(cpu_dsq(cpu));
}

/*
 * Moves the tasks waiting in the DSQs of offline CPUs to the shared DSQ, at the deadlines
 * they had. From ops.dispatch(): moving tasks between DSQs is allowed there on every kernel.
 * A decision already on its way when the CPU left can land after a pass, so the load tick
 * looks again (gone_cpus_check()).
 */
static void requeue_from_gone_cpus(void)
{
	struct task_struct *p;
	u32 seen;
	s32 cpu;

	gone_cpus_queued = false;
	bpf_for(cpu, 0, nr_cpu_ids) {
		if (cpu >= GS_MAX_CPUS)
			break;
		if (!gone_cpu_queued(cpu))
			continue;
		seen = 0;
		bpf_for_each(scx_dsq, p, cpu_dsq(cpu), 0) {
			if (++seen > GS_PULL_SCAN) {
				gone_cpus_queued = true;
				break;
			}
			if (scx_bpf_dsq_move_vtime(BPF_FOR_EACH_ITER, p, GS_SHARED_DSQ, 0))
				stat_inc(nr_hotplug_requeues);
		}
	}
}

/*
 * From the load tick, while a CPU is gone: an idle CPU is woken to move the tasks waiting in
 * its DSQ (the CPU leaving could not kick one), or that reached it since.
 */
static void gone_cpus_check(void)
{
	s32 cpu;

	if (!nr_cpus_gone)
		return;
	bpf_for(cpu, 0, nr_cpu_ids) {
		if (gone_cpus_queued || cpu >= GS_MAX_CPUS)
			break;
		if (gone_cpu_queued(cpu))
			gone_cpus_queued = true;
	}
	if (gone_cpus_queued)
		kick_for_usersched();
}

/* ops.cpu_offline(): @cpu takes no more work; what waits for it goes to the other CPUs. */
static void hotplug_cpu_gone(s32 cpu)
{
	if (topo_set_cpu_state(cpu, CPU_GONE) != CPU_GONE)
		__sync_fetch_and_add(&nr_cpus_gone, 1);
	gone_cpus_queued = true;
	stat_inc(nr_hotplug_events);
	/*
	 * No kick from here: this runs on the CPU leaving (on_cpu_in_hotplug()). The next
	 * ops.dispatch() anywhere moves its tasks, and the load tick wakes a CPU for them
	 * (gone_cpus_check()) if none dispatches before.
	 */
}

/* ops.cpu_online(): @cpu takes work again, its own DSQ included. */
static void hotplug_cpu_back(s32 cpu)
{
	if (topo_set_cpu_state(cpu, CPU_ONLINE) == CPU_GONE)
		__sync_fetch_and_sub(&nr_cpus_gone, 1);
	stat_inc(nr_hotplug_events);
}

#endif
