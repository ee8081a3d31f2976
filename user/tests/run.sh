#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run.sh: run every unit test of user/ and print one KTAP stream, then
# "unit: N passed, N failed" as the last line.
#
# Tests are tests/bin/test-* (C, built by "make test") and tests/test-*.sh;
# each prints "ok N name" / "not ok N name" lines.  VTRACE_TEST_BINDIR
# replaces tests/bin and VTRACE_BINDIR the folder of vtrace-merge (the
# sanitizer build, "make test-asan").
cd "$(dirname "$0")" || exit 1

passed=0
failed=0
# The tests are independent (each its own temporary folder, Xvfb on a free
# display): VTRACE_TEST_JOBS of them run at once (default: one per CPU),
# and their output is printed whole, in the order below.
jobs=${VTRACE_TEST_JOBS:-$(nproc)}
out=$(mktemp -d /tmp/vtrace-unit.XXXXXX) || exit 1
trap 'rm -rf "$out"' EXIT
# the scripts first, largest first: they run longest (test-merge.sh and
# test-interop.sh are most of the time)
tests=()
for t in $(ls -S test-*.sh 2>/dev/null); do
	tests+=("$t")
done
for t in "${VTRACE_TEST_BINDIR:-bin}"/test-*; do
	[ -x "$t" ] && tests+=("$t")
done
i=0
for t in "${tests[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	case $t in
	*.sh)	cmd=(bash "$t") ;;
	*)	cmd=("$t") ;;
	esac
	{
		start=$EPOCHREALTIME
		"${cmd[@]}" > "$out/$i.out" 2>&1
		echo $? > "$out/$i.rc"
		echo "$start $EPOCHREALTIME" > "$out/$i.time"
	} &
	i=$((i + 1))
done
wait

echo "KTAP version 1"
i=0
for t in "${tests[@]}"; do
	name=$(basename "$t")
	# with its wall time, beside the others running at once (where a slow run went)
	read -r t0 t1 < "$out/$i.time" 2> /dev/null
	echo "# $name${t1:+ ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)}"
	while IFS= read -r line; do
		case $line in
		"ok "*)		passed=$((passed + 1)); echo "    $line" ;;
		"not ok "*)	failed=$((failed + 1)); echo "    $line" ;;
		*)		echo "    $line" ;;
		esac
	done < "$out/$i.out"
	# A test program that crashed or exited non-zero without saying why fails
	rc=$(cat "$out/$i.rc" 2>/dev/null || echo 255)
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$out/$i.out"; then
		failed=$((failed + 1))
		echo "    not ok $name # exit code $rc"
	fi
	i=$((i + 1))
done
echo "unit: $passed passed, $failed failed"
[ $failed -eq 0 ]
