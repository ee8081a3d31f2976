#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: vtrace.cpu1 is hot-unplugged by the host while the guest streams.
. /tests/lib.sh

insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0
t $? load
echo 1 > $D/enable
t $? enable
echo "vtg-phase: streaming"
# the host removes vtrace.cpu1 once it sees the line above (wait up to about
# 60 s: on a machine running three L1s the removal once took longer than 15)
i=0
while [ $i -lt 240 ] && [ -n "$(grep -l '^vtrace.cpu1$' /sys/class/virtio-ports/*/name)" ]; do
	guest_markers 100 0 1 > /dev/null
	sleep 0.25
	i=$((i + 1))
done
[ -z "$(grep -l '^vtrace.cpu1$' /sys/class/virtio-ports/*/name)" ]
t $? port_unplugged
# the first write to the dead port fails (-ENODEV): cpu1's drain thread ends
guest_markers 300 0 1 > /dev/null
i=0
while [ $i -lt 40 ] && ps | grep -q '[v]trace-cpu1'; do
	sleep 0.25
	i=$((i + 1))
done
! ps | grep -q '[v]trace-cpu1' && ps | grep -q '[v]trace-cpu0'
t $? cpu1_drain_thread_ended
dmesg | grep -q "cpu1: port vtrace.cpu1 is gone, its drain thread ends"
t $? port_gone_in_dmesg
# nobody reads cpu1's ring any more: these stay there, counted lost at the stop
guest_markers 200 0 1 > /dev/null
echo 0 > $D/enable
t $? disable_after_unplug
sed 's/^/vtg-status: /' $D/status
# one failed write, its pages lost, the 200 markers unread (ring_lost)
[ "$(col 1 11)" = 1 ] && [ "$(col 1 8)" -gt 0 ] && [ "$(col 1 10)" -ge 200 ]
t $? cpu1_one_write_failed_rest_counted_lost
[ "$(col 0 8)" = 0 ] && [ "$(col 0 4)" -gt 0 ] && [ "$(col 0 10)" = 0 ]
t $? cpu0_unaffected
grep -q "^data ports: 1 of 2 CPUs" $D/status
t $? port_closed_at_stop
echo 1 > $D/enable && echo 0 > $D/enable
t $? new_session_after_unplug
# then the control port, with a session running: the control thread reads
# -ENODEV, closes the port and goes on without it
echo 1 > $D/enable
t $? enable_before_ctl_unplug
echo "vtg-phase: ctl-unplug"
i=0
while [ $i -lt 240 ] && [ -n "$(grep -l '^vtrace.ctl$' /sys/class/virtio-ports/*/name)" ]; do
	guest_markers 50 0 > /dev/null
	sleep 0.25
	i=$((i + 1))
done
[ -z "$(grep -l '^vtrace.ctl$' /sys/class/virtio-ports/*/name)" ]
t $? ctl_port_unplugged
i=0
while [ $i -lt 40 ] && ! dmesg | grep -q "vtrace_guest: control port removed"; do
	sleep 0.25
	i=$((i + 1))
done
dmesg | grep -q "vtrace_guest: control port removed"
t $? ctl_port_removed_in_dmesg
guest_markers 100 0 > /dev/null
echo 0 > $D/enable
t $? disable_after_ctl_unplug
sed 's/^/vtg-status: /' $D/status
grep -q "^ctl port: no" $D/status
t $? ctl_port_gone_in_status
rmmod vtrace_guest
t $? unload
! ps | grep -q '[v]trace-'
t $? no_kthread_left
