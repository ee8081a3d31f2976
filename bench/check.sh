#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's benchmark part: every benchmark once, at a tiny size, so that none rots.
# Not a measurement (the figures of a real run are in Documentation/benchmarks.rst):
# a benchmark passes when it runs to the end and prints its ratio lines.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 n=0
run() {	# run NAME PATTERNS CMD...: each of PATTERNS (';'-separated) must appear in the output
	local name=$1 pats=$2 log=build/bench-$1.log ok try glitch p
	shift 2
	n=$((n + 1))
	IFS=';' read -ra pats <<< "$pats"
	for try in 1 2; do
		ok=1
		rm -rf "build/bench/check/$name"
		"$@" > "$log" 2>&1 || ok=
		for p in "${pats[@]}"; do
			grep -Eq "$p" "$log" || ok=
		done
		# the test bed's own failure (testbed/bed-glitch.sh): once more
		[ -z "$ok" ] && [ "$try" -eq 1 ] &&
			glitch=$(testbed/bed-glitch.sh "build/bench/check/$name") || break
		sed 's/^/# bed glitch: /' <<< "$glitch"
		rm -rf "build/bench/check/$name.glitch"
		mv "build/bench/check/$name" "build/bench/check/$name.glitch"
		echo "# $name: the test bed failed, not vtrace (Documentation/testbed.rst); logs in build/bench/check/$name.glitch, running it once more"
	done
	if [ -n "$ok" ]; then
		pass=$((pass + 1)); echo "ok $n $name"
	else
		fail=$((fail + 1)); sed 's/^/# /' "$log" | tail -20; echo "not ok $n $name"
	fi
}
mkdir -p build
echo "KTAP version 1"
echo "1..4"
run merge 'ratio|x trace-cmd' bench/merge.sh --events 20000 --runs 1
run merge-scale '^ +8000 \|.*x$' bench/merge.sh --scale "4000 8000" --runs 1
run transport '^ratio splice/vtrace;^ratio agent/vtrace;^ratio net/vtrace' bench/transport.sh --tiny --out "$PWD/build/bench/check/transport"
run probe '^ratio vtrace_host/ftrace;^memory: ' bench/probe.sh --tiny --out "$PWD/build/bench/check/probe"
echo "bench: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
