#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: unit tests, module build (W=1, warnings fail; kernel-doc), the test bed's own
# watchdogs (against a fake QEMU), install and DKMS,
# benchmarks at a tiny size, a guest run by libvirt, VM selftests on the
# default kernel and the others.
# Prints KTAP per part and ends with the plain "N passed, N failed" line.
#
#   scripts/check.sh [PART...]   only these parts: unit sanitizers fuzz modules docs
#                                setup bed install bench libvirt vm clone matrix
#                                bench-vm (not in the default run)
#                                (or one matrix entry's name, e.g.
#                                vm-6.12.117+deb12-amd64); none = all
#   CHECK_MATRIX=full scripts/check.sh install bench-vm matrix
#                                the longer check (make check-matrix): the
#                                benchmarks that boot the bed, the longer
#                                kernel matrix
set -u
only=" $* "
cd "$(dirname "$0")/.."
mkdir -p build
. scripts/python3-path.sh
pass=0 fail=0 skip=0
times=() logs=()

count() {	# count LOGFILE: add the "N passed, N failed[, N skipped]" line of a part
	local line p f s
	line=$(grep -E '^[a-z-]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
	p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<< "$line")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<< "$line")
	s=$(sed -nE 's/.* ([0-9]+) skipped.*/\1/p' <<< "$line")
	pass=$((pass + ${p:-0})) fail=$((fail + ${f:-0})) skip=$((skip + ${s:-0}))
	[ -n "$line" ]
}

part() {	# part NAME CMD...: run one part, tee its log, count its results
	local name=$1
	shift
	if [ "$only" != "  " ] && [[ $only != *" $name "* ]] &&
	   ! { [[ $name == vm-* ]] && [[ $only == *" matrix "* ]]; }; then
		return 0
	fi
	echo "== $name"
	local t0=$SECONDS
	"$@" 2>&1 | tee "build/check-$name.log"
	local rc=${PIPESTATUS[0]}
	logs+=("build/check-$name.log")
	times+=("$name $((SECONDS - t0))s")
	if ! count "build/check-$name.log"; then
		# a part that printed no summary line counts once, by exit code
		if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	elif [ "$rc" -ne 0 ] && ! grep -qE '[1-9][0-9]* failed' "build/check-$name.log"; then
		fail=$((fail + 1))
	fi
}

build_modules() {
	make -s modules W=1 > build/modules.log 2>&1
	local rc=$?
	cat build/modules.log
	if [ $rc -ne 0 ]; then
		echo "modules: 0 passed, 1 failed"
		return 1
	fi
	if grep -E 'warning:' build/modules.log; then
		echo "modules: 0 passed, 1 failed (warnings above)"
		return 1
	fi
	# each module's files, and the tools' shared library, vtrace-merge's and
	# vtrace's, call each other only downward
	if ! (for d in kmod/guest kmod/host user/src/lib user/src/merge user/src/vtrace; do
		./scripts/check-layers.sh "$d" || exit 1; done); then
		echo "modules: 1 passed, 1 failed (files calling each other in a circle above)"
		return 1
	fi
	# kernel-doc finds no fault, and each function called across files has it
	if ! ./scripts/check-kdoc.sh; then
		echo "modules: 2 passed, 1 failed (kernel-doc above)"
		return 1
	fi
	echo "modules: 3 passed, 0 failed"
}

# The kernel matrix.  The default kernel (linux-image-amd64's) gets every
# VM suite with the tree's modules.  Each entry of VTRACE_MATRIX,
# "HOST[/GUEST]:SUITE,SUITE...", gets those suites with the modules DKMS
# built for its kernels.  Default: the guest suite with Debian's 6.12 as
# host and guest.  CHECK_MATRIX=full (make check-matrix) adds the
# PREEMPT_RT pair: the alignment suite (both modules) and the guest suite
# on a 6.12 PREEMPT_RT host with a 6.1 PREEMPT_RT guest.  The RT L1 is the
# bed's least reliable part: in the six fresh-clone runs that reached it
# (ci11 to ci21) its align suite was run again 4 times and took 114 to
# 309 s, where the eight 6.1 suites, six times its bed time, were run again
# 7 times.  So it runs in the longer check, not in make check, which has to
# stay under 25 minutes with its retries (Documentation/kernels.rst says
# what each entry costs and what was run).
kver=${KVER:-$(testbed/default-kver.sh)}
pkg_kver() {	# the release a Debian kernel metapackage points to
	dpkg-query -W -f='${Depends}' "$1" 2>/dev/null | sed -n 's/.*linux-image-\([^ ,]*\).*/\1/p'
}
k612=$(pkg_kver linux-image-6.12-amd64)
krt=$(pkg_kver linux-image-rt-amd64)
k612rt=$(pkg_kver linux-image-6.12-rt-amd64)
rtpair=
[ "${CHECK_MATRIX:-}" = full ] && rtpair=${k612rt:+${krt:+ $k612rt/$krt:align,guest}}
matrix=${VTRACE_MATRIX-${k612:+$k612:guest}$rtpair}
others=$(for m in $matrix; do m=${m%%:*}; echo "${m%%/*}" "${m#*/}"; done | tr ' ' '\n' |
	sort -u | grep -vx "$kver")

part unit make -s check-unit
part sanitizers make -s -C user test-asan
part fuzz make -s -C user fuzz-replay
part modules build_modules
part docs ./scripts/check-docs.sh
part setup ./scripts/check-setup.sh
part bed ./testbed/tests/test-bed.sh
# shellcheck disable=SC2086
part install ./selftests/install.sh "$kver" $others
part bench ./bench/check.sh check
# The transport benchmark with every method (the agent and -N start trace-cmd
# in L1 and L2, minutes under TCG) and the probe benchmark (215 s of a
# 26.5-minute run with no glitch, and 180 s more for each time the bed failed
# the transport run) are in the longer check (make check-matrix); make check
# runs the transport benchmark with vtrace and the splice loop only, to stay
# under 25 minutes with its retries (Documentation/benchmarks.rst)
if [ "${CHECK_MATRIX:-}" = full ] || [[ $only == *" bench-vm "* ]]; then
	part bench-vm ./bench/check.sh vm
fi
part libvirt ./scripts/check-libvirt.sh
# Every VM suite on the default kernel, but smoke and guest: the clone part
# runs both as kselftests (l1/smoke.sh in the tree, l1/guest.sh installed,
# scripts/check-kselftest.sh) from a clone under /tmp, on the same kernel.
vm_suites=()
for f in selftests/vtrace/l1/*.sh; do
	s=$(basename "$f" .sh)
	case "$s" in smoke|guest) continue ;; esac
	grep -q '^# vtrace-l1-manual:' "$f" || vm_suites+=("$s")
done
part vm ./selftests/run_vm_tests.sh "${vm_suites[@]}"
part clone ./scripts/check-clone.sh
for m in $matrix; do
	host=${m%%:*} suites=${m#*:} name=vm-${m%%:*}
	guest=${host#*/} host=${host%%/*}
	# shellcheck disable=SC2086
	part "${name//\//-}" env KVER="$host" L2_KVER="$guest" \
		VTRACE_KMOD_DIR="$PWD/build/dkms/modules/$host" \
		VTRACE_L2_KMOD_DIR="$PWD/build/dkms/modules/$guest" \
		./selftests/run_vm_tests.sh ${suites//,/ }
done

echo
# what the bed's own failures cost, where the end of the output is all one sees
# (CI): each suite or benchmark run again and each guest its boot watchdog restarted
glitches=$(cat "${logs[@]}" /dev/null 2>/dev/null | awk '
	/# bed glitch: / { sub(/.*# bed glitch: [^ ]+ /, ""); sub(/\/[^ ]*\/build\/(testbed|bench)\//, ""); why = substr($0, 1, 130) }
	/: the test bed failed, not vtrace/ { sub(/^ *# /, ""); sub(/:.*/, ""); print $0 " run again: " why }
	/# *l2 boot watchdog: / { sub(/.*\/build\/(testbed|bench)\//, ""); sub(/, no kernel report: /, ": "); print substr($0, 1, 150) }')
if [ -n "$glitches" ]; then
	echo "# the bed's own failures, $(wc -l <<< "$glitches") (Documentation/testbed.rst):"
	sed 's/^/#   /' <<< "$glitches"
else
	echo "# the bed's own failures: none"
fi
echo "# time per part: ${times[*]}; in all $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "check: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
