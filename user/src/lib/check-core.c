// SPDX-License-Identifier: GPL-2.0
/* check-core.c: the self-check's core, vtrace-merge's and vtrace dat's: a guest CPU's events. */
/*
 * A guest event is a time stamp the guest read while it ran: once put on
 * the host's TSC, it must fall inside a span of its vCPU's thread in the
 * host trace (src/lib/vcpu.c collects the spans and fits the events).  This
 * is what both tools check with, each guest CPU apart:
 *
 *   vtrace-merge   its self-check pass (src/merge/check.c) hands every event
 *                  the merge reads to vtrace_check_cpu_event()
 *   vtrace dat     reads each guest CPU's dump once more,
 *                  vtrace_check_cpu_read_dump(), before writing the files
 *
 * and what they add up (struct vtrace_check_sum) is said by each in its
 * own words.  The tolerance is VTRACE_VCPU_TOLERANCE_NS, in TSC ticks.
 */
#include <stdlib.h>

#include <event-parse.h>

#include "vtrace-check.h"
#include "vtrace-dump.h"
#include "vtrace-tsc.h"
#include "vtrace-util.h"

/* VTRACE_VCPU_TOLERANCE_NS in TSC ticks: in ns as they are without @khz (0) */
uint64_t vtrace_check_tolerance(uint64_t khz)
{
	return khz ? vtrace_ns_to_tsc(VTRACE_VCPU_TOLERANCE_NS, khz) : VTRACE_VCPU_TOLERANCE_NS;
}

/* The candidate threads of history @h's vCPU in @vt; 0 or -1 with an error set */
int vtrace_check_cpu_init(struct vtrace_check_cpu *cc, const struct vtrace_vthreads *vt,
			  const struct vtrace_vcpu_history *h, uint64_t khz)
{
	cc->seen = cc->first = cc->last = cc->within = 0;
	return vtrace_vcpu_fit_init(&cc->fit, vt, h, vtrace_check_tolerance(khz));
}

void vtrace_check_cpu_free(struct vtrace_check_cpu *cc)
{
	vtrace_vcpu_fit_free(&cc->fit);
}

/*
 * The vCPU's guest windows tell apart the events two offset intervals map
 * inside themselves (src/lib/tsc.c): only with kvm_entry/kvm_exit, run spans
 * are too wide for it.
 */
void vtrace_check_cpu_windows(struct vtrace_check_cpu *cc, struct vtrace_tsc_map *map)
{
	if (vtrace_vcpu_fit_has_windows(&cc->fit))
		vtrace_tsc_map_set_windows(map, vtrace_vcpu_fit_in_guest, &cc->fit);
}

/* A guest event converted to host TSC @t; @fit false: counted, not looked up */
void vtrace_check_cpu_event(struct vtrace_check_cpu *cc, uint64_t t, bool fit)
{
	if (!cc->seen++ || t < cc->first)
		cc->first = t;
	if (t > cc->last)
		cc->last = t;
	if (cc->fit.vt && t >= cc->fit.vt->lo && t <= cc->fit.vt->hi)
		cc->within++;
	if (!cc->fit.nr_cand || !fit)
		return;
	vtrace_vcpu_fit_event(&cc->fit, t);
}

/**
 * vtrace_dump_cpu_host - every event of dump CPU @cpu (fillers too) through
 * @map, to @fn: with its host TSC, or NULL when @map does not convert it
 *
 * Returns 0 at the end, what @fn returned when not 0 (it stops there), or
 * -1 with an error set when the dump cannot be read.
 */
int vtrace_dump_cpu_host(struct vtrace_dump *d, int cpu, struct vtrace_tsc_map *map,
			 int (*fn)(void *priv, const struct tep_record *rec, const uint64_t *host),
			 void *priv)
{
	struct vtrace_cpu_reader *r = vtrace_cpu_reader_open(d, cpu);
	struct tep_record *rec;
	uint64_t host;
	int filler, ret;

	if (!r)
		return -1;
	while ((ret = vtrace_cpu_reader_next(r, &rec, &filler)) > 0) {
		ret = fn(priv, rec, vtrace_tsc_map_event(map, rec->ts, &host) ? NULL : &host);
		if (ret)
			break;
	}
	vtrace_cpu_reader_close(r);
	return ret;
}

struct counted {
	struct vtrace_check_cpu	*cc;
	uint64_t		events;
};

/* An event read for the check: those the offset history does not convert are left out */
static int check_host(void *priv, const struct tep_record *rec, const uint64_t *host)
{
	struct counted *c = priv;

	(void)rec;
	c->events++;
	if (host)
		vtrace_check_cpu_event(c->cc, *host, true);
	return 0;
}

/* vtrace_check_cpu_read_dump(), @events set to the CPU's events, converted or not */
static int read_dump(struct vtrace_check_cpu *cc, struct vtrace_dump *d, int cpu,
		     const struct vtrace_vcpu_history *h, bool assume_constant, uint64_t *events)
{
	struct counted c = { cc, 0 };
	struct vtrace_tsc_map map;
	int ret;

	vtrace_tsc_map_init(&map, h, assume_constant);
	vtrace_check_cpu_windows(cc, &map);
	ret = vtrace_dump_cpu_host(d, cpu, &map, check_host, &c);
	*events = c.events;
	return ret;
}

/**
 * vtrace_check_cpu_read_dump - every event of dump CPU @cpu, on the host's
 * TSC as vtrace-merge puts it (@h, the vCPU's guest windows), fitted
 *
 * Events the offset history does not convert are left out (vtrace-merge
 * refuses them).  0, or -1 with an error set.
 */
int vtrace_check_cpu_read_dump(struct vtrace_check_cpu *cc, struct vtrace_dump *d, int cpu,
			       const struct vtrace_vcpu_history *h, bool assume_constant)
{
	uint64_t events;

	return read_dump(cc, d, cpu, h, assume_constant, &events);
}

/**
 * vtrace_check_vm_fit - the guest dump @d's events put on the host's TSC with
 * the offsets of VM @pid, and fitted to that VM's vCPU threads in @vt
 *
 * What the self-check would find with that VM's offsets, before the merge:
 * vtrace-merge weighs the VMs a guest may be by it.  Every guest CPU with a
 * data port is read; each must have a vCPU of @pid in @o (APIC id).  Returns
 * 0 with @r filled, or -1 with an error set.
 */
int vtrace_check_vm_fit(struct vtrace_check_vm *r, const struct vtrace_vthreads *vt,
			struct vtrace_dump *d, struct vtrace_offsets *o, int pid, uint64_t khz,
			bool assume_constant)
{
	*r = (struct vtrace_check_vm){ .sum = VTRACE_CHECK_SUM_INIT };
	for (uint32_t cpu = 0; cpu < vtrace_dump_info(d)->nr_cpus; cpu++) {
		const struct vtrace_cpu_info *ci = vtrace_dump_cpu(d, cpu);
		const struct vtrace_vcpu_history *h;
		const struct vtrace_vcpu_cand *k;
		struct vtrace_check_cpu cc;
		uint64_t events;
		int ret;

		if (!ci || !(ci->flags & VTRACE_CPU_HAS_PORT))
			continue;
		h = vtrace_offsets_vcpu(o, pid, ci->apic_id);
		if (!h) {
			vtrace_set_error("pid %d has no vCPU of APIC id %u", pid, ci->apic_id);
			return -1;
		}
		if (vtrace_check_cpu_init(&cc, vt, h, khz))
			return -1;
		ret = read_dump(&cc, d, cpu, h, assume_constant, &events);
		r->seen += events;
		k = vtrace_vcpu_fit_best(&cc.fit, NULL);
		if (!ret && k)
			vtrace_check_sum_add(&r->sum, &cc, k);
		else if (!ret && cc.within && vt->nr_th)
			r->no_thread++;
		vtrace_check_cpu_free(&cc);
		if (ret)
			return -1;
	}
	return 0;
}

/*
 * The bound a candidate's fit proves: a constant error e in the guest's
 * times keeps every event inside only if -to_end <= e <= to_start;
 * UINT64_MAX when nothing is proved
 */
uint64_t vtrace_check_bound(const struct vtrace_vcpu_cand *k)
{
	if (!k->checked || k->outside || k->to_start == UINT64_MAX)
		return UINT64_MAX;
	return k->to_start > k->to_end ? k->to_start : k->to_end;
}

/* One more checked guest CPU, @k the thread its events fit best, into @t */
void vtrace_check_sum_add(struct vtrace_check_sum *t, const struct vtrace_check_cpu *cc,
			  const struct vtrace_vcpu_cand *k)
{
	uint64_t b = vtrace_check_bound(k);

	t->checked += k->checked;
	t->outside += k->outside;
	t->unchecked += cc->fit.unchecked;
	t->in_loss += k->in_loss;
	if (k->worst > t->worst)
		t->worst = k->worst;
	if (b != UINT64_MAX && (t->bound == UINT64_MAX || b > t->bound))
		t->bound = b;
}
