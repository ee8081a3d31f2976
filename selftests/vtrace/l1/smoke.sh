#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Smoke test of the test bed: KVM and vtrace_host in L1, vtrace_guest in L2.
. "$VTRACE_PROJ/testbed/lib.sh"

ktap_header 5
kvm=kvm_amd	# on a real Intel host (selftests/vtrace/ksft_run.sh): kvm_intel
grep -qw vmx /proc/cpuinfo && kvm=kvm_intel
modprobe $kvm
grep -q "^$kvm " /proc/modules
ktap_result $? "l1_${kvm}_loaded"

insmod "$VTRACE_HOST_KO" && rmmod vtrace_host
ktap_result $? "l1_vtrace_host_load_unload"

l2_run smoke /tests/smoke.sh --cpus 2 --timeout 240
ktap_result $? "l2_boots_and_powers_off" "see $VTRACE_OUT/smoke/console.log"

l2_ktap smoke | grep -q '^ok 1 l2_vtrace_guest_load_unload'
ktap_result $? "l2_vtrace_guest_load_unload"

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/smoke/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
