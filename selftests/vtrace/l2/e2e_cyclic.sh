#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Demo guest: trace scheduling and timers with vtrace_guest while cyclictest
# runs on CPU 1 for $1 seconds (default 20).
secs=${1:-20}
d=/sys/kernel/debug/vtrace
insmod /lib/vtrace/vtrace_guest.ko || { echo "vtg: not ok 1 demo_guest load"; exit 1; }
printf '%s\n' sched:sched_switch sched:sched_wakeup timer:hrtimer_start \
	timer:hrtimer_expire_entry timer:hrtimer_expire_exit irq_vectors:local_timer_entry > $d/events
echo 1 > $d/enable || { echo "vtg: not ok 1 demo_guest enable"; exit 1; }
echo "vtg: # tracing"
chroot /host /usr/bin/cyclictest -q -D "$secs" -i 1000 -t 1 -a 1 -p 80 -m &
ct=$!
# cyclictest comes over 9p: its measuring thread (a second task) can take 20 s to start
for i in $(seq 120); do
	[ "$(ls /proc/$ct/task 2> /dev/null | wc -l)" -ge 2 ] && break
	sleep 1
done
echo "vtg: # cyclictest running"
wait $ct
echo 0 > $d/enable
cat $d/status
rmmod vtrace_guest && echo "vtg: ok 1 demo_guest"
