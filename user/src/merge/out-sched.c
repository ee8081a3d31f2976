// SPDX-License-Identifier: GPL-2.0
/* out-sched.c: turn each CPU's sched_switch events into slices for the drawn outputs. */
/*
 * Every CPU of every machine has a current task: the one the last
 * sched_switch switched in.  A sched_switch closes its slice and opens the
 * next; before a CPU's first sched_switch, its prev task is taken to have
 * run from the CPU's first event.  At the end, open slices run to the last
 * event of the trace.  Times are host nanoseconds (host TSC without --tsc-khz).
 *
 * A host task named "CPU N/KVM" is QEMU's thread of vCPU index N; a guest
 * CPU's vCPU index comes from the offsets file (struct vtrace_vcpu_history).
 * Several VMs on the host have threads of that name, merged or not.  Which
 * one is a guest CPU's vCPU is the self-check's fit, which it publishes on
 * the guest CPU's source (source->fit, read with vtrace_vcpu_fit_tid(): the
 * thread whose spans hold the guest CPU's events), final when the trace is
 * over: sched_tracker_finish() reads it once per guest CPU.  Without an
 * answer (the check not open, or several threads that fit as well), the
 * only thread of that name is taken, if there is one; else none is, and
 * the guest CPU's drawn vCPU track says why (sched_vcpu_label()).  A thread
 * that would be two guest CPUs' vCPU is neither's.
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "out-sched.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

struct sched_cpu {
	bool		seen;
	bool		known;		/* a sched_switch told the task */
	int		pid;
	char		comm[SCHED_COMM_LEN + 1];
	uint64_t	since;
	bool		since_ambiguous;	/* the sched_switch of @since */
	int		noted;		/* host: the vCPU thread last noted here */
	/* guest CPU: its vCPU's host thread, sched_tracker_finish() on */
	int		vtid;		/* -1: not known */
	int		cand;		/* the thread before two guest CPUs were seen to take it */
	int		named;		/* host threads named after its vCPU */
	int		shared;		/* guest CPUs the thread would be the vCPU of */
};

/* a host thread named "CPU N/KVM" */
struct sched_vthread {
	int		idx;
	int		tid;
};

struct sched_machine {
	struct machine		*m;
	struct sched_cpu	*cpus;
};

struct sched_tracker {
	const struct merge_opts	*opts;
	const struct sched_ops	*ops;
	void			*priv;
	struct sched_machine	*ms;
	int			nr;
	uint64_t		first;
	uint64_t		last;
	bool			any;
	struct sched_vthread	*vth;		/* the host's vCPU threads seen */
	int			nr_vth;
	bool			vth_oom;
};

struct sched_tracker *sched_tracker_new(const struct merge_opts *opts,
					const struct sched_ops *ops, void *priv)
{
	struct sched_tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->opts = opts;
	t->ops = ops;
	t->priv = priv;
	return t;
}

void sched_tracker_free(struct sched_tracker *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nr; i++)
		free(t->ms[i].cpus);
	free(t->ms);
	free(t->vth);
	free(t);
}

static int add_machine(struct sched_tracker *t, struct machine *m)
{
	struct sched_machine *n = realloc(t->ms, (t->nr + 1) * sizeof(*n));

	if (!n)
		return -1;
	t->ms = n;
	n = &t->ms[t->nr];
	memset(n, 0, sizeof(*n));
	n->m = m;
	n->cpus = calloc(m->nr_cpus > 0 ? m->nr_cpus : 1, sizeof(*n->cpus));
	if (!n->cpus)
		return -1;
	return t->nr++;
}

static int machine_index(struct sched_tracker *t, struct machine *m)
{
	for (int i = 0; i < t->nr; i++)
		if (t->ms[i].m == m)
			return i;
	return add_machine(t, m);
}

/* a host slice of @c's task: note it if it is a vCPU thread ("CPU N/KVM") not seen before */
static void note_vthread(struct sched_tracker *t, struct sched_cpu *c)
{
	struct sched_vthread *n;
	int idx;

	if (c->pid <= 0 || c->pid == c->noted)
		return;
	idx = vtrace_vcpu_idx_of(c->comm, SIZE_MAX);
	if (idx < 0)
		return;
	c->noted = c->pid;
	for (int i = 0; i < t->nr_vth; i++)
		if (t->vth[i].tid == c->pid && t->vth[i].idx == idx)
			return;
	n = realloc(t->vth, (t->nr_vth + 1) * sizeof(*n));
	if (!n) {
		t->vth_oom = true;	/* counted short: no thread is taken for being the only one */
		return;
	}
	t->vth = n;
	t->vth[t->nr_vth++] = (struct sched_vthread){ idx, c->pid };
}

static void emit(struct sched_tracker *t, int mi, int cpu, struct sched_cpu *c, uint64_t to,
		 bool to_ambiguous)
{
	struct sched_slice sl = {
		.mi = mi, .cpu = cpu, .pid = c->pid, .comm = c->comm, .from = c->since, .to = to,
		.from_ambiguous = c->since_ambiguous, .to_ambiguous = to_ambiguous,
	};

	if (!t->ms[mi].m->guest)
		note_vthread(t, c);
	if (t->ops->slice && to >= c->since)
		t->ops->slice(t->priv, &sl);
}

static void on_switch(struct sched_tracker *t, int mi, struct source *s, uint64_t ns)
{
	struct sched_cpu *c = &t->ms[mi].cpus[s->cpu];

	if (!c->known) {
		c->pid = s->sw->prev_pid;
		memcpy(c->comm, s->sw->prev_comm, sizeof(c->comm));
	}
	emit(t, mi, s->cpu, c, ns, s->ambiguous);
	c->known = true;
	c->pid = s->sw->next_pid;
	memcpy(c->comm, s->sw->next_comm, sizeof(c->comm));
	c->since = ns;
	c->since_ambiguous = s->ambiguous;
}

void sched_tracker_event(struct sched_tracker *t, struct source *s)
{
	uint64_t ns = t->opts->khz ? vtrace_tsc_to_ns(s->host_tsc, t->opts->khz) : s->host_tsc;
	int mi = machine_index(t, s->m);
	struct sched_cpu *c;

	if (mi < 0 || s->cpu < 0 || s->cpu >= s->m->nr_cpus)
		return;
	if (t->ops->event)
		t->ops->event(t->priv, mi, s, ns);
	if (!t->any)
		t->first = ns;
	t->any = true;
	t->last = ns;
	c = &t->ms[mi].cpus[s->cpu];
	if (!c->seen) {
		/* with --from, the task a first sched_switch names ran since the window's start */
		c->seen = true;
		c->since = t->opts->from_ns ? t->opts->from_ns : ns;
	}
	if (s->sw)
		on_switch(t, mi, s, ns);
	else if (t->ops->instant)
		t->ops->instant(t->priv, mi, s, ns);
}

/* Which end of @sl has an ambiguous time: "start", "end", "both", or NULL */
const char *sched_slice_ambiguous(const struct sched_slice *sl)
{
	if (sl->from_ambiguous)
		return sl->to_ambiguous ? "both" : "start";
	return sl->to_ambiguous ? "end" : NULL;
}

static void resolve_vcpus(struct sched_tracker *t);

/* Close the slices still open at the end of the trace, then tell each guest CPU's vCPU thread */
void sched_tracker_finish(struct sched_tracker *t)
{
	if (t->opts->to_ns != UINT64_MAX && t->opts->to_ns > t->last)
		t->last = t->opts->to_ns;
	for (int i = 0; i < t->nr; i++)
		for (int c = 0; c < t->ms[i].m->nr_cpus; c++)
			if (t->ms[i].cpus[c].known)
				emit(t, i, c, &t->ms[i].cpus[c], t->last, false);
	resolve_vcpus(t);
}

int sched_tracker_machines(struct sched_tracker *t)
{
	return t->nr;
}

struct machine *sched_tracker_machine(struct sched_tracker *t, int mi)
{
	return mi >= 0 && mi < t->nr ? t->ms[mi].m : NULL;
}

uint64_t sched_tracker_first(struct sched_tracker *t)
{
	return t->first;
}

uint64_t sched_tracker_last(struct sched_tracker *t)
{
	return t->last;
}

/* The guest CPU of @m that runs on vCPU index @vcpu_idx, or -1 */
static int guest_cpu(struct machine *m, int vcpu_idx)
{
	if (!m->guest)
		return -1;
	for (int c = 0; c < m->nr_cpus; c++)
		if (m->cpus[c].map.hist && m->cpus[c].map.hist->vcpu_idx == vcpu_idx)
			return c;
	return -1;
}

/* Guests of the merge that have vCPU index @vcpu */
static int guests_of_vcpu(struct sched_tracker *t, int vcpu)
{
	int n = 0;

	for (int i = 0; i < t->nr; i++)
		n += guest_cpu(t->ms[i].m, vcpu) >= 0;
	return n;
}

static int vcpu_idx(struct machine *m, int cpu)
{
	const struct vtrace_vcpu_history *h = m->cpus[cpu].map.hist;

	return m->guest && h ? h->vcpu_idx : -1;
}

/*
 * Guest CPU @cpu's vCPU thread: the self-check's fit, else the only host
 * thread of its name when only one guest of the merge has that vCPU index
 */
static void resolve_vcpu(struct sched_tracker *t, struct machine *m, struct sched_cpu *c,
			 int cpu)
{
	int idx = vcpu_idx(m, cpu), only = -1;
	const struct vtrace_vcpu_fit *fit = m->cpus[cpu].fit;

	c->vtid = c->cand = -1;
	c->named = 0;
	c->shared = 0;
	if (idx < 0)
		return;
	for (int i = 0; i < t->nr_vth; i++) {
		if (t->vth[i].idx == idx) {
			c->named++;
			only = t->vth[i].tid;
		}
	}
	/* the check saw the whole host trace; these slices, only --from..--to */
	if (fit && fit->nr_cand > c->named)
		c->named = fit->nr_cand;
	c->vtid = vtrace_vcpu_fit_tid(fit);
	if (c->vtid < 0 && c->named == 1 && !t->vth_oom && guests_of_vcpu(t, idx) == 1)
		c->vtid = only;
	c->cand = c->vtid;
}

/* Each guest CPU's vCPU thread; one that two guest CPUs would take is neither's */
static void resolve_vcpus(struct sched_tracker *t)
{
	for (int i = 0; i < t->nr; i++)
		for (int c = 0; t->ms[i].m->guest && c < t->ms[i].m->nr_cpus; c++)
			resolve_vcpu(t, t->ms[i].m, &t->ms[i].cpus[c], c);
	for (int i = 0; i < t->nr; i++) {
		for (int c = 0; t->ms[i].m->guest && c < t->ms[i].m->nr_cpus; c++) {
			struct sched_cpu *a = &t->ms[i].cpus[c];

			if (a->vtid < 0)
				continue;
			for (int j = 0; j < t->nr; j++)
				for (int d = 0; t->ms[j].m->guest && d < t->ms[j].m->nr_cpus; d++)
					a->shared += t->ms[j].cpus[d].cand == a->cand;
		}
	}
	for (int i = 0; i < t->nr; i++)
		for (int c = 0; t->ms[i].m->guest && c < t->ms[i].m->nr_cpus; c++)
			if (t->ms[i].cpus[c].shared > 1)
				t->ms[i].cpus[c].vtid = -1;
}

/* Was thread @tid seen named "CPU @idx/KVM" (in --from..--to)? */
static bool is_named(const struct sched_tracker *t, int tid, int idx)
{
	for (int i = 0; i < t->nr_vth; i++)
		if (t->vth[i].tid == tid && t->vth[i].idx == idx)
			return true;
	return t->vth_oom;	/* not known: as before */
}

/**
 * sched_vcpu_label - what a guest CPU's vCPU track is, for its name
 *
 * "thread CPU 1/KVM (tid 900)", "thread tid 900 (vCPU 1, by its kvm_entry)"
 * (a thread QEMU did not name), "thread CPU 1/KVM (not seen)" (no host
 * thread of that name), "not told apart: 2 threads named CPU 1/KVM" (and
 * "for 2 guests" when two guests of the merge have vCPU 1), or "not told
 * apart: tid 900 of CPU 1/KVM fits 2 guest CPUs".  Returns the thread, or -1.
 */
int sched_vcpu_label(struct sched_tracker *t, int mi, int cpu, char *buf, size_t len)
{
	struct machine *m = sched_tracker_machine(t, mi);
	int idx = m && cpu >= 0 && cpu < m->nr_cpus ? vcpu_idx(m, cpu) : -1;
	const struct sched_cpu *c;

	if (idx < 0) {
		snprintf(buf, len, "no vCPU index");
		return -1;
	}
	c = &t->ms[mi].cpus[cpu];
	if (c->vtid >= 0 && !is_named(t, c->vtid, idx))
		/* QEMU without debug-threads=on: the self-check told it by its kvm_entry */
		snprintf(buf, len, "thread tid %d (vCPU %d, by its kvm_entry)", c->vtid, idx);
	else if (c->vtid >= 0)
		snprintf(buf, len, "thread CPU %d/KVM (tid %d)", idx, c->vtid);
	else if (c->shared > 1)
		snprintf(buf, len, "not told apart: tid %d of CPU %d/KVM fits %d guest CPUs",
			 c->cand, idx, c->shared);
	else if (c->named && guests_of_vcpu(t, idx) > 1)
		snprintf(buf, len, "not told apart: %d thread%s named CPU %d/KVM for %d guests",
			 c->named, c->named == 1 ? "" : "s", idx, guests_of_vcpu(t, idx));
	else if (c->named)
		snprintf(buf, len, "not told apart: %d thread%s named CPU %d/KVM", c->named,
			 c->named == 1 ? "" : "s", idx);
	else
		snprintf(buf, len, "thread CPU %d/KVM (not seen)", idx);
	return c->vtid;
}

/* The machine whose guest CPU (in *@cpu) has host thread @tid as its vCPU, or -1 */
int sched_guest_of_tid(struct sched_tracker *t, int tid, int *cpu)
{
	for (int i = 0; tid > 0 && i < t->nr; i++) {
		for (int c = 0; t->ms[i].m->guest && c < t->ms[i].m->nr_cpus; c++) {
			if (t->ms[i].cpus[c].vtid == tid) {
				*cpu = c;
				return i;
			}
		}
	}
	return -1;
}

/* The vCPU index of host thread @tid if it is named "CPU N/KVM", else -1 */
int sched_vthread_idx(struct sched_tracker *t, int tid)
{
	for (int i = 0; i < t->nr_vth; i++)
		if (t->vth[i].tid == tid)
			return t->vth[i].idx;
	return -1;
}

/* @a comes before @b: the host first, then the guests by name */
static bool machine_before(const struct machine *a, const struct machine *b)
{
	if (a->guest != b->guest)
		return !a->guest;
	return strcmp(a->name, b->name) < 0;
}

/* Drawing order of machine @mi, from 0 */
int sched_tracker_rank(struct sched_tracker *t, int mi)
{
	int r = 0;

	for (int i = 0; i < t->nr; i++)
		r += machine_before(t->ms[i].m, t->ms[mi].m);
	return r;
}

void drawn_event(struct drawn *d, struct source *s)
{
	sched_tracker_event(d->t, s);
}

/* Flush, write and free @d: 0, or -1 with a message */
int drawn_close(struct drawn *d)
{
	int ret;

	if (!d)
		return 0;
	sched_tracker_finish(d->t);
	ret = d->finish(d);
	sched_tracker_free(d->t);
	d->free(d);
	return ret;
}
