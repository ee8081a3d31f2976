/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-vcpu.h: which host thread ran a guest's vCPU ("CPU N/KVM"), and when. */
#ifndef _VTRACE_VCPU_H
#define _VTRACE_VCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vtrace_dump;
struct vtrace_vcpu_history;

struct tep_handle;
struct tep_record;

/* The largest N of a "CPU N/KVM" thread taken (KVM's KVM_MAX_VCPU_IDS on x86) */
#define VTRACE_VCPU_IDX_MAX	4096

int vtrace_vcpu_idx_of(const char *comm, size_t len);

struct vtrace_span {
	uint64_t	start;
	uint64_t	end;
};

struct vtrace_spans {
	struct vtrace_span	*s;
	size_t			nr, alloc;
};

/**
 * struct vtrace_vthread - one host thread named "CPU N/KVM", or with kvm_entry events
 * @tid:	its thread id
 * @idx:	the N, -1 until known (or not so named)
 * @entry_vcpu:	the vcpu_id its kvm_entry events carry, -1 none, -2 several
 * @run:	when it was on a host CPU (sched_switch in .. out)
 * @guest:	when it ran guest code (kvm_entry .. kvm_exit)
 */
struct vtrace_vthread {
	int			tid;
	int			idx;
	int64_t			entry_vcpu;
	struct vtrace_spans	run;
	struct vtrace_spans	guest;
};

/**
 * struct vtrace_vthreads - the vCPU threads of one host trace
 * @lo, @hi:	the host trace's first and last event (raw time stamps)
 * @lost:	events its ring buffers lost
 * @gaps:	where they were lost: on a CPU, from its last event before a loss
 *		(0: before its first) to its first after, sorted by start
 * @has_kvm:	kvm_entry/kvm_exit in its formats
 * @has_switch:	sched_switch in its formats
 * @nr_switch, @nr_entry: sched_switch and kvm_entry events read
 */
struct vtrace_vthreads {
	struct vtrace_vthread	*th;
	int			nr_th, alloc_th;
	uint64_t		lo, hi;
	uint64_t		lost;
	struct vtrace_spans	gaps;
	bool			has_kvm;
	bool			has_switch;
	uint64_t		nr_switch;
	uint64_t		nr_entry;
	void			*priv;		/* the fields of the events read (vcpu.c) */
};

/* Guest events outside their spans by at most this much fit (TSC conversion rounds) */
#define VTRACE_VCPU_TOLERANCE_NS	1000
/* A candidate this many events outside more than the best is looked up no more */
#define VTRACE_VCPU_HOPELESS	1000

/**
 * struct vtrace_vcpu_cand - one candidate thread of a guest CPU, and how its spans fit
 * @sp:		its kvm_entry..kvm_exit spans if it has any, else its run spans
 * @outside:	events farther than the tolerance from every span
 * @worst:	the largest distance outside (TSC ticks)
 * @to_start, @to_end: the smallest distance of an inside event to its span's start, end
 */
struct vtrace_vcpu_cand {
	struct vtrace_vthread		*t;
	const struct vtrace_spans	*sp;
	size_t				cur;
	uint64_t			checked;
	uint64_t			outside;
	uint64_t			worst;
	uint64_t			in_loss;
	uint64_t			to_start;
	uint64_t			to_end;
};

/**
 * struct vtrace_vcpu_fit - the threads a guest CPU may run on, fitted to its events
 * @cand:	one per thread named after the vCPU, however many VMs the host ran
 * @nr_cand:	how many (0: none in the host trace)
 * @own:	of them, those that wrote this VM's offsets (its own, by evidence)
 * @others:	threads of that name or vCPU id left out: they wrote another VM's offsets
 * @least:	the fewest events outside of a candidate so far
 * @unchecked:	events outside the host trace
 * @named_tid:	the thread a capture's manifest names for this vCPU (read from KVM
 *		while the VM ran), 0 none: it breaks a tie of the fit, never the fit
 */
struct vtrace_vcpu_fit {
	const struct vtrace_vthreads	*vt;
	uint64_t			tol;
	struct vtrace_vcpu_cand		*cand;
	int				nr_cand;
	int				own;
	int				others;
	uint64_t			least;
	uint64_t			unchecked;
	int				named_tid;
};

/* Reading the host trace: per host CPU, begin, every record in order, end; then finish */
int vtrace_vthreads_init(struct vtrace_vthreads *vt, struct tep_handle *tep);
void vtrace_vthreads_cpu_begin(struct vtrace_vthreads *vt);
int vtrace_vthreads_record(struct vtrace_vthreads *vt, struct tep_handle *tep,
			   struct tep_record *rec);
int vtrace_vthreads_cpu_end(struct vtrace_vthreads *vt, struct tep_handle *tep);
void vtrace_vthreads_finish(struct vtrace_vthreads *vt, struct tep_handle *tep);
int vtrace_vthreads_read_dat(struct vtrace_vthreads *vt, const char *path);
int vtrace_vthreads_read_pages(struct vtrace_vthreads *vt, struct vtrace_dump *d,
			       uint64_t *bad_pages);
void vtrace_vthreads_free(struct vtrace_vthreads *vt);
const char *vtrace_vthread_name(const struct vtrace_vthread *t, char *buf, size_t len);

int vtrace_vcpu_fit_init(struct vtrace_vcpu_fit *fit, const struct vtrace_vthreads *vt,
			 const struct vtrace_vcpu_history *h, uint64_t tol);
void vtrace_vcpu_fit_free(struct vtrace_vcpu_fit *fit);
bool vtrace_vcpu_fit_by_name(const struct vtrace_vcpu_fit *fit);
int vtrace_vcpu_fit_in_guest(void *fit, uint64_t host_tsc);
bool vtrace_vcpu_fit_has_windows(const struct vtrace_vcpu_fit *fit);
int vtrace_vcpu_fit_event(struct vtrace_vcpu_fit *fit, uint64_t host_tsc);
const struct vtrace_vcpu_cand *vtrace_vcpu_fit_best(const struct vtrace_vcpu_fit *fit,
						    bool *ambiguous);
int vtrace_vcpu_fit_tid(const struct vtrace_vcpu_fit *fit);

#endif /* _VTRACE_VCPU_H */
