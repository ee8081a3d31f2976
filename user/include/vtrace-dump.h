/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-dump.h: a machine's dump folder (ctl + cpuK pages) and its page readers. */
#ifndef _VTRACE_DUMP_H
#define _VTRACE_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/vtrace.h>

struct tep_handle;
struct tep_event;
struct tep_format_field;
struct tracecmd_input;
struct tep_record;
struct vtrace_dump;
struct vtrace_cpu_reader;

/**
 * struct vtrace_cpu_counts - what one CPU's page reader has seen so far
 * @pages:		pages read (bad ones included)
 * @bad_pages:		pages skipped as damaged (with VTRACE_DUMP_SKIP_BAD)
 * @events:		events returned (fillers included)
 * @fillers:		filler events among them
 * @missed:		events the ring buffer reported lost in page headers
 * @missed_unknown:	pages that reported a loss without a count
 * @truncated:		bytes of a last, incomplete page
 */
struct vtrace_cpu_counts {
	uint64_t	pages;
	uint64_t	bad_pages;
	uint64_t	events;
	uint64_t	fillers;
	uint64_t	missed;
	uint64_t	missed_unknown;
	uint64_t	truncated;
};

/* vtrace_dump_open() flags */
#define VTRACE_DUMP_SKIP_BAD	(1U << 0)	/* skip damaged pages instead of failing */
#define VTRACE_DUMP_NO_PLUGINS	(1U << 1)	/* do not load libtraceevent plugins */
/* parse the metadata in this process only, not first in a child (to debug a refusal) */
#define VTRACE_DUMP_NO_PROBE	(1U << 2)
/*
 * Or-ed into the flags of every vtrace_dump_open(): 0 in the tools; a fuzz
 * target that runs a whole tool sets VTRACE_DUMP_NO_PROBE here when asked
 * to (FUZZ_NO_PROBE=1, user/fuzz/fuzz-merge.c).
 */
extern unsigned int vtrace_dump_forced_flags;

struct vtrace_dump *vtrace_dump_open(const char *dir, unsigned int flags);
struct vtrace_dump *vtrace_dump_open_dat(const char *path, unsigned int flags);
const char *vtrace_dump_dat_clock(struct vtrace_dump *dump);
struct tracecmd_input *vtrace_dump_dat_handle(struct vtrace_dump *dump);
void vtrace_dump_close(struct vtrace_dump *dump);
const char *vtrace_dump_dir(struct vtrace_dump *dump);
struct tep_handle *vtrace_dump_tep(struct vtrace_dump *dump);
const struct vtrace_meta_info *vtrace_dump_info(struct vtrace_dump *dump);
const struct vtrace_cpu_info *vtrace_dump_cpu(struct vtrace_dump *dump, unsigned int cpu);
const struct vtrace_cpu_stats *vtrace_dump_eos(struct vtrace_dump *dump, unsigned int cpu);
int vtrace_dump_has_eos(struct vtrace_dump *dump);
int vtrace_dump_qemu_pid(struct vtrace_dump *dump);
const char *vtrace_dump_kallsyms(struct vtrace_dump *dump);
const char *vtrace_dump_printk_formats(struct vtrace_dump *dump);

/*
 * probe.c: the requests a probe child (a dump's metadata, a trace.dat's
 * headers) died on in this process: the fuzz targets keep those inputs
 */
extern unsigned long vtrace_probe_deaths;

/* tracedat.c: a host trace.dat (trace-cmd record -C x86-tsc) */
/* libtracecmd reads its headers in this process only, not first in a child (FUZZ_NO_PROBE=1) */
extern bool vtrace_dat_no_probe;
int vtrace_dat_check_magic(const char *path);
int vtrace_dat_check_clock(const char *path, const char *clock);
struct tracecmd_input *vtrace_dat_open_raw(const char *path);
const char *vtrace_dat_clock(struct tracecmd_input *handle);
int vtrace_dat_unread(struct tracecmd_input *handle, char *msg, size_t len);
int vtrace_dat_instances(struct tracecmd_input *handle, char *msg, size_t len);

/* trace-cmd's counts of one CPU's ring buffer at its stop (vtrace_dat_cpustat()) */
struct vtrace_dat_cpustat {
	uint64_t	left;		/* "entries": still in the kernel's buffer */
	uint64_t	overrun;	/* overwritten before they were read */
	uint64_t	dropped;	/* refused while the buffer was full */
	uint64_t	read;		/* "read events": read from it so far */
};
int vtrace_dat_cpustat(struct tracecmd_input *handle, int cpu, struct vtrace_dat_cpustat *st);
int64_t vtrace_field_num(bool native, struct tep_format_field *field,
			 const struct tep_record *rec);
/*
 * A ring-buffer event's type is 16 bits (common_type): a format with a
 * larger ID (a damaged or hostile format file) names no event a page can
 * hold, and tables by event id stop there
 */
#define VTRACE_EVENT_ID_MAX	0xffff
int vtrace_event_id(struct tep_handle *tep, const char *sys, const char *name,
		    struct tep_event **evp);
struct tep_format_field *vtrace_event_field(struct tep_event *ev, const char *name);

/* dat-records.c: a host trace.dat's records, CPU by CPU (vtrace's page reader where it can) */
struct vtrace_dat_records;
struct vtrace_dat_records *vtrace_dat_records_open(const char *path);
struct tracecmd_input *vtrace_dat_records_handle(struct vtrace_dat_records *r);
struct tep_handle *vtrace_dat_records_tep(struct vtrace_dat_records *r);
int vtrace_dat_records_cpus(struct vtrace_dat_records *r);
int vtrace_dat_records_next(struct vtrace_dat_records *r, int cpu, struct tep_record **rec);
void vtrace_dat_records_close(struct vtrace_dat_records *r);

struct vtrace_cpu_reader *vtrace_cpu_reader_open(struct vtrace_dump *dump, unsigned int cpu);
void vtrace_cpu_reader_close(struct vtrace_cpu_reader *reader);
int vtrace_cpu_reader_next(struct vtrace_cpu_reader *reader, struct tep_record **record,
			   int *filler);
const struct vtrace_cpu_counts *vtrace_cpu_reader_counts(struct vtrace_cpu_reader *reader);

#endif /* _VTRACE_DUMP_H */
