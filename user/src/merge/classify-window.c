// SPDX-License-Identifier: GPL-2.0
/* classify-window.c: a late wake-up's window walked on two CPUs, cut into causes. */
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

/* the slice of @r at @t: its index, or cl_oldest(r) - 1 (unknown: before the ring) */
static long slice_at(struct ring *r, uint64_t t)
{
	long i = (long)r->n - 1;

	while (i >= (long)cl_oldest(r) && cl_slice_at(r, i)->from > t)
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
	thr = cl_tick_of(c, hcpu)->quiet_ns;
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
	struct slice *hs = w->h && w->hi >= (long)cl_oldest(w->h) ? cl_slice_at(w->h, w->hi) : NULL;
	struct slice *gs = w->g && w->gi >= (long)cl_oldest(w->g) ? cl_slice_at(w->g, w->gi) : NULL;
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
	struct slice *s = cl_slice_at(w->h, w->hi);

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
	if (w->h && w->hi >= (long)cl_oldest(w->h))
		host_step(w);
	while (t < b) {
		uint64_t next = t < w->host_end && w->host_end < b ? w->host_end : b;

		if (w->h && w->hi + 1 < (long)w->h->n && cl_slice_at(w->h, w->hi + 1)->from < next)
			next = cl_slice_at(w->h, w->hi + 1)->from;
		if (w->g && w->gi + 1 < (long)w->g->n && cl_slice_at(w->g, w->gi + 1)->from < next)
			next = cl_slice_at(w->g, w->gi + 1)->from;
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
		while (w->h && w->hi + 1 < (long)w->h->n &&
		       cl_slice_at(w->h, w->hi + 1)->from <= t) {
			w->hi++;
			host_step(w);
		}
		while (w->g && w->gi + 1 < (long)w->g->n && cl_slice_at(w->g, w->gi + 1)->from <= t)
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
	struct vcpu_loc *l = tid > 0 ? cl_vcpu_loc(c, tid, false) : NULL;
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
	for (size_t i = r ? r->n : 0; r && i > cl_oldest(r); i--) {
		const struct slice *s = cl_slice_at(r, i - 1);

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
	struct vcpu_loc *l = tid > 0 ? cl_vcpu_loc(c, tid, false) : NULL;
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

	if (!r || i < (long)cl_oldest(r))
		return r && r->n > RING ? 0 : t;
	for (; i >= (long)cl_oldest(r); i--)
		if (cl_slice_at(r, i)->prev_pid >= 0)
			return cl_slice_at(r, i)->from;
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
		struct ring *h = cl_ring_of(c, c->host, p->hosts[k].cpu, false);
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
	w.g = cl_ring_of(c, mi, s->cpu, false);
	task_comm(w.g, pid, w.tcomm);
	if (c->host >= 0) {
		w.host_known = true;
		w.host_end = host_end(c);
		vcpu_path(c, vtid, expected, running, p);
		hcpu = p->nr_hosts ? p->hosts[0].cpu : -1;
	}
	p->host_cpu = hcpu;
	p->vcpu_tid = vtid;
	w.x = hcpu >= 0 ? cl_xring_of(c, vtid, false) : NULL;
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

			w.h = cl_ring_of(c, c->host, p->hosts[k].cpu, false);
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
