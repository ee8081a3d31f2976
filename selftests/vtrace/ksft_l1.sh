#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's "kselftest" part, inside the test bed's L1: L1 is the real
# host here.  The bed's variables are dropped; then, as a user would:
# make -C selftests/vtrace run_tests in the tree (the smoke suite), the
# installed selftests (scripts/check-kselftest.sh put them in build/ksft)
# through the kernel's own run_kselftest.sh (the guest suite), and a skip
# (exit 4) with its reason.  KTAP.
proj=$VTRACE_PROJ out=$VTRACE_OUT
user() {	# user CMD...: run CMD with a user's environment, not the bed's
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"
}
. "$proj/testbed/ktap.sh"

ktap_header 5
# one suite each way (make check's time): smoke in the tree, guest installed
user make -s -C "$proj/selftests/vtrace" run_tests TEST_PROGS=ksft_smoke.sh \
	> "$out/run_tests.out" 2>&1
rc=$?
sed 's/^/# /' "$out/run_tests.out"
[ $rc -eq 0 ] && grep -qx 'ok 1 ksft_smoke.sh' "$out/run_tests.out" &&
	[ "$(grep -c '^    ok ' "$out/run_tests.out")" -eq 5 ] &&
	! grep -q '^    not ok ' "$out/run_tests.out"
ktap_result $? "make run_tests TEST_PROGS=ksft_smoke.sh in the tree: 5 tests, all ok"

ksft=$proj/build/ksft
user "$ksft/run_kselftest.sh" -t vtrace:ksft_guest.sh > "$out/run_kselftest.out" 2>&1
rc=$?
sed 's/^/# /' "$out/run_kselftest.out"
# as many subtests ok as the guest suite's plan says (SKIPs, with their
# reason, are the sub-buffer sessions on a guest kernel before 6.8)
plan=$(sed -n 's/^# 1\.\.\([0-9]*\)$/\1/p' "$out/run_kselftest.out" | head -1)
[ $rc -eq 0 ] && grep -qx 'ok 1 selftests: vtrace: ksft_guest.sh' "$out/run_kselftest.out" &&
	[ -n "$plan" ] && [ "$plan" -ge 15 ] &&
	[ "$(grep -c '^# ok ' "$out/run_kselftest.out")" -eq "$plan" ] &&
	! grep -q '^# not ok ' "$out/run_kselftest.out"
ktap_result $? "run_kselftest.sh -t vtrace:ksft_guest.sh (installed): ok, all ${plan:-?} subtests ok ($(grep -c '^# ok .*# SKIP' "$out/run_kselftest.out") skipped)"

user "$ksft/run_kselftest.sh" -l > "$out/list.out" 2>&1
[ "$(cat "$out/list.out")" = "$(printf 'vtrace:ksft_smoke.sh\nvtrace:ksft_guest.sh')" ]
ktap_result $? "run_kselftest.sh -l lists vtrace:ksft_smoke.sh and vtrace:ksft_guest.sh"

user L2_KVER=0.0-none "$ksft/vtrace/ksft_smoke.sh" > "$out/skip.out" 2>&1
rc=$?
sed 's/^/# /' "$out/skip.out"
[ $rc -eq 4 ] && grep -qx '# SKIP smoke: no guest kernel /boot/vmlinuz-0.0-none (set L2_KVER to an installed one)' "$out/skip.out"
ktap_result $? "a missing requirement: exit 4 and the reason"

user L2_KVER=0.0-none "$ksft/run_kselftest.sh" -t vtrace:ksft_smoke.sh > "$out/skip-runner.out" 2>&1
grep -qx 'ok 1 selftests: vtrace: ksft_smoke.sh # SKIP' "$out/skip-runner.out"
ktap_result $? "the kselftest runner reports it as SKIP"
# the guests' watchdog findings (testbed/l2-watch.sh: a reset, a restarted
# boot) of the runs above, kept with their files in L1's /tmp, where
# testbed/bed-glitch.sh looks (ci16: a guest reset after "L2 up" failed
# ksft_guest.sh, and the part was not retried as the bed's)
cat /tmp/vtrace-ksft-*/l2-boot-watchdog.txt > "$out/ksft-l2-watchdog.log" 2> /dev/null
ktap_finish > /dev/null
