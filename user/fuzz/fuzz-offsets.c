// SPDX-License-Identifier: GPL-2.0
/* fuzz-offsets.c: vtrace_host's tsc_offsets file, and conversions through what it yields. */
/*
 * The input is the file.  When vtrace_offsets_open() accepts it, every
 * vCPU history is used as vtrace-merge uses it: a vtrace_tsc_map converts
 * guest TSCs at and around each interval's start (both directions, the
 * constant-offset assumption on and off), with the file's own multipliers
 * and fraction bits.
 */
#include "fuzz.h"
#include "vtrace-tsc.h"

static void convert(const struct vtrace_vcpu_history *h, int assume)
{
	struct vtrace_tsc_map map;
	uint64_t host;

	vtrace_tsc_map_init(&map, h, assume);
	for (size_t i = 0; i < h->nr; i++) {
		uint64_t g = vtrace_tsc_guest(&h->iv[i], h->iv[i].host_tsc);

		if (!vtrace_tsc_host(&h->iv[i], g, &host))
			fuzz_sink += host;
		for (int d = -1; d <= 1; d++)
			if (!vtrace_tsc_map_event(&map, g + d, &host))
				fuzz_sink += host;
	}
	fuzz_sink += map.backwards + map.extrapolated + vtrace_tsc_to_ns(map.prev_host, 2000000) +
		     vtrace_ns_to_tsc(map.prev_guest, 2000000);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vtrace_offsets *o;
	char *pids;

	fuzz_write("tsc_offsets", data, size);
	o = vtrace_offsets_open(fuzz_path("tsc_offsets"));
	if (!o)
		return 0;
	fuzz_sink += vtrace_offsets_records(o) + vtrace_offsets_gaps(o) +
		     vtrace_offsets_anomalies(o);
	pids = vtrace_offsets_pids(o);
	if (pids)
		fuzz_sink += strlen(pids);
	free(pids);
	/* the histories, through the public lookups only */
	for (int pid = 0; pid < 64; pid++) {
		if (!vtrace_offsets_has_pid(o, pid))
			continue;
		for (uint32_t vcpu = 0; vcpu < 16; vcpu++) {
			const struct vtrace_vcpu_history *h = vtrace_offsets_vcpu(o, pid, vcpu);

			if (h) {
				fuzz_sink += strlen(h->vm) + h->vcpu_idx;
				convert(h, 0);
				convert(h, 1);
			}
		}
	}
	vtrace_offsets_close(o);
	return 0;
}
