#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest of a libvirt domain (scripts/check-libvirt.sh): vtrace_guest in agent
#   mode; the host's "vtrace agent --libvirt" starts a session, this writes
#   COUNT markers per CPU, the host sees "markers_written" on the console
#   and stops the session; the host checks what it can while the domain
#   runs, then says it is done by selecting other events (SET_EVENTS
#   sched:sched_process_exit): then the guest powers off.
. /tests/lib.sh

insmod /lib/vtrace/vtrace_guest.ko
t $? load
waitfor 120 enabled 1
t $? started_by_host
guest_markers "${1:-200}"
t $? markers_written
waitfor 120 enabled 0
t $? stopped_by_host
waitfor 60 grep -qx sched:sched_process_exit "$D/events"
t $? host_done
