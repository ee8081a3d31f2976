// SPDX-License-Identifier: GPL-2.0
/* fuzz-meta.c: the metadata files (formats, kallsyms, cmdlines, printk formats) of a dump. */
/*
 * The input is one or more META_FILE bodies separated by SEP (fuzz/meta.dict):
 *
 *   byte 0      kind (enum vtrace_meta_kind, taken modulo 8)
 *   NAME '\0'   the file name ("sched/sched_switch"); up to 63 bytes
 *   the rest    the file's bytes
 *
 * Each becomes a well-formed META_FILE message in a control stream that
 * starts with a fixed META_INFO (one CPU, 4 KiB pages) and the Debian 6.1
 * header_page, unless the input's first file is a header_page: then that
 * one is the dump's, and the pages below are read through it.  The dump
 * is then opened and the real pages of
 * tests/fixtures/debian-6.1/real-cpu0.pages (sched_switch and print
 * events) are read and printed with whatever formats the input defined:
 * hostile formats meet real event data, real formats meet hostile
 * kallsyms, cmdlines and printk formats.
 */
#define _GNU_SOURCE
#include <event-parse.h>
#include <trace-seq.h>

#include "fuzz.h"
#include "vtrace-dump.h"
#include "vtrace-proto.h"

#define SEP		"\n\x01vtrace-meta\x01\n"
#define MAX_FILES	64

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

static char *pages;
static size_t pages_len;

/* The control stream being built */
static char *ctl;
static size_t ctl_len, ctl_alloc;

static void put(const void *p, size_t len)
{
	if (!len)
		return;
	if (ctl_len + len > ctl_alloc) {
		ctl_alloc = (ctl_len + len) * 2;
		ctl = realloc(ctl, ctl_alloc);
		if (!ctl)
			abort();
	}
	memcpy(ctl + ctl_len, p, len);
	ctl_len += len;
}

static void put_msg(uint16_t type, const void *a, size_t alen, const void *b, size_t blen,
		    const void *c, size_t clen)
{
	static uint64_t seq;
	struct vtrace_msg_hdr hdr = { VTRACE_MAGIC, VTRACE_PROTO_VERSION, type, 0,
				      alen + blen + clen, ++seq };

	put(&hdr, sizeof(hdr));
	put(a, alen);
	put(b, blen);
	put(c, clen);
}

static void put_meta_file(uint32_t kind, const char *name, const void *data, size_t len)
{
	struct vtrace_meta_file mf = { .kind = kind, .data_len = len };
	char tail[72] = "";
	size_t nlen = strlen(name) + 1;

	mf.name_len = (nlen + 7) & ~7;
	memcpy(tail, name, nlen);
	put_msg(VTRACE_MSG_META_FILE, &mf, sizeof(mf), tail, mf.name_len, data, len);
}

static void put_info(void)
{
	struct {
		struct vtrace_meta_info mi;
		struct vtrace_cpu_info ci;
	} info = {
		.mi = { .tsc_khz = 2000000, .session = 1, .nr_cpus = 1, .page_size = 4096,
			.long_size = 8, .clock = "x86-tsc" },
		.ci = { 0, 0, VTRACE_CPU_HAS_PORT | VTRACE_CPU_ONLINE, 0 },
	};

	ctl_len = 0;
	put_msg(VTRACE_MSG_META_INFO, &info, sizeof(info), NULL, 0, NULL, 0);
}

static void put_prologue(void)
{
	put_info();
	put_meta_file(VTRACE_META_HEADER_PAGE, "header_page", header_page,
		      sizeof(header_page) - 1);
}

/* One input chunk as a META_FILE */
static void put_chunk(const uint8_t *p, size_t len)
{
	uint32_t kind;
	char name[64] = "fuzz/fuzz";
	const uint8_t *nul;

	if (!len)
		return;
	kind = p[0] % 8;
	p++;
	len--;
	nul = memchr(p, '\0', len < sizeof(name) ? len : sizeof(name));
	if (nul) {
		memcpy(name, p, nul - p + 1);
		len -= nul + 1 - p;
		p = nul + 1;
	}
	put_meta_file(kind, name, p, len);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vtrace_set_quiet(true);
	pages = vtrace_read_file(FUZZ_PAGES, 1 << 20, (uint64_t *)&pages_len);
	if (!pages) {
		fprintf(stderr, "fuzz-meta: %s\n", vtrace_last_error());
		abort();
	}
	fuzz_write("cpu0", pages, pages_len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *input = data, *end = data + size;
	struct vtrace_cpu_reader *r;
	struct tep_record *rec;
	struct vtrace_dump *d;
	struct trace_seq *s = fuzz_seq();
	int filler, n = 0;

	/* an input that starts with a header_page has its own instead of Debian's */
	if (size && data[0] % 8 == VTRACE_META_HEADER_PAGE)
		put_info();
	else
		put_prologue();
	while (data < end && n++ < MAX_FILES) {
		const uint8_t *sep = memmem(data, end - data, SEP, sizeof(SEP) - 1);
		const uint8_t *stop = sep ? sep : end;

		put_chunk(data, stop - data);
		data = sep ? sep + sizeof(SEP) - 1 : end;
	}
	fuzz_write("ctl", ctl, ctl_len);

	d = vtrace_dump_open(fuzz_dir(), VTRACE_DUMP_NO_PLUGINS | VTRACE_DUMP_SKIP_BAD |
			     fuzz_dump_flags());
	if (!d) {
		fuzz_note_contained(input, size);
		return 0;
	}
	if (vtrace_dump_kallsyms(d))
		fuzz_sink += strlen(vtrace_dump_kallsyms(d));
	r = vtrace_cpu_reader_open(d, 0);
	while (r && vtrace_cpu_reader_next(r, &rec, &filler) > 0) {
		struct tep_handle *tep = vtrace_dump_tep(d);

		trace_seq_reset(s);
		tep_print_event(tep, s, rec, "%s-%d %s %s", TEP_PRINT_COMM, TEP_PRINT_PID,
				TEP_PRINT_NAME, TEP_PRINT_INFO);
		fuzz_sink += s->len + filler;
	}
	vtrace_cpu_reader_close(r);
	vtrace_dump_close(d);
	return 0;
}
