#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace-l1: --no-tsc-reliable --timeout 900
# Alignment selftest on a host whose TSC is unstable (L1 without tsc=reliable):
# KVM rewrites the vCPU offsets on every vCPU load, thousands of times a second.
# Run as Documentation/workflow.rst tells a user: vtrace_host loaded at the
# host's start with its default parameters (as /etc/modules does), the guest
# started, the host recording begun later with trace-cmd record -e vtrace_host,
# and vtrace-merge taking the offset history from host.dat (align-lib.sh,
# ALIGN_HISTORY=events).  The recording begins only once the guest's VM has
# used up its share of the module's default array (ALIGN_FULL_FIRST: stats
# counts records dropped for it before trace-cmd starts), as for a user who
# loaded the module at boot and records minutes later; the module's own
# tsc_offsets of the same capture is shown incomplete, host.dat complete.
# L1 makes the capture (align-lib.sh); the checks run on L0 once L1 has
# ended (l0/align_unstable.sh, align-analyse.sh).
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/align-lib.sh"

ktap_header 2
modprobe kvm
insmod "$VTRACE_HOST_KO" || ktap_diag "insmod vtrace_host failed"
modprobe kvm_amd
ALIGN_HISTORY=events ALIGN_FULL_FIRST=1 ALIGN_DELAY=15 align_case align-unstable 1000 0
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
