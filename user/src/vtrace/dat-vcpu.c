// SPDX-License-Identifier: GPL-2.0
/* dat-vcpu.c: vtrace dat: the host's trace id, each guest CPU's vCPU thread, the self-check. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "dat-local.h"
#include "vtrace-check.h"
#include "vtrace-dump.h"
#include "vtrace-local.h"
#include "vtrace-proto.h"
#include "vtrace-tsc.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

/* ---- the host's trace id and vCPU threads */

/*
 * Which host thread ran each guest CPU's vCPU: vtrace-merge's choice
 * (src/lib/vcpu.c), the thread of the vCPU's name whose sched_switch or
 * kvm_entry..kvm_exit spans hold the guest CPU's events.  A host trace with
 * no such spans: the thread of that name in its saved cmdlines.
 */
static int cmdline_tid(struct dat *d, struct tep_handle *tep, int c)
{
	struct tep_cmdline *cl;
	char comm[32], tids[96] = "";
	int n = 0, tid = 0;
	size_t len = 0;

	snprintf(comm, sizeof(comm), "CPU %d/KVM", d->hist[c]->vcpu_idx);
	for (cl = tep_data_pid_from_comm(tep, comm, NULL); cl;
	     cl = tep_data_pid_from_comm(tep, comm, cl)) {
		if (!n++)
			tid = tep_cmdline_pid(tep, cl);
		if (len < sizeof(tids))
			len += snprintf(tids + len, sizeof(tids) - len, " %d", tep_cmdline_pid(tep, cl));
	}
	if (n > 1)
		dat_warn("guest %s cpu %d: ambiguous: no spans of \"%s\" in the host trace, and %d"
			 " threads of that name in its saved cmdlines (tids%s): tid %d is taken",
			 d->name, c, comm, n, tids, tid);
	if (!n)
		dat_warn("host: no thread \"%s\" in the host trace: guest %s cpu %d has host pid"
			 " 0 in the GUEST option", comm, d->name, c);
	return tid;
}

/* Guest CPU @c's vCPU thread, its events checked as vtrace-merge checks them */
static int vcpu_tid(struct dat *d, const struct vtrace_vthreads *vt, struct tep_handle *tep,
		    int c)
{
	const struct vtrace_vcpu_cand *k;
	struct vtrace_check_cpu cc;
	const struct vtrace_vcpu_fit *fit = &cc.fit;
	char tids[96] = "", name[64];
	size_t len = 0;
	bool amb;
	int tid;

	if (vtrace_check_cpu_init(&cc, vt, d->hist[c], d->khz))
		return -1;
	if (!fit->nr_cand) {
		d->sc_unverified++;
		return cmdline_tid(d, tep, c);
	}
	if (vtrace_check_cpu_read_dump(&cc, d->dump, c, d->hist[c], d->assume_constant)) {
		vtrace_check_cpu_free(&cc);
		return -1;
	}
	k = vtrace_vcpu_fit_best(fit, &amb);
	if (!k->checked)
		d->sc_unverified++;
	vtrace_check_sum_add(&d->sc, &cc, k);
	if (k->outside)
		fprintf(stderr, "vtrace dat: self-check: guest %s cpu %d: %" PRIu64 " checked, %"
			PRIu64 " outside the %s spans of host tid %d %s\n", d->name, c,
			k->checked, k->outside, vtrace_vcpu_fit_has_windows(fit) ?
			"kvm_entry..kvm_exit" : "sched_switch", k->t->tid,
			vtrace_vthread_name(k->t, name, sizeof(name)));
	tid = k->t->tid;
	if (amb) {
		for (int i = 0; i < fit->nr_cand && len < sizeof(tids); i++)
			len += snprintf(tids + len, sizeof(tids) - len, " %d", fit->cand[i].t->tid);
		dat_warn("guest %s cpu %d: ambiguous: %d threads %s %d%s (tids%s) fit the %"
			 PRIu64 " of its events in the host trace equally well: tid %d is taken",
			 d->name, c, fit->nr_cand, k->t->idx >= 0 ? "\"CPU" : "of vCPU",
			 d->hist[c]->vcpu_idx, k->t->idx >= 0 ? "/KVM\"" : "", tids, k->checked,
			 tid);
	}
	vtrace_check_cpu_free(&cc);
	return tid;
}

/* Each guest CPU's vCPU thread in the host trace @path */
static int find_vcpu_tids(struct dat *gs, int nr, const char *path, struct tep_handle *tep)
{
	struct vtrace_vthreads vt;
	int ret = vtrace_vthreads_read_dat(&vt, path);

	for (int i = 0; i < nr && !ret; i++)
		for (unsigned int c = 0; c < gs[i].info->nr_cpus && !ret; c++) {
			gs[i].vcpu_tid[c] = vcpu_tid(&gs[i], &vt, tep, c);
			ret = gs[i].vcpu_tid[c] < 0 ? -1 : 0;
		}
	vtrace_vthreads_free(&vt);
	return ret;
}

/*
 * vtrace-merge's self-check, on the times the files will give: each guest
 * event, on the host's TSC, inside a span of its vCPU's thread.  Events
 * outside make the timeline wrong: no files unless --force.
 */
static int self_check(struct dat *gs, int nr)
{
	uint64_t outside = 0, worst = 0, khz = gs[0].khz;
	const char *unit = khz ? "ns" : "TSC cycles";

	for (int i = 0; i < nr; i++) {
		struct dat *d = &gs[i];
		unsigned int cpus = d->info->nr_cpus;

		outside += d->sc.outside;
		if (d->sc.worst > worst)
			worst = d->sc.worst;
		if (d->sc_unverified == (int)cpus) {
			fprintf(stderr, "vtrace dat: self-check: guest %s: unverified: no spans of"
				" its vCPU threads in the host trace hold its events (record the host"
				" with trace-cmd record -C x86-tsc -e sched:sched_switch -e"
				" kvm:kvm_entry -e kvm:kvm_exit)\n", d->name);
			continue;
		}
		fprintf(stderr, "vtrace dat: self-check: guest %s: %" PRIu64 " events checked, %"
			PRIu64 " outside (tolerance %d ns), worst %" PRIu64 " %s outside: ", d->name,
			d->sc.checked, d->sc.outside, VTRACE_VCPU_TOLERANCE_NS,
			khz ? vtrace_tsc_to_ns(d->sc.worst, khz) : d->sc.worst, unit);
		if (d->sc.outside)
			fputs("FAILED\n", stderr);
		else if (d->sc_unverified)
			fprintf(stderr, "verified on %u of %u guest CPUs\n",
				cpus - d->sc_unverified, cpus);
		else
			fputs("verified\n", stderr);
	}
	if (!outside)
		return 0;
	if (khz)
		worst = vtrace_tsc_to_ns(worst, khz);
	if (gs[0].force) {
		dat_warn("self-check: %" PRIu64 " guest events fall outside the times their vCPU"
			 " could run (worst %" PRIu64 " %s): the files are written (--force), their"
			 " timeline is wrong", outside, worst, unit);
		return 0;
	}
	vtrace_set_error("self-check: %" PRIu64 " guest events fall outside the times their vCPU"
			 " could run (worst %" PRIu64 " %s): the timeline is wrong. Likely causes:"
			 " the offsets or the dump of another VM (pid=), an incomplete offset"
			 " history, a host trace of another boot or capture; --force writes the"
			 " files anyway", outside, worst, unit);
	return -1;
}

/*
 * The host copy keeps the host file's options, and trace-cmd adds its
 * OFFSET and DATE to every time stamp (and applies its TSC2NSEC and
 * TIME_SHIFT): the host would be shifted against its guests.  A record's
 * time stamp read as trace-cmd reads it (@h) must be the raw one (@raw).
 */
static int check_host_shift(const char *path, struct tracecmd_input *h,
			    struct tracecmd_input *raw)
{
	int cpus, ret = 0;

	cpus = tep_get_cpus(tracecmd_get_tep(h));
	for (int cpu = 0; cpu < cpus && !ret; cpu++) {
		struct tep_record *a = tracecmd_read_cpu_first(h, cpu);
		struct tep_record *b = tracecmd_read_cpu_first(raw, cpu);

		if (a && b && a->ts != b->ts) {
			vtrace_set_error("%s: trace-cmd reads its CPU %d's first time stamp as %llu,"
					 " the ring buffer's is %llu: its options (OFFSET, DATE,"
					 " TSC2NSEC or TIME_SHIFT: trace-cmd record --ts-offset, --date,"
					 " --tsc2nsec) shift or scale its times, and the host copy would"
					 " keep them: record the host without them", path, cpu,
					 a->ts, b->ts);
			ret = -1;
		}
		tracecmd_free_record(a);
		tracecmd_free_record(b);
	}
	return ret;
}

static uint64_t fnv64(uint64_t h, const void *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ULL;
	return h;
}

/* The host's TRACEID (made up if it has none) and each guest's vCPU threads */
int dat_read_host(struct dat *gs, int nr)
{
	const char *host = gs[0].host;
	struct tracecmd_input *h = NULL;
	bool has_id = false;
	uint64_t id = 0;
	int ret;

	if (host) {
		/* first the checked opening: libtracecmd's own then opens a file it comes through */
		struct tracecmd_input *raw = vtrace_dat_open_raw(host);

		if (!raw)
			return -1;
		h = tracecmd_open(host, TRACECMD_FL_LOAD_NO_PLUGINS);
		if (!h) {
			vtrace_set_error("%s: trace-cmd cannot open it as a trace.dat", host);
			tracecmd_close(raw);
			return -1;
		}
		ret = vtrace_dat_check_clock(host, vtrace_dat_clock(h)) ||
		      check_host_shift(host, h, raw);
		tracecmd_close(raw);
		if (ret) {
			tracecmd_close(h);
			return -1;
		}
		id = tracecmd_get_traceid(h);
		has_id = id != 0;
	}
	if (!host)
		host = "host";
	if (!id)
		id = fnv64(0xcbf29ce484222325ULL, host, strlen(host));
	for (int i = 0; i < nr; i++) {
		gs[i].host_id = id;
		gs[i].host_has_id = has_id;
		if (h) {
			struct tep_handle *tep = tracecmd_get_tep(h);

			gs[i].host_cpus = tep_get_cpus(tep);
			gs[i].host_kvm = tep_find_event_by_name(tep, "kvm", "kvm_entry") &&
					 tep_find_event_by_name(tep, "kvm", "kvm_exit");
		}
		gs[i].guest_id = fnv64(id, gs[i].name, strlen(gs[i].name)) | 1;
	}
	if (!h) {
		fprintf(stderr, "vtrace dat: self-check: unverified: no host trace (--host) to"
			" check the guests' times against\n");
		return 0;
	}
	ret = find_vcpu_tids(gs, nr, host, tracecmd_get_tep(h));
	tracecmd_close(h);
	return ret ? ret : self_check(gs, nr);
}
