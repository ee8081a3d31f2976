#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: one cycle of testbed/l1-glitch-rate.sh: boot and power off, or CPU 1 hotplug
# while markers are written, with vtrace_guest streaming them ("stream") or not ("plain"),
# or the align suite's guest g1: markers around hypercalls on both CPUs with 3e9 cycles
# added to CPU 1's TSC half-way, vtrace_guest streaming ("tsc") or not ("tscplain"),
# or both CPUs spinning until the watchdog kills the guest ("spin").
. /tests/lib.sh
mode=${1%%/*}
delta=3000000000	# "tsc/DELTA": cycles added to CPU 1's TSC
case "$1" in */*) delta=${1#*/} ;; esac
C1=/sys/devices/system/cpu/cpu1/online

hotplug_loop() {	# 10 times: markers on both CPUs, CPU 1 offline, markers, online
	i=0
	while [ $i -lt 10 ]; do
		guest_markers 200 0 1 > /dev/null || return 1
		echo 0 > $C1 || return 1
		guest_markers 200 0 > /dev/null || return 1
		echo 1 > $C1 || return 1
		i=$((i + 1))
	done
}

align_half() {	# 1000 numbered samples per CPU, from $1 on
	for c in 0 1; do
		/bin/e2e_align $c 1000 /sys/kernel/tracing/instances/vtrace/trace_marker 0x7654 100 1 "$1" > /dev/null &
	done
	wait
}

case "$mode" in
boot)	t 0 booted ;;
stream)	insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0 && echo 1 > $D/enable
	t $? stream_started
	hotplug_loop
	t $? hotplug_loop_streaming
	echo 0 > $D/enable && rmmod vtrace_guest
	t $? stream_stopped ;;
tsc|tscplain)
	if [ "$mode" = tsc ]; then
		insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0 && echo 1 > $D/enable
	else
		mkdir -p /sys/kernel/tracing/instances/vtrace
	fi
	t $? started
	s0=$(cut -d. -f1 /proc/uptime)
	align_half 0 && s1=$(cut -d. -f1 /proc/uptime) &&
		/bin/e2e_tscwrite 1 "$delta" && align_half 1000
	t $? align_with_tsc_write
	echo "vtg-time: first half $((s1 - s0)) s, second half $(($(cut -d. -f1 /proc/uptime) - s1)) s"
	if [ "$mode" = tsc ]; then
		echo 0 > $D/enable && rmmod vtrace_guest
		t $? stream_stopped
	fi ;;
spin)	# both CPUs spin above everything (RT throttling off) until killed:
	# the heartbeat stops with the vCPUs busy, l2-watch.sh's "l2 stuck busy"
	echo -1 > /proc/sys/kernel/sched_rt_runtime_us
	for c in 0 1; do	# SCHED_FIFO 99, 10 s bursts 1 us apart, 1000 s
		/bin/e2e_hog $c 1000 10000000 10000001 99 &
	done
	wait ;;
plain)	# the same markers into the instance, no reader
	mkdir -p /sys/kernel/tracing/instances/vtrace
	hotplug_loop
	t $? hotplug_loop_plain ;;
esac
