#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's "clone" part: a git clone of this tree under /tmp (where many
# clone to try vtrace) builds and runs the smoke suite on the test bed, as a
# new user would.  The clone has what is committed (HEAD), not uncommitted
# changes.  Its logs are kept in build/clone/ when a test fails.  KTAP.
set -u
cd "$(dirname "$0")/.."
proj=$PWD
clone=$(mktemp -d /tmp/vtrace-clone.XXXXXX)
trap 'rm -rf "$clone"' EXIT

echo "KTAP version 1"
echo "1..2"
if git clone -q "$proj" "$clone/vtrace" && make -s -C "$clone/vtrace" > "$clone/build.log" 2>&1; then
	echo "ok 1 clone under /tmp builds ($clone/vtrace, $(git -C "$clone/vtrace" log -1 --format=%h))"
else
	sed 's/^/# /' "$clone/build.log" 2>/dev/null | tail -20
	echo "not ok 1 clone under /tmp builds"
	echo "not ok 2 clone under /tmp: smoke suite # SKIP not built"
	echo "clone: 0 passed, 2 failed"
	exit 1
fi
(cd "$clone/vtrace" && ./selftests/run_vm_tests.sh smoke) > "$clone/smoke.log" 2>&1
rc=$?
sed 's/^/    /' "$clone/smoke.log"
p=$(grep -c '^    ok ' "$clone/smoke.log")
if [ "$rc" -eq 0 ] && [ "$p" -gt 0 ]; then
	echo "ok 2 clone under /tmp: smoke suite ($p tests passed)"
	echo "clone: 2 passed, 0 failed"
	exit 0
fi
rm -rf build/clone
mkdir -p build/clone
cp -r "$clone/smoke.log" "$clone/vtrace/build/testbed" build/clone/ 2>/dev/null
echo "# logs in build/clone/"
echo "not ok 2 clone under /tmp: smoke suite (exit $rc)"
echo "clone: 1 passed, 1 failed"
exit 1
