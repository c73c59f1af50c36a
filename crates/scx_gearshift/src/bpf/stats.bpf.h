/* SPDX-License-Identifier: GPL-2.0 */
/* Counters for user-space stats. */
#ifndef __GEARSHIFT_STATS_BPF_H
#define __GEARSHIFT_STATS_BPF_H

struct gs_counters counters;

#define stat_inc(field) __sync_fetch_and_add(&counters.field, 1)
#define stat_dec(field) __sync_fetch_and_sub(&counters.field, 1)

#endif
