// SPDX-License-Identifier: GPL-2.0
/* out-svg.c: --format svg: a self-contained SVG timeline of every CPU's tasks. */
/*
 *   vtrace-merge: host + g1 on the host TSC            4.000000 .. 4.067812 s
 *   host cpu 0       |CPU 0/KVM=================================|
 *   host cpu 1       |CPU 1/KVM==========|e2e_hog|CPU 1/KVM=====|
 *   g1 cpu 0 (vCPU 0)|                                          |
 *     on host        |host cpu 0================================|
 *   g1 cpu 1 (vCPU 1)|  | |  | |  | |      :     :|  | |  | |  |
 *     on host        |host cpu 1=========|      :     :|=========|
 *                    4.00    4.01    4.02 4.03 4.04  4.05    4.06
 *   [explanation text, with --explain]
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
 * 1/KVM").  With
 * --explain, the window from the expected wake-up to the task running is
 * shaded, its two CPUs outlined, and the explanation printed below.
 *
 * Slices are kept in memory (about 48 bytes each) and drawn at the end;
 * one narrower than a pixel is drawn a pixel wide, unless one was already
 * drawn in that pixel of its lane (those are counted and left out).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "out-sched.h"
#include "vtrace-util.h"

#define WIDTH		1600
#define LABEL_W		250
#define RIGHT_M		30
#define TOP		56
#define LANE_H		22
#define SUB_H		10
#define GAP		4
#define LEGEND_MAX	16
#define VCPU_COLOR	"#4c78a8"

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

struct lane {
	int		mi;
	int		cpu;
	bool		sub;		/* a guest CPU's "on host" lane */
	int		y;
	int		h;
	int		last_px;	/* of the last narrow slice drawn */
};

/* what --explain found, read back from its text */
struct window {
	bool		found;
	uint64_t	expected;
	uint64_t	running;
	char		guest[64];
	int		gcpu;
	int		host_cpu;
	char		delay[32];
	char		comm[SCHED_COMM_LEN + 1];
	uint64_t	irq;		/* timer irq, 0: none */
	uint64_t	woken;		/* sched_wakeup, 0: none */
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
	struct window		win;
	uint64_t		v0;		/* the view, with --explain */
	uint64_t		v1;
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
	n->vcpu = sched_tracker_machine(g->d.t, s->mi)->guest ? -1 : sched_vcpu_of(n->comm);
	n->from = s->from;
	n->to = s->to;
	n->ambiguous = sched_slice_ambiguous(s);
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

static double x_of(struct svg *g, uint64_t ns)
{
	double span = g->t1 > g->t0 ? (double)(g->t1 - g->t0) : 1;

	if (ns < g->t0)
		ns = g->t0;
	if (ns > g->t1)
		ns = g->t1;
	return LABEL_W + (ns - g->t0) * (WIDTH - LABEL_W - RIGHT_M) / span;
}

static void color_of(const char *comm, char *buf, size_t len)
{
	uint32_t h = 2166136261u;

	if (sched_vcpu_of(comm) >= 0) {
		snprintf(buf, len, VCPU_COLOR);
		return;
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

		color_of(s->comm, color, sizeof(color));
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

static void draw_axis(struct svg *g, int y)
{
	uint64_t step = tick_step(g->t1 - g->t0), t = g->t0 / step * step;
	bool ticks = g->t0 <= g->t1;
	int decimals = 0;

	/* the first multiple of step from t0 on, if there is one below 2^64 */
	if (t < g->t0) {
		ticks = ticks && t <= UINT64_MAX - step;
		t += ticks ? step : 0;
	}

	for (uint64_t s = step; s < 1000000000 && decimals < 9; s *= 10)
		decimals++;
	fprintf(g->out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n",
		LABEL_W, y, WIDTH - RIGHT_M, y);
	for (; ticks && t <= g->t1; t += step) {
		double x = x_of(g, t);
		char num[32];

		snprintf(num, sizeof(num), "%" PRIu64 ".%09" PRIu64, t / 1000000000,
			 t % 1000000000);
		num[strlen(num) - 9 + decimals - (decimals ? 0 : 1)] = '\0';
		fprintf(g->out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"tick\"/>"
			"<text x=\"%.2f\" y=\"%d\" class=\"tk\">%s</text>\n", x, TOP - 4, x, y + 4,
			x, y + 16, num);
		if (g->t1 - t < step)
			break;		/* t + step would pass t1, or wrap */
	}
}

/* Sum of each task's time, the longest first, for the legend */
static int by_time(const void *a, const void *b)
{
	const struct svg_slice *x = a, *y = b;

	return x->to < y->to ? 1 : x->to > y->to ? -1 : strcmp(x->comm, y->comm);
}

static void draw_legend(struct svg *g, int y)
{
	struct svg_slice *sum = calloc(LEGEND_MAX * 4, sizeof(*sum));
	int nr = 0, x = LABEL_W;
	char color[40];

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
	for (int k = 0; k < nr && k < LEGEND_MAX; k++) {
		color_of(sum[k].comm, color, sizeof(color));
		fprintf(g->out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"lg\">", x, y, color, x + 16, y + 10);
		put_text(g->out, sum[k].comm);
		fputs("</text>\n", g->out);
		x += 150;
		if (x > WIDTH - 150) {
			x = LABEL_W;
			y += 18;
		}
	}
	free(sum);
}

/* A dashed line at @ns across the lanes, @what at its foot, left or right of it */
static void draw_mark(struct svg *g, uint64_t ns, const char *what, int bottom, bool left)
{
	double x = x_of(g, ns);

	if (!ns)
		return;
	fprintf(g->out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"mark2\"/>"
		"<text x=\"%.2f\" y=\"%d\" class=\"ml\" text-anchor=\"%s\"><title>", x,
		TOP - 4, x, bottom, left ? x - 2 : x + 2, bottom - 3, left ? "end" : "start");
	put_ns(g->out, ns);
	fprintf(g->out, "</title>%s</text>\n", what);
}

static void draw_window(struct svg *g, int bottom)
{
	struct window *w = &g->win;
	double x0 = x_of(g, w->expected), x1 = x_of(g, w->running);
	struct lane *l;

	fprintf(g->out, "<g id=\"explain\"><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"class=\"win\"/>\n", x0, TOP - 8, x1 - x0, bottom - TOP + 8);
	fprintf(g->out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"edge\"/>"
		"<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" class=\"edge\"/>\n",
		x0, TOP - 8, x0, bottom, x1, TOP - 8, x1, bottom);
	fprintf(g->out, "<text x=\"%.2f\" y=\"%d\" class=\"wl\" text-anchor=\"end\">expected ",
		x0 - 3, TOP - 10);
	put_ns(g->out, w->expected);
	fprintf(g->out, "</text><text x=\"%.2f\" y=\"%d\" class=\"wl\">running ", x1 + 3, TOP - 10);
	put_ns(g->out, w->running);
	fprintf(g->out, "</text><text x=\"%.2f\" y=\"%d\" class=\"wl\" text-anchor=\"middle\">",
		(x0 + x1) / 2, TOP - 22);
	put_text(g->out, w->comm);
	fputs(" late by ", g->out);
	put_text(g->out, w->delay);
	fputs("</text>\n", g->out);
	draw_mark(g, w->irq, "timer irq", bottom, true);
	draw_mark(g, w->woken, "woken", bottom, false);
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

/* The explanation's lines, up to its timeline; returns the next y */
static int draw_explanation(struct svg *g, int y)
{
	const char *p = g->opts->explain_text;

	if (!p)
		return y;
	fprintf(g->out, "<text class=\"ex\" x=\"20\" y=\"%d\">", y);
	while (*p && strncmp(p, "Timeline (", 10)) {
		const char *nl = strchrnul(p, '\n');
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		fprintf(g->out, "<tspan x=\"20\" dy=\"15\" xml:space=\"preserve\">");
		put_text(g->out, line);
		fputs("</tspan>", g->out);
		y += 15;
		p = *nl ? nl + 1 : nl;
	}
	fputs("</text>\n", g->out);
	return y + 10;
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
	      ".win{fill:#e45756;fill-opacity:0.15}.edge{stroke:#c0392b;stroke-width:1.5}\n"
	      ".wl{font-size:11px;fill:#c0392b;font-weight:bold}\n"
	      ".mark{fill:none;stroke:#c0392b;stroke-width:2}\n"
	      ".mark2{stroke:#c0392b;stroke-dasharray:4,3}.ml{font-size:10px;fill:#c0392b}\n"
	      ".ex{font-family:DejaVu Sans Mono, monospace;font-size:12px;fill:#222}\n"
	      ".title{font-size:15px;font-weight:bold}\n"
	      ".amb{stroke:#c0392b;stroke-width:2;stroke-dasharray:3,2}\n"
	      "</style>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", g->out);
}

/* The self-check's verdict under the title: a FAILED or unverified picture says so */
static void put_verdict(struct svg *g)
{
	const char *v = g->opts->verdict ? g->opts->verdict(g->opts->verdict_priv) : NULL;

	if (!v)
		return;
	fprintf(g->out, "<text x=\"20\" y=\"38\" class=\"lg\"%s>self-check: ",
		strstr(v, "FAILED") || !strncmp(v, "unverified", 10) ? " fill=\"#c00000\"" : "");
	put_text(g->out, v);
	fputs("</text>\n", g->out);
}

static void put_title(struct svg *g)
{
	int nr = sched_tracker_machines(g->d.t);

	fputs("<text x=\"20\" y=\"20\" class=\"title\">vtrace: ", g->out);
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
	put_verdict(g);
}

static int count_lines(const char *p)
{
	int n = 0;

	while (p && *p && strncmp(p, "Timeline (", 10)) {
		n++;
		p = strchrnul(p, '\n');
		p += *p ? 1 : 0;
	}
	return n;
}

static int svg_finish(struct drawn *d)
{
	struct svg *g = (struct svg *)d;
	int y = TOP, axis, height;

	g->t0 = sched_tracker_first(d->t);
	if (g->opts->from_ns && g->opts->from_ns < g->t0)
		g->t0 = g->opts->from_ns;
	g->t1 = sched_tracker_last(d->t);
	if (g->v0 || g->v1 != UINT64_MAX) {
		g->t0 = g->v0;
		g->t1 = g->v1;
	}
	if (g->oom || layout(g, &y)) {
		vtrace_set_error("--format svg: out of memory");
		return -1;
	}
	axis = y + 4;
	height = axis + 30 + 18 * (LEGEND_MAX * 150 / (WIDTH - LABEL_W) + 2) +
		 15 * count_lines(g->opts->explain_text) + 40;
	put_head(g, height);
	put_title(g);
	draw_labels(g);
	draw_slices(g);
	if (g->win.found)
		draw_window(g, axis);
	draw_axis(g, axis);
	draw_legend(g, axis + 30);
	y = draw_explanation(g, axis + 30 + 18 * (LEGEND_MAX * 150 / (WIDTH - LABEL_W) + 1));
	if (g->hidden)
		fprintf(g->out, "<text x=\"20\" y=\"%d\" class=\"lg\">%" PRIu64 " more slices "
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
	free(g);
}

/* "  expected   4.040295000 ..." in --explain's text: ns */
static bool find_time(const char *text, const char *tag, uint64_t *ns)
{
	const char *p = strstr(text, tag);
	unsigned long long s, f;

	if (!p || sscanf(p + strlen(tag), " %llu.%9llu", &s, &f) != 2)
		return false;
	*ns = s * 1000000000ULL + f;
	return true;
}

static void parse_window(struct window *w, const char *text)
{
	const char *p;

	w->host_cpu = -1;
	if (!text || !find_time(text, "\n  expected", &w->expected) ||
	    !find_time(text, "\n  running", &w->running))
		return;
	p = strstr(text, " in guest ");
	if (!p || sscanf(p, " in guest %63[^:]: %31[^\n]", w->guest, w->delay) != 2)
		return;
	p = strstr(text, "\n  task");
	if (!p || sscanf(p, "\n  task %16s", w->comm) != 1)
		return;
	p = strstr(p, "on guest cpu ");
	if (!p || sscanf(p, "on guest cpu %d", &w->gcpu) != 1)
		return;
	p = strstr(text, "), on host cpu ");
	if (p)
		sscanf(p, "), on host cpu %d", &w->host_cpu);
	if (!find_time(text, "\n  timer irq", &w->irq))
		w->irq = 0;
	if (!find_time(text, "\n  woken", &w->woken))
		w->woken = 0;
	w->found = true;
}

/* The view around an explained wake-up: its delay, and half of it (at least 0.1 ms) either side */
static void window_view(const struct window *w, uint64_t *from, uint64_t *to)
{
	uint64_t pad = (w->running - w->expected) / 2;

	if (pad < 100000)
		pad = 100000;
	*from = w->expected > pad ? w->expected - pad : 0;
	*to = w->running + pad;
}

/**
 * svg_explain_window - --explain --format svg: stop the merge after the view
 *
 * @opts->explain_text holds --explain's text.  Unless --from/--to were
 * given, the picture shows the wake-up (window_view()); the merge still
 * starts at the beginning, so that every CPU's task at the view's start is
 * known.
 */
int svg_explain_window(struct merge_opts *opts)
{
	struct window w = { 0 };
	uint64_t from;

	parse_window(&w, opts->explain_text);
	if (w.found && !opts->from_ns && opts->to_ns == UINT64_MAX)
		window_view(&w, &from, &opts->to_ns);
	return 0;
}

static const struct sched_ops svg_ops = {
	.slice	= on_slice,
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
	parse_window(&g->win, opts->explain_text);
	g->v1 = UINT64_MAX;
	if (g->win.found && !opts->from_ns)
		window_view(&g->win, &g->v0, &g->v1);
	return &g->d;
}
