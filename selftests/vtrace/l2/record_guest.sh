#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest of the "record" suite (selftests/vtrace/l1/record.sh): vtrace_guest
#   in agent mode, driven by the host's "vtrace record".  For each session
#   the host starts, one task per CPU sleeps 1 ms in a loop (wake-ups,
#   timers, context switches) until the host stops the session; sessions
#   follow until the host ends the VM.
. /tests/lib.sh

insmod /lib/vtrace/vtrace_guest.ko
t $? load
sess=0	# not "s": lib.sh's waitfor sets it
while waitfor 600 enabled 1; do
	sess=$((sess + 1))
	for c in 0 1; do
		( while enabled 1; do sleep 0.001; done ) &
	done
	waitfor 600 enabled 0
	wait
	t $? "session_$sess"
done
