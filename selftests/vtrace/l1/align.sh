#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace-l1: --timeout 1200 --freeze-watch
# Alignment selftest on a host with a stable TSC, two guests at once: g1's
# vCPU 1 TSC is written (+3e9 cycles) half-way through (and its kvm-clock
# re-registered, which keeps the guest's clock sane: helpers/e2e_tscwrite.c),
# g2's offsets never change.  Every host hypercall must fall between its guest markers: 100%,
# for each guest (the checker reports them apart).  g1's QEMU runs without
# -name ...,debug-threads=on, as a kernel developer types it (ALIGN_PLAIN):
# the self-check must tell its vCPU threads from g2's, of the same shape, by
# their kvm_entry events, each a thread of its own VM.
# Recorded as Documentation/workflow.rst tells, with the guests started
# before the recording: their VMs wrote their offsets (this host's TSC is
# stable) before "trace-cmd record -e vtrace_host" began, so their history
# in host.dat starts with the snapshot vtrace_host writes when the event is
# enabled (g1's TSC write comes after it); vtrace-merge takes the history
# and the TSC rate from host.dat.  The module's own tsc_offsets of the same
# capture (complete here) must order every sample too, and the same capture
# paired wrongly on purpose (another VM's pid, the history cut before g1's
# write, offsets 1 ms off) must be refused by vtrace-merge's self-check.
# L1 makes the capture (align-lib.sh); the checks run on L0 once L1 has
# ended (l0/align.sh, align-analyse.sh).
# Then g2 runs the late wake-up phases (ALIGN_LATENCY, align-lib.sh): a host
# task holds its vCPU's host CPU in bursts while a guest timer task waits,
# then timer tasks wait beside loops of port I/O, CPUID and MSR writes,
# below a guest task of higher priority in bursts, and while the host keeps
# the vCPU's host CPU busy in its network softirq; vtrace-merge --explain
# must name each cause (the host task and the guest task with their counts
# and delays).
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/align-lib.sh"

# The late wake-up phases check the merger's classification, which does
# not depend on the kernels: they run where the guests run L1's own kernel
# (make check's main run), not in the matrix's RT pair (6.1-rt guests in a
# 6.12-rt L1), where they took 200 s of the 328 s (2026-12-01 21:15)
lat=2
[ "$L2_KVER" = "$(uname -r)" ] || lat=''
ktap_header 2
modprobe kvm_amd
insmod "$VTRACE_HOST_KO"
ALIGN_HISTORY=events ALIGN_DELAY=5 ALIGN_OLD_WAY=file ALIGN_LATENCY=$lat ALIGN_PLAIN=1 \
	align_case align-two-guests 1000 1 0
rmmod vtrace_host
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
