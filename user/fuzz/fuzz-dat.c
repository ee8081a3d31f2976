// SPDX-License-Identifier: GPL-2.0
/* fuzz-dat.c: vtrace dat (the trace.dat writer) fed with a fuzzed guest capture. */
/*
 * Input layout: as fuzz-dump (u32 ctl_len, ctl, cpu0), the guest dump
 * folder "g".  vtrace dat runs as on the command line:
 *
 *   vtrace dat --guest g=DIR/g,pid=131 --offsets tests/fixtures/real-l2/tsc_offsets
 *              --out DIR/out
 *
 * (the real L2 capture's offsets: pid 131, vCPUs 0 and 1), and whatever
 * it wrote, DIR/out/g.dat, is opened again with libtracecmd and every
 * record read, as trace-cmd report would.
 */
#include <getopt.h>
#include <sys/stat.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "fuzz.h"
#include "vtrace-dump.h"
#include "vtrace-local.h"

#define MAX_RECORDS	4096

static char guest_arg[4200], offsets[4096], out[4096], dat[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vtrace_set_quiet(true);
	/* FUZZ_NO_PROBE=1: vtrace dat opens its guests without the probe child */
	vtrace_dump_forced_flags = fuzz_dump_flags();
	fuzz_keep_plugins();	/* g.dat is opened with libtracecmd: its plugins */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	snprintf(offsets, sizeof(offsets), "%s", FUZZ_OFFSETS);
	snprintf(out, sizeof(out), "%s", fuzz_path("out"));
	snprintf(dat, sizeof(dat), "%s/g.dat", out);
	if (mkdir(fuzz_path("g"), 0700))
		abort();
	return 0;
}

static void read_back(void)
{
	struct tracecmd_input *in = tracecmd_open(dat, TRACECMD_FL_LOAD_NO_PLUGINS);
	int n = 0;

	if (!in)
		return;
	for (int cpu = 0; cpu < tep_get_cpus(tracecmd_get_tep(in)); cpu++) {
		struct tep_record *rec;

		while (n++ < MAX_RECORDS && (rec = tracecmd_read_data(in, cpu))) {
			fuzz_sink += rec->ts;
			tracecmd_free_record(rec);
		}
	}
	tracecmd_close(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = { "dat", "--guest", guest_arg, "--offsets", offsets, "--out", out, NULL };
	uint32_t ctl_len;

	if (size < 4)
		return 0;
	ctl_len = fuzz_le32(data) & 0x7fffffff;
	data += 4;
	size -= 4;
	if (ctl_len > size)
		ctl_len = size;
	fuzz_write("g/ctl", data, ctl_len);
	if (size > ctl_len)
		fuzz_write("g/cpu0", data + ctl_len, size - ctl_len);
	else
		fuzz_unlink("g/cpu0");
	fuzz_unlink("out/g.dat");

	/* vtrace dat cuts its --guest argument in place: a fresh one each time */
	snprintf(guest_arg, sizeof(guest_arg), "g=%s,pid=131", fuzz_path("g"));
	optind = 0;	/* getopt_long() starts over */
	if (vtrace_cmd_dat(7, argv) == 0)
		read_back();
	else
		fuzz_note_contained(data - 4, size + 4);
	return 0;
}
