// SPDX-License-Identifier: GPL-2.0
/* dat-header.c: a v7 trace.dat's file header and its sections, checked before libtracecmd opens it. */
/*
 * When libtracecmd 3.1 opens a v7 file (tracecmd_alloc_fd()), it reads the
 * file header, then walks every section from the first one to the file's
 * end looking for the strings sections (read_metadata_strings()):
 *
 *   magic "\027\010Dtracing", version "7\0", u8 endian (1: big),
 *   u8 long size, u32 page size, compression name "\0" and version "\0",
 *   u64 offset of the first options section, then the sections:
 *   u16 id, u16 flags, u32 description, u64 size, size bytes
 *
 * It steps over a section with lseek(fd, size, SEEK_CUR), and lseek()
 * takes the size as a signed offset: a size of 2^63 or more sends it back
 * into the sections it has read, which it then reads again, without end
 * (a size of 2^64 - 16 onto the very same header; one that goes back
 * before the file's start makes lseek() fail, and the walk ends).  Nothing bounds that
 * walk, not even the probe child (tracedat.c), which only gives up after
 * DAT_PROBE_SECONDS, on every opening of the file.  So the walk is done
 * here first, and a file it would not leave is refused at once; trace-cmd
 * never writes such a size (its sections end, one after the other, at the
 * file's end).  A compression libtracecmd here does not read is named here
 * too, before libtracecmd leaks what it allocated for the file.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib-local.h"
#include "vtrace-util.h"

/* The first bytes of every trace-cmd trace.dat: "\027\010Dtracing" */
const char dat_magic[DAT_MAGIC_LEN] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

#define DAT_OPTION_STRINGS	15		/* TRACECMD_OPTION_STRINGS */
#define DAT_SEC_FL_COMPRESS	1		/* TRACECMD_SEC_FL_COMPRESS */

/* The file header up to the first section: magic, strings, numbers (under 100 bytes) */
#define DAT_HEADER_MAX		256

struct dat_header {
	const char	*path;
	int		fd;
	bool		bigendian;
};

static uint64_t hdr_num(const struct dat_header *h, const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)p[h->bigendian ? bytes - 1 - i : i] << (8 * i);
	return v;
}

/* After the NUL-ended string at @p of @b's @n bytes, NULL if it has no end */
static const char *after_string(const char *b, size_t n, const char *p)
{
	const char *end = p < b + n ? memchr(p, '\0', b + n - p) : NULL;

	return end ? end + 1 : NULL;
}

/*
 * The walk of read_metadata_strings(), from @at: 0 when it reaches a
 * section header the file does not hold whole (where libtracecmd stops),
 * -1 with the error set at a size that would send it back.
 */
static int walk_sections(const struct dat_header *h, uint64_t at)
{
	unsigned char s[16], c[4];

	while (pread(h->fd, s, sizeof(s), at) == sizeof(s)) {
		unsigned int id = hdr_num(h, s, 2), flags = hdr_num(h, s + 2, 2);
		uint64_t size = hdr_num(h, s + 8, 8);

		if (id == DAT_OPTION_STRINGS && (flags & DAT_SEC_FL_COMPRESS)) {
			/* u32 compressed size, u32 size, the block: read whole or the walk ends */
			if (pread(h->fd, c, sizeof(c), at + 16) != sizeof(c))
				return 0;
			at += 16 + 8 + hdr_num(h, c, 4);
			continue;
		}
		if (id == DAT_OPTION_STRINGS) {
			/*
			 * Read whole as an int of its low 32 bits: a negative one
			 * fails its realloc() and the walk goes on at the next
			 * header's place; a cut one is read to the file's end.
			 */
			int32_t n = (int32_t)(uint32_t)size;

			at += 16 + (n < 0 ? 0 : n);
			continue;
		}
		if (size >> 63) {
			uint64_t back = -size;

			if (back > at + 16)		/* before the file's start: lseek() fails */
				return 0;
			vtrace_set_error("%s: byte %llu: a section (id %u) of %llu bytes, past any"
					 " file's end: libtracecmd takes it for a step back to byte"
					 " %llu and reads from there again: it can go round without"
					 " end (trace-cmd report hangs on such a file): a damaged"
					 " trace.dat", h->path, (unsigned long long)at, id,
					 (unsigned long long)size,
					 (unsigned long long)(at + 16 - back));
			return -1;
		}
		at += 16 + size;
	}
	return 0;
}

/*
 * A v7 file whose header names a compression other than zstd, the one
 * libtracecmd here reads (trace-cmd 3.1.6 writes zstd; its zlib is not
 * built in): said by name, -1.
 */
static int check_compression(const struct dat_header *h, const char *name)
{
	if (!strcmp(name, "none") || !strcmp(name, "zstd"))
		return 0;
	vtrace_set_error("%s: compressed with \"%.20s\" (its file header), which libtracecmd here"
			 " does not read (it reads zstd): trace-cmd convert -i %s -o FLAT"
			 " --compression none, where trace-cmd reads it, makes a file that is read",
			 h->path, name, h->path);
	return -1;
}

/**
 * dat_header_check - a trace.dat's file header and sections, before libtracecmd opens it
 * @path:	the file
 *
 * For a v7 file: its compression is one libtracecmd here reads, and the walk
 * libtracecmd makes over its sections when it opens it comes to an end.
 * Anything else (v6, not a trace.dat, a header cut short) is left to the
 * checks that follow, and to libtracecmd.
 *
 * Return: 0, or -1 with the error set.
 */
int dat_header_check(const char *path)
{
	struct dat_header h = { .path = path };
	char b[DAT_HEADER_MAX];
	const char *ver, *name, *zver, *p;
	ssize_t n;
	int ret = 0;

	h.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (h.fd < 0)
		return 0;
	n = pread(h.fd, b, sizeof(b), 0);
	ver = b + DAT_MAGIC_LEN;
	name = n > DAT_MAGIC_LEN && !memcmp(b, dat_magic, DAT_MAGIC_LEN) ?
	       after_string(b, n, ver) : NULL;
	if (!name || atoi(ver) < 7 || name + 6 >= b + n)
		goto out;
	h.bigendian = name[0] == 1;
	name += 6;				/* u8 endian, u8 long size, u32 page size */
	zver = after_string(b, n, name);
	if (!zver)
		goto out;
	ret = check_compression(&h, name);
	p = after_string(b, n, zver);
	if (ret || !p || p + 8 > b + n)
		goto out;
	ret = walk_sections(&h, p + 8 - b);
out:
	close(h.fd);
	return ret;
}
