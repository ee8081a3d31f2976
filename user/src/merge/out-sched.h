/* SPDX-License-Identifier: GPL-2.0 */
/* out-sched.h: scheduling slices from sched_switch, for the drawn outputs (perfetto, svg). */
#ifndef _OUT_SCHED_H
#define _OUT_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "merge-local.h"

#define SCHED_COMM_LEN	SW_COMM_LEN

/**
 * struct sched_slice - a task that ran on one CPU of one machine
 * @mi:		the machine's index in the tracker (order of first event)
 * @cpu:	its CPU
 * @pid:	the task (0: idle)
 * @comm:	its name
 * @from:	host ns it was switched in (or the CPU's first event)
 * @to:		host ns it was switched out (or the end of the trace)
 * @from_ambiguous: @from is the time of a guest sched_switch whose guest TSC
 *		two offset intervals map (printed "[time ambiguous]" in text)
 * @to_ambiguous: the same for @to
 */
struct sched_slice {
	int		mi;
	int		cpu;
	int		pid;
	const char	*comm;
	uint64_t	from;
	uint64_t	to;
	bool		from_ambiguous;
	bool		to_ambiguous;
};

/**
 * struct sched_ops - what a drawn output does with the stream
 * @slice:	a finished slice (idle ones included)
 * @instant:	any event that is not a sched_switch; @mi as in slices
 * @event:	every event, sched_switch too, before the tracker takes it
 */
struct sched_ops {
	void	(*slice)(void *priv, const struct sched_slice *sl);
	void	(*instant)(void *priv, int mi, struct source *s, uint64_t ns);
	void	(*event)(void *priv, int mi, struct source *s, uint64_t ns);
};

struct sched_tracker;

struct sched_tracker *sched_tracker_new(const struct merge_opts *opts,
					const struct sched_ops *ops, void *priv);
void sched_tracker_event(struct sched_tracker *t, struct source *s);
const char *sched_slice_ambiguous(const struct sched_slice *sl);
void sched_tracker_finish(struct sched_tracker *t);
void sched_tracker_free(struct sched_tracker *t);
int sched_tracker_machines(struct sched_tracker *t);
struct machine *sched_tracker_machine(struct sched_tracker *t, int mi);
uint64_t sched_tracker_first(struct sched_tracker *t);
uint64_t sched_tracker_last(struct sched_tracker *t);
int sched_vcpu_label(struct sched_tracker *t, int mi, int cpu, char *buf, size_t len);
int sched_guest_of_tid(struct sched_tracker *t, int tid, int *cpu);
int sched_vthread_idx(struct sched_tracker *t, int tid);
int sched_tracker_rank(struct sched_tracker *t, int mi);

/**
 * struct drawn - a writer output.c dispatches to (out-perfetto.c, out-svg.c)
 * @t:		its slices
 * @verdict:	where the self-check publishes its verdict at its end, NULL: none
 * @finish:	writes what it kept, after the last slice; 0 or -1
 * @free:	frees it
 */
struct drawn {
	struct sched_tracker	*t;
	const char *const	*verdict;
	int			(*finish)(struct drawn *d);
	void			(*free)(struct drawn *d);
};

struct drawn *perfetto_open(FILE *out, const struct merge_opts *opts);
struct drawn *svg_open(FILE *out, const struct merge_opts *opts);
void drawn_event(struct drawn *d, struct source *s);
int drawn_close(struct drawn *d);

#endif /* _OUT_SCHED_H */
