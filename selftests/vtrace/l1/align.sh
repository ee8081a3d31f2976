#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace-l1: --timeout 1200
# Alignment selftest on a host with a stable TSC, two guests at once: g1's
# vCPU 1 TSC is written (+3e9 cycles) half-way through (and its kvm-clock
# re-registered, which keeps the guest's clock sane: helpers/e2e_tscwrite.c),
# g2's offsets never change.  Every host hypercall must fall between its guest markers: 100%,
# for each guest (the checker reports them apart).
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/align-lib.sh"

ktap_header 3
modprobe kvm_amd
align_case align-two-guests 1000 1 0
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
