#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2 side of the host suite: move one vCPU's TSC by +3e9 cycles, then idle.
#
# $1 = "CPU" (write IA32_TSC) or "CPU:adjust" (write IA32_TSC_ADJUST).
# Prints "armed" 5 s before the write (L1 reads its TSC when it sees it),
# "written" after it, then idles until L1 stops the VM.
cpu=${1%%:*}
how=tsc
[ "${1#*:}" = adjust ] && how=adjust
echo "vtg: booted"
echo "vtg: armed"
sleep 5
if out=$(host_tscwrite "$cpu" 3000000000 "$how"); then
	echo "vtg: written $out"
else
	echo "vtg: write failed"
fi
sleep 600
