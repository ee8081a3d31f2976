// SPDX-License-Identifier: GPL-2.0
/* offsets-dat.c: the offset history from a host trace.dat's vtrace_host:tsc_offset events. */
/*
 * "trace-cmd record -C x86-tsc -e vtrace_host ..." keeps every record of
 * vtrace_host in host.dat (Documentation/vtrace_host.rst, "The trace
 * event"), with a snapshot per vCPU when the recording began: this reads
 * them into the same records the tsc_offsets parser makes, and offsets.c
 * builds the histories from either source with the same rules, for
 * vtrace-merge and vtrace dat alike (vtrace_offsets_load()).
 *
 * Completeness is the trace's own: a record is missing only where the
 * ring buffer lost events.  Every CPU of the trace is read in full (the
 * record of a write is on the CPU that ran the vCPU, which can be any),
 * and each loss on a CPU (the page header's missed-events flag) is noted
 * with that CPU's last event before it.  A loss can hide only records of
 * writes made on its CPU then: offsets-gaps.c tells which vCPUs' threads
 * may have run there, and only their histories stop at their earliest
 * such loss.  The histories otherwise end at the trace's last event.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "lib-local.h"
#include "vtrace-dump.h"
#include "vtrace-tsc.h"
#include "vtrace-util.h"

struct tsc_fields {
	struct tep_event	*ev;
	struct tep_format_field	*host_tsc, *prev_offset, *offset, *multiplier, *pid, *vcpu_id;
	struct tep_format_field	*vcpu_idx, *frac_bits, *kind, *vm;
	struct tep_format_field	*since, *tsc_khz;	/* optional: newer vtrace_host */
	struct tep_format_field	*cpu, *serial;		/* optional: since format v1 */
	bool			native;
};

/* Losses noted, at most: past it, every history stops at the first loss past it */
#define MAX_GAPS	4096

struct dat_records {
	struct vtrace_offset_record	*recs;
	size_t				nr, alloc;
	struct vtrace_offsets_trace	trace;
	struct dat_gap			gaps[MAX_GAPS];
	size_t				nr_gaps;
	uint64_t			more_from;	/* earliest loss past MAX_GAPS, 0 none */
};

/* 1: the trace has the event with every field, 0: it has not the event, -1: a bad format */
static int find_fields(struct tep_handle *tep, struct tsc_fields *f, const char *path)
{
	struct tep_format_field **p[] = { &f->host_tsc, &f->prev_offset, &f->offset,
		&f->multiplier, &f->pid, &f->vcpu_id, &f->vcpu_idx, &f->frac_bits, &f->kind, &f->vm };
	static const char * const names[] = { "host_tsc", "prev_offset", "offset", "multiplier",
		"pid", "vcpu_id", "vcpu_idx", "frac_bits", "kind", "vm" };

	f->ev = tep_find_event_by_name(tep, "vtrace_host", "tsc_offset");
	if (!f->ev)
		return 0;
	f->native = tep_is_file_bigendian(tep) == tep_is_local_bigendian(tep);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*p[i] = tep_find_field(f->ev, names[i]);
		if (!*p[i]) {
			vtrace_set_error("%s: event vtrace_host:tsc_offset has no field %s (a"
					 " vtrace_host this vtrace-merge does not know)", path,
					 names[i]);
			return -1;
		}
	}
	f->since = tep_find_field(f->ev, "since");
	f->tsc_khz = tep_find_field(f->ev, "tsc_khz");
	f->cpu = tep_find_field(f->ev, "cpu");
	f->serial = tep_find_field(f->ev, "serial");
	return 1;
}

static int add_record(struct dat_records *d, const struct tsc_fields *f,
		      const struct tep_record *rec, const char *path)
{
	struct vtrace_offset_record *r;
	int64_t kind = vtrace_field_num(f->native, f->kind, rec);
	const char *vm;

	if (d->nr == d->alloc) {
		size_t alloc = d->alloc ? 2 * d->alloc : 1024;

		r = realloc(d->recs, alloc * sizeof(*r));
		if (!r)
			return -1;
		d->recs = r;
		d->alloc = alloc;
	}
	if (kind < VTRACE_TSC_WRITE || kind > VTRACE_TSC_MULTIPLIER) {
		vtrace_set_error("%s: cpu %d byte %llu: vtrace_host:tsc_offset with kind %lld,"
				 " expected 0 (write), 1 (snapshot) or 2 (multiplier)", path,
				 rec->cpu, rec->offset, (long long)kind);
		return -1;
	}
	r = &d->recs[d->nr];
	*r = (struct vtrace_offset_record){
		.host_tsc	= vtrace_field_num(f->native, f->host_tsc, rec),
		.prev_offset	= vtrace_field_num(f->native, f->prev_offset, rec),
		.offset		= vtrace_field_num(f->native, f->offset, rec),
		.mult		= vtrace_field_num(f->native, f->multiplier, rec),
		.frac		= vtrace_field_num(f->native, f->frac_bits, rec),
		.kind		= kind,
		.pid		= vtrace_field_num(f->native, f->pid, rec),
		.vcpu_id	= vtrace_field_num(f->native, f->vcpu_id, rec),
		.vcpu_idx	= vtrace_field_num(f->native, f->vcpu_idx, rec),
		.since		= vtrace_field_num(f->native, f->since, rec),
		.serial		= vtrace_field_num(f->native, f->serial, rec),
		.cpu		= f->cpu ? (int)vtrace_field_num(f->native, f->cpu, rec) : -1,
		.tid		= tep_data_pid(f->ev->tep, (struct tep_record *)rec),
	};
	if (!d->trace.tsc_khz)
		d->trace.tsc_khz = (uint32_t)vtrace_field_num(f->native, f->tsc_khz, rec);
	if (f->vm->offset + f->vm->size > rec->size) {
		vtrace_set_error("%s: cpu %d byte %llu: a vtrace_host:tsc_offset event shorter than"
				 " its format", path, rec->cpu, rec->offset);
		return -1;
	}
	vm = (const char *)rec->data + f->vm->offset;
	snprintf(r->vm, sizeof(r->vm), "%.*s", (int)strnlen(vm, f->vm->size), vm);
	/* an anomaly (vm "?") is not checked: it is counted and left out */
	if (strcmp(r->vm, "?") && (!r->mult || r->frac > 63 || r->vcpu_idx < -1 || r->pid <= 0)) {
		vtrace_set_error("%s: cpu %d byte %llu: a vtrace_host:tsc_offset event with bad"
				 " fields (pid %d, vcpu_idx %d, multiplier %llu, frac_bits %u)", path,
				 rec->cpu, rec->offset, r->pid, r->vcpu_idx,
				 (unsigned long long)r->mult, r->frac);
		return -1;
	}
	d->nr++;
	return 0;
}

/* A loss on @cpu after host TSC @from, before @to */
static void note_gap(struct dat_records *d, int cpu, uint64_t from, uint64_t to, long long nr)
{
	if (d->nr_gaps < MAX_GAPS)
		d->gaps[d->nr_gaps++] = (struct dat_gap){ from, to, cpu, nr };
	else if (!d->more_from || from < d->more_from)
		d->more_from = from;
}

/* One CPU, in full: its records, its last time stamp, its losses */
static int read_cpu(struct vtrace_dat_records *h, int cpu, const struct tsc_fields *f,
		    struct dat_records *d, const char *path)
{
	struct tep_handle *tep = vtrace_dat_records_tep(h);
	uint64_t last = 0;
	bool seen = false;
	struct tep_record *rec;
	int ret;

	while ((ret = vtrace_dat_records_next(h, cpu, &rec)) > 0) {
		/* a loss before the CPU's first event: nothing is known (1: before all) */
		if (rec->missed_events)
			note_gap(d, cpu, seen ? last : 1, rec->ts, rec->missed_events);
		last = rec->ts;
		if (!seen && (!d->trace.start_tsc || last < d->trace.start_tsc))
			d->trace.start_tsc = last;
		seen = true;
		if (last > d->trace.end_tsc)
			d->trace.end_tsc = last;
		if (tep_data_type(tep, rec) == f->ev->id && add_record(d, f, rec, path))
			return -1;
	}
	return ret;
}

static int cmp_gap(const void *a, const void *b)
{
	const struct dat_gap *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/*
 * The vCPUs the losses may have hidden records of, each with its earliest
 * such loss (past MAX_GAPS losses, every vCPU at the first of those)
 */
static int find_cuts(struct dat_records *d, const char *path, struct vtrace_offsets_cut **cuts)
{
	size_t nr = 0;

	d->trace.nr_gaps = d->nr_gaps + !!d->more_from;
	qsort(d->gaps, d->nr_gaps, sizeof(*d->gaps), cmp_gap);
	if (dat_gaps_cut(path, d->gaps, d->nr_gaps, d->recs, d->nr, cuts, &nr))
		return -1;
	for (size_t i = 0; d->more_from && i < d->nr; i++) {
		struct vtrace_offsets_cut *c = NULL, *n;

		for (size_t k = 0; k < nr && !c; k++)
			if ((*cuts)[k].pid == d->recs[i].pid &&
			    (*cuts)[k].vcpu_id == d->recs[i].vcpu_id)
				c = &(*cuts)[k];
		if (c && c->tsc <= d->more_from)
			continue;
		if (!c) {
			n = realloc(*cuts, (nr + 1) * sizeof(*n));
			if (!n)
				return -1;
			*cuts = n;
			c = &n[nr++];
		}
		*c = (struct vtrace_offsets_cut){ .pid = d->recs[i].pid,
			.vcpu_id = d->recs[i].vcpu_id, .tsc = d->more_from, .cpu = -1, .nr = -1 };
	}
	d->trace.cuts = *cuts;
	d->trace.nr_cuts = nr;
	return 0;
}

static int cmp_host_tsc(const void *a, const void *b)
{
	const struct vtrace_offset_record *x = a, *y = b;

	if (x->host_tsc != y->host_tsc)
		return x->host_tsc < y->host_tsc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/**
 * vtrace_offsets_open_dat - the offset history in @path's vtrace_host:tsc_offset events
 * @path:	the host's trace.dat (trace-cmd record -C x86-tsc)
 * @found:	set when the trace has the event (recorded with -e vtrace_host)
 *
 * Return: the histories, or NULL: with *@found false when the trace has no
 * such event (not an error), else with the error set.
 */
struct vtrace_offsets *vtrace_offsets_open_dat(const char *path, bool *found)
{
	struct dat_records *d = calloc(1, sizeof(*d));
	struct vtrace_offsets_cut *cuts = NULL;
	struct vtrace_offsets *o = NULL;
	struct vtrace_dat_records *h;
	struct tsc_fields f;
	int cpus, ret;

	*found = false;
	if (!d) {
		vtrace_set_error("%s: out of memory", path);
		return NULL;
	}
	h = vtrace_dat_records_open(path);
	if (!h) {
		free(d);
		return NULL;
	}
	/* the records' host_tsc is the TSC: the trace's own times must be too */
	if (vtrace_dat_check_clock(path, vtrace_dat_clock(vtrace_dat_records_handle(h))))
		goto out;
	ret = find_fields(vtrace_dat_records_tep(h), &f, path);
	if (ret <= 0)
		goto out;
	*found = true;
	cpus = vtrace_dat_records_cpus(h);
	for (int cpu = 0; cpu < cpus; cpu++)
		if (read_cpu(h, cpu, &f, d, path))
			goto out;
	/* a vCPU's writes are one after the other, each at its own host_tsc */
	for (size_t i = 0; i < d->nr; i++)
		d->recs[i].seq = i;
	if (d->nr)
		qsort(d->recs, d->nr, sizeof(*d->recs), cmp_host_tsc);
	for (size_t i = 0; i < d->nr; i++)
		d->recs[i].seq = i;
	if ((d->nr_gaps || d->more_from) && find_cuts(d, path, &cuts))
		goto out;
	o = vtrace_offsets_from_trace(path, d->recs, d->nr, &d->trace);
out:
	vtrace_dat_records_close(h);
	free(cuts);
	free(d->recs);
	free(d);
	return o;
}
