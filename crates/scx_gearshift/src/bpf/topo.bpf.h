/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NUMA placement. Every task has a home node (where its process first ran; threads inherit
 * their creator's) and is placed there while the node has room: cross-node moves cost far
 * more than cross-LLC ones, so a task leaves its node only when the node is overloaded, and
 * goes back as soon as a CPU there is idle.
 */
#ifndef __GEARSHIFT_TOPO_BPF_H
#define __GEARSHIFT_TOPO_BPF_H

/* Node of each CPU id, GS_NO_NODE if unknown (set before load from scx_utils' Topology). */
const volatile u16 cpu_node_ids[GS_MAX_CPUS];
/* One more than the highest node id; below 2, placement ignores nodes. */
const volatile u32 nr_nodes = 1;

/* Per node: online CPUs, and tasks counted running on them. */
static u32 node_nr_cpus[GS_MAX_NODES];
static s32 node_nr_running[GS_MAX_NODES];

struct mask_holder {
	struct bpf_cpumask __kptr *mask;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GS_MAX_NODES);
	__type(key, u32);
	__type(value, struct mask_holder);
} node_masks SEC(".maps");

/*
 * Each CPU's state. Nothing may be queued for a CPU that is not online: no CPU takes tasks
 * from the DSQ of a CPU that is gone, so a task placed there would wait for it to come back.
 * A CPU that went offline while the scheduler ran (ops.cpu_offline(), until ops.cpu_online())
 * is told apart from one offline since before: only its DSQ can hold tasks (hotplug.bpf.h).
 */
enum cpu_state {
	CPU_ONLINE,
	CPU_OFFLINE_AT_ATTACH,
	CPU_GONE,
};

static u8 cpu_states[GS_MAX_CPUS];

static u8 cpu_state(s32 cpu)
{
	u32 idx = cpu;

	if (idx >= GS_MAX_CPUS)
		return CPU_OFFLINE_AT_ATTACH;
	barrier_var(idx);
	return cpu_states[idx & (GS_MAX_CPUS - 1)];
}

static bool cpu_is_offline(s32 cpu)
{
	return cpu_state(cpu) != CPU_ONLINE;
}

/*
 * Whether this code runs on a CPU between ops.cpu_offline() and ops.cpu_online(): one going
 * away or coming back. Nothing here may queue an irq_work (a kick, or a BPF timer started
 * where interrupts are off, which 7.x kernels defer to one): one queued after the dying CPU's
 * last flush stays on its list, and once the CPU is back no later irq_work there raises an
 * interrupt, the kernel's own included. Its kicks were lost, and the next exit of the
 * scheduler spun for good waiting for one (five VMs of five within three hotplug rounds).
 */
static bool on_cpu_in_hotplug(void)
{
	return cpu_is_offline(bpf_get_smp_processor_id());
}

/*
 * Counts the online CPUs for stats and slice sizing: the kernel's online mask, less the CPUs
 * ops.cpu_offline() took out (a CPU leaves that mask a little after the callback).
 */
static void refresh_online_cpus(void)
{
	const struct cpumask *online = scx_bpf_get_online_cpumask();
	u64 nr = 0;
	s32 cpu;

	bpf_for(cpu, 0, nr_cpu_ids) {
		if (cpu >= GS_MAX_CPUS)
			break;
		if (bpf_cpumask_test_cpu(cpu, online) && !cpu_is_offline(cpu))
			nr++;
	}
	scx_bpf_put_cpumask(online);
	counters.nr_online_cpus = nr;
}

static inline bool numa_enabled(void)
{
	return nr_nodes > 1;
}

static s32 cpu_node(s32 cpu)
{
	u32 idx = cpu, node;

	if (idx >= GS_MAX_CPUS)
		return -1;
	/* A no-op mask the compiler must keep: it proves the bound to the verifier. */
	barrier_var(idx);
	node = cpu_node_ids[idx & (GS_MAX_CPUS - 1)];
	return node < GS_MAX_NODES ? node : -1;
}

static const struct cpumask *node_cpus(s32 node)
{
	struct mask_holder *h;
	u32 key = node;

	h = bpf_map_lookup_elem(&node_masks, &key);
	return h ? cast_mask(h->mask) : NULL;
}

/* Counts a task starting (@delta 1) or stopping (-1) on @cpu towards its node's load. */
static void node_note_running(s32 cpu, s32 delta)
{
	s32 node = cpu_node(cpu);

	if (node >= 0 && node < GS_MAX_NODES)
		__sync_fetch_and_add(&node_nr_running[node], delta);
}

/* Every CPU of @node runs a task: only then may its tasks spill onto other nodes. */
static bool node_is_full(s32 node)
{
	if (node < 0 || node >= GS_MAX_NODES)
		return true;
	return node_nr_running[node] >= (s32)node_nr_cpus[node];
}

/*
 * @p, at home on @node, may run elsewhere: the node is full and @p has waited two slices.
 * Short bursts (a shell, a kworker) do not push a job off its node; sustained overload does.
 */
static bool may_leave_home(struct task_struct *p, s32 node)
{
	struct task_ctx *tctx;

	if (!node_is_full(node))
		return false;
	tctx = lookup_task_ctx(p);
	return !tctx || elapsed_since(tctx->enq_at) >= 2 * slice_max_ns;
}

/*
 * The node @p should run on, or -1 when nodes do not matter for it (one node, or an affinity
 * that does not cover the node: the affinity decides then).
 */
static s32 home_node(struct task_struct *p)
{
	const struct cpumask *mask;
	struct task_ctx *tctx;
	s32 node;

	if (!numa_enabled())
		return -1;
	tctx = lookup_task_ctx(p);
	if (!tctx)
		return -1;
	node = tctx->home_node >= 0 ? tctx->home_node : cpu_node(scx_bpf_task_cpu(p));
	if (node < 0 || node >= GS_MAX_NODES)
		return -1;
	mask = node_cpus(node);
	if (!mask || !bpf_cpumask_subset(mask, p->cpus_ptr))
		return -1;
	return node;
}

/* The CPUs of @p's home node while @p runs on another node, else NULL (at home, or no home). */
static const struct cpumask *home_cpus_if_away(struct task_struct *p)
{
	s32 node = home_node(p);

	if (node < 0 || node == cpu_node(scx_bpf_task_cpu(p)))
		return NULL;
	return node_cpus(node);
}

/* @p runs away from its home node and a CPU there is idle: it should go back. */
static bool should_go_home(struct task_struct *p)
{
	const struct cpumask *home = home_cpus_if_away(p), *idle;
	bool ret;

	if (!home)
		return false;
	idle = scx_bpf_get_idle_cpumask();
	ret = bpf_cpumask_intersects(idle, home);
	scx_bpf_put_idle_cpumask(idle);
	return ret;
}

/*
 * Sets @cpu's state; when it goes online or offline, its node's cpumask and CPU count follow,
 * so that placement never picks it while it is gone. Returns the state it had.
 */
static u8 topo_set_cpu_state(s32 cpu, u8 state)
{
	struct bpf_cpumask *mask;
	struct mask_holder *h;
	u32 idx = cpu, node;
	bool online = state == CPU_ONLINE;
	u8 was;

	if (idx >= GS_MAX_CPUS)
		return state;
	barrier_var(idx);
	idx &= GS_MAX_CPUS - 1;
	was = cpu_states[idx];
	cpu_states[idx] = state;
	if ((was == CPU_ONLINE) == online)
		return was;
	node = cpu_node_ids[idx];
	if (node >= GS_MAX_NODES || node >= nr_nodes)
		return was;
	h = bpf_map_lookup_elem(&node_masks, &node);
	if (!h)
		return was;
	bpf_rcu_read_lock();
	mask = h->mask;
	if (mask) {
		if (online)
			bpf_cpumask_set_cpu(cpu, mask);
		else
			bpf_cpumask_clear_cpu(cpu, mask);
	}
	bpf_rcu_read_unlock();
	/* Masked: older verifiers lose the bound checked above across the RCU section. */
	if (online)
		__sync_fetch_and_add(&node_nr_cpus[node & (GS_MAX_NODES - 1)], 1);
	else
		__sync_fetch_and_sub(&node_nr_cpus[node & (GS_MAX_NODES - 1)], 1);
	return was;
}

/*
 * Builds the per-node cpumasks from the topology user space passed in, with the CPUs online
 * now: one that went offline since user space read the topology is left out.
 */
static s32 topo_init(void)
{
	const struct cpumask *online;
	struct bpf_cpumask *mask;
	struct mask_holder *h;
	s32 cpu;
	u32 node;

	bpf_for(node, 0, GS_MAX_NODES) {
		if (node >= nr_nodes)
			break;
		h = bpf_map_lookup_elem(&node_masks, &node);
		if (!h)
			return -ESRCH;
		mask = bpf_cpumask_create();
		if (!mask)
			return -ENOMEM;
		mask = bpf_kptr_xchg(&h->mask, mask);
		if (mask)
			bpf_cpumask_release(mask);
	}
	/* Every CPU starts offline; the online ones are added, with their nodes. */
	bpf_for(cpu, 0, GS_MAX_CPUS)
		cpu_states[cpu & (GS_MAX_CPUS - 1)] = CPU_OFFLINE_AT_ATTACH;
	online = scx_bpf_get_online_cpumask();
	bpf_for(cpu, 0, nr_cpu_ids) {
		if (cpu >= GS_MAX_CPUS)
			break;
		if (bpf_cpumask_test_cpu(cpu, online))
			topo_set_cpu_state(cpu, CPU_ONLINE);
	}
	scx_bpf_put_cpumask(online);
	return 0;
}

#endif
