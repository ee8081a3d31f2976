// SPDX-License-Identifier: GPL-2.0
/* dump.c: open a machine's dump folder and read its ring-buffer pages. */
/*
 * A dump folder holds what the host ends of a machine's vtrace ports wrote:
 *
 *   DIR/ctl	the control stream (include/uapi/linux/vtrace.h): META_INFO,
 *		META_FILE..., STARTED, pages..., EOS
 *   DIR/cpuK	CPU K's ring-buffer pages, META_INFO.page_size each, back to
 *		back, as trace_pipe_raw hands them out
 *   DIR/qemu.pid  QEMU's -pidfile (guests only)
 *
 * vtrace_dump_open() reads the whole control stream, builds a tep handle
 * from the metadata of its first session (libtraceevent parses every
 * format, cmdlines, kallsyms, printk formats) and keeps the EOS counters.
 *
 * libtraceevent is not written for hostile input: some print formats kill
 * it while it parses them (process_op() dereferences a NULL operand, and
 * more of that family), and no check short of a parser of print formats
 * catches them all.  So the control stream's metadata is read twice:
 * first in a child process (probe_ctl(): probe.c's, one child kept for
 * every dump the process opens), which notes in shared memory which
 * META_FILE it is handing to libtraceevent, then, if the child came
 * through, here.  A child killed by a signal (or hung) gets the dump
 * refused with the name and offset of the META_FILE it died on, instead of
 * killing the tool.  The second reading is safe: same library, same input,
 * same order.
 *
 * A CPU reader holds one page: it reads the next page with pread(),
 * checks its header and walks it once with kbuffer to check every event
 * (inside the commit size, a known event id) before handing any event
 * out, so a damaged page is either refused as a whole or skipped as a
 * whole (VTRACE_DUMP_SKIP_BAD), never half printed.  That walk notes
 * where each event is; the events are then handed out from those notes,
 * without a second walk.
 *
 * A host's trace-cmd trace.dat is read with the same readers
 * (vtrace_dump_open_dat()): libtracecmd reads its headers, tracedat.c finds
 * where each CPU's pages are, and a reader pread()s them one at a time, or,
 * in a compressed file, takes them one at a time from the one chunk it
 * holds decompressed (dat-chunks.c), so that memory stays flat however long
 * the trace (libtracecmd's own reader maps each CPU's whole data, and keeps
 * every chunk it decompressed).  The same checks apply to every page.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "lib-local.h"
#include "vtrace-dump.h"
#include "vtrace-proto.h"
#include "vtrace-util.h"

/* Ring-buffer page header: u64 time stamp, then the commit word */
#define PAGE_HDR_SIZE		16
#define RB_MISSED_EVENTS	(1ULL << 31)
#define RB_MISSED_STORED	(1ULL << 30)
#define RB_MISSED_FLAGS		(RB_MISSED_EVENTS | RB_MISSED_STORED)

/* How long the probe child may take over the metadata (a real guest's: ~10 ms) */
#define PROBE_SECONDS		60
/* Shared with the probe child (probe.c): the META_FILE it is parsing */
struct meta_probe {
	uint64_t			offset;
	int				in_file;
	char				name[256];
};

/* What check_events() needs of an event format, worked out once per dump */
struct event_extent {
	int64_t		need;	/* how far its fixed fields reach, see fields_extent() */
	int64_t		rest;	/* offset of its zero-sized field, -1 if none */
	bool		known;	/* the metadata has a format for this id */
};

struct vtrace_dump {
	char				*dir;
	char				*ctl_path;
	unsigned int			flags;
	struct tep_handle		*tep;
	struct tep_plugin_list		*plugins;
	struct vtrace_meta_info		info;
	struct vtrace_cpu_info		*cpus;
	struct vtrace_cpu_stats		*eos;
	int				has_eos;
	int				has_info;
	int				has_header_page;
	int				sessions;
	int				qemu_pid;
	int				print_id;
	int				print_buf_offset;
	int				print_buf_size;
	char				*kallsyms;
	struct event_extent		*extents;	/* by event id, see check_events() */
	int				nr_extents;
	/*
	 * How far the common fields of any format reach (INT64_MAX for a
	 * negative offset or size): libtraceevent reads a record's type, pid,
	 * flags from the common fields of one format for all records
	 */
	int64_t				common_need;
	char				*printk_formats;	/* as filtered */
	struct meta_probe		*probe;		/* in the probe child only */
	bool				is_dat;		/* a trace.dat: dir is its path */
	struct dat_layout		dat;
};

/* An event of the loaded page, as check_events() found it */
struct page_event {
	void			*data;
	unsigned long long	ts;
	unsigned int		offset;		/* in the page (kbuffer_curr_offset()) */
	int			size;
	int			id;
};

struct vtrace_cpu_reader {
	struct vtrace_dump		*dump;
	unsigned int			cpu;
	int				fd;
	char				*path;
	char				*page;
	uint64_t			offset;		/* of the next page */
	uint64_t			end;		/* of the CPU's pages */
	uint64_t			page_offset;	/* of the loaded page */
	struct dat_chunks		*chunks;	/* a compressed trace.dat's CPU */
	struct kbuffer			*kbuf;
	struct page_event		*evs;		/* the loaded page's, see check_events() */
	int				max_evs;
	int				nr_evs;
	int				next_ev;
	int				page_missed;	/* kbuffer_missed_events() of the page */
	struct tep_record		record;
	struct vtrace_cpu_counts	counts;
};

static int meta_error(struct vtrace_dump *d, const struct vtrace_msg *msg, const char *name,
		      const char *what)
{
	vtrace_set_error("%s: byte %llu: META_FILE \"%s\": %s", d->ctl_path,
			 (unsigned long long)msg->offset, name, what);
	return -1;
}

/*
 * What libtraceevent cannot be trusted with, checked before it parses a
 * format: bytes other than printable ASCII, tab and newline, and array
 * brackets left open (both give it NULL tokens it passes to strcmp()).
 * And a format's "print fmt" may only name its own fields as REC->NAME.
 * libtraceevent (1.7.1 to 1.8.4) writes through a NULL field when
 * __print_flags() or __print_symbolic() names one the format does not
 * declare (process_entry()), so a guest could crash the host's tools with
 * one line.  The kernel's formats always name their own fields.
 */
#define FORMAT_MAX_FIELDS	1024

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* The name a "field:TYPE NAME[N];" line declares, from @p to its ';' */
static void field_name(const char *p, const char *semi, const char **name, size_t *len)
{
	const char *e = semi;

	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e > p && e[-1] == ']')
		while (e > p && *--e != '[')
			;
	*len = 0;
	while (e > p && is_ident(e[-1]))
		e--, (*len)++;
	*name = e;
}

/*
 * Every '[' closed on its line, nothing quoted in between: libtraceevent
 * reads an array size up to a "]" token and calls strcmp() on the NULL
 * token of the end of the text when there is none (event_read_fields()).
 */
static bool brackets_closed(const char *p, const char *end)
{
	while ((p = memchr(p, '[', end - p))) {
		const char *close = memchr(p, ']', end - p);

		if (!close || memchr(p, '"', close - p) || memchr(p, '\'', close - p))
			return false;
		p = close;
	}
	return true;
}

/*
 * The names of the "field" lines before @print: returns their number,
 * -1 if there are too many (@bad says why) or a line's brackets are open.
 */
static int format_fields(const char *p, const char *print, const char **names, size_t *lens,
			 char *bad, size_t bad_len)
{
	int n = 0;

	while (p < print) {
		const char *nl = memchr(p, '\n', print - p), *end = nl ? nl : print;
		const char *s = skip_space(p, end), *semi = memchr(s, ';', end - s);

		if (!brackets_closed(s, end)) {
			snprintf(bad, bad_len, "a '[' without its ']' in \"%.*s\"",
				 (int)(end - s < 64 ? end - s : 64), s);
			return -1;
		}
		if (semi && end - s > 5 && !memcmp(s, "field", 5)) {
			if (n == FORMAT_MAX_FIELDS) {
				snprintf(bad, bad_len, "more than %d fields", FORMAT_MAX_FIELDS);
				return -1;
			}
			field_name(s, semi, &names[n], &lens[n]);
			n++;
		}
		p = end + 1;
	}
	return n;
}

/*
 * No '#', '@', '$', '`' or '\\' outside the print fmt's strings: libtraceevent
 * takes them for operators and then dereferences a NULL operand
 * (process_op()).  Division and modulo in a print fmt, outside its strings, only by a
 * non-zero number or a sizeof(): libtraceevent divides without looking at
 * the divisor, both when it folds constants and when it prints an event
 * (REC->a / REC->b): a SIGFPE.  The kernel's formats divide by constants.
 */
static int check_divisors(const char *p, const char *end, char *bad, size_t bad_len)
{
	bool quoted = false;

	for (; p < end; p++) {
		const char *q;

		if (quoted && *p == '\\') {
			p++;
			continue;
		}
		if (*p == '"')
			quoted = !quoted;
		/* not C: libtraceevent makes an operator of it, without operands */
		if (!quoted && memchr("#@$`\\", *p, 5)) {
			snprintf(bad, bad_len, "print fmt has a '%c' outside its strings", *p);
			return -1;
		}
		if (quoted || (*p != '/' && *p != '%'))
			continue;
		q = skip_space(p + 1, end);
		if (end - q >= 7 && !memcmp(q, "sizeof(", 7))
			continue;
		if (q < end && *q >= '1' && *q <= '9')
			continue;
		if (end - q >= 2 && !memcmp(q, "0x", 2)) {
			const char *h = q + 2;

			while (h < end && *h == '0')
				h++;
			if (h < end && ((*h >= '1' && *h <= '9') || (*h >= 'a' && *h <= 'f') ||
					(*h >= 'A' && *h <= 'F')))
				continue;
		}
		snprintf(bad, bad_len, "print fmt divides by \"%.*s\", expected a non-zero number",
			 (int)(end - q < 16 ? end - q : 16), q);
		return -1;
	}
	return 0;
}

static int check_rec_fields(const char *data, uint64_t len, char *bad, size_t bad_len)
{
	const char *end = data + len, *print = memmem(data, len, "print fmt:", 10), *p;
	const char **names = malloc(FORMAT_MAX_FIELDS * sizeof(*names));
	size_t *lens = malloc(FORMAT_MAX_FIELDS * sizeof(*lens));
	int n, ret = 0;

	if (!names || !lens) {
		free(names);
		free(lens);
		snprintf(bad, bad_len, "%s", strerror(ENOMEM));
		return -1;
	}
	for (p = data; p < end; p++) {
		/* libtraceevent's tokenizer yields NULL tokens for these */
		if ((*p < 0x20 || *p > 0x7e) && *p != '\t' && *p != '\n') {
			snprintf(bad, bad_len, "byte 0x%02x at %zu, expected printable text",
				 (unsigned char)*p, (size_t)(p - data));
			ret = -1;
			goto out;
		}
	}
	if (!print)
		print = end;	/* libtraceevent refuses it, after reading the fields */
	n = format_fields(data, print, names, lens, bad, bad_len);
	if (n < 0 || check_divisors(print, end, bad, bad_len))
		ret = -1;
	for (p = print; !ret && (p = memmem(p, end - p, "REC", 3)); p += 3) {
		const char *q = skip_space(p + 3, end), *id;
		int i;

		if ((p > data && is_ident(p[-1])) || (p + 3 < end && is_ident(p[3])))
			continue;
		if (q < end && *q == ')')
			q = skip_space(q + 1, end);
		if (end - q < 2 || memcmp(q, "->", 2))
			continue;
		id = q = skip_space(q + 2, end);
		while (q < end && is_ident(*q))
			q++;
		for (i = 0; i < n; i++)
			if (lens[i] == (size_t)(q - id) && !memcmp(names[i], id, q - id))
				break;
		if (i == n) {
			snprintf(bad, bad_len, "print fmt uses REC->%.*s, not a field of the format",
				 (int)(q - id < 64 ? q - id : 64), id);
			ret = -1;
		}
	}
out:
	free(names);
	free(lens);
	return ret;
}

static int parse_format(struct vtrace_dump *d, const struct vtrace_msg *msg, const char *name,
			const char *data, uint64_t len, const char *system)
{
	char sys[64], reason[256];
	const char *slash = strchr(name, '/');
	struct tep_event *ev = NULL;
	enum tep_errno ret;

	if (!system) {
		if (!slash || slash == name || (size_t)(slash - name) >= sizeof(sys))
			return meta_error(d, msg, name, "expected a \"system/event\" name");
		memcpy(sys, name, slash - name);
		sys[slash - name] = '\0';
		system = sys;
	}
	if (check_rec_fields(data, len, reason, sizeof(reason)))
		return meta_error(d, msg, name, reason);
	ret = tep_parse_format(d->tep, &ev, data, len, system);
	if (ret) {
		char what[400];

		tep_strerror(d->tep, ret, reason, sizeof(reason));
		snprintf(what, sizeof(what), "format does not parse: %s", reason);
		return meta_error(d, msg, name, what);
	}
	/*
	 * libtraceevent prints a bprint from its field "fmt" without looking
	 * for it: one without prints as a format that failed to parse
	 */
	if (print_bprint_without_fmt(ev))
		ev->flags |= TEP_EVENT_FL_FAILED;
	return 0;
}

/* Text files get a terminating NUL; libtraceevent parses C strings */
static char *text_copy(const void *data, uint64_t len)
{
	char *s = malloc(len + 1);

	if (s) {
		memcpy(s, data, len);
		s[len] = '\0';
	}
	return s;
}

/*
 * printk_formats lines are "ADDR : FORMAT".  libtraceevent (1.7.1 to 1.8.4)
 * reads before or past its copy of a line without a ':' or with a format
 * shorter than 3 characters (tep_parse_printk_formats() takes the format
 * one byte after the colon, tep_register_print_string() looks 2 bytes
 * before its end): keep only the lines it reads safely.  The kernel's own
 * lines always qualify.  Returns the number of lines dropped.
 */
static unsigned int printk_formats_filter(char *text)
{
	char *in = text, *out = text;
	unsigned int dropped = 0;

	while (*in) {
		size_t len = strcspn(in, "\n"), next = len + (in[len] == '\n');
		char *colon = memchr(in, ':', len);
		const char *fmt = colon && colon != in && colon + 1 < in + len ? colon + 2 : NULL;

		if (fmt && *fmt == '"')
			fmt++;
		if (fmt && in + len - fmt >= 3) {
			memmove(out, in, next);		/* the line and its '\n', if it has one */
			out += next;
		} else if (len) {
			dropped++;
		}
		in += next;
	}
	*out = '\0';
	return dropped;
}

/* The filtered lines of every printk_formats file, for vtrace dat to write */
static int keep_printk_formats(struct vtrace_dump *d, const char *text)
{
	size_t have = d->printk_formats ? strlen(d->printk_formats) : 0, len = strlen(text);
	char *all = realloc(d->printk_formats, have + len + 2);

	if (!all)
		return -1;
	memcpy(all + have, text, len + 1);
	if (len && text[len - 1] != '\n')
		memcpy(all + have + len, "\n", 2);
	d->printk_formats = all;
	return 0;
}

static int parse_text(struct vtrace_dump *d, const struct vtrace_msg *msg,
		      const struct vtrace_meta_file *mf, const char *name, const void *data)
{
	char *text = text_copy(data, mf->data_len);
	unsigned int dropped;
	int ret = -1;

	if (!text)
		return -1;
	switch (mf->kind) {
	case VTRACE_META_CMDLINES:
		ret = tep_parse_saved_cmdlines(d->tep, text);
		break;
	case VTRACE_META_KALLSYMS:
		ret = tep_parse_kallsyms(d->tep, text);
		if (!ret && !d->kallsyms) {
			d->kallsyms = text;	/* kept for --vmlinux (symbols.c) */
			text = NULL;
		}
		break;
	case VTRACE_META_PRINTK_FORMATS:
		dropped = printk_formats_filter(text);
		if (dropped)
			vtrace_warn("%s: byte %llu: META_FILE \"%s\": %u malformed lines ignored",
				    d->ctl_path, (unsigned long long)msg->offset, name, dropped);
		ret = tep_parse_printk_formats(d->tep, text);
		if (!ret && keep_printk_formats(d, text))
			ret = -1;
		break;
	}
	free(text);
	if (ret)
		return meta_error(d, msg, name, "does not parse");
	return 0;
}

/*
 * The sub-buffer size header_page describes: its data field's offset plus
 * size ("field: char data;\toffset:16;\tsize:4080;"), 0 if it has none.
 * Since v6.8 the size is per instance (buffer_subbuf_size_kb).
 */
static unsigned long header_page_subbuf_size(const char *text)
{
	const char *p = strstr(text, "char data;");
	unsigned long off, size;

	if (!p || sscanf(p, "char data; offset:%lu; size:%lu;", &off, &size) != 2)
		return 0;
	return off + size;
}

static int parse_header_page(struct vtrace_dump *d, const struct vtrace_msg *msg,
			     const char *name, const void *data, uint64_t len)
{
	unsigned long subbuf;
	char *text = text_copy(data, len);
	int ret;

	if (!text)
		return -1;
	ret = tep_parse_header_page(d->tep, text, len, d->info.long_size);
	subbuf = header_page_subbuf_size(text);
	free(text);
	if (ret)
		return meta_error(d, msg, name, "header_page does not parse");
	if (subbuf && subbuf != d->info.page_size) {
		vtrace_set_error("%s: byte %llu: META_FILE \"%s\" describes sub-buffers of %lu bytes,"
				 " META_INFO says the pages on the data ports have %u: not reading"
				 " pages of the wrong size", d->ctl_path,
				 (unsigned long long)msg->offset, name, subbuf, d->info.page_size);
		return -1;
	}
	if (tep_get_header_timestamp_size(d->tep) != 8 ||
	    tep_get_header_page_size(d->tep) != (int)d->info.long_size)
		return meta_error(d, msg, name, "expected an 8-byte timestamp and a commit field"
				  " of long_size");
	d->has_header_page = 1;
	return 0;
}

/*
 * The "ID: N" line of a format file, -1 if none or not a number up to
 * INT_MAX.  Read within @len: the file's bytes end at the message's end,
 * with no NUL after them (strtol() read past a file that ended in digits).
 */
static long format_id(const char *data, uint64_t len)
{
	const char *p = data, *end = data + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);

		if (end - p > 4 && !memcmp(p, "ID: ", 4)) {
			const char *q = p + 4;
			long id = 0;

			if (q == end || *q < '0' || *q > '9')
				return -1;
			for (; q < end && *q >= '0' && *q <= '9'; q++) {
				id = id * 10 + (*q - '0');
				if (id > INT_MAX)
					return -1;
			}
			return id;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return -1;
}

static int later_session_file(struct vtrace_dump *d, const struct vtrace_msg *msg,
			      const struct vtrace_meta_file *mf, const char *name, const void *data)
{
	long id;

	if (mf->kind != VTRACE_META_EVENT_FORMAT && mf->kind != VTRACE_META_FTRACE_FORMAT)
		return 0;
	id = format_id(data, mf->data_len);
	if (id >= 0 && tep_find_event(d->tep, id))
		return 0;
	return parse_format(d, msg, name, data, mf->data_len,
			    mf->kind == VTRACE_META_FTRACE_FORMAT ? "ftrace" : NULL);
}

static int handle_meta_file(struct vtrace_dump *d, const struct vtrace_msg *msg)
{
	const struct vtrace_meta_file *mf;
	const char *name;
	const void *data;

	vtrace_msg_meta_file(msg, &mf, &name, &data);
	if (d->probe) {
		d->probe->offset = msg->offset;
		snprintf(d->probe->name, sizeof(d->probe->name), "%s", name);
		d->probe->in_file = 1;
	}
	if (!d->has_info) {
		vtrace_set_error("%s: byte %llu: META_FILE \"%s\" before META_INFO", d->ctl_path,
				 (unsigned long long)msg->offset, name);
		return -1;
	}
	/*
	 * Later sessions of the same dump (tracing stopped and started again)
	 * add the formats of events they enabled; the rest was known already.
	 */
	if (d->sessions > 1)
		return later_session_file(d, msg, mf, name, data);
	switch (mf->kind) {
	case VTRACE_META_HEADER_PAGE:
		return parse_header_page(d, msg, name, data, mf->data_len);
	case VTRACE_META_HEADER_EVENT:
		return 0;
	case VTRACE_META_EVENT_FORMAT:
		return parse_format(d, msg, name, data, mf->data_len, NULL);
	case VTRACE_META_FTRACE_FORMAT:
		return parse_format(d, msg, name, data, mf->data_len, "ftrace");
	case VTRACE_META_CMDLINES:
	case VTRACE_META_KALLSYMS:
		/* sscanf() line parsers, no tokenizer: not worth the probe's time (4 MB) */
		if (d->probe)
			return 0;
		/* fall through */
	case VTRACE_META_PRINTK_FORMATS:
		return parse_text(d, msg, mf, name, data);
	default:
		vtrace_warn("%s: byte %llu: META_FILE of unknown kind %u ignored", d->ctl_path,
			    (unsigned long long)msg->offset, mf->kind);
		return 0;
	}
}

static int handle_meta_info(struct vtrace_dump *d, const struct vtrace_msg *msg)
{
	const struct vtrace_meta_info *mi;
	const struct vtrace_cpu_info *ci;

	vtrace_msg_meta_info(msg, &mi, &ci);
	if (++d->sessions > 1) {
		if (mi->nr_cpus != d->info.nr_cpus || mi->page_size != d->info.page_size) {
			vtrace_set_error("%s: byte %llu: META_INFO of session %llu changes CPUs or"
					 " page size; expected one layout per dump", d->ctl_path,
					 (unsigned long long)msg->offset,
					 (unsigned long long)mi->session);
			return -1;
		}
		return 0;
	}
	if (strcmp(mi->clock, "x86-tsc")) {
		vtrace_set_error("%s: byte %llu: META_INFO: trace clock \"%s\", expected x86-tsc",
				 d->ctl_path, (unsigned long long)msg->offset, mi->clock);
		return -1;
	}
	d->info = *mi;
	d->cpus = calloc(mi->nr_cpus, sizeof(*d->cpus));
	d->eos = calloc(mi->nr_cpus, sizeof(*d->eos));
	if (!d->cpus || !d->eos)
		return -1;
	for (uint32_t i = 0; i < mi->nr_cpus; i++)
		d->cpus[ci[i].cpu] = ci[i];
	d->has_info = 1;
	tep_set_long_size(d->tep, mi->long_size);
	tep_set_page_size(d->tep, mi->page_size);
	tep_set_cpus(d->tep, mi->nr_cpus);
	tep_set_file_bigendian(d->tep, TEP_LITTLE_ENDIAN);
	return 0;
}

/* EOS counters of every session add up: the cpu files hold all their pages */
static int handle_eos(struct vtrace_dump *d, const struct vtrace_msg *msg)
{
	const struct vtrace_status *st;
	const struct vtrace_cpu_stats *cs;

	vtrace_msg_status(msg, &st, &cs);
	if (!d->has_info) {
		vtrace_set_error("%s: byte %llu: EOS before META_INFO", d->ctl_path,
				 (unsigned long long)msg->offset);
		return -1;
	}
	for (uint32_t i = 0; i < st->nr_cpus; i++) {
		struct vtrace_cpu_stats *e;

		if (cs[i].cpu >= d->info.nr_cpus) {
			vtrace_set_error("%s: byte %llu: EOS: cpu %u, expected < %u", d->ctl_path,
					 (unsigned long long)msg->offset, cs[i].cpu,
					 d->info.nr_cpus);
			return -1;
		}
		e = &d->eos[cs[i].cpu];
		e->cpu = cs[i].cpu;
		e->flags |= cs[i].flags;
		e->pages_sent += cs[i].pages_sent;
		e->bytes_sent += cs[i].bytes_sent;
		e->events_sent += cs[i].events_sent;
		e->fillers_sent += cs[i].fillers_sent;
		e->pages_lost += cs[i].pages_lost;
		e->events_lost_port += cs[i].events_lost_port;
		e->events_lost_ring += cs[i].events_lost_ring;
		e->port_errors += cs[i].port_errors;
	}
	if (st->flags & VTRACE_STATUS_TRACING_ON)
		vtrace_warn("%s: byte %llu: EOS of session %llu: the guest could not turn its"
			    " instance's tracing_on off; its rings may still record", d->ctl_path,
			    (unsigned long long)msg->offset, (unsigned long long)st->session);
	if (st->flags & VTRACE_STATUS_EVENTS_ON)
		vtrace_warn("%s: byte %llu: EOS of session %llu: the guest could not disable its"
			    " instance's events; they stay enabled", d->ctl_path,
			    (unsigned long long)msg->offset, (unsigned long long)st->session);
	d->has_eos = 1;
	return 0;
}

static int read_ctl(struct vtrace_dump *d)
{
	struct vtrace_proto *p;
	struct vtrace_msg msg;
	int ret, err = 0;

	p = vtrace_proto_open_file(d->ctl_path);
	if (!p) {
		vtrace_set_error("%s: %s", d->ctl_path, strerror(errno));
		return -1;
	}
	while (!err && (ret = vtrace_proto_read(p, &msg)) > 0) {
		if (msg.hdr.type == VTRACE_MSG_META_INFO)
			err = handle_meta_info(d, &msg);
		else if (msg.hdr.type == VTRACE_MSG_META_FILE)
			err = handle_meta_file(d, &msg);
		else if (msg.hdr.type == VTRACE_MSG_EOS)
			err = handle_eos(d, &msg);
		if (d->probe)
			d->probe->in_file = 0;
		vtrace_msg_release(&msg);
	}
	if (!err && ret < 0) {
		vtrace_set_error("%s", vtrace_proto_error(p));
		err = -1;
	}
	if (!err && !d->has_info) {
		vtrace_set_error("%s: byte %llu: no META_INFO message (empty or not a vtrace"
				 " control stream?)", d->ctl_path,
				 (unsigned long long)vtrace_proto_offset(p));
		err = -1;
	}
	if (!err && !d->has_header_page) {
		vtrace_set_error("%s: no META_FILE header_page: cannot read the pages", d->ctl_path);
		err = -1;
	}
	vtrace_proto_close(p);
	return err;
}

/* In the probe child: read the control stream @req names (its path), as vtrace_dump_open() will */
static int probe_work(const void *req, size_t len, void *shared)
{
	struct vtrace_dump *d = calloc(1, sizeof(*d));
	int ret = -1;

	if (!d || !memchr(req, '\0', len))
		goto out;
	d->probe = shared;
	d->ctl_path = strdup(req);
	d->tep = tep_alloc();
	if (d->ctl_path && d->tep)
		ret = read_ctl(d);
out:
	/* freed before the answer: a tep_free() that dies of the input is the probe's too */
	vtrace_dump_close(d);
	return ret;
}

static struct probe ctl_probe = {
	.work		= probe_work,
	.seconds	= PROBE_SECONDS,
	.shared_size	= sizeof(struct meta_probe),
};

/*
 * Read the control stream in the probe's child first: 0 if it came through
 * (the stream may still be refused, by read_ctl() here, with its reason),
 * -1 if it died, naming the META_FILE it died on.
 */
static int probe_ctl(struct vtrace_dump *d)
{
	const struct meta_probe *probe;
	int answer, status, ret;
	char how[64];

	ret = probe_run(&ctl_probe, d->ctl_path, strlen(d->ctl_path) + 1, &answer, &status);
	if (ret <= 0)
		return ret;
	probe = ctl_probe.shared;
	probe_how(&ctl_probe, status, how, sizeof(how));
	if (probe->in_file)
		vtrace_set_error("%s: byte %llu: META_FILE \"%s\": refused: libtraceevent %s"
				 " parsing it (in a child process)", d->ctl_path,
				 (unsigned long long)probe->offset, probe->name, how);
	else
		vtrace_set_error("%s: refused: reading its metadata %s (in a child process)",
				 d->ctl_path, how);
	return -1;
}

static int read_qemu_pid(struct vtrace_dump *d)
{
	char path[PATH_MAX], *text;
	uint64_t pid;

	d->qemu_pid = -1;
	snprintf(path, sizeof(path), "%s/qemu.pid", d->dir);
	if (access(path, F_OK))
		return 0;
	text = vtrace_read_file(path, 64, NULL);
	if (!text)
		return -1;
	text[strcspn(text, "\n")] = '\0';
	if (vtrace_parse_u64(text, &pid) || !pid || pid > INT_MAX) {
		vtrace_set_error("%s: byte 0: expected a process id, got \"%.20s\"", path, text);
		free(text);
		return -1;
	}
	free(text);
	d->qemu_pid = pid;
	return 0;
}

/* The ftrace print event, to recognise the guest's flush fillers */
static void find_print_event(struct vtrace_dump *d)
{
	struct tep_event *ev = tep_find_event_by_name(d->tep, "ftrace", "print");
	struct tep_format_field *f = ev ? tep_find_field(ev, "buf") : NULL;

	d->print_id = -1;
	if (!f)
		return;
	d->print_id = ev->id;
	d->print_buf_offset = f->offset;
}

unsigned int vtrace_dump_forced_flags;

struct vtrace_dump *vtrace_dump_open(const char *dir, unsigned int flags)
{
	struct vtrace_dump *d;

	flags |= vtrace_dump_forced_flags;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->flags = flags;
	d->dir = strdup(dir);
	if (!d->dir || asprintf(&d->ctl_path, "%s/ctl", dir) < 0) {
		d->ctl_path = NULL;
		goto error;
	}
	d->tep = tep_alloc();
	if (!d->tep)
		goto error;
	if (!(flags & VTRACE_DUMP_NO_PROBE) && probe_ctl(d))
		goto error;
	if (read_ctl(d) || read_qemu_pid(d))
		goto error;
	if (!(flags & VTRACE_DUMP_NO_PLUGINS))
		d->plugins = tep_load_plugins(d->tep);
	find_print_event(d);
	return d;
error:
	vtrace_dump_close(d);
	return NULL;
}

/**
 * vtrace_dump_open_dat - a host's trace-cmd trace.dat, read as a dump's CPUs
 * @path:	the trace.dat
 * @flags:	VTRACE_DUMP_SKIP_BAD
 *
 * Flat (v6, v7) and compressed (v7, zstd) files alike.
 * The dump has no control stream: no EOS, no fillers, no kallsyms of its
 * own (the tep has the file's).
 */
struct vtrace_dump *vtrace_dump_open_dat(const char *path, unsigned int flags)
{
	struct vtrace_dump *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->is_dat = true;
	d->flags = flags | vtrace_dump_forced_flags;
	d->print_id = -1;
	d->dir = strdup(path);
	if (!d->dir || dat_layout_read(path, &d->dat, !(d->flags & VTRACE_DUMP_NO_PLUGINS)))
		goto error;
	d->tep = d->dat.tep;
	d->info.nr_cpus = d->dat.nr_cpus;
	d->info.page_size = d->dat.page_size;
	d->info.long_size = d->dat.long_size;
	if (d->info.page_size < 64 || d->info.page_size > (1U << 24)) {
		vtrace_set_error("%s: page size %u, expected 64 bytes to 16 MiB", path,
				 d->info.page_size);
		goto error;
	}
	d->cpus = calloc(d->info.nr_cpus, sizeof(*d->cpus));
	if (!d->cpus)
		goto error;
	return d;
error:
	vtrace_dump_close(d);
	return NULL;
}

/* A trace.dat's trace clock ("x86-tsc"), NULL if it names none or is not a trace.dat */
const char *vtrace_dump_dat_clock(struct vtrace_dump *d)
{
	return d->is_dat ? dat_layout_clock(&d->dat) : NULL;
}

/* libtracecmd's handle of a trace.dat's dump (its headers, options); NULL for a guest's */
struct tracecmd_input *vtrace_dump_dat_handle(struct vtrace_dump *d)
{
	return d->is_dat ? d->dat.handle : NULL;
}

void vtrace_dump_close(struct vtrace_dump *d)
{
	if (!d)
		return;
	if (d->plugins)
		tep_unload_plugins(d->plugins, d->tep);
	if (d->is_dat)
		dat_layout_free(&d->dat, false);	/* the tep is libtracecmd's */
	else if (d->tep)
		tep_free(d->tep);
	free(d->cpus);
	free(d->eos);
	free(d->kallsyms);
	free(d->extents);
	free(d->printk_formats);
	free(d->ctl_path);
	free(d->dir);
	free(d);
}

const char *vtrace_dump_dir(struct vtrace_dump *d)
{
	return d->dir;
}

struct tep_handle *vtrace_dump_tep(struct vtrace_dump *d)
{
	return d->tep;
}

const struct vtrace_meta_info *vtrace_dump_info(struct vtrace_dump *d)
{
	return &d->info;
}

const struct vtrace_cpu_info *vtrace_dump_cpu(struct vtrace_dump *d, unsigned int cpu)
{
	return cpu < d->info.nr_cpus ? &d->cpus[cpu] : NULL;
}

const struct vtrace_cpu_stats *vtrace_dump_eos(struct vtrace_dump *d, unsigned int cpu)
{
	return d->has_eos && cpu < d->info.nr_cpus ? &d->eos[cpu] : NULL;
}

int vtrace_dump_has_eos(struct vtrace_dump *d)
{
	return d->has_eos;
}

/* The guest's /proc/kallsyms text, NUL-terminated, or NULL */
const char *vtrace_dump_kallsyms(struct vtrace_dump *d)
{
	return d->kallsyms;
}

/*
 * The guest's printk_formats (all its files) as libtraceevent was given
 * them: without the lines it reads out of bounds.  NULL if there were none.
 */
const char *vtrace_dump_printk_formats(struct vtrace_dump *d)
{
	return d->printk_formats;
}

int vtrace_dump_qemu_pid(struct vtrace_dump *d)
{
	return d->qemu_pid;
}

/* The file against what the guest says it sent: a disagreement is worth a warning */
static void check_size(struct vtrace_cpu_reader *r)
{
	const struct vtrace_cpu_stats *eos = vtrace_dump_eos(r->dump, r->cpu);
	const struct vtrace_cpu_info *ci = vtrace_dump_cpu(r->dump, r->cpu);
	struct stat st;

	if (r->fd < 0) {
		if (ci->flags & VTRACE_CPU_HAS_PORT)
			vtrace_warn("%s: missing, expected the pages of CPU %u", r->path, r->cpu);
		return;
	}
	if (!eos || fstat(r->fd, &st))
		return;
	if ((uint64_t)st.st_size != eos->bytes_sent)
		vtrace_warn("%s: %llu bytes, but the guest's EOS says %llu were sent", r->path,
			    (unsigned long long)st.st_size, (unsigned long long)eos->bytes_sent);
}

struct vtrace_cpu_reader *vtrace_cpu_reader_open(struct vtrace_dump *d, unsigned int cpu)
{
	struct vtrace_cpu_reader *r;

	r = calloc(1, sizeof(*r));
	if (!r) {
		vtrace_set_error("%s: out of memory", d->dir);
		return NULL;
	}
	r->dump = d;
	r->cpu = cpu;
	r->fd = -1;
	r->end = UINT64_MAX;
	if (d->is_dat) {
		r->path = strdup(d->dir);
		r->offset = d->dat.offset[cpu];
		r->end = r->offset + d->dat.size[cpu];
	} else if (asprintf(&r->path, "%s/cpu%u", d->dir, cpu) < 0) {
		r->path = NULL;
	}
	if (!r->path)
		goto error;
	/*
	 * Slack after the page: kbuffer may read an event header past the
	 * commit, and libtraceevent reads an event's fields (up to a page,
	 * check_events()) without checking them against the record's size.
	 */
	r->page = calloc(1, 2 * (size_t)d->info.page_size + 64);
	r->kbuf = kbuffer_alloc(d->info.long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
				d->is_dat && tep_is_file_bigendian(d->tep) ? KBUFFER_ENDIAN_BIG :
				KBUFFER_ENDIAN_LITTLE);
	/* an event takes at least its 4-byte header */
	r->max_evs = d->info.page_size / 4 + 1;
	r->evs = calloc(r->max_evs, sizeof(*r->evs));
	if (!r->page || !r->kbuf || !r->evs) {
		vtrace_set_error("%s: out of memory", r->path);
		goto error;
	}
	r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0 && errno != ENOENT) {
		vtrace_set_error("%s: %s", r->path, strerror(errno));
		goto error;
	}
	if (d->is_dat && d->dat.compressed && !(r->chunks = dat_chunks_open(&d->dat, cpu)))
		goto error;
	check_size(r);
	return r;
error:
	vtrace_cpu_reader_close(r);
	return NULL;
}

void vtrace_cpu_reader_close(struct vtrace_cpu_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	dat_chunks_close(r->chunks);
	if (r->kbuf)
		kbuffer_free(r->kbuf);
	free(r->evs);
	free(r->page);
	free(r->path);
	free(r);
}

const struct vtrace_cpu_counts *vtrace_cpu_reader_counts(struct vtrace_cpu_reader *r)
{
	return &r->counts;
}

static int bad_page(struct vtrace_cpu_reader *r, uint64_t at, const char *fmt, uint64_t v1,
		    uint64_t v2)
{
	char what[200];

	char where[160];

	snprintf(what, sizeof(what), fmt, (unsigned long long)v1, (unsigned long long)v2);
	if (r->chunks)
		dat_chunks_where(r->chunks, at, where, sizeof(where));
	else
		snprintf(where, sizeof(where), "byte %llu", (unsigned long long)at);
	vtrace_set_error("%s: %s: bad page: %s", r->path, where, what);
	return -1;
}

/* The page header: commit size and flags within the page */
static int check_header(struct vtrace_cpu_reader *r)
{
	uint32_t psize = r->dump->info.page_size;
	uint64_t commit, size;

	memcpy(&commit, r->page + 8, 8);
	/*
	 * The kernel adds RB_MISSED_EVENTS, an int (1 << 31), to the commit, a
	 * long: on 64-bit kernels the flag comes sign-extended, with bits
	 * 32-63 set as well (libtraceevent's kbuffer reads only bits 0-31).
	 */
	if (r->dump->info.long_size == 4 ||
	    ((commit >> 32) == 0xffffffffULL && (commit & RB_MISSED_EVENTS)))
		commit &= 0xffffffffULL;
	size = commit & ~RB_MISSED_FLAGS;
	if (size > psize - PAGE_HDR_SIZE)
		return bad_page(r, r->page_offset + 8,
				"commit size %llu, expected at most %llu (page size mismatch?)",
				size, psize - PAGE_HDR_SIZE);
	if ((commit & RB_MISSED_STORED) && !(commit & RB_MISSED_EVENTS))
		return bad_page(r, r->page_offset + 8,
				"commit flags 0x%llx: missed-stored without missed-events", commit,
				0);
	if ((commit & RB_MISSED_STORED) && size + 8 > psize - PAGE_HDR_SIZE)
		return bad_page(r, r->page_offset + 8,
				"commit size %llu leaves no room for the missed count (page %llu)",
				size, psize);
	return 0;
}

/*
 * How far an event's fixed fields reach from the start of its record
 * (INT64_MAX for a negative offset or size), and the offset of its
 * zero-sized field (the rest of the record), -1 if none.  libtraceevent
 * prints both without looking at the record's size: a field past it is
 * read from the rest of the page (r->page has a page of slack), a
 * zero-sized one past it has a negative length (a 4 GiB malloc + memcpy).
 * @common_only: the common fields alone (common_type, common_pid, ...).
 */
static int64_t fields_extent(const struct tep_event *ev, int64_t *rest, bool common_only)
{
	const struct tep_format_field *lists[] = { ev->format.common_fields, ev->format.fields };
	int64_t need = 0;

	*rest = -1;
	for (int i = 0; i < (common_only ? 1 : 2); i++) {
		for (const struct tep_format_field *f = lists[i]; f; f = f->next) {
			if (f->offset < 0 || f->size < 0)
				return INT64_MAX;
			if ((int64_t)f->offset + f->size > need)
				need = (int64_t)f->offset + f->size;
			if (!f->size && f->offset > *rest)
				*rest = f->offset;
		}
	}
	return need;
}

static int check_fields(struct vtrace_cpu_reader *r, const struct event_extent *e, int len)
{
	uint64_t at = r->page_offset + kbuffer_curr_offset(r->kbuf);

	if (e->need > r->dump->info.page_size)
		return bad_page(r, at, "the format of its event reaches byte %llu, past a page of %llu",
				e->need, r->dump->info.page_size);
	if (e->rest > len)
		return bad_page(r, at, "event of %llu bytes, its format's last field starts at %llu",
				len, e->rest);
	return 0;
}

/* The extents of every event format of the dump, by id (on its first page) */
static int build_extents(struct vtrace_dump *d)
{
	struct tep_event **evs = tep_list_events(d->tep, TEP_EVENT_SORT_ID);
	int n = tep_get_events_count(d->tep), max = -1;

	for (int i = 0; evs && i < n; i++)
		if (evs[i]->id > max && evs[i]->id <= VTRACE_EVENT_ID_MAX)
			max = evs[i]->id;
	d->extents = calloc(max + 2, sizeof(*d->extents));
	if (!d->extents) {
		vtrace_set_error("%s: out of memory", d->dir);
		return -1;
	}
	d->nr_extents = max + 1;
	/*
	 * tep_data_type(), tep_data_pid() and the flags' readers take the
	 * offsets of common_type, common_pid... from the first format that has
	 * them (the lowest id) and read them in every record, whatever its
	 * event: a format no record uses can send them anywhere (fuzz-meta: a
	 * common_pid at byte 917,737,012).  So every format's common fields
	 * count, for every record.  Metadata may also define an id twice (two
	 * formats with "ID: 5"): which of them libtraceevent prints a record
	 * with is its choice, so the extent is the larger of theirs.
	 */
	d->common_need = 0;
	for (int i = 0; evs && i < n; i++) {
		struct event_extent *e;
		int64_t need, rest;

		need = fields_extent(evs[i], &rest, true);
		if (need > d->common_need)
			d->common_need = need;
		if (evs[i]->id < 0 || evs[i]->id > max)
			continue;
		e = &d->extents[evs[i]->id];
		need = fields_extent(evs[i], &rest, false);
		if (!e->known || need > e->need)
			e->need = need;
		if (!e->known || rest > e->rest)
			e->rest = rest;
		e->known = true;
	}
	return 0;
}

/*
 * Walk every event of the loaded page once: bounds, event ids and fields;
 * each event goes into r->evs, whence vtrace_cpu_reader_next() hands it out.
 */
static int check_events(struct vtrace_cpu_reader *r)
{
	struct vtrace_dump *d = r->dump;
	unsigned long long ts;
	int size = kbuffer_subbuffer_size(r->kbuf);
	void *data;
	int n = 0;

	r->nr_evs = 0;
	r->next_ev = 0;
	if (!d->extents && build_extents(d))
		return -1;
	if (d->common_need > d->info.page_size)
		return bad_page(r, r->page_offset,
				"a format's common fields reach byte %llu of a record, past a page"
				" of %llu (damaged metadata)", d->common_need,
				d->info.page_size);
	for (data = kbuffer_read_event(r->kbuf, &ts); data;
	     data = kbuffer_next_event(r->kbuf, &ts)) {
		int start = kbuffer_curr_index(r->kbuf);
		int len = kbuffer_event_size(r->kbuf);
		/* a hostile length word makes the size near INT_MAX: no int sum */
		int64_t end = (int64_t)start + kbuffer_curr_size(r->kbuf);
		int id;

		if (end > size || len < 2 || len > size)
			return bad_page(r, r->page_offset + kbuffer_curr_offset(r->kbuf),
					"event of %llu bytes runs past the commit size %llu",
					len, size);
		id = tep_data_type(d->tep, &(struct tep_record){ .data = data, .size = len });
		if (id < 0 || id >= d->nr_extents || !d->extents[id].known)
			return bad_page(r, r->page_offset + kbuffer_curr_offset(r->kbuf),
					"unknown event id %llu (no format for it in the metadata)%.0llu",
					id, 0);
		if (check_fields(r, &d->extents[id], len))
			return -1;
		if (n == r->max_evs)
			return bad_page(r, r->page_offset + kbuffer_curr_offset(r->kbuf),
					"more than %llu events in a page%.0llu", n, 0);
		if (!n)
			r->page_missed = kbuffer_missed_events(r->kbuf);
		r->evs[n++] = (struct page_event){
			.data	= data,
			.ts	= ts,
			.offset	= kbuffer_curr_offset(r->kbuf),
			.size	= len,
			.id	= id,
		};
	}
	r->nr_evs = n;
	return 0;
}

/*
 * The next page's bytes into r->page: their count, 0 at the end, -1 on an
 * error; r->page_offset set to the page's place (in a compressed file, in
 * the CPU's uncompressed data).  A compressed chunk that cannot be read
 * adds the pages it held to *@lost.
 */
static ssize_t read_page(struct vtrace_cpu_reader *r, uint32_t psize, uint64_t *lost)
{
	uint64_t before;
	ssize_t n;
	uint32_t len;

	if (r->chunks) {
		before = dat_chunks_lost(r->chunks);
		n = dat_chunks_page(r->chunks, r->page, psize, &r->page_offset);
		*lost = dat_chunks_lost(r->chunks) - before;
		return n;
	}
	if (r->fd < 0 || r->offset >= r->end)
		return 0;
	len = r->end - r->offset < psize ? r->end - r->offset : psize;
	n = pread(r->fd, r->page, len, r->offset);
	if (n < 0)
		vtrace_set_error("%s: byte %llu: %s", r->path, (unsigned long long)r->offset,
				 strerror(errno));
	r->page_offset = r->offset;
	if (n > 0)
		r->offset += n;
	return n;
}

/* Read and check the next page; 1 loaded, 0 end of file, -1 error */
static int load_page(struct vtrace_cpu_reader *r)
{
	uint32_t psize = r->dump->info.page_size;
	uint64_t lost = 0;
	ssize_t n;

	for (;;) {
		n = read_page(r, psize, &lost);
		if (n < 0 && !lost)
			return -1;
		if (n == 0)
			return 0;
		if (n < 0) {
			/* a compressed chunk that does not decompress: its pages are bad */
			r->counts.pages += lost;
		} else {
			r->counts.pages++;
			memset(r->page + n, 0, 2 * (size_t)psize + 64 - n);
			lost = 1;
		}
		if (n > 0 && (uint32_t)n < psize) {
			r->counts.truncated += n;
			bad_page(r, r->page_offset, "truncated page: %llu of %llu bytes", n, psize);
		} else if (n > 0 && !check_header(r) && !kbuffer_load_subbuffer(r->kbuf, r->page) &&
			   !check_events(r)) {
			return 1;
		}
		if (!(r->dump->flags & VTRACE_DUMP_SKIP_BAD))
			return -1;
		r->counts.bad_pages += lost;
		vtrace_warn("%s (skipped)", vtrace_last_error());
	}
}

static int is_filler(struct vtrace_dump *d, const struct page_event *e)
{
	static const char filler[] = VTRACE_FILLER_TEXT;
	int off = d->print_buf_offset;

	if (d->print_id < 0 || e->size < off + (int)sizeof(filler) - 1 || e->id != d->print_id)
		return 0;
	return !memcmp((char *)e->data + off, filler, sizeof(filler) - 1);
}

/**
 * vtrace_cpu_reader_next - the CPU's next event
 * @r:		the reader
 * @record:	set to the event (valid until the next call); ts is the raw
 *		ring-buffer time stamp, missed_events set on a page's first event
 * @filler:	set when the event is a flush filler
 *
 * Returns 1 with an event, 0 at the end, -1 on a bad page (error set).
 */
int vtrace_cpu_reader_next(struct vtrace_cpu_reader *r, struct tep_record **record, int *filler)
{
	const struct page_event *e;
	int ret;

	while (r->next_ev >= r->nr_evs) {
		ret = load_page(r);
		if (ret <= 0) {
			r->nr_evs = r->next_ev = 0;
			return ret;
		}
	}
	e = &r->evs[r->next_ev++];
	r->record = (struct tep_record){
		.ts	= e->ts,
		.offset	= r->page_offset + e->offset,
		.size	= e->size,
		.data	= e->data,
		.cpu	= r->cpu,
	};
	if (r->next_ev == 1) {
		int missed = r->page_missed;

		r->record.missed_events = missed;
		if (missed > 0)
			r->counts.missed += missed;
		else if (missed < 0)
			r->counts.missed_unknown++;
	}
	*filler = is_filler(r->dump, e);
	r->counts.events++;
	r->counts.fillers += *filler;
	*record = &r->record;
	return 1;
}
