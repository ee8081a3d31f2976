#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Alignment selftest, guest side: numbered markers around hypercalls on every CPU.
#   $1 = "COUNT,TAG,TSCWRITE[,DELAY[,LATENCY]]": samples per CPU, hypercall tag (a2),
#        1 to add 3e9 cycles to CPU 1's TSC half-way through, seconds to
#        wait before tracing (the host starts recording meanwhile), and 1 to
#        run the late wake-up phases after the markers (commas: the argument
#        travels on the kernel command line).
# The late wake-up phases (LATENCY 1; the guest also traces scheduling and
# timers): timer task lat_hog sleeps 1 ms at a time on CPU 1 for 12 s (the
# host, told by the console line "vtg: # lat hog", holds that vCPU's host
# CPU meanwhile in bursts for 2 s: align-lib.sh; the rest is the host's
# time to react in a loaded bed), then timer task lat_io does the same for
# 3 s beside a port I/O loop on CPU 1, lat_cpuid beside a CPUID loop,
# lat_msr beside a loop of MSR writes, lat_prio for 2.5 s below a
# SCHED_FIFO task e2e_burst of higher priority on CPU 1 (5 bursts of 40 ms,
# one every 400 ms: helpers/e2e_lat.c), and lat_sirq for 4 s while the
# host, told by "vtg: # lat sirq", keeps the vCPU's host CPU busy in its
# network softirq for 2 s (helpers/e2e_sirq.c), then lat_idle for 7 s
# while L0, told by "vtg: # lat idle" (through L1), stops the L1 vCPU the
# vCPU runs on in bursts (testbed/l0-freeze.py): the host not running.
# Between lat_sirq and lat_idle: lat_girq for 3 s while vtrace_irqoff.ko
# in this guest keeps its CPU 1's interrupts off in sections (GIRQ: the
# guest takes its timer interrupt late; loaded before the task starts,
# removed once it ends), then lat_hirq for 8 s while the host, told by
# "vtg: # lat hirq", keeps the interrupts of the vCPU's host CPU off in
# sections until it sees "vtg: # lat idle" (vtrace_irqoff.ko in L1: the
# host fires the guest's timer late; the host saw a console line 4.4 s
# late on a loaded machine).
IFS=,
set -- $1
unset IFS
count=${1:-1000} tag=${2:-1} tscwrite=${3:-0} delay=${4:-0} latency=${5:-0}
d=/sys/kernel/debug/vtrace
ncpu=$(grep -c ^processor /proc/cpuinfo)

sleep "$delay"
insmod /lib/vtrace/vtrace_guest.ko || { echo "vtg: not ok 1 load"; exit 1; }
[ "$latency" = 1 ] && printf '%s\n' sched:sched_switch sched:sched_wakeup timer:hrtimer_start \
	timer:hrtimer_expire_entry timer:hrtimer_expire_exit irq_vectors:local_timer_entry > $d/events
echo 1 > $d/enable || { echo "vtg: not ok 1 enable"; exit 1; }
marker=/sys/kernel/tracing/instances/vtrace/trace_marker

half=$((count / 2))
c=0
while [ $c -lt "$ncpu" ]; do
	/bin/e2e_align $c $half $marker 0x7654 100 $tag &
	c=$((c + 1))
done
wait
if [ "$tscwrite" = 1 ]; then
	/bin/e2e_tscwrite 1 3000000000
fi
c=0
while [ $c -lt "$ncpu" ]; do
	/bin/e2e_align $c $((count - half)) $marker 0x7654 100 $tag $half &
	c=$((c + 1))
done
wait
if [ "$latency" = 1 ]; then
	echo "vtg: # lat hog"
	/bin/e2e_lat lat_hog 1 12 1000 2>&1 | sed 's/^/vtg: # /'
	[ -e /dev/port ] || mknod /dev/port c 1 4
	/bin/e2e_lat lat_io 1 3 1000 0x80 2>&1 | sed 's/^/vtg: # /'
	/bin/e2e_lat lat_cpuid 1 3 1000 cpuid 2>&1 | sed 's/^/vtg: # /'
	/bin/e2e_lat lat_msr 1 3 1000 msr 2>&1 | sed 's/^/vtg: # /'
	/bin/e2e_lat lat_prio 1 2.5 1000 burst 5 40000 400000 2>&1 | sed 's/^/vtg: # /'
	echo "vtg: # lat sirq"
	/bin/e2e_lat lat_sirq 1 4 1000 2>&1 | sed 's/^/vtg: # /'
	# GIRQ: irqs-off sections on this guest's CPU 1: us each, every ms
	insmod /lib/vtrace/vtrace_irqoff.ko cpu=1 off_us=3000 period_ms=20 duration_ms=20000 ||
		echo "vtg: # vtrace_irqoff: not loaded"
	/bin/e2e_lat lat_girq 1 3 1000 2>&1 | sed 's/^/vtg: # /'
	echo "vtg: # vtrace_irqoff: $(cat /sys/module/vtrace_irqoff/parameters/sections) sections of 3000 us on cpu 1"
	rmmod vtrace_irqoff
	echo "vtg: # lat hirq"
	/bin/e2e_lat lat_hirq 1 8 1000 2>&1 | sed 's/^/vtg: # /'
	echo "vtg: # lat idle"
	/bin/e2e_lat lat_idle 1 7 1000 2>&1 | sed 's/^/vtg: # /'
fi
echo 0 > $d/enable
cat $d/status
rmmod vtrace_guest && echo "vtg: ok 1 align_guest_done"
