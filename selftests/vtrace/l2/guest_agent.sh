#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: vtrace_guest driven by the host (agent mode): nobody touches debugfs here.
#   The host starts with events, stops, fuzzes ctl, then changes
#   buffer_size_kb as its "done" signal.
I=/sys/kernel/tracing/instances/vtrace
. /tests/lib.sh
waitfor() {	# waitfor SECONDS COMMAND...: poll until COMMAND succeeds
	s=$1
	shift
	i=0
	while [ $i -lt $((s * 10)) ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
enabled() { [ "$(cat $D/enable)" = "$1" ]; }
bufsize_changed() { [ "$(cat $I/buffer_size_kb)" != "$size0" ]; }

insmod /lib/vtrace/vtrace_guest.ko
t $? load
waitfor 120 enabled 1
t $? started_by_host
grep -q '^sched:sched_switch$' $I/set_event
t $? events_set_by_host
guest_markers "${1:-500}"
t $? markers_written
waitfor 120 enabled 0
t $? stopped_by_host
# read now: a new instance shows "7 (expanded: 1408)" until its first use
size0=$(cat $I/buffer_size_kb)
waitfor 120 bufsize_changed
t $? buffer_size_set_by_host
sed 's/^/vtg-status: /' $D/status
grep -q "^state: idle" $D/status
t $? status_answers
rmmod vtrace_guest
t $? unload
! ps | grep -q '[v]trace-'
t $? no_kthread_left
