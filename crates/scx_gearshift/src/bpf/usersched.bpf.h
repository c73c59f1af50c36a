/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The channel to the user-space scheduler: tasks go up through the `queued` ring buffer,
 * decisions come back through the `dispatched` user ring buffer. The scheduler task itself
 * waits in GS_SCHED_DSQ and is dispatched, ahead of everything else, only when it has work.
 */
#ifndef __GEARSHIFT_USERSCHED_BPF_H
#define __GEARSHIFT_USERSCHED_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, GS_MAX_QUEUED * sizeof(struct gs_queued_task));
} queued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
	__uint(max_entries, GS_MAX_QUEUED * sizeof(struct gs_dispatched_task));
} dispatched SEC(".maps");

/* Tasks user space holds without having dispatched them yet (written by user space). */
volatile u64 nr_user_pending;

/* The highest vruntime requeue_slice_end() gave a task (read by user space: the policy's
 * vruntime floor for sleepers must keep up with tasks it no longer sees every slice). */
volatile u64 kernel_vruntime_max;

/* Set when something happened user space must look at; cleared when it starts running. */
static volatile u32 usersched_needed;

/* The CPU the heartbeat last ran on (timers_follow_running()); -1 before its first run. */
static s32 heartbeat_cpu = -1;

/* Time the user-space scheduler last started running. */
static u64 usersched_last_run_ns;

/* Heartbeat period while the machine is idle (set by user space from the watchdog timeout). */
const volatile u64 heartbeat_idle_ns = GS_HEARTBEAT_NS;

/*
 * The load tick found nothing running or waiting (modes.bpf.h): it and the heartbeat slow
 * down until a scheduler tick on an active CPU finds load (load_tick_follow_load()).
 */
static bool machine_idle;

static void set_usersched_needed(void)
{
	__sync_fetch_and_or(&usersched_needed, 1);
}

static bool usersched_has_work(void)
{
	return usersched_needed || nr_user_pending ||
	       bpf_ringbuf_query(&queued, BPF_RB_AVAIL_DATA);
}

/*
 * Queues @p to user space. Returns false when the ring buffer is full (user space congested):
 * the caller then dispatches the task itself.
 */
static bool queue_to_usersched(struct task_struct *p, u64 enq_flags)
{
	struct gs_queued_task *t;
	struct task_ctx *tctx;

	tctx = lookup_task_ctx(p);
	if (!tctx)
		return false;

	t = bpf_ringbuf_reserve(&queued, sizeof(*t), 0);
	if (!t) {
		stat_inc(nr_sched_congested);
		return false;
	}
	t->pid = p->pid;
	t->cpu = scx_bpf_task_cpu(p);
	t->cpumask_gen = tctx->cpumask_gen;
	t->nr_cpus_allowed = p->nr_cpus_allowed;
	t->enq_seq = ++tctx->enq_seq;
	t->flags = 0;
	if (enq_flags & SCX_ENQ_WAKEUP)
		t->flags |= GS_TASK_WAKEUP;
	if (is_kthread(p))
		t->flags |= GS_TASK_KTHREAD;
	if (tctx->interactive)
		t->flags |= GS_TASK_INTERACTIVE;
	if (message_driven(tctx))
		t->flags |= GS_TASK_MESSAGE_DRIVEN;
	t->sum_exec_runtime = p->se.sum_exec_runtime;
	tctx->sent_exec = t->sum_exec_runtime;
	t->nvcsw = p->nvcsw;
	t->weight = task_weight(p, tctx);
	t->enq_ns = scx_bpf_now();
	t->slept_ns = (enq_flags & SCX_ENQ_WAKEUP) && tctx->stopped_ns ?
		      time_between(tctx->stopped_ns, t->enq_ns) : 0;
	__builtin_memcpy(t->comm, p->comm, GS_COMM_LEN);
	/* No wakeup: user space is woken through the DSQ, not by epoll. */
	bpf_ringbuf_submit(t, BPF_RB_NO_WAKEUP);
	stat_inc(nr_queued);
	set_usersched_needed();
	return true;
}

struct heartbeat {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct heartbeat);
} heartbeat_timer SEC(".maps");

/*
 * Runs user space periodically even when nothing is queued: the scheduler task must not look
 * stalled to the sched_ext watchdog, and the policy forgets tasks it has not seen for a while.
 * Control requests do not wait for it (gearshift_stopping() runs user space after the thread
 * that forwards one). On an idle machine it slows to heartbeat_idle_ns: waking a laptop four
 * times a second for a scheduler with nothing to schedule cost it more timer interrupts than
 * the kernel's own scheduler takes.
 */
static int heartbeat_fn(void *map, int *key, struct bpf_timer *timer)
{
	heartbeat_cpu = bpf_get_smp_processor_id();
	if (elapsed_since(usersched_last_run_ns) >= GS_HEARTBEAT_NS) {
		set_usersched_needed();
		/* As in load_tick_fn(): the active mask needs RCU here on older kernels. */
		bpf_rcu_read_lock();
		kick_for_usersched();
		bpf_rcu_read_unlock();
	}
	refresh_online_cpus();
	bpf_timer_start(timer, machine_idle ? heartbeat_idle_ns : GS_HEARTBEAT_NS, 0);
	return 0;
}

static s32 heartbeat_init(void)
{
	struct bpf_timer *timer;
	u32 key = 0;
	s32 err;

	timer = bpf_map_lookup_elem(&heartbeat_timer, &key);
	if (!timer)
		return -ESRCH;
	bpf_timer_init(timer, &heartbeat_timer, CLOCK_MONOTONIC);
	bpf_timer_set_callback(timer, heartbeat_fn);
	err = bpf_timer_start(timer, GS_HEARTBEAT_NS, 0);
	return err;
}

#endif
