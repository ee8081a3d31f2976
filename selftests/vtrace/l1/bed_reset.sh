#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test bed's exit ring (testbed/l2-watch.sh): a guest that resets
# itself after "L2 up" (sysrq b: the kernel writes the reset register, an
# I/O exit, and QEMU's -no-reboot ends it) is found as "l2 guest reset",
# with L1's last kvm_exit of its vCPUs in the finding and its last exits
# in exits.txt, and the ring's tracing instance is gone after it.
# vtrace-l1-manual: a check of the bed, not of vtrace (Documentation/testbed.rst, "The exit ring")
. "$VTRACE_PROJ/testbed/lib.sh"
export L2_EXIT_RING=1	# the ring is opt-in (testbed/l2-watch.sh)

ktap_header 4
modprobe kvm_amd
l2_run greset /tests/bed_reset.sh --cpus 2 --timeout 180
l2_ktap greset | grep -q '^ok 1 l2_up'
ktap_result $? "bed_reset_guest_ran" "see $VTRACE_OUT/greset/console.log"
found=$(grep -a "^l2 guest reset: $VTRACE_OUT/greset: " "$VTRACE_OUT/l2-boot-watchdog.txt")
ktap_diag "$found"
grep -qE '\(exit 0, last kvm_exit: [A-Za-z_]*(io|IOIO)[A-Za-z_]* at 0x[0-9a-f]+\)' <<< "$found"
ktap_result $? "bed_reset_found_with_its_last_exit" "l2-boot-watchdog.txt: ${found:-no l2 guest reset line}"
n=$(grep -c 'kvm_exit: ' "$VTRACE_OUT/greset/exits.txt" 2>/dev/null)
ktap_diag "exits.txt: ${n:-0} exits, the last: $(tail -1 "$VTRACE_OUT/greset/exits.txt" 2>/dev/null)"
[ "${n:-0}" -ge 10 ] && [ "$n" -le 400 ]
ktap_result $? "bed_reset_exits_kept"
! ls -d /sys/kernel/tracing/instances/l2-ring-* > /dev/null 2>&1
ktap_result $? "bed_reset_ring_removed" "$(ls -d /sys/kernel/tracing/instances/l2-ring-* 2>&1)"
ktap_finish
