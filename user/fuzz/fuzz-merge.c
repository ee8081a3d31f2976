// SPDX-License-Identifier: GPL-2.0
/* fuzz-merge.c: vtrace-merge's whole command line over a fuzzed guest dump and offsets file. */
/*
 * Input layout (seeds: fuzz/seeds.py --merge):
 *
 *   u32 LE  flags        bit 0 --skip-bad-pages, bit 1 --assume-constant-offset,
 *                        bit 2 no pid= (the pid is guessed from the offsets file),
 *                        bit 3 --raw-tsc; runs added: bit 4 --stats,
 *                        bit 5 --format perfetto, bit 6 --format svg,
 *                        bit 7 --explain --format svg; more options: bit 8
 *                        --event 'sched:*,*print*', bit 9 --from 121.2 --to 121.25,
 *                        bit 10 no --tsc-khz (times in TSC cycles; with --raw-tsc)
 *   u32 LE  ctl_len
 *   u32 LE  offsets_len
 *   u32 LE  cpu0_len
 *   ctl_len bytes        DIR/g/ctl
 *   offsets_len bytes    DIR/tsc_offsets
 *   cpu0_len bytes       DIR/g/cpu0 (absent when empty)
 *   the rest             DIR/g/cpu1 (absent when empty)
 *
 * Each length is cut to what is left of the input.  vtrace_merge_main()
 * (src/merge/main.c, the program but its main()) then runs as
 *
 *   vtrace-merge --host tests/fixtures/real-l2/host.dat --guest g=DIR/g,pid=131
 *                --offsets DIR/tsc_offsets --tsc-khz 2596110 --no-progress [OPTIONS]
 *
 * with --format text, --format jsonl and --explain, then the runs the flags
 * add, standard output to /dev/null.  The host is a real trace.dat of the
 * capture the real-l2 guest and offsets come from (QEMU pid 131, vCPUs 0
 * and 1; the host's events of 0.35 s around the guest's worst wake-up).
 *
 * Besides the sanitizers' reports, the target aborts when a run ends with
 * a status other than 0 or 1, or with 1 and no error message, and when the
 * text and jsonl runs (the same reading, two printers) disagree.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "merge-local.h"

#ifndef FUZZ_HOST_DAT
#error "FUZZ_HOST_DAT: the path of tests/fixtures/real-l2/host.dat (fuzz/Makefile sets it)"
#endif

enum {
	FM_SKIP_BAD	= 1 << 0,
	FM_ASSUME	= 1 << 1,
	FM_GUESS_PID	= 1 << 2,
	FM_RAW_TSC	= 1 << 3,
	FM_STATS	= 1 << 4,
	FM_PERFETTO	= 1 << 5,
	FM_SVG		= 1 << 6,
	FM_EXPLAIN_SVG	= 1 << 7,
	FM_EVENTS	= 1 << 8,
	FM_WINDOW	= 1 << 9,
	FM_NO_KHZ	= 1 << 10,
};

static int devnull = -1;
/* standard error as it was at the start: libFuzzer closes it (-close_fd_mask=2) */
static int report = STDERR_FILENO;

/* Cut @len bytes (at most what is left) off the front of the input */
static const uint8_t *take(const uint8_t **data, size_t *size, uint32_t len, size_t *got)
{
	const uint8_t *p = *data;

	*got = len < *size ? len : *size;
	*data += *got;
	*size -= *got;
	return p;
}

static void write_or_unlink(const char *name, const uint8_t *p, size_t len)
{
	if (len)
		fuzz_write(name, p, len);
	else
		fuzz_unlink(name);
}

/*
 * One vtrace-merge command line; its standard output goes to /dev/null,
 * its standard error stays (make fuzz closes it: -close_fd_mask=2).
 */
static int run(uint32_t flags, const char *const *extra)
{
	char guest[4200], offsets[4200];
	char *argv[32];
	int argc = 0, saved, ret;

	snprintf(guest, sizeof(guest), "g=%s%s", fuzz_path("g"),
		 flags & FM_GUESS_PID ? "" : ",pid=131");
	snprintf(offsets, sizeof(offsets), "%s", fuzz_path("tsc_offsets"));
	argv[argc++] = "vtrace-merge";
	argv[argc++] = "--host";
	argv[argc++] = FUZZ_HOST_DAT;
	argv[argc++] = "--guest";
	argv[argc++] = guest;
	argv[argc++] = "--offsets";
	argv[argc++] = offsets;
	if (!(flags & FM_NO_KHZ)) {
		argv[argc++] = "--tsc-khz";
		argv[argc++] = "2596110";
	}
	argv[argc++] = "--no-progress";
	argv[argc++] = "-q";
	if (flags & FM_SKIP_BAD)
		argv[argc++] = "--skip-bad-pages";
	if (flags & FM_ASSUME)
		argv[argc++] = "--assume-constant-offset";
	if (flags & FM_RAW_TSC)
		argv[argc++] = "--raw-tsc";
	if (flags & FM_EVENTS) {
		argv[argc++] = "--event";
		argv[argc++] = "sched:*,*print*";
	}
	if (flags & FM_WINDOW) {
		/* the host fixture's 0.35 s: 120.95 to 121.30 */
		argv[argc++] = "--from";
		argv[argc++] = "121.2";
		argv[argc++] = "--to";
		argv[argc++] = "121.25";
	}
	while (*extra)
		argv[argc++] = (char *)*extra++;
	argv[argc] = NULL;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || dup2(devnull, STDOUT_FILENO) < 0)
		abort();
	vtrace_set_error("%s", "");
	optind = 0;	/* getopt_long() starts over */
	ret = vtrace_merge_main(argc, argv);
	fflush(stdout);
	if (dup2(saved, STDOUT_FILENO) < 0)
		abort();
	close(saved);
	if (ret != 0 && ret != 1) {
		dprintf(report, "fuzz-merge: exit status %d (%s)\n", ret, argv[argc - 1]);
		abort();
	}
	if (ret && !*vtrace_last_error()) {
		dprintf(report, "fuzz-merge: exit status 1 without an error message (%s)\n",
			argv[argc - 1]);
		abort();
	}
	return ret;
}

static void run_all(uint32_t flags)
{
	static const char *const text[] = { "--format", "text", NULL };
	static const char *const jsonl[] = { "--format", "jsonl", NULL };
	static const char *const explain[] = { "--explain", NULL };
	static const char *const stats[] = { "--stats", NULL };
	static const char *const perfetto[] = { "--format", "perfetto", NULL };
	static const char *const svg[] = { "--format", "svg", NULL };
	static const char *const explain_svg[] = { "--explain", "--format", "svg", NULL };
	int t = run(flags, text);

	if (run(flags, jsonl) != t) {
		dprintf(report, "fuzz-merge: --format text exited %d, --format jsonl not\n", t);
		abort();
	}
	run(flags, explain);
	if (flags & FM_STATS)
		run(flags, stats);
	if (flags & FM_PERFETTO)
		run(flags, perfetto);
	if (flags & FM_SVG)
		run(flags, svg);
	if (flags & FM_EXPLAIN_SVG)
		run(flags, explain_svg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vtrace_set_quiet(true);
	vtrace_dump_forced_flags = fuzz_dump_flags();
	fuzz_keep_plugins();
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	report = dup(STDERR_FILENO);
	if (devnull < 0 || report < 0 || (mkdir(fuzz_path("g"), 0700) && errno != EEXIST))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t flags, ctl_len, offsets_len, cpu0_len;
	const uint8_t *ctl, *offsets, *cpu0;
	size_t n_ctl, n_offsets, n_cpu0;

	if (size < 16)
		return 0;
	flags = fuzz_le32(data);
	ctl_len = fuzz_le32(data + 4);
	offsets_len = fuzz_le32(data + 8);
	cpu0_len = fuzz_le32(data + 12);
	data += 16;
	size -= 16;
	ctl = take(&data, &size, ctl_len, &n_ctl);
	offsets = take(&data, &size, offsets_len, &n_offsets);
	cpu0 = take(&data, &size, cpu0_len, &n_cpu0);
	fuzz_write("g/ctl", ctl, n_ctl);
	fuzz_write("tsc_offsets", offsets, n_offsets);
	write_or_unlink("g/cpu0", cpu0, n_cpu0);
	write_or_unlink("g/cpu1", data, size);
	run_all(flags);
	return 0;
}
