/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-tsc.h: KVM TSC offset histories and guest -> host TSC conversion. */
#ifndef _VTRACE_TSC_H
#define _VTRACE_TSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* kind column of the tsc_offsets file, and intervals the parser adds */
enum vtrace_tsc_kind {
	VTRACE_TSC_WRITE	= 0,
	VTRACE_TSC_SNAPSHOT	= 1,
	VTRACE_TSC_MULTIPLIER	= 2,
	VTRACE_TSC_ASSUMED	= 3,	/* before the first record: its prev_offset */
	VTRACE_TSC_CONSTANT	= 4,	/* given by the user for all time (offset=) */
};

/**
 * struct vtrace_tsc_interval - one offset in force for one vCPU
 * @host_tsc:	host TSC from which it applies (the write, or the snapshot)
 * @offset:	guest_tsc = ((host_tsc * @mult) >> @frac) + @offset (mod 2^64)
 * @mult:	TSC multiplier
 * @frac:	its fraction bits
 * @kind:	&enum vtrace_tsc_kind
 * @seq:	record number in the offsets file
 *
 * An interval of kind %VTRACE_TSC_ASSUMED is not in the file: it stands
 * for the time before a vCPU's first record, with that record's
 * prev_offset ("before the vCPU's first write record, its prev_offset was
 * in force", Documentation/vtrace_host.rst), from an unknown start.  It is
 * used only with --assume-constant-offset.
 */
struct vtrace_tsc_interval {
	uint64_t	host_tsc;
	uint64_t	offset;
	uint64_t	mult;
	uint32_t	frac;
	uint32_t	kind;
	uint64_t	seq;
};

/**
 * struct vtrace_vcpu_history - every interval of one vCPU, oldest first
 * @pid:	QEMU's pid
 * @vcpu_id:	KVM vcpu_id (the APIC id)
 * @serial:	vtrace_host's serial of the VM (its newest, where a process made
 *		two), 0 if none
 * @untracked:	some of its records have serial 0 (the VM found vtrace_host's
 *		table of VMs full)
 * @offsets:	the histories it is one of (vtrace_offsets_thread_pid())
 * @vm:		KVM's debugfs name of the VM
 * @vcpu_idx:	the vCPU's index in the VM (QEMU's "CPU N/KVM" thread), -1 unknown
 * @end_tsc:	host TSC after which nothing is known, 0 when not known
 * @end_why:	why: &enum vtrace_history_end
 * @start_why:	what its first interval stands on: &enum vtrace_history_start
 * @nr:		number of intervals
 * @iv:		the intervals
 */
struct vtrace_vcpu_history {
	int				pid;
	uint32_t			vcpu_id;
	uint32_t			serial;
	bool				untracked;
	struct vtrace_offsets		*offsets;
	char				vm[32];
	int				vcpu_idx;
	uint64_t			end_tsc;
	int				end_why;
	int				start_why;
	size_t				nr;
	struct vtrace_tsc_interval	*iv;
};

/**
 * enum vtrace_history_end - where an offsets file says its histories end
 * @VTRACE_END_READ:	at the host TSC of its "# end" line: the copy was read
 *			then, records after it are not in it
 * @VTRACE_END_DROPPED:	at the last record: vtrace_host dropped the ones after
 * @VTRACE_END_CUT:	at the last record: the file has no "# end" line (a copy
 *			cut short, or from a vtrace_host without the trailer)
 * @VTRACE_END_TRACE:	a history read from a trace's vtrace_host:tsc_offset
 *			events: at the trace's last event (the recording stopped)
 * @VTRACE_END_LOST:	a history read from a trace: where one of its CPUs lost
 *			events (any record after that instant may be missing)
 */
enum vtrace_history_end {
	VTRACE_END_READ		= 1,
	VTRACE_END_DROPPED	= 2,
	VTRACE_END_CUT		= 3,
	VTRACE_END_TRACE	= 4,
	VTRACE_END_LOST		= 5,
};

/**
 * enum vtrace_history_start - what a history's first interval stands on
 * @VTRACE_START_UNKNOWN:  a write with a non-zero prev_offset: what held
 *			before it is assumed (%VTRACE_TSC_ASSUMED), or nothing
 * @VTRACE_START_CREATION: a write from offset 0: the vCPU's creation
 * @VTRACE_START_LOAD:	   a snapshot taken when vtrace_host loaded
 * @VTRACE_START_ENABLE:   a snapshot taken when vtrace_host:tsc_offset was
 *			enabled in the trace's buffer: the VM existed before
 *			the recording; its first interval starts at that
 *			enable or at the trace's first event, the later
 */
enum vtrace_history_start {
	VTRACE_START_UNKNOWN	= 0,
	VTRACE_START_CREATION	= 1,
	VTRACE_START_LOAD	= 2,
	VTRACE_START_ENABLE	= 3,
};

/**
 * struct vtrace_offset_record - one vtrace_host record, whatever its source
 * @host_tsc:	host TSC of the write (or snapshot)
 * @prev_offset: offset before it (two's complement of KVM's signed value)
 * @offset:	offset after it
 * @mult:	TSC multiplier in force after it
 * @frac:	its fraction bits
 * @kind:	&enum vtrace_tsc_kind: write, snapshot or multiplier
 * @pid:	QEMU's pid
 * @vcpu_id:	KVM vcpu_id (the APIC id)
 * @vcpu_idx:	the vCPU's index in its VM, -1 while KVM creates it
 * @vm:		KVM's debugfs name of the VM, "?" for an anomaly
 * @serial:	vtrace_host's serial of the VM, 0 if none (or not recorded)
 * @cpu:	the host CPU that read @host_tsc, -1 if not recorded
 * @tid:	the thread that made the write (a trace event's common_pid), 0
 *		if not known
 * @seq:	its number: the file's seq, or its place in the trace (host_tsc order)
 * @since:	a snapshot of the trace event's enable: the host TSC of that
 *		enable; 0 otherwise (and in the tsc_offsets file)
 *
 * The fields of a tsc_offsets line and of a vtrace_host:tsc_offset event
 * (Documentation/vtrace_host.rst).
 */
struct vtrace_offset_record {
	uint64_t	host_tsc;
	uint64_t	prev_offset;
	uint64_t	offset;
	uint64_t	mult;
	uint32_t	frac;
	uint32_t	kind;
	int		pid;
	uint32_t	vcpu_id;
	int		vcpu_idx;
	char		vm[32];
	uint32_t	serial;
	int		cpu;
	int		tid;
	uint64_t	seq;
	uint64_t	since;
};

/**
 * struct vtrace_offsets_cut - where the host trace's lost events cut one vCPU's history
 * @pid, @vcpu_id: the vCPU
 * @tsc:	host TSC of @cpu's last event before its loss (1: before its first):
 *		a record of the vCPU may be missing after it, its history stops there
 * @cpu:	the host CPU that lost events, where the vCPU's thread may have run
 * @nr:		how many it lost (-1: not counted)
 */
struct vtrace_offsets_cut {
	int		pid;
	uint32_t	vcpu_id;
	uint64_t	tsc;
	int		cpu;
	long long	nr;
};

/**
 * struct vtrace_offsets_trace - where a history read from a trace is known
 * @end_tsc:	the trace's last time stamp (host TSC): every record before it
 *		is in the trace, unless a CPU lost events
 * @nr_gaps:	how many times its CPUs lost events (0: never)
 * @cuts:	the vCPUs whose records those losses may hide: each history
 *		stops at its cut (offsets-gaps.c), the others go on
 * @nr_cuts:	how many
 * @start_tsc:	the trace's first time stamp (host TSC)
 * @tsc_khz:	the host's TSC frequency its events carry, 0 if none does
 */
struct vtrace_offsets_trace {
	uint64_t			start_tsc;
	uint64_t			tsc_khz;
	uint64_t			end_tsc;
	size_t				nr_gaps;
	const struct vtrace_offsets_cut	*cuts;
	size_t				nr_cuts;
};

struct vtrace_offsets;

struct vtrace_offsets *vtrace_offsets_open(const char *path);
struct vtrace_offsets *vtrace_offsets_from_trace(const char *path,
						 const struct vtrace_offset_record *recs, size_t nr,
						 const struct vtrace_offsets_trace *trace);
void vtrace_offsets_close(struct vtrace_offsets *offsets);
const struct vtrace_vcpu_history *vtrace_offsets_vcpu(struct vtrace_offsets *offsets, int pid,
						      uint32_t vcpu_id);
int vtrace_offsets_has_pid(struct vtrace_offsets *offsets, int pid);
char *vtrace_offsets_pids(struct vtrace_offsets *offsets);
uint64_t vtrace_offsets_records(struct vtrace_offsets *offsets);
int vtrace_offsets_range(struct vtrace_offsets *offsets, uint64_t *first, uint64_t *last);
int vtrace_offsets_end(struct vtrace_offsets *offsets, uint64_t *end_tsc);
uint64_t vtrace_offsets_gaps(struct vtrace_offsets *offsets);
uint64_t vtrace_offsets_anomalies(struct vtrace_offsets *offsets);
uint64_t vtrace_offsets_tsc_khz(struct vtrace_offsets *offsets);
int vtrace_offsets_is_trace(struct vtrace_offsets *offsets);
int vtrace_offsets_version(struct vtrace_offsets *offsets);
int vtrace_offsets_thread_pid(const struct vtrace_offsets *offsets, int tid);
/* offsets-dat.c: the history in a host trace.dat's vtrace_host:tsc_offset events */
struct vtrace_offsets *vtrace_offsets_open_dat(const char *path, bool *found);
/* offsets-source.c: --offsets FILE, else the host trace.dat's events; why a guest has none */
struct vtrace_offsets *vtrace_offsets_load(const char *file, const char *host_dat,
					   const char **src, bool *found);
void vtrace_offsets_missing(const char *guest, const char *host_dat);
int vtrace_offsets_check_pid(struct vtrace_offsets *offsets, int pid, const char *guest,
			     const char *src);
const char *vtrace_history_start(const struct vtrace_vcpu_history *h, bool in_trace,
				 const char **key);
/* Comparisons made by the offsets file's sorts and searches so far (the tests count them) */
uint64_t vtrace_offsets_steps(void);

/* The conversion itself (exact, 128-bit) */
uint64_t vtrace_tsc_guest(const struct vtrace_tsc_interval *iv, uint64_t host_tsc);
int vtrace_tsc_host(const struct vtrace_tsc_interval *iv, uint64_t guest_tsc, uint64_t *host_tsc);
uint64_t vtrace_tsc_to_ns(uint64_t tsc, uint64_t khz);
uint64_t vtrace_ns_to_tsc(uint64_t ns, uint64_t khz);
/* The host TSC frequency: @arg a number of kHz or a file holding one (tsc_khz) */
int vtrace_tsc_khz_read(const char *arg, uint64_t *khz);
/* tsc_khz in @file's folder: 1 read, 0 none there, -1 a bad one */
int vtrace_tsc_khz_beside(const char *file, uint64_t *khz);

/**
 * struct vtrace_tsc_drop - a place where one CPU's guest TSC goes backwards
 * @index:	number of the event (from 0, in ring-buffer order) that reads less
 * @before:	guest TSC of the event before it
 * @after:	its guest TSC
 *
 * Found by a first pass over the CPU's pages (vtrace_tsc_map_set_drops()).
 */
struct vtrace_tsc_drop {
	uint64_t	index;
	uint64_t	before;
	uint64_t	after;
};

/**
 * struct vtrace_tsc_map - converts one guest CPU's events, in ring-buffer order
 * @hist:	its vCPU's history
 * @cur:	index of the interval the last event was in
 * @prev_guest:	guest TSC of the last event
 * @prev_host:	its host TSC
 * @started:	an event was converted
 * @assume_constant: map events before the first record with the first
 *		interval instead of failing
 * @first_used:	lowest interval index used
 * @last_used:	highest
 * @backwards:	events whose guest TSC was lower than the previous one
 * @extrapolated: events converted before the first record (or after the end)
 * @resynced:	events the forward rule left in an interval that maps them past
 *		the next write (moved on by the look-ahead, src/lib/tsc.c)
 * @past_end:	the last failure was an event after the history's end
 * @drops:	where the guest TSC goes backwards (NULL: not known)
 * @nr_drops:	their number
 * @next_drop:	the first drop not yet passed
 * @index:	number of events converted so far
 * @in_guest:	NULL, or tells whether the vCPU was in guest mode at a host TSC
 *		(1 yes, 0 no, -1 not known); set with vtrace_tsc_map_set_windows()
 * @in_guest_ctx: its first argument
 * @ambiguous:	events two intervals map inside themselves, not told apart
 *		(kept where the offsets alone put them)
 * @told_apart:	such events that @in_guest told apart
 * @moved:	of those, events it moved off the interval the offsets alone chose
 *
 * Init with vtrace_tsc_map_init(), then vtrace_tsc_map_event() per event.
 */
struct vtrace_tsc_map {
	const struct vtrace_vcpu_history	*hist;
	size_t					cur;
	uint64_t				prev_guest;
	uint64_t				prev_host;
	int					started;
	int					assume_constant;
	size_t					first_used;
	size_t					last_used;
	uint64_t				backwards;
	uint64_t				extrapolated;
	uint64_t				resynced;
	int					past_end;
	const struct vtrace_tsc_drop		*drops;
	size_t					nr_drops;
	size_t					next_drop;
	uint64_t				index;
	int					(*in_guest)(void *ctx, uint64_t host_tsc);
	void					*in_guest_ctx;
	uint64_t				ambiguous;
	uint64_t				told_apart;
	uint64_t				moved;
};

void vtrace_tsc_map_init(struct vtrace_tsc_map *map, const struct vtrace_vcpu_history *hist,
			 int assume_constant);
int vtrace_tsc_map_event(struct vtrace_tsc_map *map, uint64_t guest_tsc, uint64_t *host_tsc);
void vtrace_tsc_map_refused(const struct vtrace_tsc_map *map, const char *guest, int cpu,
			    const char *path, uint64_t guest_tsc, uint64_t at);
const struct vtrace_tsc_interval *vtrace_tsc_history_first(const struct vtrace_vcpu_history *h);
int vtrace_tsc_map_needs_drops(const struct vtrace_tsc_map *map);
void vtrace_tsc_map_set_drops(struct vtrace_tsc_map *map, const struct vtrace_tsc_drop *drops,
			      size_t nr);
void vtrace_tsc_map_set_windows(struct vtrace_tsc_map *map,
				int (*in_guest)(void *ctx, uint64_t host_tsc), void *ctx);

#endif /* _VTRACE_TSC_H */
