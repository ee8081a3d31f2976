#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: vtrace_guest streams numbered markers of every CPU; stop flushes; metadata checksums.
#   $1: markers per CPU (default 2000)
count=${1:-2000}
T=/sys/kernel/tracing
. /tests/lib.sh

insmod /lib/vtrace/vtrace_guest.ko
t $? load
sed 's/^/vtg-status: /' $D/status
echo "sched:sched_switch sched:sched_wakeup" > $D/events
t $? set_events
t0=$(date +%s)
echo 1 > $D/enable
t $? enable
echo "vtg-time: start (metadata) $(( $(date +%s) - t0 )) s"
[ "$(cat $D/enable)" = 1 ]
t $? enable_reads_1
[ "$(cat $T/instances/vtrace/trace_clock | grep -o '\[x86-tsc\]')" = "[x86-tsc]" ]
t $? clock_is_x86_tsc
start=$(date +%s)
guest_markers "$count"
t $? markers_written
echo 0 > $D/enable
t $? disable
echo "vtg-time: markers+stop $(( $(date +%s) - start )) s"
[ "$(cat $D/enable)" = 0 ]
t $? enable_reads_0
dmesg | grep 'vtrace_guest: session' | sed 's/^\[[ 0-9.]*\] /vtg-dmesg: /'
sed 's/^/vtg-status: /' $D/status

# what the host must have received, byte for byte
md5() { echo "vtg-md5 $1 $(md5sum "$2" | cut -d' ' -f1)"; }
md5 header_page $T/events/header_page
md5 header_event $T/events/header_event
for e in print bprint bputs function; do
	[ -f $T/events/ftrace/$e/format ] && md5 ftrace/$e $T/events/ftrace/$e/format
done
md5 sched/sched_switch $T/events/sched/sched_switch/format
md5 sched/sched_wakeup $T/events/sched/sched_wakeup/format
md5 printk_formats $T/printk_formats
md5 kallsyms /proc/kallsyms

# sub-buffers (v6.8+) of other than a page: the start is refused, clearly
S=$T/instances/vtrace/buffer_subbuf_size_kb
if [ -f $S ]; then
	echo 8 > $S
	! echo 1 > $D/enable 2> /dev/null && [ "$(cat $D/enable)" = 0 ] &&
		dmesg | grep -q "buffer_subbuf_size_kb is 8, not the page size: not starting"
	t $? subbuf_8k_start_refused
	echo 4 > $S
else
	n=$((n + 1))
	echo "vtg: ok $n subbuf_8k_start_refused # SKIP no buffer_subbuf_size_kb (kernel before 6.8)"
fi

rmmod vtrace_guest
t $? unload
! ps | grep -q '[v]trace-'
t $? no_kthread_left
! [ -d $D ]
t $? debugfs_removed
