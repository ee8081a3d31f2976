#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/merge.sh: vtrace-merge throughput and memory next to trace-cmd report.
#
#   bench/merge.sh [--events N] [--runs R] [--keep DIR]
#
# Generates a host (2 CPUs) and a guest (2 CPUs) trace of N events in all
# (default 1000000; half sched_switch, half trace_marker prints) with
# user/tests/gen.py, turns the raw pages into trace.dat files with
# "trace-cmd restore", then times on the same data:
#   trace-cmd report -i host.dat -i guest.dat     (its own multi-file merge)
#   vtrace-merge --host host.dat --guest g1=DIR   (text, jsonl, --stats)
# and the host alone.  Prints seconds, events/s, ratio to trace-cmd and the
# peak RSS of each run (/usr/bin/time -v), best of --runs (3) runs.  Not a test: no pass/fail.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
events=1000000
runs=3
keep=
while [ $# -gt 0 ]; do
	case $1 in
	--events)	events=$2; shift 2 ;;
	--keep)		keep=$2; shift 2 ;;
	--runs)		runs=$2; shift 2 ;;
	*)		echo "usage: $0 [--events N] [--runs R] [--keep DIR]" >&2; exit 2 ;;
	esac
done
command -v trace-cmd > /dev/null || { echo "bench: trace-cmd not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not installed (apt-get install time)" >&2; exit 2; }
M=$here/user/vtrace-merge
[ -x "$M" ] || make -s -C "$here/user" vtrace-merge
if [ -n "$keep" ]; then D=$keep; mkdir -p "$D"; else D=$(mktemp -d /tmp/vtrace-bench.XXXXXX); fi
[ -n "$keep" ] || trap 'rm -rf "$D"' EXIT
FX=$here/user/tests/fixtures/debian-6.1

echo "bench: generating $events events in $D"
python3 "$here/user/tests/gen.py" make "$D" bench --events $((events / 4))

# a tracefs look-alike from the fixtures, for "trace-cmd restore -c"
tr=$D/tracefs
mkdir -p "$tr/events"
cp "$FX/header_page" "$FX/header_event" "$tr/events/"
for e in ftrace/print sched/sched_switch; do
	mkdir -p "$tr/events/$e"
	cp "$FX/$e.format" "$tr/events/$e/format"
done
for c in 0 1; do echo "$((1000 + c)) task-$c"; done > "$tr/saved_cmdlines"
echo "local global counter uptime perf mono mono_raw boot [x86-tsc]" > "$tr/trace_clock"
cp "$FX/printk_formats" "$tr/"
trace-cmd restore -c -t "$tr" -k "$FX/kallsyms" -o "$D/head.dat" > /dev/null 2>&1
trace-cmd restore -i "$D/head.dat" -o "$D/host.dat" "$D"/host/cpu* > /dev/null 2>&1
trace-cmd restore -i "$D/head.dat" -o "$D/guest.dat" "$D"/g1/cpu* > /dev/null 2>&1

base=
measure() {	# measure NAME EVENTS CMD...: best of $runs timed runs, output to /dev/null
	local name=$1 n=$2 r wall rss secs=
	shift 2
	for r in $(seq $runs); do
		/usr/bin/time -v -o "$D/time" "$@" > /dev/null 2> "$D/stderr" ||
			{ echo "bench: $name failed: $(head -3 "$D/stderr")" >&2; return 1; }
		wall=$(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$D/time")
		rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$D/time")
		wall=$(awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }' \
			<<< "$wall")
		secs=$(awk -v a="${secs:-$wall}" -v b="$wall" 'BEGIN { print (b < a) ? b : a }')
	done
	[ -n "$base" ] || base=$secs
	awk -v name="$name" -v n="$n" -v s="$secs" -v b="$base" -v rss="$rss" 'BEGIN {
		if (s <= 0) s = 0.005
		printf "%-36s %9d %8.2f %12.0f %8.2fx %9d\n", name, n, s, n / s, b / s, rss }'
}

printf "%-36s %9s %8s %12s %9s %9s\n" run events seconds events/s "vs t-c" "RSS(KiB)"
echo "host + guest:"
base=
measure "  trace-cmd report (2 files)" "$events" trace-cmd report -i "$D/host.dat" -i "$D/guest.dat"
G="--host $D/host.dat --guest g1=$D/g1 --offsets $D/tsc_offsets --no-progress"
measure "  vtrace-merge (text)" "$events" "$M" $G
measure "  vtrace-merge --format jsonl" "$events" "$M" $G --format jsonl
measure "  vtrace-merge --stats" "$events" "$M" $G --stats
echo "host alone:"
base=
measure "  trace-cmd report" "$((events / 2))" trace-cmd report -i "$D/host.dat"
measure "  vtrace-merge (text)" "$((events / 2))" "$M" --host "$D/host.dat" --tsc-khz 2500000
echo "bench: ratio = trace-cmd report seconds / vtrace-merge seconds (higher is faster)"
