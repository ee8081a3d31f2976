#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test-bench.sh: bench/merge.sh runs end to end at a tiny size (its numbers are not checked).
cd "$(dirname "$0")/../.." || exit 1
echo "KTAP version 1"
echo "1..1"
if ! command -v trace-cmd > /dev/null || [ ! -x /usr/bin/time ]; then
	echo "ok 1 bench_merge_tiny # SKIP trace-cmd or /usr/bin/time missing"
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
