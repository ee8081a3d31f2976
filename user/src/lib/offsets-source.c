// SPDX-License-Identifier: GPL-2.0
/* offsets-source.c: where vtrace-merge's and vtrace dat's offset history comes from. */
/*
 * Both commands put a guest's TSC on the host's with the same history,
 * found the same way:
 *
 *   --offsets FILE     vtrace_host's tsc_offsets file (offsets.c)
 *   else the host's    its vtrace_host:tsc_offset events: the snapshot of
 *   trace.dat          every vCPU when the recording began and every write
 *                      after it (offsets-dat.c)
 *
 * and refuse a guest the same way when neither has its VM: the file or
 * trace read, what is missing from it, how to record it.
 */
#include <stdlib.h>

#include "vtrace-tsc.h"
#include "vtrace-util.h"

/**
 * vtrace_offsets_load - the offset history of a merge or a vtrace dat
 * @file:	--offsets FILE, or NULL
 * @host_dat:	the host's trace.dat, or NULL (none given, or a dump folder)
 * @src:	set to the path the history was read from
 * @found:	false when neither @file nor @host_dat has a history (not an
 *		error for vtrace-merge's guests with offset=N)
 *
 * Return: the histories, or NULL (with the error set when *@found).
 */
struct vtrace_offsets *vtrace_offsets_load(const char *file, const char *host_dat,
					   const char **src, bool *found)
{
	struct vtrace_offsets *o;

	*src = NULL;
	*found = true;
	if (file) {
		o = vtrace_offsets_open(file);
		*src = o ? file : NULL;
		return o;
	}
	*found = false;
	if (!host_dat)
		return NULL;
	o = vtrace_offsets_open_dat(host_dat, found);
	*src = o ? host_dat : NULL;
	return o;
}

/* Why guest @guest has no history: @host_dat (or none) had no vtrace_host events, no --offsets */
void vtrace_offsets_missing(const char *guest, const char *host_dat)
{
	if (host_dat)
		vtrace_set_error("guest %s: no offset history: %s has no vtrace_host:tsc_offset"
				 " events and no --offsets file was given: record the host with"
				 " trace-cmd record -C x86-tsc -e vtrace_host (vtrace_host loaded), or"
				 " give --offsets with vtrace_host's tsc_offsets file", guest,
				 host_dat);
	else
		vtrace_set_error("guest %s: no offset history: no --offsets file and no host"
				 " trace.dat to read vtrace_host:tsc_offset events from: give --host"
				 " with the host's trace.dat (trace-cmd record -C x86-tsc -e"
				 " vtrace_host), or --offsets with vtrace_host's tsc_offsets file",
				 guest);
}

/* 0: @o has records of pid @pid, -1 with the error set: @src is where @o was read */
int vtrace_offsets_check_pid(struct vtrace_offsets *o, int pid, const char *guest,
			     const char *src)
{
	char *pids;

	if (vtrace_offsets_has_pid(o, pid))
		return 0;
	pids = vtrace_offsets_pids(o);
	if (vtrace_offsets_is_trace(o))
		vtrace_set_error("guest %s: pid %d has no vtrace_host:tsc_offset event in the host"
				 " trace %s (pids there: %s): its VM wrote its offsets before the"
				 " recording and the trace has no snapshot of them (a vtrace_host"
				 " without snapshots at enable, or enable_snapshots_missed in"
				 " /sys/kernel/debug/vtrace/stats: the trace did not record within 60 s"
				 " of its enable, or filtered the event: a pid filter, trace-cmd record"
				 " -P, counted in enable_snapshots_pid_filtered, also drops the writes of"
				 " the vCPU threads outside it); record again without -P with this"
				 " vtrace_host loaded, or give --offsets with its tsc_offsets file",
				 guest, pid, src, pids ? pids : "?");
	else
		vtrace_set_error("guest %s: pid %d has no records in the offsets file %s (pids"
				 " there: %s)", guest, pid, src, pids ? pids : "?");
	free(pids);
	return -1;
}

/**
 * vtrace_history_start - what the alignment of a vCPU's earliest events rests on
 * @h:		the vCPU's history
 * @in_trace:	@h was read from a host trace's events, not an offsets file
 * @key:	set to a word for machine-readable output
 *
 * One wording for the self-check, --explain and their JSON.  Return: the
 * words, from "offset history from ..." on.
 */
const char *vtrace_history_start(const struct vtrace_vcpu_history *h, bool in_trace,
				 const char **key)
{
	switch (h->start_why) {
	case VTRACE_START_ENABLE:
		*key = "recording_start_snapshot";
		return "the snapshot taken when the recording began: the VM existed before it";
	case VTRACE_START_CREATION:
		*key = in_trace ? "created_during_recording" : "file_creation";
		return in_trace ? "the VM's creation during the recording: whole from its start" :
		       "the offsets file, from the VM's creation: whole from its start";
	case VTRACE_START_LOAD:
		*key = "file_load_snapshot";
		return "the offsets file, from the snapshot taken when vtrace_host loaded: the VM"
		       " existed before it";
	default:
		*key = in_trace ? "unknown" : "file_unknown";
		return in_trace ? "a first write whose previous offset was not recorded: what held"
		       " before it is assumed" : "the offsets file, from a first write whose"
		       " previous offset was not recorded: what held before it is assumed";
	}
}
