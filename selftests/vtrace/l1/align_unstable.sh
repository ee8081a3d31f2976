#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace-l1: --no-tsc-reliable --timeout 900
# Alignment selftest on a host whose TSC is unstable (L1 without tsc=reliable):
# KVM rewrites the vCPU offsets on every vCPU load, thousands of times.
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/align-lib.sh"

ktap_header 3
modprobe kvm_amd
align_case align-unstable 1000 0
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
