// SPDX-License-Identifier: GPL-2.0
/* dat-chunks.c: the compressed sections and CPU data of a v7 trace.dat, one chunk at a time. */
/*
 * trace-cmd 3.x writes file version 7 compressed by default (Debian 12's
 * 3.1.6: zstd).  The file's header names the algorithm after the page size
 * ("zstd\0" "1.5.4\0"); every section flagged compressed (its header's
 * flags bit 0) then holds, after its 16-byte header:
 *
 *   u32 compressed size, u32 uncompressed size, the compressed bytes
 *
 * and the CPU data of a compressed BUFFER (flyrecord) section, where the
 * BUFFER option says each CPU's data starts (and how many bytes follow its
 * chunk count), is a series of chunks, each holding whole ring-buffer pages:
 *
 *   u32 chunk count
 *   per chunk: u32 compressed size, u32 uncompressed size, the compressed bytes
 *
 * libtracecmd keeps every chunk it decompressed: its memory grows with the
 * trace.  A reader here holds one chunk, its compressed bytes and its
 * pages, and hands the pages out one by one to the dumps' page reader
 * (dump.c), which checks each as it checks an uncompressed file's; the next
 * chunk replaces it.  Memory is that of the largest chunk (trace-cmd writes
 * ten pages a chunk), whatever the trace's length.
 *
 * A chunk is checked before it is decompressed: inside the CPU's data,
 * its uncompressed size at most DAT_MAX_CHUNK, and it must decompress to
 * exactly that size.  A chunk that does not is refused, or skipped as a
 * whole with --skip-bad-pages (its pages counted as bad); a chunk header
 * that is itself wrong leaves the rest of the CPU's data unreachable, and
 * that is said.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-cmd.h>
#include <zstd.h>

#include "lib-local.h"
#include "vtrace-util.h"

int tracecmd_get_file_compress_proto(struct tracecmd_input *handle, const char **name,
				     const char **version);

/* A chunk's or a compressed section's uncompressed bytes, at most (trace-cmd: 10 pages) */
#define DAT_MAX_CHUNK		(64U << 20)

struct dat_chunks {
	const struct dat_layout	*l;
	int			cpu;
	ZSTD_DCtx		*dctx;
	uint64_t		at;		/* the next chunk's header in the file */
	uint64_t		end;		/* of the CPU's data in the file */
	uint32_t		count;		/* chunks the CPU's data says it holds */
	uint32_t		index;		/* of the next chunk, from 0 */
	uint64_t		chunk_at;	/* the loaded chunk's header in the file */
	uint64_t		base;		/* its first byte in the CPU's uncompressed data */
	char			*in;		/* its compressed bytes */
	size_t			in_size;
	char			*out;		/* its pages */
	size_t			out_size;
	uint32_t		len;		/* bytes of pages in @out */
	uint32_t		pos;		/* the next page's in @out */
	uint64_t		lost;		/* pages of the chunks skipped */
};

static uint64_t num(const struct dat_layout *l, const void *p, int bytes)
{
	return tep_read_number(tracecmd_get_tep(l->handle), p, bytes);
}

static int read_exact(const struct dat_layout *l, void *buf, size_t len, uint64_t at,
		      const char *what)
{
	ssize_t n = pread(l->fd, buf, len, at);

	if (n == (ssize_t)len)
		return 0;
	vtrace_set_error("%s: byte %llu: %s, expected %zu bytes, the file has %zd there"
			 " (truncated?)", l->path, (unsigned long long)at, what, len, n < 0 ? 0 : n);
	return -1;
}

/* @buf holds at least @size bytes (grown, never shrunk) */
static int reserve(char **buf, size_t *have, size_t size)
{
	char *n;

	if (size <= *have)
		return 0;
	n = realloc(*buf, size);
	if (!n)
		return -1;
	*buf = n;
	*have = size;
	return 0;
}

/**
 * dat_compression_check - is the file's compression one this reader knows
 * @l:	the layout, its handle's file header read
 *
 * Return: 0 for zstd (what trace-cmd 3.1.6 writes), -1 with the error set
 * naming the algorithm otherwise.
 */
int dat_compression_check(const struct dat_layout *l)
{
	const char *name = NULL, *version = NULL;

	if (!tracecmd_get_file_compress_proto(l->handle, &name, &version) && name &&
	    !strcmp(name, "zstd"))
		return 0;
	vtrace_set_error("%s: compressed with \"%s\" (its file header), expected zstd, the"
			 " algorithm trace-cmd writes; trace-cmd convert -i %s -o FLAT"
			 " --file-version 7 --compression none makes a file that is read", l->path,
			 name ? name : "?", l->path);
	return -1;
}

/* zstd's one-shot decompression of @in into exactly @want bytes of @out */
static int unzstd(ZSTD_DCtx *dctx, char *out, uint32_t want, const char *in, uint32_t zsize,
		  const char **why)
{
	size_t n = ZSTD_decompressDCtx(dctx, out, want, in, zsize);

	if (ZSTD_isError(n)) {
		*why = ZSTD_getErrorName(n);
		return -1;
	}
	if (n != want) {
		*why = "fewer bytes than its header says";
		return -1;
	}
	return 0;
}

/**
 * dat_section_uncompress - a compressed section's contents
 * @l:		the layout
 * @at:		the section's header in the file
 * @size:	its size there (the section header's)
 * @buf:	set to the uncompressed bytes (malloc'ed, NUL after them)
 * @len:	their count
 *
 * Return: 0, or -1 with the error set (file, offset, what was expected).
 */
int dat_section_uncompress(const struct dat_layout *l, uint64_t at, uint64_t size, char **buf,
			   uint32_t *len)
{
	unsigned char h[8];
	ZSTD_DCtx *dctx = NULL;
	const char *why;
	char *in = NULL;
	uint32_t zsize;

	*buf = NULL;
	if (size < 8 || read_exact(l, h, 8, at + 16, "a compressed section's sizes"))
		goto bad;
	zsize = num(l, h, 4);
	*len = num(l, h + 4, 4);
	if (zsize > size - 8 || *len > DAT_MAX_CHUNK)
		goto bad;
	in = malloc(zsize ? zsize : 1);
	*buf = malloc(*len + 1);
	dctx = ZSTD_createDCtx();
	if (!in || !*buf || !dctx) {
		vtrace_set_error("%s: out of memory", l->path);
		goto error;
	}
	if (read_exact(l, in, zsize, at + 24, "a compressed section"))
		goto error;
	if (unzstd(dctx, *buf, *len, in, zsize, &why)) {
		vtrace_set_error("%s: byte %llu: a compressed section of %u bytes that does not"
				 " decompress to the %u its header says (zstd: %s; damaged?)",
				 l->path, (unsigned long long)at, zsize, *len, why);
		goto error;
	}
	(*buf)[*len] = '\0';
	ZSTD_freeDCtx(dctx);
	free(in);
	return 0;
bad:
	vtrace_set_error("%s: byte %llu: a compressed section of %llu bytes, expected its"
			 " compressed size within them and at most %u bytes uncompressed (damaged?)",
			 l->path, (unsigned long long)at, (unsigned long long)size, DAT_MAX_CHUNK);
error:
	ZSTD_freeDCtx(dctx);
	free(in);
	free(*buf);
	*buf = NULL;
	return -1;
}

/**
 * dat_chunks_open - one CPU's compressed data, ready to be read page by page
 * @l:		the layout (l->compressed), @l->fd open while the reader is
 * @cpu:	the CPU: its data at l->offset[cpu], l->size[cpu] bytes
 *
 * Return: the reader, or NULL with the error set (a chunk count that the
 * CPU's data cannot hold).
 */
struct dat_chunks *dat_chunks_open(const struct dat_layout *l, int cpu)
{
	struct dat_chunks *c = calloc(1, sizeof(*c));
	unsigned char h[4];

	if (!c || !(c->dctx = ZSTD_createDCtx())) {
		vtrace_set_error("%s: out of memory", l->path);
		goto error;
	}
	c->l = l;
	c->cpu = cpu;
	c->at = l->offset[cpu];
	/*
	 * trace-cmd's size of a CPU's compressed data leaves out its 4-byte
	 * chunk count (3.1.6: 1334 bytes said for 1338 written): the chunks
	 * are bounded by the size plus those 4 bytes, within the file
	 */
	c->end = l->offset[cpu] + l->size[cpu] + 4;
	if (c->end > l->file_size)
		c->end = l->file_size;
	if (!l->size[cpu])
		return c;
	if (l->size[cpu] < 4 || read_exact(l, h, 4, c->at, "a CPU's count of chunks"))
		goto bad;
	c->count = num(l, h, 4);
	c->at += 4;
	if (c->count > (c->end - c->at) / 8)
		goto bad;
	return c;
bad:
	vtrace_set_error("%s: byte %llu: CPU %d's compressed data of %llu bytes, expected a"
			 " chunk count and 8 bytes or more per chunk (damaged?)", l->path,
			 (unsigned long long)l->offset[cpu], cpu,
			 (unsigned long long)l->size[cpu]);
error:
	dat_chunks_close(c);
	return NULL;
}

void dat_chunks_close(struct dat_chunks *c)
{
	if (!c)
		return;
	ZSTD_freeDCtx(c->dctx);
	free(c->in);
	free(c->out);
	free(c);
}

/*
 * A chunk header that cannot be right: the rest of the CPU's data is out of
 * reach (counted as one lost page: how many it held is not known)
 */
static int chunk_header_bad(struct dat_chunks *c, uint32_t zsize, uint32_t usize)
{
	const struct dat_layout *l = c->l;

	vtrace_set_error("%s: byte %llu: CPU %d's compressed chunk %u of %u: %u bytes"
			 " decompressing to %u, expected a header of 8 bytes and its bytes within"
			 " the %llu left of the CPU's data, at most %u uncompressed: its chunks from"
			 " here are not read (damaged?)", l->path, (unsigned long long)c->chunk_at,
			 c->cpu, c->index + 1, c->count, zsize, usize,
			 (unsigned long long)(c->end - c->chunk_at), DAT_MAX_CHUNK);
	c->index = c->count;	/* the next chunk's place is not known */
	c->lost++;
	return -1;
}

/*
 * Load the next chunk: 1 loaded, 0 none left, -1 error.  A chunk that does
 * not decompress is stepped over (its pages counted in c->lost): the next
 * call reads the one after it.
 */
static int load_chunk(struct dat_chunks *c)
{
	const struct dat_layout *l = c->l;
	unsigned char h[8];
	uint32_t zsize, usize;
	const char *why;

	if (c->index >= c->count)
		return 0;
	c->chunk_at = c->at;
	c->base += c->len;
	c->len = c->pos = 0;
	if (c->end - c->at < 8 || read_exact(l, h, 8, c->at, "a chunk's header"))
		return chunk_header_bad(c, 0, 0);
	zsize = num(l, h, 4);
	usize = num(l, h + 4, 4);
	if (zsize > c->end - c->at - 8 || usize > DAT_MAX_CHUNK)
		return chunk_header_bad(c, zsize, usize);
	if (reserve(&c->in, &c->in_size, zsize ? zsize : 1) ||
	    reserve(&c->out, &c->out_size, usize ? usize : 1)) {
		vtrace_set_error("%s: out of memory", l->path);
		return -1;
	}
	if (read_exact(l, c->in, zsize, c->at + 8, "a compressed chunk"))
		return -1;
	c->at += 8 + (uint64_t)zsize;
	c->index++;
	if (unzstd(c->dctx, c->out, usize, c->in, zsize, &why)) {
		c->lost += (usize + l->page_size - 1) / l->page_size;
		c->base += usize;
		vtrace_set_error("%s: byte %llu: CPU %d's compressed chunk %u of %u: %u bytes"
				 " that do not decompress to the %u their header says (zstd: %s;"
				 " damaged?)", l->path, (unsigned long long)c->chunk_at, c->cpu,
				 c->index, c->count, zsize, usize, why);
		return -1;
	}
	c->len = usize;
	return 1;
}

/**
 * dat_chunks_page - copy the CPU's next page
 * @c:		the reader
 * @page:	where to (at least @size bytes)
 * @size:	the page size
 * @at:		set to the page's offset in the CPU's uncompressed data
 *
 * Return: the bytes copied (less than @size only for a chunk's last, cut
 * page), 0 at the CPU's end, -1 on a chunk that cannot be read (error set;
 * dat_chunks_lost() says the pages it held; the next call goes on with the
 * chunk after it, if its place is known).
 */
int dat_chunks_page(struct dat_chunks *c, char *page, uint32_t size, uint64_t *at)
{
	uint32_t n;
	int ret;

	while (c->pos >= c->len) {
		ret = load_chunk(c);
		if (ret <= 0)
			return ret;
	}
	n = c->len - c->pos < size ? c->len - c->pos : size;
	memcpy(page, c->out + c->pos, n);
	*at = c->base + c->pos;
	c->pos += n;
	return n;
}

/* Pages of the chunks that could not be decompressed, so far */
uint64_t dat_chunks_lost(const struct dat_chunks *c)
{
	return c->lost;
}

/* "byte N (CPU K's compressed chunk I of C, its uncompressed byte M)" for @at in the data */
void dat_chunks_where(const struct dat_chunks *c, uint64_t at, char *buf, size_t len)
{
	snprintf(buf, len, "byte %llu (CPU %d's compressed chunk %u of %u, its uncompressed byte"
		 " %llu)", (unsigned long long)c->chunk_at, c->cpu, c->index, c->count,
		 (unsigned long long)(at - c->base));
}
