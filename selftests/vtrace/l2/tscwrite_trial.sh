#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Manual trial, guest side (l1/tscwrite_trial.sh): align's guest g1 at its TSC write, again and again.
#   $1 = "FIRST,LAST,TSCWRITE,PARAMS_A,PARAMS_B,ORDER": trials FIRST..LAST, each as
#        l2/e2e_align.sh's g1 does it (vtrace_guest loaded and streaming,
#        500 marker pairs per CPU, then e2e_tscwrite on CPU 1 with TSCWRITE 1,
#        500 more pairs), then 8 s of watching, then the module stopped and
#        unloaded.  Trials FIRST, FIRST + 2, ... run in the mode ORDER
#        starts with (AB: mode A first, BA: mode B first), the others in the
#        other; mode A loads vtrace_guest with PARAMS_A, mode B with
#        PARAMS_B ("+" for spaces, "-" for none).  Each trial prints
#        "trial N mode M start|write|done ..." (times from /proc/uptime,
#        the local timer interrupts of CPU 0 and 1 from /proc/interrupts in the
#        2 s after the write, and the module's debug counters when it has them).
IFS=,
set -- $1
unset IFS
first=${1:-1} last=${2:-10} tscwrite=${3:-1} pa=${4:--} pb=${5:--} order=${6:-AB}
d=/sys/kernel/debug/vtrace
p=/sys/module/vtrace_guest/parameters
marker=/sys/kernel/tracing/instances/vtrace/trace_marker
ncpu=$(grep -c ^processor /proc/cpuinfo)

up() { cut -d' ' -f1 /proc/uptime; }
loc() { awk '$1 == "LOC:" { print $2 + $3 }' /proc/interrupts; }
dbg() {
	for f in dbg_busy_on dbg_ring_wakes dbg_drains; do
		[ -r $p/$f ] && printf ' %s %s' $f "$(cat $p/$f)"
	done
}
markers() {	# markers FROM: 500 pairs per CPU, as e2e_align.sh's halves
	c=0
	while [ $c -lt "$ncpu" ]; do
		/bin/e2e_align $c 500 $marker 0x7654 100 1 "$1" &
		c=$((c + 1))
	done
	wait
}

n=$first
while [ "$n" -le "$last" ]; do
	m=$(echo "$order" | cut -c$(((n - first) % 2 + 1)))
	if [ "$m" = A ]; then par=$pa; else par=$pb; fi
	[ "$par" = - ] && par=
	par=$(echo "$par" | tr + ' ')
	echo "trial $n mode $m start $(up) params '$par'"
	# shellcheck disable=SC2086
	insmod /lib/vtrace/vtrace_guest.ko $par || { echo "trial $n mode $m insmod failed"; exit 1; }
	echo 1 > $d/enable || { echo "trial $n mode $m enable failed"; exit 1; }
	markers 0
	l0=$(loc)
	t0=$(up)
	[ "$tscwrite" = 1 ] && /bin/e2e_tscwrite 1 3000000000 > /dev/null
	echo "trial $n mode $m write $t0"
	markers 500
	sleep 2
	echo "trial $n mode $m loc2 $(( $(loc) - l0 )) in $(awk -v a="$t0" -v b="$(up)" 'BEGIN { print b - a }') s$(dbg)"
	sleep 6
	echo 0 > $d/enable
	lost=$(awk '$1 ~ /^[0-9]+$/ { l += $8 + $9 + $10 } END { print l + 0 }' $d/status)
	rmmod vtrace_guest || { echo "trial $n mode $m rmmod failed"; exit 1; }
	echo "trial $n mode $m done $(up) lost $lost"
	n=$((n + 1))
done
echo "trials done"
