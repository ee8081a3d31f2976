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
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "out-sched.h"
#include "vtrace-util.h"

struct sched_cpu {
	bool		seen;
	bool		known;		/* a sched_switch told the task */
	int		pid;
	char		comm[SCHED_COMM_LEN + 1];
	uint64_t	since;
	bool		since_ambiguous;	/* the sched_switch of @since */
};

struct sched_machine {
	struct machine		*m;
	int			switch_id;
	struct tep_format_field	*prev_pid, *prev_comm, *next_pid, *next_comm;
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
	free(t);
}

static struct tep_format_field *field(struct tep_event *ev, const char *name)
{
	return ev ? tep_find_field(ev, name) : NULL;
}

static int add_machine(struct sched_tracker *t, struct machine *m)
{
	struct sched_machine *n = realloc(t->ms, (t->nr + 1) * sizeof(*n));
	struct tep_event *ev;

	if (!n)
		return -1;
	t->ms = n;
	n = &t->ms[t->nr];
	memset(n, 0, sizeof(*n));
	n->m = m;
	n->cpus = calloc(m->nr_cpus > 0 ? m->nr_cpus : 1, sizeof(*n->cpus));
	if (!n->cpus)
		return -1;
	ev = tep_find_event_by_name(m->tep, "sched", "sched_switch");
	n->switch_id = ev ? ev->id : -1;
	n->prev_pid = field(ev, "prev_pid");
	n->prev_comm = field(ev, "prev_comm");
	n->next_pid = field(ev, "next_pid");
	n->next_comm = field(ev, "next_comm");
	return t->nr++;
}

static int machine_index(struct sched_tracker *t, struct machine *m)
{
	for (int i = 0; i < t->nr; i++)
		if (t->ms[i].m == m)
			return i;
	return add_machine(t, m);
}

static int num(struct tep_format_field *f, const struct tep_record *rec)
{
	unsigned long long v;

	if (!f || f->offset + f->size > rec->size || tep_read_number_field(f, rec->data, &v))
		return -1;
	return (int)v;
}

static void str(struct tep_format_field *f, const struct tep_record *rec, char *buf)
{
	int len;

	buf[0] = '\0';
	if (!f || f->offset + f->size > rec->size)
		return;
	len = strnlen((const char *)rec->data + f->offset,
		      f->size < SCHED_COMM_LEN ? f->size : SCHED_COMM_LEN);
	memcpy(buf, (const char *)rec->data + f->offset, len);
	buf[len] = '\0';
}

static void emit(struct sched_tracker *t, int mi, int cpu, struct sched_cpu *c, uint64_t to,
		 bool to_ambiguous)
{
	struct sched_slice sl = {
		.mi = mi, .cpu = cpu, .pid = c->pid, .comm = c->comm, .from = c->since, .to = to,
		.from_ambiguous = c->since_ambiguous, .to_ambiguous = to_ambiguous,
	};

	if (t->ops->slice && to >= c->since)
		t->ops->slice(t->priv, &sl);
}

static void on_switch(struct sched_tracker *t, int mi, struct source *s, uint64_t ns)
{
	struct sched_machine *sm = &t->ms[mi];
	struct sched_cpu *c = &sm->cpus[s->cpu];

	if (!c->known) {
		c->pid = num(sm->prev_pid, s->rec);
		str(sm->prev_comm, s->rec, c->comm);
	}
	emit(t, mi, s->cpu, c, ns, s->ambiguous);
	c->known = true;
	c->pid = num(sm->next_pid, s->rec);
	str(sm->next_comm, s->rec, c->comm);
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
	if (tep_data_type(s->m->tep, s->rec) == t->ms[mi].switch_id)
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

/* Close the slices still open at the end of the trace */
void sched_tracker_finish(struct sched_tracker *t)
{
	if (t->opts->to_ns != UINT64_MAX && t->opts->to_ns > t->last)
		t->last = t->opts->to_ns;
	for (int i = 0; i < t->nr; i++)
		for (int c = 0; c < t->ms[i].m->nr_cpus; c++)
			if (t->ms[i].cpus[c].known)
				emit(t, i, c, &t->ms[i].cpus[c], t->last, false);
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

/* QEMU names its vCPU threads "CPU N/KVM": N, or -1 */
int sched_vcpu_of(const char *comm)
{
	char *end;
	long n;

	if (strncmp(comm, "CPU ", 4) || comm[4] < '0' || comm[4] > '9')
		return -1;
	n = strtol(comm + 4, &end, 10);
	return strcmp(end, "/KVM") || n > 4096 ? -1 : (int)n;
}

/* The guest CPU that runs on vCPU index @vcpu_idx, or -1 */
int sched_guest_cpu(struct machine *m, int vcpu_idx)
{
	if (!m->guest)
		return -1;
	for (int c = 0; c < m->nr_cpus; c++)
		if (m->cpus[c].map.hist && m->cpus[c].map.hist->vcpu_idx == vcpu_idx)
			return c;
	return -1;
}

/* The machine that has vCPU index @vcpu, when exactly one guest does; its CPU in *@cpu */
int sched_guest_of_vcpu(struct sched_tracker *t, int vcpu, int *cpu)
{
	int found = -1;

	for (int i = 0; i < t->nr; i++) {
		int c = sched_guest_cpu(t->ms[i].m, vcpu);

		if (c < 0)
			continue;
		if (found >= 0)
			return -1;	/* two guests: "CPU N/KVM" does not say which */
		found = i;
		*cpu = c;
	}
	return found;
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
