#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Demo guest: vtrace_guest in agent mode (the host's "vtrace record" starts and
# stops its session, with the events it names) while cyclictest runs on CPU 1
# for $1 seconds (default 20).
. /tests/lib.sh
secs=${1:-20}
insmod /lib/vtrace/vtrace_guest.ko || { echo "vtg: not ok 1 demo_guest load"; exit 1; }
echo "vtg: # agent ready"
waitfor 300 enabled 1 || { echo "vtg: not ok 1 demo_guest session started"; exit 1; }
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
echo "vtg: # cyclictest done"
# the host's vtrace record stops the session once it sees the line above
waitfor 120 enabled 0 || { echo "vtg: not ok 1 demo_guest session stopped"; exit 1; }
cat $D/status
rmmod vtrace_guest && echo "vtg: ok 1 demo_guest"
