#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: vtrace_guest driven by the host (agent mode): nobody touches debugfs here.
#   The host starts with events, stops, fuzzes ctl, then changes
#   buffer_size_kb as its "done" signal.
I=/sys/kernel/tracing/instances/vtrace
. /tests/lib.sh
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

# A slow host (selftests/vtrace/guest_slow_host.py) sets buffer_size_kb to
# CUE, then reads slowly: about 32 KiB a second (CUE 1536), then, a second
# host, 1 byte a second (CUE 1024).  A start from here must fail within its
# metadata's deadline (5 x port_timeout_ms: 10 s; 14 s with the bed's
# slack), with "Connection timed out", and status must stay readable
# meanwhile: each read, under a 5 s timeout, done within 3 s.
# (buffer_size_kb reads back rounded to whole ring-buffer pages: 1537)
bufsize_near() { v=$(cat $I/buffer_size_kb); [ "${v%% *}" -ge $(($1 - 16)) ] && [ "${v%% *}" -le $(($1 + 16)) ]; }
up() { cut -d' ' -f1 /proc/uptime | tr -d .; }	# centiseconds
slow_start() {	# slow_start CUE NAME: one slow host's three results
	waitfor 120 bufsize_near "$1"
	t $? "${2}_connected"
	# a first session fills what sits between guest and host (4 MiB of the
	# port's virtqueue, QEMU's socket buffer): kallsyms alone is about that
	echo "vtg-status: $2: /proc/kallsyms: $(wc -c < /proc/kallsyms) bytes"
	t0=$(up)
	echo 1 > $D/enable 2> /dev/null && echo 0 > $D/enable
	echo "vtg-status: $2: first session: exit $? after $((($(up) - t0) * 10)) ms"
	rm -f /tmp/start.rc /tmp/st.busy
	t0=$(up)
	( echo 1 > $D/enable 2> /tmp/start.err; echo "$? $(up)" > /tmp/start.rc ) &
	smax=0 busy=0 reads=0 src=0
	while [ ! -s /tmp/start.rc ] && [ $(($(up) - t0)) -lt 9000 ]; do
		s0=$(up)
		timeout 5 cat $D/status > /tmp/st || src=1
		s1=$(up)
		[ $((s1 - s0)) -gt $smax ] && smax=$((s1 - s0))
		grep -q '^control thread: busy' /tmp/st && busy=$((busy + 1)) && cp /tmp/st /tmp/st.busy
		reads=$((reads + 1))
		sleep 0.5
	done
	wait
	read -r rc tend < /tmp/start.rc
	echo "vtg-status: $2: start: exit $rc after $(((tend - t0) * 10)) ms: $(cat /tmp/start.err)"
	echo "vtg-status: $2: $reads status reads meanwhile, longest $((smax * 10)) ms, $busy said busy:"
	[ -f /tmp/st.busy ] && sed 's/^/vtg-status:   /' /tmp/st.busy
	[ "$rc" != 0 ] && [ $((tend - t0)) -le 1400 ] && grep -qi 'timed out' /tmp/start.err
	t $? "${2}_start_fails_in_time"
	# the start failed after it applied the host's selection: nothing stays armed
	echo "vtg-status: $2: after it: set_event '$(cat $I/set_event)', tracing_on $(cat $I/tracing_on)"
	[ "$rc" != 0 ] && [ -z "$(cat $I/set_event)" ] && [ "$(cat $I/tracing_on)" = 0 ]
	t $? "${2}_failed_start_disarmed"
	[ $reads -ge 2 ] && [ $src -eq 0 ] && [ $smax -le 300 ] && [ $busy -ge 1 ]
	t $? "status_readable_during_${2}_start"
	grep -q '^state: idle' $D/status || echo 0 > $D/enable
}
slow_start 1536 slow_host
slow_start 1024 byte_host
sed 's/^/vtg-status: /' $D/status
grep -q "^state: idle" $D/status
t $? status_answers
rmmod vtrace_guest
t $? unload
! ps | grep -q '[v]trace-'
t $? no_kthread_left
