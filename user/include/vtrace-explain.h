/* SPDX-License-Identifier: LGPL-2.1 */
/* vtrace-merge --explain: find the worst guest wake-up and the host tasks that caused it. */
#ifndef _VTRACE_EXPLAIN_H
#define _VTRACE_EXPLAIN_H

#include <stdio.h>
#include <event-parse.h>

/**
 * struct vtrace_xev - one merged event, as the explainer sees it
 * @machine:	index of the machine (0 = host, 1.. = guests in command-line order)
 * @name:	machine name ("host" or the guest's name)
 * @cpu:	CPU of the machine the event was recorded on
 * @host_ns:	event time on the host timeline, in ns
 * @tep:	the machine's tep handle
 * @event:	the event's format (NULL when unknown)
 * @record:	the raw record
 */
struct vtrace_xev {
	int			machine;
	const char		*name;
	int			cpu;
	unsigned long long	host_ns;
	struct tep_handle	*tep;
	struct tep_event	*event;
	struct tep_record	*record;
};

struct vtrace_explain;

/*
 * Two passes over the merged stream:
 *   1. vtrace_explain_scan() on every event: guest timer wake-ups are
 *      measured, the worst one (of @task, when given) is kept;
 *   2. vtrace_explain_gap() on every event within vtrace_explain_window():
 *      what the host ran while the woken task waited;
 * then vtrace_explain_report().
 */
struct vtrace_explain *vtrace_explain_alloc(const char *task);
void vtrace_explain_free(struct vtrace_explain *ex);
void vtrace_explain_scan(struct vtrace_explain *ex, const struct vtrace_xev *ev);
int vtrace_explain_window(struct vtrace_explain *ex, unsigned long long *from,
			  unsigned long long *to);
int vtrace_explain_timeline(struct vtrace_explain *ex, unsigned long long *from,
			    unsigned long long *to);
void vtrace_explain_gap(struct vtrace_explain *ex, const struct vtrace_xev *ev);
int vtrace_explain_report(struct vtrace_explain *ex, FILE *out);

#endif /* _VTRACE_EXPLAIN_H */
