#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test-bench.sh: bench/merge.sh runs end to end at a tiny size (its numbers are not checked).
cd "$(dirname "$0")/../.." || exit 1
echo "KTAP version 1"
echo "1..2"
if ! command -v trace-cmd > /dev/null || [ ! -x /usr/bin/time ]; then
	echo "ok 1 bench_merge_tiny # SKIP trace-cmd or /usr/bin/time missing"
	echo "ok 2 bench_merge_compressed_tiny # SKIP trace-cmd or /usr/bin/time missing"
	exit 0
fi
out=$(bench/merge.sh --events 4000 --runs 1 2>&1)
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c 'x ' <<< "$out")" -ge 6 ]; then
	echo "ok 1 bench_merge_tiny"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 1 bench_merge_tiny"
fi
# the compressed case: one row with both tools' CPU seconds and peak RSS, and their spread
out=$(bench/merge.sh --compressed 4000 --runs 1 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -Eq '^ +4000 \| +[0-9.]+ +[0-9]+ +[0-9]+ \| +[0-9.]+ +[0-9]+ +[0-9]+ \| +[0-9]+ \| +[0-9.]+x$' <<< "$out" &&
	grep -q '^bench: 4000 events, CPU s of the 1 runs (min-max): trace-cmd report [0-9.]*-[0-9.]*, vtrace-merge [0-9.]*-[0-9.]*$' <<< "$out"; then
	echo "ok 2 bench_merge_compressed_tiny"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 2 bench_merge_compressed_tiny"
fi
