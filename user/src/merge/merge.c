// SPDX-License-Identifier: GPL-2.0
/* merge.c: the engine: k-way merge of every CPU of every machine on the host TSC, to passes. */
/*
 * Each CPU of each machine is a source whose events are already in time
 * order (one ring buffer); a binary min-heap of the sources' head events,
 * keyed by (host TSC, machine, CPU), yields the global order.  Memory is
 * one page (or libtracecmd's page cache) per source, whatever the length
 * of the trace; time is O(events * log(sources)).  Events at the same host
 * TSC come out in command-line order (see before()).
 *
 * The engine knows no analysis and no output: each event goes to the passes
 * the caller composed (struct merge_pass), in their order, then each pass's
 * end is called.  A pass's read sees every event the sources read (the
 * self-check), its event only those printed (selected, within --from/--to).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>

#include "merge-local.h"
#include "vtrace-util.h"

struct heap {
	struct source	**s;
	int		nr;
};

/*
 * Exact ties on the host's TSC are broken by command-line order: the host,
 * then the guests in --guest order (machine->index), then the CPU number.
 */
static bool before(const struct source *a, const struct source *b)
{
	if (a->host_tsc != b->host_tsc)
		return a->host_tsc < b->host_tsc;
	if (a->m->index != b->m->index)
		return a->m->index < b->m->index;
	return a->cpu < b->cpu;
}

static void sift_down(struct heap *h, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, min = i;
		struct source *t;

		if (l < h->nr && before(h->s[l], h->s[min]))
			min = l;
		if (r < h->nr && before(h->s[r], h->s[min]))
			min = r;
		if (min == i)
			return;
		t = h->s[i];
		h->s[i] = h->s[min];
		h->s[min] = t;
		i = min;
	}
}

static void sift_up(struct heap *h, int i)
{
	while (i > 0) {
		int p = (i - 1) / 2;
		struct source *t;

		if (!before(h->s[i], h->s[p]))
			return;
		t = h->s[i];
		h->s[i] = h->s[p];
		h->s[p] = t;
		i = p;
	}
}

static void heap_push(struct heap *h, struct source *s)
{
	h->s[h->nr] = s;
	sift_up(h, h->nr++);
}

static void heap_pop(struct heap *h)
{
	h->s[0] = h->s[--h->nr];
	sift_down(h, 0);
}

struct progress {
	bool		on;
	uint64_t	events;
	time_t		last;
};

static void progress_tick(struct progress *p, const struct source *s, const struct merge_opts *o)
{
	time_t now;

	if (!p->on || ++p->events % 65536)
		return;
	now = time(NULL);
	if (now == p->last)
		return;
	p->last = now;
	if (o->khz)
		fprintf(stderr, "\rvtrace-merge: %llu events, at %.3f s   ",
			(unsigned long long)p->events,
			vtrace_tsc_to_ns(s->host_tsc, o->khz) / 1e9);
	else
		fprintf(stderr, "\rvtrace-merge: %llu events   ", (unsigned long long)p->events);
	fflush(stderr);	/* a progress line has no newline: stderr is line-buffered */
}

static void account(struct source *s, uint64_t ns)
{
	s->printed++;
	if (s->first_tsc == UINT64_MAX) {
		s->first_tsc = s->host_tsc;
		s->first_ns = ns;
	}
	s->last_tsc = s->host_tsc;
	s->last_ns = ns;
}

/* The passes that see every event read, apart: most runs have none or one */
struct readers {
	struct merge_pass	*p;
	int			nr;
};

static int fill_heap(struct heap *h, struct machine **machines, int nr,
		     const struct merge_opts *opts, const struct readers *rd)
{
	int total = 0;

	for (int i = 0; i < nr; i++)
		total += machines[i]->nr_cpus;
	h->s = calloc(total + 1, sizeof(*h->s));
	if (!h->s)
		return -1;
	for (int i = 0; i < nr; i++) {
		struct machine *m = machines[i];

		for (int c = 0; c < m->nr_cpus; c++) {
			int ret = m->selected || opts->stats ?
				  source_advance(&m->cpus[c], rd->p, rd->nr) : 0;

			if (ret < 0)
				return -1;
			if (ret > 0)
				heap_push(h, &m->cpus[c]);
		}
	}
	return 0;
}

/* An event to every pass that takes events; true: one of them stops the merge */
static bool feed(const struct merge_pass *passes, int nr, struct source *s, uint64_t ns)
{
	bool stop = false;

	for (int i = 0; i < nr; i++)
		if (passes[i].event && passes[i].event(passes[i].priv, s, ns))
			stop = true;
	return stop;
}

static int end_passes(const struct merge_pass *passes, int nr, bool failed)
{
	int ret = 0;

	for (int i = 0; i < nr; i++)
		if (passes[i].end && passes[i].end(passes[i].priv, failed))
			ret = -1;
	return ret;
}

/**
 * merge_run - every event of @machines, in host TSC order, to @passes
 *
 * Returns 0, or -1 with an error set (a source that cannot be read, or a
 * pass's end that failed); every pass's end is called in either case.
 */
int merge_run(struct machine **machines, int nr, const struct merge_opts *opts,
	      const struct merge_pass *passes, int nr_passes)
{
	struct progress prog = { .on = opts->progress };
	struct readers rd = { 0 };
	struct heap h = { 0 };
	bool stop = false;
	int ret = -1;

	rd.p = calloc(nr_passes + 1, sizeof(*rd.p));
	if (!rd.p)
		goto error;
	for (int i = 0; i < nr_passes; i++)
		if (passes[i].read)
			rd.p[rd.nr++] = passes[i];
	if (fill_heap(&h, machines, nr, opts, &rd))
		goto error;
	while (h.nr && !stop) {
		struct source *s = h.s[0];
		uint64_t ns = opts->khz ? vtrace_tsc_to_ns(s->host_tsc, opts->khz) : s->host_tsc;
		int r;

		/*
		 * Past --to, every source is still read to its end: one whose time
		 * goes back (counted out of order) may come back into the window.
		 */
		if (ns >= opts->from_ns && ns <= opts->to_ns && s->m->selected) {
			account(s, ns);
			source_decode(s);
			stop = feed(passes, nr_passes, s, ns);
		}
		progress_tick(&prog, s, opts);
		r = source_advance(s, rd.p, rd.nr);
		if (r < 0)
			goto error;
		if (r == 0)
			heap_pop(&h);
		else
			sift_down(&h, 0);
	}
	ret = 0;
error:
	if (prog.on && prog.events >= 65536)
		fputs("\n", stderr);
	if (end_passes(passes, nr_passes, ret < 0))
		ret = -1;
	free(rd.p);
	free(h.s);
	return ret;
}
