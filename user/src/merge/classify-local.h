/* SPDX-License-Identifier: GPL-2.0 */
/* classify-local.h: the classifier's state, shared by its files (classify.c: design). */
/*
 *   classify.c          the state: rings of slices, silences, losses and
 *                       modes per CPU and vCPU thread, fed every event
 *   classify-window.c   a late wake-up's window walked, cut into causes
 *   classify-print.c    the summary, printed as text or JSON lines
 */
#ifndef _CLASSIFY_LOCAL_H
#define _CLASSIFY_LOCAL_H

#include <trace-seq.h>

#include "merge-local.h"
#include "vtrace-kvm.h"

#define COMM_LEN	SW_COMM_LEN
#define RING		2048	/* slices kept per CPU: how far a late wake-up looks back */
#define TASK_D		2	/* sched_switch prev_state: TASK_UNINTERRUPTIBLE */
#define EXIT_RING	8192	/* changes of mode kept per vCPU thread */
#define MAX_XTHREADS	256	/* vCPU threads whose exits are kept */
#define REASON_LEN	48	/* an exit's reason, a cause's task ("host cpu 1, g1 cpu 1") */
#define QUIET_RING	256	/* silences of QUIET_MIN_NS or more kept per CPU */
#define MAX_QUIET	64	/* silent stretches kept per window: the newest */
#define LOST_RING	16	/* losses kept per CPU: the newest (classify_wakeup: enough) */

enum slice_kind { SL_TASK, SL_IRQ, SL_SOFTIRQ };

struct slice {
	uint64_t	from;
	int		pid;
	int		prev_pid;
	long		prev_state;
	int		kind;
	char		comm[COMM_LEN + 1];
};

struct ring {
	struct slice	s[RING];
	size_t		n;		/* ever pushed: the newest is s[(n - 1) % RING] */
	int		pid;		/* the task on the CPU, for after an interrupt */
	char		comm[COMM_LEN + 1];
};

struct cl_fields {
	bool			native;		/* the trace's byte order is ours */
	int			irq_in, irq_out, sirq_in, sirq_out, exit_id, entry_id;
	int			tick_id;	/* irq_vectors:local_timer_entry */
	struct tep_format_field	*exit_reason, *exit_isa;
};

/* [from, to): a stretch of time */
struct span {
	uint64_t	from;
	uint64_t	to;
};

/* a CPU's last event, and its last silences of QUIET_MIN_NS or more */
struct quiet {
	uint64_t	last;
	size_t		n;		/* ever pushed: the newest is s[(n - 1) % QUIET_RING] */
	struct span	s[QUIET_RING];
};

/*
 * a CPU's losses: its trace lost events between two of its events (the
 * ring buffer's missed-events flag on the page of the second), the last
 * LOST_RING of them, and all of them counted
 */
struct lost {
	size_t		n;		/* ever noted: the newest is s[(n - 1) % LOST_RING] */
	uint64_t	events;		/* lost in them, as far as counted */
	uint64_t	uncounted;	/* losses without a count (a page flag alone) */
	struct {
		struct span	at;	/* its last event before .. its first after */
		int64_t		events;	/* -1: not counted */
	}		s[LOST_RING];
};

/* a vCPU thread's changes of mode: X_GUEST from a kvm_entry, reason + 1 from a kvm_exit */
struct xmark {
	uint64_t	t;
	int		state;
};

struct xring {
	int		tid;
	bool		located;	/* its vcpu_loc exists */
	size_t		n;		/* ever pushed: the newest is m[(n - 1) % EXIT_RING] */
	struct xmark	m[EXIT_RING];
};

/* a mode's share of the late wake-ups' windows, per main cause */
struct xstat {
	uint64_t	count;
	uint64_t	total;
	uint64_t	max;
};

/*
 * where a vCPU thread ("CPU N/KVM", or any thread once its first kvm_entry
 * went by: QEMU without debug-threads names none) was switched in, the last
 * VCPU_SEEN times; by tid: several VMs' threads share the name
 * (the self-check's fit, vtrace_vcpu_fit_tid(), tells which)
 */
#define VCPU_SEEN	64
struct vcpu_loc {
	int		tid;
	size_t		n;
	struct {
		int		cpu;
		uint64_t	since;
	}		seen[VCPU_SEEN];
};

struct cause {
	int		kind;
	int		group;		/* explain.c's: real-time wake-ups or the others */
	char		task[REASON_LEN];	/* a task's name, or an exit's reason */
	uint64_t	count;
	uint64_t	total;
	uint64_t	max;
	struct xstat	*x;		/* [X_STATES], by mode + 1: allocated on first use */
};

struct classify {
	struct machine		**machines;	/* pass 1's: closed after it */
	int			*nr_cpus;
	int			nr;
	int			host;		/* machine index of the host, -1 none */
	struct cl_fields	*fields;
	struct ring		***rings;	/* [machine][cpu], allocated on first use */
	struct quiet		**quiet;	/* [machine][cpu] */
	struct lost		**lost;		/* [machine][cpu] */
	uint64_t		ticks;		/* local_timer_entry events in the host trace */
	const struct host_ticks	*tk;		/* each host cpu's tick (ticks.c), NULL none */
	unsigned char		*in_window;	/* [host cpu]: a late wake-up's vCPU ran there,
						 * 1 << its group */
	struct vcpu_loc		*vcpus;		/* one per vCPU thread seen */
	int			nr_vcpus, alloc_vcpus;
	uint64_t		exits;		/* kvm_exit events seen in the host trace */
	uint64_t		entries;	/* kvm_entry events */
	struct xring		*xr[MAX_XTHREADS];
	int			nr_xr;
	int			last_xr;	/* the last one used: the next is likely the same */
	struct vtrace_kvm_exits	reasons;	/* the exit reasons, named */
	uint64_t		host_last;	/* the host's last event so far */
	struct cause		*causes;
	int			nr_causes;
	int			group;		/* the wake-up's, while classify_wakeup() runs */
	int			sel;		/* the group summed up (classify_select()) */
	uint64_t		late_g[2];	/* per group: the summary's is late_g[sel] */
	uint64_t		delay_g[2];
};

/* classify.c: the state */
struct slice *cl_slice_at(struct ring *r, size_t i);
size_t cl_oldest(struct ring *r);
struct ring *cl_ring_of(struct classify *c, int mi, int cpu, bool create);
struct vcpu_loc *cl_vcpu_loc(struct classify *c, int tid, bool create);
struct xring *cl_xring_of(struct classify *c, int tid, bool create);
const struct host_tick *cl_tick_of(const struct classify *c, int cpu);

#endif /* _CLASSIFY_LOCAL_H */
