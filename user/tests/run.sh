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
echo "KTAP version 1"
run_one() {
	local name=$1; shift
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	echo "# $name"
	while IFS= read -r line; do
		case $line in
		"ok "*)		passed=$((passed + 1)); echo "    $line" ;;
		"not ok "*)	failed=$((failed + 1)); echo "    $line" ;;
		*)		echo "    $line" ;;
		esac
	done <<< "$out"
	# A test program that crashed or exited non-zero without saying why fails
	if [ $rc -ne 0 ] && ! grep -q '^not ok ' <<< "$out"; then
		failed=$((failed + 1))
		echo "    not ok $name # exit code $rc"
	fi
}
for t in "${VTRACE_TEST_BINDIR:-bin}"/test-*; do
	[ -x "$t" ] && run_one "$(basename "$t")" "$t"
done
for t in test-*.sh; do
	[ -f "$t" ] && run_one "$t" bash "$t"
done
echo "unit: $passed passed, $failed failed"
[ $failed -eq 0 ]
