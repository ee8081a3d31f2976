#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: vtrace_guest with host ends nobody reads: ctl and cpu1 are unconnected sockets.
. /tests/lib.sh

insmod /lib/vtrace/vtrace_guest.ko port_timeout_ms=500
t $? load
# no HELLO to a host not connected yet: it sends its own when it comes (agent mode)
sleep 1
! dmesg | grep -q "message type 1 seq [0-9]* not delivered"
t $? no_hello_to_an_unconnected_host
t0=$(date +%s)
echo 1 > $D/enable
t $? enable
guest_markers "${1:-300}"
t $? markers_written
echo 0 > $D/enable
t $? disable
secs=$(( $(date +%s) - t0 ))
echo "vtg-time: session with unconnected ports $secs s"
[ $secs -lt 30 ]
t $? no_hang
sed 's/^/vtg-status: /' $D/status
[ "$(col 0 8)" = 0 ] && [ "$(col 0 4)" -gt 0 ]
t $? cpu0_streamed_nothing_lost
[ "$(col 1 4)" = 0 ] && [ "$(col 1 8)" -gt 0 ] && [ "$(col 1 9)" -gt 0 ]
t $? cpu1_pages_counted_lost
grep -q "^ctl messages: 0 sent, [1-9]" $D/status
t $? ctl_messages_counted_lost
rmmod vtrace_guest
t $? unload
! ps | grep -q '[v]trace-'
t $? no_kthread_left
