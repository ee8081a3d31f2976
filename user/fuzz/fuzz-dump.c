// SPDX-License-Identifier: GPL-2.0
/* fuzz-dump.c: a whole dump folder (ctl + cpu0), opened and read to the last event. */
/*
 * Input layout (seeds: fuzz/seeds.py):
 *
 *   u32 LE  ctl_len, top bit set = open with VTRACE_DUMP_SKIP_BAD
 *   ctl_len bytes   DIR/ctl   (all the rest if the input is shorter)
 *   the rest        DIR/cpu0  (absent when empty)
 *
 * vtrace_dump_open() parses the control stream and its metadata through
 * libtraceevent; every CPU reader of the dump is then drained with
 * vtrace_cpu_reader_next() and each event printed as vtrace-merge prints
 * it (tep_print_event() with the guest's own print formats).
 */
#include <event-parse.h>
#include <trace-seq.h>

#include "fuzz.h"
#include "vtrace-dump.h"

#define MAX_CPUS	4	/* readers opened; only cpu0 has data */
#define MAX_EVENTS	4096	/* per CPU and input, to keep executions fast */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct vtrace_meta_info *mi;
	struct vtrace_dump *d;
	uint32_t ctl_len;
	unsigned int flags = VTRACE_DUMP_NO_PLUGINS | fuzz_dump_flags();
	const uint8_t *input = data;
	size_t input_size = size;

	if (size < 4)
		return 0;
	ctl_len = fuzz_le32(data);
	if (ctl_len >> 31)
		flags |= VTRACE_DUMP_SKIP_BAD;
	ctl_len &= 0x7fffffff;
	data += 4;
	size -= 4;
	if (ctl_len > size)
		ctl_len = size;
	fuzz_write("ctl", data, ctl_len);
	if (size > ctl_len)
		fuzz_write("cpu0", data + ctl_len, size - ctl_len);
	else
		fuzz_unlink("cpu0");

	d = vtrace_dump_open(fuzz_dir(), flags);
	if (!d) {
		fuzz_note_contained(input, input_size);
		return 0;
	}
	mi = vtrace_dump_info(d);
	fuzz_sink += vtrace_dump_has_eos(d) + vtrace_dump_qemu_pid(d);
	if (vtrace_dump_kallsyms(d))
		fuzz_sink += strlen(vtrace_dump_kallsyms(d));
	for (unsigned int cpu = 0; cpu < mi->nr_cpus && cpu < MAX_CPUS; cpu++) {
		const struct vtrace_cpu_stats *eos = vtrace_dump_eos(d, cpu);

		fuzz_sink += vtrace_dump_cpu(d, cpu)->apic_id + (eos ? eos->events_sent : 0);
		fuzz_read_cpu(d, cpu, fuzz_seq(), MAX_EVENTS);
	}
	vtrace_dump_close(d);
	return 0;
}
