// SPDX-License-Identifier: GPL-2.0
/* classify.c: --explain's summary: what each late guest wake-up waited for, by cause. */
/*
 * explain.c's pass over the merged stream feeds every event here
 * (classify_event), and calls classify_wakeup() for each wake-up later than
 * --threshold, when its task runs.  Each CPU of each machine keeps a ring of
 * its last RING slices: who ran from when (a sched_switch), or an interrupt
 * or softirq (irq_handler_entry/exit, softirq_entry/exit, when recorded).
 * A late wake-up's window, expected .. running, is cut at every slice
 * boundary of two CPUs, the guest CPU and the host CPU its vCPU thread ran
 * on, and each piece goes to one cause:
 *
 *   host cpu ran                 guest cpu ran           cause
 *   nothing recorded, 3 ticks    nothing recorded        host_not_running
 *   an interrupt / softirq       -                       host_irq / host_softirq
 *   ksoftirqd/N                  -                       host_softirq (ksoftirqd/N)
 *   another task                 -                       host_task (its name)
 *   nothing, vCPU thread in D    -                       vcpu_blocked
 *   nothing                      -                       host_idle
 *   the vCPU thread              an irq / softirq        guest_irq / guest_softirq
 *   the vCPU thread              another task            guest_task (its name)
 *   the vCPU thread, in an exit  -                       vcpu_exit (its reason)
 *   the vCPU thread              an irq / softirq        guest_irq / guest_softirq
 *   the vCPU thread              another task            guest_task (its name)
 *   the vCPU thread              the task itself         guest_self
 *   the vCPU thread, guest mode  idle (or nothing seen)  vcpu_guest
 *   the vCPU thread              idle (or nothing seen)  vcpu_running (no kvm_exit)
 *   (not in the host trace)                              unknown
 *
 * The wake-up is counted under the cause that took most of its window.
 *
 * Lost events: a trace whose ring buffer overflowed flags the first page
 * read after the loss (libtraceevent's missed_events on its first event;
 * machine.c keeps it in source->lost for the next event merged).  Each
 * CPU of each machine notes its losses (classify_event: between its last
 * event and this one) and keeps the last LOST_RING.  A window rests on its
 * host cpu's ring from the sched_switch in force at the expected time (the
 * task on the cpu is that one's until the next), and on its guest cpu's
 * likewise, up to the task running: a loss on either that meets that span
 * may hide a switch (the task before seems to run on) or anything (a
 * silence), so the whole window goes to events_lost, naming the cpus, and
 * no piece to what the trace kept.  The summary says what the traces lost
 * in all.
 *
 * The host not running: a host cpu that runs takes its local timer
 * interrupt (irq_vectors:local_timer_entry: the tick, and every hrtimer
 * expiry) at least every tick while busy, and, idle, when the guest's timer
 * falls due (KVM's hrtimer for the guest's APIC timer; the window begins
 * there).  So when the host recorded that event, a stretch of the window of
 * 3 of the host cpu's ticks or more (ticks.c measures them per host cpu,
 * before this pass) in which neither the host cpu nor the guest cpu
 * recorded any event is host_not_running: the host cpu was stopped below
 * the host (a hypervisor, firmware, an SMI).  Each CPU of each machine
 * keeps its last QUIET_RING silences of QUIET_MIN_NS or more
 * (classify_event), the window takes the pieces where a host silence and a
 * guest silence overlap.  Without the tick event, or on a host cpu whose
 * tick is not known (none recorded there, too few, or none regular while
 * busy: nohz_full), a silent host cpu may be a busy one (a task that never
 * switches records nothing): the stretch goes to what the host cpu last
 * did, and the summary says so, per host cpu of the late wake-ups.
 *
 * Exits: when the host recorded kvm:kvm_entry and kvm:kvm_exit, each vCPU
 * thread keeps a ring of its last EXIT_RING changes of mode (kvm_entry:
 * guest mode; kvm_exit: in the host for that exit's reason, until the next
 * kvm_entry, whether the thread runs or sleeps meanwhile, as perf kvm stat
 * counts it).  The window is cut at these changes too: the vCPU thread's
 * time on its host cpu inside an exit is vcpu_exit, and the whole window is
 * also split by mode (guest mode, each exit reason: count, time, longest),
 * per wake-up and summed per main cause.  The reason's name is the one
 * kvm_exit's print format gives (its __print_symbolic() of exit_reason,
 * VMX or SVM as the host's KVM recorded it), printed once per reason by
 * libtraceevent with plugins left out.  Without kvm_entry/kvm_exit the
 * time the vCPU thread ran while the guest showed nothing is guest mode or
 * exits the host handled, not told apart, and the summary says so.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "merge-local.h"
#include "vtrace-kvm.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

#define COMM_LEN	16
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
	int			switch_id, irq_in, irq_out, sirq_in, sirq_out, exit_id, entry_id;
	int			tick_id;	/* irq_vectors:local_timer_entry */
	struct tep_format_field	*prev_pid, *prev_state, *next_pid, *next_comm;
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

static const char *const kind_key[] = {
	[C_HOST_TASK] = "host_task", [C_HOST_IRQ] = "host_irq",
	[C_HOST_SOFTIRQ] = "host_softirq", [C_HOST_IDLE] = "host_idle",
	[C_HOST_NOT_RUNNING] = "host_not_running",
	[C_VCPU_BLOCKED] = "vcpu_blocked", [C_VCPU_RUNNING] = "vcpu_running",
	[C_VCPU_EXIT] = "vcpu_exit", [C_VCPU_GUEST] = "vcpu_guest",
	[C_GUEST_IRQ] = "guest_irq", [C_GUEST_SOFTIRQ] = "guest_softirq",
	[C_GUEST_TASK] = "guest_task", [C_GUEST_SELF] = "guest_self", [C_UNKNOWN] = "unknown",
	[C_VCPU_UNKNOWN] = "vcpu_thread_unknown", [C_EVENTS_LOST] = "events_lost",
	[C_OTHER] = "other",
	[C_PATH_HOST_TIMER] = "timer_host_late", [C_PATH_TO_ENTRY] = "timer_to_entry",
	[C_PATH_GUEST_IRQ] = "timer_guest_irq", [C_PATH_GUEST] = "timer_guest",
};

static const char *const kind_text[] = {
	[C_HOST_TASK] = "host task %s on the vCPU's host cpu",
	[C_HOST_IRQ] = "host interrupts",
	[C_HOST_SOFTIRQ] = "host softirq work%s%s",
	[C_HOST_IDLE] = "host cpu idle, the vCPU waiting",
	[C_HOST_NOT_RUNNING] = "host cpu not running (stopped below the host)",
	[C_VCPU_BLOCKED] = "vCPU thread blocked in the host (D state)",
	[C_VCPU_RUNNING] = "vCPU thread running, guest idle (guest mode or exits)",
	[C_VCPU_EXIT] = "vCPU in the host: exit %s",
	[C_VCPU_GUEST] = "vCPU in guest mode, guest idle",
	[C_GUEST_IRQ] = "guest interrupts",
	[C_GUEST_SOFTIRQ] = "guest softirq work",
	[C_GUEST_TASK] = "guest task %s",
	[C_GUEST_SELF] = "the task itself, running past its due time",
	[C_UNKNOWN] = "not covered by the host trace",
	[C_VCPU_UNKNOWN] = "vCPU's host thread not told apart",
	[C_EVENTS_LOST] = "trace lost events here (%s): not told apart",
	[C_OTHER] = "other causes (past 31 in one window)",
	[C_PATH_HOST_TIMER] = "host fired the vCPU's timer late, %s",
	[C_PATH_TO_ENTRY] = "timer fired, before the vCPU's entry, %s",
	[C_PATH_GUEST_IRQ] = "guest's timer irq not yet taken, %s",
	[C_PATH_GUEST] = "guest's timer handler, wake-up, scheduling",
};

static int event_id(struct tep_handle *tep, const char *sys, const char *name,
		    struct tep_event **evp)
{
	struct tep_event *ev = tep_find_event_by_name(tep, sys, name);

	if (evp)
		*evp = ev;
	return ev ? ev->id : -1;
}

static void lookup(struct cl_fields *f, struct tep_handle *tep)
{
	struct tep_event *ev;

	f->native = tep_is_file_bigendian(tep) == tep_is_local_bigendian(tep);
	f->switch_id = event_id(tep, "sched", "sched_switch", &ev);
	f->prev_pid = ev ? tep_find_field(ev, "prev_pid") : NULL;
	f->prev_state = ev ? tep_find_field(ev, "prev_state") : NULL;
	f->next_pid = ev ? tep_find_field(ev, "next_pid") : NULL;
	f->next_comm = ev ? tep_find_field(ev, "next_comm") : NULL;
	f->irq_in = event_id(tep, "irq", "irq_handler_entry", NULL);
	f->irq_out = event_id(tep, "irq", "irq_handler_exit", NULL);
	f->sirq_in = event_id(tep, "irq", "softirq_entry", NULL);
	f->sirq_out = event_id(tep, "irq", "softirq_exit", NULL);
	f->exit_id = event_id(tep, "kvm", "kvm_exit", &ev);
	f->exit_reason = ev ? tep_find_field(ev, "exit_reason") : NULL;
	f->exit_isa = ev ? tep_find_field(ev, "isa") : NULL;
	f->entry_id = event_id(tep, "kvm", "kvm_entry", NULL);
	f->tick_id = event_id(tep, "irq_vectors", "local_timer_entry", NULL);
}

static int64_t num(const struct cl_fields *f, struct tep_format_field *field,
		   const struct tep_record *rec)
{
	return vtrace_field_num(f->native, field, rec);
}

/* Host @cpu's tick as measured, or none: its silences not told apart */
static const struct host_tick *tick_of(const struct classify *c, int cpu)
{
	static const struct host_tick none = { .why = "no tick recorded", .why_key = "no_tick" };

	if (!c->tk || cpu < 0 || cpu >= c->tk->nr_cpus)
		return &none;
	return &c->tk->cpu[cpu];
}

struct classify *classify_open(struct machine **machines, int nr,
			       const struct host_ticks *ticks)
{
	struct classify *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->machines = machines;
	c->nr = nr;
	c->host = -1;
	c->tk = ticks;
	c->fields = calloc(nr, sizeof(*c->fields));
	c->rings = calloc(nr, sizeof(*c->rings));
	c->quiet = calloc(nr, sizeof(*c->quiet));
	c->lost = calloc(nr, sizeof(*c->lost));
	c->nr_cpus = calloc(nr, sizeof(*c->nr_cpus));
	vtrace_kvm_exits_init(&c->reasons, REASON_LEN);
	if (!c->fields || !c->rings || !c->quiet || !c->lost || !c->nr_cpus)
		goto error;
	for (int i = 0; i < nr; i++) {
		lookup(&c->fields[i], machines[i]->tep);
		c->nr_cpus[i] = machines[i]->nr_cpus;
		c->rings[i] = calloc(machines[i]->nr_cpus, sizeof(**c->rings));
		c->quiet[i] = calloc(machines[i]->nr_cpus, sizeof(**c->quiet));
		c->lost[i] = calloc(machines[i]->nr_cpus, sizeof(**c->lost));
		if (!c->rings[i] || !c->quiet[i] || !c->lost[i])
			goto error;
		if (!machines[i]->guest && c->host < 0)
			c->host = i;
	}
	if (c->host >= 0) {
		c->in_window = calloc(c->nr_cpus[c->host], sizeof(*c->in_window));
		if (!c->in_window)
			goto error;
	}
	return c;
error:
	classify_close(c);
	return NULL;
}

void classify_close(struct classify *c)
{
	if (!c)
		return;
	for (int i = 0; c->rings && i < c->nr; i++) {
		for (int k = 0; c->rings[i] && k < c->nr_cpus[i]; k++)
			free(c->rings[i][k]);
		free(c->rings[i]);
	}
	free(c->rings);
	for (int i = 0; c->quiet && i < c->nr; i++)
		free(c->quiet[i]);
	free(c->quiet);
	for (int i = 0; c->lost && i < c->nr; i++)
		free(c->lost[i]);
	free(c->lost);
	free(c->in_window);
	free(c->vcpus);
	free(c->nr_cpus);
	free(c->fields);
	for (int i = 0; i < c->nr_xr; i++)
		free(c->xr[i]);
	for (int i = 0; i < c->nr_causes; i++)
		free(c->causes[i].x);
	free(c->causes);
	vtrace_kvm_exits_free(&c->reasons);
	free(c);
}

static struct ring *ring_of(struct classify *c, int mi, int cpu, bool create)
{
	struct ring **r;

	if (cpu < 0 || cpu >= c->nr_cpus[mi])
		return NULL;
	r = &c->rings[mi][cpu];
	if (!*r && create)
		*r = calloc(1, sizeof(**r));
	return *r;
}

/* an event of a CPU at @ns: a silence of QUIET_MIN_NS or more since its last one is kept */
static void quiet_note(struct quiet *q, uint64_t ns)
{
	if (ns <= q->last)
		return;
	if (ns - q->last >= QUIET_MIN_NS)
		q->s[q->n++ % QUIET_RING] = (struct span){ q->last, ns };
	q->last = ns;
}

/* a CPU lost @lost events (-1: not counted) between its last event and this one at @ns */
static void lost_note(struct lost *l, uint64_t last, uint64_t ns, int64_t lost)
{
	l->s[l->n % LOST_RING].at = (struct span){ last, ns };
	l->s[l->n++ % LOST_RING].events = lost;
	if (lost > 0)
		l->events += lost;
	else
		l->uncounted++;
}

static struct slice *at(struct ring *r, size_t i)
{
	return &r->s[i % RING];
}

static size_t oldest(struct ring *r)
{
	return r->n > RING ? r->n - RING : 0;
}

static void push(struct ring *r, uint64_t ns, int kind, int pid, const char *comm,
		 int prev_pid, long prev_state)
{
	struct slice *s = at(r, r->n++);

	s->from = ns;
	s->kind = kind;
	s->pid = pid;
	s->prev_pid = prev_pid;
	s->prev_state = prev_state;
	memcpy(s->comm, comm, sizeof(s->comm));	/* COMM_LEN + 1, NUL-terminated */
}

static struct vcpu_loc *vcpu_loc(struct classify *c, int tid, bool create)
{
	struct vcpu_loc *l;

	for (int i = 0; i < c->nr_vcpus; i++)
		if (c->vcpus[i].tid == tid)
			return &c->vcpus[i];
	if (!create)
		return NULL;
	if (c->nr_vcpus == c->alloc_vcpus) {
		int n = c->alloc_vcpus ? 2 * c->alloc_vcpus : 16;

		l = realloc(c->vcpus, n * sizeof(*l));
		if (!l)
			return NULL;
		c->vcpus = l;
		c->alloc_vcpus = n;
	}
	l = &c->vcpus[c->nr_vcpus++];
	memset(l, 0, sizeof(*l));
	l->tid = tid;
	return l;
}

static void note_seen(struct vcpu_loc *l, int cpu, uint64_t ns)
{
	l->seen[l->n % VCPU_SEEN].cpu = cpu;
	l->seen[l->n % VCPU_SEEN].since = ns;
	l->n++;
}

/* vCPU thread @tid ("CPU 3/KVM") switched in on host @cpu: where it runs from @ns */
static void vcpu_seen(struct classify *c, const char *comm, int tid, int cpu, uint64_t ns)
{
	struct vcpu_loc *l;

	if (vtrace_vcpu_idx_of(comm, SIZE_MAX) < 0)
		l = vcpu_loc(c, tid, false);	/* a thread known by its kvm_entry, or none */
	else
		l = vcpu_loc(c, tid, true);
	if (!l)
		return;		/* not a vCPU, or out of memory: its wake-ups' host side unknown */
	note_seen(l, cpu, ns);
}

/* a vCPU thread known by its kvm_entry on host @cpu at @ns */
static void vcpu_seen_at(struct classify *c, int tid, int cpu, uint64_t ns)
{
	struct vcpu_loc *l = vcpu_loc(c, tid, true);

	if (l)
		note_seen(l, cpu, ns);
}

/* the ring of vCPU thread @tid's changes of mode */
static struct xring *xring_of(struct classify *c, int tid, bool create)
{
	struct xring *x;

	if (c->last_xr < c->nr_xr && c->xr[c->last_xr]->tid == tid)
		return c->xr[c->last_xr];
	for (int i = 0; i < c->nr_xr; i++) {
		if (c->xr[i]->tid == tid) {
			c->last_xr = i;
			return c->xr[i];
		}
	}
	if (!create || c->nr_xr == MAX_XTHREADS)
		return NULL;
	x = malloc(sizeof(*x));
	if (!x)
		return NULL;
	x->tid = tid;
	x->located = false;
	x->n = 0;
	c->last_xr = c->nr_xr;
	c->xr[c->nr_xr++] = x;
	return x;
}

/* the reason index of a kvm_exit record, its name learnt on first sight */
static int reason_of(struct classify *c, const struct cl_fields *f, struct source *s)
{
	uint64_t key = (uint32_t)num(f, f->exit_reason, s->rec);

	if (f->exit_isa)
		key |= (uint64_t)(uint32_t)num(f, f->exit_isa, s->rec) << 32;
	return vtrace_kvm_exit_index(&c->reasons, s->m->tep, s->rec, key);
}

/* a host kvm_entry (@exit false) or kvm_exit: the vCPU thread's mode from @ns */
static void vcpu_mode(struct classify *c, const struct cl_fields *f, struct source *s,
		      uint64_t ns, bool exit)
{
	struct xring *x = xring_of(c, tep_data_pid(s->m->tep, s->rec), true);
	struct xmark *m;

	if (exit)
		c->exits++;
	else
		c->entries++;
	if (!x)
		return;
	/* a thread's first kvm_entry: a vCPU thread, running on this cpu, whatever its name */
	if (!exit && !x->located) {
		if (!vcpu_loc(c, x->tid, false))
			vcpu_seen_at(c, x->tid, s->cpu, ns);
		x->located = true;
	}
	m = &x->m[x->n++ % EXIT_RING];
	m->t = ns;
	m->state = exit ? reason_of(c, f, s) + 1 : X_GUEST;
}

/**
 * classify_event - one event of the merged stream, in time order
 */
void classify_event(struct classify *c, struct source *s, int mi, uint64_t ns)
{
	const struct cl_fields *f = &c->fields[mi];
	int id = tep_data_type(s->m->tep, s->rec);
	struct ring *r;

	if (mi == c->host)
		c->host_last = ns;
	if (s->cpu >= 0 && s->cpu < c->nr_cpus[mi]) {
		if (s->lost)
			lost_note(&c->lost[mi][s->cpu], c->quiet[mi][s->cpu].last, ns, s->lost);
		quiet_note(&c->quiet[mi][s->cpu], ns);
	}
	if (id == f->tick_id && mi == c->host)
		c->ticks++;
	if (id != f->switch_id && id != f->irq_in && id != f->irq_out &&
	    id != f->sirq_in && id != f->sirq_out) {
		if ((id == f->exit_id || id == f->entry_id) && mi == c->host)
			vcpu_mode(c, f, s, ns, id == f->exit_id);
		return;
	}
	r = ring_of(c, mi, s->cpu, true);
	if (!r)
		return;
	if (id == f->switch_id) {
		char comm[COMM_LEN + 1] = "";
		int pid = num(f, f->next_pid, s->rec);

		if (f->next_comm && f->next_comm->offset + f->next_comm->size <= s->rec->size)
			memcpy(comm, (const char *)s->rec->data + f->next_comm->offset,
			       f->next_comm->size < COMM_LEN ? f->next_comm->size : COMM_LEN);
		push(r, ns, SL_TASK, pid, comm, num(f, f->prev_pid, s->rec),
		     num(f, f->prev_state, s->rec));
		r->pid = pid;
		memcpy(r->comm, comm, sizeof(comm));
		if (mi == c->host)
			vcpu_seen(c, comm, pid, s->cpu, ns);
	} else if (id == f->irq_in || id == f->sirq_in) {
		push(r, ns, id == f->irq_in ? SL_IRQ : SL_SOFTIRQ, r->pid, r->comm, -1, 0);
	} else {
		push(r, ns, SL_TASK, r->pid, r->comm, -1, 0);
	}
}

static int cause_index(struct classify *c, int kind, const char *task)
{
	struct cause *n;

	for (int i = 0; i < c->nr_causes; i++)
		if (c->causes[i].kind == kind && c->causes[i].group == c->group &&
		    !strcmp(c->causes[i].task, task))
			return i;
	n = realloc(c->causes, (c->nr_causes + 1) * sizeof(*n));
	if (!n)
		return -1;
	c->causes = n;
	memset(&n[c->nr_causes], 0, sizeof(*n));
	n[c->nr_causes].kind = kind;
	n[c->nr_causes].group = c->group;
	snprintf(n[c->nr_causes].task, sizeof(n->task), "%s", task);
	return c->nr_causes++;
}

static void add_part(struct classify *c, struct late_parts *p, int kind, const char *task,
		     uint64_t ns)
{
	int ci = cause_index(c, kind, task);

	if (ci < 0 || !ns)
		return;
	for (int i = 0; i < p->nr; i++) {
		if (p->part[i].cause == ci) {
			p->part[i].ns += ns;
			return;
		}
	}
	if (p->nr == LATE_PARTS) {	/* the last holds the causes past it */
		p->part[p->nr - 1].ns += ns;
		return;
	}
	if (p->nr == LATE_PARTS - 1) {
		ci = cause_index(c, C_OTHER, "");
		if (ci < 0)
			return;
	}
	p->part[p->nr].cause = ci;
	p->part[p->nr++].ns = ns;
}

/* the slice of @r at @t: its index, or oldest(r) - 1 (unknown: before the ring) */
static long slice_at(struct ring *r, uint64_t t)
{
	long i = (long)r->n - 1;

	while (i >= (long)oldest(r) && at(r, i)->from > t)
		i--;
	return i;
}

struct walk {
	struct ring	*h, *g;
	struct xring	*x;		/* the vCPU thread's changes of mode, NULL: none */
	long		hi, gi, xi;
	int		vtid, target;
	bool		blocked;
	bool		host_known;
	uint64_t	host_end;	/* the host trace ended there */
	int		mode;		/* the one being timed (late_mode index), -1 none */
	uint64_t	mode_ns;	/* its time in the window so far */
	struct span	quiet[MAX_QUIET];	/* the host not running, in time order */
	int		nr_quiet;
	int		qi;		/* the first that has not ended by the walk's place */
	char		tcomm[COMM_LEN + 1];	/* the task's name, "" not known */
	char		tname[REASON_LEN];	/* "NAME (tid N)": a thread of that name */
	const struct late_path	*path;	/* timerpath.c's, NULL: not told */
};

static size_t xoldest(struct xring *x)
{
	return x->n > EXIT_RING ? x->n - EXIT_RING : 0;
}

static struct xmark *xat(struct xring *x, size_t i)
{
	return &x->m[i % EXIT_RING];
}

/* the mark of @x at @t: its index, or xoldest(x) - 1 (before the ring); marks are in time order */
static long x_at(struct xring *x, uint64_t t)
{
	long lo = (long)xoldest(x), hi = (long)x->n;	/* the answer + 1 is in [lo, hi] */

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (xat(x, mid)->t > t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

/* the vCPU's mode at the walk's place (X_UNKNOWN: before its ring, or not recorded) */
static int xstate(struct walk *w, uint64_t t)
{
	if (!w->x || w->xi < (long)xoldest(w->x) || t >= w->host_end)
		return X_UNKNOWN;
	return xat(w->x, w->xi)->state;
}

/*
 * The silences of @q of @thr or more that overlap [@a, @b), the one since
 * its last event included, each cut to [@a, @b), oldest first; @q NULL:
 * one, all of it
 */
static int silences(const struct quiet *q, uint64_t a, uint64_t b, uint64_t thr,
		    struct span *out)
{
	struct span tmp[MAX_QUIET];
	int n = 0;

	if (!q) {
		out[0] = (struct span){ a, b };
		return 1;
	}
	if (q->last < b)
		tmp[n++] = (struct span){ q->last, b };
	for (size_t i = q->n; i > (q->n > QUIET_RING ? q->n - QUIET_RING : 0) && n < MAX_QUIET;
	     i--) {
		const struct span *x = &q->s[(i - 1) % QUIET_RING];

		if (x->to <= a)
			break;
		if (x->from < b && x->to - x->from >= thr)
			tmp[n++] = *x;
	}
	for (int i = 0; i < n; i++) {
		out[i] = tmp[n - 1 - i];
		if (out[i].from < a)
			out[i].from = a;
		if (out[i].to > b)
			out[i].to = b;
	}
	return n;
}

/*
 * The stretches of the window, as long as host cpu @hcpu's quiet threshold
 * (ticks.c) or longer, in which neither it nor the guest's cpu recorded an
 * event: the host not running
 */
static void quiet_window(struct classify *c, struct walk *w, int mi, int gcpu, int hcpu,
			 uint64_t a, uint64_t b)
{
	struct span hs[MAX_QUIET], gs[MAX_QUIET];
	uint64_t thr;
	int nh, ng;

	w->nr_quiet = 0;
	if (hcpu < 0 || hcpu >= c->nr_cpus[c->host])
		return;
	c->in_window[hcpu] |= 1 << c->group;
	thr = tick_of(c, hcpu)->quiet_ns;
	if (!c->ticks || !thr)
		return;
	nh = silences(&c->quiet[c->host][hcpu], a, b, thr, hs);
	ng = silences(gcpu >= 0 && gcpu < c->nr_cpus[mi] ? &c->quiet[mi][gcpu] : NULL, a, b, thr,
		      gs);
	for (int i = 0; i < nh; i++) {
		for (int k = 0; k < ng && w->nr_quiet < MAX_QUIET; k++) {
			uint64_t from = hs[i].from > gs[k].from ? hs[i].from : gs[k].from;
			uint64_t to = hs[i].to < gs[k].to ? hs[i].to : gs[k].to;

			if (to > from && to - from >= thr)
				w->quiet[w->nr_quiet++] = (struct span){ from, to };
		}
	}
}

/* the host not running at @t (the walk's places come in time order) */
static bool quiet_at(struct walk *w, uint64_t t)
{
	while (w->qi < w->nr_quiet && w->quiet[w->qi].to <= t)
		w->qi++;
	return w->qi < w->nr_quiet && w->quiet[w->qi].from <= t;
}

/* one piece of the window: the host's and the guest's state -> a cause */
static int piece_cause(struct classify *c, struct walk *w, uint64_t t, const char **task)
{
	struct slice *hs = w->h && w->hi >= (long)oldest(w->h) ? at(w->h, w->hi) : NULL;
	struct slice *gs = w->g && w->gi >= (long)oldest(w->g) ? at(w->g, w->gi) : NULL;
	int mode = xstate(w, t);

	*task = "";
	if (w->host_known && (!hs || t >= w->host_end))
		return C_UNKNOWN;
	if (quiet_at(w, t))
		return C_HOST_NOT_RUNNING;
	if (hs && hs->kind != SL_TASK)
		return hs->kind == SL_IRQ ? C_HOST_IRQ : C_HOST_SOFTIRQ;
	if (hs && hs->pid != w->vtid) {
		if (!hs->pid)
			return w->blocked ? C_VCPU_BLOCKED : C_HOST_IDLE;
		*task = hs->comm;
		return strncmp(hs->comm, "ksoftirqd/", 10) ? C_HOST_TASK : C_HOST_SOFTIRQ;
	}
	/* the vCPU thread runs: in the host for an exit, whatever the guest last showed */
	if (mode > X_GUEST) {
		*task = c->reasons.name[mode - 1];
		return C_VCPU_EXIT;
	}
	if (gs && gs->kind != SL_TASK)
		return gs->kind == SL_IRQ ? C_GUEST_IRQ : C_GUEST_SOFTIRQ;
	if (gs && gs->pid && gs->pid != w->target) {
		*task = gs->comm;
		/* another thread of the task's name (cyclictest's): which one */
		if (w->tcomm[0] && !strcmp(gs->comm, w->tcomm)) {
			snprintf(w->tname, sizeof(w->tname), "%s (tid %d)", gs->comm, gs->pid);
			*task = w->tname;
		}
		return C_GUEST_TASK;
	}
	if (gs && gs->pid && gs->pid == w->target)
		return C_GUEST_SELF;	/* it had not slept yet: explain.c */
	if (mode == X_GUEST)
		return C_VCPU_GUEST;
	return w->host_known ? C_VCPU_RUNNING : C_UNKNOWN;
}

/* the vCPU thread's state as a host slice begins */
static void host_step(struct walk *w)
{
	struct slice *s = at(w->h, w->hi);

	if (s->pid == w->vtid && s->kind == SL_TASK)
		w->blocked = false;
	else if (s->prev_pid == w->vtid)
		w->blocked = s->prev_state & TASK_D;
}

/* the window's time in mode @state: one more exit (entry) when @begins */
static void mode_add(struct walk *w, struct late_parts *p, int state, uint64_t ns, bool begins)
{
	int i = 0;

	while (i < p->nr_modes && p->mode[i].state != state)
		i++;
	if (i == p->nr_modes) {
		if (p->nr_modes == LATE_EXITS)
			return;		/* more modes than LATE_EXITS in one window: left out */
		memset(&p->mode[i], 0, sizeof(p->mode[i]));
		p->mode[i].state = state;
		p->nr_modes++;
	}
	if (begins || w->mode != i) {
		if (state != X_UNKNOWN)
			p->mode[i].count++;
		w->mode = i;
		w->mode_ns = 0;
	}
	p->mode[i].ns += ns;
	w->mode_ns += ns;
	if (w->mode_ns > p->mode[i].max)
		p->mode[i].max = w->mode_ns;
}

/* the walk's next place at a silence's start or end, if before @next */
static uint64_t quiet_next(struct walk *w, uint64_t t, uint64_t next)
{
	for (int i = w->qi; i < w->nr_quiet && w->quiet[i].from < next; i++) {
		if (w->quiet[i].from > t)
			return w->quiet[i].from;
		if (w->quiet[i].to > t)
			return w->quiet[i].to < next ? w->quiet[i].to : next;
	}
	return next;
}

/* the walk's next place at a step of the timer's path, if before @next */
static uint64_t path_next(const struct walk *w, uint64_t t, uint64_t next)
{
	if (!w->path || w->path->state < TP_NO_TICK)
		return next;
	for (int i = 0; i < 3; i++) {
		uint64_t at = i == 0 ? w->path->fired : i == 1 ? w->path->entry : w->path->irq;

		if (at > t && at < next)
			return at;
	}
	return next;
}

/*
 * A piece that is only a state (the host cpu idle, the vCPU in guest mode
 * or running with the guest idle) is told by the step of the timer's path
 * it falls in (timerpath.c): before KVM's timer fired, after it fired and
 * before the vCPU entered guest mode, before the guest took its timer
 * interrupt, or in the guest's handling of it.
 */
static int path_cause(struct walk *w, uint64_t t, int kind, const char **task)
{
	const struct late_path *p = w->path;
	bool idle = kind == C_HOST_IDLE;

	if (!p || p->state < TP_NO_TICK ||
	    (kind != C_HOST_IDLE && kind != C_VCPU_GUEST && kind != C_VCPU_RUNNING))
		return kind;
	*task = idle ? "host cpu idle" : kind == C_VCPU_GUEST ? "vCPU in guest mode" :
		"vCPU thread running";
	if (t < p->fired)
		return C_PATH_HOST_TIMER;
	if (t < p->entry)
		return C_PATH_TO_ENTRY;
	if (t < p->irq && p->state == TP_KNOWN)
		return C_PATH_GUEST_IRQ;
	*task = "";
	return C_PATH_GUEST;
}

static void walk_window(struct classify *c, struct walk *w, uint64_t a, uint64_t b,
			struct late_parts *p)
{
	uint64_t t = a;
	bool begins = true;

	w->hi = w->h ? slice_at(w->h, t) : -1;
	w->gi = w->g ? slice_at(w->g, t) : -1;
	w->xi = w->x ? x_at(w->x, t) : -1;
	w->mode = -1;
	if (w->h && w->hi >= (long)oldest(w->h))
		host_step(w);
	while (t < b) {
		uint64_t next = t < w->host_end && w->host_end < b ? w->host_end : b;

		if (w->h && w->hi + 1 < (long)w->h->n && at(w->h, w->hi + 1)->from < next)
			next = at(w->h, w->hi + 1)->from;
		if (w->g && w->gi + 1 < (long)w->g->n && at(w->g, w->gi + 1)->from < next)
			next = at(w->g, w->gi + 1)->from;
		if (w->x && w->xi + 1 < (long)w->x->n && xat(w->x, w->xi + 1)->t < next)
			next = xat(w->x, w->xi + 1)->t;
		next = quiet_next(w, t, next);
		next = path_next(w, t, next);
		if (next > t) {
			const char *task;
			int kind = path_cause(w, t, piece_cause(c, w, t, &task), &task);

			add_part(c, p, kind, task, next - t);
			if (w->x)
				mode_add(w, p, xstate(w, t), next - t, begins);
			begins = false;
		}
		t = next;
		while (w->h && w->hi + 1 < (long)w->h->n && at(w->h, w->hi + 1)->from <= t) {
			w->hi++;
			host_step(w);
		}
		while (w->g && w->gi + 1 < (long)w->g->n && at(w->g, w->gi + 1)->from <= t)
			w->gi++;
		while (w->x && w->xi + 1 < (long)w->x->n && xat(w->x, w->xi + 1)->t <= t) {
			w->xi++;
			begins = true;
		}
	}
}

/* the host trace is over when each of its CPUs is (merge.c's heap holds the rest) */
static uint64_t host_end(struct classify *c)
{
	struct machine *m = c->machines[c->host];

	for (int i = 0; i < m->nr_cpus; i++)
		if (m->cpus[i].rec)
			return UINT64_MAX;
	return c->host_last;
}

/*
 * The host cpu vCPU thread @tid ran on at @t: the last it was switched in
 * on by then, or else the first seen after
 */
static int vcpu_cpu(struct classify *c, int tid, uint64_t t)
{
	struct vcpu_loc *l = tid > 0 ? vcpu_loc(c, tid, false) : NULL;
	size_t i;

	if (!l || !l->n)
		return -1;
	for (i = l->n; i > (l->n > VCPU_SEEN ? l->n - VCPU_SEEN : 0); i--)
		if (l->seen[(i - 1) % VCPU_SEEN].since <= t)
			return l->seen[(i - 1) % VCPU_SEEN].cpu;
	return l->seen[i % VCPU_SEEN].cpu;
}

/* the name of guest task @pid in its CPU's latest slice of it ("" none kept) */
static void task_comm(struct ring *r, int pid, char *comm)
{
	comm[0] = '\0';
	for (size_t i = r ? r->n : 0; r && i > oldest(r); i--) {
		const struct slice *s = at(r, i - 1);

		if (s->kind == SL_TASK && s->pid == pid) {
			memcpy(comm, s->comm, COMM_LEN + 1);
			return;
		}
	}
}

/*
 * The host cpus vCPU thread @tid ran on from @a to @b, in p->hosts: where
 * it was at @a, then each other cpu it was switched in on (a migration);
 * past LATE_HOSTS, the last one holds the rest of the window
 */
static void vcpu_path(struct classify *c, int tid, uint64_t a, uint64_t b, struct late_parts *p)
{
	struct vcpu_loc *l = tid > 0 ? vcpu_loc(c, tid, false) : NULL;
	int cpu = vcpu_cpu(c, tid, a);

	p->nr_hosts = 0;
	if (cpu < 0)
		return;
	p->hosts[p->nr_hosts++] = (struct late_host){ cpu, a };
	for (size_t i = l->n > VCPU_SEEN ? l->n - VCPU_SEEN : 0; i < l->n; i++) {
		int to = l->seen[i % VCPU_SEEN].cpu;
		uint64_t since = l->seen[i % VCPU_SEEN].since;

		if (since <= a || since >= b || to == p->hosts[p->nr_hosts - 1].cpu)
			continue;
		if (p->nr_hosts == LATE_HOSTS)
			break;
		p->hosts[p->nr_hosts++] = (struct late_host){ to, since };
	}
}

/* a late wake-up's parts and modes, largest first */
static void sort_late(struct late_parts *p)
{
	for (int i = 1; i < p->nr; i++) {
		struct late_part v = p->part[i];
		int j = i;

		for (; j > 0 && p->part[j - 1].ns < v.ns; j--)
			p->part[j] = p->part[j - 1];
		p->part[j] = v;
	}
	for (int i = 1; i < p->nr_modes; i++) {
		struct late_mode v = p->mode[i];
		int j = i;

		for (; j > 0 && p->mode[j - 1].ns < v.ns; j--)
			p->mode[j] = p->mode[j - 1];
		p->mode[j] = v;
	}
}

/* a late wake-up's modes into its main cause's */
static void add_modes(struct cause *cz, const struct late_parts *p)
{
	if (!cz->x)
		cz->x = calloc(X_STATES, sizeof(*cz->x));
	for (int i = 0; cz->x && i < p->nr_modes; i++) {
		struct xstat *x = &cz->x[p->mode[i].state + 1];

		x->count += p->mode[i].count;
		x->total += p->mode[i].ns;
		if (p->mode[i].max > x->max)
			x->max = p->mode[i].max;
	}
}

/*
 * Where the window's attribution on CPU ring @r rests from: the last
 * sched_switch at or before @t (an interrupt's slice takes its task from
 * it).  Nothing kept before @t: @t (the pieces before the ring's first
 * slice are not covered anyway); no sched_switch kept before @t (only
 * interrupts, or the ring went round): 0, the whole trace so far.
 */
static uint64_t rests_from(struct ring *r, uint64_t t)
{
	long i = r ? slice_at(r, t) : -1;

	if (!r || i < (long)oldest(r))
		return r && r->n > RING ? 0 : t;
	for (; i >= (long)oldest(r); i--)
		if (at(r, i)->prev_pid >= 0)
			return at(r, i)->from;
	return 0;
}

static void lost_add(struct late_lost *ll, uint64_t from, uint64_t to, int64_t events)
{
	ll->losses++;
	if (events > 0)
		ll->events += events;
	else
		ll->uncounted++;
	if (from < ll->from)
		ll->from = from;
	if (to > ll->to)
		ll->to = to;
}

/*
 * The losses of CPU @cpu of machine @mi that meet [@from, @to) into @ll;
 * false: none.  They are noted in time order, so those dropped past
 * LOST_RING ended before the oldest kept one began: a window that reaches
 * back before that may meet one, and counts as meeting one, not counted
 * (one that does meets the newest kept one too, but for a loss of no
 * length).  The CPU's next event, not merged yet, may carry the flag too
 * (@cur: the source being merged, whose own flag is noted already): a
 * loss from the CPU's last event on, ending after @to.
 */
static bool lost_in(struct classify *c, int mi, int cpu, const struct source *cur,
		    uint64_t from, uint64_t to, struct late_lost *ll)
{
	const struct source *next;
	const struct lost *l;
	size_t first;

	if (cpu < 0 || cpu >= c->nr_cpus[mi])
		return false;
	l = &c->lost[mi][cpu];
	first = l->n > LOST_RING ? l->n - LOST_RING : 0;
	*ll = (struct late_lost){ .mi = mi, .cpu = cpu, .from = UINT64_MAX };
	for (size_t i = first; i < l->n; i++) {
		const struct span *x = &l->s[i % LOST_RING].at;

		if (x->to > from && x->from < to)
			lost_add(ll, x->from, x->to, l->s[i % LOST_RING].events);
	}
	if (first && l->s[first % LOST_RING].at.from > from)
		lost_add(ll, from, l->s[first % LOST_RING].at.from, -1);
	next = &c->machines[mi]->cpus[cpu];
	if (next != cur && next->rec && next->lost && c->quiet[mi][cpu].last < to)
		lost_add(ll, c->quiet[mi][cpu].last, UINT64_MAX, next->lost);
	return ll->losses;
}

/*
 * The window rests on each host cpu's ring its vCPU thread ran on (p->hosts)
 * from its sched_switch in force when the thread came there, and on the
 * guest cpu's from the one in force at @expected: when any lost events
 * from there to where the window leaves it, its pieces are not told apart
 * (a lost sched_switch makes the task before it seem to run on; lost
 * events, a silence).  p->lost says where, @task names the rings ("host cpu
 * 1, g1 cpu 1").
 */
static bool window_lost(struct classify *c, struct walk *w, struct source *s, int mi,
			uint64_t expected, uint64_t running, struct late_parts *p, char *task,
			size_t len)
{
	size_t n = 0;

	for (int k = 0; k < p->nr_hosts; k++) {
		struct ring *h = ring_of(c, c->host, p->hosts[k].cpu, false);
		uint64_t to = k + 1 < p->nr_hosts ? p->hosts[k + 1].from : running;

		if (lost_in(c, c->host, p->hosts[k].cpu, s, rests_from(h, p->hosts[k].from), to,
			    &p->lost[p->nr_lost]))
			p->nr_lost++;
	}
	if (lost_in(c, mi, s->cpu, s, rests_from(w->g, expected), running, &p->lost[p->nr_lost]))
		p->nr_lost++;
	task[0] = '\0';
	for (int i = 0; i < p->nr_lost && n < len; i++)
		n += snprintf(task + n, len - n, "%s%s cpu %d", i ? ", " : "",
			      c->machines[p->lost[i].mi]->name, p->lost[i].cpu);
	return p->nr_lost;
}

/**
 * classify_wakeup - what a late wake-up waited for; adds it to the summary
 * @s:		the guest CPU the task ran on (its source)
 * @mi:		the guest's machine index
 * @pid:	the task
 * @vtid:	the host thread of its vCPU (vtrace_vcpu_fit_tid()), -1 not known
 * @group:	0 or 1: the summary of which (classify_select()) it counts in
 * @expected, @running:	the window, host ns
 * @path:	the timer's path through it (timerpath_wakeup()), NULL: not told
 * @p:		filled with the window's pieces per cause, the main one first
 */
void classify_wakeup(struct classify *c, struct source *s, int mi, int pid, int vtid,
		     int group, uint64_t expected, uint64_t running,
		     const struct late_path *path, struct late_parts *p)
{
	struct walk w = { .target = pid, .vtid = vtid, .host_end = UINT64_MAX, .path = path };
	uint64_t delay = running - expected;
	char task[REASON_LEN];
	int hcpu = -1;
	struct cause *cz;

	memset(p, 0, sizeof(*p));
	c->group = group;
	w.g = ring_of(c, mi, s->cpu, false);
	task_comm(w.g, pid, w.tcomm);
	if (c->host >= 0) {
		w.host_known = true;
		w.host_end = host_end(c);
		vcpu_path(c, vtid, expected, running, p);
		hcpu = p->nr_hosts ? p->hosts[0].cpu : -1;
	}
	p->host_cpu = hcpu;
	p->vcpu_tid = vtid;
	w.x = hcpu >= 0 ? xring_of(c, vtid, false) : NULL;
	p->exits = w.x;
	if (w.host_known && hcpu < 0) {
		/* which host thread is its vCPU, or where it ran, is not known: no guess */
		add_part(c, p, C_VCPU_UNKNOWN, "", delay);
	} else if (window_lost(c, &w, s, mi, expected, running, p, task, sizeof(task))) {
		/* no guess from what the trace kept: its modes neither */
		p->exits = false;
		for (int k = 0; k < p->nr_hosts; k++)
			c->in_window[p->hosts[k].cpu] |= 1 << c->group;
		add_part(c, p, C_EVENTS_LOST, task, delay);
	} else if (!w.host_known) {
		quiet_window(c, &w, mi, s->cpu, -1, expected, running);
		walk_window(c, &w, expected, running, p);
	} else {
		/* the vCPU thread's host cpu, then each it moved to */
		for (int k = 0; k < p->nr_hosts; k++) {
			uint64_t a = p->hosts[k].from;
			uint64_t b = k + 1 < p->nr_hosts ? p->hosts[k + 1].from : running;

			w.h = ring_of(c, c->host, p->hosts[k].cpu, false);
			quiet_window(c, &w, mi, s->cpu, p->hosts[k].cpu, a, b);
			walk_window(c, &w, a, b, p);
		}
	}
	sort_late(p);
	if (!p->nr)
		add_part(c, p, C_UNKNOWN, "", 0);
	c->late_g[group]++;
	c->delay_g[group] += delay;
	if (!p->nr)
		return;
	cz = &c->causes[p->part[0].cause];
	cz->count++;
	cz->total += delay;
	if (delay > cz->max)
		cz->max = delay;
	if (p->exits)
		add_modes(cz, p);
}

/**
 * classify_select - the summary counts the late wake-ups of @group only
 */
void classify_select(struct classify *c, int group)
{
	c->sel = group;
}

/**
 * classify_cause_text - a cause's words ("host task e2e_hog on the vCPU's host cpu")
 */
void classify_cause_text(struct classify *c, int ci, char *buf, size_t len)
{
	const struct cause *z = &c->causes[ci];

	if (z->kind == C_HOST_SOFTIRQ)
		snprintf(buf, len, kind_text[z->kind], z->task[0] ? " in " : "", z->task);
	else
		snprintf(buf, len, kind_text[z->kind], z->task);
}

/**
 * classify_key_text - the words of a cause given by its key, as explain's JSON
 * lines name it ("host_task", "e2e_hog"), for a reader of those lines
 */
void classify_key_text(const char *key, const char *task, char *buf, size_t len)
{
	for (size_t k = 0; k < sizeof(kind_key) / sizeof(kind_key[0]); k++) {
		if (!kind_key[k] || strcmp(kind_key[k], key) || !kind_text[k])
			continue;
		if (k == C_HOST_SOFTIRQ)
			snprintf(buf, len, kind_text[k], task[0] ? " in " : "", task);
		else
			snprintf(buf, len, kind_text[k], task);
		return;
	}
	snprintf(buf, len, "%s %s", key, task);
}

const char *classify_cause_key(struct classify *c, int ci, const char **task)
{
	*task = c->causes[ci].task;
	return kind_key[c->causes[ci].kind];
}

/* a comm as a JSON string's body */
/* the causes with wake-ups, most delay first, then -1 (the wake-ups' parts keep their indexes) */
static int *ordered(struct classify *c)
{
	int *o = calloc(c->nr_causes + 1, sizeof(*o));
	int n = 0;

	for (int i = 0; o && i < c->nr_causes; i++) {
		int j;

		if (!c->causes[i].count || c->causes[i].group != c->sel)
			continue;
		for (j = n++; j > 0; j--) {
			const struct cause *x = &c->causes[o[j - 1]], *y = &c->causes[i];

			if (x->total > y->total || (x->total == y->total && x->kind <= y->kind))
				break;
			o[j] = o[j - 1];
		}
		o[j] = i;
	}
	if (o)
		o[n] = -1;
	return o;
}

static void print_ms(FILE *out, uint64_t ns, int width)
{
	fprintf(out, "%*" PRIu64 ".%03" PRIu64, width > 4 ? width - 4 : 0, ns / 1000000,
		ns % 1000000 / 1000);
}

static const char *const no_exits =
	"the host trace has no kvm:kvm_entry/kvm_exit events, so \"vCPU thread running\" is guest"
	" mode and exits the host handled together";
static const char *const half_exits =
	"the host trace has kvm:kvm_exit or kvm:kvm_entry but not both, so \"vCPU thread"
	" running\" is guest mode and exits the host handled together";

static const char *const no_ticks =
	"the host trace has no irq_vectors:local_timer_entry events, so a host cpu that did not"
	" run (stopped below the host) counts as what it last did (idle, a task, the vCPU)";

static bool have_modes(const struct classify *c)
{
	return c->exits && c->entries;
}

/* the host cpus of the late wake-ups' vCPUs whose silences are not told apart: "1,3" */
static void cpus_not_told(const struct classify *c, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; c->in_window && i < c->nr_cpus[c->host] && n < len; i++)
		if ((c->in_window[i] & 1 << c->sel) && !tick_of(c, i)->quiet_ns)
			n += snprintf(buf + n, len - n, "%s%d", n ? "," : "", i);
}

/* a host cpu's line: its silences told apart as the host not running, or why not */
static void print_text_tick(const struct classify *c, FILE *out, int cpu)
{
	const struct host_tick *tk = tick_of(c, cpu);
	uint64_t median = tk->median, ticks = tk->ticks, thr = tk->quiet_ns;
	int n = tk->intervals;

	if (!thr) {
		fprintf(out, "Host not running: not told apart on cpu %d: %s", cpu, tk->why);
		if (ticks) {
			fprintf(out, ": %" PRIu64 " local_timer_entry, %d intervals while busy, median ",
				ticks, n);
			print_ms(out, median, 0);
			fputs(" ms", out);
		}
		fputs(".\n", out);
		return;
	}
	fprintf(out, "Host not running: told apart on cpu %d: a silence of ", cpu);
	print_ms(out, thr, 0);
	fputs(" ms or more (", out);
	if (thr == QUIET_TICKS * median)
		fputs("3 ticks of ", out);
	else
		fputs("3 ms at the least; its tick ", out);
	print_ms(out, median, 0);
	fprintf(out, " ms: the median of %d intervals while busy).\n", n);
}

static void print_jsonl_ticks(const struct classify *c, FILE *out)
{
	for (int i = 0; c->in_window && i < c->nr_cpus[c->host]; i++) {
		const struct host_tick *tk = tick_of(c, i);

		if (!(c->in_window[i] & 1 << c->sel))
			continue;
		fprintf(out, "{\"type\":\"host_cpu\",\"cpu\":%d,\"ticks\":%" PRIu64 ",\"intervals\":%d"
			",\"tick_ns\":%" PRIu64 ",\"quiet_ns\":%" PRIu64 ",\"not_told_apart\":\"%s\"}\n",
			i, tk->ticks, tk->intervals, tk->median, tk->quiet_ns, tk->why_key);
	}
}

/**
 * classify_mode_name - "guest mode", an exit's reason ("hlt", "io"), "not recorded"
 */
const char *classify_mode_name(struct classify *c, int state)
{
	if (state == X_UNKNOWN)
		return "not recorded";
	if (state == X_GUEST)
		return "guest mode";
	return c->reasons.name[state - 1];
}

static const char *mode_key(int state)
{
	return state == X_UNKNOWN ? "unknown" : state == X_GUEST ? "guest" : "exit";
}

/**
 * classify_print_modes - a late wake-up's window by the vCPU's mode, one line
 */
void classify_print_modes(struct classify *c, FILE *out, const struct late_parts *p)
{
	if (!have_modes(c))
		return;
	if (p->nr_lost) {
		fputs("vCPU modes: not told apart: the trace lost events in this window.\n", out);
		return;
	}
	if (!p->exits) {
		fprintf(out, "vCPU modes: no kvm_entry/kvm_exit of the vCPU thread (tid %d) recorded.\n",
			p->vcpu_tid);
		return;
	}
	fprintf(out, "vCPU modes (kvm_entry/kvm_exit of tid %d):", p->vcpu_tid);
	for (int i = 0; i < p->nr_modes; i++) {
		const struct late_mode *m = &p->mode[i];

		fprintf(out, "%s %s%s ", i ? ";" : "", m->state > X_GUEST ? "exit " : "",
			classify_mode_name(c, m->state));
		print_ms(out, m->ns, 0);
		if (m->state == X_UNKNOWN) {
			fputs(" ms", out);
			continue;
		}
		fprintf(out, " ms (%" PRIu32 " %s, longest ", m->count, m->state == X_GUEST ?
			(m->count == 1 ? "entry" : "entries") : (m->count == 1 ? "exit" : "exits"));
		print_ms(out, m->max, 0);
		fputs(" ms)", out);
	}
	fputs(".\n", out);
}

/**
 * classify_json_modes - the same as a JSON array's members
 */
void classify_json_modes(struct classify *c, FILE *out, const struct late_parts *p)
{
	for (int i = 0; i < p->nr_modes; i++) {
		const struct late_mode *m = &p->mode[i];

		fprintf(out, "%s{\"mode\":\"%s\",\"reason\":\"", i ? "," : "", mode_key(m->state));
		if (m->state > X_GUEST)
			vtrace_json_chars(out, classify_mode_name(c, m->state));
		fprintf(out, "\",\"count\":%" PRIu32 ",\"ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "}",
			m->count, m->ns, m->max);
	}
}

static void print_ns(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

/*
 * "4 events in 2 losses", "2 events in 2 losses, 1 not counted", "events
 * in 1 loss, not counted", "events in 2 losses, none counted"
 */
static void print_lost_count(FILE *out, uint64_t events, uint64_t losses, uint64_t uncounted)
{
	if (events || uncounted < losses)
		fprintf(out, "%" PRIu64 " event%s", events, events == 1 ? "" : "s");
	else
		fputs("events", out);
	fprintf(out, " in %" PRIu64 " loss%s", losses, losses == 1 ? "" : "es");
	if (uncounted && uncounted < losses)
		fprintf(out, ", %" PRIu64 " not counted", uncounted);
	else if (uncounted)
		fputs(losses == 1 ? ", not counted" : ", none counted", out);
}

/**
 * classify_print_lost - where the trace lost events in a late wake-up's window, a line
 * @machines:	the machines, by classify's index (pass 2's: pass 1's are closed)
 *
 * "Events lost where this window rests: host cpu 1 lost 2 events in 1 loss
 * between 4.047929000 and 4.048930000: what ran there is not known."
 */
void classify_print_lost(FILE *out, const struct late_parts *p, struct machine **machines)
{
	if (!p->nr_lost)
		return;
	fputs("Events lost where this window rests:", out);
	for (int i = 0; i < p->nr_lost; i++) {
		const struct late_lost *l = &p->lost[i];

		fprintf(out, "%s %s cpu %d lost ", i ? ";" : "", machines[l->mi]->name, l->cpu);
		print_lost_count(out, l->events, l->losses, l->uncounted);
		fputs(" between ", out);
		print_ns(out, l->from);
		fputs(" and ", out);
		if (l->to == UINT64_MAX)
			fputs("its next event (after running)", out);
		else
			print_ns(out, l->to);
	}
	fputs(": what ran there is not known.\n", out);
}

/**
 * classify_json_lost - the same as a JSON array's members
 */
void classify_json_lost(FILE *out, const struct late_parts *p, struct machine **machines)
{
	for (int i = 0; i < p->nr_lost; i++) {
		const struct late_lost *l = &p->lost[i];

		fprintf(out, "%s{\"machine\":\"", i ? "," : "");
		vtrace_json_chars(out, machines[l->mi]->name);
		fprintf(out, "\",\"cpu\":%d,\"losses\":%" PRIu32 ",\"events\":%" PRIu64
			",\"uncounted\":%" PRIu32 ",\"from_ns\":%" PRIu64 ",\"to_ns\":", l->cpu,
			l->losses, l->events, l->uncounted, l->from);
		if (l->to == UINT64_MAX)
			fputs("null}", out);
		else
			fprintf(out, "%" PRIu64 "}", l->to);
	}
}

/* the late wake-ups of the summary under C_EVENTS_LOST */
static uint64_t lost_wakeups(const struct classify *c)
{
	uint64_t n = 0;

	for (int i = 0; i < c->nr_causes; i++)
		if (c->causes[i].kind == C_EVENTS_LOST && c->causes[i].group == c->sel)
			n += c->causes[i].count;
	return n;
}

/*
 * What the traces lost in all, once, when they lost any: "Events lost:
 * host 4 events in 2 losses (cpu 1); guest g1 2 events in 2 losses, 1 not
 * counted (cpu 1). ..."
 */
static void print_text_lost(const struct classify *c, FILE *out)
{
	bool any = false;

	for (int mi = 0; mi < c->nr; mi++) {
		uint64_t losses = 0, events = 0, uncounted = 0;
		int cpus = 0;

		for (int k = 0; k < c->nr_cpus[mi]; k++) {
			losses += c->lost[mi][k].n;
			events += c->lost[mi][k].events;
			uncounted += c->lost[mi][k].uncounted;
		}
		if (!losses)
			continue;
		fprintf(out, "%s%s%s ", any ? "; " : "Events lost: ",
			c->machines[mi]->guest ? "guest " : "", c->machines[mi]->name);
		print_lost_count(out, events, losses, uncounted);
		fputs(" (cpu", out);
		for (int k = 0; k < c->nr_cpus[mi]; k++)
			if (c->lost[mi][k].n)
				fprintf(out, "%s%d", cpus++ ? "," : " ", k);
		fputc(')', out);
		any = true;
	}
	if (any)
		fprintf(out, ". The late wake-ups whose windows meet one (%" PRIu64 " of %" PRIu64
			") are under \"trace lost events here\": not told apart.\n", lost_wakeups(c),
			c->late_g[c->sel]);
}

static void print_jsonl_lost(const struct classify *c, FILE *out)
{
	for (int mi = 0; mi < c->nr; mi++) {
		for (int k = 0; k < c->nr_cpus[mi]; k++) {
			const struct lost *l = &c->lost[mi][k];

			if (!l->n)
				continue;
			fputs("{\"type\":\"events_lost\",\"machine\":\"", out);
			vtrace_json_chars(out, c->machines[mi]->name);
			fprintf(out, "\",\"cpu\":%d,\"losses\":%zu,\"events\":%" PRIu64
				",\"uncounted\":%" PRIu64 "}\n", k, l->n, l->events, l->uncounted);
		}
	}
}

/* the modes of a cause's wake-ups, most time first: X_STATES indexes, -1 ended */
static void modes_ordered(const struct cause *z, int *o)
{
	int n = 0;

	for (int i = 0; i < X_STATES; i++) {
		int j;

		if (!z->x[i].total && !z->x[i].count)
			continue;
		for (j = n++; j > 0 && z->x[o[j - 1]].total < z->x[i].total; j--)
			o[j] = o[j - 1];
		o[j] = i;
	}
	o[n] = -1;
}

/* A row of the summary's tables: TEXT (indented, then padded to @width), count, total, max */
static void print_row(FILE *out, int indent, int width, const char *text, uint64_t count,
		      uint64_t total, uint64_t max)
{
	fprintf(out, "%*s%-*s %8" PRIu64 " ", indent, "", width, text, count);
	print_ms(out, total, 10);
	fputc(' ', out);
	print_ms(out, max, 10);
}

static void print_text_modes(struct classify *c, FILE *out, const int *o)
{
	int mo[X_STATES + 1];
	char text[80];

	fprintf(out, "\nvCPU modes in the late wake-ups' windows, by main cause (%" PRIu64
		" kvm_exit, %" PRIu64 " kvm_entry in the host trace):\n", c->exits, c->entries);
	fputs("  cause / mode                                           count   total ms"
	      "     max ms\n", out);
	for (int i = 0; o[i] >= 0; i++) {
		const struct cause *z = &c->causes[o[i]];

		classify_cause_text(c, o[i], text, sizeof(text));
		fprintf(out, "  %s\n", text);
		if (!z->x) {
			fputs(z->kind == C_EVENTS_LOST ? "    (not told apart: the trace lost events)\n"
			      : "    (no kvm_entry/kvm_exit of these vCPU threads)\n", out);
			continue;
		}
		modes_ordered(z, mo);
		for (int k = 0; mo[k] >= 0; k++) {
			const struct xstat *x = &z->x[mo[k]];
			int state = mo[k] - 1;

			snprintf(text, sizeof(text), "%s%s", state > X_GUEST ? "exit " : "",
				 classify_mode_name(c, state));
			print_row(out, 4, 50, text, x->count, x->total, x->max);
			fputc('\n', out);
		}
	}
}

static void print_text(struct classify *c, FILE *out, const int *o)
{
	char text[80];

	fputs("  cause                                                  wake-ups   total ms"
	      "     max ms   share\n", out);
	for (int i = 0; o[i] >= 0; i++) {
		const struct cause *z = &c->causes[o[i]];

		classify_cause_text(c, o[i], text, sizeof(text));
		print_row(out, 2, 54, text, z->count, z->total, z->max);
		fprintf(out, "  %5.1f%%\n", c->delay_g[c->sel] ?
			100.0 * z->total / c->delay_g[c->sel] : 0.0);
	}
	print_text_lost(c, out);
	if (c->host < 0) {
		fputs("No host trace (--host): the host's causes cannot be told apart.\n", out);
		return;
	}
	if (!c->ticks)
		fprintf(out, "Not told apart: %s.\n", no_ticks);
	for (int i = 0; c->ticks && c->in_window && i < c->nr_cpus[c->host]; i++)
		if (c->in_window[i] & 1 << c->sel)
			print_text_tick(c, out, i);
	if (!have_modes(c))
		fprintf(out, "Not told apart: %s.\n", c->exits || c->entries ? half_exits : no_exits);
	else
		print_text_modes(c, out, o);
}

static void print_jsonl_modes(struct classify *c, FILE *out, const struct cause *z)
{
	int mo[X_STATES + 1];

	modes_ordered(z, mo);
	for (int k = 0; mo[k] >= 0; k++) {
		const struct xstat *x = &z->x[mo[k]];

		fprintf(out, "{\"type\":\"mode\",\"cause\":\"%s\",\"task\":\"", kind_key[z->kind]);
		vtrace_json_chars(out, z->task);
		fprintf(out, "\",\"mode\":\"%s\",\"reason\":\"", mode_key(mo[k] - 1));
		if (mo[k] - 1 > X_GUEST)
			vtrace_json_chars(out, classify_mode_name(c, mo[k] - 1));
		fprintf(out, "\",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"max_ns\":%"
			PRIu64 "}\n", x->count, x->total, x->max);
	}
}

static void print_jsonl(struct classify *c, FILE *out, const int *o)
{
	for (int i = 0; o[i] >= 0; i++) {
		const struct cause *z = &c->causes[o[i]];

		fprintf(out, "{\"type\":\"cause\",\"cause\":\"%s\",\"task\":\"", kind_key[z->kind]);
		vtrace_json_chars(out, z->task);
		fprintf(out, "\",\"wakeups\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"max_ns\":%"
			PRIu64 ",\"share\":%.4f}\n", z->count, z->total, z->max,
			c->delay_g[c->sel] ? (double)z->total / c->delay_g[c->sel] : 0.0);
	}
	for (int i = 0; have_modes(c) && o[i] >= 0; i++)
		if (c->causes[o[i]].x)
			print_jsonl_modes(c, out, &c->causes[o[i]]);
}

/**
 * classify_print - the summary: late wake-ups per cause, most delay first
 * @what:	the tasks ("cyclictest", "a guest task")
 * @json_more:	more of the jsonl summary's fields (",\"selection\":...")
 */
int classify_print(struct classify *c, FILE *out, bool jsonl, const char *what,
		   uint64_t threshold, uint64_t wakeups, const char *json_more)
{
	int *o = ordered(c);
	char cpus[64] = "";

	if (!o)
		return -1;
	if (jsonl) {
		if (c->host >= 0 && c->ticks)
			cpus_not_told(c, cpus, sizeof(cpus));
		fprintf(out, "{\"type\":\"summary\",\"task\":\"");
		vtrace_json_chars(out, what);
		fprintf(out, "\"%s,\"threshold_ns\":%" PRIu64 ",\"wakeups\":%" PRIu64
			",\"late\":%" PRIu64 ",\"delay_ns\":%" PRIu64 ",\"host\":%s"
			",\"kvm_exits\":%" PRIu64 ",\"kvm_entries\":%" PRIu64 ",\"ticks\":%" PRIu64
			",\"not_told_apart\":\"%s%s%s%s\"}\n",
			json_more, threshold, wakeups, c->late_g[c->sel], c->delay_g[c->sel],
			c->host >= 0 ? "true" : "false",
			c->exits, c->entries, c->ticks, c->host < 0 ? "host causes (no --host)" :
			have_modes(c) ? "" : "guest mode, exit handling",
			c->host < 0 || (c->ticks && !cpus[0]) || have_modes(c) ? "" : "; ",
			c->host < 0 || (c->ticks && !cpus[0]) ? "" : c->ticks ?
			"host not running on cpu " : "host not running", cpus);
		print_jsonl(c, out, o);
		print_jsonl_lost(c, out);
		if (c->host >= 0 && c->ticks)
			print_jsonl_ticks(c, out);
		free(o);
		return 0;
	}
	if (!c->late_g[c->sel]) {
		fprintf(out, "No late wake-up: none of the %" PRIu64 " wake-ups of %s was later"
			" than ", wakeups, what);
		print_ms(out, threshold, 0);
		fputs(" ms (--threshold).\n", out);
		free(o);
		return 0;
	}
	fprintf(out, "Late wake-ups of %s (later than ", what);
	print_ms(out, threshold, 0);
	fprintf(out, " ms): %" PRIu64 " of %" PRIu64 ", ", c->late_g[c->sel], wakeups);
	print_ms(out, c->delay_g[c->sel], 0);
	fputs(" ms of delay in all, each counted under the cause that took most of it:\n", out);
	print_text(c, out, o);
	free(o);
	return 0;
}
