// SPDX-License-Identifier: GPL-2.0
/* ticks.c: each host cpu's tick, measured from the host trace, for --explain's host not running. */
/*
 * classify.c calls a stretch in which neither a vCPU's host cpu nor its
 * guest cpu recorded anything "host not running" when it lasts several of
 * that host cpu's ticks: a host cpu that runs takes its local timer
 * interrupt (irq_vectors:local_timer_entry) at least once a tick while
 * busy.  How long a tick is depends on the host (HZ 1000, 300, 250 or 100),
 * and a nohz_full cpu running one task takes none for seconds: so the tick
 * is read from the trace, per host cpu, before --explain's first pass.
 *
 * Its pass (ticks_open(), ticks_pass(); vtrace-merge's main runs it before
 * --explain's first pass) reads the host trace alone from its start (the
 * guests left out) and keeps, per host cpu, the intervals between its
 * local_timer_entry events while the cpu was busy: a task, not the idle
 * task, on it at the first of the two and no switch to idle in between
 * (an idle cpu stops its tick: its intervals say nothing).  It stops when
 * every host cpu has TICK_SAMPLE of them, or TICK_SPAN_NS into the host
 * trace: the tick is the kernel's (HZ, nohz_full), the same all along.
 * What it found is published as data, struct host_ticks (merge-local.h),
 * which classify.c reads.
 *
 *   intervals while busy        the cpu's tick            quiet threshold
 *   none recorded at all        no tick recorded          none: not told apart
 *   fewer than TICK_MIN         too few ticks              none: not told apart
 *   median over TICK_MAX_NS     no regular tick            none: not told apart
 *                               (nohz_full, or the tick not taken while busy)
 *   median M                    M                         QUIET_TICKS x M, at
 *                                                         least QUIET_MIN_NS (3
 *                                                         ticks at HZ 1000)
 *
 * Every hrtimer expiry is a local timer interrupt too: a cpu whose hrtimers
 * fire more often than its tick (KVM's timer for a guest's 1 kHz timer on
 * AMD) has a median below its tick, and its threshold may be under 3 of its
 * ticks, never under QUIET_MIN_NS (3 ticks at HZ 1000).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "merge-local.h"

#define TICK_SAMPLE	256		/* busy intervals kept per host cpu */
#define TICK_SPAN_NS	60000000000ULL	/* read at most this far into the host trace */
#define TICK_MIN	16		/* fewer busy intervals: the tick is not known */
#define TICK_MAX_NS	15000000	/* a longer median is no tick: HZ 100's is 10 ms */

struct tick_cpu {
	uint64_t	last;		/* its last local_timer_entry, 0 none yet */
	bool		busy;		/* a task on it since then, no switch to idle */
	int		pid;		/* the task on it, -1 not seen */
	uint64_t	ticks;		/* local_timer_entry events read */
	int		n;		/* busy intervals kept */
	uint64_t	iv[TICK_SAMPLE];
	uint64_t	median;		/* of iv[], once measured */
};

struct ticks {
	struct host_ticks	res;		/* published at the pass's end */
	int			nr_cpus;
	int			full;		/* cpus with TICK_SAMPLE intervals */
	struct tick_cpu		*cpu;
	int			tick_id;
	bool			started;
	uint64_t		first;		/* the host trace's first event read */
};

static bool tick_event(void *priv, struct source *s, uint64_t ns)
{
	struct ticks *t = priv;
	int id = tep_data_type(s->m->tep, s->rec);
	struct tick_cpu *tc;

	if (!t->started)
		t->first = ns;
	t->started = true;
	if ((ns > t->first && ns - t->first > TICK_SPAN_NS) || t->full == t->nr_cpus)
		return true;
	if (s->cpu < 0 || s->cpu >= t->nr_cpus)
		return false;
	tc = &t->cpu[s->cpu];
	if (s->sw) {
		tc->pid = s->sw->next_pid;
		if (!tc->pid)
			tc->busy = false;
	} else if (id == t->tick_id) {
		tc->ticks++;
		if (tc->last && tc->busy && ns > tc->last && tc->n < TICK_SAMPLE) {
			tc->iv[tc->n++] = ns - tc->last;
			if (tc->n == TICK_SAMPLE)
				t->full++;
		}
		tc->last = ns;
		tc->busy = tc->pid != 0;	/* -1: no sched_switch seen, taken as busy */
	}
	return false;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * What one host cpu's intervals say: its tick (the median interval while
 * busy), the silence that is the host not running, or why none is
 */
static void publish(const struct tick_cpu *tc, struct host_tick *ht)
{
	ht->median = tc->median;
	ht->intervals = tc->n;
	ht->ticks = tc->ticks;
	ht->why_key = "";
	if (!tc->ticks) {
		ht->why_key = "no_tick";
		ht->why = "no tick recorded";
	} else if (tc->n < TICK_MIN) {
		ht->why_key = "too_few_ticks";
		ht->why = "too few ticks recorded while busy";
	} else if (tc->median > TICK_MAX_NS) {
		ht->why_key = "no_regular_tick";
		ht->why = "no regular tick while busy (nohz_full?)";
	} else {
		ht->quiet_ns = tc->median * QUIET_TICKS > QUIET_MIN_NS ?
			       tc->median * QUIET_TICKS : QUIET_MIN_NS;
	}
}

static int ticks_end(void *priv, bool failed)
{
	struct ticks *t = priv;

	if (failed)
		return 0;
	for (int i = 0; i < t->nr_cpus; i++) {
		struct tick_cpu *tc = &t->cpu[i];

		qsort(tc->iv, tc->n, sizeof(tc->iv[0]), cmp_u64);
		tc->median = tc->n ? tc->iv[(tc->n - 1) / 2] : 0;
		publish(tc, &t->res.cpu[i]);
	}
	return 0;
}

/**
 * ticks_open - the tick measure of @machines' host trace, from its start
 *
 * Its pass reads the host alone: the guests are deselected (@machines are
 * for this pass only).  NULL without a host or without local_timer_entry in
 * its trace (@err false), or on error (@err set).
 */
struct ticks *ticks_open(struct machine **machines, int nr, bool *err)
{
	struct machine *host = NULL;
	struct ticks *t;

	*err = false;
	for (int i = 0; i < nr; i++) {
		if (!machines[i]->guest && !host)
			host = machines[i];
		else
			machines[i]->selected = false;
	}
	if (!host || !tep_find_event_by_name(host->tep, "irq_vectors", "local_timer_entry"))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t) {
		t->cpu = calloc(host->nr_cpus, sizeof(*t->cpu));
		t->res.cpu = calloc(host->nr_cpus, sizeof(*t->res.cpu));
	}
	if (!t || !t->cpu || !t->res.cpu) {
		ticks_free(t);
		*err = true;
		return NULL;
	}
	t->nr_cpus = t->res.nr_cpus = host->nr_cpus;
	t->tick_id = tep_find_event_by_name(host->tep, "irq_vectors", "local_timer_entry")->id;
	for (int i = 0; i < t->nr_cpus; i++)
		t->cpu[i].pid = -1;
	return t;
}

struct merge_pass ticks_pass(struct ticks *t)
{
	return (struct merge_pass){ .event = tick_event, .end = ticks_end, .priv = t };
}

/* What the measure found, once its pass ended */
const struct host_ticks *ticks_result(const struct ticks *t)
{
	return t ? &t->res : NULL;
}

void ticks_free(struct ticks *t)
{
	if (!t)
		return;
	free(t->res.cpu);
	free(t->cpu);
	free(t);
}
