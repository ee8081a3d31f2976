// SPDX-License-Identifier: GPL-2.0
/* check.c: the self-check: every guest event must fall where its vCPU could run guest code. */
/*
 * The host trace knows when each vCPU could run guest code.  The vCPU is a
 * thread of QEMU named "CPU N/KVM"; between a sched_switch to it and the
 * next sched_switch from it, it is on a host CPU (a "run span").  When the
 * host recorded kvm:kvm_entry and kvm:kvm_exit, the guest runs only between
 * an entry and the next exit of that thread (a "guest window"), a much
 * narrower span.  A guest event is a time stamp the guest read while it
 * ran, so once put on the host's TSC it must fall inside a span of its
 * vCPU's thread:
 *
 *   host cpu 1  ..idle..|== CPU 1/KVM ===========|..other task..|== CPU 1/KVM ==
 *                        [entry    exit][entry  exit]
 *   guest cpu 1             x   x          x                        x
 *                                                      ^ outside: wrong times
 *
 * Before the merge, one pass over the host trace (its own reader, raw time
 * stamps) collects the spans of every "CPU N/KVM" thread, sorted.  During
 * the merge every guest event read is looked up in the spans of the
 * threads named after its vCPU (a cursor, the events of one CPU being in
 * time order).  Per guest CPU: events checked, outside (farther than
 * VTRACE_VCPU_TOLERANCE_NS from every span), the worst distance outside, and the
 * smallest distance of an inside event to its span's start and to its
 * span's end: a constant error e in the guest's times keeps every event
 * inside only if -min_to_end <= e <= min_to_start, so the check proves
 * |e| <= max(min_to_start, min_to_end), the "bound".
 *
 * Only guest events within the host trace (first to last host event, all
 * CPUs) are checked; spans cut by the trace's start or end run to it.
 * Several threads with the vCPU's name (several VMs): the one whose spans
 * hold the most events is taken, and said.  The spans and that choice are
 * src/lib/vcpu.c's, each guest CPU's check src/lib/check-core.c's, which
 * vtrace dat's self-check and GUEST option use too.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "merge-local.h"
#include "vtrace-capture.h"
#include "vtrace-check.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

#define container_of(p, type, member)	((type *)((char *)(p) - offsetof(type, member)))

struct check_cpu {
	struct source		*s;
	struct vtrace_check_cpu	core;		/* src/lib/check-core.c */
	const struct check	*c;
};

struct check {
	const char		**publish;	/* the verdict goes there at the end, or NULL */
	char			verdict[512];
	const char		*unverified;	/* why nothing can be checked, or NULL */
	char			why[512];
	uint64_t		tol;		/* VTRACE_VCPU_TOLERANCE_NS in TSC ticks */
	uint64_t		host_bad_pages;	/* skipped (--skip-bad-pages) */
	struct vtrace_vthreads	vt;		/* the host's vCPU threads (src/lib/vcpu.c) */
	struct check_cpu	*cpus;
	int			nr_cpus;
	uint64_t		khz;
	const struct vtrace_capture *capture;	/* vtrace-merge CAPTURE's manifest, or NULL */
};

/* ---- collecting the spans (src/lib/vcpu.c) */

/* A host dump folder, or a trace.dat read page by page (machine.c) */
static int walk_dump(struct check *c, struct machine *host)
{
	int ret = vtrace_vthreads_read_pages(&c->vt, host->dump ? host->dump : host->dat_pages,
					     &c->host_bad_pages);

	if (!ret && !c->vt.has_switch)
		c->unverified = "the host trace has no sched:sched_switch events";
	return ret;
}

/* ---- the guests' CPUs */

static int bind_cpu(struct check *c, struct check_cpu *cc, struct source *s)
{
	const struct vtrace_vcpu_history *h = s->map.hist;

	cc->s = s;
	cc->c = c;
	s->fit = &cc->core.fit;
	if (!h || h->vcpu_idx < 0)
		return 0;
	if (vtrace_check_cpu_init(&cc->core, &c->vt, h, c->khz))
		return -1;
	if (c->capture)
		cc->core.fit.named_tid = vtrace_capture_vcpu_tid(c->capture, s->m->name,
								  h->vcpu_id);
	/* its guest windows tell apart events two offset intervals map (src/lib/tsc.c) */
	vtrace_check_cpu_windows(&cc->core, &s->map);
	return 0;
}

/**
 * check_open - collect the host's spans and hook every guest CPU to them
 *
 * Returns NULL with an error set on a failure to read; a check that cannot
 * verify anything (no host, no sched_switch) is returned and says so.
 */
struct check *check_open(struct machine **ms, int nr, const struct merge_opts *opts)
{
	struct machine *host = nr && !ms[0]->guest ? ms[0] : NULL;
	struct check *c = calloc(1, sizeof(*c));
	int ret = 0, k = 0;

	if (!c)
		return NULL;
	c->khz = opts->khz;
	c->capture = opts->capture;
	c->tol = vtrace_check_tolerance(opts->khz);
	c->vt.lo = UINT64_MAX;
	for (int i = 0; i < nr; i++)
		if (ms[i]->guest)
			c->nr_cpus += ms[i]->nr_cpus;
	c->cpus = calloc(c->nr_cpus ? c->nr_cpus : 1, sizeof(*c->cpus));
	if (!c->cpus)
		goto error;
	if (!host)
		c->unverified = "no host trace (--host) to check against";
	else
		ret = walk_dump(c, host);
	if (ret)
		goto error;
	if (host && c->vt.lo == UINT64_MAX && !c->unverified)
		c->unverified = "the host trace holds no events";
	for (int i = 0; i < nr; i++)
		for (int cpu = 0; ms[i]->guest && cpu < ms[i]->nr_cpus; cpu++)
			if (bind_cpu(c, &c->cpus[k++], &ms[i]->cpus[cpu]))
				goto error;
	return c;
error:
	check_close(c);
	return NULL;
}

void check_close(struct check *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nr_cpus; i++) {
		vtrace_check_cpu_free(&c->cpus[i].core);
		if (!c->cpus[i].s)
			continue;
		c->cpus[i].s->fit = NULL;
		vtrace_tsc_map_set_windows(&c->cpus[i].s->map, NULL, NULL);
	}
	vtrace_vthreads_free(&c->vt);
	free(c->cpus);
	free(c);
}

/* Every event a source reads: a guest CPU's carries its check (bind_cpu()) */
static void check_read(void *priv, struct source *s)
{
	struct check_cpu *cc;

	(void)priv;
	if (!s->fit)
		return;
	cc = container_of(s->fit, struct check_cpu, core.fit);
	vtrace_check_cpu_event(&cc->core, s->host_tsc, !cc->c->unverified);
}

static int check_end(void *priv, bool failed)
{
	struct check *c = priv;

	(void)failed;
	if (c->publish)
		*c->publish = check_verdict(c, c->verdict, sizeof(c->verdict));
	return 0;
}

/**
 * check_pass - the self-check as a pass: it reads every event of the guests
 * @verdict:	where to publish the verdict at the pass's end (check_verdict()), for
 *		a pass after it that carries it (jsonl's last record); NULL: not wanted
 */
struct merge_pass check_pass(struct check *c, const char **verdict)
{
	c->publish = verdict;
	return (struct merge_pass){ .read = check_read, .end = check_end, .priv = c };
}

/**
 * check_offsets - do the offset records belong to the host trace's boot?
 *
 * An offsets file of another boot of the host has records whose host TSC
 * is after the host trace's last event (a longer boot) or, when the file
 * says where its copy ended ("# end"), a copy read before the trace began.
 */
int check_offsets(const struct check *c, struct vtrace_offsets *o, const char *path)
{
	uint64_t first, last, end;

	if (!c || !o || c->vt.lo == UINT64_MAX || !vtrace_offsets_range(o, &first, &last))
		return 0;
	if (vtrace_offsets_end(o, &end) && end < c->vt.lo) {
		vtrace_set_error("%s: this copy was read at host TSC %" PRIu64 ", before the host"
				 " trace's first event (%" PRIu64 "): the offsets of another boot of"
				 " the host, or of an earlier run; give the tsc_offsets read after this"
				 " recording", path, end, c->vt.lo);
		return -1;
	}
	if (first <= c->vt.hi)
		return 0;
	vtrace_set_error("%s: its first record is at host TSC %" PRIu64 ", after the host trace's"
			 " last event (%" PRIu64 "): the offsets of another boot of the host, or"
			 " of a later run; give the tsc_offsets read after this recording", path,
			 first, c->vt.hi);
	return -1;
}

/* ---- the report */

static uint64_t to_ns(const struct check *c, uint64_t tsc)
{
	return c->khz ? vtrace_tsc_to_ns(tsc, c->khz) : tsc;
}

/* The unit of to_ns(): the host's TSC cycles when its frequency is not known (--raw-tsc) */
static const char *unit(const struct check *c)
{
	return c->khz ? "ns" : "TSC cycles";
}

/* The CPU's events used its history's first interval, a snapshot of the event's enable */
static bool started_at_enable(const struct check_cpu *cc)
{
	const struct vtrace_tsc_map *map = &cc->s->map;

	return map->hist && map->hist->start_why == VTRACE_START_ENABLE && map->first_used == 0;
}

/* Why this CPU cannot be checked, or NULL */
static const char *cpu_unverified(const struct check *c, const struct check_cpu *cc,
				  char *buf, size_t size)
{
	const struct vtrace_vcpu_history *h = cc->s->map.hist;

	if (c->unverified)
		return c->unverified;
	if (!h || h->vcpu_idx < 0)
		return "its vCPU's index is not known (no offset history with vcpu_idx)";
	if (!cc->core.fit.nr_cand && c->vt.nr_entry) {
		snprintf(buf, size, "no thread \"CPU %d/KVM\" in the host trace's sched_switch"
			 " events, and no kvm_entry of vcpu_id %u", h->vcpu_idx, h->vcpu_id);
		return buf;
	}
	if (!cc->core.fit.nr_cand) {
		snprintf(buf, size, "no thread \"CPU %d/KVM\" in the host trace's sched_switch"
			 " events", h->vcpu_idx);
		return buf;
	}
	if (cc->core.seen && cc->core.fit.unchecked == cc->core.seen) {
		snprintf(buf, size, "none of its %" PRIu64 " events falls within the host trace",
			 cc->core.seen);
		return buf;
	}
	return NULL;
}

/*
 * Events two offset intervals map inside themselves (src/lib/tsc.c): how
 * many the guest windows told apart, how many were left where the offsets
 * alone put them (possibly wrong).  Nothing when there were none.
 */
static void ambiguity_line(const struct check_cpu *cc, FILE *f, const char *prefix)
{
	const struct vtrace_tsc_map *map = &cc->s->map;

	if (!map->ambiguous && !map->told_apart)
		return;
	fprintf(f, "%sguest %s cpu %d: %" PRIu64 " events read a guest TSC that two offset"
		" intervals map (the offset was set back): %" PRIu64 " told apart by"
		" kvm_entry..kvm_exit (%" PRIu64 " moved), %" PRIu64 " not", prefix,
		cc->s->m->name, cc->s->cpu, map->ambiguous + map->told_apart, map->told_apart,
		map->moved, map->ambiguous);
	if (map->ambiguous && map->in_guest)
		fprintf(f, ", left in the interval the offsets alone choose: their times may be"
			" wrong (both or neither of their host times fall in a kvm_entry..kvm_exit"
			" window of the vCPU)");
	else if (map->ambiguous)
		fprintf(f, ", left in the interval the offsets alone choose: their times may be"
			" wrong (record kvm:kvm_entry and kvm:kvm_exit on the host to tell them"
			" apart)");
	fputc('\n', f);
}

static void json_ambiguity(const struct check_cpu *cc, FILE *f)
{
	const struct vtrace_tsc_map *map = &cc->s->map;

	fprintf(f, "\"ambiguous\": %" PRIu64 ", \"told_apart\": %" PRIu64 ", \"moved\": %" PRIu64
		", ", map->ambiguous, map->told_apart, map->moved);
}

static void ambiguity_lines(const struct check *c, FILE *f, const char *prefix)
{
	for (int i = 0; i < c->nr_cpus; i++)
		if (c->cpus[i].s)
			ambiguity_line(&c->cpus[i], f, prefix);
}

/* Events of every guest CPU left ambiguous (not told apart) */
static uint64_t ambiguous_events(const struct check *c)
{
	uint64_t n = 0;

	for (int i = 0; i < c->nr_cpus; i++)
		if (c->cpus[i].s)
			n += c->cpus[i].s->map.ambiguous;
	return n;
}

/* "unverified: WHY", and the ambiguous events' count, which nothing proved either */
static void unverified_line(const struct check *c, FILE *f, const char *why)
{
	uint64_t amb = ambiguous_events(c);

	fprintf(f, "vtrace-merge: self-check: unverified: %s", why);
	if (amb)
		fprintf(f, "; %" PRIu64 " ambiguous events (above) whose times may be wrong", amb);
	fputc('\n', f);
}

struct totals {
	struct vtrace_check_sum	sum;		/* the verified CPUs' (src/lib/check-core.c) */
	uint64_t		ambiguous;	/* of them: events whose time is not proved */
	int			verified, unverified;
};

/* A capture's manifest names the vCPU's host thread, read while the VM ran: the fit must agree */
static void manifest_tid(const struct check *c, const struct check_cpu *cc, int tid)
{
	int want;

	if (!c->capture || !cc->s->map.hist)
		return;
	want = vtrace_capture_vcpu_tid(c->capture, cc->s->m->name,
				       cc->s->map.hist->vcpu_id);
	if (want > 0 && want != tid)
		vtrace_warn("self-check: guest %s cpu %d: its events fit host tid %d, but the"
			    " capture's manifest names tid %d, read while the VM ran: a thread"
			    " id reused, or the events of another VM", cc->s->m->name,
			    cc->s->cpu, tid, want);
}

static void cpu_line(const struct check *c, const struct check_cpu *cc, FILE *f, bool json,
		     const char *prefix, struct totals *t)
{
	bool amb;
	const struct vtrace_vcpu_cand *k = vtrace_vcpu_fit_best(&cc->core.fit, &amb);
	const char *why, *key;
	uint64_t b;
	char buf[160], bound[24], name[64];

	why = cpu_unverified(c, cc, buf, sizeof(buf));
	if (json) {
		fprintf(f, "{\"self_check\": {\"machine\": \"%s\", \"cpu\": %d, ", cc->s->m->name,
			cc->s->cpu);
		json_ambiguity(cc, f);
		if (why) {
			fprintf(f, "\"verified\": false, \"events\": %" PRIu64 ", \"why\": \"%s\"}}\n",
				cc->core.seen, why);
			return;
		}
		b = vtrace_check_bound(k);
		/* JSON's null when nothing is proved */
		if (b == UINT64_MAX)
			snprintf(bound, sizeof(bound), "null");
		else
			snprintf(bound, sizeof(bound), "%" PRIu64, to_ns(c, b));
		fprintf(f, "\"verified\": %s, \"checked\": %" PRIu64 ", \"outside\": %" PRIu64
			", \"worst_ns\": %" PRIu64 ", \"bound_ns\": %s, \"unchecked\": %"
			PRIu64 ", \"in_host_loss\": %" PRIu64 ", \"basis\": \"%s\", \"tid\": %d,"
			" \"threads\": %d%s}}\n",
			k->outside ? "false" : "true", k->checked, k->outside, to_ns(c, k->worst),
			bound, cc->core.fit.unchecked, k->in_loss,
			k->sp == &k->t->guest ? "kvm_entry/kvm_exit" : "sched_switch",
			k->t->tid, cc->core.fit.nr_cand,
			vtrace_vcpu_fit_by_name(&cc->core.fit) ? ", \"by_manifest\": true" : "");
		return;
	}
	if (why) {
		t->unverified++;
		fprintf(f, "%sguest %s cpu %d: unverified: %s\n", prefix, cc->s->m->name,
			cc->s->cpu, why);
		return;
	}
	b = vtrace_check_bound(k);
	t->verified++;
	t->ambiguous += cc->s->map.ambiguous;
	vtrace_check_sum_add(&t->sum, &cc->core, k);
	fprintf(f, "%sguest %s cpu %d: %" PRIu64 " checked, %" PRIu64 " outside, worst %" PRIu64
		" %s outside, bound ", prefix, cc->s->m->name, cc->s->cpu, k->checked, k->outside,
		to_ns(c, k->worst), unit(c));
	if (b == UINT64_MAX)
		fprintf(f, "none");
	else
		fprintf(f, "%" PRIu64 " %s", to_ns(c, b), unit(c));
	fprintf(f, " (%s of host tid %d %s", k->sp == &k->t->guest ?
		"kvm_entry..kvm_exit" : "sched_switch spans", k->t->tid,
		vtrace_vthread_name(k->t, name, sizeof(name)));
	if (cc->core.fit.nr_cand > 1)
		fprintf(f, ", the best fit of %d threads of that %s", cc->core.fit.nr_cand,
			k->t->idx >= 0 ? "name" : "vCPU");
	if (cc->core.fit.others)
		fprintf(f, "; %d of other VMs left out, by the offsets they wrote",
			cc->core.fit.others);
	if (amb)
		fprintf(f, ", but another fits as well: ambiguous");
	else if (vtrace_vcpu_fit_by_name(&cc->core.fit))
		fprintf(f, ", another fits as well: the one the capture's manifest names");
	if (cc->core.fit.unchecked)
		fprintf(f, "; %" PRIu64 " events outside the host trace not checked",
			cc->core.fit.unchecked);
	if (k->in_loss)
		fprintf(f, "; %" PRIu64 " events where the host trace lost events not checked",
			k->in_loss);
	if (started_at_enable(cc))
		fprintf(f, "; offset history from %s",
			vtrace_history_start(cc->s->map.hist, true, &key));
	fprintf(f, ")\n");
	manifest_tid(c, cc, k->t->tid);
}

static void hint(const struct check *c, FILE *f, const struct totals *t)
{
	if (t->unverified && c->vt.nr_entry && c->vt.nr_switch && !c->unverified)
		fprintf(f, "vtrace-merge: self-check: the host trace has sched_switch and kvm_entry"
			" events, but none of the unverified guest CPUs' vCPU threads ran in it: record"
			" the host while the guests run, and give the host trace of the same run\n");
	else if (t->unverified && (!c->unverified || strstr(c->unverified, "sched_switch")))
		fprintf(f, "vtrace-merge: self-check: to verify, record the host while the guests"
			" run with trace-cmd record -C x86-tsc -e sched:sched_switch -e kvm:kvm_entry"
			" -e kvm:kvm_exit\n");
	else if (t->verified && !t->sum.outside && !c->vt.has_kvm)
		fprintf(f, "vtrace-merge: self-check: kvm:kvm_entry and kvm:kvm_exit in the host"
			" trace would make the bound much tighter\n");
}

/*
 * A guest with events, none of which falls within the host trace, although
 * the host trace has threads of its vCPUs: host and guest are not of one
 * capture (or the offsets are another VM's).  Not an unverified timeline:
 * a wrong one.  Returns how many guests are so, the error set for the last.
 */
static int disjoint_guests(const struct check *c, FILE *f)
{
	int bad = 0;

	for (int i = 0; i < c->nr_cpus; ) {
		const struct machine *m = c->cpus[i].s->m;
		uint64_t seen = 0, unchecked = 0, first = UINT64_MAX, last = 0;
		int cands = 0;

		for (; i < c->nr_cpus && c->cpus[i].s->m == m; i++) {
			const struct check_cpu *cc = &c->cpus[i];

			cands += cc->core.fit.nr_cand;
			if (!cc->core.fit.nr_cand || !cc->core.seen)
				continue;
			seen += cc->core.seen;
			unchecked += cc->core.fit.unchecked;
			first = cc->core.first < first ? cc->core.first : first;
			last = cc->core.last > last ? cc->core.last : last;
		}
		if (!cands || !seen || unchecked != seen)
			continue;
		bad++;
		fprintf(f, "vtrace-merge: self-check: guest %s: none of its %" PRIu64 " events falls"
			" within the host trace: FAILED\n", m->name, seen);
		vtrace_set_error("self-check: guest %s: its events (host TSC %" PRIu64 " to %" PRIu64
				 ") and the host trace (%" PRIu64 " to %" PRIu64 ") do not overlap,"
				 " although the host ran its vCPU threads: the timeline is wrong."
				 " Likely causes: a host trace of another capture or boot, the offsets"
				 " of another VM (pid=); --force keeps the output", m->name, first,
				 last, c->vt.lo, c->vt.hi);
	}
	return bad;
}

/*
 * The summary's last line, one wording per outcome ("HOW VTRACE-MERGE CHECKS
 * ITSELF"): a bound only for a timeline without events outside, and only
 * for what it covers (not the unverified CPUs, not the ambiguous events).
 */
static void verdict(const struct check *c, FILE *f, const struct totals *t)
{
	int cpus = t->verified + t->unverified;

	fprintf(f, "vtrace-merge: self-check: %" PRIu64 " guest events checked, %" PRIu64
		" outside (tolerance %d %s)", t->sum.checked, t->sum.outside,
		c->khz ? VTRACE_VCPU_TOLERANCE_NS : (int)c->tol, unit(c));
	if (t->sum.outside) {
		fprintf(f, ": FAILED\n");
		return;
	}
	if (!t->sum.checked) {	/* --machine without the guests: none of their events read */
		fprintf(f, ": nothing verified, no guest event was read (--machine)\n");
		return;
	}
	if (t->sum.bound != UINT64_MAX)
		fprintf(f, ", alignment error at most %" PRIu64 " %s", to_ns(c, t->sum.bound),
			unit(c));
	if (t->ambiguous)
		fprintf(f, " but for %" PRIu64 " ambiguous events, whose times are not proved",
			t->ambiguous);
	if (t->sum.in_loss)
		fprintf(f, "%s %" PRIu64 " events where the host trace lost events, not proved",
			t->ambiguous ? " and" : " but for", t->sum.in_loss);
	fprintf(f, ": verified");
	if (t->unverified)
		fprintf(f, " on %d of %d guest CPUs, %d unverified (above)", t->verified, cpus,
			t->unverified);
	if (t->ambiguous)
		fprintf(f, "%s except those %" PRIu64 " events", t->unverified ? "," : "",
			t->ambiguous);
	fputc('\n', f);
}

/**
 * check_report - the self-check's summary (stderr) and verdict
 *
 * Returns 0 when no guest event is outside (or nothing could be checked),
 * -1 with the error set when some are and @force is false.
 */
int check_report(const struct check *c, FILE *f, bool force)
{
	struct totals t = { .sum = VTRACE_CHECK_SUM_INIT };

	if (!c || !c->nr_cpus)
		return 0;
	if (c->unverified) {
		ambiguity_lines(c, f, "vtrace-merge: self-check: ");
		unverified_line(c, f, c->unverified);
		hint(c, f, &(struct totals){ .unverified = 1 });
		return 0;
	}
	for (int i = 0; i < c->nr_cpus; i++)
		cpu_line(c, &c->cpus[i], f, false, "vtrace-merge: self-check: ", &t);
	ambiguity_lines(c, f, "vtrace-merge: self-check: ");
	if (disjoint_guests(c, f))
		return force ? 0 : -1;
	hint(c, f, &t);
	if (!t.verified) {
		unverified_line(c, f, "no guest CPU could be checked");
		return 0;
	}
	verdict(c, f, &t);
	if (!t.sum.outside)
		return 0;
	if (c->vt.lost)
		fprintf(f, "vtrace-merge: self-check: the host trace lost %" PRIu64 " events:"
			" some of its spans may be wrong\n", c->vt.lost);
	if (c->host_bad_pages)
		fprintf(f, "vtrace-merge: self-check: %" PRIu64 " damaged pages of the host trace"
			" were skipped (--skip-bad-pages): some of its spans may be wrong\n",
			c->host_bad_pages);
	vtrace_set_error("self-check: %" PRIu64 " guest events fall outside the times their vCPU"
			 " could run (worst %" PRIu64 " %s): the timeline is wrong. Likely causes:"
			 " the offsets or the dump of another VM (pid=), an incomplete offset"
			 " history, a host trace of another boot or capture, host times shifted"
			 " (trace clock, trace-cmd options); --force keeps the output",
			 t.sum.outside, to_ns(c, t.sum.worst), unit(c));
	return force ? 0 : -1;
}

/**
 * check_verdict - the self-check's verdict line, for an output to carry it
 * @buf, @len:	where it is written ("1234 guest events checked, 0 outside (tolerance
 *		1000 ns), alignment error at most 4999 ns: verified", "unverified: ...")
 *
 * The line check_report() ends with, without its "vtrace-merge: self-check: ".
 * Returns @buf, or NULL when there is nothing to verify (no guest CPU).
 */
const char *check_verdict(const struct check *c, char *buf, size_t len)
{
	static const char prefix[] = "vtrace-merge: self-check: ";
	char *text = NULL, *line, *next;
	size_t size = 0;
	FILE *mem;

	if (!c || !c->nr_cpus || !len)
		return NULL;
	mem = open_memstream(&text, &size);
	if (!mem)
		return NULL;
	check_report(c, mem, true);
	fclose(mem);
	*buf = '\0';
	/* the last summary: "N guest events checked, ..." or "unverified: ..." */
	for (line = text; line && *line; line = next) {
		const char *v = line + sizeof(prefix) - 1;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, prefix, sizeof(prefix) - 1) &&
		    ((*v >= '0' && *v <= '9') || !strncmp(v, "unverified: ", 12)))
			snprintf(buf, len, "%s", v);
	}
	free(text);
	return *buf ? buf : NULL;
}

/* Can an event of some guest CPU be ambiguous (an offset history that sets the clock back)? */
bool check_may_be_ambiguous(struct machine **ms, int nr)
{
	for (int i = 0; i < nr; i++)
		for (int cpu = 0; ms[i]->guest && cpu < ms[i]->nr_cpus; cpu++)
			if (ms[i]->cpus[cpu].map.hist &&
			    vtrace_tsc_map_needs_drops(&ms[i]->cpus[cpu].map))
				return true;
	return false;
}

/*
 * --explain binds the guest windows (check_open()) but checks nothing: it
 * says how its events that two offset intervals map were placed, per guest
 * CPU, as the self-check does (@f: stderr), or as JSON lines (@f: the output).
 */
void check_explain_report(const struct check *c, FILE *f, bool json)
{
	uint64_t amb = c ? ambiguous_events(c) : 0;

	for (int i = 0; c && i < c->nr_cpus; i++) {
		const struct check_cpu *cc = &c->cpus[i];
		const struct vtrace_tsc_map *map = cc->s ? &cc->s->map : NULL;

		if (!map || (!map->ambiguous && !map->told_apart))
			continue;
		if (!json) {
			ambiguity_line(cc, f, "vtrace-merge: explain: ");
			continue;
		}
		fputs("{\"type\":\"ambiguous\",\"guest\":\"", f);
		vtrace_json_chars(f, cc->s->m->name);
		fprintf(f, "\",\"cpu\":%d,\"events\":%" PRIu64 ",\"told_apart\":%" PRIu64
			",\"moved\":%" PRIu64 ",\"ambiguous\":%" PRIu64 ",\"windows\":%s}\n",
			cc->s->cpu, map->ambiguous + map->told_apart, map->told_apart, map->moved,
			map->ambiguous, map->in_guest ? "true" : "false");
	}
	if (amb && !json)
		fprintf(f, "vtrace-merge: explain: the delays are measured from these times: those"
			" from or to the %" PRIu64 " ambiguous events may be wrong\n", amb);
}

/* --stats: the same per guest CPU, as text lines or (--format jsonl) JSON objects */
void check_stats(const struct check *c, FILE *f, bool json)
{
	struct totals t = { .sum = VTRACE_CHECK_SUM_INIT };

	if (!c || !c->nr_cpus)
		return;
	if (!json)
		fputc('\n', f);
	for (int i = 0; i < c->nr_cpus; i++)
		cpu_line(c, &c->cpus[i], f, json, "self-check: ", &t);
	if (!json)
		ambiguity_lines(c, f, "self-check: ");
}
