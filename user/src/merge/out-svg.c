// SPDX-License-Identifier: GPL-2.0
/* out-svg.c: --format svg: a self-contained SVG timeline of every CPU's tasks. */
/*
 *   vtrace: host + g1 on the host TSC                  4.000000 .. 4.067812 s
 *   host cpu 0       |CPU 0/KVM=================================|
 *   host cpu 1       |CPU 1/KVM==========|e2e_hog|CPU 1/KVM=====|
 *   g1 cpu 0 (vCPU 0)|                                          |
 *     on host        |host cpu 0================================|
 *   g1 cpu 1 (vCPU 1)|  | |  | |  | |      :     :|  | |  | |  |
 *     on host        |host cpu 1=========|      :     :|=========|
 *                    4.00    4.01    4.02 4.03 4.04  4.05    4.06
 *
 * One lane per CPU of each machine, in command-line order; a task is a
 * rectangle coloured after its name (idle is left blank), with its name
 * when it fits and a tooltip (<title>) with pid and times; one whose start
 * or end is a guest sched_switch whose time is ambiguous (two offset
 * intervals map its guest TSC: "[time ambiguous]" in text output) has a
 * dashed red outline, says so in its tooltip, and the legend explains the
 * mark.  Under each
 * guest CPU, a thin lane shows when the host ran that vCPU's QEMU thread
 * ("CPU N/KVM"): where it is blank, the vCPU was preempted.  Of several
 * threads of that name (several VMs), only the one out-sched.c tells is
 * the guest CPU's (the self-check's fit); when none is, the lane is empty
 * and its label says why ("on host: not told apart: 2 threads named CPU
 * 1/KVM").  With the host's kvm_exit/kvm_entry, the thread's exits are
 * drawn over its runs in a lighter blue, clipped to them: blank, the thread
 * not running; dark, guest mode; light, the host handling an exit.  With
 * --explain, a host cpu's gaps between events as long as explain's quiet_ns
 * for it (its "host_cpu" JSON line) are drawn dark over its lane: the cpu
 * not running (stopped below the host), as explain counts it.
 *
 * With --explain, the picture answers "why was my task late" for the
 * worst late wake-up (explain.c's JSON lines, opts->explain_text):
 *
 *   cyclictest (pid 500) in g1, guest cpu 1: 4.747 ms late       headline
 *   Cause: host task e2e_hog on the vCPU's host cpu, 4.705 ms of 4.747 ms
 *                      cyclictest late by 4.747 ms
 *          expected |e2e_hog 4.705 ms              |.| running   the delay's parts
 *   host cpu 1   ===|##############################|=====        the lanes, the
 *   g1 cpu 1        |       shaded: the delay      |             window's two CPUs
 *                                                                outlined
 *   late wake-ups |  |   |  | |    ^worst  |   | |  |            every late wake-up
 *
 * The lanes show the window from the expected time to the task running,
 * with a quarter of the delay (at least 0.1 ms) either side; above it a
 * bar splits the delay into its causes' parts, each coloured as its task
 * in the lanes; under the lanes, a strip of the whole run has a bar per
 * late wake-up (its height the delay), the worst in red and the window
 * outlined.  No text of the explanation beyond that: explain.txt has it.
 *
 * Slices are kept in memory (about 48 bytes each) and drawn at the end;
 * one narrower than a pixel is drawn a pixel wide, unless one was already
 * drawn in that pixel of its lane (those are counted and left out).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "out-sched.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

#define WIDTH		1600
#define LABEL_W		250
#define RIGHT_M		30
#define TOP		56
#define LANE_H		22
#define SUB_H		10
#define GAP		4
#define LEGEND_MAX	16
#define VCPU_COLOR	"#4c78a8"
#define EXIT_COLOR	"#9ecae9"	/* a vCPU thread in the host: kvm_exit .. kvm_entry */
#define HEAD_TOP	150	/* --explain: the lanes' top, under the headline and the bar */
#define BAR_Y		118	/* --explain: the delay's bar */
#define BAR_H		20
#define OVERVIEW_H	40
#define PARTS_MAX	8
#define HOST_CPUS_MAX	256	/* host cpus whose silences are drawn */
#define STOP_COLOR	"#555"	/* a host cpu not running: the bar's and the lanes' */

struct svg_slice {
	int		mi;
	int		cpu;
	int		pid;
	int		vcpu;		/* host vCPU thread: its index, else -1 */
	char		comm[SCHED_COMM_LEN + 1];
	uint64_t	from;
	uint64_t	to;
	const char	*ambiguous;	/* sched_slice_ambiguous(), NULL: not */
};

/* a vCPU thread's exit: the host handling it, from kvm_exit to the next kvm_entry */
struct svg_exit {
	int		tid;
	uint64_t	from;
	uint64_t	to;
};

/* a host cpu with no event for its quiet_ns or more: not running (stopped below the host) */
struct silence {
	int		cpu;
	uint64_t	from;
	uint64_t	to;
};

/* a vCPU thread whose kvm_exit waits for its kvm_entry */
struct open_exit {
	int		tid;
	uint64_t	from;
};

struct lane {
	int		mi;
	int		cpu;
	bool		sub;		/* a guest CPU's "on host" lane */
	int		y;
	int		h;
	int		last_px;	/* of the last narrow slice drawn */
};

/* a part of a late wake-up's delay: explain.c's "parts" */
struct part {
	char		key[24];	/* "host_task" */
	char		task[48];
	uint64_t	ns;
};

/* the worst late wake-up, from --explain's JSON lines */
struct window {
	bool		found;
	uint64_t	expected;
	uint64_t	running;
	uint64_t	delay;
	char		guest[64];
	int		gcpu;
	int		host_cpu;
	long long	pid;
	char		comm[SCHED_COMM_LEN + 1];
	struct part	part[PARTS_MAX];
	int		nr_parts;
};

/* every late wake-up, for the overview strip */
struct lates {
	uint64_t	*at;		/* expected */
	uint64_t	*delay;
	size_t		nr;
	size_t		max;
	uint64_t	wakeups;	/* the summary's figures */
	uint64_t	threshold;
	char		what[64];
};

struct svg {
	struct drawn		d;
	FILE			*out;
	const struct merge_opts	*opts;
	struct svg_slice	*sl;
	size_t			nr;
	size_t			max;
	bool			oom;
	struct lane		*lanes;
	int			nr_lanes;
	uint64_t		t0;
	uint64_t		t1;
	uint64_t		hidden;
	uint64_t		ambiguous;	/* slices drawn with the mark */
	uint64_t		exits;		/* exits drawn */
	struct window		win;
	struct lates		lates;
	uint64_t		v0;		/* the view, with --explain */
	uint64_t		v1;
	uint64_t		run0;		/* the whole run, for the overview */
	uint64_t		run1;
	int			top;		/* the lanes' top */
	struct svg_slice	*legend;	/* rank_tasks() */
	int			nr_legend;
	struct tep_handle	*host_tep;	/* whose ids these are */
	int			exit_id;
	int			entry_id;
	struct open_exit	*open;
	int			nr_open;
	struct svg_exit		*ex;		/* the exits in the view */
	size_t			nr_ex;
	size_t			max_ex;
	uint64_t		*quiet;		/* [host cpu]: explain's quiet_ns, 0: none */
	uint64_t		*last;		/* [host cpu]: its last event */
	struct silence		*sil;		/* the silences in the view */
	size_t			nr_sil;
	size_t			max_sil;
};

static void on_slice(void *priv, const struct sched_slice *s)
{
	struct svg *g = priv;
	struct svg_slice *n;

	if (!s->pid || s->to < g->v0 || s->from > g->v1)
		return;
	if (g->nr == g->max) {
		size_t max = g->max ? g->max * 2 : 1024;

		n = realloc(g->sl, max * sizeof(*n));
		if (!n) {
			g->oom = true;
			return;
		}
		g->sl = n;
		g->max = max;
	}
	n = &g->sl[g->nr++];
	n->mi = s->mi;
	n->cpu = s->cpu;
	n->pid = s->pid;
	snprintf(n->comm, sizeof(n->comm), "%s", s->comm[0] ? s->comm : "<...>");
	n->vcpu = sched_tracker_machine(g->d.t, s->mi)->guest ? -1 : vtrace_vcpu_idx_of(n->comm, SIZE_MAX);
	n->from = s->from;
	n->to = s->to;
	n->ambiguous = sched_slice_ambiguous(s);
}

static int add_exit(struct svg *g, int tid, uint64_t from, uint64_t to)
{
	if (to < g->v0 || from > g->v1)
		return 0;
	if (g->nr_ex == g->max_ex) {
		size_t max = g->max_ex ? 2 * g->max_ex : 1024;
		struct svg_exit *n = realloc(g->ex, max * sizeof(*n));

		if (!n)
			return -1;
		g->ex = n;
		g->max_ex = max;
	}
	g->ex[g->nr_ex++] = (struct svg_exit){ tid, from, to };
	return 0;
}

/*
 * Every host event: a gap since the cpu's last one of explain's quiet_ns or
 * more (a host_cpu line of its JSON) is the cpu not running, as explain counts it
 */
static void on_event(void *priv, int mi, struct source *s, uint64_t ns)
{
	struct svg *g = priv;
	uint64_t last;
	int cpu = s->cpu;

	(void)mi;
	if (s->m->guest || !g->quiet || cpu >= HOST_CPUS_MAX)
		return;
	last = g->last[cpu];
	g->last[cpu] = ns;
	if (!last || !g->quiet[cpu] || ns - last < g->quiet[cpu] || ns < g->v0 || last > g->v1)
		return;
	if (g->nr_sil == g->max_sil) {
		size_t max = g->max_sil ? 2 * g->max_sil : 64;
		struct silence *n = realloc(g->sil, max * sizeof(*n));

		if (!n) {
			g->oom = true;
			return;
		}
		g->sil = n;
		g->max_sil = max;
	}
	g->sil[g->nr_sil++] = (struct silence){ cpu, last, ns };
}

/* The host's kvm_exit opens a vCPU thread's exit, its next kvm_entry closes it */
static void on_instant(void *priv, int mi, struct source *s, uint64_t ns)
{
	struct svg *g = priv;
	struct tep_handle *tep = s->m->tep;
	int id = tep_data_type(tep, s->rec), tid, i;
	struct tep_event *ev;

	(void)mi;
	if (s->m->guest)
		return;
	if (g->host_tep != tep) {
		g->host_tep = tep;
		ev = tep_find_event_by_name(tep, "kvm", "kvm_exit");
		g->exit_id = ev ? ev->id : -1;
		ev = tep_find_event_by_name(tep, "kvm", "kvm_entry");
		g->entry_id = ev ? ev->id : -1;
	}
	if (id != g->exit_id && id != g->entry_id)
		return;
	tid = tep_data_pid(tep, s->rec);
	for (i = 0; i < g->nr_open && g->open[i].tid != tid; i++)
		;
	if (id == g->exit_id) {
		if (i == g->nr_open) {
			struct open_exit *n = realloc(g->open, (i + 1) * sizeof(*n));

			if (!n) {
				g->oom = true;
				return;
			}
			g->open = n;
			g->nr_open++;
		}
		g->open[i] = (struct open_exit){ tid, ns };
		return;
	}
	if (i < g->nr_open && g->open[i].from && add_exit(g, tid, g->open[i].from, ns))
		g->oom = true;
	if (i < g->nr_open)
		g->open[i].from = 0;
}

static void put_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':	fputs("&lt;", out); break;
		case '>':	fputs("&gt;", out); break;
		case '&':	fputs("&amp;", out); break;
		case '"':	fputs("&quot;", out); break;
		default:
			if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f)
				fputc(*s, out);
		}
	}
}

/* @ns on an axis from @t0 to @t1 across the lanes' width */
static double x_at(uint64_t t0, uint64_t t1, uint64_t ns)
{
	double span = t1 > t0 ? (double)(t1 - t0) : 1;

	if (ns < t0)
		ns = t0;
	if (ns > t1)
		ns = t1;
	return LABEL_W + (ns - t0) * (WIDTH - LABEL_W - RIGHT_M) / span;
}

static double x_of(struct svg *g, uint64_t ns)
{
	return x_at(g->t0, g->t1, ns);
}

/*
 * A task's colour: the vCPU threads' blue; the tasks with the most time
 * (the legend's) one each of a palette with no blue and no red (red marks
 * the window); any other after a hash of its name
 */
static void color_of(struct svg *g, const char *comm, char *buf, size_t len)
{
	static const char *const palette[] = {
		"#f58518", "#54a24b", "#72b7b2", "#eeca3b", "#b279a2", "#9d755d", "#ff9da6",
		"#8cd17d", "#b6992d", "#499894", "#d4a6c8", "#bab0ac", "#f1ce63", "#86bcb6",
		"#79706e", "#d37295",
	};
	uint32_t h = 2166136261u;

	if (vtrace_vcpu_idx_of(comm, SIZE_MAX) >= 0) {
		snprintf(buf, len, VCPU_COLOR);
		return;
	}
	for (int k = 0, n = 0; k < g->nr_legend && k < LEGEND_MAX; k++) {
		if (vtrace_vcpu_idx_of(g->legend[k].comm, SIZE_MAX) >= 0)
			continue;
		if (!strcmp(g->legend[k].comm, comm)) {
			snprintf(buf, len, "%s", palette[n % (sizeof(palette) / sizeof(*palette))]);
			return;
		}
		n++;
	}
	for (; *comm; comm++)
		h = (h ^ (unsigned char)*comm) * 16777619u;
	snprintf(buf, len, "hsl(%u,%u%%,%u%%)", h % 360, 55 + (h >> 9) % 25, 55 + (h >> 17) % 15);
}

static int add_lane(struct svg *g, int mi, int cpu, bool sub, int *y)
{
	struct lane *n = realloc(g->lanes, (g->nr_lanes + 1) * sizeof(*n));

	if (!n)
		return -1;
	g->lanes = n;
	n[g->nr_lanes++] = (struct lane){ mi, cpu, sub, *y, sub ? SUB_H : LANE_H, -1 };
	*y += (sub ? SUB_H : LANE_H) + GAP;
	return 0;
}

/* Lanes in command-line order: each machine's CPUs, a guest CPU's host lane under it */
static int layout(struct svg *g, int *y)
{
	int nr = sched_tracker_machines(g->d.t);

	for (int r = 0; r < nr; r++) {
		for (int mi = 0; mi < nr; mi++) {
			struct machine *m = sched_tracker_machine(g->d.t, mi);

			if (sched_tracker_rank(g->d.t, mi) != r)
				continue;
			for (int c = 0; c < m->nr_cpus; c++) {
				const struct vtrace_vcpu_history *h = m->cpus[c].map.hist;

				if (add_lane(g, mi, c, false, y))
					return -1;
				if (!m->guest || !h || h->vcpu_idx < 0)
					continue;
				if (add_lane(g, mi, c, true, y))
					return -1;
			}
			*y += 2 * GAP;
		}
	}
	return 0;
}

static struct lane *find_lane(struct svg *g, int mi, int cpu, bool sub)
{
	for (int i = 0; i < g->nr_lanes; i++)
		if (g->lanes[i].mi == mi && g->lanes[i].cpu == cpu && g->lanes[i].sub == sub)
			return &g->lanes[i];
	return NULL;
}

static void put_ms(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64 " ms", ns / 1000000, ns / 1000 % 1000);
}

static void put_ns(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

/* A slice; those under a pixel are drawn one pixel wide, the first of each pixel only */
static void put_rect(struct svg *g, struct lane *l, const struct svg_slice *s,
		     const char *label, const char *color)
{
	double x = x_of(g, s->from), w = x_of(g, s->to) - x;

	if (w < 1) {
		if ((int)x == l->last_px) {
			g->hidden++;
			return;
		}
		l->last_px = (int)x;
		w = 1;
	}
	fprintf(g->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"%s>"
		"<title>", x, l->y, w, l->h, color, s->ambiguous ? " class=\"amb\"" : "");
	put_text(g->out, s->comm);
	fprintf(g->out, " (pid %d) ", s->pid);
	put_ns(g->out, s->from);
	fputs(" .. ", g->out);
	put_ns(g->out, s->to);
	fprintf(g->out, " s, %.3f ms", (s->to - s->from) / 1e6);
	if (s->ambiguous)
		fprintf(g->out, "; time ambiguous at %s", !strcmp(s->ambiguous, "both") ?
			"both ends" : !strcmp(s->ambiguous, "start") ? "its start" : "its end");
	fputs("</title></rect>\n", g->out);
	g->ambiguous += s->ambiguous != NULL;
	if (w < 7.0 * strlen(label) + 6 || l->sub)
		return;
	fprintf(g->out, "<text x=\"%.2f\" y=\"%d\" class=\"in\">", x + 3, l->y + 15);
	put_text(g->out, label);
	fputs("</text>\n", g->out);
}

static void draw_slices(struct svg *g)
{
	char color[40], label[40];
	int cpu;

	for (size_t i = 0; i < g->nr; i++) {
		const struct svg_slice *s = &g->sl[i];
		struct lane *l = find_lane(g, s->mi, s->cpu, false);
		int gm;

		color_of(g, s->comm, color, sizeof(color));
		if (l)
			put_rect(g, l, s, s->comm, color);
		if (s->vcpu < 0)
			continue;
		gm = sched_guest_of_tid(g->d.t, s->pid, &cpu);
		l = gm >= 0 ? find_lane(g, gm, cpu, true) : NULL;
		snprintf(label, sizeof(label), "host cpu %d", s->cpu);
		if (l)
			put_rect(g, l, s, label, VCPU_COLOR);
	}
}

/* A host cpu's silences over its lane, dark: the cpu not running, whatever it was running */
static void draw_silences(struct svg *g)
{
	for (size_t i = 0; i < g->nr_sil; i++) {
		const struct silence *z = &g->sil[i];
		struct lane *l = NULL;
		double x0, x1;

		for (int mi = 0; !l && mi < sched_tracker_machines(g->d.t); mi++)
			if (!sched_tracker_machine(g->d.t, mi)->guest)
				l = find_lane(g, mi, z->cpu, false);
		if (!l)
			continue;
		x0 = x_of(g, z->from);
		x1 = x_of(g, z->to);
		fprintf(g->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
			"class=\"stop\" data-cpu=\"%d\" data-from-ns=\"%" PRIu64 "\" data-to-ns=\"%"
			PRIu64 "\"><title>host cpu %d: no event for ", x0, l->y + 3,
			x1 - x0 < 1 ? 1 : x1 - x0, l->h - 6, z->cpu, z->from, z->to, z->cpu);
		put_ms(g->out, z->to - z->from);
		fputs(": not running (stopped below the host)</title></rect>\n", g->out);
		if (x1 - x0 > 130)
			fprintf(g->out, "<text x=\"%.2f\" y=\"%d\" class=\"stopl\">not running"
				"</text>\n", x0 + 4, l->y + 15);
	}
}

static int by_tid_from(const void *a, const void *b)
{
	const struct svg_exit *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* One exit, clipped to where its thread ran: an exit off the CPU is the thread not running */
static void draw_exit(struct svg *g, const struct svg_exit *e, const struct svg_exit *run,
		      size_t nr)
{
	struct svg_slice sl = { .pid = e->tid, .ambiguous = NULL };
	int cpu, gm = sched_guest_of_tid(g->d.t, e->tid, &cpu);
	struct lane *l = gm >= 0 ? find_lane(g, gm, cpu, true) : NULL;

	snprintf(sl.comm, sizeof(sl.comm), "exit");
	for (size_t k = 0; l && k < nr && run[k].tid == e->tid && run[k].from < e->to; k++) {
		sl.from = run[k].from > e->from ? run[k].from : e->from;
		sl.to = run[k].to < e->to ? run[k].to : e->to;
		if (sl.from < sl.to) {
			put_rect(g, l, &sl, "", EXIT_COLOR);
			g->exits++;
		}
	}
}

/*
 * Each vCPU thread's exits over its runs in the "on host" lane: blank, the
 * thread not running; dark, in guest mode; light, the host handling an exit
 */
static void draw_exits(struct svg *g)
{
	struct svg_exit *run = calloc(g->nr + 1, sizeof(*run));
	size_t nr = 0, j = 0;

	if (!g->nr_ex || !run) {	/* qsort() takes no NULL, even of 0 items */
		free(run);
		return;
	}
	for (size_t i = 0; i < g->nr; i++)
		if (g->sl[i].vcpu >= 0)
			run[nr++] = (struct svg_exit){ g->sl[i].pid, g->sl[i].from, g->sl[i].to };
	qsort(run, nr, sizeof(*run), by_tid_from);
	qsort(g->ex, g->nr_ex, sizeof(*g->ex), by_tid_from);
	for (size_t i = 0; i < g->nr_ex; i++) {
		const struct svg_exit *e = &g->ex[i];

		while (j < nr && (run[j].tid < e->tid || (run[j].tid == e->tid &&
							  run[j].to <= e->from)))
			j++;
		draw_exit(g, e, run + j, nr - j);
	}
	free(run);
}

static void draw_labels(struct svg *g)
{
	char name[128], what[96];

	for (int i = 0; i < g->nr_lanes; i++) {
		const struct lane *l = &g->lanes[i];
		struct machine *m = sched_tracker_machine(g->d.t, l->mi);
		const struct vtrace_vcpu_history *h = m->cpus[l->cpu].map.hist;

		if (l->sub) {
			sched_vcpu_label(g->d.t, l->mi, l->cpu, what, sizeof(what));
			snprintf(name, sizeof(name), "on host: %s", what);
		} else if (m->guest && h) {
			snprintf(name, sizeof(name), "%s cpu %d (vCPU %d)", m->name, l->cpu,
				 h->vcpu_idx);
		} else {
			snprintf(name, sizeof(name), "%s cpu %d", m->name, l->cpu);
		}
		fprintf(g->out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			"class=\"lane\"/>\n", LABEL_W, l->y, WIDTH - LABEL_W - RIGHT_M, l->h);
		fprintf(g->out, "<text x=\"%d\" y=\"%d\" class=\"%s\" data-lane=\"", LABEL_W - 6,
			l->y + (l->sub ? 9 : 15), l->sub ? "sub" : "name");
		put_text(g->out, name);
		fputs("\">", g->out);
		put_text(g->out, name);
		fputs("</text>\n", g->out);
	}
}

/*
 * 1, 2 or 5 times a power of ten: about ten ticks.  Compared through
 * (span - 1) / N, not step * N: any span (a --to near 2^64, or TSC cycles
 * of a guest's wild clock) would make step * N wrap, and the loop never end.
 */
static uint64_t tick_step(uint64_t span)
{
	uint64_t step = 1;

	if (!span)
		return 1;
	while (step <= (span - 1) / 10) {		/* step * 10 < span */
		if (step > (span - 1) / 20)		/* step * 20 >= span */
			return step * 2;
		if (step > (span - 1) / 50)		/* step * 50 >= span */
			return step * 5;
		step *= 10;
	}
	return step;
}

/* The time axis of @t0 .. @t1 at @y, its tick lines up from @y to @top */
static void draw_axis(struct svg *g, uint64_t t0, uint64_t t1, int y, int top)
{
	uint64_t step = tick_step(t1 - t0), t = t0 / step * step;
	bool ticks = t0 <= t1;
	int decimals = 0;

	/* the first multiple of step from t0 on, if there is one below 2^64 */
	if (t < t0) {
		ticks = ticks && t <= UINT64_MAX - step;
		t += ticks ? step : 0;
	}

	for (uint64_t s = step; s < 1000000000 && decimals < 9; s *= 10)
		decimals++;
	fprintf(g->out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n",
		LABEL_W, y, WIDTH - RIGHT_M, y);
	for (; ticks && t <= t1; t += step) {
		double x = x_at(t0, t1, t);
		char num[32];

		snprintf(num, sizeof(num), "%" PRIu64 ".%09" PRIu64, t / 1000000000,
			 t % 1000000000);
		num[strlen(num) - 9 + decimals - (decimals ? 0 : 1)] = '\0';
		fprintf(g->out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"tick\"/>"
			"<text x=\"%.2f\" y=\"%d\" class=\"tk\">%s</text>\n", x, top, x, y + 4,
			x, y + 16, num);
		if (t1 - t < step)
			break;		/* t + step would pass t1, or wrap */
	}
}

/* Sum of each task's time, the longest first, for the legend */
static int by_time(const void *a, const void *b)
{
	const struct svg_slice *x = a, *y = b;

	return x->to < y->to ? 1 : x->to > y->to ? -1 : strcmp(x->comm, y->comm);
}

/* The tasks by their time in the picture, the longest first: the legend, and who gets a colour */
static void rank_tasks(struct svg *g)
{
	struct svg_slice *sum = calloc(LEGEND_MAX * 4, sizeof(*sum));
	int nr = 0;

	if (!sum)
		return;
	for (size_t i = 0; i < g->nr; i++) {
		int k;

		for (k = 0; k < nr && strcmp(sum[k].comm, g->sl[i].comm); k++)
			;
		if (k == nr && nr == LEGEND_MAX * 4)
			continue;
		if (k == nr)
			memcpy(sum[nr++].comm, g->sl[i].comm, sizeof(sum->comm));
		sum[k].to += g->sl[i].to - g->sl[i].from;
	}
	qsort(sum, nr, sizeof(*sum), by_time);
	g->legend = sum;
	g->nr_legend = nr;
}

/* returns the y under it */
static int draw_legend(struct svg *g, int y)
{
	int nr = g->nr_legend, x = LABEL_W;
	char color[40];

	for (int k = 0; k < nr && k < LEGEND_MAX; k++) {
		color_of(g, g->legend[k].comm, color, sizeof(color));
		fprintf(g->out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"lg\">", x, y, color, x + 16, y + 10);
		put_text(g->out, g->legend[k].comm);
		fputs("</text>\n", g->out);
		x += 150;
		if (x > WIDTH - 150 && k + 1 < nr && k + 1 < LEGEND_MAX) {
			x = LABEL_W;
			y += 18;
		}
	}
	if (g->nr_ex) {		/* under the tasks: the "on host" lanes' two blues */
		y += nr ? 18 : 0;
		fprintf(g->out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"lg\">on host, a vCPU thread: in guest mode"
			"</text><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"lg\">in an exit (kvm_exit .. kvm_entry: "
			"the host handling it)</text>\n", LABEL_W, y, VCPU_COLOR, LABEL_W + 16,
			y + 10, LABEL_W + 300, y, EXIT_COLOR, LABEL_W + 316, y + 10);
		nr = 1;
	}
	if (g->nr_sil) {	/* and the host cpus' silences */
		y += nr ? 18 : 0;
		fprintf(g->out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" "
			"class=\"stop\"/><text x=\"%d\" y=\"%d\" class=\"lg\">host cpu not running "
			"(stopped below the host): no event for 3 of its ticks or more, as "
			"--explain tells it</text>\n", LABEL_W, y, LABEL_W + 16, y + 10);
		nr = 1;
	}
	return y + (nr ? 18 : 0);
}

/* A part's few words in the delay's bar: "e2e_hog", "exit hlt", "guest mode" */
static void part_short(const struct part *p, char *buf, size_t len)
{
	static const char *const words[][2] = {
		{ "host_irq", "host irq" }, { "host_softirq", "host softirq" },
		{ "host_idle", "host idle" }, { "host_not_running", "host not running" },
		{ "vcpu_blocked", "vCPU blocked" }, { "vcpu_running", "vCPU running" },
		{ "vcpu_guest", "guest mode" }, { "guest_irq", "guest irq" },
		{ "guest_softirq", "guest softirq" }, { "guest_self", "the task itself" },
		{ "unknown", "not in the host trace" }, { "events_lost", "events lost" },
		{ "timer_host_late", "host timer late" }, { "timer_to_entry", "to guest mode" },
		{ "timer_guest_irq", "guest irq late" }, { "timer_guest", "guest handler" },
	};

	if (!strcmp(p->key, "host_task")) {
		snprintf(buf, len, "%s", p->task);
		return;
	}
	if (!strcmp(p->key, "vcpu_exit") || !strcmp(p->key, "guest_task")) {
		snprintf(buf, len, "%s %s", p->key[0] == 'v' ? "exit" : "guest", p->task);
		return;
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(p->key, words[i][0])) {
			snprintf(buf, len, "%s", words[i][1]);
			return;
		}
	snprintf(buf, len, "%s", p->key);
}

/* A part's colour: its task's in the lanes, the vCPU's, or a grey */
static void part_color(struct svg *g, const struct part *p, char *buf, size_t len)
{
	if (!strcmp(p->key, "host_task") || !strcmp(p->key, "guest_task"))
		color_of(g, p->task, buf, len);
	else if (!strncmp(p->key, "vcpu_", 5))
		snprintf(buf, len, "%s", !strcmp(p->key, "vcpu_exit") ? "#9ecae9" : VCPU_COLOR);
	else if (!strcmp(p->key, "host_not_running"))
		snprintf(buf, len, STOP_COLOR);
	else
		snprintf(buf, len, "#c8c8c8");
}

/* The delay split into its parts, over the window: each as wide as its share */
static void draw_parts(struct svg *g, double x0, double x1)
{
	const struct window *w = &g->win;
	double x = x0, width = x1 - x0;
	char color[40], name[56], label[80];

	fprintf(g->out, "<g id=\"parts\">\n");
	for (int i = 0; i < w->nr_parts; i++) {
		const struct part *p = &w->part[i];
		double pw = w->delay ? width * (double)p->ns / w->delay : 0;

		if (x + pw > x1)
			pw = x1 - x;
		part_color(g, p, color, sizeof(color));
		part_short(p, name, sizeof(name));
		snprintf(label, sizeof(label), "%s %" PRIu64 ".%01" PRIu64 " ms", name,
			 p->ns / 1000000, p->ns / 100000 % 10);
		fprintf(g->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
			"fill=\"%s\" class=\"part\" data-cause=\"", x, BAR_Y,
			pw < 0.5 ? 0.5 : pw, BAR_H, color);
		put_text(g->out, p->key);
		fprintf(g->out, "\" data-task=\"");
		put_text(g->out, p->task);
		fprintf(g->out, "\" data-ns=\"%" PRIu64 "\"><title>", p->ns);
		put_text(g->out, name);
		fputs(": ", g->out);
		put_ms(g->out, p->ns);
		fputs("</title></rect>\n", g->out);
		if (pw >= 7.0 * strlen(label) + 8) {
			fprintf(g->out, "<text x=\"%.2f\" y=\"%d\" class=\"pl\">", x + 4,
				BAR_Y + 14);
			put_text(g->out, label);
			fputs("</text>\n", g->out);
		}
		x += pw;
	}
	fputs("</g>\n", g->out);
}

/* The delay's shade, under the slices: what ran keeps its colour, idle shows pink */
static void draw_shade(struct svg *g, int bottom)
{
	double x0 = x_of(g, g->win.expected), x1 = x_of(g, g->win.running);
	int top = BAR_Y - 20;

	fprintf(g->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" class=\"win\"/>\n",
		x0, top, x1 - x0, bottom - top);
}

/* The worst wake-up's window: its edges and labels, the delay's parts, its two CPUs outlined */
static void draw_window(struct svg *g, int bottom)
{
	struct window *w = &g->win;
	double x0 = x_of(g, w->expected), x1 = x_of(g, w->running);
	int top = BAR_Y - 20;
	struct lane *l;

	fprintf(g->out, "<g id=\"explain\" data-expected-ns=\"%" PRIu64 "\" data-running-ns=\"%"
		PRIu64 "\" data-delay-ns=\"%" PRIu64 "\" data-view-from-ns=\"%" PRIu64 "\" "
		"data-view-to-ns=\"%" PRIu64 "\">\n", w->expected, w->running, w->delay, g->t0,
		g->t1);
	fprintf(g->out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"edge\"/>"
		"<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"edge\"/>\n",
		x0, top, x0, bottom, x1, top, x1, bottom);
	fprintf(g->out, "<text x=\"%.2f\" y=\"%d\" class=\"wl\" text-anchor=\"end\">expected ",
		x0 - 4, BAR_Y + 14);
	put_ns(g->out, w->expected);
	fprintf(g->out, "</text><text x=\"%.2f\" y=\"%d\" class=\"wl\">running ", x1 + 4,
		BAR_Y + 14);
	put_ns(g->out, w->running);
	fprintf(g->out, "</text><text x=\"%.2f\" y=\"%d\" class=\"late\" text-anchor=\"middle\">",
		(x0 + x1) / 2, BAR_Y - 6);
	put_text(g->out, w->comm);
	fputs(" late by ", g->out);
	put_ms(g->out, w->delay);
	fputs("</text>\n", g->out);
	fprintf(g->out, "<text x=\"%d\" y=\"%d\" class=\"name\">the delay, by cause</text>\n",
		LABEL_W - 6, BAR_Y + 14);
	draw_parts(g, x0, x1);
	for (int i = 0; i < sched_tracker_machines(g->d.t); i++) {
		struct machine *m = sched_tracker_machine(g->d.t, i);

		l = m->guest && !strcmp(m->name, w->guest) ? find_lane(g, i, w->gcpu, false) :
		    !m->guest && w->host_cpu >= 0 ? find_lane(g, i, w->host_cpu, false) : NULL;
		if (l)
			fprintf(g->out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
				"class=\"mark\"/>\n", LABEL_W - 1, l->y - 1,
				WIDTH - LABEL_W - RIGHT_M + 2, l->h + 2);
	}
	fputs("</g>\n", g->out);
}

/* The answer in two lines: who was late and by how much, and what took the time */
static void draw_headline(struct svg *g)
{
	const struct window *w = &g->win;
	char words[160];

	fprintf(g->out, "<text x=\"20\" y=\"28\" class=\"head\" id=\"headline\">");
	put_text(g->out, w->comm);
	fprintf(g->out, " (pid %lld) on cpu %d of guest ", w->pid, w->gcpu);
	put_text(g->out, w->guest);
	fputs(": ", g->out);
	put_ms(g->out, w->delay);
	fputs(" late, due at ", g->out);
	put_ns(g->out, w->expected);
	fputs(" s (the worst late wake-up)</text>\n", g->out);
	if (!w->nr_parts)
		return;
	classify_key_text(w->part[0].key, w->part[0].task, words, sizeof(words));
	fprintf(g->out, "<text x=\"20\" y=\"52\" class=\"cause\" id=\"cause\">Cause: ");
	put_text(g->out, words);
	fputs(", ", g->out);
	put_ms(g->out, w->part[0].ns);
	fputs(" of the ", g->out);
	put_ms(g->out, w->delay);
	for (int i = 1; i < w->nr_parts && i < 3; i++) {
		part_short(&w->part[i], words, sizeof(words));
		fputs(i == 1 ? "; then " : ", ", g->out);
		put_text(g->out, words);
		fputc(' ', g->out);
		put_ms(g->out, w->part[i].ns);
	}
	fputs("</text>\n", g->out);
}

/* Every late wake-up of the run, a bar as high as its delay; the worst red, the window outlined */
static int draw_overview(struct svg *g, int y)
{
	const struct lates *lt = &g->lates;
	uint64_t t0 = g->run0, t1 = g->run1, max = g->win.delay ? g->win.delay : 1;
	int cols = WIDTH - LABEL_W - RIGHT_M, bottom = y + 30 + OVERVIEW_H;
	uint64_t *col = calloc(cols + 1, sizeof(*col));
	double wx0, wx1;

	if (!col)
		return y;
	fprintf(g->out, "<text x=\"%d\" y=\"%d\" class=\"lg\">Every late wake-up of ", LABEL_W,
		y + 10);
	put_text(g->out, lt->what);
	fprintf(g->out, " over the run: %zu of %" PRIu64 " later than ", lt->nr, lt->wakeups);
	put_ms(g->out, lt->threshold);
	fputs("; a bar's height is its delay; the worst in red, the window above outlined</text>\n",
	      g->out);
	y += 30;
	for (size_t i = 0; i < lt->nr; i++) {
		int c = (int)(x_at(t0, t1, lt->at[i]) - LABEL_W);

		if (c >= 0 && c <= cols && lt->delay[i] > col[c])
			col[c] = lt->delay[i];
	}
	fprintf(g->out, "<g id=\"overview\" data-late=\"%zu\" data-run-from-ns=\"%" PRIu64 "\" "
		"data-run-to-ns=\"%" PRIu64 "\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" "
		"height=\"%d\" "
		"class=\"lane\"/>\n<text x=\"%d\" y=\"%d\" class=\"name\">late wake-ups</text>\n",
		lt->nr, t0, t1, LABEL_W, y, cols, OVERVIEW_H, LABEL_W - 6, y + OVERVIEW_H / 2 + 4);
	for (int c = 0; c <= cols; c++) {
		double h = col[c] ? (double)OVERVIEW_H * col[c] / max : 0;

		if (!col[c])
			continue;
		h = h < 1 ? 1 : h > OVERVIEW_H ? OVERVIEW_H : h;
		fprintf(g->out, "<rect x=\"%d\" y=\"%.1f\" width=\"1\" height=\"%.1f\" "
			"class=\"ov\"/>\n", LABEL_W + c, bottom - h, h);
	}
	wx0 = x_at(t0, t1, g->t0);
	wx1 = x_at(t0, t1, g->t1);
	fprintf(g->out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"class=\"ovwin\"/>\n",
		wx0 - 3, y - 2, wx1 - wx0 + 6, OVERVIEW_H + 4);
	wx0 = x_at(t0, t1, g->win.expected);
	fprintf(g->out, "<g id=\"overview-worst\" data-at-ns=\"%" PRIu64 "\" "
		"data-delay-ns=\"%" PRIu64
		"\"><rect x=\"%.2f\" y=\"%d\" width=\"2\" height=\"%d\" class=\"worst\"/>"
		"<path d=\"M%.2f %d l-6 -8 h12 z\" class=\"worst\"/><text x=\"%.2f\" y=\"%d\" "
		"class=\"wl\" text-anchor=\"%s\">worst: ", g->win.expected, g->win.delay,
		wx0 - 1, y, OVERVIEW_H, wx0, y, wx0 + (wx0 > WIDTH / 2 ? -10 : 10), y - 3,
		wx0 > WIDTH / 2 ? "end" : "start");
	put_ms(g->out, g->win.delay);
	fputs("</text></g>\n</g>\n", g->out);
	free(col);
	draw_axis(g, t0, t1, bottom, bottom);
	return bottom + 24;
}

static void put_head(struct svg *g, int height)
{
	fprintf(g->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, sans-serif\">\n", WIDTH, height,
		WIDTH, height);
	fputs("<style>\n"
	      ".lane{fill:#f4f4f4;stroke:#ddd}\n"
	      ".name{font-size:12px;text-anchor:end;font-weight:bold}\n"
	      ".sub{font-size:9px;text-anchor:end;fill:#555}\n"
	      ".in{font-size:11px;fill:#111;pointer-events:none}\n"
	      ".axis{stroke:#333}.tick{stroke:#ccc;stroke-dasharray:2,3}\n"
	      ".tk{font-size:10px;text-anchor:middle;fill:#333}.lg{font-size:11px}\n"
	      ".win{fill:#e45756;fill-opacity:0.18}.edge{stroke:#c0392b;stroke-width:1.5}\n"
	      ".wl{font-size:11px;fill:#c0392b;font-weight:bold}\n"
	      ".late{font-size:14px;fill:#c0392b;font-weight:bold}\n"
	      ".mark{fill:none;stroke:#c0392b;stroke-width:2}\n"
	      ".head{font-size:20px;font-weight:bold}\n"
	      ".cause{font-size:15px;fill:#c0392b;font-weight:bold}\n"
	      ".part{stroke:#fff;stroke-width:0.5}.pl{font-size:11px;fill:#111;font-weight:bold}\n"
	      ".ov{fill:#777}.worst{fill:#c0392b}\n"
	      ".stop{fill:" STOP_COLOR ";fill-opacity:0.85}.stopl{font-size:11px;fill:#fff}\n"
	      ".ovwin{fill:none;stroke:#c0392b;stroke-width:1.5}\n"
	      ".title{font-size:15px;font-weight:bold}.meta{font-size:11px;fill:#555}\n"
	      ".amb{stroke:#c0392b;stroke-width:2;stroke-dasharray:3,2}\n"
	      "</style>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", g->out);
}

/* The self-check's verdict: a FAILED or unverified picture says so */
static void put_verdict(struct svg *g, int y)
{
	const char *v = g->d.verdict ? *g->d.verdict : NULL;

	if (!v)
		return;
	fprintf(g->out, "<text x=\"20\" y=\"%d\" class=\"lg\"%s>self-check: ", y,
		strstr(v, "FAILED") || !strncmp(v, "unverified", 10) ? " fill=\"#c00000\"" : "");
	put_text(g->out, v);
	fputs("</text>\n", g->out);
}

/* What is drawn: the machines and the time span; with --explain, small under the headline */
static void put_title(struct svg *g, int y, const char *cls)
{
	int nr = sched_tracker_machines(g->d.t);

	fprintf(g->out, "<text x=\"20\" y=\"%d\" class=\"%s\">vtrace: ", y, cls);
	for (int r = 0; r < nr; r++)
		for (int i = 0; i < nr; i++)
			if (sched_tracker_rank(g->d.t, i) == r) {
				fputs(r ? " + " : "", g->out);
				put_text(g->out, sched_tracker_machine(g->d.t, i)->name);
			}
	fputs(" on the host's TSC, ", g->out);
	put_ns(g->out, g->t0);
	fputs(" .. ", g->out);
	put_ns(g->out, g->t1);
	fprintf(g->out, " s%s</text>\n", g->opts->khz ? "" : " (TSC cycles: no --tsc-khz)");
}

static int svg_finish(struct drawn *d)
{
	struct svg *g = (struct svg *)d;
	bool explain = g->win.found;
	int y, axis, height, legend_rows;

	g->t0 = g->run0 = sched_tracker_first(d->t);
	if (g->opts->from_ns && g->opts->from_ns < g->t0)
		g->t0 = g->run0 = g->opts->from_ns;
	g->t1 = g->run1 = sched_tracker_last(d->t);
	if (g->v0 || g->v1 != UINT64_MAX) {
		g->t0 = g->v0;
		g->t1 = g->v1;
	}
	y = g->top = explain ? HEAD_TOP : TOP;
	if (g->oom || layout(g, &y)) {
		vtrace_set_error("--format svg: out of memory");
		return -1;
	}
	axis = y + 4;
	legend_rows = LEGEND_MAX * 150 / (WIDTH - LABEL_W) + 1;
	height = axis + 30 + 18 * (legend_rows + (g->nr_ex > 0) + (g->nr_sil > 0)) +
		 (explain ? 30 + OVERVIEW_H + 34 : 0) + 50;
	put_head(g, height);
	if (explain) {
		draw_headline(g);
		put_title(g, 74, "meta");
		put_verdict(g, 90);
	} else {
		put_title(g, 20, "title");
		put_verdict(g, 38);
	}
	rank_tasks(g);
	draw_labels(g);
	if (explain)
		draw_shade(g, axis);
	draw_slices(g);
	draw_exits(g);
	draw_silences(g);
	if (explain)
		draw_window(g, axis);
	draw_axis(g, g->t0, g->t1, axis, g->top - 4);
	y = draw_legend(g, axis + 30);
	if (explain)
		y = draw_overview(g, y + 6);
	if (g->hidden)
		fprintf(g->out, "<text x=\"20\" y=\"%d\" class=\"meta\">%" PRIu64 " more slices "
			"within a pixel of another not drawn: --from/--to show them</text>\n",
			y + 12, g->hidden);
	if (g->ambiguous)
		fprintf(g->out, "<rect x=\"20\" y=\"%d\" width=\"12\" height=\"12\" fill=\"white\""
			" class=\"amb\"/><text x=\"38\" y=\"%d\" class=\"lg\">%" PRIu64 " slices"
			" outlined in dashed red start or end at a guest sched_switch whose time is"
			" ambiguous (two offset intervals map its guest TSC; the host's"
			" kvm:kvm_entry/kvm_exit tell them apart)</text>\n", y + 18, y + 28,
			g->ambiguous);
	fputs("</svg>\n", g->out);
	return 0;
}

static void svg_free(struct drawn *d)
{
	struct svg *g = (struct svg *)d;

	free(g->sl);
	free(g->lanes);
	free(g->legend);
	free(g->open);
	free(g->ex);
	free(g->quiet);
	free(g->last);
	free(g->sil);
	free(g->lates.at);
	free(g->lates.delay);
	free(g);
}

/* "KEY":N in @line (KEY with its quotes and colon): N */
static bool json_num(const char *line, const char *key, long long *v)
{
	const char *p = strstr(line, key);

	return p && sscanf(p + strlen(key), "%lld", v) == 1;
}

static bool json_u64(const char *line, const char *key, uint64_t *v)
{
	long long n;

	if (!json_num(line, key, &n) || n < 0)
		return false;
	*v = n;
	return true;
}

/* "KEY":"S" in @line: S, its escapes undone */
static bool json_str(const char *line, const char *key, char *buf, size_t len)
{
	const char *p = strstr(line, key);
	size_t n = 0;

	if (!p || !len)
		return false;
	for (p += strlen(key); *p && *p != '"'; p++) {
		if (*p == '\\' && p[1])
			p++;
		if (n + 1 < len)
			buf[n++] = *p;
	}
	buf[n] = '\0';
	return *p == '"';
}

static int by_ns(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* A late line's "parts": {"cause":"host_task","task":"e2e_hog","ns":4705000}, the largest first */
static void parse_parts(struct window *w, const char *line)
{
	const char *p = strstr(line, "\"parts\":[");
	const char *end = p ? strchr(p, ']') : NULL;

	while (p && w->nr_parts < PARTS_MAX && (p = strstr(p, "{\"cause\":\"")) && p < end) {
		struct part *pt = &w->part[w->nr_parts];

		if (json_str(p, "{\"cause\":\"", pt->key, sizeof(pt->key)) &&
		    json_str(p, "\"task\":\"", pt->task, sizeof(pt->task)) &&
		    json_u64(p, "\"ns\":", &pt->ns))
			w->nr_parts++;
		p++;
	}
	qsort(w->part, w->nr_parts, sizeof(*w->part), by_ns);
}

/* The worst late wake-up (rank 1): the window */
static void parse_worst(struct window *w, const char *line)
{
	long long cpu, host_cpu;

	if (!json_u64(line, "\"expected_ns\":", &w->expected) ||
	    !json_u64(line, "\"running_ns\":", &w->running) ||
	    !json_u64(line, "\"delay_ns\":", &w->delay) ||
	    !json_str(line, "\"guest\":\"", w->guest, sizeof(w->guest)) ||
	    !json_str(line, "\"comm\":\"", w->comm, sizeof(w->comm)) ||
	    !json_num(line, "\"cpu\":", &cpu) || !json_num(line, "\"pid\":", &w->pid) ||
	    w->running < w->expected)
		return;
	w->gcpu = (int)cpu;
	w->host_cpu = json_num(line, "\"host_cpu\":", &host_cpu) ? (int)host_cpu : -1;
	parse_parts(w, line);
	w->found = true;
}

static int add_late(struct lates *lt, const char *line)
{
	uint64_t at, delay;

	if (!json_u64(line, "\"expected_ns\":", &at) || !json_u64(line, "\"delay_ns\":", &delay))
		return 0;
	if (lt->nr == lt->max) {
		size_t max = lt->max ? 2 * lt->max : 1024;
		uint64_t *a = realloc(lt->at, max * sizeof(*a)), *d;

		if (!a)
			return -1;
		lt->at = a;
		d = realloc(lt->delay, max * sizeof(*d));
		if (!d)
			return -1;
		lt->delay = d;
		lt->max = max;
	}
	lt->at[lt->nr] = at;
	lt->delay[lt->nr++] = delay;
	return 0;
}

/* {"type":"host_cpu","cpu":1,...,"quiet_ns":12001158,...}: a silence that long is not running */
static int parse_quiet(struct svg *g, const char *line)
{
	long long cpu;
	uint64_t quiet;

	if (!json_num(line, "\"cpu\":", &cpu) || !json_u64(line, "\"quiet_ns\":", &quiet) ||
	    cpu < 0 || cpu >= HOST_CPUS_MAX)
		return 0;
	if (!g->quiet) {
		g->quiet = calloc(HOST_CPUS_MAX, sizeof(*g->quiet));
		g->last = calloc(HOST_CPUS_MAX, sizeof(*g->last));
		if (!g->quiet || !g->last)
			return -1;
	}
	g->quiet[cpu] = quiet;
	return 0;
}

/*
 * --explain's JSON lines (main.c runs it in jsonl with every late wake-up):
 * the summary's counts, every late wake-up's time and delay, the worst's
 * window; -1 when out of memory
 */
static int parse_explain(struct svg *g, const char *text)
{
	long long rank;

	g->win.host_cpu = -1;
	for (const char *line = text; line && *line; ) {
		const char *end = strchrnul(line, '\n');
		char *one = strndup(line, end - line);

		if (!one)
			return -1;
		if (!strncmp(one, "{\"type\":\"summary\",", 18)) {
			/* after "tids_left_out", whose threads have "wakeups" of their own */
			const char *t = strstr(one, "\"threshold_ns\":");

			if (t) {
				json_u64(t, "\"threshold_ns\":", &g->lates.threshold);
				json_u64(t, "\"wakeups\":", &g->lates.wakeups);
			}
			if (!json_str(one, "\"task\":\"", g->lates.what, sizeof(g->lates.what)))
				snprintf(g->lates.what, sizeof(g->lates.what), "the guest tasks");
		} else if (!strncmp(one, "{\"type\":\"host_cpu\",", 19)) {
			if (parse_quiet(g, one)) {
				free(one);
				return -1;
			}
		} else if (!strncmp(one, "{\"type\":\"late\",", 15)) {
			if (json_num(one, "\"rank\":", &rank) && rank == 1)
				parse_worst(&g->win, one);
			if (add_late(&g->lates, one)) {
				free(one);
				return -1;
			}
		}
		free(one);
		line = *end ? end + 1 : end;
	}
	return 0;
}

/* The view around the worst wake-up: its delay, a quarter of it (at least 0.1 ms) either side */
static void window_view(const struct window *w, uint64_t *from, uint64_t *to)
{
	uint64_t pad = (w->running - w->expected) / 4;

	if (pad < 100000)
		pad = 100000;
	*from = w->expected > pad ? w->expected - pad : 0;
	*to = w->running + pad;
}

static const struct sched_ops svg_ops = {
	.slice		= on_slice,
	.instant	= on_instant,
	.event		= on_event,
};

struct drawn *svg_open(FILE *out, const struct merge_opts *opts)
{
	struct svg *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->out = out;
	g->opts = opts;
	g->d.finish = svg_finish;
	g->d.free = svg_free;
	g->d.t = sched_tracker_new(opts, &svg_ops, g);
	if (!g->d.t) {
		free(g);
		return NULL;
	}
	g->v1 = UINT64_MAX;
	if (opts->explain_text && parse_explain(g, opts->explain_text))
		g->oom = true;
	if (g->win.found && !opts->from_ns && opts->to_ns == UINT64_MAX)
		window_view(&g->win, &g->v0, &g->v1);
	return &g->d;
}
