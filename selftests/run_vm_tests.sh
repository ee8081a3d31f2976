#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the VM selftests: each selftests/vtrace/l1/*.sh is one boot of the test bed's L1.
#
#   run_vm_tests.sh [SUITE...]      default: every suite, in name order
#
# Environment: KVER (kernel of L1 and L2, default: newest installed Debian
# kernel), VTRACE_VM_TESTS (space-separated suite names, same as arguments).
#
# A suite's first lines may carry "# vtrace-l1: OPTIONS" (run-l1.sh options,
# e.g. --no-tsc-reliable --timeout 900).  Each suite prints KTAP; this
# script nests them as subtests of one KTAP document and ends with the
# plain "N passed, N failed" line.  Results: build/testbed/<suite>/, or
# build/testbed/<KVER>/<suite>/ for a kernel other than the default one.
#
# A suite may have a second half, selftests/vtrace/l0/<suite>.sh, run on
# this machine once its L1 has ended, over what L1 left in the results
# folder (its own KTAP in l0-script.out): checks that need no VM, such as
# the alignment suites' merges, which take 10 to 25 times longer in L1
# under TCG.  It runs after the last attempt, whatever L1's verdict, and is
# never retried: a failure there is the tools', not the bed's.
set -u
shopt -s nullglob

here=$(cd "$(dirname "$0")" && pwd)
proj=$(cd "$here/.." && pwd)
tb=$proj/testbed
KVER=${KVER:-$("$tb/default-kver.sh")} || exit 1
export KVER

suites=("$@")
[ ${#suites[@]} -gt 0 ] || read -r -a suites <<< "${VTRACE_VM_TESTS:-}"
if [ ${#suites[@]} -eq 0 ]; then
	for f in "$here"/vtrace/l1/*.sh; do
		# "# vtrace-l1-manual: WHY": run only when named
		grep -q '^# vtrace-l1-manual:' "$f" && continue
		suites+=("$(basename "$f" .sh)")
	done
fi

# The guest image: busybox, vtrace_guest.ko, the L2 test scripts and the
# static helpers they use.  VTRACE_KMOD_DIR: where the modules to test are
# (default: the tree's kmod/; a flat folder such as DKMS output works too).
# L2_KVER: the guests' kernel when not L1's; VTRACE_L2_KMOD_DIR then names
# the folder of vtrace_guest.ko built for it.
kmod=${VTRACE_KMOD_DIR:-}
l2kver=${L2_KVER:-$KVER}
guest_ko=$proj/kmod/guest/vtrace_guest.ko
# the tree's own modules: rebuilt first when missing, older than a source
# (a stale .ko would test yesterday's code) or built for another kernel
# (the guest would refuse it: "invalid module format")
stale() {	# stale KO: KO is missing, older than kmod/ or include/, or not KVER's
	[ ! -f "$1" ] ||
		[ "$(modinfo -F vermagic "$1" 2>/dev/null | cut -d' ' -f1)" != "$KVER" ] ||
		[ -n "$(find "$proj/kmod" "$proj/include" -newer "$1" \
			\( -name '*.[ch]' -o -name Kbuild \) -print -quit)" ]
}
if [ -z "$kmod" ] && [ "$l2kver" = "$KVER" ] &&
   { stale "$guest_ko" || stale "$proj/kmod/host/vtrace_host.ko"; }; then
	echo "# kmod/'s modules are missing, older than their sources or not built for $KVER: make modules" >&2
	make -s -C "$proj" modules KVER="$KVER" >&2 || exit 1
fi
[ -z "$kmod" ] || guest_ko=$kmod/vtrace_guest.ko
[ -z "${VTRACE_L2_KMOD_DIR:-}" ] || guest_ko=$VTRACE_L2_KMOD_DIR/vtrace_guest.ko
"$tb/build-l2.sh" "$l2kver" "$guest_ko" || exit 1
# the test-only modules L1 loads from build/ (l1/guest_failinj.sh's
# vtrace_failinj.ko): build-l2.sh built them for the guests' kernel, which
# is L1's only when both run one kernel
if [ "$l2kver" != "$KVER" ]; then
	for m in failinj irqoff; do
		"$here/vtrace/build-testmod.sh" "$m" "$KVER" "$proj/build/$m/$KVER" ||
			echo "# vtrace_$m.ko not built for $KVER: the tests that load it in L1 skip" >&2
	done
fi
[ "$l2kver" = "$KVER" ] || export L2_KVER="$l2kver"

. "$tb/bed-retry.sh"
echo "KTAP version 1"
echo "# kernel $KVER, guests $l2kver"
echo "1..${#suites[@]}"
n=0 pass=0 fail=0 skip=0
for s in "${suites[@]}"; do
	n=$((n + 1))
	script=$here/vtrace/l1/$s.sh
	out=$proj/build/testbed/$s
	# another kernel than the default one: results of its own
	[ "$KVER" = "$("$tb/default-kver.sh")" ] && [ "$l2kver" = "$KVER" ] ||
		out=$proj/build/testbed/$KVER-$l2kver/$s
	mkdir -p "$out"
	opts=$(sed -n 's/^# vtrace-l1: //p' "$script" 2>/dev/null | head -1)
	start=$(date +%s)
	# the nested bed's own failure (testbed/bed-glitch.sh): at most four
	# attempts, each failed attempt's logs kept in $out.glitchN
	# shellcheck disable=SC2086
	bed_retry 4 "$out" "$out.run.log" "$tb/run-l1.sh" --out "$out" $opts "$script" |
		sed 's/^/    /'
	rc=${PIPESTATUS[0]}
	sed 's/^/    /' "$out/l1-script.out" 2>/dev/null
	sed 's/^/    # /' "$out.run.log"
	# a guest restarted by the boot watchdog (testbed/lib.sh, l2_exec)
	sed 's/^/    # /' "$out/l2-boot-watchdog.txt" 2>/dev/null
	outs=("$out/l1-script.out")
	if [ -f "$here/vtrace/l0/$s.sh" ]; then
		rm -f "$out/l0-script.out"
		echo "    # $s, second half on this machine: selftests/vtrace/l0/$s.sh"
		VTRACE_PROJ=$proj VTRACE_OUT=$out bash "$here/vtrace/l0/$s.sh" \
			> "$out/l0-script.out" 2>&1
		l0rc=$?
		sed 's/^/    /' "$out/l0-script.out"
		outs+=("$out/l0-script.out")
		# both halves must pass; a failure of the second counts below
		[ "$l0rc" -eq 0 ] || [ "$rc" -ne 0 ] || rc=1
	fi
	secs=$(($(date +%s) - start))
	p=$(cat "${outs[@]}" 2>/dev/null | grep -c '^ok ')
	f=$(cat "${outs[@]}" 2>/dev/null | grep -c '^not ok ')
	k=$(cat "${outs[@]}" 2>/dev/null | grep -c '^ok .*# SKIP')
	pass=$((pass + ${p:-0} - ${k:-0})) fail=$((fail + ${f:-0})) skip=$((skip + ${k:-0}))
	if [ "$rc" -eq 0 ]; then
		echo "ok $n $s # ${secs}s"
	else
		# A suite that died (timeout, splat) counts as one more failure.
		[ "$rc" -eq 1 ] && [ "${f:-0}" -gt 0 ] || fail=$((fail + 1))
		echo "# $s: exit $rc, logs in $out"
		echo "not ok $n $s # ${secs}s"
	fi
done
echo "vm: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
