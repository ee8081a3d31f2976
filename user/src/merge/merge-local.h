/* SPDX-License-Identifier: GPL-2.0 */
/* merge-local.h: vtrace-merge's private types (machines, CPU sources, passes, options). */
/*
 * The layers, each calling only those below it (scripts/check-layers.sh):
 *
 *   main.c         composes the passes of a run and calls merge_run()
 *   passes         check.c, ticks.c, explain.c (over classify*.c, timerpath.c), output.c
 *                  (out-perfetto.c, out-svg.c over out-sched.c): each a
 *                  struct merge_pass the engine feeds
 *   engine         merge.c (the k-way merge), machine.c (the sources),
 *                  symbols.c
 *   src/lib        dumps, trace.dat, offsets, TSC conversion, vCPU threads
 *
 * What one pass learns that another needs is published as data: the
 * self-check's fit of each guest CPU to its vCPU thread (source->fit), its
 * verdict (a string the output pass reads at its end), each host cpu's tick
 * (struct host_ticks, which the classifier reads).
 */
#ifndef _MERGE_LOCAL_H
#define _MERGE_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vtrace-dump.h"
#include "vtrace-kvm.h"
#include "vtrace-tsc.h"

struct tep_handle;
struct tep_format_field;
struct tep_record;
struct trace_seq;
struct tracecmd_input;
struct source;
struct check;
struct vtrace_vcpu_fit;

enum merge_format {
	MERGE_TEXT,
	MERGE_JSONL,
	MERGE_PERFETTO,		/* out-perfetto.c */
	MERGE_SVG,		/* out-svg.c */
};

/**
 * struct merge_opts - the command line
 * @khz:	host TSC frequency (0: unknown, only --raw-tsc output)
 * @from_ns:	first host time printed (--from)
 * @to_ns:	last host time printed (--to)
 * @machines:	names given with --machine (NULL-terminated), NULL for all
 * @events:	--event specs, "name" or "system:name" (NULL-terminated)
 */
struct merge_opts {
	enum merge_format	format;
	bool			raw_tsc;
	bool			stats;
	bool			progress;
	bool			assume_constant;
	bool			skip_bad;
	bool			force;		/* --force: a failed self-check is not an error */
	uint64_t		khz;
	uint64_t		from_ns;
	uint64_t		to_ns;
	char			**machines;
	char			**events;
	const char		*task;
	int			*tids;		/* --tid: these guest threads only */
	int			nr_tids;
	bool			explain;
	const char		*host_dat;	/* the host trace.dat read for offsets, or NULL */
	const char		*offsets_src;	/* where the offset history was read */
	bool			offsets_in_trace;	/* from the host trace's events */
	uint64_t		threshold_ns;	/* --explain: later than this is late */
	int			worst;		/* --explain: stories of the worst N */
	char			*explain_text;	/* --explain --format svg: its text; perfetto: jsonl */
	const struct vtrace_capture *capture;	/* vtrace-merge CAPTURE: its manifest, or NULL */
};

struct machine;
struct source;
struct vtrace_capture;

#define SW_COMM_LEN	16	/* sched_switch's comms: TASK_COMM_LEN - 1 */

/**
 * struct sched_switch - a sched:sched_switch event, decoded once by the engine
 * @next_prio:	INT_MIN when the event has no next_prio
 * @prev_state:	0 when it has no prev_state
 *
 * Every pass that follows which task runs on which CPU (the classifier,
 * explain, the tick measure, the timer path, the drawn outputs) reads it
 * from source->sw rather than decoding the event itself.
 */
struct sched_switch {
	int		prev_pid;
	int		next_pid;
	int		next_prio;
	int64_t		prev_state;
	char		prev_comm[SW_COMM_LEN + 1];
	char		next_comm[SW_COMM_LEN + 1];
};

/* A machine's sched_switch fields (machine.c), looked up at its first event decoded */
struct switch_fields {
	bool			looked;
	bool			native;
	int			id;	/* -1: none, or without prev_pid/next_pid */
	struct tep_format_field	*prev_pid, *prev_comm, *prev_state;
	struct tep_format_field	*next_pid, *next_comm, *next_prio;
};

/**
 * struct source - one CPU of one machine: its head event, in the merge heap
 * @rec:	head event (raw ts: the machine's own TSC)
 * @host_tsc:	@rec's time on the host's TSC
 * @map:	guest -> host conversion state (guests only)
 * @reader:	page reader (dump folders, the host's trace.dat)
 * @fit:	a guest CPU's fit to the host's vCPU threads, published by the self-check
 *		(check.c) for the passes that need the vCPU thread (vtrace_vcpu_fit_tid());
 *		NULL: no self-check
 * @sw:		@rec decoded when it is a sched_switch (source_decode(), for the
 *		events the passes are fed), else NULL
 */
struct source {
	struct machine			*m;
	int				cpu;
	struct tep_record		*rec;
	uint64_t			host_tsc;
	struct vtrace_tsc_map		map;
	struct vtrace_cpu_reader	*reader;
	struct vtrace_vcpu_fit		*fit;
	const struct sched_switch	*sw;
	struct sched_switch		sw_ev;
	/* counters for --stats */
	uint64_t			read;
	uint64_t			printed;
	uint64_t			fillers;
	int64_t				lost;	/* events lost before @rec: > 0 counted, -1 not */
	uint64_t			lost_counted;	/* of them, counted in page headers */
	uint32_t			lost_uncounted;	/* pages flagging one, no count */
	uint64_t			first_ns;
	uint64_t			last_ns;
	uint64_t			first_tsc;
	uint64_t			last_tsc;
	uint64_t			out_of_order;
	bool				warned;
	bool				at_end;		/* read to its end */
	uint64_t			stat_events;	/* trace-cmd's count at its stop, 0: none */
	bool				ambiguous;	/* @rec's time: two intervals, not told apart */
	struct vtrace_tsc_drop		*drops;
};

/**
 * struct machine - the host or one guest
 * @name:	"host" or the guest's NAME
 * @index:	place on the command line: the host 0, then the guests in --guest
 *		order (breaks ties between machines in the merge)
 * @guest:	converts through offsets (else its TSC is the host's)
 * @selected:	passes --machine
 * @event_ok:	per event id: passes --event (NULL: all pass)
 */
struct machine {
	char			*name;
	char			*path;
	int			index;
	bool			guest;
	bool			selected;
	int			pid;
	struct vtrace_dump	*dump;
	struct vtrace_dump	*dat_pages;	/* the host's trace.dat, read page by page */
	struct tep_handle	*tep;
	int			nr_cpus;
	struct source		*cpus;
	unsigned char		*event_ok;
	int			max_id;
	const char		*vmlinux;
	void			*symbols;
	bool			has_offset;	/* --guest ...,offset=N */
	int64_t			offset;
	struct vtrace_vcpu_history	*const_hist;
	struct vtrace_tsc_interval	*const_iv;
	struct switch_fields	sw;
};

/**
 * struct merge_pass - one consumer of the merged stream (merge_run())
 * @read:	every event a source reads, once on the host's TSC: fillers, events
 *		outside --from/--to, of machines or events not selected too (the
 *		self-check); NULL: none
 * @event:	every event of a selected machine within --from..--to, in the merged
 *		order; returns true to stop the merge there; NULL: none
 * @end:	after the last event, or after an error (@failed); 0, or -1 with an
 *		error set; NULL: none
 * @priv:	the pass's own state, handed to each
 *
 * The passes of a run are called in the order given, for each event and at
 * the end: one that publishes what another reads at its end comes first.
 */
struct merge_pass {
	void	(*read)(void *priv, struct source *s);
	bool	(*event)(void *priv, struct source *s, uint64_t ns);
	int	(*end)(void *priv, bool failed);
	void	*priv;
};

/* merge.c: the engine */
int merge_run(struct machine **machines, int nr, const struct merge_opts *opts,
	      const struct merge_pass *passes, int nr_passes);

/* machine.c: the sources */
struct machine *machine_open_host(const char *path, const struct merge_opts *opts);
struct machine *machine_open_guest(const char *spec, const struct merge_opts *opts);
void machine_close(struct machine *m);
int machine_bind_offsets(struct machine *m, struct vtrace_offsets *offsets,
			 const struct merge_opts *opts);
int machine_select(struct machine *m, const struct merge_opts *opts);
bool machine_vm_matches(struct machine *m, struct vtrace_offsets *offsets, int pid);
int source_advance(struct source *s, const struct merge_pass *readers, int nr_readers);
void source_decode(struct source *s);

/* guest-vm.c: a guest's VM, when nothing names it, by the fit of its events */
/**
 * struct guest_vm - the VM chosen for a guest, kept for the inputs opened again
 * @pid:	0 until chosen
 * @note:	the line that said why (malloc'd), said again each time it is used
 * @warn:	@note is a warning: the host trace could not confirm the VM
 */
struct guest_vm {
	int	pid;
	char	*note;
	bool	warn;
};
bool guest_vm_needed(struct machine **machines, int nr, struct vtrace_offsets *offsets);
int guest_vm_choose(struct machine **machines, int nr, struct vtrace_offsets *offsets,
		    const struct merge_opts *opts, struct guest_vm *vm);

/* check.c: the self-check */
struct check *check_open(struct machine **machines, int nr, const struct merge_opts *opts);
void check_close(struct check *c);
struct merge_pass check_pass(struct check *c, const char **verdict);
int check_report(const struct check *c, FILE *f, bool force);
const char *check_verdict(const struct check *c, char *buf, size_t len);
void check_stats(const struct check *c, FILE *f, bool json);
int check_offsets(const struct check *c, struct vtrace_offsets *o, const char *path);
bool check_may_be_ambiguous(struct machine **machines, int nr);
void check_explain_report(const struct check *c, FILE *f, bool json);

/* output.c: the events printed or drawn, and --stats */
struct output;
struct output *output_open(FILE *out, const struct merge_opts *opts, int name_width,
			   struct machine **machines, int nr, const char *const *verdict);
struct merge_pass output_pass(struct output *o);
void output_jsonl_verdict(FILE *out, const char *verdict);
void output_close(struct output *o);
void output_event(struct output *o, struct source *s, uint64_t ns);
/**
 * struct output_stats - --stats: per machine and CPU counters, printed at the end
 */
struct output_stats {
	FILE			*out;
	struct machine		**machines;
	int			nr;
	const struct merge_opts	*opts;
};
struct merge_pass output_stats_pass(struct output_stats *st);

/**
 * struct host_tick - what the tick measure (ticks.c) found on one host cpu
 * @median:	its tick: the median interval between local_timer_entry events while busy
 * @intervals:	the busy intervals @median rests on
 * @ticks:	local_timer_entry events read
 * @quiet_ns:	a silence this long is the host not running; 0: not told apart (@why)
 * @why:	why its silences are not told apart ("no tick recorded"), NULL: they are
 * @why_key:	@why's key in jsonl ("no_tick"), "" when they are told apart
 */
struct host_tick {
	uint64_t	median;
	int		intervals;
	uint64_t	ticks;
	uint64_t	quiet_ns;
	const char	*why;
	const char	*why_key;
};

/* Each host cpu's tick, published by the tick measure's pass for the classifier */
struct host_ticks {
	int		nr_cpus;
	struct host_tick *cpu;
};

/* explain.c: --explain's two passes, the late wake-ups and the stories of the worst */
struct explain;
#define EXPLAIN_THRESHOLD_NS	100000	/* --threshold's default: 100 us */
#define EXPLAIN_WORST		3	/* --worst's default */
int explain_parse_duration(const char *arg, uint64_t *ns);
struct explain *explain_open(struct machine **machines, int nr, const struct merge_opts *opts,
			     const struct host_ticks *ticks);
struct merge_pass explain_pass(struct explain *x);
int explain_summary(struct explain *x, FILE *out);
int explain_story_open(struct explain *x, struct machine **machines, int nr, int rank,
		       uint64_t *to_ns);
struct merge_pass explain_story_pass(struct explain *x);
int explain_story_close(struct explain *x, FILE *out, bool failed);
void explain_free(struct explain *x);

/* timerpath.c: a late wake-up's way from the guest timer's due time to the task */
enum tp_seg { TP_HOST_TIMER, TP_TO_ENTRY, TP_GUEST_IRQ, TP_GUEST, TP_SEGS };
enum tp_state { TP_NO_FIRE, TP_NO_ENTRY, TP_NO_TICK, TP_KNOWN };
struct late_path {
	int		state;		/* enum tp_state */
	int		fire_cpu;	/* the host cpu KVM's timer fired on */
	int		fire_pid;	/* the task it interrupted there, 0: idle */
	char		fire_comm[17];
	uint64_t	fired;		/* host ns: KVM's timer fired (or the expected time) */
	uint64_t	entry;		/* the vCPU entered guest mode */
	uint64_t	irq;		/* the guest's local_timer_entry (TP_KNOWN) */
	uint64_t	seg[TP_SEGS];	/* ns */
	uint64_t	off[TP_SEGS];	/* of them, the vCPU thread off its host cpu */
};
struct timerpath;
struct timerpath *timerpath_open(struct machine **machines, int nr);
void timerpath_close(struct timerpath *t);
void timerpath_event(struct timerpath *t, struct source *s, int mi, uint64_t ns);
void timerpath_wakeup(struct timerpath *t, int mi, int cpu, int vtid, int group,
		      uint64_t expected, uint64_t running, struct late_path *p);
void timerpath_select(struct timerpath *t, int group);
void timerpath_print(struct timerpath *t, FILE *out, bool jsonl);
void timerpath_print_late(struct timerpath *t, FILE *out, const struct late_path *p);
void timerpath_json_late(struct timerpath *t, FILE *out, const struct late_path *p);

/* classify.c: a late wake-up's window cut into causes */
enum cause_kind {
	C_HOST_TASK, C_HOST_IRQ, C_HOST_SOFTIRQ, C_HOST_IDLE, C_HOST_NOT_RUNNING, C_VCPU_BLOCKED,
	C_VCPU_RUNNING, C_VCPU_EXIT, C_VCPU_GUEST, C_GUEST_IRQ, C_GUEST_SOFTIRQ, C_GUEST_TASK,
	C_GUEST_SELF, C_UNKNOWN, C_VCPU_UNKNOWN, C_EVENTS_LOST, C_OTHER,
	/* a state (host idle, guest mode) told by the timer's path (timerpath.c) */
	C_PATH_HOST_TIMER, C_PATH_TO_ENTRY, C_PATH_GUEST_IRQ, C_PATH_GUEST,
};
/* a vCPU's mode (kvm_entry/kvm_exit): not known, guest mode, or reason r + 1 */
#define X_UNKNOWN	(-1)
#define X_GUEST		0
#define MAX_REASONS	VTRACE_KVM_EXITS	/* exit reasons named (src/lib/kvm-exit.c) */
#define X_STATES	(MAX_REASONS + 2)
#define LATE_PARTS	32	/* causes kept per wake-up: the last holds all past it (C_OTHER) */
#define LATE_EXITS	12
#define LATE_HOSTS	4	/* host cpus a window follows its vCPU thread to: the rest merged */
#define LATE_LOST	(LATE_HOSTS + 1)	/* the rings a window rests on: its host cpus', its guest cpu's */
struct late_parts {
	int		nr;
	int		host_cpu;	/* the vCPU thread's at the expected time, -1 unknown */
	int		vcpu_tid;
	int		nr_hosts;	/* the host cpus it ran on in the window, in order */
	struct late_host {
		int		cpu;
		uint64_t	from;	/* switched in there (the first: the expected time) */
	}		hosts[LATE_HOSTS];
	struct late_part {
		int		cause;	/* classify's cause index */
		uint64_t	ns;
	}		part[LATE_PARTS];	/* the main cause first */
	bool		exits;		/* the host recorded this vCPU thread's entries and exits */
	int		nr_modes;
	struct late_mode {
		int		state;	/* X_UNKNOWN, X_GUEST, reason + 1 */
		uint32_t	count;	/* exits (guest mode: entries) in the window */
		uint64_t	ns;	/* time in the window */
		uint64_t	max;	/* the longest single one, inside the window */
	}		mode[LATE_EXITS];	/* most time first */
	int		nr_lost;	/* rings that lost events where the window rests: C_EVENTS_LOST */
	struct late_lost {
		int		mi;	/* the machine (classify's index) */
		int		cpu;
		uint32_t	losses;	/* that meet the window */
		uint64_t	events;	/* lost in them, as far as counted */
		uint32_t	uncounted;	/* of them without a count (or past LOST_RING) */
		uint64_t	from;	/* the last event before the first of them */
		uint64_t	to;	/* the first event after the last, UINT64_MAX: not merged yet */
	}		lost[LATE_LOST];
};
struct classify;
struct classify *classify_open(struct machine **machines, int nr,
			       const struct host_ticks *ticks);
void classify_close(struct classify *c);
void classify_event(struct classify *c, struct source *s, int mi, uint64_t ns);
void classify_wakeup(struct classify *c, struct source *s, int mi, int pid, int vtid,
		     int group, uint64_t expected, uint64_t running,
		     const struct late_path *path, struct late_parts *p);
void classify_select(struct classify *c, int group);
void classify_cause_text(struct classify *c, int ci, char *buf, size_t len);
void classify_key_text(const char *key, const char *task, char *buf, size_t len);
const char *classify_cause_key(struct classify *c, int ci, const char **task);
int classify_print(struct classify *c, FILE *out, bool jsonl, const char *what,
		   uint64_t threshold, uint64_t wakeups, const char *json_more);
const char *classify_mode_name(struct classify *c, int state);
void classify_print_modes(struct classify *c, FILE *out, const struct late_parts *p);
void classify_json_modes(struct classify *c, FILE *out, const struct late_parts *p);
void classify_print_lost(FILE *out, const struct late_parts *p, struct machine **machines);
void classify_json_lost(FILE *out, const struct late_parts *p, struct machine **machines);

/* ticks.c: each host cpu's tick, from the host trace's first local_timer_entry events */
#define QUIET_TICKS	3		/* a silence of this many ticks: the host not running */
#define QUIET_MIN_NS	3000000		/* and at least this long: 3 ticks at HZ 1000 */
struct ticks;
struct ticks *ticks_open(struct machine **machines, int nr, bool *err);
struct merge_pass ticks_pass(struct ticks *t);
const struct host_ticks *ticks_result(const struct ticks *t);
void ticks_free(struct ticks *t);

/* main.c: the command line, exit status as returned */
int vtrace_merge_main(int argc, char **argv);

/* symbols.c */
int symbols_attach(struct machine *m, const char *vmlinux);
void symbols_detach(struct machine *m);

#endif /* _MERGE_LOCAL_H */
