#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: a guest latency spike, captured on host and guest, merged and explained.
#
# On the test bed (Documentation/testbed.rst): L2 runs cyclictest on vCPU 1
# while L1 (the host) runs a CPU hog on the host CPU that vCPU's thread is
# pinned to.  vtrace record records both sides (the host's kvm_entry/kvm_exit
# and its tick, local_timer_entry, too), vtrace-merge puts them on one
# timeline, classifies every late wake-up (a summary per cause, the vCPU's
# time per exit reason) and explains the worst ones.  Takes 2-4 minutes
# here.
set -eu
cd "$(dirname "$0")/.."
proj=$PWD
out=$proj/build/demo
kver=${KVER:-$(testbed/default-kver.sh)}
secs=${DEMO_SECONDS:-20}

rm -rf "$out"
mkdir -p "$out"
testbed/build-l2.sh "$kver"
echo "vtrace demo: booting the host (L1, QEMU TCG) and the guest (L2, KVM in L1) on $kver"
testbed/run-l1.sh --kver "$kver" --out "$out" --timeout $((secs + 400)) demo/host.sh "$secs" &
run=$!
# progress: what the capture script says, as it says it
while kill -0 "$run" 2>/dev/null; do
	sleep 2
	if [ -f "$out/l1-script.out" ]; then
		tail -n +"$((${shown:-0} + 1))" "$out/l1-script.out" | grep '^demo:' || true
		shown=$(wc -l < "$out/l1-script.out")
	fi
done
# what it said after the last look
[ -f "$out/l1-script.out" ] && tail -n +"$((${shown:-0} + 1))" "$out/l1-script.out" | grep '^demo:' || true
if ! wait "$run"; then
	echo "vtrace demo: the capture failed; logs in $out (l1-console.log, l1-script.out, guest/)" >&2
	exit 1
fi

# the capture folder vtrace record wrote: host.dat, the offset history, the guest's ports
merge=(user/vtrace-merge "$out/capture")
# the first run's self-check is shown; the others say the same: kept in FILE.err, shown if one fails
"${merge[@]}" > "$out/merged.txt"
merge_to() {
	local file=$1
	shift
	if ! "${merge[@]}" "$@" > "$out/$file" 2> "$out/$file.err"; then
		cat "$out/$file.err" >&2
		echo "vtrace demo: vtrace-merge $* failed; its output in $out/$file" >&2
		exit 1
	fi
}
merge_to stats.txt --stats
merge_to explain.txt --explain --task cyclictest
merge_to explain.jsonl --explain --task cyclictest --worst 1 --format jsonl
merge_to explain.svg --explain --task cyclictest --format svg
merge_to explain.json --explain --task cyclictest --format perfetto
rsvg-convert -o "$out/explain.png" "$out/explain.svg" || true
echo
cat "$out/explain.txt"
echo
# cyclictest's own figures beside vtrace-merge's: --task cyclictest explains its measuring
# (SCHED_FIFO) threads, whose wake-ups are the cycles cyclictest counts (C:), not its main thread
cyc=$(grep -a '^demo: guest cyclictest: T:' "$out/l1-script.out" |
      sed 's/.*T: *[0-9]* *( *\([0-9]*\)).* C: *\([0-9]*\).* Max: *\([0-9]*\).*/tid \1: C: \2, Max: \3 us/' |
      paste -sd ';' - | sed 's/;/; /g') || true
sum=$(head -1 "$out/explain.jsonl")
wakeups=$(sed -n 's/.*"threshold_ns":[0-9]*,"wakeups":\([0-9]*\).*/\1/p' <<< "$sum")
tids=$(sed -n 's/.*"tids":\[\([0-9,]*\)\].*/\1/p' <<< "$sum")
worst=$(grep -m1 '"type":"late"' "$out/explain.jsonl" | sed -n 's/.*"delay_ns":\([0-9]*\).*/\1/p') || true
echo "vtrace demo: cyclictest counted ${cyc:-nothing (no T: line in l1-script.out)}"
echo "vtrace demo: vtrace-merge --explain --task cyclictest: ${wakeups:-0} wake-ups of tid ${tids:-none}, the worst $(awk -v n="${worst:-0}" 'BEGIN { printf "%d.%03d", int(n / 1000000), int(n % 1000000 / 1000) }') ms late"
echo
echo "vtrace demo: files in $out:"
echo "  capture/           what vtrace record wrote (vtrace-merge takes the folder):"
echo "    host.dat         the host's trace (trace-cmd record -C x86-tsc), kvm_entry/kvm_exit,"
echo "                     the tick (local_timer_entry), timers and interrupts too"
echo "    tsc_offsets, tsc_khz  every TSC offset KVM wrote (vtrace_host), the TSC's frequency"
echo "    manifest         the guest, its QEMU pid and vCPU threads, how the recording ended"
echo "    guest/ctl, cpuK  what the guest's vtrace ports carried (vtrace_guest, agent mode)"
echo "  merged.txt         host and guest on one timeline (vtrace-merge)"
echo "  stats.txt          events, losses and offset intervals per machine and CPU"
echo "  explain.txt        the explanation above: late wake-ups per cause and exit reason, the worst"
echo "  explain.jsonl      its summary and the worst as JSON lines (which threads, counts, causes)"
echo "  explain.svg, .png  the worst wake-up as a picture: its window on the host CPUs and the"
echo "                     vCPUs, the delay by cause; every late wake-up in a strip under it"
echo "  explain.json       for ui.perfetto.dev: every late wake-up, its causes, what ran around it"
