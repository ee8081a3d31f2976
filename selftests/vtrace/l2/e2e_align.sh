#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Alignment selftest, guest side: numbered markers around hypercalls on every CPU.
#   $1 = "COUNT,TAG,TSCWRITE[,DELAY]": samples per CPU, hypercall tag (a2),
#        1 to add 3e9 cycles to CPU 1's TSC half-way through, and seconds to
#        wait before tracing (the host starts recording meanwhile) (commas:
#        the argument travels on the kernel command line).
IFS=,
set -- $1
unset IFS
count=${1:-1000} tag=${2:-1} tscwrite=${3:-0} delay=${4:-0}
d=/sys/kernel/debug/vtrace
ncpu=$(grep -c ^processor /proc/cpuinfo)

sleep "$delay"
insmod /lib/vtrace/vtrace_guest.ko || { echo "vtg: not ok 1 load"; exit 1; }
echo 1 > $d/enable || { echo "vtg: not ok 1 enable"; exit 1; }
marker=/sys/kernel/tracing/instances/vtrace/trace_marker

half=$((count / 2))
c=0
while [ $c -lt "$ncpu" ]; do
	/bin/e2e_align $c $half $marker 0x7654 100 $tag &
	c=$((c + 1))
done
wait
if [ "$tscwrite" = 1 ]; then
	/bin/e2e_tscwrite 1 3000000000
fi
c=0
while [ $c -lt "$ncpu" ]; do
	/bin/e2e_align $c $((count - half)) $marker 0x7654 100 $tag $half &
	c=$((c + 1))
done
wait
echo 0 > $d/enable
cat $d/status
rmmod vtrace_guest && echo "vtg: ok 1 align_guest_done"
