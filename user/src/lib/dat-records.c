// SPDX-License-Identifier: GPL-2.0
/* dat-records.c: every record of a host trace.dat, one CPU after the other, raw time stamps. */
/*
 * The passes over a host trace.dat that are not the merge itself (the
 * offset history of its vtrace_host:tsc_offset events, offsets-dat.c; its
 * vCPU threads, vcpu.c) read its records here.  A file whose pages are
 * laid out flat (v6, v7 without compression) is read with vtrace's own page
 * reader (dump.c: vtrace_dump_open_dat(), vtrace_cpu_reader_next()), which
 * checks every page header and every event against its page: a damaged
 * page is refused with its CPU and offset.  libtracecmd's record reader
 * trusts the page headers (a commit size past the page sends its kbuffer
 * outside the file's mapping), so it reads only what vtrace cannot, the
 * compressed files, and a record it returns must fit in a page.
 */
#include <stdlib.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "vtrace-dump.h"
#include "vtrace-util.h"

struct vtrace_dat_records {
	const char			*path;
	struct vtrace_dump		*dump;
	struct vtrace_cpu_reader	*reader;
	int				cpu;		/* the CPU being read, -1 before */
};

/**
 * vtrace_dat_records_open - a host trace.dat, ready to be read CPU by CPU
 * @path:	the file
 *
 * Return: the reader, or NULL with the error set.
 */
struct vtrace_dat_records *vtrace_dat_records_open(const char *path)
{
	struct vtrace_dat_records *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->path = path;
	r->cpu = -1;
	if (vtrace_dat_check_magic(path))
		goto error;
	r->dump = vtrace_dump_open_dat(path, VTRACE_DUMP_NO_PLUGINS);
	if (!r->dump)
		goto error;
	return r;
error:
	free(r);
	return NULL;
}

/* libtracecmd's handle of the file: its headers, options, trace clock */
struct tracecmd_input *vtrace_dat_records_handle(struct vtrace_dat_records *r)
{
	return vtrace_dump_dat_handle(r->dump);
}

struct tep_handle *vtrace_dat_records_tep(struct vtrace_dat_records *r)
{
	return tracecmd_get_tep(vtrace_dat_records_handle(r));
}

/* The CPUs whose records there are: 0 to N - 1 */
int vtrace_dat_records_cpus(struct vtrace_dat_records *r)
{
	return vtrace_dump_info(r->dump)->nr_cpus;
}

/**
 * vtrace_dat_records_next - the next record of one CPU
 * @r:		the reader
 * @cpu:	the CPU (0 to vtrace_dat_records_cpus() - 1), one after the other
 * @rec:	set to the record, valid until the next call; ts is the ring
 *		buffer's raw time stamp, missed_events set on a page's first record
 *		after a loss
 *
 * Return: 1 with a record, 0 at the CPU's end, -1 on damage (error set).
 */
int vtrace_dat_records_next(struct vtrace_dat_records *r, int cpu, struct tep_record **rec)
{
	int filler;

	if (cpu != r->cpu) {
		vtrace_cpu_reader_close(r->reader);
		r->cpu = cpu;
		r->reader = vtrace_cpu_reader_open(r->dump, cpu);
		if (!r->reader)
			return -1;
	}
	return vtrace_cpu_reader_next(r->reader, rec, &filler);
}

void vtrace_dat_records_close(struct vtrace_dat_records *r)
{
	if (!r)
		return;
	vtrace_cpu_reader_close(r->reader);
	vtrace_dump_close(r->dump);
	free(r);
}
