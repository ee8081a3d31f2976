#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: vtrace_guest for minutes: the fault cases run in loops, then the host fuzzes the control port.
#   $1: seconds of each phase (default 30)
#
# Phase 1, for $1 seconds, with markers written all the time: enable/disable
# cycles, rmmod while streaming and reload, CPU 1 offline and online while
# streaming.  Phase 2: the module is loaded; the host's guest_ctl_fuzz.py
# attacks vtrace.ctl until it sets the buffer size to 9000 KiB.
# After each phase: status answers, the module unloads, no thread is left,
# and unreclaimable slab + vmalloc use (after drop_caches) did not grow (the
# number of tasks is printed).
SECS=${1:-30}
KO=/lib/vtrace/vtrace_guest.ko
D=/sys/kernel/debug/vtrace
I=/sys/kernel/tracing/instances/vtrace
C1=/sys/devices/system/cpu/cpu1/online
n=0
t() {	# t RC NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "vtg: ok $n $2"; else echo "vtg: not ok $n $2"; fi
}
mem() {	# unreclaimable slab + vmalloc, KiB, after dropping caches
	sync
	echo 3 > /proc/sys/vm/drop_caches
	awk '/^SUnreclaim:|^VmallocUsed:/ { s += $2 } END { print s }' /proc/meminfo
}
tasks() {	# tasks, without kworkers (their pools grow and shrink on their own)
	ps | grep -v -e '\[kworker/' -e ' ps$' -e ' grep ' -e ' wc$' | wc -l
}
gone() {	# (the instance stays while a marker writer holds it open: documented)
	! grep -q '^vtrace_guest ' /proc/modules && ! [ -d $D ] && ! ps | grep -q '[v]trace-'
}
# check PHASE M0 T0: unload, nothing left, memory and tasks as before
check() {
	grep -q '^state: ' $D/status
	t $? "$1_status_answers"
	echo 0 > $D/enable 2> /dev/null
	rmmod vtrace_guest && gone
	t $? "$1_unload_nothing_left"
	[ ! -d $I ] || rmdir $I	# left in place by an rmmod while markers held it
	m=$(mem) k=$(tasks)
	echo "vtg-stress: $1: unreclaimable slab + vmalloc $2 KiB before, $m KiB after; tasks $3 before, $k after"
	# (tasks are printed only: kernel threads other than vtrace's come and go)
	[ $((m - $2)) -lt 1024 ]
	t $? "$1_no_growth"
}

# phase 1: the fault cases in loops, markers written all the time (first:
# no host command can interfere; the fuzzer's may still arrive late)
m0=$(mem) k0=$(tasks)
insmod $KO send_kallsyms=0
( while :; do guest_markers 2000 0 1 > /dev/null 2>&1; sleep 0.05; done ) &
load=$!
end=$(( $(cut -d. -f1 /proc/uptime) + SECS ))
cycles=0 bad=0
while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
	for j in 1 2 3 4 5; do
		echo 1 > $D/enable && echo 0 > $D/enable || bad=$((bad + 1))
	done
	echo 1 > $D/enable || bad=$((bad + 1))
	sleep 0.3
	rmmod vtrace_guest || bad=$((bad + 1))
	gone || bad=$((bad + 1))
	insmod $KO send_kallsyms=0 || bad=$((bad + 1))
	echo 1 > $D/enable || bad=$((bad + 1))
	echo 0 > $C1 && sleep 0.2 && echo 1 > $C1 || bad=$((bad + 1))
	echo 0 > $D/enable || bad=$((bad + 1))
	grep -q '^state: idle' $D/status || bad=$((bad + 1))
	cycles=$((cycles + 1))
done
kill $load
wait 2> /dev/null
echo "vtg-stress: loops: $cycles cycles (5 enable/disable, rmmod while streaming, reload, cpu1 off/on while streaming) in $SECS s, $bad failures"
[ $bad = 0 ] && [ $cycles -gt 0 ]
t $? loops_all_steps_worked
check loops "$m0" "$k0"

# phase 2: control-port fuzzing by the host
m0=$(mem) k0=$(tasks)
insmod $KO send_kallsyms=0
t $? fuzz_load
echo "vtg-phase: fuzz"
i=0
while [ $i -lt $((SECS * 2 + 240)) ] && [ "$(cat $I/buffer_size_kb 2> /dev/null)" != 9000 ]; do
	sleep 0.5
	i=$((i + 1))
done
[ "$(cat $I/buffer_size_kb)" = 9000 ]
t $? fuzz_done_signal
sed 's/^/vtg-status: /' $D/status
check fuzz "$m0" "$k0"
