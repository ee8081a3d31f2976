#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's "kselftest" part: selftests/vtrace run in place on a KVM host,
# L1 of the test bed, as a user runs them on a real host.  Here: install the
# selftests in the kselftest layout (build/ksft/vtrace, build/ksft/
# kselftest-list.txt) with the kernel's own runner (run_kselftest.sh and
# kselftest/, from Debian's linux-source-6.1), then boot L1 with
# selftests/vtrace/ksft_l1.sh.  KTAP.
set -u
cd "$(dirname "$0")/.."
proj=$PWD
kver=${KVER:-$(testbed/default-kver.sh)} || exit 1
ksft=$proj/build/ksft
src=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -1)

echo "KTAP version 1"
if [ -z "$src" ]; then
	echo "1..0 # SKIP no /usr/src/linux-source-*.tar.xz (apt-get install linux-source-6.1)"
	echo "kselftest: 0 passed, 1 failed"
	exit 1
fi
rm -rf "$ksft"
mkdir -p "$ksft"
runner=$proj/build/ksft-runner/$(basename "$src" .tar.xz)
if [ ! -f "$runner/run_kselftest.sh" ]; then
	top=$(basename "$src" .tar.xz)/tools/testing/selftests
	mkdir -p "$runner"
	tar -xJf "$src" -C "$runner" --strip-components=4 "$top/run_kselftest.sh" \
		"$top/kselftest/runner.sh" "$top/kselftest/prefix.pl" || exit 1
fi
cp -r "$runner"/* "$ksft/"
if ! make -s -C selftests/vtrace install INSTALL_PATH="$ksft/vtrace" L2_KVER="$kver" \
	> build/ksft-install.log 2>&1; then
	sed 's/^/# /' build/ksft-install.log
	echo "kselftest: 0 passed, 1 failed"
	exit 1
fi
make -s -C selftests/vtrace emit_tests > "$ksft/kselftest-list.txt"
out=$proj/build/testbed/kselftest
# the nested bed's own failures (testbed/bed-glitch.sh) run it again, at most three times
. testbed/bed-retry.sh
bed_retry 4 "$out" "$out.run.log" testbed/run-l1.sh --kver "$kver" --out "$out" --timeout 900 \
	selftests/vtrace/ksft_l1.sh
rc=$?
cat "$out/l1-script.out" 2>/dev/null
sed 's/^/# /' "$out.run.log"
p=$(grep -c '^ok ' "$out/l1-script.out" 2>/dev/null)
f=$(grep -c '^not ok ' "$out/l1-script.out" 2>/dev/null)
[ "$rc" -eq 0 ] || [ "${f:-0}" -gt 0 ] || f=1
echo "kselftest: ${p:-0} passed, ${f:-0} failed"
[ "$rc" -eq 0 ]
