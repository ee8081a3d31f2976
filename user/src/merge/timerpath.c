// SPDX-License-Identifier: GPL-2.0
/* timerpath.c: --explain: a late wake-up's way from the guest timer's due time to the task. */
/*
 * A guest task that sleeps on a timer (cyclictest's clock_nanosleep) is
 * woken by the guest's local APIC timer.  Under KVM that timer is a host
 * hrtimer (apic_timer_fn, armed by the vCPU's thread when the guest
 * programs its TSC deadline or its APIC timer); its expiry kicks or wakes the
 * vCPU, which enters guest mode with the interrupt pending; the guest takes
 * its local timer interrupt, runs the expired hrtimer, wakes the task, and
 * schedules it.  So the delay of a late wake-up, expected .. running, is cut
 * along that path, at events of both traces:
 *
 *   expected .. T1   host timer    the host fired KVM's timer of that vCPU
 *                                  late (host hrtimer_expire_entry of
 *                                  apic_timer_fn; what ran on its host cpu
 *                                  when it fired: idle, or a task)
 *   T1 .. T4         to entry      until the vCPU entered guest mode
 *                                  (kvm_entry), the interrupt pending
 *   T4 .. T5         guest irq     to the guest's local_timer_entry on that
 *                                  guest cpu
 *   T5 .. running    guest         the guest's handler, its wake-up of the
 *                                  task and its scheduling of it
 *
 * and each segment after T1 says how long the vCPU thread was off every host
 * cpu in it (asleep, or woken and waiting for a cpu: its sched_switch events).
 * classify.c cuts a window at T1, T4 and T5 too, and tells a piece that is
 * only a state (the host cpu idle, the vCPU in guest mode with the guest
 * idle) by the segment it falls in.
 *
 * The host events needed: timer:hrtimer_start (which vCPU thread armed a
 * timer of apic_timer_fn: the timer's address is then that vCPU's) and
 * timer:hrtimer_expire_entry, sched_switch, kvm:kvm_entry; the guest's
 * irq_vectors:local_timer_entry.  A host that records no apic_timer_fn
 * expiry tells nothing of the path: the summary says which events to
 * record.  A wake-up with no expiry of its vCPU's timer from just before
 * its expected time to the task running (woken by something else, or the
 * timer not KVM's hrtimer: a hardware-assisted timer) is counted as such.
 *
 * Each vCPU thread keeps rings of its last RING fires, switches in and out
 * and entries; each guest CPU its last local_timer_entry events.  A late
 * wake-up is looked up when its task runs, so what it needs is in the rings.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "merge-local.h"
#include "vtrace-util.h"

#define RING		512	/* events kept per ring: far more than a late window holds */
#define MAX_THREADS	256	/* vCPU threads followed */
#define MAX_TIMERS	1024	/* apic_timer_fn hrtimers known (a vCPU has one) */
#define MAX_FUNCS	64	/* hrtimer functions seen, apic_timer_fn or not */
#define EARLY_NS	50000	/* a fire this much before the expected time is the wake-up's */
#define MAX_CPUS	1024	/* host cpus whose task is followed */
#define COMM_LEN	SW_COMM_LEN

struct tring {
	uint64_t	t[RING];
	uint32_t	v[RING];	/* fires: the pid on the host cpu when it fired */
	uint16_t	c[RING];	/* fires: the host cpu */
	size_t		n;		/* ever pushed */
};

struct vthread {
	int		tid;
	struct tring	fire, run, entry;	/* run: switched in (v 1) or out (v 0) */
	char		fire_comm[RING][COMM_LEN + 1];	/* the task a fire interrupted */
};

struct tp_fields {
	bool			native;
	int			start_id, expire_id, entry_id, tick_id;
	struct tep_format_field	*start_timer, *start_func, *exp_timer, *exp_func;
};

struct timerpath {
	struct machine		**machines;
	int			nr;
	int			host;		/* the host machine's index, -1 none */
	struct tp_fields	*f;
	uint64_t		funcs[MAX_FUNCS];	/* hrtimer functions looked up */
	bool			apic[MAX_FUNCS];	/* that one is apic_timer_fn */
	int			nr_funcs;
	struct {
		uint64_t	timer;
		int		tid;
	}			timers[MAX_TIMERS];
	int			nr_timers;
	struct vthread		*th[MAX_THREADS];
	int			nr_th;
	struct tring		**gtick;	/* [machine][cpu], guests only */
	struct {
		int		pid;
		char		comm[COMM_LEN + 1];
	}			cur[MAX_CPUS];	/* each host cpu's task, from its sched_switch */
	uint64_t		fires;		/* apic_timer_fn expiries seen */
	/* the summary, per group of wake-ups (explain.c's: real-time threads or the others) */
	struct tp_sum {
		uint64_t	seg[TP_SEGS];
		uint64_t	seg_max[TP_SEGS];
		uint64_t	off[TP_SEGS];	/* of seg: the vCPU thread off its host cpu */
		uint64_t	host_idle_ns;	/* of TP_HOST_TIMER: fired on an idle host cpu */
		uint64_t	on_path, no_fire, no_entry, no_tick;
	}			sum[2];
	int			sel;		/* the group timerpath_print() prints */
};

static void lookup(struct tp_fields *f, struct tep_handle *tep)
{
	struct tep_event *ev;

	f->native = tep_is_file_bigendian(tep) == tep_is_local_bigendian(tep);
	f->start_id = vtrace_event_id(tep, "timer", "hrtimer_start", &ev);
	f->start_timer = vtrace_event_field(ev, "hrtimer");
	f->start_func = vtrace_event_field(ev, "function");
	f->expire_id = vtrace_event_id(tep, "timer", "hrtimer_expire_entry", &ev);
	f->exp_timer = vtrace_event_field(ev, "hrtimer");
	f->exp_func = vtrace_event_field(ev, "function");
	f->entry_id = vtrace_event_id(tep, "kvm", "kvm_entry", NULL);
	f->tick_id = vtrace_event_id(tep, "irq_vectors", "local_timer_entry", NULL);
	if (!f->start_timer || !f->start_func)
		f->start_id = -1;
	if (!f->exp_timer || !f->exp_func)
		f->expire_id = -1;
}

struct timerpath *timerpath_open(struct machine **machines, int nr)
{
	struct timerpath *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->machines = machines;
	t->nr = nr;
	t->host = -1;
	t->f = calloc(nr, sizeof(*t->f));
	t->gtick = calloc(nr, sizeof(*t->gtick));
	if (!t->f || !t->gtick)
		goto error;
	for (int i = 0; i < nr; i++) {
		lookup(&t->f[i], machines[i]->tep);
		if (!machines[i]->guest) {
			if (t->host < 0)
				t->host = i;
			continue;
		}
		t->gtick[i] = calloc(machines[i]->nr_cpus, sizeof(**t->gtick));
		if (!t->gtick[i])
			goto error;
	}
	return t;
error:
	timerpath_close(t);
	return NULL;
}

void timerpath_close(struct timerpath *t)
{
	if (!t)
		return;
	for (int i = 0; t->gtick && i < t->nr; i++)
		free(t->gtick[i]);
	free(t->gtick);
	for (int i = 0; i < t->nr_th; i++)
		free(t->th[i]);
	free(t->f);
	free(t);
}

static void push(struct tring *r, uint64_t ns, uint32_t v, int cpu)
{
	r->t[r->n % RING] = ns;
	r->v[r->n % RING] = v;
	r->c[r->n % RING] = (uint16_t)cpu;
	r->n++;
}

/* the index of the first entry of @r at or after @from and at or before @to, -1: none */
static long first_in(const struct tring *r, uint64_t from, uint64_t to)
{
	long lo = r->n > RING ? (long)(r->n - RING) : 0, i = (long)r->n - 1, found = -1;

	for (; i >= lo && r->t[i % RING] >= from; i--)
		if (r->t[i % RING] <= to)
			found = i;
	return found;
}

static struct vthread *thread_of(struct timerpath *t, int tid, bool create)
{
	for (int i = 0; i < t->nr_th; i++)
		if (t->th[i]->tid == tid)
			return t->th[i];
	if (!create || t->nr_th == MAX_THREADS)
		return NULL;
	t->th[t->nr_th] = calloc(1, sizeof(**t->th));
	if (!t->th[t->nr_th])
		return NULL;
	t->th[t->nr_th]->tid = tid;
	return t->th[t->nr_th++];
}

/* Is hrtimer function @fn KVM's apic_timer_fn?  Looked up once per function */
static bool is_apic_fn(struct timerpath *t, struct tep_handle *tep, uint64_t fn)
{
	const char *name;

	for (int i = 0; i < t->nr_funcs; i++)
		if (t->funcs[i] == fn)
			return t->apic[i];
	name = tep_find_function(tep, fn);
	if (t->nr_funcs == MAX_FUNCS)
		return name && !strcmp(name, "apic_timer_fn");
	t->funcs[t->nr_funcs] = fn;
	t->apic[t->nr_funcs] = name && !strcmp(name, "apic_timer_fn");
	return t->apic[t->nr_funcs++];
}

static int timer_tid(struct timerpath *t, uint64_t timer)
{
	for (int i = 0; i < t->nr_timers; i++)
		if (t->timers[i].timer == timer)
			return t->timers[i].tid;
	return -1;
}

static void timer_note(struct timerpath *t, uint64_t timer, int tid)
{
	for (int i = 0; i < t->nr_timers; i++) {
		if (t->timers[i].timer == timer) {
			t->timers[i].tid = tid;
			return;
		}
	}
	if (t->nr_timers < MAX_TIMERS)
		t->timers[t->nr_timers++] = (typeof(t->timers[0])){ timer, tid };
}

static void host_event(struct timerpath *t, const struct tp_fields *f, struct source *s,
		       uint64_t ns, int id)
{
	struct tep_handle *tep = s->m->tep;
	struct vthread *th;
	int tid, pid;

	if (id == f->start_id) {
		if (is_apic_fn(t, tep, vtrace_field_num(f->native, f->start_func, s->rec)))
			timer_note(t, vtrace_field_num(f->native, f->start_timer, s->rec),
				   tep_data_pid(tep, s->rec));
	} else if (id == f->expire_id) {
		if (!is_apic_fn(t, tep, vtrace_field_num(f->native, f->exp_func, s->rec)))
			return;
		t->fires++;
		tid = timer_tid(t, vtrace_field_num(f->native, f->exp_timer, s->rec));
		th = tid > 0 ? thread_of(t, tid, true) : NULL;
		if (!th)
			return;
		pid = tep_data_pid(tep, s->rec);
		th->fire_comm[th->fire.n % RING][0] = 0;
		if (pid && s->cpu >= 0 && s->cpu < MAX_CPUS && t->cur[s->cpu].pid == pid)
			memcpy(th->fire_comm[th->fire.n % RING], t->cur[s->cpu].comm, COMM_LEN + 1);
		push(&th->fire, ns, (uint32_t)pid, s->cpu);
	} else if (s->sw) {
		if (s->cpu >= 0 && s->cpu < MAX_CPUS) {
			t->cur[s->cpu].pid = s->sw->next_pid;
			memcpy(t->cur[s->cpu].comm, s->sw->next_comm, COMM_LEN + 1);
		}
		th = thread_of(t, s->sw->prev_pid, false);
		if (th)
			push(&th->run, ns, 0, s->cpu);
		th = thread_of(t, s->sw->next_pid, false);
		if (th)
			push(&th->run, ns, 1, s->cpu);
	} else if (id == f->entry_id) {
		th = thread_of(t, tep_data_pid(tep, s->rec), false);
		if (th)
			push(&th->entry, ns, 0, s->cpu);
	}
}

/**
 * timerpath_event - one event of the merged stream, in time order
 */
void timerpath_event(struct timerpath *t, struct source *s, int mi, uint64_t ns)
{
	const struct tp_fields *f = &t->f[mi];
	int id = tep_data_type(s->m->tep, s->rec);

	if (mi == t->host) {
		host_event(t, f, s, ns, id);
	} else if (id == f->tick_id && t->gtick[mi] && s->cpu >= 0 &&
		   s->cpu < t->machines[mi]->nr_cpus) {
		push(&t->gtick[mi][s->cpu], ns, 0, s->cpu);
	}
}

/*
 * The time in [@from, @to) the vCPU thread was off every host cpu (asleep or
 * waiting for one), from its switches kept in @r; before the oldest kept, or
 * with none, it is taken as on a cpu (nothing to say otherwise).
 */
static uint64_t off_cpu(const struct tring *r, uint64_t from, uint64_t to)
{
	long lo = r->n > RING ? (long)(r->n - RING) : 0, i = (long)r->n - 1;
	uint64_t off = 0, since = from;
	bool on = true;

	if (to <= from)
		return 0;
	while (i >= lo && r->t[i % RING] > from)	/* the last switch at or before @from */
		i--;
	if (i >= lo)
		on = r->v[i % RING];
	for (i++; i < (long)r->n && r->t[i % RING] < to; i++) {
		if (!on && r->v[i % RING])
			off += r->t[i % RING] - since;
		else if (on && !r->v[i % RING])
			since = r->t[i % RING];
		on = r->v[i % RING];
	}
	if (!on)
		off += to - since;
	return off;
}

static void add_seg(struct tp_sum *u, struct late_path *p, const struct tring *run, int seg,
		    uint64_t from, uint64_t to)
{
	uint64_t ns = to > from ? to - from : 0;

	p->seg[seg] = ns;
	p->off[seg] = run ? off_cpu(run, from, to) : 0;
	u->seg[seg] += ns;
	u->off[seg] += p->off[seg];
	if (ns > u->seg_max[seg])
		u->seg_max[seg] = ns;
}

/**
 * timerpath_wakeup - cut a late wake-up along the timer's path; adds it to the summary
 * @mi:		the guest machine
 * @cpu:	its guest cpu
 * @vtid:	the vCPU's host thread (-1: not known)
 * @group:	the wake-up's group (0 or 1), summed apart
 */
void timerpath_wakeup(struct timerpath *t, int mi, int cpu, int vtid, int group,
		      uint64_t expected, uint64_t running, struct late_path *p)
{
	struct vthread *th = vtid > 0 ? thread_of(t, vtid, false) : NULL;
	struct tp_sum *u = &t->sum[group ? 1 : 0];
	uint64_t t1, t4, t5;
	long i;

	memset(p, 0, sizeof(*p));
	p->fire_cpu = -1;
	if (!th || (i = first_in(&th->fire, expected > EARLY_NS ? expected - EARLY_NS : 0,
				 running)) < 0) {
		p->state = TP_NO_FIRE;
		u->no_fire++;
		return;
	}
	t1 = th->fire.t[i % RING];
	p->fire_cpu = th->fire.c[i % RING];
	p->fire_pid = (int)th->fire.v[i % RING];
	memcpy(p->fire_comm, th->fire_comm[i % RING], sizeof(p->fire_comm));
	if (t1 < expected)
		t1 = expected;
	i = first_in(&th->entry, t1, running);
	if (i < 0) {
		p->state = TP_NO_ENTRY;
		u->no_entry++;
		return;
	}
	t4 = th->entry.t[i % RING];
	i = mi >= 0 && mi < t->nr && t->gtick[mi] && cpu >= 0 && cpu < t->machines[mi]->nr_cpus ?
	    first_in(&t->gtick[mi][cpu], t4, running) : -1;
	t5 = i < 0 ? t4 : t->gtick[mi][cpu].t[i % RING];
	p->state = i < 0 ? TP_NO_TICK : TP_KNOWN;
	u->on_path++;
	u->no_tick += i < 0;
	p->fired = t1;
	p->entry = t4;
	p->irq = t5;
	add_seg(u, p, NULL, TP_HOST_TIMER, expected, t1);
	if (!p->fire_pid)
		u->host_idle_ns += p->seg[TP_HOST_TIMER];
	add_seg(u, p, &th->run, TP_TO_ENTRY, t1, t4);
	add_seg(u, p, &th->run, TP_GUEST_IRQ, t4, t5);
	add_seg(u, p, &th->run, TP_GUEST, t5, running);
}

static const char *const seg_text[TP_SEGS] = {
	[TP_HOST_TIMER]	= "the host fired the vCPU's timer late",
	[TP_TO_ENTRY]	= "the timer fired, to the vCPU's next entry",
	[TP_GUEST_IRQ]	= "in guest mode, to the guest's timer interrupt",
	[TP_GUEST]	= "the guest's handler, wake-up, scheduling",
};

static const char *const seg_key[TP_SEGS] = {
	[TP_HOST_TIMER]	= "host_timer",
	[TP_TO_ENTRY]	= "to_entry",
	[TP_GUEST_IRQ]	= "guest_irq",
	[TP_GUEST]	= "guest",
};

/* The host cpu's task when KVM's timer fired: "idle" or its name and pid */
static void fire_task(const struct late_path *p, char *buf, size_t len)
{
	if (!p->fire_pid)
		snprintf(buf, len, "idle");
	else
		snprintf(buf, len, "%s:%d", p->fire_comm[0] ? p->fire_comm : "<...>", p->fire_pid);
}

static void ms(FILE *out, uint64_t ns)
{
	fprintf(out, "%6" PRIu64 ".%03" PRIu64, ns / 1000000, ns / 1000 % 1000);
}

static void share(FILE *out, uint64_t ns, uint64_t total)
{
	fprintf(out, " %6.1f%%\n", total ? 100.0 * ns / total : 0.0);
}

/* The group of wake-ups timerpath_print() sums */
void timerpath_select(struct timerpath *t, int group)
{
	t->sel = group ? 1 : 0;
}

/**
 * timerpath_print - the summary: the late wake-ups' delay by segment of the path
 */
void timerpath_print(struct timerpath *t, FILE *out, bool jsonl)
{
	const struct tp_sum *u = &t->sum[t->sel];
	uint64_t total = 0;

	for (int s = 0; s < TP_SEGS; s++)
		total += u->seg[s];
	if (jsonl) {
		fprintf(out, "\"recorded\":%s,\"on_path\":%" PRIu64 ",\"no_fire\":%" PRIu64
			",\"no_entry\":%" PRIu64 ",\"no_guest_irq\":%" PRIu64,
			t->fires ? "true" : "false", u->on_path, u->no_fire, u->no_entry,
			u->no_tick);
		for (int s = 0; s < TP_SEGS; s++)
			fprintf(out, ",\"%s_ns\":%" PRIu64 ",\"%s_off_cpu_ns\":%" PRIu64, seg_key[s],
				u->seg[s], seg_key[s], u->off[s]);
		fprintf(out, ",\"host_timer_idle_ns\":%" PRIu64, u->host_idle_ns);
		return;
	}
	if (!u->on_path && !u->no_fire && !u->no_entry)
		return;			/* no late wake-up */
	if (!t->fires) {
		fputs("\nThe guest timer's path: not told: the host recorded no expiry of KVM's timers"
		      " (record timer:hrtimer_start and timer:hrtimer_expire_entry on the host).\n",
		      out);
		return;
	}
	fprintf(out, "\nThe guest timer's path of %" PRIu64 " late wake-ups (%" PRIu64 " others: no"
		" expiry of their vCPU's timer in their window, or no entry to guest mode):\n",
		u->on_path, u->no_fire + u->no_entry);
	fprintf(out, "  %-54s %10s %10s %7s\n", "segment", "total ms", "max ms", "share");
	for (int s = 0; s < TP_SEGS; s++) {
		fprintf(out, "  %-54s ", seg_text[s]);
		ms(out, u->seg[s]);
		fputs("   ", out);
		ms(out, u->seg_max[s]);
		share(out, u->seg[s], total);
		if (s == TP_HOST_TIMER && u->seg[s]) {
			fprintf(out, "  %-54s ", "  of it, the host cpu idle until it fired");
			ms(out, u->host_idle_ns);
			fprintf(out, "%10s", "");
			share(out, u->host_idle_ns, total);
		}
		if (u->off[s]) {
			fprintf(out, "  %-54s ", "  of it, the vCPU thread off its host cpu");
			ms(out, u->off[s]);
			fprintf(out, "%10s", "");
			share(out, u->off[s], total);
		}
	}
	if (u->no_tick)
		fprintf(out, "  (%" PRIu64 " without the guest's local_timer_entry after the entry: the"
			" interrupt's time is counted with the handler's; record"
			" irq_vectors:local_timer_entry in the guest)\n", u->no_tick);
}

/* One late wake-up's path: its story's lines */
void timerpath_print_late(struct timerpath *t, FILE *out, const struct late_path *p)
{
	char task[48];

	if (!t->fires)
		return;		/* the summary says it is not recorded */
	if (p->state == TP_NO_FIRE || p->state == TP_NO_ENTRY) {
		fprintf(out, "The timer's path: %s.\n", p->state == TP_NO_FIRE ?
			"no expiry of the vCPU's timer in the window" :
			"the vCPU did not enter guest mode in the window");
		return;
	}
	fire_task(p, task, sizeof(task));
	fputs("The timer's path:\n", out);
	for (int s = 0; s < TP_SEGS; s++) {
		fprintf(out, "  %-52s ", seg_text[s]);
		ms(out, p->seg[s]);
		fputs(" ms", out);
		if (s == TP_HOST_TIMER)
			fprintf(out, " (host cpu %d, %s)", p->fire_cpu, task);
		if (p->off[s])
			fprintf(out, ", the vCPU thread off its host cpu %" PRIu64 ".%03" PRIu64 " ms",
				p->off[s] / 1000000, p->off[s] / 1000 % 1000);
		fputc('\n', out);
	}
}

void timerpath_json_late(struct timerpath *t, FILE *out, const struct late_path *p)
{
	char task[48];

	if (!t->fires)
		return;		/* the summary's timer_path record says it is not recorded */

	if (p->state == TP_NO_FIRE || p->state == TP_NO_ENTRY) {
		fprintf(out, ",\"timer_path\":{\"told\":false,\"why\":\"%s\"}",
			!t->fires ? "not_recorded" : p->state == TP_NO_FIRE ? "no_fire" : "no_entry");
		return;
	}
	fire_task(p, task, sizeof(task));
	fprintf(out, ",\"timer_path\":{\"told\":true,\"fire_cpu\":%d,\"fire_task\":", p->fire_cpu);
	vtrace_json_string(out, task);
	for (int s = 0; s < TP_SEGS; s++)
		fprintf(out, ",\"%s_ns\":%" PRIu64 ",\"%s_off_cpu_ns\":%" PRIu64, seg_key[s], p->seg[s],
			seg_key[s], p->off[s]);
	fprintf(out, ",\"guest_irq_told\":%s}", p->state == TP_NO_TICK ? "false" : "true");
}
