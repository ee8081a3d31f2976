#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's benchmark part: every benchmark once, at a tiny size, so that none rots.
# Not a measurement (the figures of a real run are in Documentation/benchmarks.rst):
# a benchmark passes when it runs to the end and prints its ratio lines.
set -u
cd "$(dirname "$0")/.."
. testbed/bed-retry.sh
. testbed/ktap.sh
# attempt PATTERNS CMD...: CMD's output, then "bench-check: ..." if a pattern is missing
attempt() {
	local pats p rc
	IFS=';' read -ra pats <<< "$1"
	shift
	"$@" 2>&1 | tee "$tmp"
	rc=${PIPESTATUS[0]}
	for p in "${pats[@]}"; do
		grep -Eq "$p" "$tmp" || { echo "bench-check: no line matches '$p'"; rc=1; }
	done
	return "$rc"
}
run() {	# run NAME PATTERNS CMD...: each of PATTERNS (';'-separated) must appear in the output
	local name=$1 log=build/bench-$1.log start=$SECONDS rc
	shift
	# the test bed's own failure (testbed/bed-glitch.sh): at most four attempts
	bed_retry 4 "build/bench/check/$name" "$log" attempt "$@" ||
		{ sed 's/^/# /' "$log" | tail -20; false; }
	rc=$?
	# where a slow part's time went, in CI's output too
	echo "# $name: $((SECONDS - start)) s, $BED_RETRY_TRIES attempt(s)"
	ktap_result $rc "$name"
}
# GROUP: check (make check's bench part: vtrace-merge against trace-cmd report,
# on this machine, and the transport benchmark in the nested bed with the two
# methods that start no trace-cmd, vtrace and the splice loop), merge (the
# first alone), vm (the transport benchmark with every method and the probe
# benchmark: make check-matrix's bench-vm part); none = all
group=${1:-all}
case $group in
check|merge|vm|all) ;;
*) echo "usage: bench/check.sh [check|merge|vm]" >&2; exit 2 ;;
esac
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
mkdir -p build
benches=()
[ "$group" = vm ] || benches+=(merge merge-scale merge-explain)
[ "$group" = check ] && benches+=(transport-core)
[ "$group" = vm ] || [ "$group" = all ] && benches+=(transport probe)
ktap_header ${#benches[@]}
for b in "${benches[@]}"; do
	case $b in
	merge)	run merge 'ratio|x trace-cmd' bench/merge.sh --events 20000 --runs 1 ;;
	merge-scale)
		run merge-scale '^ +8000 \|.*x$' bench/merge.sh --scale "4000 8000" --runs 1 ;;
	merge-explain)
		run merge-explain '^bench: --explain summary .*goal <= 1.5x' bench/merge.sh \
			--explain 20000 --runs 1 ;;
	transport)
		# stuck: a recorder that never records must fail within its bound (about
		# 16 s at this size) and the other methods still run
		run transport '^ratio splice/vtrace;^ratio agent/vtrace;^ratio net/vtrace;^bench: failed: stuck job 1: waiting for tracing_on 1 .*\(expected\)$' \
			bench/transport.sh --tiny --methods stuck,vtrace,splice,agent,net \
			--expect-fail stuck --out "$PWD/build/bench/check/transport" ;;
	transport-core)
		# make check's: every page vtrace moved arrived, and the ratios printed
		run transport-core '^ratio splice/vtrace;^data ports vtrace per job: L1 received what the guest moved in 1 of 1 jobs$' \
			bench/transport.sh --tiny --methods vtrace,splice \
			--out "$PWD/build/bench/check/transport-core" ;;
	probe)	run probe '^ratio vtrace_host/ftrace;^memory: ' bench/probe.sh --tiny \
			--out "$PWD/build/bench/check/probe" ;;
	esac
done
echo "bench: $ktap_pass passed, $ktap_fail failed"
[ "$ktap_fail" -eq 0 ]
