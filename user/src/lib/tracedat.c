// SPDX-License-Identifier: GPL-2.0
/* tracedat.c: where each CPU's ring-buffer pages lie in a trace-cmd trace.dat. */
/*
 * libtracecmd reads a trace.dat's headers (formats, kallsyms, cmdlines,
 * options) into a tep handle.  Its record reader then maps each CPU's data
 * in windows about as large as that data, so a reader's RSS grows with the
 * trace.  vtrace reads the pages itself, one at a time, with the page reader
 * of its dumps (dump.c, vtrace_dump_open_dat()); this file only finds where
 * they are, after libtracecmd has read the headers:
 *
 *   v6: the headers end with "flyrecord\0", then the CPU data table (per
 *       CPU: u64 offset, u64 size in the file), then the trace clock (u64
 *       size, the trace_clock file's text)
 *   v7: the options sections (a chain from the file's header); the top
 *       instance's BUFFER option (name "") holds per CPU: u32 cpu, u64
 *       offset, u64 size, and the offset of the flyrecord section
 *
 * A v7 file whose CPU data is compressed (trace-cmd's default) is laid out
 * the same way: the BUFFER option's offset and size are then those of each
 * CPU's compressed chunks, which dat-chunks.c reads one at a time; an
 * options section flagged compressed is decompressed there too.
 *
 * libtracecmd is no more written for hostile input than libtraceevent: a
 * damaged header (a printk_formats section without its end, a CPU table
 * that tracecmd_close() then trips on) kills it.  So, as the guests'
 * metadata (dump.c), a trace.dat's headers are read twice: first in a
 * child process (probe_dat(): probe.c's, one child kept for every file the
 * process opens), then, if the child came through, here.  A
 * child that dies or hangs gets the file refused, naming it, instead of
 * killing the tool.  The options sections of v7 are checked before
 * libtracecmd follows them (check_options_v7()), and before either, the
 * walk libtracecmd makes over a v7 file's sections when it opens it
 * (dat-header.c: a child that hangs is refused only after a minute).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "lib-local.h"
#include "vtrace-dump.h"
#include "vtrace-util.h"

/* libtracecmd 3.1's calls and values that trace-cmd.h does not declare (trace-cmd-private.h) */
struct tracecmd_input *tracecmd_alloc(const char *file, int flags);
struct tracecmd_input *tracecmd_alloc_fd(int fd, int flags);
int tracecmd_read_headers(struct tracecmd_input *handle, int state);
void tracecmd_set_flag(struct tracecmd_input *handle, int flag);
int tracecmd_get_file_state(struct tracecmd_input *handle);
void tracecmd_parse_trace_clock(struct tracecmd_input *handle, char *file, int size);
bool tracecmd_get_use_trace_clock(struct tracecmd_input *handle);
size_t tracecmd_get_options_offset(struct tracecmd_input *handle);
unsigned long tracecmd_get_in_file_version(struct tracecmd_input *handle);
int tracecmd_get_flags(struct tracecmd_input *handle);
int tracecmd_page_size(struct tracecmd_input *handle);
int tracecmd_long_size(struct tracecmd_input *handle);
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);
const char *tracecmd_get_cpustats(struct tracecmd_input *handle);
#define DAT_FL_NO_PLUGINS	(1 << 0)	/* TRACECMD_FL_LOAD_NO_PLUGINS */
#define DAT_FL_RAW_TS		(1 << 3)	/* TRACECMD_FL_RAW_TS */
#define DAT_FL_COMPRESSION	(1 << 5)	/* TRACECMD_FL_COMPRESSION */
#define DAT_STATE_FLYRECORD	11		/* TRACECMD_FILE_CPU_FLYRECORD */
#define DAT_OPTION_DONE		0		/* TRACECMD_OPTION_DONE */
#define DAT_OPTION_CPUSTAT	2		/* TRACECMD_OPTION_CPUSTAT */
#define DAT_OPTION_BUFFER	3		/* TRACECMD_OPTION_BUFFER */
#define DAT_SEC_FL_COMPRESS	1		/* TRACECMD_SEC_FL_COMPRESS */

/* Options sections followed, at most (trace-cmd writes two or three) */
#define DAT_MAX_SECTIONS	1024
/* How long the probe child may take over a trace.dat's headers (a real one's: ~20 ms) */
#define DAT_PROBE_SECONDS	60

/* The probe child is skipped (a fuzz target's FUZZ_NO_PROBE=1): 0 in the tools */
bool vtrace_dat_no_probe;

static int probe_dat(const char *path, bool data, bool plugins);

/* The v6 trace clock text, at most (the kernel's trace_clock file: under 100 bytes) */
#define DAT_MAX_CLOCK		4096

static int read_at(struct dat_layout *l, void *buf, size_t len, uint64_t at, const char *what)
{
	ssize_t n = pread(l->fd, buf, len, at);

	if (n == (ssize_t)len)
		return 0;
	if (n < 0)
		vtrace_set_error("%s: byte %llu: %s", l->path, (unsigned long long)at,
				 strerror(errno));
	else
		vtrace_set_error("%s: byte %llu: %s, expected %zu bytes, the file has %zd there"
				 " (truncated?)", l->path, (unsigned long long)at, what, len,
				 n);
	return -1;
}

static uint64_t num(struct dat_layout *l, const void *p, int bytes)
{
	return tep_read_number(tracecmd_get_tep(l->handle), p, bytes);
}

static int alloc_cpus(struct dat_layout *l, int nr)
{
	l->nr_cpus = nr;
	l->offset = calloc(nr ? nr : 1, sizeof(*l->offset));
	l->size = calloc(nr ? nr : 1, sizeof(*l->size));
	return l->offset && l->size ? 0 : -1;
}

/* Every CPU's pages inside the file: a cut file is refused here, not half read */
static int check_extents(struct dat_layout *l)
{
	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		uint64_t end = l->offset[cpu] + l->size[cpu];

		if (l->size[cpu] && (end < l->offset[cpu] || end > l->file_size)) {
			vtrace_set_error("%s: byte %llu: CPU %d's pages, %llu bytes from here, expected"
					 " within the file's %llu bytes (truncated?)", l->path,
					 (unsigned long long)l->offset[cpu], cpu,
					 (unsigned long long)l->size[cpu],
					 (unsigned long long)l->file_size);
			return -1;
		}
	}
	return 0;
}

/*
 * libtracecmd takes the first word of a v6 trace clock text that starts
 * with "[" ("local [x86-tsc] ...") and sscanf()s what strtok_r(word, "[]")
 * gives.  That word, @len its length; NULL if none.
 */
static const char *clock_word(const char *text, size_t *len)
{
	for (const char *w = text; *w; ) {
		*len = strcspn(w, " ");
		if (*w == '[')
			return w;
		w += *len;
		w += strspn(w, " ");
	}
	return NULL;
}

/* strtok_r() gives NULL, libtracecmd crashes, for a word of brackets alone ("[", "[]]") */
static bool clock_without_name(const char *text)
{
	size_t n;
	const char *w = clock_word(text, &n);

	return w && strspn(w, "[]") >= n;
}

/* @text names @clock as libtracecmd reads it: its word up to the next bracket or space */
static bool names_clock(const char *text, const char *clock)
{
	size_t n;
	const char *w = clock ? clock_word(text, &n) : NULL;

	if (!w)
		return false;
	w += strspn(w, "[]");
	n = strcspn(w, "[] \t\n");
	return n == strlen(clock) && !strncmp(w, clock, n);
}

/* v6: the CPU data table right after "flyrecord", then the trace clock */
static int layout_v6(struct dat_layout *l, uint64_t at)
{
	int nr = tep_get_cpus(tracecmd_get_tep(l->handle));
	unsigned char e[16];
	char *clock;
	uint64_t len;

	if (tracecmd_get_file_state(l->handle) != DAT_STATE_FLYRECORD) {
		vtrace_set_error("%s: byte %llu: expected \"flyrecord\" CPU data (a latency trace?)",
				 l->path, (unsigned long long)at);
		return -1;
	}
	if (nr <= 0 || nr > 65536 || alloc_cpus(l, nr)) {
		vtrace_set_error("%s: %d CPUs, expected 1 to 65536", l->path, nr);
		return -1;
	}
	for (int cpu = 0; cpu < nr; cpu++, at += sizeof(e)) {
		if (read_at(l, e, sizeof(e), at, "the CPU data table's entry"))
			return -1;
		l->offset[cpu] = num(l, e, 8);
		l->size[cpu] = num(l, e + 8, 8);
	}
	if (!tracecmd_get_use_trace_clock(l->handle))
		return 0;
	if (read_at(l, e, 8, at, "the trace clock's size"))
		return -1;
	len = num(l, e, 8);
	if (len > DAT_MAX_CLOCK) {
		vtrace_set_error("%s: byte %llu: trace clock of %llu bytes, expected at most %d",
				 l->path, (unsigned long long)at, (unsigned long long)len,
				 DAT_MAX_CLOCK);
		return -1;
	}
	clock = calloc(1, len + 1);
	if (!clock || read_at(l, clock, len, at + 8, "the trace clock")) {
		free(clock);
		return -1;
	}
	if (clock_without_name(clock)) {
		vtrace_set_error("%s: byte %llu: a trace clock text whose \"[\" names no clock"
				 " (damaged?)", l->path, (unsigned long long)at + 8);
		free(clock);
		return -1;
	}
	/* libtracecmd replaces, not frees, the clock its TRACECLOCK option gave */
	if (!names_clock(clock, tracecmd_get_trace_clock(l->handle)))
		tracecmd_parse_trace_clock(l->handle, clock, len);
	free(clock);
	return 0;
}

/* The top instance's BUFFER option: u64 offset, name, clock, u32 page size, u32 cpus, ... */
static int parse_buffer(struct dat_layout *l, const char *b, uint32_t size, uint64_t at)
{
	const char *name = b + 8, *clock, *end = b + size, *p;
	unsigned char hdr[16];
	uint32_t cpus;
	int max = -1;

	clock = size > 8 ? memchr(name, '\0', end - name) : NULL;
	if (clock)
		clock++;
	p = clock ? memchr(clock, '\0', end - clock) : NULL;
	if (!p || end - ++p < 8)
		goto bad;
	if (*name)
		return 0;	/* another instance's: said by vtrace_dat_instances() */
	/* trace-cmd 3.2+ record --subbuf-size: pages of another size than the header's */
	if (num(l, p, 4) != l->page_size) {
		vtrace_set_error("%s: byte %llu: the top instance's sub-buffers are %llu bytes, its"
				 " header's pages %u (trace-cmd record --subbuf-size): not read;"
				 " record without --subbuf-size", l->path, (unsigned long long)at,
				 (unsigned long long)num(l, p, 4), l->page_size);
		return -1;
	}
	cpus = num(l, p + 4, 4);
	p += 8;
	if (cpus > 65536 || (uint64_t)(end - p) < (uint64_t)cpus * 20)
		goto bad;
	for (uint32_t i = 0; i < cpus; i++)
		if ((int)num(l, p + 20 * i, 4) > max)
			max = num(l, p + 20 * i, 4);
	if (max >= 65536 || alloc_cpus(l, max + 1))
		goto bad;
	for (uint32_t i = 0; i < cpus; i++, p += 20) {
		int cpu = num(l, p, 4);

		l->offset[cpu] = num(l, p + 4, 8);
		l->size[cpu] = num(l, p + 12, 8);
	}
	/* the flyrecord section's header says whether its pages are compressed */
	if (read_at(l, hdr, sizeof(hdr), num(l, b, 8), "the CPU data section's header"))
		return -1;
	l->compressed = num(l, hdr + 2, 2) & DAT_SEC_FL_COMPRESS;
	return 1;
bad:
	vtrace_set_error("%s: byte %llu: BUFFER option of %u bytes, expected offset, name, clock,"
			 " page size, CPU count and 20 bytes per CPU", l->path,
			 (unsigned long long)at, size);
	return -1;
}

/* An options section's bytes, at most (trace-cmd writes a few hundred) */
#define DAT_MAX_OPTIONS		(16U << 20)

/* The options of the section at @at (header @hdr): read, or decompressed */
static int section_bytes(struct dat_layout *l, uint64_t at, const unsigned char *hdr, char **buf,
			 uint32_t *len)
{
	uint64_t size = num(l, hdr + 8, 8);

	if (num(l, hdr + 2, 2) & DAT_SEC_FL_COMPRESS) {
		if (!(tracecmd_get_flags(l->handle) & DAT_FL_COMPRESSION)) {
			vtrace_set_error("%s: byte %llu: a compressed options section, in a file"
					 " whose header names no compression (damaged?)", l->path,
					 (unsigned long long)at);
			return -1;
		}
		if (dat_compression_check(l))
			return -1;
		return dat_section_uncompress(l, at, size, buf, len);
	}
	if (size > DAT_MAX_OPTIONS || size > l->file_size - at - 16) {
		vtrace_set_error("%s: byte %llu: options section of %llu bytes, expected at most %u"
				 " and within the file's %llu bytes (damaged?)", l->path,
				 (unsigned long long)at, (unsigned long long)size, DAT_MAX_OPTIONS,
				 (unsigned long long)l->file_size);
		return -1;
	}
	*len = size;
	*buf = malloc(size + 1);
	if (!*buf) {
		vtrace_set_error("%s: out of memory", l->path);
		return -1;
	}
	if (!read_at(l, *buf, size, at + 16, "an options section"))
		return 0;
	free(*buf);
	*buf = NULL;
	return -1;
}

/*
 * The options of a section (@b, @len bytes; its header at @at): the top
 * instance's BUFFER option, and the next section's offset.  An option's
 * place in messages is its byte in the file, or for a compressed section
 * the section's.
 */
static int walk_options(struct dat_layout *l, const char *b, uint32_t len, uint64_t at,
			bool compressed, uint64_t *next)
{
	for (uint32_t p = 0; p + 6 <= len; ) {
		uint32_t id = num(l, b + p, 2), size = num(l, b + p + 2, 4);
		uint64_t where = compressed ? at : at + 16 + p;

		p += 6;
		if (size > len - p) {
			vtrace_set_error("%s: byte %llu: option %u of %u bytes, past its section's"
					 " end (damaged?)", l->path, (unsigned long long)where, id,
					 size);
			return -1;
		}
		if (id == DAT_OPTION_DONE) {
			if (size < 8)
				break;
			*next = num(l, b + p, 8);
			return 0;
		}
		if (id == DAT_OPTION_BUFFER && !l->offset &&
		    parse_buffer(l, b + p, size, compressed ? at : where + 6) < 0)
			return -1;
		p += size;
	}
	vtrace_set_error("%s: byte %llu: options section without its DONE option", l->path,
			 (unsigned long long)(at + 16 + len));
	return -1;
}

/* One options section at @at: its BUFFER options, and the next section's offset */
static int options_section(struct dat_layout *l, uint64_t at, uint64_t *next)
{
	unsigned char hdr[16];
	uint32_t len;
	char *buf;
	int ret;

	if (read_at(l, hdr, sizeof(hdr), at, "an options section's header"))
		return -1;
	if (num(l, hdr, 2) != DAT_OPTION_DONE) {
		vtrace_set_error("%s: byte %llu: section id %llu, expected an options section (0)",
				 l->path, (unsigned long long)at,
				 (unsigned long long)num(l, hdr, 2));
		return -1;
	}
	if (section_bytes(l, at, hdr, &buf, &len))
		return -1;
	ret = walk_options(l, buf, len, at, num(l, hdr + 2, 2) & DAT_SEC_FL_COMPRESS, next);
	free(buf);
	return ret;
}

/* A v6 header's number of @bytes at *@at, read and stepped over */
static int v6_num(struct dat_layout *l, uint64_t *at, int bytes, uint64_t *v, const char *what)
{
	unsigned char b[8];

	if (read_at(l, b, bytes, *at, what))
		return -1;
	*v = num(l, b, bytes);
	*at += bytes;
	return 0;
}

/* @len bytes of @what at *@at, inside the file, stepped over */
static int v6_skip(struct dat_layout *l, uint64_t *at, uint64_t len, const char *what)
{
	if (len > l->file_size - *at) {
		vtrace_set_error("%s: byte %llu: %s of %llu bytes, expected within the file's %llu"
				 " bytes (truncated or damaged?)", l->path, (unsigned long long)*at,
				 what, (unsigned long long)len, (unsigned long long)l->file_size);
		return -1;
	}
	*at += len;
	return 0;
}

/* A v6 header's tag (@len bytes with its NUL or padding), or one of two */
static int v6_tag(struct dat_layout *l, uint64_t *at, const char *tag, const char *or,
		  size_t len)
{
	char b[16];

	if (read_at(l, b, len, *at, "a section's name"))
		return -1;
	if (!memcmp(b, tag, len) || (or && !memcmp(b, or, len))) {
		*at += len;
		return !memcmp(b, tag, len) ? 0 : 1;
	}
	vtrace_set_error("%s: byte %llu: \"%.*s\", expected \"%s\"%s%s%s (damaged?)", l->path,
			 (unsigned long long)*at, (int)strnlen(b, len), b, tag, or ? " or \"" : "",
			 or ? or : "", or ? "\"" : "");
	return -1;
}

/* @n pieces of a u64 size and their bytes each (v6's formats) */
static int v6_sized(struct dat_layout *l, uint64_t *at, uint64_t n, const char *what)
{
	uint64_t len;

	if (n > (l->file_size - *at) / 8) {
		vtrace_set_error("%s: byte %llu: %llu %s, more than the file can hold (damaged?)",
				 l->path, (unsigned long long)*at, (unsigned long long)n, what);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		if (v6_num(l, at, 8, &len, what) || v6_skip(l, at, len, what))
			return -1;
	return 0;
}

/*
 * The printk formats: every line "ADDR : FORMAT", as the kernel writes
 * them (libtraceevent's tep_parse_printk_formats() reads past its copy on a
 * last line without ':')
 */
static int v6_printk(struct dat_layout *l, uint64_t at, uint64_t len)
{
	char *text = malloc(len + 1), *p, *nl;
	int ret = -1;

	if (!text || read_at(l, text, len, at, "the printk formats"))
		goto out;
	text[len] = '\0';
	for (p = text; p < text + len; p = nl + 1) {
		nl = memchr(p, '\n', text + len - p);
		if (!nl)
			nl = text + len;
		if (nl > p && !memchr(p, ':', nl - p)) {
			vtrace_set_error("%s: byte %llu: a printk format line without \":\", expected"
					 " \"ADDRESS : FORMAT\" (damaged?)", l->path,
					 (unsigned long long)(at + (p - text)));
			goto out;
		}
	}
	ret = 0;
out:
	free(text);
	return ret;
}

/*
 * v6: the headers walked before libtracecmd reads them (it allocates and
 * reads what each size says, up to 2^64 bytes): header_page, header_event,
 * the ftrace and event formats, kallsyms, printk formats, cmdlines, the
 * CPU count and the options, each inside the file, then "flyrecord" or
 * "latency".
 */
static int check_headers_v6(struct dat_layout *l)
{
	uint64_t at = 0, n, len;
	char b[24], *nul;

	/* magic (10 bytes), version "6\0", endian, long size, u32 page size */
	if (read_at(l, b, sizeof(b), 0, "the file header"))
		return -1;
	nul = memchr(b + 10, '\0', sizeof(b) - 10);
	if (!nul) {
		vtrace_set_error("%s: byte 10: a version without its end (damaged?)", l->path);
		return -1;
	}
	at = nul + 1 - b + 6;
	if (v6_tag(l, &at, "header_page", NULL, 12) || v6_sized(l, &at, 1, "header_page") ||
	    v6_tag(l, &at, "header_event", NULL, 13) || v6_sized(l, &at, 1, "header_event"))
		return -1;
	if (v6_num(l, &at, 4, &n, "the count of ftrace formats") ||
	    v6_sized(l, &at, n, "ftrace formats"))
		return -1;
	if (v6_num(l, &at, 4, &n, "the count of event systems"))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		char name[256];
		size_t got = pread(l->fd, name, sizeof(name), at);

		nul = got <= sizeof(name) ? memchr(name, '\0', got) : NULL;
		if (!nul) {
			vtrace_set_error("%s: byte %llu: an event system's name, expected a name of"
					 " under %zu bytes and its NUL (damaged?)", l->path,
					 (unsigned long long)at, sizeof(name));
			return -1;
		}
		at += nul + 1 - name;
		if (v6_num(l, &at, 4, &len, "the count of a system's formats") ||
		    v6_sized(l, &at, len, "event formats"))
			return -1;
	}
	if (v6_num(l, &at, 4, &len, "the size of kallsyms") || v6_skip(l, &at, len, "kallsyms") ||
	    v6_num(l, &at, 4, &len, "the size of the printk formats") ||
	    v6_skip(l, &at, len, "the printk formats") || v6_printk(l, at - len, len) ||
	    v6_num(l, &at, 8, &len, "the size of cmdlines") || v6_skip(l, &at, len, "cmdlines") ||
	    v6_num(l, &at, 4, &n, "the CPU count"))
		return -1;
	switch (v6_tag(l, &at, "options  ", "flyrecord", 10)) {
	case 1:
		return 0;
	case -1:
		if (!v6_tag(l, &at, "latency  ", NULL, 10))
			return 0;
		vtrace_set_error("%s: byte %llu: expected \"options\", \"flyrecord\" or"
				 " \"latency\" after the headers (damaged?)", l->path,
				 (unsigned long long)at);
		return -1;
	}
	for (;;) {
		uint64_t id;

		if (v6_num(l, &at, 2, &id, "an option's id"))
			return -1;
		if (id == DAT_OPTION_DONE)
			break;
		if (v6_num(l, &at, 4, &len, "an option's size") || v6_skip(l, &at, len, "an option"))
			return -1;
		if (id == DAT_OPTION_CPUSTAT && !len) {
			vtrace_set_error("%s: byte %llu: an empty CPUSTAT option, expected 1 byte or"
					 " more (damaged?)", l->path, (unsigned long long)at - 6);
			return -1;
		}
	}
	return v6_tag(l, &at, "flyrecord", "latency  ", 10) < 0 ? -1 : 0;
}

/* One option's header at @at, inside its section (ending at @end): its id and size */
static int check_option(struct dat_layout *l, uint64_t at, uint64_t end, uint32_t *id,
			uint32_t *size)
{
	unsigned char oh[6];

	if (at + 6 > end) {
		vtrace_set_error("%s: byte %llu: options section without its DONE option, expected"
				 " one before byte %llu (truncated or damaged?)", l->path,
				 (unsigned long long)at, (unsigned long long)end);
		return -1;
	}
	if (read_at(l, oh, 6, at, "an option's header"))
		return -1;
	*id = num(l, oh, 2);
	*size = num(l, oh + 2, 4);
	if (*size > end - at - 6 || (*id == DAT_OPTION_DONE && *size < 8) ||
	    (*id == DAT_OPTION_CPUSTAT && !*size)) {
		vtrace_set_error("%s: byte %llu: option %u of %u bytes, expected %s within its"
				 " section's end (byte %llu) (damaged?)", l->path,
				 (unsigned long long)at, *id, *size,
				 *id == DAT_OPTION_DONE ? "8 bytes or more" :
				 *id == DAT_OPTION_CPUSTAT ? "1 byte or more" : "its bytes",
				 (unsigned long long)end);
		return -1;
	}
	return 0;
}

/*
 * v7: the chain of options sections checked before libtracecmd reads it
 * (tracecmd_read_headers() follows it recursively, reads each option whole
 * on the word of its size, and leaks or writes before an option's buffer
 * when that word is wrong): every section inside the file, every option
 * inside its section, a DONE option ending each, at most DAT_MAX_SECTIONS
 * sections (a chain that comes back on itself would recurse without end).
 * A compressed section ends the check: only libtracecmd reads its options.
 */
static int check_options_v7(struct dat_layout *l)
{
	uint64_t at = tracecmd_get_options_offset(l->handle);
	unsigned char hdr[16];

	for (int n = 0; at; n++) {
		uint64_t end, next = 0;
		uint32_t id, size;

		if (n == DAT_MAX_SECTIONS) {
			vtrace_set_error("%s: byte %llu: more than %d options sections, expected a"
					 " chain that ends (damaged?)", l->path,
					 (unsigned long long)at, DAT_MAX_SECTIONS);
			return -1;
		}
		if (read_at(l, hdr, sizeof(hdr), at, "an options section's header"))
			return -1;
		if (num(l, hdr, 2) != DAT_OPTION_DONE) {
			vtrace_set_error("%s: byte %llu: section id %llu, expected an options section"
					 " (0)", l->path, (unsigned long long)at,
					 (unsigned long long)num(l, hdr, 2));
			return -1;
		}
		end = at + sizeof(hdr) + num(l, hdr + 8, 8);
		if (end < at || end > l->file_size) {
			vtrace_set_error("%s: byte %llu: options section of %llu bytes, expected"
					 " within the file's %llu bytes (truncated?)", l->path,
					 (unsigned long long)at, (unsigned long long)num(l, hdr + 8, 8),
					 (unsigned long long)l->file_size);
			return -1;
		}
		if (num(l, hdr + 2, 2) & DAT_SEC_FL_COMPRESS) {
			if (tracecmd_get_flags(l->handle) & DAT_FL_COMPRESSION)
				return 0;
			vtrace_set_error("%s: byte %llu: a compressed options section, in a file whose"
					 " header names no compression (damaged?)", l->path,
					 (unsigned long long)at);
			return -1;
		}
		for (at += sizeof(hdr);; at += 6 + size) {
			if (check_option(l, at, end, &id, &size))
				return -1;
			if (id == DAT_OPTION_DONE)
				break;
		}
		if (read_at(l, hdr, 8, at + 6, "the next options section's offset"))
			return -1;
		next = num(l, hdr, 8);
		at = next;
	}
	return 0;
}

/* v7: follow the options sections to the top instance's BUFFER option */
static int layout_v7(struct dat_layout *l)
{
	uint64_t at = tracecmd_get_options_offset(l->handle);

	for (int n = 0; at && n < DAT_MAX_SECTIONS; n++) {
		uint64_t next = 0;

		if (options_section(l, at, &next))
			return -1;
		at = next;
	}
	if (!l->offset) {
		vtrace_set_error("%s: no BUFFER option for the top instance: where its CPU data is"
				 " is not known", l->path);
		return -1;
	}
	if (l->compressed && !(tracecmd_get_flags(l->handle) & DAT_FL_COMPRESSION)) {
		vtrace_set_error("%s: its CPU data flagged compressed, in a file whose header names"
				 " no compression (damaged?)", l->path);
		return -1;
	}
	return l->compressed ? dat_compression_check(l) : 0;
}

/**
 * dat_layout_read - read a trace.dat's headers and find each CPU's pages
 * @path:	the file
 * @l:		filled
 * @plugins:	libtraceevent's plugins loaded into its handle (for printing
 *		events as trace-cmd does); not for a pass that reads fields only
 *
 * The headers go through libtracecmd (raw time stamps asked for: nothing
 * of DATE, OFFSET, TSC2NSEC or TIME_SHIFT is applied).  Returns 0 with
 * @l filled (l->compressed: each CPU's data is compressed chunks), -1 with
 * the error set.
 */
int dat_layout_read(const char *path, struct dat_layout *l, bool plugins)
{
	struct stat st;
	int fd;

	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->path = path;
	if (dat_header_check(path) || probe_dat(path, false, plugins))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	l->file_size = st.st_size;
	l->handle = tracecmd_alloc_fd(fd, plugins ? 0 : DAT_FL_NO_PLUGINS);
	if (!l->handle) {
		close(fd);
		goto bad_headers;
	}
	tracecmd_set_flag(l->handle, DAT_FL_RAW_TS);
	/* the handle's fd: pread() leaves its position, where libtracecmd reads on */
	l->fd = fd;
	if (tracecmd_get_in_file_version(l->handle) >= 7 ? check_options_v7(l) :
	    check_headers_v6(l))
		return -1;
	if (tracecmd_read_headers(l->handle, 0) < 0)
		goto bad_headers;
	l->page_size = tracecmd_page_size(l->handle);
	l->long_size = tracecmd_long_size(l->handle);
	l->tep = tracecmd_get_tep(l->handle);
	if (dat_check_print_fmts(l->tep, path))
		return -1;
	if (tracecmd_get_in_file_version(l->handle) < 7) {
		if (layout_v6(l, lseek(fd, 0, SEEK_CUR)))
			return -1;
	} else if (layout_v7(l)) {
		return -1;
	}
	return check_extents(l);
bad_headers:
	vtrace_set_error("%s: a trace.dat whose headers libtracecmd cannot read (truncated or"
			 " damaged?)", path);
	return -1;
}

/* The trace clock the file names ("x86-tsc"), NULL if none */
const char *dat_layout_clock(const struct dat_layout *l)
{
	return tracecmd_get_trace_clock(l->handle);
}

/* The handle (and its fd) stays when @keep_handle: its tep is the file's */
void dat_layout_free(struct dat_layout *l, bool keep_handle)
{
	if (!keep_handle && l->handle)
		tracecmd_close(l->handle);
	free(l->offset);
	free(l->size);
	l->offset = l->size = NULL;
}

/* 0: @path starts as a trace.dat does, -1 with the error set */
int vtrace_dat_check_magic(const char *path)
{
	char buf[sizeof(dat_magic)];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n < sizeof(buf) || memcmp(buf, dat_magic, sizeof(buf))) {
		vtrace_set_error("%s: byte 0: not a trace-cmd trace.dat (no \"\\027\\010Dtracing\""
				 " magic)", path);
		return -1;
	}
	return 0;
}

/* Host time stamps are host TSC values only with trace-cmd's -C x86-tsc: @clock is @path's */
int vtrace_dat_check_clock(const char *path, const char *clock)
{
	if (clock && !strcmp(clock, "x86-tsc"))
		return 0;
	if (clock)
		vtrace_set_error("%s: recorded with trace clock \"%s\", not x86-tsc: its times are"
				 " not the host TSC the guests are put on (record the host with"
				 " trace-cmd record -C x86-tsc)", path, clock);
	else
		vtrace_set_error("%s: names no trace clock, so its times cannot be taken for the"
				 " host TSC (record the host with trace-cmd record -C x86-tsc)",
				 path);
	return -1;
}

/* check_options_v7() for a handle of libtracecmd's own, its headers not read yet */
static int check_options(const char *path, struct tracecmd_input *h)
{
	struct dat_layout l = { .path = path, .handle = h };
	struct stat st;
	int ret;

	l.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (l.fd < 0 || fstat(l.fd, &st)) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		if (l.fd >= 0)
			close(l.fd);
		return -1;
	}
	l.file_size = st.st_size;
	ret = tracecmd_get_in_file_version(h) >= 7 ? check_options_v7(&l) : check_headers_v6(&l);
	close(l.fd);
	return ret;
}

/*
 * libtracecmd's reading of @path's headers, and of its CPUs' first pages if
 * @data; with libtraceevent's plugins if @plugins (they change how a print
 * format's function calls parse)
 */
static struct tracecmd_input *open_headers(const char *path, bool data, bool plugins)
{
	struct tracecmd_input *h = tracecmd_alloc(path, plugins ? 0 : DAT_FL_NO_PLUGINS);

	if (!h) {
		vtrace_set_error("%s: a trace.dat whose file header libtracecmd cannot read"
				 " (truncated or damaged?)", path);
		return NULL;
	}
	tracecmd_set_flag(h, DAT_FL_RAW_TS);
	if (check_options(path, h)) {
		tracecmd_close(h);
		return NULL;
	}
	if (tracecmd_read_headers(h, 0) < 0 || (data && tracecmd_init_data(h) < 0)) {
		tracecmd_close(h);
		vtrace_set_error("%s: a trace.dat whose headers or CPU data libtracecmd cannot"
				 " read (truncated or damaged?)", path);
		return NULL;
	}
	if (dat_check_print_fmts(tracecmd_get_tep(h), path)) {
		tracecmd_close(h);
		return NULL;
	}
	return h;
}

/*
 * In the probe child: libtracecmd reads the headers of the file @req names
 * (a flag byte, '1' for its CPUs' first pages too; one for the plugins, '1'
 * to load them, as the tool will; then the path) and closes it
 */
static int probe_work(const void *req, size_t len, void *shared)
{
	const char *r = req;
	struct tracecmd_input *h;

	(void)shared;
	if (len < 3 || r[len - 1])
		return -1;
	h = open_headers(r + 2, r[0] == '1', r[1] == '1');
	if (!h)
		return -1;
	tracecmd_close(h);
	return 0;
}

static struct probe dat_probe = {
	.work		= probe_work,
	.seconds	= DAT_PROBE_SECONDS,
	.shared_size	= sizeof(int),
};

/*
 * @path's headers read by libtracecmd in the probe's child first: 0 if it
 * came through (the file may still be refused, here, with its reason), -1
 * if it died or hung.
 */
static int probe_dat(const char *path, bool data, bool plugins)
{
	char req[PROBE_MAX_REQUEST], how[64];
	int answer, status, ret, n;

	if (vtrace_dat_no_probe)
		return 0;
	n = snprintf(req, sizeof(req), "%c%c%s", data ? '1' : '0', plugins ? '1' : '0', path);
	if (n < 0 || n >= (int)sizeof(req)) {
		vtrace_set_error("%s: path too long", path);
		return -1;
	}
	ret = probe_run(&dat_probe, req, n + 1, &answer, &status);
	if (ret <= 0)
		return ret;
	probe_how(&dat_probe, status, how, sizeof(how));
	vtrace_set_error("%s: refused: libtracecmd %s reading its headers (in a child process):"
			 " a damaged trace.dat (trace-cmd report fails on it too?)", path, how);
	return -1;
}

/*
 * A trace.dat opened with libtracecmd's record reader for raw time stamps:
 * TRACECMD_FL_RAW_TS set between tracecmd_alloc() and
 * tracecmd_read_headers() makes tracecmd_read_data() return the ring
 * buffer's own time stamps, not shifted by the file's DATE, OFFSET,
 * TSC2NSEC or TIME_SHIFT options, not scaled to ns.  vtrace-merge opens a
 * compressed host trace.dat this way (and its self-check a second one),
 * and dat-records.c the records of a compressed one.  libtracecmd reads
 * the headers and the first pages in a probe child first (probe_dat()).
 */
struct tracecmd_input *vtrace_dat_open_raw(const char *path)
{
	if (vtrace_dat_check_magic(path) || dat_header_check(path) || probe_dat(path, true, true))
		return NULL;
	return open_headers(path, true, true);
}

/**
 * vtrace_dat_instances - the instances other than the top one a trace.dat holds
 * @handle:	the file, its headers read by libtracecmd
 * @msg:	"foo, bar" (trace-cmd record -B foo -B bar), or ""
 * @len:	its size
 *
 * Their events are not merged: the tools read the top instance only.
 * Returns how many there are.
 */
int vtrace_dat_instances(struct tracecmd_input *handle, char *msg, size_t len)
{
	int nr = tracecmd_buffer_instances(handle);
	size_t at = 0;

	if (len)
		*msg = '\0';
	for (int i = 0; i < nr && at + 1 < len; i++)
		at += snprintf(msg + at, len - at, "%s%s", i ? ", " : "",
			       tracecmd_buffer_instance_name(handle, i) ?: "?");
	return nr > 0 ? nr : 0;
}

/* The trace clock a trace.dat opened by libtracecmd names ("x86-tsc"), NULL if none */
const char *vtrace_dat_clock(struct tracecmd_input *handle)
{
	return tracecmd_get_trace_clock(handle);
}

/* the longest clause of vtrace_dat_unread(): "; cpu N:" and two 20-digit counts with their words */
#define VTRACE_UNREAD_CLAUSE	120

/* "NAME: N" at a line's start in one CPU's statistics (@b..@e), 0 if absent */
static unsigned long long stat_field(const char *b, const char *e, const char *name)
{
	size_t n = strlen(name);
	const char *p = b;

	while (p && p < e) {
		if (!strncmp(p, name, n) && p[n] == ':')
			return strtoull(p + n + 1, NULL, 10);
		p = memchr(p, '\n', e - p);
		if (p)
			p++;
	}
	return 0;
}

/* The statistics of the CPU whose "CPU: N" block starts at @b; the next block's start in @next */
static int parse_cpustat(const char *b, const char **next, struct vtrace_dat_cpustat *st)
{
	const char *e = strstr(b + 5, "CPU: ");
	const char *end = e ? e : b + strlen(b);

	*next = e;
	st->left = stat_field(b, end, "entries");
	st->overrun = stat_field(b, end, "overrun");
	st->dropped = stat_field(b, end, "dropped events");
	st->read = stat_field(b, end, "read events");
	return atoi(b + 5);
}

/**
 * vtrace_dat_cpustat - trace-cmd's counts of one CPU's ring buffer at its stop
 * @handle:	the file, its headers read by libtracecmd
 * @cpu:	the CPU
 * @st:		the counts (all 0 when the file has none for @cpu)
 *
 * trace-cmd record writes each CPU's ring-buffer statistics (its CPUSTAT
 * options; trace-cmd report --stat): "entries" are events in the kernel's
 * buffer, "read events" those read from it so far, "overrun" events
 * overwritten before they were read, "dropped events" events refused while
 * the buffer was full.  trace-cmd takes them before its last read of the
 * buffers, so "entries" are normally in the file: the file holds @st->read
 * + @st->left events of @cpu, or more, when nothing was left behind.
 * Returns 0, or -1 when the file has no statistics for @cpu.
 */
int vtrace_dat_cpustat(struct tracecmd_input *handle, int cpu, struct vtrace_dat_cpustat *st)
{
	const char *t = tracecmd_get_cpustats(handle), *b, *next;

	memset(st, 0, sizeof(*st));
	for (b = t ? strstr(t, "CPU: ") : NULL; b; b = next)
		if (parse_cpustat(b, &next, st) == cpu)
			return 0;
	memset(st, 0, sizeof(*st));
	return -1;
}

/**
 * vtrace_dat_unread - the events a trace.dat lacks by trace-cmd's own count
 * @handle:	the file, its headers read by libtracecmd
 * @msg:	"cpu 0: 6 overwritten; cpu 1: 120 overwritten, 3 dropped", or ""
 *		(the CPUs past its room as "; N more cpus")
 * @len:	its size
 *
 * The events overwritten or dropped in the kernel's buffer
 * (vtrace_dat_cpustat()): lost for good.  The events trace-cmd counted as
 * left in the buffer are not among them: whether the file lacks them shows
 * only against its contents (the merge's count of each CPU's events).
 * Returns how many CPUs lack some, 0 when none does or the file has no
 * statistics.
 */
int vtrace_dat_unread(struct tracecmd_input *handle, char *msg, size_t len)
{
	const char *t = tracecmd_get_cpustats(handle), *b, *next;
	struct vtrace_dat_cpustat st;
	int nr = 0, more = 0;
	size_t at = 0;

	if (len)
		*msg = '\0';
	for (b = t ? strstr(t, "CPU: ") : NULL; b; b = next) {
		int cpu = parse_cpustat(b, &next, &st);

		if (!st.overrun && !st.dropped)
			continue;
		nr++;
		/* a CPU's clause takes at most VTRACE_UNREAD_CLAUSE bytes: the others counted */
		if (at + VTRACE_UNREAD_CLAUSE + 32 > len) {
			more++;
			continue;
		}
		at += snprintf(msg + at, len - at, "%scpu %d:", at ? "; " : "", cpu);
		if (st.overrun)
			at += snprintf(msg + at, len - at, " %llu overwritten",
				       (unsigned long long)st.overrun);
		if (st.dropped)
			at += snprintf(msg + at, len - at, "%s %llu dropped", st.overrun ? "," : "",
				       (unsigned long long)st.dropped);
	}
	if (more && at + 32 <= len)
		snprintf(msg + at, len - at, "%s%d more cpus", at ? "; " : "", more);
	return nr;
}

/**
 * vtrace_event_id - the id of event @sys:@name in @tep, -1 if the trace has none
 * @evp:	if not NULL, set to the event (NULL if none)
 */
int vtrace_event_id(struct tep_handle *tep, const char *sys, const char *name,
		    struct tep_event **evp)
{
	struct tep_event *ev = tep_find_event_by_name(tep, sys, name);

	if (evp)
		*evp = ev;
	return ev ? ev->id : -1;
}

/* Field @name of @ev, NULL if @ev is (an event the trace does not have) or has no such field */
struct tep_format_field *vtrace_event_field(struct tep_event *ev, const char *name)
{
	return ev ? tep_find_field(ev, name) : NULL;
}

/*
 * A number field of @rec, 0 when the field is missing or outside the
 * record.  @native: the trace's byte order is this machine's; the 4- and
 * 8-byte fields (sched_switch's pids, every event of a merge) are then read
 * in place, without a library call.
 */
int64_t vtrace_field_num(bool native, struct tep_format_field *field,
			 const struct tep_record *rec)
{
	unsigned long long v;
	int32_t v32;
	int64_t v64;

	if (!field || field->offset + field->size > rec->size)
		return 0;
	if (native && field->size == 4) {
		memcpy(&v32, (const char *)rec->data + field->offset, 4);
		return field->flags & TEP_FIELD_IS_SIGNED ? v32 : (int64_t)(uint32_t)v32;
	}
	if (native && field->size == 8) {
		memcpy(&v64, (const char *)rec->data + field->offset, 8);
		return v64;
	}
	if (tep_read_number_field(field, rec->data, &v))
		return 0;
	if ((field->flags & TEP_FIELD_IS_SIGNED) && field->size == 4)
		return (int32_t)v;
	return (int64_t)v;
}
