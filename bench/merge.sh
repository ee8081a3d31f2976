#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/merge.sh: vtrace-merge throughput and memory next to trace-cmd report.
#
#   bench/merge.sh [--events N] [--runs R] [--keep DIR]
#   bench/merge.sh --scale "N1 N2 ..." [--runs R] [--keep DIR]
#
# Generates a host (2 CPUs) and a guest (2 CPUs) trace of N events in all
# (default 1000000; half sched_switch, half trace_marker prints) with
# user/tests/gen.py, turns the raw pages into trace.dat files with
# "trace-cmd restore", then times on the same data:
#   trace-cmd report -i host.dat -i guest.dat     (its own multi-file merge)
#   vtrace-merge --host host.dat --guest g1=DIR   (text, jsonl, --stats,
#                                                  --explain's summary: its cost / --stats)
# and the host alone.
#
#   bench/merge.sh --explain N [--runs R] [--keep DIR]
#
# --explain's summary next to --stats on a capture that has what it reads
# (gen.py bench_explain, N events in all: cyclictest wake-ups every ms on two
# guest CPUs, one in ten late under a host task, the vCPU threads' kvm_entry
# and kvm_exit, the host's local timer interrupts and KVM's hrtimers of the
# vCPUs in the host's trace.dat, the guest's local timer interrupts): the goal
# is <= 1.5x; then
# the size of --explain --format perfetto's output for the same capture.
# Each command runs --runs (5) times in turn, output to
# /dev/null; printed are the medians of wall-clock and CPU (user + sys)
# seconds, events per CPU second, the ratios to trace-cmd report (its
# seconds / these; higher is faster), the largest peak RSS of the runs (the
# kernel's, file pages mapped included) and the largest peak anonymous RSS
# (heap and stacks, sampled: bench/rss.py).  The CPU ratio is the one to read on a shared machine:
# wall clock also counts the time other processes held the CPU.
#
# --scale: the same for each size in the list ("250000 500000 1000000" or
# "0.25M 1M 10M"), text output and --stats only, one line per size, to show
# time linear in events and memory flat; plus the peak RSS of vtrace-merge
# reading the guest's dump alone (--stats), and what the self-check costs:
# the CPU seconds of --stats with it and without it
# (VTRACE_MERGE_NO_SELF_CHECK=1; --stats, not text: the difference of two
# short runs, less noise on a shared machine), as a share of the text merge
# without it.
#
#   bench/merge.sh --compressed "1M 4M" [--runs R] [--keep DIR]
#
# The same captures with the host's trace.dat compressed as trace-cmd 3.1.6
# writes it by default (trace-cmd convert --compression zstd, file version
# 7), one line per size: trace-cmd report on the compressed host and guest
# files next to vtrace-merge on the compressed host (text), its CPU seconds,
# peak RSS and peak anonymous RSS, and vtrace-merge's peak RSS on the flat
# file for reference: memory flat in the trace's size on both.
# With --keep DIR the data of each size stays in DIR/data-N, and a later run
# with the same DIR reuses it.
# Not a test: no pass/fail (make check runs it once, tiny: bench/check.sh).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
events=1000000
runs=5
keep=
scale=
explain=
compressed=
count_arg() {	# "0.25M" -> 250000 (count() below, before it is defined)
	awk -v n="$1" 'BEGIN { m = 1; if (n ~ /[mM]$/) { m = 1000000; sub(/[mM]$/, "", n) }
		if (n ~ /[kK]$/) { m = 1000; sub(/[kK]$/, "", n) }; printf "%d\n", n * m }'
}
while [ $# -gt 0 ]; do
	case $1 in
	--events)	events=$2; shift 2 ;;
	--keep)		keep=$2; shift 2 ;;
	--runs)		runs=$2; shift 2 ;;
	--scale)	scale=$2; shift 2 ;;
	--explain)	explain=$(count_arg "$2"); shift 2 ;;
	--compressed)	compressed=$2; shift 2 ;;
	*)		echo "usage: $0 [--events N | --scale 'N1 N2 ...' | --explain N | --compressed 'N1 N2 ...'] [--runs R] [--keep DIR]" >&2
			exit 2 ;;
	esac
done
command -v trace-cmd > /dev/null || { echo "bench: trace-cmd not installed" >&2; exit 2; }
command -v python3 > /dev/null || { echo "bench: python3 not installed" >&2; exit 2; }
# VTRACE_MERGE=PATH: another build of vtrace-merge (an older one, to compare)
M=${VTRACE_MERGE:-$here/user/vtrace-merge}
[ -x "$M" ] || make -s -C "$here/user" vtrace-merge
if [ -n "$keep" ]; then D=$keep; mkdir -p "$D"; else D=$(mktemp -d /tmp/vtrace-bench.XXXXXX); fi
[ -n "$keep" ] || trap 'rm -rf "$D"' EXIT
FX=$here/user/tests/fixtures/debian-6.1

count() {	# "0.25M" -> 250000
	awk -v n="$1" 'BEGIN { m = 1; if (n ~ /[mM]$/) { m = 1000000; sub(/[mM]$/, "", n) }
		if (n ~ /[kK]$/) { m = 1000; sub(/[kK]$/, "", n) }; printf "%d\n", n * m }'
}

# reused DIR N FILE: with --keep, DIR holds the data of N events already (FILE, made last)
reused() {
	[ -n "$keep" ] && [ -s "$1/$3" ] && [ "$(cat "$1/events" 2> /dev/null)" = "$2" ] &&
		echo "bench: reusing the $2 events of $1" >&2
}

# host_dat DIR CMDLINES EVENT...: DIR/host.dat of DIR/host/cpu*, through a tracefs look-alike
# of the fixtures with these event formats for "trace-cmd restore -c" (DIR/head.dat, kept
# for other files); restore writes the clock "local": set to x86-tsc
host_dat() {
	local dir=$1 cmdlines=$2 tr=$1/tracefs e
	shift 2
	mkdir -p "$tr/events"
	cp "$FX/header_page" "$FX/header_event" "$tr/events/"
	for e in "$@"; do
		mkdir -p "$tr/events/$e"
		cp "$FX/$e.format" "$tr/events/$e/format"
	done
	printf '%s\n' "$cmdlines" > "$tr/saved_cmdlines"
	echo "local global counter uptime perf mono mono_raw boot [x86-tsc]" > "$tr/trace_clock"
	cp "$FX/printk_formats" "$tr/"
	trace-cmd restore -c -t "$tr" -k "${KALLSYMS:-$FX/kallsyms}" -o "$dir/head.dat" > /dev/null 2>&1
	trace-cmd restore -i "$dir/head.dat" -o "$dir/host.dat" "$dir"/host/cpu* > /dev/null 2>&1
	"$here/user/tests/dat-edit.py" clock "$dir/host.dat" x86-tsc
}

# gen_fresh DIR N SCENARIO ARG: DIR made anew with gen.py's SCENARIO (--events ARG), about N
# events; without its ground truth (not needed here, as big as the trace)
gen_fresh() {
	rm -rf "$1"
	mkdir -p "$1"
	echo "bench: generating about $2 events ($3) in $1" >&2
	python3 "$here/user/tests/gen.py" make "$1" "$3" --events "$4"
	rm -f "$1/truth.jsonl"
}

# generate DIR N: host and guest dumps of N events, and their trace.dat files
generate() {
	local dir=$1 n=$2
	reused "$dir" "$n" guest.dat && return 0
	gen_fresh "$dir" "$n" bench $((n / 4))
	host_dat "$dir" "$(printf '1000 task-0\n1001 task-1')" ftrace/print sched/sched_switch
	trace-cmd restore -i "$dir/head.dat" -o "$dir/guest.dat" "$dir"/g1/cpu* > /dev/null 2>&1
	echo "$n" > "$dir/events"
}

# generate_explain DIR N: gen.py bench_explain of about N events, the host as a trace.dat
generate_explain() {
	local dir=$1 n=$2
	reused "$dir" "$n" host.dat && return 0
	# 28.9 events a period: per CPU 8.45 on the host (a tick every 4th), 6 in the guest
	gen_fresh "$dir" "$n" bench_explain $((n * 10 / 289))
	# restore needs ftrace/print; KVM's apic_timer_fn names the host's timers of the vCPUs
	{ cat "$FX/kallsyms"; echo "ffffffffc0a1c2d0 t apic_timer_fn"; } > "$dir/kallsyms"
	KALLSYMS=$dir/kallsyms host_dat "$dir" "900 CPU 0/KVM" ftrace/print sched/sched_switch \
		kvm/kvm_entry kvm/kvm_exit irq_vectors/local_timer_entry timer/hrtimer_start \
		timer/hrtimer_expire_entry
	echo "$n" > "$dir/events"
}

# --explain N: the summary's cost next to --stats, on data with wake-ups and exits
explain_bench() {
	local d=$D/explain-$explain G n stats_cpu
	generate_explain "$d" "$explain"
	# the events read, from --stats' table
	n=$("$M" --host "$d/host.dat" --guest "g1=$d/g1" --offsets "$d/tsc_offsets" --no-progress \
		--stats 2> /dev/null | awk '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { n += $3 } END { print n }')
	echo "bench: medians of $runs runs; x = --stats' seconds / these"
	header
	G="--host $d/host.dat --guest g1=$d/g1 --offsets $d/tsc_offsets --no-progress"
	base_wall=
	# shellcheck disable=SC2086
	{
	measure "  vtrace-merge --stats" "$n" "$M" $G --stats
	stats_cpu=$cpu
	measure "  vtrace-merge --explain summary" "$n" "$M" $G --explain --worst 0 --task cyclictest
	}
	explain_ratio "$n" "$cpu" "$stats_cpu"
	"$M" $G --explain --worst 0 --task cyclictest | head -12 | sed 's/^/bench: /'
	# what --explain --format perfetto writes for the same capture (make demo's explain.json)
	# shellcheck disable=SC2086
	"$M" $G --explain --task cyclictest --format perfetto 2> /dev/null | wc -c |
		awk -v n="$n" '{ printf "bench: --explain --format perfetto over %d events: %d bytes\n", n, $1 }'
}

median() {
	sort -g | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# time_runs CMD...: $runs runs; sets wall, cpu (medians, seconds), rss and anon
# (peak RSS and peak anonymous RSS, the largest of the runs, KiB), cpu_spread ("LO-HI")
time_runs() {
	local r a t=$D/time
	: > "$D/walls"; : > "$D/cpus"; rss=0; anon=0
	for r in $(seq "$runs"); do
		"$here/bench/rss.py" "$t" "$@" > /dev/null 2> "$D/stderr" ||
			{ echo "bench: $1 failed: $(head -3 "$D/stderr")" >&2; return 1; }
		read -r w c r a < "$t"
		echo "$w" >> "$D/walls"
		echo "$c" >> "$D/cpus"
		[ "$r" -gt "$rss" ] && rss=$r
		[ "$a" -gt "$anon" ] && anon=$a
	done
	wall=$(median < "$D/walls")
	cpu=$(median < "$D/cpus")
	cpu_spread=$(sort -g "$D/cpus" | sed -n '1p;$p' | paste -sd- -)
}

# measure NAME EVENTS CMD...: one line; the first of a group is the base of the ratios
base_wall= base_cpu=
measure() {
	local name=$1 n=$2
	shift 2
	time_runs "$@" || return 1
	[ -n "$base_wall" ] || { base_wall=$wall; base_cpu=$cpu; }
	awk -v name="$name" -v n="$n" -v w="$wall" -v c="$cpu" -v bw="$base_wall" \
	    -v bc="$base_cpu" -v rss="$rss" -v anon="$anon" 'BEGIN {
		if (w <= 0) w = 0.005; if (c <= 0) c = 0.005
		printf "%-32s %9d %7.2f %7.2f %11.0f %7.2fx %7.2fx %9d %9d\n",
			name, n, w, c, n / c, bw / w, bc / c, rss, anon }'
}

header() {
	printf "%-32s %9s %7s %7s %11s %8s %8s %9s %9s\n" run events "wall s" "CPU s" "events/CPUs" \
		"x wall" "x CPU" "RSS(KiB)" "anon(KiB)"
}

# check_cost EVENTS STATS-CPU STATS-NOCHECK-CPU TEXT-NOCHECK-CPU: what the self-check adds to
# --stats, as a share of the text merge without it (goal <= 15 %)
check_cost() {
	awk -v n="$1" -v w="$2" -v o="$3" -v t="$4" 'BEGIN { if (t <= 0) t = 0.005
		printf "bench: self-check over %d events: --stats %.2f CPU s, without the check %.2f: +%.2f s, %.1f %% of the text merge without it (%.2f s; goal <= 15 %%)\n",
			n, w, o, w - o, (w - o) * 100 / t, t }'
}

single() {
	local d=$D/data-$events G
	generate "$d" "$events"
	echo "bench: medians of $runs runs; x = trace-cmd report's seconds / these (higher is faster)"
	header
	echo "host + guest:"
	base_wall=
	measure "  trace-cmd report (2 files)" "$events" \
		trace-cmd report -i "$d/host.dat" -i "$d/guest.dat"
	G="--host $d/host.dat --guest g1=$d/g1 --offsets $d/tsc_offsets --no-progress"
	# shellcheck disable=SC2086
	{
	measure "  vtrace-merge (text)" "$events" "$M" $G
	measure "  vtrace-merge, no self-check" "$events" env VTRACE_MERGE_NO_SELF_CHECK=1 "$M" $G
	nocheck_cpu=$cpu
	measure "  vtrace-merge --format jsonl" "$events" "$M" $G --format jsonl
	measure "  vtrace-merge --stats" "$events" "$M" $G --stats
	stats_cpu=$cpu
	measure "  vtrace-merge --stats, no check" "$events" env VTRACE_MERGE_NO_SELF_CHECK=1 "$M" $G \
		--stats
	stats_nocheck_cpu=$cpu
	measure "  vtrace-merge --explain summary" "$events" "$M" $G --explain --worst 0
	}
	explain_ratio "$events" "$cpu" "$stats_cpu"
	check_cost "$events" "$stats_cpu" "$stats_nocheck_cpu" "$nocheck_cpu"
	echo "host alone:"
	base_wall=
	measure "  trace-cmd report" "$((events / 2))" trace-cmd report -i "$d/host.dat"
	measure "  vtrace-merge (text)" "$((events / 2))" "$M" --host "$d/host.dat" \
		--tsc-khz 2500000 --no-progress
	echo "bench: ratio = trace-cmd report seconds / vtrace-merge seconds (higher is faster)"
}

# explain_ratio EVENTS EXPLAIN-CPU STATS-CPU: the summary's cost next to --stats (issue 19: <= 1.5)
explain_ratio() {
	awk -v n="$1" -v e="$2" -v s="$3" 'BEGIN { if (s <= 0) s = 0.005
		printf "bench: --explain summary (--worst 0) over %d events: %.2f CPU s, --stats %.2f: %.2fx (goal <= 1.5x)\n",
			n, e, s, e / s }'
}

# One line per size: trace-cmd report, vtrace-merge text, --stats; ns per event, peak RSS
# and peak anonymous RSS; the self-check's share of the text merge
scale_curve() {
	local n d G tw tc tr ta vw vc vr va oc sc snc gr ec
	echo "bench: scale curve, medians of $runs runs; ns/ev = CPU ns per event; RSS = peak RSS,"
	echo "bench: anon = peak anonymous RSS (KiB); check = what the self-check adds to --stats, as a"
	echo "bench: share of the text merge without it"
	printf "%9s | %-35s | %-35s | %-6s | %-6s | %-8s | %7s\n" "" "trace-cmd report" \
		"vtrace-merge (text)" "check" "--stats" "guest" "x CPU"
	printf "%9s | %7s %7s %9s %9s | %7s %7s %9s %9s | %6s | %6s | %8s | %7s\n" events "CPU s" \
		"ns/ev" "RSS" "anon" "CPU s" "ns/ev" "RSS" "anon" "" "ns/ev" "RSS" ""
	for n in $scale; do
		n=$(count "$n")
		d=$D/data-$n
		generate "$d" "$n"
		time_runs trace-cmd report -i "$d/host.dat" -i "$d/guest.dat"
		tw=$wall tc=$cpu tr=$rss ta=$anon
		G="--host $d/host.dat --guest g1=$d/g1 --offsets $d/tsc_offsets --no-progress"
		# shellcheck disable=SC2086
		time_runs "$M" $G
		vw=$wall vc=$cpu vr=$rss va=$anon
		# shellcheck disable=SC2086
		time_runs env VTRACE_MERGE_NO_SELF_CHECK=1 "$M" $G
		oc=$cpu
		# shellcheck disable=SC2086
		time_runs "$M" $G --stats
		sc=$cpu
		# shellcheck disable=SC2086
		time_runs env VTRACE_MERGE_NO_SELF_CHECK=1 "$M" $G --stats
		snc=$cpu
		# shellcheck disable=SC2086
		time_runs "$M" $G --explain --worst 0
		ec=$cpu
		time_runs "$M" --guest "g1=$d/g1" --offsets "$d/tsc_offsets" --tsc-khz 2500000 \
			--no-progress --stats
		gr=$rss
		[ -n "$keep" ] || rm -rf "$d"
		awk -v n="$n" -v tc="$tc" -v tr="$tr" -v ta="$ta" -v vc="$vc" -v vr="$vr" \
		    -v va="$va" -v oc="$oc" -v sc="$sc" -v snc="$snc" -v gr="$gr" 'BEGIN {
			if (vc <= 0) vc = 0.005; if (oc <= 0) oc = 0.005
			printf "%9d | %7.2f %7.0f %9d %9d | %7.2f %7.0f %9d %9d | %5.1f%% | %6.0f | %8d | %6.2fx\n",
				n, tc, tc * 1e9 / n, tr, ta, vc, vc * 1e9 / n, vr, va,
				(sc - snc) * 100 / oc, sc * 1e9 / n, gr, tc / vc }'
	done
	explain_ratio "$n" "$ec" "$sc"	# the largest size: the last
	echo "bench: x CPU = trace-cmd report CPU seconds / vtrace-merge (text) CPU seconds (higher is faster)"
}

# One line per size, the host's trace.dat compressed (zstd, trace-cmd's default): trace-cmd
# report and vtrace-merge on the same compressed files, CPU seconds and peak RSS
compressed_curve() {
	local n d G tc tr ta vc vr va fr ts vs
	echo "bench: compressed host trace.dat (zstd, file version 7), medians of $runs runs;"
	echo "bench: RSS = peak RSS, anon = peak anonymous RSS (KiB); flat RSS = vtrace-merge's on the"
	echo "bench: uncompressed host file"
	printf "%9s | %-27s | %-27s | %9s | %7s\n" "" "trace-cmd report" "vtrace-merge (text)" \
		"flat" "x CPU"
	printf "%9s | %7s %9s %9s | %7s %9s %9s | %9s | %7s\n" events "CPU s" "RSS" "anon" \
		"CPU s" "RSS" "anon" "RSS" ""
	for n in $compressed; do
		n=$(count "$n")
		d=$D/data-$n
		generate "$d" "$n"
		if [ ! -s "$d/host-z.dat" ] || [ ! -s "$d/guest-z.dat" ]; then
			trace-cmd convert -i "$d/host.dat" -o "$d/host-z.dat" --file-version 7 \
				--compression zstd > /dev/null 2>&1 &&
			trace-cmd convert -i "$d/guest.dat" -o "$d/guest-z.dat" --file-version 7 \
				--compression zstd > /dev/null 2>&1 ||
				{ echo "bench: trace-cmd convert --compression zstd failed" >&2; return 1; }
		fi
		time_runs trace-cmd report -i "$d/host-z.dat" -i "$d/guest-z.dat"
		tc=$cpu tr=$rss ta=$anon ts=$cpu_spread
		G="--guest g1=$d/g1 --offsets $d/tsc_offsets --no-progress"
		# shellcheck disable=SC2086
		time_runs "$M" --host "$d/host-z.dat" $G
		vc=$cpu vr=$rss va=$anon vs=$cpu_spread
		# shellcheck disable=SC2086
		time_runs "$M" --host "$d/host.dat" $G
		fr=$rss
		[ -n "$keep" ] || rm -rf "$d"
		awk -v n="$n" -v tc="$tc" -v tr="$tr" -v ta="$ta" -v vc="$vc" -v vr="$vr" \
		    -v va="$va" -v fr="$fr" 'BEGIN { if (vc <= 0) vc = 0.005
			printf "%9d | %7.2f %9d %9d | %7.2f %9d %9d | %9d | %6.2fx\n",
				n, tc, tr, ta, vc, vr, va, fr, tc / vc }'
		echo "bench: $n events, CPU s of the $runs runs (min-max): trace-cmd report $ts, vtrace-merge $vs"
	done
	echo "bench: x CPU = trace-cmd report CPU seconds / vtrace-merge CPU seconds (higher is faster)"
}

if [ -n "$explain" ]; then explain_bench; elif [ -n "$scale" ]; then scale_curve
elif [ -n "$compressed" ]; then compressed_curve; else single; fi
