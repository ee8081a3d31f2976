// SPDX-License-Identifier: GPL-2.0
/* fuzz-host.c: the host's files, a trace.dat (v6, v7, compressed) and a tsc_offsets file. */
/*
 * Input layout (seeds: fuzz/host-seeds.sh):
 *
 *   u32 LE  dat_len, top bit set = read the pages with VTRACE_DUMP_SKIP_BAD
 *   dat_len bytes   DIR/host.dat   (absent when 0; all the rest if the input is shorter)
 *   the rest        DIR/tsc_offsets (absent when empty)
 *
 * host.dat goes through the readers as vtrace-merge --host FILE drives them
 * (src/merge/machine.c, open_dat()): the magic, the page layout
 * (vtrace_dump_open_dat(): its headers through libtracecmd, the CPU data
 * table of v6 or the BUFFER options of v7), the trace clock, trace-cmd's
 * CPU statistics and instances, and every CPU's pages read to the last
 * event and printed, a compressed file's chunk by chunk (dat-chunks.c).
 * Then the offset history of its
 * vtrace_host:tsc_offset events (vtrace_offsets_open_dat(), as without
 * --offsets) and its vCPU threads (vtrace_vthreads_read_dat(), as
 * --check and vtrace dat read them).  tsc_offsets goes through
 * vtrace_offsets_open() (as --offsets FILE).  Each history the readers
 * accept is used as vtrace-merge uses it (fuzz_use_offsets()).
 */
#include <event-parse.h>
#include <trace-cmd.h>
#include <trace-seq.h>

#include "fuzz.h"
#include "vtrace-dump.h"
#include "vtrace-tsc.h"
#include "vtrace-vcpu.h"

#define HOST_MAX_CPUS	8	/* CPUs whose pages are read (the seeds have 2) */
#define HOST_MAX_EVENTS	4096	/* per CPU and input, to keep executions fast */

/* What machine.c asks of a file: its counts at the stop, its instances */
static void host_stats(struct tracecmd_input *h, int nr_cpus)
{
	struct vtrace_dat_cpustat st;
	char msg[512];

	fuzz_sink += vtrace_dat_unread(h, msg, sizeof(msg)) + strlen(msg);
	fuzz_sink += vtrace_dat_instances(h, msg, sizeof(msg)) + strlen(msg);
	for (int cpu = 0; cpu < nr_cpus && cpu < HOST_MAX_CPUS; cpu++)
		if (!vtrace_dat_cpustat(h, cpu, &st))
			fuzz_sink += st.left + st.overrun + st.dropped + st.read;
}

static void host_read_pages(const char *path, unsigned int flags, struct trace_seq *s)
{
	struct vtrace_dump *d;

	if (vtrace_dat_check_magic(path))
		return;
	d = vtrace_dump_open_dat(path, flags);
	if (!d)
		return;
	if (!vtrace_dat_check_clock(path, vtrace_dump_dat_clock(d)))
		fuzz_sink++;
	host_stats(vtrace_dump_dat_handle(d), vtrace_dump_info(d)->nr_cpus);
	for (unsigned int cpu = 0; cpu < vtrace_dump_info(d)->nr_cpus && cpu < HOST_MAX_CPUS;
	     cpu++)
		fuzz_read_cpu(d, cpu, s, HOST_MAX_EVENTS);
	vtrace_dump_close(d);
}

static void host_read_dat(const char *path, unsigned int flags)
{
	struct vtrace_vthreads vt = { 0 };
	struct vtrace_offsets *o;
	bool found;

	host_read_pages(path, flags, fuzz_seq());
	o = vtrace_offsets_open_dat(path, &found);
	if (o) {
		fuzz_use_offsets(o);
		vtrace_offsets_close(o);
	}
	if (!vtrace_vthreads_read_dat(&vt, path))
		fuzz_sink += vt.nr_th + vt.lo + vt.hi + vt.lost + vt.nr_switch + vt.nr_entry;
	vtrace_vthreads_free(&vt);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vtrace_set_quiet(true);
	fuzz_keep_plugins();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int flags = VTRACE_DUMP_NO_PLUGINS | fuzz_dump_flags();
	const uint8_t *input = data;
	size_t input_size = size;
	struct vtrace_offsets *o;
	uint32_t dat_len;

	if (size < 4)
		return 0;
	dat_len = fuzz_le32(data);
	if (dat_len >> 31)
		flags |= VTRACE_DUMP_SKIP_BAD;
	dat_len &= 0x7fffffff;
	data += 4;
	size -= 4;
	if (dat_len > size)
		dat_len = size;
	if (dat_len) {
		fuzz_write("host.dat", data, dat_len);
		host_read_dat(fuzz_path("host.dat"), flags);
	}
	if (size > dat_len) {
		fuzz_write("tsc_offsets", data + dat_len, size - dat_len);
		o = vtrace_offsets_open(fuzz_path("tsc_offsets"));
		if (o) {
			fuzz_use_offsets(o);
			vtrace_offsets_close(o);
		}
	}
	/* any of the three openings of host.dat: every input, so a death is this one's */
	fuzz_note_contained(input, input_size);
	return 0;
}
