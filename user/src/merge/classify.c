// SPDX-License-Identifier: GPL-2.0
/* classify.c: --explain's classifier, what each late guest wake-up waited for: its state. */
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
 *
 * The files: this one keeps the state, fed every event (classify_event());
 * classify-window.c walks a late wake-up's window (classify_wakeup());
 * classify-print.c prints the summary; classify-local.h has their types.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "classify-local.h"
#include "vtrace-kvm.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

static void lookup(struct cl_fields *f, struct tep_handle *tep)
{
	struct tep_event *ev;

	f->native = tep_is_file_bigendian(tep) == tep_is_local_bigendian(tep);
	f->irq_in = vtrace_event_id(tep, "irq", "irq_handler_entry", NULL);
	f->irq_out = vtrace_event_id(tep, "irq", "irq_handler_exit", NULL);
	f->sirq_in = vtrace_event_id(tep, "irq", "softirq_entry", NULL);
	f->sirq_out = vtrace_event_id(tep, "irq", "softirq_exit", NULL);
	f->exit_id = vtrace_event_id(tep, "kvm", "kvm_exit", &ev);
	f->exit_reason = ev ? tep_find_field(ev, "exit_reason") : NULL;
	f->exit_isa = ev ? tep_find_field(ev, "isa") : NULL;
	f->entry_id = vtrace_event_id(tep, "kvm", "kvm_entry", NULL);
	f->tick_id = vtrace_event_id(tep, "irq_vectors", "local_timer_entry", NULL);
}

static int64_t num(const struct cl_fields *f, struct tep_format_field *field,
		   const struct tep_record *rec)
{
	return vtrace_field_num(f->native, field, rec);
}

/* Host @cpu's tick as measured, or none: its silences not told apart */
const struct host_tick *cl_tick_of(const struct classify *c, int cpu)
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

struct ring *cl_ring_of(struct classify *c, int mi, int cpu, bool create)
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

struct slice *cl_slice_at(struct ring *r, size_t i)
{
	return &r->s[i % RING];
}

size_t cl_oldest(struct ring *r)
{
	return r->n > RING ? r->n - RING : 0;
}

static void push(struct ring *r, uint64_t ns, int kind, int pid, const char *comm,
		 int prev_pid, long prev_state)
{
	struct slice *s = cl_slice_at(r, r->n++);

	s->from = ns;
	s->kind = kind;
	s->pid = pid;
	s->prev_pid = prev_pid;
	s->prev_state = prev_state;
	memcpy(s->comm, comm, sizeof(s->comm));	/* COMM_LEN + 1, NUL-terminated */
}

struct vcpu_loc *cl_vcpu_loc(struct classify *c, int tid, bool create)
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
		l = cl_vcpu_loc(c, tid, false);	/* a thread known by its kvm_entry, or none */
	else
		l = cl_vcpu_loc(c, tid, true);
	if (!l)
		return;		/* not a vCPU, or out of memory: its wake-ups' host side unknown */
	note_seen(l, cpu, ns);
}

/* a vCPU thread known by its kvm_entry on host @cpu at @ns */
static void vcpu_seen_at(struct classify *c, int tid, int cpu, uint64_t ns)
{
	struct vcpu_loc *l = cl_vcpu_loc(c, tid, true);

	if (l)
		note_seen(l, cpu, ns);
}

/* the ring of vCPU thread @tid's changes of mode */
struct xring *cl_xring_of(struct classify *c, int tid, bool create)
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
	struct xring *x = cl_xring_of(c, tep_data_pid(s->m->tep, s->rec), true);
	struct xmark *m;

	if (exit)
		c->exits++;
	else
		c->entries++;
	if (!x)
		return;
	/* a thread's first kvm_entry: a vCPU thread, running on this cpu, whatever its name */
	if (!exit && !x->located) {
		if (!cl_vcpu_loc(c, x->tid, false))
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
	if (!s->sw && id != f->irq_in && id != f->irq_out &&
	    id != f->sirq_in && id != f->sirq_out) {
		if ((id == f->exit_id || id == f->entry_id) && mi == c->host)
			vcpu_mode(c, f, s, ns, id == f->exit_id);
		return;
	}
	r = cl_ring_of(c, mi, s->cpu, true);
	if (!r)
		return;
	if (s->sw) {
		const struct sched_switch *sw = s->sw;

		push(r, ns, SL_TASK, sw->next_pid, sw->next_comm, sw->prev_pid, sw->prev_state);
		r->pid = sw->next_pid;
		memcpy(r->comm, sw->next_comm, sizeof(r->comm));
		if (mi == c->host)
			vcpu_seen(c, sw->next_comm, sw->next_pid, s->cpu, ns);
	} else if (id == f->irq_in || id == f->sirq_in) {
		push(r, ns, id == f->irq_in ? SL_IRQ : SL_SOFTIRQ, r->pid, r->comm, -1, 0);
	} else {
		push(r, ns, SL_TASK, r->pid, r->comm, -1, 0);
	}
}
