#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: vtrace_guest streams numbered markers of every CPU; stop flushes; metadata checksums;
# again with sub-buffers of 8 and 16 KiB (v6.8+), and a size it cannot stream refused.
#   $1: markers per CPU (default 2000)
count=${1:-2000}
T=/sys/kernel/tracing
. /tests/lib.sh

# kernel addresses visible to unprivileged readers, so the metadata holds
# printk_formats and kallsyms with addresses, byte for byte as root reads them
echo 0 > /proc/sys/kernel/kptr_restrict
echo 1 > /proc/sys/kernel/perf_event_paranoid
insmod /lib/vtrace/vtrace_guest.ko
t $? load
# the instance it made wakes the drain threads at a quarter of a CPU's ring
bp=$(cat $T/instances/vtrace/buffer_percent)
echo "vtg-bp: module's instance buffer_percent=$bp"
[ "$bp" = 25 ]
t $? own_instance_buffer_percent_25
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
sed 's/^/vtg-status: /' $D/status

# what the host must have received, byte for byte
md5() { echo "vtg-md5 $1 $(md5sum "$2" | cut -d' ' -f1)"; }
# the instance's own header_page since v6.8 (it says the sub-buffer size)
H=$T/instances/vtrace/events/header_page
[ -f $H ] || H=$T/events/header_page
md5 header_page $H
md5 header_event $T/events/header_event
for e in print bprint bputs function; do
	[ -f $T/events/ftrace/$e/format ] && md5 ftrace/$e $T/events/ftrace/$e/format
done
md5 sched/sched_switch $T/events/sched/sched_switch/format
md5 sched/sched_wakeup $T/events/sched/sched_wakeup/format
md5 printk_formats $T/printk_formats
md5 kallsyms /proc/kallsyms

# sub-buffers (v6.8+): sessions 2 and 3 stream the same markers in sub-buffers
# of 8 and 16 KiB (the host checks them as sessions 2 and 3); one of 64 KiB,
# more than the module can send in one piece, is refused, clearly
S=$T/instances/vtrace/buffer_subbuf_size_kb
subbuf_session() {	# subbuf_session KB SESSION
	echo "$1" > $S && [ "$(cat $S)" = "$1" ] && echo 1 > $D/enable &&
		guest_markers "$count" > /dev/null && echo 0 > $D/enable &&
		[ "$(cat $D/enable)" = 0 ] &&
		dmesg | grep -q "vtrace_guest: session $2 .*stopped"
	t $? "subbuf_$1k_session"
	echo "vtg-md5 header_page@$2 $(md5sum < $H | cut -d' ' -f1)"
	sed "s/^/vtg-status: subbuf $1k: /" $D/status
}
# session 4, 8 KiB, the accounting: no events, fixed-size markers, a 32 KiB ring
# (4 sub-buffers) per CPU drained every 20 ms, bursts of 1000 markers it cannot
# hold: overruns mid-stream; the host compares the page headers' missed counts,
# the ring's stats, the status table and EOS (guest_check.py --accounting).
# MARK_WIDTH=20: 64-byte markers leave 48 bytes of an 8176-byte sub-buffer
# (8 or more with up to 5 time extends) for the missed count the kernel stores
# after the data; 56-byte ones, guest_accounting's at 4 KiB, fill it exactly
# (146 x 56 = 8176) and the count is then not stored
subbuf_accounting() {
	P=/sys/module/vtrace_guest/parameters I=$T/instances/vtrace
	dm=$(cat $P/drain_ms) dx=$(cat $P/drain_max_ms) kb=$(cat $I/buffer_size_kb)
	echo 8 > $S && echo 32 > $I/buffer_size_kb && echo > $D/events &&
		echo 20 > $P/drain_ms && echo 0 > $P/drain_max_ms && echo 1 > $D/enable &&
		MARK_WIDTH=20 MARK_BURST=1000 MARK_PAUSE_MS=100 guest_markers "$count" 0 1 \
			> /tmp/gen.4 && echo 0 > $D/enable
	ok=$?
	sed "s/^/vtg-status 4: /" $D/status
	for c in 0 1; do
		st=$I/per_cpu/cpu$c/stats
		ov=$(awk -F: '$1 == "overrun" { print $2 + 0 }' $st)
		co=$(awk -F: '$1 == "commit overrun" { print $2 + 0 }' $st)
		dr=$(awk -F: '$1 == "dropped events" { print $2 + 0 }' $st)
		en=$(awk -F: '$1 == "entries" { print $2 + 0 }' $st)
		echo "vtg-ring 4 cpu=$c overrun=$ov commit_overrun=$co dropped=$dr entries=$en"
		# the ring overran, all of it in ring_lost, and the stop left it empty
		[ "$ov" -gt 0 ] && [ "$(col $c 10)" = $((ov + co + dr)) ] && [ "$en" = 0 ] || ok=1
	done
	sed "s/^markers /vtg-gen 4: /" /tmp/gen.4
	t $ok subbuf_8k_overrun_accounted
	echo "$dm" > $P/drain_ms; echo "$dx" > $P/drain_max_ms; echo "$kb" > $I/buffer_size_kb
}
if [ -f $S ]; then
	# the kernel's symbols once (session 1) are enough: 7 MB less per session
	echo 0 > /sys/module/vtrace_guest/parameters/send_kallsyms
	subbuf_session 8 2
	subbuf_session 16 3
	subbuf_accounting
	echo 64 > $S
	! echo 1 > $D/enable 2> /dev/null && [ "$(cat $D/enable)" = 0 ] &&
		dmesg | grep -q "buffer_subbuf_size_kb is 64, more than the 32 KiB a sub-buffer may have to be streamed: not starting"
	t $? subbuf_64k_start_refused
	dmesg | grep 'buffer_subbuf_size_kb is 64' | sed 's/^\[[ 0-9.]*\] /vtg-dmesg: /'
	echo 4 > $S
else
	for s in subbuf_8k_session subbuf_16k_session subbuf_8k_overrun_accounted \
		subbuf_64k_start_refused; do
		n=$((n + 1))
		echo "vtg: ok $n $s # SKIP no buffer_subbuf_size_kb (kernel before 6.8)"
	done
fi
dmesg | grep 'vtrace_guest: session' | sed 's/^\[[ 0-9.]*\] /vtg-dmesg: /'

rmmod vtrace_guest
t $? unload
! ps | grep -q '[v]trace-'
t $? no_kthread_left
! [ -d $D ]
t $? debugfs_removed

# a user's instance keeps its buffer_percent through a load, and stays after it
mkdir $T/instances/vtrace && echo 40 > $T/instances/vtrace/buffer_percent &&
	insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0 &&
	bp=$(cat $T/instances/vtrace/buffer_percent) && rmmod vtrace_guest &&
	echo "vtg-bp: user's instance buffer_percent=$bp after load" &&
	[ "$bp" = 40 ] && [ "$(cat $T/instances/vtrace/buffer_percent)" = 40 ]
t $? user_instance_buffer_percent_kept
rmdir $T/instances/vtrace
