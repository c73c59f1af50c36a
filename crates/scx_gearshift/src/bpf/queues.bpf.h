/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What waits in the shared DSQs: wakeup decisions (idle.bpf.h), slice sizing (dispatch.bpf.h)
 * and the load tick (modes.bpf.h) all weigh it.
 */
#ifndef __GEARSHIFT_QUEUES_BPF_H
#define __GEARSHIFT_QUEUES_BPF_H

/* Tasks waiting in the shared DSQs (latency-critical, interactive and regular). */
static u64 nr_shared_queued(void)
{
	return scx_bpf_dsq_nr_queued(GS_LAT_DSQ) + scx_bpf_dsq_nr_queued(GS_PRIO_DSQ) +
	       scx_bpf_dsq_nr_queued(GS_SHARED_DSQ);
}

#endif
