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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vtrace_offsets *o;

	fuzz_write("tsc_offsets", data, size);
	o = vtrace_offsets_open(fuzz_path("tsc_offsets"));
	if (!o)
		return 0;
	fuzz_use_offsets(o);
	vtrace_offsets_close(o);
	return 0;
}
