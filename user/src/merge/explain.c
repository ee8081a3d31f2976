// SPDX-License-Identifier: GPL-2.0
/* explain.c: --explain: guest wake-ups later than --threshold, and what the host ran meanwhile. */
/*
 * Two passes over the merged stream.  Pass 1 also feeds every event to
 * classify.c, which cuts each late wake-up's window into causes (the
 * summary); pass 2 runs once for each of the worst --worst wake-ups and
 * tells its story.
 *
 * Pass 1 (guests): for every task (or those matching --task, or --tid), each
 * wake-up's expected time and the time the task actually ran:
 *
 *   hrtimer_start(hrtimer, expires) by the task      the timer it sleeps on
 *   hrtimer_expire_entry(hrtimer, now)               expected = this event's
 *                                                    host time - (now - expires)
 *   sched_wakeup(pid)                                expected = its time, when
 *                                                    no timer of the task fired
 *   sched_switch(next_pid == pid)                    running: delay = running -
 *                                                    expected
 *
 * A timer that fires in the context of the task that armed it (the
 * hrtimer_expire_entry's pid is the task's) fired before the task slept: it
 * had armed it for a time already past (cyclictest, held between reading
 * the clock and clock_nanosleep() past its next period), or was held between
 * arming it and schedule().  hrtimer_wakeup() then clears the sleeper and
 * do_nanosleep() does not call schedule(): no sched_switch to the task
 * follows, it runs on when the interrupt returns.  The wake-up is over
 * there: running = the hrtimer_expire_entry's time.
 *
 * and keeps the worst.  With --task (and no --tid), the wake-ups of
 * real-time threads (kernel prio < 100 in the guest's sched_switch to the
 * thread, as it had it at that wake-up) are counted
 * apart from the others: when there are some, the summary and the stories
 * are theirs, and a line names the threads left out.  The priority of a
 * wake-up is the sched_switch's next_prio that ends it (a timer that fires
 * into the task: the thread's at its wake-up before).  cyclictest's main
 * thread (SCHED_OTHER, prio 120) only sleeps and prints: it is not what
 * its latencies measure; its measuring threads are SCHED_FIFO.
 *
 * Guest clock differences over a few milliseconds are
 * taken as host nanoseconds (the guest TSC runs at the host's rate, or at a
 * known ratio that changes these figures by parts per million).
 *
 * Pass 2 (host): the vCPU that guest CPU runs on is, through the APIC id
 * and the offsets file, vCPU index N of a QEMU process, whose thread QEMU
 * names "CPU N/KVM".  The host's sched_switch events tell on which host CPU
 * that thread was last switched in before the expected time, and which host
 * tasks ran on that CPU until the guest task ran.  The merged timeline of
 * the two CPUs over that window is printed with the explanation.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "merge-local.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

#define COMM_LEN	SW_COMM_LEN
#define MAX_SLICES	64	/* host tasks listed in a story; the causes count them all */
#define MAX_LINES	80

/* u64 -> fixed-size value, open addressing; key 0 is stored as any other */
struct umap {
	uint64_t	*keys;
	unsigned char	*used;
	char		*vals;
	size_t		vsize;
	size_t		size;
	size_t		nr;
};

static void *umap_get(struct umap *m, uint64_t key, bool create);

static int umap_grow(struct umap *m)
{
	struct umap n = { .vsize = m->vsize, .size = m->size ? m->size * 2 : 256 };

	n.keys = calloc(n.size, sizeof(*n.keys));
	n.used = calloc(n.size, 1);
	n.vals = calloc(n.size, n.vsize);
	if (!n.keys || !n.used || !n.vals) {
		free(n.keys);
		free(n.used);
		free(n.vals);
		return -1;
	}
	for (size_t i = 0; i < m->size; i++)
		if (m->used[i])
			memcpy(umap_get(&n, m->keys[i], true), m->vals + i * m->vsize, m->vsize);
	free(m->keys);
	free(m->used);
	free(m->vals);
	*m = n;
	return 0;
}

static void *umap_get(struct umap *m, uint64_t key, bool create)
{
	size_t i;

	if (create && (m->nr + 1) * 2 > m->size && umap_grow(m))
		return NULL;
	if (!m->size)
		return NULL;
	for (i = (key * 0x9e3779b97f4a7c15ULL) >> 32; ; i++) {
		size_t k = i & (m->size - 1);

		if (m->used[k] && m->keys[k] == key)
			return m->vals + k * m->vsize;
		if (!m->used[k]) {
			if (!create)
				return NULL;
			m->used[k] = 1;
			m->keys[k] = key;
			m->nr++;
			memset(m->vals + k * m->vsize, 0, m->vsize);
			return m->vals + k * m->vsize;
		}
	}
}

static void umap_free(struct umap *m)
{
	free(m->keys);
	free(m->used);
	free(m->vals);
}

/* Event ids and fields of one machine, looked up once */
struct ev_fields {
	bool			native;		/* the trace's byte order is ours */
	int			wakeup_id, waking_id, start_id, entry_id, exit_id;
	struct tep_format_field	*wake_pid, *wake_comm, *waking_pid, *waking_comm;
	struct tep_format_field	*start_timer, *start_expires, *start_function;
	struct tep_format_field	*entry_timer, *entry_now;
};

struct timer_val {
	int64_t		expires;
	int		pid;
	uint64_t	function;	/* its hrtimer_start's */
};

/*
 * A machine whose kallsyms do not name hrtimer_wakeup (a guest that sends
 * them without addresses): which hrtimer function is the sleepers', learned
 * from the expiries that wake the task that armed the timer (an
 * hrtimer_sleeper's does, the tick's does not).  Each CPU's expiry in
 * progress, and the functions seen waking their timer's task.
 */
#define LEARN_FUNCS	8
struct learn {
	int		nr_cpus;
	struct {
		uint64_t	function;
		int		pid;	/* the timer's task, 0: no expiry in progress */
	}		*open;
	uint64_t	function[LEARN_FUNCS];
	uint64_t	wakes[LEARN_FUNCS];
};

struct pending {
	uint64_t	expected;
	uint64_t	irq;
	uint64_t	woken;
	int64_t		late;
	int		by_timer;
	int		self;		/* the timer fired into the task: it had not slept */
};

/*
 * A guest thread: its priority, its wake-ups per group (real-time or not).
 * Priorities are kept + PRIO_KNOWN, 0: not known (a deadline task's is -1).
 */
#define PRIO_KNOWN	1000
#define PRIO_NONE	INT_MIN		/* task_ran(): no priority (as struct sched_switch says) */
struct thread {
	int		prio;		/* at its last wake-up */
	int		at[2];		/* at its last wake-up of each group */
	uint64_t	wakeups[2];
};

/* the worst late wake-ups of a group */
struct worst {
	struct late	*l;		/* most delay first once sorted */
	int		nr;
	bool		sorted;
};

/* one late wake-up kept for its story */
struct late {
	int			gmi;
	int			gcpu;
	int			pid;
	char			comm[COMM_LEN + 1];
	struct pending		p;
	uint64_t		running;
	uint64_t		delay;
	uint64_t		seq;		/* the order found: ties stay in it */
	struct late_parts	parts;
	struct late_path	path;		/* timerpath.c's */
};

struct explain {
	const struct merge_opts	*opts;
	const char		*task;
	char			*what;		/* the tasks selected, in words */
	bool			by_prio;	/* --task without --tid: group 1 real-time */
	int			sel;		/* the group explained */
	struct classify		*cl;
	struct timerpath	*tp;
	struct worst		worst_of[2];	/* per group */
	struct late		*top;		/* the selected group's, sorted */
	int			nr_top;
	uint64_t		nr_late;
	struct umap		threads;	/* (machine, pid) -> struct thread */
	/* pass 1 */
	struct umap		comms;		/* (machine, pid) -> comm */
	struct umap		timers;		/* (machine, hrtimer) -> struct timer_val */
	struct learn		*learn;		/* per machine */
	struct umap		pending;	/* (machine, pid) -> struct pending */
	bool			found;
	struct machine		*gm;		/* the worst: guest machine, its index */
	int			gmi;
	int			gcpu;
	int			pid;
	char			comm[COMM_LEN + 1];
	struct pending		worst;
	uint64_t		running;
	uint64_t		delay;
	uint64_t		wakeups[2];	/* per group */
	const struct late_parts	*parts;		/* the story's */
	const struct late_path	*path;
	int			rank;
	/* pass 2 */
	char			vcpu_comm[32];
	int			vcpu_idx;
	int			qemu_pid;
	uint32_t		apic_id;
	int			vcpu_tid;
	int			host_cpu;	/* the vCPU thread's (at the expected time, then
						   each cpu it is switched in on up to running) */
	int			first_cpu;	/* its host cpu at the expected time */
	int			moves;		/* host cpus it moved to in the window */
	bool			crossed;
	int			cur_pid[1024];
	char			cur_comm[1024][COMM_LEN + 1];
	uint64_t		cur_since[1024];
	struct {
		uint64_t	from;
		int		pid;
		int		cpu;	/* the host cpu */
		char		comm[COMM_LEN + 1];
	}			slices[MAX_SLICES];
	int			nr_slices;
	int			more_slices;	/* past MAX_SLICES, from slices_cut on */
	uint64_t		slices_cut;
	FILE			*timeline;
	struct merge_opts	story_opts;	/* pass 2's: text, for the timeline */
	bool			have_host;
	char			*timeline_buf;
	size_t			timeline_len;
	struct output		*out;
	int			lines;
	int			more_lines;
	struct ev_fields	*fields;	/* per machine index */
	struct machine		**machines;
	int			nr;
};

static void lookup_fields(struct ev_fields *f, struct tep_handle *tep)
{
	struct tep_event *ev;

	f->native = tep_is_file_bigendian(tep) == tep_is_local_bigendian(tep);
	f->wakeup_id = vtrace_event_id(tep, "sched", "sched_wakeup", &ev);
	f->wake_pid = vtrace_event_field(ev, "pid");
	f->wake_comm = vtrace_event_field(ev, "comm");
	f->waking_id = vtrace_event_id(tep, "sched", "sched_waking", &ev);
	f->waking_pid = vtrace_event_field(ev, "pid");
	f->waking_comm = vtrace_event_field(ev, "comm");
	f->start_id = vtrace_event_id(tep, "timer", "hrtimer_start", &ev);
	f->start_timer = vtrace_event_field(ev, "hrtimer");
	f->start_expires = vtrace_event_field(ev, "expires");
	f->start_function = vtrace_event_field(ev, "function");
	f->entry_id = vtrace_event_id(tep, "timer", "hrtimer_expire_entry", &ev);
	f->entry_timer = vtrace_event_field(ev, "hrtimer");
	f->entry_now = vtrace_event_field(ev, "now");
	f->exit_id = vtrace_event_id(tep, "timer", "hrtimer_expire_exit", &ev);
}

static int64_t num(const struct ev_fields *f, struct tep_format_field *field,
		   const struct tep_record *rec)
{
	return vtrace_field_num(f->native, field, rec);
}

static void str(struct tep_format_field *f, const struct tep_record *rec, char *buf)
{
	buf[0] = '\0';
	if (!f || f->offset + f->size > rec->size)
		return;
	/* every sched_switch comes here twice: no snprintf() */
	memcpy(buf, (const char *)rec->data + f->offset, f->size < COMM_LEN ? f->size : COMM_LEN);
	buf[f->size < COMM_LEN ? f->size : COMM_LEN] = '\0';
}

/* The function that woke its timer's task most often so far, 0: none yet */
static uint64_t learned_sleeper(const struct learn *l)
{
	uint64_t best = 0, most = 0;

	for (int i = 0; i < LEARN_FUNCS; i++) {
		if (l->wakes[i] > most) {
			most = l->wakes[i];
			best = l->function[i];
		}
	}
	return best;
}

/*
 * A task sleeping on a timer (nanosleep, clock_nanosleep: cyclictest) uses
 * an hrtimer_sleeper whose function is hrtimer_wakeup.  Without kallsyms
 * that name it, the function learned from the expiries that woke their
 * timer's task; until one did, every timer counts.
 */
static bool sleeper_timer(struct tep_handle *tep, const struct learn *l, uint64_t function)
{
	const char *name = tep_find_function(tep, function);
	uint64_t learned;

	if (name && !strcmp(name, "hrtimer_wakeup"))
		return true;
	if (name && tep_find_function_address(tep, function) == function)
		return false;		/* named, and not hrtimer_wakeup */
	learned = learned_sleeper(l);
	return !learned || learned == function;
}

/* A wake-up of @pid on @cpu: in an expiry of @pid's own timer, its function is a sleeper's */
static void learn_wakeup(struct learn *l, int cpu, int pid)
{
	int i;

	if (cpu < 0 || cpu >= l->nr_cpus || !l->open || !l->open[cpu].pid ||
	    l->open[cpu].pid != pid)
		return;
	for (i = 0; i < LEARN_FUNCS; i++) {
		if (l->function[i] == l->open[cpu].function || !l->wakes[i]) {
			l->function[i] = l->open[cpu].function;
			l->wakes[i]++;
			break;
		}
	}
	l->open[cpu].pid = 0;
}

static uint64_t key(int mi, uint64_t v)
{
	return v * 64 + mi;
}

static void learn_comm(struct explain *x, int mi, int pid, const char *comm)
{
	struct tep_handle *tep = x->machines[mi]->tep;
	char *c;

	if (pid <= 0 || !comm[0])
		return;
	/* pass 2's timeline then names tasks the saved_cmdlines did not know */
	if (x->out && !tep_is_pid_registered(tep, pid))
		tep_register_comm(tep, comm, pid);
	c = umap_get(&x->comms, key(mi, pid), true);
	if (c && strcmp(c, comm))
		snprintf(c, COMM_LEN + 1, "%s", comm);
}

static const char *comm_of(struct explain *x, int mi, int pid)
{
	const char *c = umap_get(&x->comms, key(mi, pid), false);

	if (c)
		return c;
	c = tep_data_comm_from_pid(x->machines[mi]->tep, pid);
	return c ? c : "<...>";
}

static bool task_wanted(struct explain *x, int mi, int pid)
{
	bool tid = !x->opts->nr_tids;

	for (int i = 0; i < x->opts->nr_tids && !tid; i++)
		tid = x->opts->tids[i] == pid;
	return pid > 0 && tid && (!x->task || !fnmatch(x->task, comm_of(x, mi, pid), 0));
}

static int late_cmp(const void *a, const void *b)
{
	const struct late *l = a, *r = b;

	if (l->delay != r->delay)
		return l->delay < r->delay ? 1 : -1;
	return l->seq < r->seq ? -1 : l->seq > r->seq;
}

static void top_sort(struct worst *w)
{
	if (!w->sorted)
		qsort(w->l, w->nr, sizeof(*w->l), late_cmp);
	w->sorted = true;
}

/*
 * A late wake-up: among the worst --worst?  Until --worst are kept they
 * are kept as found and sorted once (--explain --format perfetto keeps
 * 100000: one insertion each into a sorted array was quadratic).
 */
static void keep_late(struct explain *x, struct worst *w, struct late *l)
{
	int n = w->nr, i;

	l->seq = x->nr_late++;
	if (n < x->opts->worst) {
		w->l[w->nr++] = *l;
		w->sorted = false;
		return;
	}
	top_sort(w);
	if (!n || w->l[n - 1].delay >= l->delay)
		return;
	for (i = n - 1; i > 0 && w->l[i - 1].delay < l->delay; i--)
		w->l[i] = w->l[i - 1];
	w->l[i] = *l;
}

/* @pid runs at @ns with priority @prio (sched_switch's next_prio, or PRIO_NONE) */
static void task_ran(struct explain *x, struct source *s, int mi, int pid, uint64_t ns, int prio)
{
	struct pending *p = umap_get(&x->pending, key(mi, pid), false);
	struct thread *t;
	struct late l;
	int g = 0;

	if (!p || !p->expected)
		return;
	t = x->by_prio ? umap_get(&x->threads, key(mi, pid), true) : NULL;
	if (t) {
		/* real-time: kernel prio 0..99 (SCHED_FIFO/RR 99..1); not known: as before */
		t->prio = prio != PRIO_NONE ? prio + PRIO_KNOWN : t->prio;
		g = t->prio && t->prio - PRIO_KNOWN < 100;
		t->wakeups[g]++;
		t->at[g] = t->prio;
	}
	x->wakeups[g]++;
	if (ns >= p->expected && ns - p->expected > x->opts->threshold_ns) {
		l.gmi = mi;
		l.gcpu = s->cpu;
		l.pid = pid;
		snprintf(l.comm, sizeof(l.comm), "%s", comm_of(x, mi, pid));
		l.p = *p;
		l.running = ns;
		l.delay = ns - p->expected;
		timerpath_wakeup(x->tp, mi, s->cpu, vtrace_vcpu_fit_tid(s->fit), g, p->expected, ns,
				 &l.path);
		classify_wakeup(x->cl, s, mi, pid, vtrace_vcpu_fit_tid(s->fit), g, p->expected, ns,
				&l.path, &l.parts);
		keep_late(x, &x->worst_of[g], &l);
	}
	memset(p, 0, sizeof(*p));
}

/*
 * @pid leaves its CPU: what was pending for it happened while it ran (a
 * sched_wakeup of a running task, ttwu_runnable: no sched_switch to it
 * follows) and is no wake-up of its next wait, which starts now
 */
static void task_left(struct explain *x, int mi, int pid)
{
	struct pending *p = umap_get(&x->pending, key(mi, pid), false);

	if (p)
		memset(p, 0, sizeof(*p));
}

static void pass1_event(struct explain *x, struct source *s, int mi, uint64_t ns)
{
	struct ev_fields *f = &x->fields[mi];
	const struct tep_record *rec = s->rec;
	int id = tep_data_type(s->m->tep, s->rec);
	char comm[COMM_LEN + 1];

	if (s->sw) {
		learn_comm(x, mi, s->sw->prev_pid, s->sw->prev_comm);
		task_left(x, mi, s->sw->prev_pid);
		learn_comm(x, mi, s->sw->next_pid, s->sw->next_comm);
		task_ran(x, s, mi, s->sw->next_pid, ns, s->sw->next_prio);
	} else if (id == f->wakeup_id || id == f->waking_id) {
		bool wakeup = id == f->wakeup_id;
		int pid = num(f, wakeup ? f->wake_pid : f->waking_pid, rec);
		struct pending *p;

		str(wakeup ? f->wake_comm : f->waking_comm, rec, comm);
		learn_comm(x, mi, pid, comm);
		learn_wakeup(&x->learn[mi], s->cpu, pid);
		/* a task woken in its own context is running: no sched_switch to it follows */
		if (!task_wanted(x, mi, pid) || pid == tep_data_pid(s->m->tep, s->rec))
			return;
		p = umap_get(&x->pending, key(mi, pid), true);
		if (p && !p->expected)
			p->expected = ns;
		if (p && !p->woken)
			p->woken = ns;
	} else if (id == f->start_id) {
		uint64_t timer = num(f, f->start_timer, rec);
		struct timer_val *t;

		/* only sleepers' timers: the tick and others also start in a task's context */
		if (!sleeper_timer(s->m->tep, &x->learn[mi], num(f, f->start_function, rec))) {
			t = umap_get(&x->timers, key(mi, timer), false);
			if (t)
				t->pid = 0;
			return;
		}
		t = umap_get(&x->timers, key(mi, timer), true);
		if (t) {
			t->expires = num(f, f->start_expires, rec);
			t->pid = tep_data_pid(s->m->tep, s->rec);
			t->function = num(f, f->start_function, rec);
		}
	} else if (id == f->entry_id) {
		struct timer_val *t = umap_get(&x->timers, key(mi, num(f, f->entry_timer, rec)), false);
		struct learn *l = &x->learn[mi];
		struct pending *p;
		uint64_t late;
		int64_t now;

		if (t && t->pid && s->cpu >= 0 && s->cpu < l->nr_cpus && l->open)
			l->open[s->cpu] = (typeof(*l->open)){ t->function, t->pid };
		/* a timer armed before its function was learned not a sleeper's */
		if (!t || !t->pid || !task_wanted(x, mi, t->pid) ||
		    !sleeper_timer(s->m->tep, l, t->function))
			return;
		/* the guest's s64s: their difference may not fit one (signed overflow) */
		now = num(f, f->entry_now, rec);
		late = now > t->expires ? (uint64_t)now - (uint64_t)t->expires : 0;
		if (late > INT64_MAX)
			late = INT64_MAX;
		p = umap_get(&x->pending, key(mi, t->pid), true);
		if (!p)
			return;
		p->expected = ns > late ? ns - late : 0;
		p->irq = ns;
		p->late = late;
		p->by_timer = 1;
		p->woken = 0;
		p->self = tep_data_pid(s->m->tep, s->rec) == t->pid;
		if (p->self)
			task_ran(x, s, mi, t->pid, ns, PRIO_NONE);	/* its last known */
	} else if (id == f->exit_id) {
		struct learn *l = &x->learn[mi];

		if (s->cpu >= 0 && s->cpu < l->nr_cpus && l->open)
			l->open[s->cpu].pid = 0;
	}
}

static int machine_index(struct explain *x, struct machine *m)
{
	for (int i = 0; i < x->nr; i++)
		if (x->machines[i] == m)
			return i;
	return 0;
}

static bool explain_event(void *priv, struct source *s, uint64_t ns)
{
	struct explain *x = priv;
	int mi = machine_index(x, s->m);

	classify_event(x->cl, s, mi, ns);
	timerpath_event(x->tp, s, mi, ns);
	if (s->m->guest)
		pass1_event(x, s, mi, ns);
	return false;
}

/* ---- pass 2: the host */

static void note_slice(struct explain *x, uint64_t from, int pid, const char *comm)
{
	if (x->nr_slices == MAX_SLICES) {
		if (!x->more_slices++)
			x->slices_cut = from;
		return;
	}
	x->slices[x->nr_slices].from = from;
	x->slices[x->nr_slices].pid = pid;
	x->slices[x->nr_slices].cpu = x->host_cpu;
	memmove(x->slices[x->nr_slices].comm, comm, strnlen(comm, COMM_LEN));
	x->slices[x->nr_slices].comm[strnlen(comm, COMM_LEN)] = '\0';
	x->nr_slices++;
}

static void host_switch(struct explain *x, struct source *s, int mi, uint64_t ns)
{
	const char *next = s->sw->next_comm;
	int cpu = s->cpu, pid = s->sw->next_pid;

	if (cpu < 0 || cpu >= 1024)
		return;
	learn_comm(x, mi, pid, next);
	if (pid == x->vcpu_tid && !x->crossed)
		x->host_cpu = x->first_cpu = cpu;
	/* the vCPU thread moves to another host cpu in the window: the story follows it */
	if (pid == x->vcpu_tid && x->crossed && cpu != x->host_cpu && ns <= x->running) {
		x->host_cpu = cpu;
		x->moves++;
	}
	x->cur_pid[cpu] = pid;
	snprintf(x->cur_comm[cpu], COMM_LEN + 1, "%s", next);
	x->cur_since[cpu] = ns;
	if (x->crossed && cpu == x->host_cpu && ns <= x->running)
		note_slice(x, ns, pid, next);
}

static void timeline_line(struct explain *x, struct source *s, uint64_t ns)
{
	if (x->lines >= MAX_LINES) {
		x->more_lines++;
		return;
	}
	output_event(x->out, s, ns);
	x->lines++;
}

static bool story_event(void *priv, struct source *s, uint64_t ns)
{
	struct explain *x = priv;
	int mi = machine_index(x, s->m);

	if (!x->crossed && ns >= x->worst.expected) {
		x->crossed = true;
		if (x->host_cpu >= 0)
			note_slice(x, x->cur_since[x->host_cpu], x->cur_pid[x->host_cpu],
				   x->cur_comm[x->host_cpu]);
	}
	if (!s->m->guest && s->sw)
		host_switch(x, s, mi, ns);
	if (!x->crossed || ns > x->running + 200000)
		return false;
	if ((s->m == x->gm && s->cpu == x->gcpu) ||
	    (!s->m->guest && x->host_cpu >= 0 && s->cpu == x->host_cpu))
		timeline_line(x, s, ns);
	return false;
}

static void find_vcpu(struct explain *x)
{
	const struct vtrace_cpu_info *ci = vtrace_dump_cpu(x->gm->dump, x->gcpu);
	const struct vtrace_vcpu_history *h = x->gm->cpus[x->gcpu].map.hist;

	x->apic_id = ci ? ci->apic_id : 0;
	x->qemu_pid = x->gm->pid;
	x->vcpu_idx = h ? h->vcpu_idx : -1;
	snprintf(x->vcpu_comm, sizeof(x->vcpu_comm), "CPU %d/KVM", x->vcpu_idx);
}

static void print_ns(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

static void print_ms(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64 " ms", ns / 1000000, ns % 1000000 / 1000);
}

static void print_guest_side(struct explain *x, FILE *out)
{
	const struct pending *w = &x->worst;

	if (x->rank)
		fprintf(out, "Wake-up #%d by delay of %s in guest %s: ", x->rank + 1,
			x->what ? x->what : "a guest task", x->gm->name);
	else
		fprintf(out, "Worst wake-up of %s in guest %s: ", x->what ? x->what : "a guest task",
			x->gm->name);
	print_ms(out, x->delay);
	fprintf(out, "\n  task       %s (pid %d) on guest cpu %d\n", x->comm, x->pid, x->gcpu);
	fputs("  expected   ", out);
	print_ns(out, w->expected);
	fputs(w->by_timer ? "  timer expiry (hrtimer_start by the task)\n" :
	      "  sched_wakeup (no timer of the task seen)\n", out);
	if (w->by_timer) {
		fputs("  timer irq  ", out);
		print_ns(out, w->irq);
		fputs("  hrtimer_expire_entry, ", out);
		print_ms(out, w->late);
		fputs(" late\n", out);
	}
	if (w->woken && w->by_timer) {
		fputs("  woken      ", out);
		print_ns(out, w->woken);
		fputs("  sched_wakeup\n", out);
	}
	fputs("  running    ", out);
	print_ns(out, x->running);
	fputs(w->self ? "  the timer fired into the task: it had not slept (no sched_switch)\n\n" :
	      "  sched_switch to the task\n\n", out);
}

/* The window's causes, from classify.c, largest first */
static void print_causes(struct explain *x, FILE *out)
{
	char text[80];

	fputs("Causes:", out);
	for (int i = 0; i < x->parts->nr; i++) {
		classify_cause_text(x->cl, x->parts->part[i].cause, text, sizeof(text));
		fprintf(out, "%s %s ", i ? ";" : "", text);
		print_ms(out, x->parts->part[i].ns);
	}
	fputs(".\n", out);
	classify_print_modes(x->cl, out, x->parts);
	timerpath_print_late(x->tp, out, x->path);
}

/* Of @x's parts, those of host tasks other than the main cause's, ns */
static uint64_t other_host_tasks(struct explain *x)
{
	uint64_t ns = 0;
	const char *task;

	for (int i = 1; i < x->parts->nr; i++)
		if (!strcmp(classify_cause_key(x->cl, x->parts->part[i].cause, &task), "host_task"))
			ns += x->parts->part[i].ns;
	return ns;
}

/* The one-line answer: what took most of the delay (classify.c's main cause). */
static void print_verdict(struct explain *x, FILE *out)
{
	const struct late_part *m = &x->parts->part[0];
	const char *task;
	char text[80];
	int pid = -1;

	fputs("Verdict: ", out);
	if (!x->parts->nr) {
		fputs("nothing recorded explains it.\n\n", out);
		return;
	}
	classify_cause_text(x->cl, m->cause, text, sizeof(text));
	if (!strcmp(classify_cause_key(x->cl, m->cause, &task), "events_lost")) {
		fprintf(out, "not told apart: the trace lost events where this window rests (%s),"
			" so no cause is named for its ", task);
		print_ms(out, x->delay);
		fputs(".\n\n", out);
		return;
	}
	if (!strcmp(classify_cause_key(x->cl, m->cause, &task), "host_task")) {
		int cpu = x->first_cpu;

		for (int i = 0; i < x->nr_slices && pid < 0; i++)
			if (!strcmp(x->slices[i].comm, task)) {
				pid = x->slices[i].pid;
				cpu = x->slices[i].cpu;
			}
		fprintf(out, "host task %s (pid %d) took host cpu %d from the vCPU for ", task, pid,
			cpu);
		print_ms(out, m->ns);
		if (other_host_tasks(x)) {
			fputs(" (other host tasks ", out);
			print_ms(out, other_host_tasks(x));
			fputs(" more)", out);
		}
		fputs(".\n\n", out);
		return;
	}
	fprintf(out, "%s took the most of it: ", text);
	print_ms(out, m->ns);
	fputs(" of the ", out);
	print_ms(out, x->delay);
	fputs(".\n\n", out);
}

/*
 * The vCPU thread's name: the host's sched_switch name of it in the window
 * ("CPU 1/KVM"; QEMU's own name on a command line without debug-threads=on,
 * where the self-check told the thread by its kvm_entry events), else the
 * name QEMU gives it with debug-threads=on
 */
static const char *vcpu_name(const struct explain *x)
{
	for (int i = 0; x->vcpu_tid > 0 && i < x->nr_slices; i++)
		if (x->slices[i].pid == x->vcpu_tid && x->slices[i].comm[0])
			return x->slices[i].comm;
	return x->vcpu_comm;
}

static void print_host_side(struct explain *x, FILE *out, bool have_host)
{
	uint64_t ran = 0, other = 0, idle = 0;

	/* before what the trace kept is listed: it may not be what ran */
	classify_print_lost(out, x->parts, x->machines);
	if (!have_host) {
		fputs("No host trace given (--host): what the host ran is unknown.\n", out);
		print_causes(x, out);
		print_verdict(x, out);
		return;
	}
	fprintf(out, "Guest cpu %d is vCPU %d (APIC id %u) of QEMU pid %d, host thread \"%s\"",
		x->gcpu, x->vcpu_idx, x->apic_id, x->qemu_pid, vcpu_name(x));
	if (x->host_cpu < 0 && x->vcpu_tid < 0) {
		fputs(": which host thread it is was not told apart (none of that name in the"
		      " host's sched_switch events, or several VMs' threads of that name fit the"
		      " guest's events as well: see the self-check's line of this guest cpu).\n",
		      out);
		print_causes(x, out);
		print_verdict(x, out);
		return;
	}
	if (x->host_cpu < 0) {
		fprintf(out, " (tid %d): not seen in the host's sched_switch events before the"
			" expected time.\n", x->vcpu_tid);
		print_causes(x, out);
		print_verdict(x, out);
		return;
	}
	fprintf(out, " (tid %d), on host cpu %d.\n", x->vcpu_tid, x->first_cpu);
	if (x->moves)
		fprintf(out, "Its host cpus from expected to running (the vCPU thread moved %d time%s)",
			x->moves, x->moves > 1 ? "s" : "");
	else
		fprintf(out, "Host cpu %d from expected to running", x->host_cpu);
	fprintf(out, "%s:\n", x->parts->nr_lost ? ", as the trace kept it (events lost: above)" :
		"");
	for (int i = 0; i < x->nr_slices; i++) {
		uint64_t from = x->slices[i].from < x->worst.expected ? x->worst.expected :
				x->slices[i].from;
		uint64_t to = i + 1 < x->nr_slices ? x->slices[i + 1].from :
			      x->more_slices ? x->slices_cut : x->running;
		bool vcpu = x->slices[i].pid == x->vcpu_tid;

		if (i && x->slices[i].cpu != x->slices[i - 1].cpu)
			fprintf(out, "  the vCPU thread is switched in on host cpu %d:\n",
				x->slices[i].cpu);
		fputs("  ", out);
		print_ns(out, from);
		fputs(" .. ", out);
		print_ns(out, to);
		fputs("  ", out);
		print_ms(out, to > from ? to - from : 0);
		fprintf(out, "  %s (pid %d)%s\n", x->slices[i].comm, x->slices[i].pid,
			vcpu ? "  the vCPU" : x->slices[i].pid ? "  <- ran instead of the vCPU" :
			"  idle");
		if (vcpu) {
			ran += to > from ? to - from : 0;
		} else if (x->slices[i].pid) {
			other += to > from ? to - from : 0;
		} else {
			idle += to > from ? to - from : 0;
		}
	}
	if (x->more_slices) {
		fprintf(out, "  ... %d more changes of task from ", x->more_slices);
		print_ns(out, x->slices_cut);
		fputs(" to running (--from/--to to see them; the causes below count them all)\n", out);
		fputs("Of the delay until ", out);
		print_ns(out, x->slices_cut);
		fputs(", ", out);
	} else {
		fputs("Of the delay, ", out);
	}
	if (x->moves)
		fputs("the vCPU thread's host cpus ran other tasks ", out);
	else
		fprintf(out, "host cpu %d ran other tasks ", x->host_cpu);
	print_ms(out, other);
	fputs(", the vCPU ", out);
	print_ms(out, ran);
	fputs(", nothing ", out);
	print_ms(out, idle);
	fputs(".\n", out);
	print_causes(x, out);
	print_verdict(x, out);
}

/**
 * explain_parse_duration - "100us", "0.5ms", "2ms", "1s", "500ns"; a bare number is us
 */
int explain_parse_duration(const char *arg, uint64_t *ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e3 },
	};
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || v < 0 || v > 1e6)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			*ns = (uint64_t)(v * units[i].ns + 0.5);
			return 0;
		}
	}
	return -1;
}

static void print_late_jsonl(struct explain *x, FILE *out, const struct late *l, int rank)
{
	const char *task, *key;

	fprintf(out, "{\"type\":\"late\",\"rank\":%d,\"guest\":\"", rank + 1);
	vtrace_json_chars(out, x->machines[l->gmi]->name);
	fprintf(out, "\",\"cpu\":%d,\"pid\":%d,\"comm\":\"", l->gcpu, l->pid);
	vtrace_json_chars(out, l->comm);
	fprintf(out, "\",\"expected_ns\":%" PRIu64 ",\"running_ns\":%" PRIu64 ",\"delay_ns\":%"
		PRIu64 ",\"host_cpu\":%d,\"parts\":[", l->p.expected, l->running, l->delay,
		l->parts.host_cpu);
	for (int i = 0; i < l->parts.nr; i++) {
		key = classify_cause_key(x->cl, l->parts.part[i].cause, &task);
		fprintf(out, "%s{\"cause\":\"%s\",\"task\":\"", i ? "," : "", key);
		vtrace_json_chars(out, task);
		fprintf(out, "\",\"ns\":%" PRIu64 "}", l->parts.part[i].ns);
	}
	fputs("]", out);
	/* the vCPU thread moved to other host cpus in the window: each, from when */
	if (l->parts.nr_hosts > 1) {
		fputs(",\"moves\":[", out);
		for (int i = 1; i < l->parts.nr_hosts; i++)
			fprintf(out, "%s{\"host_cpu\":%d,\"ns\":%" PRIu64 "}", i > 1 ? "," : "",
				l->parts.hosts[i].cpu, l->parts.hosts[i].from);
		fputs("]", out);
	}
	if (l->parts.nr_lost) {
		fputs(",\"lost\":[", out);
		classify_json_lost(out, &l->parts, x->machines);
		fputs("]", out);
	}
	if (l->parts.exits) {
		fprintf(out, ",\"vcpu_tid\":%d,\"modes\":[", l->parts.vcpu_tid);
		classify_json_modes(x->cl, out, &l->parts);
		fputs("]", out);
	}
	timerpath_json_late(x->tp, out, &l->path);
	fputs("}\n", out);
}

/* The host time (ns, or TSC without a rate) where @h's first recorded interval starts */
static uint64_t history_from(const struct explain *x, const struct vtrace_vcpu_history *h)
{
	uint64_t tsc = vtrace_tsc_history_first(h)->host_tsc;

	return x->opts->khz ? vtrace_tsc_to_ns(tsc, x->opts->khz) : tsc;
}

static void history_json(const struct explain *x, FILE *out, const struct machine *m, int cpu)
{
	const struct vtrace_vcpu_history *h = m->cpus[cpu].map.hist;
	const char *key;

	vtrace_history_start(h, x->opts->offsets_in_trace, &key);
	fputs("{\"type\":\"offset_history\",\"guest\":\"", out);
	vtrace_json_chars(out, m->name);
	fprintf(out, "\",\"cpu\":%d,\"pid\":%d,\"start\":\"%s\",\"from_ns\":%" PRIu64
		",\"source\":\"", cpu, m->pid, key, history_from(x, h));
	vtrace_json_chars(out, x->opts->offsets_src);
	fputs("\"}\n", out);
}

/* One line for the VM when its vCPUs' histories start alike, else one per vCPU */
static void history_lines(const struct explain *x, FILE *out, const struct machine *m)
{
	const char *key, *first = NULL;
	uint64_t from = UINT64_MAX;
	bool same = true;
	int n = 0;

	for (int c = 0; c < m->nr_cpus; c++) {
		const struct vtrace_vcpu_history *h = m->cpus[c].map.hist;
		const char *text;

		if (!h)
			continue;
		text = vtrace_history_start(h, x->opts->offsets_in_trace, &key);
		same &= !first || text == first;
		first = first ? first : text;
		from = history_from(x, h) < from ? history_from(x, h) : from;
		n++;
	}
	if (first && same) {
		fprintf(out, "  guest %s (pid %d, %d vCPU%s): from ", m->name, m->pid, n,
			n == 1 ? "" : "s");
		print_ns(out, from);
		fprintf(out, ", %s\n", first);
		return;
	}
	for (int c = 0; first && c < m->nr_cpus; c++) {
		const struct vtrace_vcpu_history *h = m->cpus[c].map.hist;

		if (!h)
			continue;
		fprintf(out, "  guest %s cpu %d (pid %d): from ", m->name, c, m->pid);
		print_ns(out, history_from(x, h));
		fprintf(out, ", %s\n", vtrace_history_start(h, x->opts->offsets_in_trace, &key));
	}
}

/*
 * Where each guest's offset history starts, so that a reader knows what the
 * times of its earliest events rest on: the snapshot taken when the
 * recording began, the VM's creation during the recording, or an offsets
 * file (text: a line per VM, per vCPU where they differ; jsonl: an object
 * per guest CPU).
 */
static void print_history_starts(const struct explain *x, FILE *out, bool jsonl)
{
	if (!jsonl)
		fprintf(out, "\nOffset histories (%s), what the guests' earliest times rest on:\n",
			x->opts->offsets_src ? x->opts->offsets_src : "none");
	for (int i = 0; i < x->nr; i++) {
		const struct machine *m = x->machines[i];

		if (!m->guest)
			continue;
		if (m->has_offset && !jsonl)
			fprintf(out, "  guest %s: offset=%" PRId64 " given: a constant offset, no"
				" history\n", m->name, m->offset);
		for (int c = 0; !m->has_offset && jsonl && c < m->nr_cpus; c++)
			if (m->cpus[c].map.hist)
				history_json(x, out, m, c);
		if (!m->has_offset && !jsonl)
			history_lines(x, out, m);
	}
}

/* a thread that woke, for the selection's line */
struct woke {
	int		mi;
	int		pid;
	struct thread	*t;
};

static int woke_cmp(const void *a, const void *b)
{
	const struct woke *l = a, *r = b;

	if (l->mi != r->mi)
		return l->mi - r->mi;
	return l->pid - r->pid;
}

/* the threads that woke (--task, no --tid), by guest and tid; their number */
static int threads_woke(struct explain *x, struct woke **list)
{
	struct umap *m = &x->threads;
	int n = 0;

	*list = calloc(m->nr + 1, sizeof(**list));
	for (size_t i = 0; *list && i < m->size; i++) {
		struct thread *t = (struct thread *)(m->vals + i * m->vsize);

		if (!m->used[i] || !(t->wakeups[0] + t->wakeups[1]))
			continue;
		(*list)[n++] = (struct woke){ m->keys[i] % 64, m->keys[i] / 64, t };
	}
	if (*list)
		qsort(*list, n, sizeof(**list), woke_cmp);
	return *list ? n : -1;
}

static int nr_guests(const struct explain *x)
{
	int n = 0;

	for (int i = 0; i < x->nr; i++)
		n += x->machines[i]->guest;
	return n;
}

static void print_tid(struct explain *x, FILE *out, const struct woke *w, bool guest)
{
	fputs(guest ? "" : "tid ", out);
	if (guest)
		fprintf(out, "%s:", x->machines[w->mi]->name);
	fprintf(out, "%d", w->pid);
}

/*
 * The line that says which threads the real-time rule left out:
 * "Threads of cyclictest: 3 woke; explained: the real-time ones, tid 159
 * (prio 19), tid 160 (prio 19); left out: tid 129 (prio 120, 412 wake-ups);
 * all of them: --tid 129,159,160"
 */
static void print_selection(struct explain *x, FILE *out, const struct woke *w, int n)
{
	bool guest = nr_guests(x) > 1, any = false;

	fprintf(out, "Threads of %s: %d woke; explained: the real-time ones, ", x->task, n);
	for (int i = 0, k = 0; i < n; i++) {
		if (!w[i].t->wakeups[1])
			continue;
		fputs(k++ ? ", " : "", out);
		print_tid(x, out, &w[i], guest);
		fprintf(out, " (prio %d)", w[i].t->at[1] - PRIO_KNOWN);
	}
	fputs("; left out: ", out);
	for (int i = 0; i < n; i++) {
		if (!w[i].t->wakeups[0])
			continue;
		fputs(any ? ", " : "", out);
		print_tid(x, out, &w[i], guest);
		if (w[i].t->at[0])
			fprintf(out, " (prio %d, ", w[i].t->at[0] - PRIO_KNOWN);
		else
			fputs(" (prio not seen, ", out);
		fprintf(out, "%" PRIu64 " wake-up%s)", w[i].t->wakeups[0],
			w[i].t->wakeups[0] == 1 ? "" : "s");
		any = true;
	}
	fputs(any ? "" : "none", out);
	if (any) {
		fputs("; all of them: --tid ", out);
		for (int i = 0; i < n; i++)
			fprintf(out, "%s%d", i ? "," : "", w[i].pid);
	}
	fputs("\n", out);
}

static const char *const selection_key[] = { "all", "real-time", "tid" };

/* the jsonl summary's fields of the selection: which rule, the threads in, those left out */
static char *selection_json(struct explain *x, const struct woke *w, int n)
{
	int rule = x->opts->nr_tids ? 2 : x->sel;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool first = true;

	if (!f)
		return NULL;
	fprintf(f, ",\"selection\":\"%s\",\"tids\":[", selection_key[rule]);
	for (int i = 0; i < x->opts->nr_tids; i++)
		fprintf(f, "%s%d", i ? "," : "", x->opts->tids[i]);
	for (int i = 0; i < n; i++) {
		if (!w[i].t->wakeups[x->sel])
			continue;
		fprintf(f, "%s%d", first ? "" : ",", w[i].pid);
		first = false;
	}
	fputs("],\"tids_left_out\":[", f);
	first = true;
	for (int i = 0; x->sel && i < n; i++) {
		if (!w[i].t->wakeups[0])
			continue;
		fprintf(f, "%s{\"guest\":\"", first ? "" : ",");
		vtrace_json_chars(f, x->machines[w[i].mi]->name);
		fprintf(f, "\",\"tid\":%d,\"prio\":", w[i].pid);
		if (w[i].t->at[0])
			fprintf(f, "%d", w[i].t->at[0] - PRIO_KNOWN);
		else
			fputs("null", f);
		fprintf(f, ",\"wakeups\":%" PRIu64 "}", w[i].t->wakeups[0]);
		first = false;
	}
	fputs("]", f);
	fclose(f);
	return buf;
}

/*
 * Which wake-ups the summary and the stories are of: with --task (no --tid),
 * the real-time threads' when some woke, else all.  Then the selection line
 * (text) or fields (jsonl).
 */
static int explain_select(struct explain *x, FILE *out, bool jsonl, char **json)
{
	struct woke *w = NULL;
	int n = 0;

	x->sel = x->by_prio && x->wakeups[1];
	x->top = x->worst_of[x->sel].l;
	x->nr_top = x->worst_of[x->sel].nr;
	top_sort(&x->worst_of[x->sel]);
	classify_select(x->cl, x->sel);
	timerpath_select(x->tp, x->sel);
	if (x->by_prio && (n = threads_woke(x, &w)) < 0)
		return -1;
	if (x->sel && !jsonl)
		print_selection(x, out, w, n);
	*json = selection_json(x, w, n);
	free(w);
	return *json ? 0 : -1;
}

/**
 * explain_summary - after pass 1: the summary, then (jsonl) the worst; returns
 * the number of stories pass 2 tells, -1 on error
 */
int explain_summary(struct explain *x, FILE *out)
{
	bool jsonl = x->opts->format == MERGE_JSONL;
	const char *what = x->what ? x->what : "the guest tasks";
	uint64_t wakeups;
	char *json;
	int ret;

	if (explain_select(x, out, jsonl, &json))
		return -1;
	wakeups = x->wakeups[x->sel];
	if (!wakeups && jsonl) {
		free(json);
		print_history_starts(x, out, jsonl);
		return 0;
	}
	if (!wakeups) {
		free(json);
		fprintf(out, "No wake-up of %s found in the guests: --explain needs the guests'"
			" sched:sched_switch and sched:sched_wakeup events (and timer:hrtimer_start,"
			" timer:hrtimer_expire_entry for timer wake-ups)\n",
			x->what ? x->what : "any task");
		print_history_starts(x, out, jsonl);
		return 0;
	}
	ret = classify_print(x->cl, out, jsonl, what, x->opts->threshold_ns, wakeups, json);
	free(json);
	if (ret)
		return -1;
	if (jsonl) {
		fputs("{\"type\":\"timer_path\",", out);
		timerpath_print(x->tp, out, true);
		fputs("}\n", out);
	} else {
		timerpath_print(x->tp, out, false);
	}
	print_history_starts(x, out, jsonl);
	if (jsonl) {
		for (int i = 0; i < x->nr_top; i++)
			print_late_jsonl(x, out, &x->top[i], i);
		return 0;
	}
	if (x->nr_top)
		fputc('\n', out);
	return x->nr_top;
}

/* "cyclictest", "tid 159,160", "cyclictest tid 159", or NULL: all tasks */
static char *what_text(const struct merge_opts *opts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!opts->nr_tids)
		return opts->task ? strdup(opts->task) : NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "%s%stid ", opts->task ? opts->task : "", opts->task ? " " : "");
	for (int i = 0; i < opts->nr_tids; i++)
		fprintf(f, "%s%d", i ? "," : "", opts->tids[i]);
	fclose(f);
	return buf;
}

/**
 * explain_open - --explain's state over @machines, pass 1's: the late wake-ups
 * classified (classify.c) with each host cpu's tick (@ticks, NULL: not known)
 */
struct explain *explain_open(struct machine **machines, int nr, const struct merge_opts *opts,
			     const struct host_ticks *ticks)
{
	struct explain *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->opts = opts;
	x->task = opts->task;
	x->what = what_text(opts);
	x->by_prio = opts->task && !opts->nr_tids;
	x->threads.vsize = sizeof(struct thread);
	x->comms.vsize = COMM_LEN + 1;
	x->timers.vsize = sizeof(struct timer_val);
	x->pending.vsize = sizeof(struct pending);
	x->machines = machines;
	x->nr = nr;
	x->fields = calloc(nr, sizeof(*x->fields));
	x->learn = calloc(nr, sizeof(*x->learn));
	for (int i = 0; x->learn && i < nr; i++) {
		x->learn[i].nr_cpus = machines[i]->nr_cpus;
		x->learn[i].open = calloc(machines[i]->nr_cpus, sizeof(*x->learn[i].open));
		if (!x->learn[i].open)
			x->learn[i].nr_cpus = 0;
	}
	x->worst_of[0].l = calloc(opts->worst + 1, sizeof(struct late));
	x->worst_of[1].l = calloc(opts->worst + 1, sizeof(struct late));
	x->cl = classify_open(machines, nr, ticks);
	x->tp = timerpath_open(machines, nr);
	if (!x->fields || !x->learn || !x->worst_of[0].l || !x->worst_of[1].l || !x->cl || !x->tp ||
	    (opts->task && !x->what)) {
		explain_free(x);
		return NULL;
	}
	for (int i = 0; i < nr; i++)
		lookup_fields(&x->fields[i], machines[i]->tep);
	return x;
}

/* Pass 1 (explain_open()): the late wake-ups, then explain_summary() */
struct merge_pass explain_pass(struct explain *x)
{
	return (struct merge_pass){ .event = explain_event, .priv = x };
}

/* pass 2 starts over for each story */
static void story_reset(struct explain *x, int rank)
{
	const struct late *l = &x->top[rank];

	x->rank = rank;
	x->found = true;
	x->gmi = l->gmi;
	x->gm = x->machines[l->gmi];
	x->gcpu = l->gcpu;
	x->pid = l->pid;
	memcpy(x->comm, l->comm, sizeof(x->comm));
	x->worst = l->p;
	x->running = l->running;
	x->delay = l->delay;
	x->parts = &l->parts;
	x->path = &l->path;
	x->host_cpu = x->first_cpu = -1;
	x->moves = 0;
	x->vcpu_tid = l->parts.vcpu_tid;	/* pass 1's: the thread of several of that name */
	x->crossed = false;
	x->nr_slices = 0;
	x->more_slices = 0;
	x->slices_cut = 0;
	x->lines = 0;
	x->more_lines = 0;
	memset(x->cur_pid, 0, sizeof(x->cur_pid));
	memset(x->cur_since, 0, sizeof(x->cur_since));
	memset(x->cur_comm, 0, sizeof(x->cur_comm));
}

/**
 * explain_story_open - pass 2: the story of the @rank-th worst late wake-up
 * over fresh @machines; the merge need go no further than @to_ns
 */
int explain_story_open(struct explain *x, struct machine **machines, int nr, int rank,
		       uint64_t *to_ns)
{
	struct merge_opts *o = &x->story_opts;

	x->machines = machines;
	story_reset(x, rank);
	x->have_host = false;
	for (int i = 0; i < nr; i++) {
		lookup_fields(&x->fields[i], machines[i]->tep);
		x->have_host |= !machines[i]->guest;
	}
	find_vcpu(x);
	x->timeline_buf = NULL;
	x->timeline_len = 0;
	x->timeline = open_memstream(&x->timeline_buf, &x->timeline_len);
	if (!x->timeline)
		return -1;
	*o = *x->opts;
	o->format = MERGE_TEXT;
	x->out = output_open(x->timeline, o, 4, machines, nr, NULL);
	*to_ns = x->running + 200000;
	return x->out ? 0 : -1;
}

struct merge_pass explain_story_pass(struct explain *x)
{
	return (struct merge_pass){ .event = story_event, .priv = x };
}

/* The story told to @out, unless its pass @failed; the timeline's memory freed */
int explain_story_close(struct explain *x, FILE *out, bool failed)
{
	output_close(x->out);
	x->out = NULL;
	if (x->timeline && !failed) {
		fflush(x->timeline);
		print_guest_side(x, out);
		print_host_side(x, out, x->have_host);
		fprintf(out, "Timeline (%s cpu %d", x->gm->name, x->gcpu);
		if (x->moves)
			fprintf(out, ", host cpu %d, then the vCPU thread's", x->first_cpu);
		else if (x->host_cpu >= 0)
			fprintf(out, ", host cpu %d", x->host_cpu);
		fputs("), from expected to running + 0.2 ms:\n", out);
		fwrite(x->timeline_buf, 1, x->timeline_len, out);
		if (x->more_lines)
			fprintf(out, "... %d more lines (vtrace-merge --from/--to to see them all)\n",
				x->more_lines);
		if (x->rank + 1 < x->nr_top)
			fputc('\n', out);
	}
	if (x->timeline)
		fclose(x->timeline);
	x->timeline = NULL;
	free(x->timeline_buf);
	x->timeline_buf = NULL;
	return failed ? -1 : 0;
}

void explain_free(struct explain *x)
{
	if (!x)
		return;
	umap_free(&x->comms);
	umap_free(&x->timers);
	umap_free(&x->pending);
	umap_free(&x->threads);
	classify_close(x->cl);
	timerpath_close(x->tp);
	free(x->worst_of[0].l);
	free(x->worst_of[1].l);
	free(x->what);
	free(x->fields);
	for (int i = 0; x->learn && i < x->nr; i++)
		free(x->learn[i].open);
	free(x->learn);
	free(x);
}
