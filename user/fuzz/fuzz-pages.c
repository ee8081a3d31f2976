// SPDX-License-Identifier: GPL-2.0
/* fuzz-pages.c: a guest CPU's ring-buffer pages, read with a real capture's metadata. */
/*
 * fuzz-dump fuzzes a whole dump folder, its metadata included: each input
 * builds a libtraceevent handle from its formats twice (in the probe child,
 * then in the tool's process), about nine tenths of its time.  This target
 * keeps the metadata fixed and fuzzes the pages alone, as a tool reads
 * them: the control stream of tests/fixtures/real-l2 (the test bed's L2
 * guest: sched and timer formats, its printk formats and kallsyms) is
 * opened once, through the probe child as the tools open it, in DIR/pages,
 * and each input is one CPU file of that dump.
 *
 * Input layout:
 *
 *   byte 0      bit 0: read with VTRACE_DUMP_SKIP_BAD (a damaged page skipped,
 *               not the end of the CPU's events); bit 1: the file is cpu1's
 *               (the fixture's second CPU), else cpu0's
 *   the rest    DIR/pages/cpuN, pages of META_INFO.page_size (4096) back to back
 *
 * Every event of the file is checked (check_events(): inside its page's
 * commit, a known id, its fields inside the record) and printed as
 * vtrace-merge prints it, with the guest's own print formats; the flush
 * fillers are recognised as in a real capture.
 */
#include <errno.h>
#include <sys/stat.h>

#include <event-parse.h>

#include "fuzz.h"
#include "vtrace-dump.h"

#define PAGES_MAX_EVENTS	4096	/* per input, to keep executions fast */

/* The fixture's dump, opened once: [0] as vtrace-merge reads it, [1] with VTRACE_DUMP_SKIP_BAD */
static struct vtrace_dump *pages_dumps[2];

static void pages_copy_ctl(void)
{
	uint64_t len;
	char *ctl = vtrace_read_file(FUZZ_CTL, 1 << 20, &len);

	if (!ctl) {
		fprintf(stderr, "fuzz-pages: %s\n", vtrace_last_error());
		abort();
	}
	if (mkdir(fuzz_path("pages"), 0700) && errno != EEXIST)
		abort();
	fuzz_write("pages/ctl", ctl, len);
	free(ctl);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vtrace_set_quiet(true);
	pages_copy_ctl();
	for (int i = 0; i < 2; i++) {
		pages_dumps[i] = vtrace_dump_open(fuzz_path("pages"), VTRACE_DUMP_NO_PLUGINS |
					    fuzz_dump_flags() | (i ? VTRACE_DUMP_SKIP_BAD : 0));
		if (!pages_dumps[i] || vtrace_dump_info(pages_dumps[i])->nr_cpus < 2) {
			fprintf(stderr, "fuzz-pages: %s: %s\n", FUZZ_CTL,
				pages_dumps[i] ? "expected 2 CPUs" : vtrace_last_error());
			abort();
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int cpu;

	if (!size)
		return 0;
	cpu = data[0] >> 1 & 1;
	fuzz_write(cpu ? "pages/cpu1" : "pages/cpu0", data + 1, size - 1);
	fuzz_read_cpu(pages_dumps[data[0] & 1], cpu, fuzz_seq(), PAGES_MAX_EVENTS);
	fuzz_unlink(cpu ? "pages/cpu1" : "pages/cpu0");
	return 0;
}
