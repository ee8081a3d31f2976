// SPDX-License-Identifier: GPL-2.0
/* test-tsc.c: the exact TSC conversion and the choice of offset interval. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/vtrace.h>

#include "vtrace-tsc.h"
#include "vtrace-util.h"
#include "ktap.h"

static struct vtrace_tsc_interval iv(uint64_t t, int64_t off, uint64_t mult, uint32_t frac)
{
	return (struct vtrace_tsc_interval){ .host_tsc = t, .offset = (uint64_t)off,
					     .mult = mult, .frac = frac };
}

static void test_inverse(void)
{
	struct vtrace_tsc_interval a = iv(0, -5000, 1ULL << 32, 32);
	struct vtrace_tsc_interval b = iv(0, 123456789, 3ULL << 47, 48);	/* x1.5 */
	struct vtrace_tsc_interval c = iv(0, -7, 3ULL << 30, 32);		/* x0.75 */
	struct vtrace_tsc_interval w = iv(0, (int64_t)0x8000000000000000ULL, 1, 0);
	uint64_t h = 0, bad = 0;

	ktap_check(!vtrace_tsc_host(&a, 1000, &h) && h == 6000, "tsc_unscaled_is_subtraction",
		   "got %llu", (unsigned long long)h);
	ktap_check(!vtrace_tsc_host(&w, 5, &h) && h == 0x8000000000000005ULL,
		   "tsc_subtraction_wraps_mod_2_64", "got %llx", (unsigned long long)h);
	/* every host cycle maps back to the first cycle showing the same guest value */
	for (uint64_t t = 1000000000000ULL; t < 1000000000000ULL + 100000; t += 7) {
		uint64_t g = vtrace_tsc_guest(&b, t);

		if (vtrace_tsc_host(&b, g, &h) || vtrace_tsc_guest(&b, h) != g ||
		    (h && vtrace_tsc_guest(&b, h - 1) == g))
			bad++;
		g = vtrace_tsc_guest(&c, t);
		if (vtrace_tsc_host(&c, g, &h) || vtrace_tsc_guest(&c, h) != g || h > t ||
		    (h && vtrace_tsc_guest(&c, h - 1) == g))
			bad++;
	}
	ktap_check(!bad, "tsc_scaled_inverse_exact", "%llu bad", (unsigned long long)bad);
	/* 2^63 cycles with 48 fraction bits: needs 111-bit intermediates */
	b = iv(0, 0, 1ULL << 48, 48);
	ktap_check(!vtrace_tsc_host(&b, 1ULL << 63, &h) && h == 1ULL << 63, "tsc_128_bit_math",
		   "got %llu", (unsigned long long)h);
	ktap_check(vtrace_tsc_to_ns(2500000000ULL, 2500000) == 1000000000ULL &&
		   vtrace_tsc_to_ns(UINT64_MAX, 1000000) == UINT64_MAX,
		   "tsc_to_ns_no_overflow", "");
}

static uint64_t map(struct vtrace_tsc_map *m, uint64_t g)
{
	uint64_t h = 0;

	if (vtrace_tsc_map_event(m, g, &h))
		return UINT64_MAX;
	return h;
}

/* guest windows for the map: [lo, hi] in host TSC (ctx: two numbers) */
static int in_window(void *ctx, uint64_t t)
{
	const uint64_t *w = ctx;

	return t >= w[0] && t <= w[1];
}

/*
 * An offset set back by 1e6 at host 2e6 (the unstable host): guest TSC
 * 1000000 maps inside both intervals, to 1000000 and 2000000.  The forward
 * rule takes the later; the guest windows confirm it, or move the event.
 */
static void test_ambiguous(void)
{
	struct vtrace_tsc_interval un[] = { iv(1000, 0, 1ULL << 32, 32),
					    iv(2000000, -1000000, 1ULL << 32, 32) };
	struct vtrace_vcpu_history h = { .nr = 2, .iv = un };
	uint64_t after[2] = { 2000000, 3000000 }, before[2] = { 1000, 1500000 };
	uint64_t both[2] = { 1000, 3000000 };
	struct vtrace_tsc_map m;
	int ok;

	vtrace_tsc_map_init(&m, &h, 0);
	ok = map(&m, 999999) == 999999 && map(&m, 1000000) == 2000000 && m.ambiguous == 1 &&
	     m.told_apart == 0;
	ktap_check(ok, "tsc_ambiguous_counted_without_windows", "ambiguous %llu",
		   (unsigned long long)m.ambiguous);

	vtrace_tsc_map_init(&m, &h, 0);
	vtrace_tsc_map_set_windows(&m, in_window, after);
	ok = map(&m, 999999) == 999999 && map(&m, 1000000) == 2000000 && m.told_apart == 1 &&
	     m.moved == 0 && m.ambiguous == 0;
	vtrace_tsc_map_init(&m, &h, 0);
	vtrace_tsc_map_set_windows(&m, in_window, before);
	ok = ok && map(&m, 999999) == 999999 && map(&m, 1000000) == 1000000 &&
	     map(&m, 1000100) == 1000100 && m.told_apart == 2 && m.moved == 2 && m.cur == 0;
	ktap_check(ok, "tsc_ambiguous_told_apart_by_guest_windows", "told %llu moved %llu cur %zu",
		   (unsigned long long)m.told_apart, (unsigned long long)m.moved, m.cur);

	vtrace_tsc_map_init(&m, &h, 0);
	vtrace_tsc_map_set_windows(&m, in_window, both);
	ok = map(&m, 999999) == 999999 && map(&m, 1000000) == 2000000 && m.ambiguous == 1 &&
	     m.told_apart == 0;
	ktap_check(ok, "tsc_ambiguous_both_in_windows_kept", "ambiguous %llu",
		   (unsigned long long)m.ambiguous);
}

static void test_intervals(void)
{
	/* guest writes TSC +3e9 at host 5e9 */
	struct vtrace_tsc_interval fw[] = { iv(1000, -1000, 1ULL << 32, 32),
					    iv(5000000000ULL, 3000000000LL - 1000, 1ULL << 32, 32) };
	/* unstable host: offset steps back by the 1e6 cycles the vCPU was off the CPU */
	struct vtrace_tsc_interval un[] = { iv(1000, 0, 1ULL << 32, 32),
					    iv(2000000, -1000000, 1ULL << 32, 32) };
	/* guest writes a smaller TSC (-1e9) at host 5e9 */
	struct vtrace_tsc_interval bw[] = { iv(1000, 0, 1ULL << 32, 32),
					    iv(5000000000ULL, -1000000000LL, 1ULL << 32, 32) };
	struct vtrace_vcpu_history h = { .nr = 2 };
	struct vtrace_tsc_map m;
	int ok;

	h.iv = fw;
	vtrace_tsc_map_init(&m, &h, 0);
	ok = map(&m, 4999999000ULL - 1) == 4999999999ULL &&
	     map(&m, 7999999000ULL) == 5000000000ULL && m.cur == 1;
	ktap_check(ok, "tsc_forward_jump_at_the_write", "cur %zu", m.cur);

	/* last event before the put at 1e6, first after the load at 2e6 */
	h.iv = un;
	vtrace_tsc_map_init(&m, &h, 0);
	ok = map(&m, 999999) == 999999 && map(&m, 1000000) == 2000000 &&
	     map(&m, 1000500) == 2000500;
	ktap_check(ok, "tsc_backward_step_guest_side_boundary", "cur %zu", m.cur);

	h.iv = bw;
	vtrace_tsc_map_init(&m, &h, 0);
	ok = map(&m, 3000000000ULL) == 3000000000ULL &&
	     map(&m, 4000000100ULL) == 5000000100ULL && m.cur == 1;
	ktap_check(ok, "tsc_guest_wrote_smaller_value", "cur %zu backwards %llu", m.cur,
		   (unsigned long long)m.backwards);

	vtrace_tsc_map_init(&m, &h, 0);
	ktap_check(map(&m, 500) == UINT64_MAX, "tsc_before_history_refused", "");
	vtrace_tsc_map_init(&m, &h, 1);
	ktap_check(map(&m, 500) == 500 && m.extrapolated == 1, "tsc_assume_constant_extrapolates",
		   "");
	/* with the drops known, events before the write stay in the old interval */
	{
		struct vtrace_tsc_drop d = { .index = 2, .before = 4999999000ULL,
					     .after = 4000000100ULL };

		vtrace_tsc_map_init(&m, &h, 0);
		vtrace_tsc_map_set_drops(&m, &d, 1);
		ok = vtrace_tsc_map_needs_drops(&m) && map(&m, 4200000000ULL) == 4200000000ULL &&
		     map(&m, 4999999000ULL) == 4999999000ULL &&
		     map(&m, 4000000100ULL) == 5000000100ULL && m.cur == 1 && m.backwards == 1;
		ktap_check(ok, "tsc_backward_write_with_lookahead", "cur %zu", m.cur);
	}
	/*
	 * Records 104970-104973 and 104978 of vCPU 0 in an align_unstable run:
	 * the offset jumps forward (104971) and back.  Interval 104971 starts
	 * at guest TSC 85810926030, above where 104972 and 104973 start, and the
	 * forward rule alone kept the "before" marker of a sample in 104970:
	 * 1.7 ms late, after the host's hypercall and its own "after" marker.
	 */
	{
		struct vtrace_tsc_interval jw[] = {
			iv(130791210468ULL, -44988188609LL, 1ULL << 32, 32),
			iv(130794330624ULL, -44983404594LL, 1ULL << 32, 32),
			iv(130795595238ULL, -44987758372LL, 1ULL << 32, 32),
			iv(130795665074ULL, -44986460328LL, 1ULL << 32, 32),
			iv(130805844361ULL, -44986960776LL, 1ULL << 32, 32) };
		struct vtrace_vcpu_history hj = { .nr = 5, .iv = jw };

		vtrace_tsc_map_init(&m, &hj, 0);
		ok = map(&m, 85803100000ULL) == 130791288609ULL && m.cur == 0 &&
		     map(&m, 85810618002ULL) == 130797078330ULL && m.cur == 3 &&
		     map(&m, 85810941286ULL) == 130797401614ULL && m.cur == 3 &&
		     m.resynced == 1;
		ktap_check(ok, "tsc_offset_jumps_both_ways_unstable_host", "cur %zu resynced %llu",
			   m.cur, (unsigned long long)m.resynced);
	}
	/* first event after the backward write: starts in the right interval */
	vtrace_tsc_map_init(&m, &h, 0);
	ktap_check(map(&m, 4500000000ULL) == 5500000000ULL, "tsc_first_event_after_backward_write",
		   "cur %zu", m.cur);
}

/*
 * Snapshots vtrace_host writes into a trace when its event is enabled
 * there (since = the enable's host TSC).  The trace's first event is at
 * 1500, the enable at 3000.
 */
static struct vtrace_offset_record rec(uint64_t t, int64_t prev, int64_t off, uint32_t kind,
				       uint64_t since, uint32_t vcpu_id)
{
	struct vtrace_offset_record r = { .host_tsc = t, .prev_offset = (uint64_t)prev,
					  .offset = (uint64_t)off, .mult = 1ULL << 32, .frac = 32,
					  .kind = kind, .pid = 100, .vcpu_id = vcpu_id,
					  .vcpu_idx = (int)vcpu_id, .since = since };

	snprintf(r.vm, sizeof(r.vm), "100-11");
	return r;
}

static void test_enable_snapshot(void)
{
	/* host TSC order; vCPU 0: the snapshot only; vCPU 1: a write at 4500
	 * after the enable, then its snapshot read before KVM stored it (stale);
	 * vCPU 2: a write of an earlier enable (2000), then this enable's snapshot */
	struct vtrace_offset_record r[] = {
		rec(2000, -7, -8, VTRACE_TSC_WRITE, 0, 2),
		rec(4500, -500, -900, VTRACE_TSC_WRITE, 0, 1),
		rec(5000, -1000, -1000, VTRACE_TSC_SNAPSHOT, 3000, 0),
		rec(5001, -500, -500, VTRACE_TSC_SNAPSHOT, 3000, 1),
		rec(5002, -9, -9, VTRACE_TSC_SNAPSHOT, 3000, 2),
	};
	struct vtrace_offsets_trace tr = { .start_tsc = 1500, .tsc_khz = 2596131, .end_tsc = 9000 };
	const struct vtrace_vcpu_history *h0, *h1, *h2;
	struct vtrace_offsets *o;
	struct vtrace_tsc_map m;
	bool quiet = vtrace_set_quiet(true);
	int ok;

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		r[i].seq = i;
	o = vtrace_offsets_from_trace("t.dat", r, sizeof(r) / sizeof(r[0]), &tr);
	vtrace_set_quiet(quiet);
	h0 = o ? vtrace_offsets_vcpu(o, 100, 0) : NULL;
	h1 = o ? vtrace_offsets_vcpu(o, 100, 1) : NULL;
	h2 = o ? vtrace_offsets_vcpu(o, 100, 2) : NULL;
	ok = h0 && h0->nr == 1 && h0->iv[0].host_tsc == 3000 &&
	     h0->iv[0].kind == VTRACE_TSC_SNAPSHOT && h0->start_why == VTRACE_START_ENABLE &&
	     vtrace_offsets_tsc_khz(o) == 2596131;
	if (ok) {	/* a guest event at host 3200, before the snapshot: placed */
		vtrace_tsc_map_init(&m, h0, 0);
		ok = map(&m, 3200 - 1000) == 3200;
	}
	ktap_check(ok, "enable_snapshot_holds_from_the_enable", "");
	ok = h1 && h1->nr == 3 && h1->start_why == VTRACE_START_ENABLE &&
	     h1->iv[0].host_tsc == 3000 && h1->iv[0].offset == (uint64_t)-500 &&
	     h1->iv[0].kind == VTRACE_TSC_SNAPSHOT && h1->iv[1].offset == (uint64_t)-900 &&
	     h1->iv[2].offset == (uint64_t)-900;
	ktap_check(ok, "enable_snapshot_after_a_write_takes_its_offset", "");
	ok = h2 && h2->nr == 3 && h2->start_why == VTRACE_START_UNKNOWN &&
	     h2->iv[0].kind == VTRACE_TSC_ASSUMED && h2->iv[1].offset == (uint64_t)-8 &&
	     h2->iv[2].offset == (uint64_t)-9;
	ktap_check(ok, "enable_snapshot_after_an_earlier_enable_keeps_its_own", "");
	vtrace_offsets_close(o);
}

/*
 * A hostile offsets file: N records in reverse seq order, every other seq
 * missing, each of its own VM.  The gap count once used an insertion sort
 * (N^2/2 steps here) and the lookups a linear scan (N per lookup): both must
 * now be N log N.  Steps are counted, not timed (vtrace_offsets_steps()).
 */
#define HOSTILE_RECORDS	100000	/* < 2^17 */

static void test_hostile_offsets_file(void)
{
	char path[] = "/tmp/vtrace-test-offsets.XXXXXX";
	int fd = mkstemp(path), err = memfd_create("warnings", 0), saved = dup(2), found = 0;
	double bound = 2.0 * HOSTILE_RECORDS * 17;	/* 2 N log2 N: 2^17 > N */
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct vtrace_offsets *o = NULL;
	uint64_t before, open_steps = 0, find_steps;
	char warnings[4096];
	ssize_t n;
	int lines = 0;

	if (f) {
		fprintf(f, "%s\n%s\n", VTRACE_OFFSETS_VERSION, VTRACE_OFFSETS_HEADER);
		for (int i = 0; i < HOSTILE_RECORDS; i++)
			fprintf(f, "%d 1000 %d vm-%d 0 0 0 -5 4294967296 32 snapshot 0 %d 0\n",
				2 * (HOSTILE_RECORDS - i), i + 1, i + 1, i + 1);
		fprintf(f, "%s host_tsc=2000 records=%d dropped=0\n", VTRACE_OFFSETS_END,
			HOSTILE_RECORDS);
		fclose(f);
		before = vtrace_offsets_steps();
		fflush(stderr);
		dup2(err, 2);
		o = vtrace_offsets_open(path);
		fflush(stderr);
		dup2(saved, 2);
		open_steps = vtrace_offsets_steps() - before;
	}
	ktap_check(o && vtrace_offsets_records(o) == HOSTILE_RECORDS &&
		   vtrace_offsets_gaps(o) == HOSTILE_RECORDS - 1, "offsets_hostile_gaps_counted",
		   "%s", o ? "wrong counts" : vtrace_last_error());
	ktap_check(open_steps <= bound, "offsets_hostile_open_n_log_n",
		   "%llu comparisons for %d records, bound %.0f", (unsigned long long)open_steps,
		   HOSTILE_RECORDS, bound);
	before = vtrace_offsets_steps();
	for (int pid = 1; o && pid <= HOSTILE_RECORDS; pid++)
		found += vtrace_offsets_vcpu(o, pid, 0) && !vtrace_offsets_vcpu(o, pid, 1) &&
			 vtrace_offsets_has_pid(o, pid);
	find_steps = vtrace_offsets_steps() - before;
	ktap_check(found == HOSTILE_RECORDS && find_steps <= 3 * bound,
		   "offsets_hostile_lookups_log_n", "%d of %d found in %llu steps, bound %.0f",
		   found, HOSTILE_RECORDS, (unsigned long long)find_steps, 3 * bound);
	/* one warning per gap would be 99,999 lines: the first 8, then a summary */
	n = pread(err, warnings, sizeof(warnings) - 1, 0);
	warnings[n > 0 ? n : 0] = '\0';
	for (char *p = warnings; (p = strchr(p, '\n')); p++)
		lines++;
	ktap_check(lines == 9 && strstr(warnings, "99991 more gaps or repeated seqs not listed"
					  " (99999 records missing, 0 seqs repeated in all)"),
		   "offsets_hostile_warnings_capped", "%d lines: %.200s", lines, warnings);
	vtrace_offsets_close(o);
	unlink(path);
	close(err);
	close(saved);
}

int main(void)
{
	printf("KTAP version 1\n1..23\n");
	test_inverse();
	test_intervals();
	test_ambiguous();
	test_hostile_offsets_file();
	test_enable_snapshot();
	return ktap_finish();
}
