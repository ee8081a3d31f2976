/* SPDX-License-Identifier: GPL-2.0 */
/* lib-local.h: declarations shared by the files of src/lib only. */
#ifndef _LIB_LOCAL_H
#define _LIB_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tracecmd_input;
struct tep_handle;
struct tep_event;

/**
 * struct dat_layout - a trace-cmd trace.dat's headers and where its CPUs' pages are
 * @handle:	libtracecmd's handle, headers read (its tep, its trace clock)
 * @fd:		the handle's file descriptor (closed with the handle)
 * @nr_cpus:	entries of @offset and @size
 * @offset:	where CPU K's pages start in the file
 * @size:	their length in bytes (0: the CPU recorded nothing)
 * @compressed:	v7 whose CPU data is compressed: @offset and @size are where each
 *		CPU's chunks are (dat-chunks.c)
 */
struct dat_layout {
	const char		*path;
	struct tracecmd_input	*handle;
	struct tep_handle	*tep;
	int			fd;
	uint64_t		file_size;
	unsigned int		page_size;
	int			long_size;
	int			nr_cpus;
	uint64_t		*offset;
	uint64_t		*size;
	bool			compressed;
};

struct dat_chunks;
struct vtrace_offset_record;
struct vtrace_offsets_cut;

/* tracedat.c */
int dat_layout_read(const char *path, struct dat_layout *l, bool plugins);
const char *dat_layout_clock(const struct dat_layout *l);
void dat_layout_free(struct dat_layout *l, bool keep_handle);

/* print-fmt.c */
int dat_check_print_fmts(struct tep_handle *tep, const char *path);
bool print_bprint_without_fmt(struct tep_event *ev);

/* dat-header.c */
#define DAT_MAGIC_LEN	10
extern const char dat_magic[DAT_MAGIC_LEN];
int dat_header_check(const char *path);

/* dat-chunks.c */
int dat_compression_check(const struct dat_layout *l);
int dat_section_uncompress(const struct dat_layout *l, uint64_t at, uint64_t size, char **buf,
			   uint32_t *len);
struct dat_chunks *dat_chunks_open(const struct dat_layout *l, int cpu);
void dat_chunks_close(struct dat_chunks *c);
int dat_chunks_page(struct dat_chunks *c, char *page, uint32_t size, uint64_t *at);
uint64_t dat_chunks_lost(const struct dat_chunks *c);
void dat_chunks_where(const struct dat_chunks *c, uint64_t at, char *buf, size_t len);

/**
 * struct dat_gap - where one CPU of a host trace lost events
 * @from:	its last event before the loss (host TSC; 1: before its first)
 * @to:		its first event after it
 * @cpu:	the CPU
 * @nr:		events lost, -1 not counted
 */
struct dat_gap {
	uint64_t	from;
	uint64_t	to;
	int		cpu;
	long long	nr;
};

/* offsets-gaps.c */
int dat_gaps_cut(const char *path, const struct dat_gap *gaps, size_t nr_gaps,
		 const struct vtrace_offset_record *recs, size_t nr,
		 struct vtrace_offsets_cut **cuts, size_t *nr_cuts);

/**
 * struct probe - a child process that reads input first for a library that may die of it
 * @work:	run in the child on each request; its return value is the answer
 * @seconds:	how long one request may take (SIGALRM ends the child then)
 * @shared_size: bytes of @shared
 * @shared:	mapped shared with the child, zeroed before each request: where
 *		work() is, for the caller's message if the child dies
 * @pid:	the child (0: none running)
 * @fd:		the caller's end of the socket to it
 * @served:	requests the running child has had
 * @next:	the probes started, ended at exit
 *
 * One per caller, static, with @work, @seconds and @shared_size set and the
 * rest zero (probe.c).
 */
struct probe {
	int		(*work)(const void *req, size_t len, void *shared);
	unsigned int	seconds;
	size_t		shared_size;
	void		*shared;
	int		pid;
	int		fd;
	unsigned long	served;
	struct probe	*next;
};

/* A request's size, at most: a path and a few flags */
#define PROBE_MAX_REQUEST	4200

/* probe.c */
int probe_run(struct probe *p, const void *req, size_t len, int *answer, int *status);
void probe_how(const struct probe *p, int status, char *buf, size_t len);

#endif /* _LIB_LOCAL_H */
