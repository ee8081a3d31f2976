#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2 side of the host suite: move one vCPU's TSC by +3e9 cycles, then idle.
#
# $1 = "CPU" (write IA32_TSC) or "CPU:adjust" (write IA32_TSC_ADJUST).
# Prints "armed", then waits for a line "go" on the port vtrace.ctl (L1
# sends it after reading its own TSC, so that reading precedes the write
# however slowly L1 sees the console), writes, prints "written", then idles
# until L1 stops the VM.
cpu=${1%%:*}
how=tsc
[ "${1#*:}" = adjust ] && how=adjust
echo "vtg: booted"
name=$(grep -l '^vtrace\.ctl$' /sys/class/virtio-ports/*/name 2>/dev/null | head -1)
dev=/dev/$(basename "$(dirname "$name")")
# Keep the port open: data that arrives while it is closed is discarded.
if [ -z "$name" ] || [ ! -c "$dev" ]; then
	echo "vtg: write failed: no port vtrace.ctl"
	sleep 600
fi
exec 3< "$dev"
echo "vtg: armed"
# read returns at once while L1 is not connected; bounded at about 5 min
go= i=0
while [ "$go" != go ] && [ $i -lt 1500 ]; do
	read -r go <&3 || { go=; sleep 0.2; }
	i=$((i + 1))
done
if [ "$go" != go ]; then
	echo "vtg: write failed: no go from L1"
elif out=$(host_tscwrite "$cpu" 3000000000 "$how"); then
	echo "vtg: written $out"
else
	echo "vtg: write failed"
fi
sleep 600
