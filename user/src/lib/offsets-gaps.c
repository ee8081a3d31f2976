// SPDX-License-Identifier: GPL-2.0
/* offsets-gaps.c: which vCPUs' offset histories the events a host trace lost can affect. */
/*
 * A host CPU whose ring buffer lost events between two of its events (its
 * last before the loss at host TSC "from", its first after at "to") can
 * have lost a vtrace_host:tsc_offset record only of a write made on that
 * CPU in that gap: the event goes to the buffer of the CPU that runs the
 * write.  KVM writes a vCPU's offset in the thread that runs the vCPU's
 * ioctls and loads it, its vCPU thread (QEMU's "CPU N/KVM"), and the
 * trace says which threads wrote each vCPU's records.  So a vCPU none of
 * whose threads (those seen writing its records, and those named "CPU
 * N/KVM" for its index N) can have run on that CPU in the gap lost
 * nothing there: each of them ran on another CPU from before "from" to
 * after "to", as that CPU's sched_switch in and out of it show, that CPU
 * losing nothing meanwhile.  Every other vCPU's history is cut at "from"
 * (offsets.c), the earliest such loss first; a vCPU with no such thread
 * known is cut by every loss.
 *
 * This reads the trace once more, only when it lost events: per CPU, the
 * span of each thread of interest between its sched_switch in and out,
 * checked against the losses of the other CPUs as it closes.  Memory: the
 * losses, the vCPUs and their threads, and the (loss, thread) pairs found
 * to be elsewhere, each bounded; past a bound, the answer is the cautious
 * one (cut).
 */
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "lib-local.h"
#include "vtrace-dump.h"
#include "vtrace-tsc.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

/* Writer threads kept per vCPU; a vCPU with more is cut by every loss */
#define GAPS_MAX_TIDS		8
/* Threads named "CPU N/KVM" kept, and (loss, thread) pairs proved elsewhere */
#define GAPS_MAX_NAMED		4096
#define GAPS_MAX_PROVED		(1U << 20)

struct gap_vcpu {
	int		pid;
	uint32_t	vcpu_id;
	int		idx;
	int		tids[GAPS_MAX_TIDS];
	int		nr_tids;	/* -1: more than GAPS_MAX_TIDS */
};

struct named {
	int		tid;
	int		idx;
};

struct proved {
	uint32_t	gap;
	int		tid;
};

struct gaps_state {
	const struct dat_gap	*gaps;
	size_t			nr_gaps;
	struct gap_vcpu		*v;
	size_t			nr_v;
	struct named		*named;
	size_t			nr_named;
	struct proved		*proved;
	size_t			nr_proved, alloc_proved;
	struct tep_format_field	*prev_pid, *next_pid, *next_comm;
	int			switch_id;
	bool			native;
};

static struct gap_vcpu *vcpu_get(struct gaps_state *g, const struct vtrace_offset_record *r)
{
	for (size_t i = 0; i < g->nr_v; i++)
		if (g->v[i].pid == r->pid && g->v[i].vcpu_id == r->vcpu_id)
			return &g->v[i];
	g->v[g->nr_v] = (struct gap_vcpu){ .pid = r->pid, .vcpu_id = r->vcpu_id, .idx = -1 };
	return &g->v[g->nr_v++];
}

/* The vCPUs of @recs and the threads that wrote them (snapshots are vtrace_host's own) */
static int collect_vcpus(struct gaps_state *g, const struct vtrace_offset_record *recs, size_t nr)
{
	g->v = calloc(nr ? nr : 1, sizeof(*g->v));
	if (!g->v)
		return -1;
	for (size_t i = 0; i < nr; i++) {
		struct gap_vcpu *v = vcpu_get(g, &recs[i]);
		bool known = false;

		if (recs[i].vcpu_idx >= 0)
			v->idx = recs[i].vcpu_idx;
		if (recs[i].kind == VTRACE_TSC_SNAPSHOT || v->nr_tids < 0)
			continue;
		for (int k = 0; k < v->nr_tids; k++)
			known |= v->tids[k] == recs[i].tid;
		if (known)
			continue;
		if (recs[i].tid <= 0 || v->nr_tids == GAPS_MAX_TIDS)
			v->nr_tids = -1;
		else
			v->tids[v->nr_tids++] = recs[i].tid;
	}
	return 0;
}

static bool is_writer(const struct gaps_state *g, int tid)
{
	for (size_t i = 0; i < g->nr_v; i++)
		for (int k = 0; k < g->v[i].nr_tids; k++)
			if (g->v[i].tids[k] == tid)
				return true;
	return false;
}

static bool is_named(const struct gaps_state *g, int tid)
{
	for (size_t i = 0; i < g->nr_named; i++)
		if (g->named[i].tid == tid)
			return true;
	return false;
}

static void note_named(struct gaps_state *g, int tid, int idx)
{
	if (idx >= 0 && g->nr_named < GAPS_MAX_NAMED && !is_named(g, tid))
		g->named[g->nr_named++] = (struct named){ tid, idx };
}

/* @tid ran on @cpu from @start to @end: proved elsewhere for the losses of other CPUs inside */
static int span_closed(struct gaps_state *g, int cpu, int tid, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = g->nr_gaps;

	if (!is_writer(g, tid) && !is_named(g, tid))
		return 0;
	while (lo < hi) {		/* the first loss from @start on */
		size_t mid = lo + (hi - lo) / 2;

		if (g->gaps[mid].from < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < g->nr_gaps && g->gaps[i].from <= end; i++) {
		if (g->gaps[i].cpu == cpu || g->gaps[i].to > end)
			continue;
		if (g->nr_proved == g->alloc_proved) {
			size_t n = g->alloc_proved ? 2 * g->alloc_proved : 64;
			struct proved *p;

			if (n > GAPS_MAX_PROVED)
				return 0;	/* not proved: cut, the cautious answer */
			p = realloc(g->proved, n * sizeof(*p));
			if (!p) {
				vtrace_set_error("out of memory");
				return -1;
			}
			g->proved = p;
			g->alloc_proved = n;
		}
		g->proved[g->nr_proved++] = (struct proved){ i, tid };
	}
	return 0;
}

/* One CPU: the spans between each sched_switch in and out, none across a loss of its own */
static int walk_cpu(struct gaps_state *g, struct vtrace_dat_records *h, int cpu)
{
	struct tep_handle *tep = vtrace_dat_records_tep(h);
	struct tep_record *rec;
	uint64_t since = 0, last = 0;
	int cur = -1, ret;

	while ((ret = vtrace_dat_records_next(h, cpu, &rec)) > 0) {
		last = rec->ts;
		if (rec->missed_events)
			cur = -1;	/* its switches in the loss are not known */
		if (tep_data_type(tep, rec) != g->switch_id)
			continue;
		if (cur >= 0 && cur == vtrace_field_num(g->native, g->prev_pid, rec) &&
		    span_closed(g, cpu, cur, since, rec->ts))
			return -1;
		cur = vtrace_field_num(g->native, g->next_pid, rec);
		since = rec->ts;
		if (g->next_comm->offset + g->next_comm->size <= rec->size)
			note_named(g, cur, vtrace_vcpu_idx_of((const char *)rec->data +
							      g->next_comm->offset,
							      g->next_comm->size));
	}
	/* on the CPU still at its last event */
	if (!ret && cur >= 0 && span_closed(g, cpu, cur, since, last))
		return -1;
	return ret;
}

static bool proved(const struct gaps_state *g, size_t gap, int tid)
{
	for (size_t i = 0; i < g->nr_proved; i++)
		if (g->proved[i].gap == gap && g->proved[i].tid == tid)
			return true;
	return false;
}

/* Every thread of @v was elsewhere during loss @gap */
static bool unaffected(const struct gaps_state *g, const struct gap_vcpu *v, size_t gap)
{
	int n = 0;

	if (v->nr_tids < 0)
		return false;
	for (int k = 0; k < v->nr_tids; k++, n++)
		if (!proved(g, gap, v->tids[k]))
			return false;
	for (size_t i = 0; v->idx >= 0 && i < g->nr_named; i++) {
		if (g->named[i].idx != v->idx)
			continue;
		if (!proved(g, gap, g->named[i].tid))
			return false;
		n++;
	}
	return n > 0;
}

static int find_switch(struct gaps_state *g, struct tep_handle *tep)
{
	struct tep_event *sw = tep_find_event_by_name(tep, "sched", "sched_switch");

	if (!sw)
		return 0;
	g->prev_pid = tep_find_field(sw, "prev_pid");
	g->next_pid = tep_find_field(sw, "next_pid");
	g->next_comm = tep_find_field(sw, "next_comm");
	if (!g->prev_pid || !g->next_pid || !g->next_comm || g->next_comm->size <= 0)
		return 0;
	g->switch_id = sw->id;
	g->native = tep_is_file_bigendian(tep) == tep_is_local_bigendian(tep);
	return 1;
}

/* The placement pass: which threads were elsewhere during which losses */
static int place_threads(struct gaps_state *g, const char *path)
{
	struct vtrace_dat_records *h = vtrace_dat_records_open(path);
	int ret = 0;

	if (!h)
		return -1;
	g->named = calloc(GAPS_MAX_NAMED, sizeof(*g->named));
	if (!g->named) {
		vtrace_set_error("%s: out of memory", path);
		ret = -1;
	} else if (find_switch(g, vtrace_dat_records_tep(h)))
		for (int cpu = 0; cpu < vtrace_dat_records_cpus(h) && !ret; cpu++)
			ret = walk_cpu(g, h, cpu);
	vtrace_dat_records_close(h);
	return ret;
}

/**
 * dat_gaps_cut - where the losses of a host trace cut each vCPU's offset history
 * @path:	the trace
 * @gaps:	its losses, in order of @from
 * @nr_gaps:	how many (at least one)
 * @recs:	its vtrace_host:tsc_offset records
 * @nr:		how many
 * @cuts:	set to one per vCPU a loss can affect (malloc'ed; NULL if none)
 * @nr_cuts:	their count
 *
 * Return: 0, or -1 with the error set.
 */
int dat_gaps_cut(const char *path, const struct dat_gap *gaps, size_t nr_gaps,
		 const struct vtrace_offset_record *recs, size_t nr,
		 struct vtrace_offsets_cut **cuts, size_t *nr_cuts)
{
	struct gaps_state g = { .gaps = gaps, .nr_gaps = nr_gaps, .switch_id = -1 };
	int ret = -1;

	*cuts = NULL;
	*nr_cuts = 0;
	if (collect_vcpus(&g, recs, nr)) {
		vtrace_set_error("%s: out of memory", path);
		goto out;
	}
	if (place_threads(&g, path))
		goto out;
	*cuts = calloc(g.nr_v ? g.nr_v : 1, sizeof(**cuts));
	if (!*cuts) {
		vtrace_set_error("%s: out of memory", path);
		goto out;
	}
	for (size_t i = 0; i < g.nr_v; i++) {
		for (size_t k = 0; k < nr_gaps; k++) {
			if (unaffected(&g, &g.v[i], k))
				continue;
			(*cuts)[(*nr_cuts)++] = (struct vtrace_offsets_cut){
				.pid = g.v[i].pid, .vcpu_id = g.v[i].vcpu_id, .tsc = gaps[k].from,
				.cpu = gaps[k].cpu, .nr = gaps[k].nr,
			};
			break;
		}
	}
	ret = 0;
out:
	free(g.v);
	free(g.named);
	free(g.proved);
	return ret;
}
