#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In L1: how often the nested bed fails an L2 guest: N guests one after the other.
#
#   run-l1.sh --out DIR --timeout SEC testbed/l1-glitch-rate.sh MODE:N
#     MODE boot    the guest boots to its init and powers off
#          stream  vtrace_guest streams while CPU 1 goes offline and online 10 times
#          plain   the same hotplug loop and markers, vtrace_guest not loaded
#          tsc     the align suite's guest g1: markers around hypercalls, CPU 1's
#                  TSC moved half-way, vtrace_guest streaming
#          tscplain the same, vtrace_guest not loaded
#          spin    both vCPUs spin until l2-watch.sh kills the guest ("l2 stuck
#                  busy", with its exit sample and L1's CPUs): the watchdog's
#                  own check, with a heartbeat watchdog of 15 s
#
# L1 records every kvm_exit of its guests in an overwriting trace instance;
# when a guest ends without its init's "L2 script exit" (a reset, a hang),
# the last exits of its vCPUs are kept in DIR/gN/exits.txt: a triple fault
# shows as exit reason "shutdown".  One line per guest in DIR/cycles.tsv:
# index, outcome (ok, boot-watchdog, reset, timeout, fail), seconds to
# "L2 up", seconds in all, and the glitch bed-glitch.sh names, if any.
. "$VTRACE_PROJ/testbed/lib.sh"
mode=${1%%:*} n=${1#*:}
T=/sys/kernel/tracing/instances/bedwatch

[ "$mode" != spin ] || export L2_HEARTBEAT_WATCHDOG=15
modprobe kvm_amd
mkdir -p $T
echo 2048 > $T/buffer_size_kb
echo 1 > $T/events/kvm/kvm_exit/enable
echo 1 > $T/tracing_on
echo -e "i\toutcome\tup_s\ttotal_s\tglitch" > "$VTRACE_OUT/cycles.tsv"
for ((i = 1; i <= n; i++)); do
	echo > $T/trace
	t0=$(date +%s.%N)
	l2_run g$i /tests/bed_cycle.sh --cpus 2 --arg "$mode" --timeout 240
	rc=$?
	total=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	d=$VTRACE_OUT/g$i
	up=$(sed -n 's/^l2: booted to its script after about \([0-9]*\)s/\1/p' "$d/qemu.log")
	if grep -q "^l2 boot watchdog: $d" "$VTRACE_OUT/l2-boot-watchdog.txt" 2>/dev/null; then
		out=boot-watchdog
	elif grep -q "^l2 guest reset: $d" "$VTRACE_OUT/l2-boot-watchdog.txt" 2>/dev/null; then
		out=reset
	elif [ $rc -eq 124 ]; then
		out=timeout
	elif [ $rc -eq 0 ] && grep -q 'L2 script exit 0' "$d/console.log" &&
	     ! l2_ktap g$i | grep -q '^not ok'; then
		out=ok
	else
		out=fail
	fi
	if [ $out != ok ]; then
		grep -E 'kvm_exit' $T/trace | tail -400 > "$d/exits.txt"
	fi
	glitch=$("$VTRACE_PROJ/testbed/bed-glitch.sh" "$d" 2>/dev/null | head -1)
	echo -e "$i\t$out\t${up:--}\t$total\t${glitch:--}" | tee -a "$VTRACE_OUT/cycles.tsv"
done
echo 0 > $T/tracing_on
save_dmesg l1-dmesg
awk -F'\t' 'NR > 1 { c[$2]++ } END { for (k in c) printf "%s=%d ", k, c[k]; print "" }' \
	"$VTRACE_OUT/cycles.tsv"
