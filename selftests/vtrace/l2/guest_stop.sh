#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: a stop, and an rmmod, while the host reads cpu0's port slowly end by the stop's deadline (what is left counts as lost); a failed start arms nothing; a stop says what it could not turn off.
#   cpu0's port is a socket the suite reads at 192 KiB a second: each 64 KiB
#   virtio buffer is taken well within port_timeout_ms (1000), so nothing but
#   the stop's own deadline (3 x port_timeout_ms, EOS within one more) ends a
#   stop that has a full 4 MiB ring to drain: within 7.5 s here, the 4 s and
#   the tracefs reads and writes of a stop in the nested bed (up to 2 s on
#   6.12).
I=/sys/kernel/tracing/instances/vtrace
. /tests/lib.sh

uptime_s() { cut -d' ' -f1 /proc/uptime; }
# markers WHAT: 20000 markers of 248 bytes on cpu0 (5 MiB: the ring, the
# virtqueue and the socket full), "vtg-gen S: written=N" for the host
markers() {
	MARK_WIDTH=200 guest_markers 20000 0 > /tmp/markers.out
	t $? "$1_markers_written"
	echo "vtg-gen $(sed -n 's/^session: //p' $D/status): $(sed -n 's/^markers cpu=0 //p' /tmp/markers.out)"
}

# the bed's guest kernels detect hung tasks; a stop the host stretches shows
# (without its deadline: 23 s, and rmmod waits for it uninterruptibly)
echo 10 > /proc/sys/kernel/hung_task_timeout_secs
t $? hung_task_timeout_10s
insmod /lib/vtrace/vtrace_guest.ko port_timeout_ms=1000 send_kallsyms=0
t $? load
echo 4096 > $I/per_cpu/cpu0/buffer_size_kb
t $? cpu0_ring_4mib

# A status read allocates for each file about what the file holds, not the
# 128 KiB bounce buffer and more: the control thread's kvmalloc()s while it
# reads every CPU's stats, seen by a kprobe (6.12 names the function
# __kvmalloc_node_noprof).
K=/sys/kernel/tracing
KP=$K/instances/vtg-kp/events/kprobes/vtg_kvmalloc
kp=
for f in kvmalloc_node __kvmalloc_node_noprof; do
	echo "p:vtg_kvmalloc $f size=%di:u64" >> $K/kprobe_events 2> /dev/null && kp=$f && break
done
if [ -n "$kp" ] && mkdir $K/instances/vtg-kp && echo 'comm == "vtrace-ctl"' > $KP/filter &&
	echo 1 > $KP/enable; then
	cat $D/status > /dev/null
	echo 0 > $KP/enable
	sizes=$(sed -n 's/.*vtg_kvmalloc: .*size=\([0-9]*\).*/\1/p' $K/instances/vtg-kp/trace | sort -n)
	count=$(echo "$sizes" | grep -c .) max=$(echo "$sizes" | tail -1)
	echo "vtg: # a status read: $count kvmalloc()s ($kp) by the control thread, the largest ${max:-none} bytes"
	[ "$count" -ge 2 ] && [ "${max:-0}" -le 4096 ]
	t $? status_read_buffers_sized_to_files
	rmdir $K/instances/vtg-kp
	echo "-:vtg_kvmalloc" >> $K/kprobe_events
else
	n=$((n + 1))
	echo "vtg: ok $n status_read_buffers_sized_to_files # SKIP no kprobe on kvmalloc_node"
fi

# session 1: echo 0 > enable
echo 1 > $D/enable
t $? enable
markers slow_stop
u0=$(uptime_s)
echo 0 > $D/enable
rc=$?
u1=$(uptime_s)
t $rc slow_stop_returns_0
secs=$(awk "BEGIN { print $u1 - $u0 }")
echo "vtg-perf: stop with a slow host: $secs s"
awk "BEGIN { exit !($secs < 7.5) }"
t $? slow_stop_within_deadline
sed 's/^/vtg-status 1: /' $D/status
left=$(dmesg | sed -n 's/.*cpu0: \([0-9]*\) events left unread in the ring, counted lost.*/\1/p' |
	tail -1)
echo "vtg: # left unread: ${left:-none}; ring entries now: $(sed -n 's/^entries: //p' $I/per_cpu/cpu0/stats)"
dmesg | grep -q "cpu0: the host did not take the ring's pages by the stop's deadline" &&
	[ "${left:-0}" -gt 0 ] && [ "$(sed -n 's/^entries: //p' $I/per_cpu/cpu0/stats)" = "$left" ]
t $? slow_stop_rest_counted_unread
# every marker written is sent or counted lost: events + lost_events + ring_lost
written=$(sed -n 's/^markers cpu=0 written=\([0-9]*\).*/\1/p' /tmp/markers.out)
[ "$(( $(col 0 6) + $(col 0 9) + $(col 0 10) ))" = "$written" ] && [ "$(col 0 10)" -ge "$left" ]
t $? slow_stop_markers_sent_or_counted_lost

# session 2: rmmod while streaming stops the session within the same deadline
echo 1 > $D/enable
t $? enable_again
markers slow_rmmod
u0=$(uptime_s)
rmmod vtrace_guest
rc=$?
u1=$(uptime_s)
t $rc slow_rmmod_returns_0
secs=$(awk "BEGIN { print $u1 - $u0 }")
echo "vtg-perf: rmmod with a slow host: $secs s"
awk "BEGIN { exit !($secs < 7.5) }"
t $? slow_rmmod_within_deadline
! ps | grep -q '[v]trace-'
t $? no_kthread_left
# A start that fails leaves nothing armed, and a stop whose disarming
# writes fail says so: the test-only vtrace_failinj.ko makes the module's
# Nth write to a tracing_on file fail (rb_simple_write; a start writes 0,
# then 1), or its writes to events/enable (system_enable_write).  Events
# selected: sched_switch, which fires all the time.
FI=/lib/vtrace/vtrace_failinj.ko
FP=/sys/module/vtrace_failinj/parameters
disarmed() {	# nothing of the instance armed, the module idle
	[ -z "$(cat $I/set_event)" ] && [ "$(cat $I/events/sched/sched_switch/enable)" = 0 ] &&
		[ "$(cat $I/tracing_on)" = 0 ] && grep -q '^state: idle' $D/status
}
if [ -f $FI ]; then
	insmod $FI func=rb_simple_write ret=-5 gfp_arg=0 comm='*' caller=vtrace_guest nth=2 &&
		insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0 events=sched:sched_switch &&
		! echo 1 > $D/enable 2> /dev/null && [ "$(cat $FP/injected)" = 1 ]
	t $? start_fails_at_tracing_on
	echo "vtg: # set_event after it: '$(cat $I/set_event)', tracing_on $(cat $I/tracing_on)"
	disarmed
	t $? failed_start_leaves_events_disabled
	rmmod vtrace_failinj
	echo 1 > $D/enable && [ "$(cat $I/set_event)" = sched:sched_switch ] && echo 0 > $D/enable &&
		disarmed && rmmod vtrace_guest
	t $? next_start_arms_stop_disarms

	# A stop whose disarming writes fail: each is tried three times, then the
	# session ends and status (and EOS: the suite checks) says what stayed on.
	# tracing_on: the module's 3rd write and every later one fail (the
	# start's two went through).
	insmod $FI func=rb_simple_write ret=-5 gfp_arg=0 comm='*' caller=vtrace_guest nth=3 times=0 &&
		insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0 events=sched:sched_switch &&
		echo 1 > $D/enable && echo 0 > $D/enable
	t $? stop_with_tracing_on_refused_ends
	sed 's/^/vtg-status: /' $D/status
	grep -q '^not disarmed: tracing_on could not be set to 0' $D/status &&
		[ "$(cat $FP/injected)" = 3 ] && [ "$(cat $I/tracing_on)" = 1 ] &&
		[ -z "$(cat $I/set_event)" ] && grep -q '^state: idle' $D/status
	t $? stop_tracing_on_failure_tried_3_times_reported
	rmmod vtrace_failinj
	# events/enable: every write from the module fails
	insmod $FI func=system_enable_write ret=-5 gfp_arg=0 comm='*' caller=vtrace_guest nth=1 times=0 &&
		echo 1 > $D/enable && echo 0 > $D/enable &&
		grep -q '^not disarmed: events/enable could not be set to 0' $D/status &&
		! grep -q '^not disarmed: tracing_on' $D/status &&
		[ "$(cat $FP/injected)" = 3 ] &&
		[ "$(cat $I/set_event)" = sched:sched_switch ] && [ "$(cat $I/tracing_on)" = 0 ]
	t $? stop_events_failure_tried_3_times_reported
	dmesg | grep 'instances/vtrace/.*\(try\|still on\)' | sed 's/^/vtg-status: /'
	rmmod vtrace_failinj
	# the next session's stop disarms and clears the report
	echo 1 > $D/enable && echo 0 > $D/enable && disarmed && ! grep -q '^not disarmed' $D/status &&
		rmmod vtrace_guest
	t $? next_stop_disarms_and_clears_report
else
	for name in start_fails_at_tracing_on failed_start_leaves_events_disabled \
		    next_start_arms_stop_disarms stop_with_tracing_on_refused_ends \
		    stop_tracing_on_failure_tried_3_times_reported \
		    stop_events_failure_tried_3_times_reported next_stop_disarms_and_clears_report; do
		n=$((n + 1))
		echo "vtg: ok $n $name # SKIP vtrace_failinj.ko not built for this kernel"
	done
fi
# time for the hung-task detector to look once more
sleep 10
! dmesg | grep -q "blocked for more than"
t $? no_hung_task
