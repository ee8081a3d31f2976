// SPDX-License-Identifier: GPL-2.0
/* dat-host.c: vtrace dat: the host's trace.dat copied with a GUEST option per guest. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "dat-local.h"
#include "vtrace-check.h"
#include "vtrace-dump.h"
#include "vtrace-local.h"
#include "vtrace-proto.h"
#include "vtrace-tsc.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

/* ---- the host's copy */

static int read_at(int fd, uint64_t off, void *buf, size_t len, const char *path)
{
	if (pread(fd, buf, len, off) != (ssize_t)len) {
		vtrace_set_error("%s: byte %" PRIu64 ": file too short", path, off);
		return -1;
	}
	return 0;
}

static uint64_t le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * Version 7: follow the options sections to the last one's DONE option.
 * Returns the offset of its 8-byte "next section" field, and the string id
 * of that section's description in *@desc.
 */
static int64_t last_done(int fd, const char *path, uint32_t *desc)
{
	unsigned char hdr[16], opt[6];
	char magic[32];
	uint64_t sect, off, end;
	size_t n;

	if (read_at(fd, 0, magic, sizeof(magic), path))
		return -1;
	if (memcmp(magic, "\x17\x08\x44tracing7", 11) || magic[11] || magic[12]) {
		vtrace_set_error("%s: byte 0: expected a little-endian trace.dat version 6 or 7",
				 path);
		return -1;
	}
	/* endianness, long size, page size, then "name\0version\0" */
	n = 18;
	for (int zeros = 0; n < sizeof(magic) && zeros < 2; n++)
		zeros += !magic[n];
	if (n >= sizeof(magic) || read_at(fd, n, hdr, 8, path))
		return -1;
	for (sect = le(hdr, 8); sect; sect = le(hdr, 8)) {
		if (read_at(fd, sect, hdr, 16, path))
			return -1;
		if (le(hdr, 2) != 0 || le(hdr + 2, 2) & 1) {
			vtrace_set_error("%s: byte %" PRIu64 ": expected an uncompressed options"
					 " section", path, sect);
			return -1;
		}
		*desc = le(hdr + 4, 4);
		end = sect + 16 + le(hdr + 8, 8);
		for (off = sect + 16; off + 6 <= end; off += 6 + le(opt + 2, 4)) {
			if (read_at(fd, off, opt, 6, path))
				return -1;
			if (le(opt, 2) == OPT_DONE)
				break;
		}
		if (off + 14 > end || le(opt, 2) != OPT_DONE) {
			vtrace_set_error("%s: byte %" PRIu64 ": options section without DONE", path,
					 sect);
			return -1;
		}
		if (read_at(fd, off + 6, hdr, 8, path))
			return -1;
		if (!le(hdr, 8))
			return off + 6;
	}
	return -1;
}

static void put_guest_option(struct dat *g, FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	put_str0(m, g->name);
	put_le(m, g->guest_id, 8);
	put_le(m, g->info->nr_cpus, 4);
	for (unsigned int c = 0; c < g->info->nr_cpus; c++) {
		put_le(m, c, 4);
		put_le(m, g->vcpu_tid[c], 4);
	}
	fclose(m);
	put_option(f, OPT_GUEST, buf, len);
	free(buf);
}

/*
 * What the host copy gets: a GUEST per guest, TRACEID if it has none, and
 * TSC2NSEC (after any the host file had: trace-cmd takes the last one read)
 */
static void host_options(struct dat *gs, int nr, FILE *m)
{
	for (int i = 0; i < nr; i++)
		put_guest_option(&gs[i], m);
	if (!gs[0].host_has_id) {
		put_le(m, OPT_TRACEID, 2);
		put_le(m, 8, 4);
		put_le(m, gs[0].host_id, 8);
	}
	dat_put_tsc2nsec(&gs[0], m);
}

/* Version 7: the appended options section: header, host_options(), DONE */
static int host_section(struct dat *gs, int nr, uint32_t desc, char **sect, size_t *len)
{
	char *opts = NULL;
	size_t opts_len = 0;
	FILE *m = open_memstream(&opts, &opts_len);

	if (!m)
		return -1;
	host_options(gs, nr, m);
	put_le(m, OPT_DONE, 2);
	put_le(m, 8, 4);
	put_le(m, 0, 8);
	if (fclose(m))
		return -1;
	m = open_memstream(sect, len);
	if (!m) {
		free(opts);
		return -1;
	}
	put_le(m, 0, 2);		/* section id: options */
	put_le(m, 0, 2);		/* flags: not compressed */
	put_le(m, desc, 4);
	put_le(m, opts_len, 8);
	fwrite(opts, 1, opts_len, m);
	free(opts);
	return fclose(m);
}

/*
 * Version 6 keeps its options before the CPU table ("options  \0" ... 0,
 * "flyrecord\0", per CPU offset and size), the CPU data page aligned after
 * it.  struct v6 is where those are; the new options go before the 0 that
 * ends the options (or, with none, as "options  \0" ... 0 before
 * "flyrecord\0"), into the padding before the data if they fit, else the
 * data moves by whole pages and the table says so.
 */
struct v6 {
	int		fd;
	const char	*path;
	uint64_t	pos;
	uint64_t	insert;		/* where the new options go */
	bool		has_options;
	uint64_t	table;		/* the CPU table, after "flyrecord\0" */
	uint32_t	cpus;
	uint32_t	page;
	uint64_t	end;		/* end of the table */
	uint64_t	data;		/* first CPU data */
};

static int v6_read(struct v6 *v, void *buf, size_t len)
{
	if (read_at(v->fd, v->pos, buf, len, v->path))
		return -1;
	v->pos += len;
	return 0;
}

static int v6_num(struct v6 *v, int bytes, uint64_t *val)
{
	unsigned char b[8];

	if (v6_read(v, b, bytes))
		return -1;
	*val = le(b, bytes);
	return 0;
}

/* A block of data preceded by its @bytes-wide size */
static int v6_skip_sized(struct v6 *v, int bytes)
{
	uint64_t size;

	if (v6_num(v, bytes, &size))
		return -1;
	v->pos += size;
	return 0;
}

static int v6_expect(struct v6 *v, const char *str, size_t len)
{
	char buf[16];

	if (v6_read(v, buf, len))
		return -1;
	if (memcmp(buf, str, len)) {
		vtrace_set_error("%s: byte %" PRIu64 ": expected \"%s\"", v->path, v->pos - len,
				 str);
		return -1;
	}
	return 0;
}

/* Formats: @count files (each 8-byte size + data) */
static int v6_skip_files(struct v6 *v)
{
	uint64_t count;

	if (v6_num(v, 4, &count))
		return -1;
	while (count--)
		if (v6_skip_sized(v, 8))
			return -1;
	return 0;
}

static int v6_skip_systems(struct v6 *v)
{
	uint64_t systems;
	char c;

	if (v6_num(v, 4, &systems))
		return -1;
	while (systems--) {
		do {
			if (v6_read(v, &c, 1))
				return -1;
		} while (c);
		if (v6_skip_files(v))
			return -1;
	}
	return 0;
}

static int v6_options(struct v6 *v)
{
	char word[10];
	uint64_t id, size;

	if (v6_read(v, word, 10))
		return -1;
	if (!memcmp(word, "flyrecord", 10)) {
		v->insert = v->pos - 10;
		return 0;
	}
	if (memcmp(word, "options  ", 10)) {
		vtrace_set_error("%s: byte %" PRIu64 ": expected \"options\" or \"flyrecord\""
				 " (latency traces are not supported)", v->path, v->pos - 10);
		return -1;
	}
	v->has_options = true;
	for (;;) {
		if (v6_num(v, 2, &id))
			return -1;
		if (!id)
			break;
		if (v6_num(v, 4, &size))
			return -1;
		v->pos += size;
	}
	v->insert = v->pos - 2;
	return v6_expect(v, "flyrecord", 10);
}

static int v6_parse(struct v6 *v)
{
	uint64_t cpus, page, off;

	v->pos = 14;
	if (v6_num(v, 4, &page) || v6_expect(v, "header_page", 12) || v6_skip_sized(v, 8) ||
	    v6_expect(v, "header_event", 13) || v6_skip_sized(v, 8) || v6_skip_files(v) ||
	    v6_skip_systems(v) || v6_skip_sized(v, 4) || v6_skip_sized(v, 4) ||
	    v6_skip_sized(v, 8) || v6_num(v, 4, &cpus) || v6_options(v))
		return -1;
	v->page = page;
	v->cpus = cpus;
	v->table = v->pos;
	v->end = v->table + 16 * cpus;
	v->data = UINT64_MAX;
	for (uint32_t c = 0; c < v->cpus; c++) {
		if (v6_num(v, 8, &off))
			return -1;
		v->pos += 8;	/* its size */
		if (off && off < v->data)
			v->data = off;
	}
	if (v->data == UINT64_MAX)
		v->data = v->end;
	if (v->data < v->end || !v->page || v->page & (v->page - 1)) {
		vtrace_set_error("%s: byte %" PRIu64 ": CPU data inside the header", v->path,
				 v->table);
		return -1;
	}
	return 0;
}

/* The new header: old one with the options inserted, table moved by @shift */
static int v6_header(struct v6 *v, const char *ins, size_t ins_len, uint64_t shift, FILE *out)
{
	size_t len = v->end - v->insert;
	char *head = malloc(v->insert), *rest = malloc(len);
	int ret = -1;

	if (!head || !rest || read_at(v->fd, 0, head, v->insert, v->path) ||
	    read_at(v->fd, v->insert, rest, len, v->path))
		goto out;
	for (uint32_t c = 0; c < v->cpus; c++) {
		unsigned char *o = (unsigned char *)rest + (v->table - v->insert) + 16 * c;
		uint64_t off = le(o, 8);

		for (int i = 0; off && i < 8; i++)
			o[i] = ((off + shift) >> (8 * i)) & 0xff;
	}
	fwrite(head, 1, v->insert, out);
	fwrite(ins, 1, ins_len, out);
	fwrite(rest, 1, len, out);
	ret = 0;
out:
	free(head);
	free(rest);
	return ret;
}

/* Bytes @from.. of @in to the end of @out (copy_file_range copies in parts) */
static int copy_rest(int in, uint64_t from, int out)
{
	struct stat st;
	loff_t off = from;

	if (fstat(in, &st))
		return -1;
	while (off < st.st_size) {
		ssize_t n = copy_file_range(in, &off, out, NULL, st.st_size - off, 0);

		if (n <= 0)
			return -1;
	}
	return 0;
}

static int write_host_v6(struct dat *gs, int nr, int in, const char *path)
{
	struct v6 v = { .fd = in, .path = gs[0].host };
	uint64_t shift = 0, at;
	char *ins = NULL;
	size_t ins_len = 0;
	FILE *m, *out = NULL;
	int ret = -1;

	if (v6_parse(&v))
		return -1;
	m = open_memstream(&ins, &ins_len);
	if (!m)
		return -1;
	if (!v.has_options)
		fwrite("options  ", 1, 10, m);
	host_options(gs, nr, m);
	if (!v.has_options)
		put_le(m, OPT_DONE, 2);
	if (fclose(m))
		goto out;
	if (v.end + ins_len > v.data)
		shift = (v.end + ins_len - v.data + v.page - 1) / v.page * v.page;
	out = fopen(path, "w");
	if (!out || v6_header(&v, ins, ins_len, shift, out))
		goto out_errno;
	for (at = v.end + ins_len; at < v.data + shift; at++)
		fputc(0, out);
	if (fflush(out) || lseek(fileno(out), 0, SEEK_END) != (off_t)(v.data + shift))
		goto out_errno;
	if (copy_rest(in, v.data, fileno(out)))
		goto out_errno;
	ret = 0;
	goto out;
out_errno:
	vtrace_set_error("%s: %s", path, errno ? strerror(errno) : "cannot write");
out:
	if (out && fclose(out) && !ret) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		ret = -1;
	}
	free(ins);
	return ret;
}

/* A copy of the host's file, its last options section chained to a new one at the end */
int dat_write_host(struct dat *gs, int nr, const char *path)
{
	const char *host = gs[0].host;
	int in, out = -1, ret = -1;
	unsigned char next[8];
	char *sect = NULL;
	uint32_t desc = 0;
	size_t len = 0;
	int64_t done;
	off_t end;

	in = open(host, O_RDONLY);
	if (in < 0) {
		vtrace_set_error("%s: %s", host, strerror(errno));
		return -1;
	}
	if (read_at(in, 0, next, 8, host) == 0 && pread(in, next, 1, 10) == 1 && next[0] == '6') {
		ret = write_host_v6(gs, nr, in, path);
		close(in);
		return ret;
	}
	done = last_done(in, host, &desc);
	if (done < 0 || host_section(gs, nr, desc, &sect, &len))
		goto out;
	out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (out < 0 || copy_rest(in, 0, out))
		goto out_errno;
	end = lseek(out, 0, SEEK_END);
	for (int i = 0; i < 8; i++)
		next[i] = ((uint64_t)end >> (8 * i)) & 0xff;
	if (end < 0 || pwrite(out, sect, len, end) != (ssize_t)len ||
	    pwrite(out, next, 8, done) != 8)
		goto out_errno;
	ret = 0;
	goto out;
out_errno:
	vtrace_set_error("%s: %s", path, strerror(errno));
out:
	free(sect);
	close(in);
	if (out >= 0 && close(out) && !ret) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		ret = -1;
	}
	return ret;
}
