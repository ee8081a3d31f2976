#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's "clone" part: a git clone of this tree under /tmp (where many
# clone to try vtrace) builds, and runs the selftests as a user runs them on
# a real host (scripts/check-kselftest.sh: the kselftest layout and runner,
# in L1 of the test bed) from there, as a new user would: the smoke suite in
# the tree, the guest suite installed.  The clone has what is committed
# (HEAD), not uncommitted changes.  Its logs are kept in build/clone/ when a
# test fails.  KTAP.
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
	echo "not ok 2 clone under /tmp: kselftest # SKIP not built"
	echo "clone: 0 passed, 2 failed"
	exit 1
fi
# the kernel's runner, once extracted from linux-source, is reused
[ -d build/ksft-runner ] && mkdir -p "$clone/vtrace/build" &&
	cp -r build/ksft-runner "$clone/vtrace/build/"
"$clone/vtrace/scripts/check-kselftest.sh" > "$clone/kselftest.log" 2>&1
rc=$?
sed 's/^/    /' "$clone/kselftest.log"
p=$(grep -c '^ok ' "$clone/kselftest.log")
f=$(grep -c '^not ok ' "$clone/kselftest.log")
[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
if [ "$f" -eq 0 ] && [ "$p" -gt 0 ]; then
	echo "ok 2 clone under /tmp: kselftest ($p tests passed)"
	echo "clone: $((1 + p)) passed, 0 failed"
	exit 0
fi
rm -rf build/clone
mkdir -p build/clone
cp -r "$clone/kselftest.log" "$clone/vtrace/build/testbed" build/clone/ 2>/dev/null
echo "# logs in build/clone/"
echo "not ok 2 clone under /tmp: kselftest (exit $rc)"
echo "clone: $((1 + p)) passed, $f failed"
exit 1
