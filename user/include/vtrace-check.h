/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-check.h: the self-check's core: a guest CPU's events fitted to its vCPU thread's spans. */
#ifndef _VTRACE_CHECK_H
#define _VTRACE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "vtrace-vcpu.h"

struct vtrace_dump;
struct vtrace_tsc_map;
struct vtrace_vcpu_history;

/**
 * struct vtrace_check_cpu - the self-check of one guest CPU
 * @fit:	its vCPU's candidate threads, and how its events fit their spans
 * @seen:	its events read (fitted or not)
 * @first:	the smallest host TSC of them
 * @last:	the largest
 * @within:	of them, those within the host trace (first to last event), threads or not
 */
struct vtrace_check_cpu {
	struct vtrace_vcpu_fit	fit;
	uint64_t		seen;
	uint64_t		first;
	uint64_t		last;
	uint64_t		within;
};

/**
 * struct vtrace_check_sum - what the checked guest CPUs add up to
 * @checked:	events inside the host trace, looked up in the spans
 * @outside:	of them, farther than the tolerance from every span
 * @unchecked:	events outside the host trace (not looked up)
 * @worst:	the largest distance outside (TSC)
 * @bound:	the proved bound of the alignment error (TSC), UINT64_MAX: none
 * @in_loss:	events outside where the host trace lost events
 */
#define VTRACE_CHECK_SUM_INIT	{ .bound = UINT64_MAX }

struct vtrace_check_sum {
	uint64_t	checked;
	uint64_t	outside;
	uint64_t	unchecked;
	uint64_t	worst;
	uint64_t	bound;
	uint64_t	in_loss;
};

/**
 * struct vtrace_check_vm - how a guest's events fit the vCPU threads of one VM
 * @sum:	its guest CPUs' fits added up, each to the thread it fits best
 * @seen:	the guest's events (those the offsets do not convert too)
 * @no_thread:	guest CPUs with events within the host trace, while the host trace
 *		holds no thread of that VM's vCPU (and holds vCPU threads: it could tell)
 */
struct vtrace_check_vm {
	struct vtrace_check_sum	sum;
	uint64_t		seen;
	int			no_thread;
};

struct tep_record;
struct vtrace_offsets;

int vtrace_dump_cpu_host(struct vtrace_dump *d, int cpu, struct vtrace_tsc_map *map,
			 int (*fn)(void *priv, const struct tep_record *rec, const uint64_t *host),
			 void *priv);
uint64_t vtrace_check_tolerance(uint64_t khz);
int vtrace_check_cpu_init(struct vtrace_check_cpu *cc, const struct vtrace_vthreads *vt,
			  const struct vtrace_vcpu_history *h, uint64_t khz);
void vtrace_check_cpu_free(struct vtrace_check_cpu *cc);
void vtrace_check_cpu_windows(struct vtrace_check_cpu *cc, struct vtrace_tsc_map *map);
void vtrace_check_cpu_event(struct vtrace_check_cpu *cc, uint64_t host_tsc, bool fit);
int vtrace_check_cpu_read_dump(struct vtrace_check_cpu *cc, struct vtrace_dump *d, int cpu,
			       const struct vtrace_vcpu_history *h, bool assume_constant);
int vtrace_check_vm_fit(struct vtrace_check_vm *r, const struct vtrace_vthreads *vt,
			struct vtrace_dump *d, struct vtrace_offsets *o, int pid, uint64_t khz,
			bool assume_constant);
uint64_t vtrace_check_bound(const struct vtrace_vcpu_cand *k);
void vtrace_check_sum_add(struct vtrace_check_sum *t, const struct vtrace_check_cpu *cc,
			  const struct vtrace_vcpu_cand *k);

#endif /* _VTRACE_CHECK_H */
