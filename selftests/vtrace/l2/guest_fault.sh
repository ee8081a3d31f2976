#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: vtrace_guest faults: fewer ports than CPUs, enable/disable loop, CPU hotplug and rmmod while streaming.
#   Runs with 3 CPUs and data ports for cpu0 and cpu1 only; no kallsyms (57 sessions).
C1=/sys/devices/system/cpu/cpu1/online
I=/sys/kernel/tracing/instances/vtrace
. /tests/lib.sh

insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0
t $? load
grep -q "^data ports: 2 of 3 CPUs" $D/status
t $? fewer_ports_in_status
dmesg | grep -q "cpu2 (no port vtrace.cpu2)"
t $? fewer_ports_in_dmesg

# an event selection is checked, not armed, while idle (SET_EVENTS from the
# host takes the same path)
old=$(cat $D/events)
echo "sched:sched_switch irq" > $D/events && [ -z "$(cat $I/set_event)" ] &&
	[ "$(cat $D/events)" = "sched:sched_switch irq" ]
t $? events_set_while_idle_not_armed
! echo "sched:no_such_event" > $D/events 2> /dev/null && [ -z "$(cat $I/set_event)" ] &&
	[ "$(cat $D/events)" = "sched:sched_switch irq" ]
t $? events_unknown_refused
# a reader of events while the selection changes sees one whole selection, the old or the
# new: the control thread wrote the text under the reader's kasprintf() (a WARN when the
# length changed between its two passes; the kernel log is checked after the suite), and
# the shell's read takes it a byte at a time, a read() each, each formatting it anew (98 of
# 5266 reads mixed two selections)
short="irq"
long="sched:sched_switch sched:sched_wakeup sched:sched_waking sched:sched_process_exit timer:hrtimer_start timer:hrtimer_expire_entry timer:hrtimer_cancel irq:irq_handler_entry irq:irq_handler_exit irq:softirq_entry irq:softirq_exit"
echo "$short" > $D/events
( i=0; while [ $i -lt 100 ]; do echo "$short" > $D/events; echo "$long" > $D/events; i=$((i + 1)); done ) &
w=$!
bad=0 reads=0
while kill -0 $w 2> /dev/null; do
	read -r got < $D/events
	if [ "$got" != "$short" ] && [ "$got" != "$long" ]; then
		[ $bad -ge 3 ] || echo "vtg: # events read as: '$got'"
		bad=$((bad + 1))
	fi
	reads=$((reads + 1))
done
wait $w
echo "vtg: # events read $reads times while it changed 200 times, $bad not a whole selection"
[ $bad -eq 0 ] && [ $reads -gt 0 ]
t $? events_read_while_changing_whole
echo "$old" > $D/events

i=0
while [ $i -lt 50 ]; do
	echo 1 > $D/enable || break
	echo 0 > $D/enable || break
	i=$((i + 1))
done
[ $i -eq 50 ]
t $? enable_disable_loop_50

# session 51 (the host checks its markers): cpu1 goes offline, comes back,
# and is offline again when tracing stops (its last page cannot get fillers)
echo 1 > $D/enable
guest_markers 300 0 1 2 > /dev/null
echo 0 > $C1
t $? cpu1_offline_while_streaming
MARK_BASE=300 guest_markers 300 0 2 > /dev/null
echo 1 > $C1
t $? cpu1_online_while_streaming
MARK_BASE=600 guest_markers 300 0 1 2 > /dev/null &&
	MARK_BASE=900 guest_markers 100 1 > /dev/null
t $? markers_around_hotplug
echo 0 > $C1
echo 0 > $D/enable
t $? disable_with_cpu1_offline
echo 1 > $C1
sed 's/^/vtg-status: /' $D/status
[ "$(col 0 8)" = 0 ] && [ "$(col 1 8)" = 0 ] && [ "$(col 0 4)" -gt 0 ] && [ "$(col 1 4)" -gt 0 ]
t $? hotplug_pages_sent_none_lost
[ "$(col 2 4)" = 0 ] && [ "$(col 2 2)" = no ]
t $? portless_cpu_not_streamed

# session 52 (the host checks its markers): cpu1 is offline at the start
# and holds markers 5000..5049 written by hand before; the start resets its
# buffer too, so only the session's markers 0..99 reach vtrace.cpu1
echo 1 > $I/tracing_on && MARK_BASE=5000 guest_markers 50 1 > /dev/null &&
	echo 0 > $C1 && grep -q "seq=5049" $I/per_cpu/cpu1/trace
t $? cpu1_offline_with_old_markers
echo 1 > $D/enable
t $? start_with_cpu1_offline
guest_markers 200 0 > /dev/null && echo 1 > $C1 && guest_markers 100 1 > /dev/null
t $? markers_after_cpu1_online
echo 0 > $D/enable
t $? stop_offline_start_session

# session 53: the function tracer on the instance traces the module's own
# functions (the drain threads', the stop's): tracing goes off before the
# last drain, so the stop ends soon and leaves nothing in the rings
echo :mod:vtrace_guest > $I/set_ftrace_filter && echo function > $I/current_tracer
t $? function_tracer_on_the_module
echo 1 > $D/enable
guest_markers 300 0 1 > /dev/null
u0=$(cut -d' ' -f1 /proc/uptime)
echo 0 > $D/enable
u1=$(cut -d' ' -f1 /proc/uptime)
echo nop > $I/current_tracer
echo > $I/set_ftrace_filter
sed 's/^/vtg-status: /' $D/status
echo "vtg-perf: stop with the function tracer on: $(awk "BEGIN { print $u1 - $u0 }") s"
awk "BEGIN { exit !($u1 - $u0 < 10) }" && [ "$(col 0 10)" = 0 ] && [ "$(col 1 10)" = 0 ] &&
	[ "$(col 0 8)" = 0 ] && [ "$(col 1 8)" = 0 ] && [ "$(col 0 6)" -gt 300 ]
t $? function_tracer_stop_fast_nothing_left

# session 54: a trace_marker writer on each CPU loops through the stop and
# ends at its first refused write (tracing off): every marker written
# before is delivered (the host checks), nothing is left or lost
echo 1 > $D/enable
MARK_BURST=50 MARK_PAUSE_MS=10 guest_markers 100000000 0 1 > /tmp/busy.out 2> /dev/null &
writer=$!
sleep 3
u0=$(cut -d' ' -f1 /proc/uptime)
echo 0 > $D/enable
u1=$(cut -d' ' -f1 /proc/uptime)
wait $writer
sed 's/^markers /vtg-busy: /' /tmp/busy.out
sed 's/^/vtg-status: /' $D/status
echo "vtg-perf: stop with a busy marker writer: $(awk "BEGIN { print $u1 - $u0 }") s"
awk "BEGIN { exit !($u1 - $u0 < 10) }" && [ "$(col 0 10)" = 0 ] && [ "$(col 1 10)" = 0 ] &&
	[ "$(col 0 8)" = 0 ] && [ "$(col 1 8)" = 0 ] && [ "$(grep -c 'failed=1$' /tmp/busy.out)" = 2 ]
t $? busy_writer_stop_fast_nothing_left

echo 1 > $D/enable
guest_markers 1000000 0 1 > /dev/null 2>&1 &
writer=$!
sleep 2
rmmod vtrace_guest
t $? rmmod_while_streaming
kill $writer 2> /dev/null
wait
! ps | grep -q '[v]trace-'
t $? no_kthread_after_rmmod
! [ -d $D ]
t $? debugfs_gone

insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0 && echo 1 > $D/enable && guest_markers 100 0 1 > /dev/null &&
	echo 0 > $D/enable && [ "$(col 0 4)" -gt 0 ]
t $? reload_and_stream

# throughput: let a backlog build (drain threads asleep, not woken by the
# ring either), then time the flush
echo 60000 > /sys/module/vtrace_guest/parameters/drain_ms
echo 0 > /sys/module/vtrace_guest/parameters/drain_max_ms
echo 1 > $D/enable
guest_markers 20000 0 1 > /dev/null
u0=$(cut -d' ' -f1 /proc/uptime)
echo 0 > $D/enable
u1=$(cut -d' ' -f1 /proc/uptime)
pages=$(( $(col 0 4) + $(col 1 4) ))
events=$(( $(col 0 6) + $(col 1 6) ))
echo "vtg-perf: stop flushed $pages pages ($events events) in $(awk "BEGIN { print $u1 - $u0 }") s:" \
	"$(awk "BEGIN { d = $u1 - $u0; if (d < 0.01) d = 0.01; printf \"%d pages/s\", $pages / d }")"
[ "$(col 0 10)" = 0 ] && [ "$(col 1 10)" = 0 ] && [ "$(col 0 8)" = 0 ] && [ "$pages" -gt 300 ]
t $? backlog_flushed_no_overrun_no_loss
rmmod vtrace_guest
t $? unload
