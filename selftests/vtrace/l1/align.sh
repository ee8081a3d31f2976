#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace-l1: --timeout 1200
# Alignment selftest on a host with a stable TSC: no offset change, one guest
# TSC write mid-run, two guests at once.  Every host hypercall must fall
# between its guest markers: 100%.
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/align-lib.sh"

ktap_header 4
modprobe kvm_amd
align_case align-stable 1 1000 0
align_case align-tscwrite 1 1000 1
align_case align-two-guests 2 1000 1
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
