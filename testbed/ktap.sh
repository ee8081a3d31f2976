# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# KTAP output for the project's test scripts (bash): one numbering, the
# counts and the plan, written once.  testbed/lib.sh (the L1 suites) sources
# it, and so do the scripts of make check's parts that run on this machine
# (install.sh, check-kdoc.sh, test-bed.sh, ksft_l1.sh).
#
#   . testbed/ktap.sh
#   ktap_header 3; ktap_result $? "name"; ...; ktap_finish
#
# ktap_on_fail: the name of a function ktap_finish runs when the script
# failed (lib.sh: the guests' console tails); none by default.

ktap_n=0
ktap_pass=0
ktap_fail=0
ktap_skip=0
ktap_t=$SECONDS
ktap_on_fail=${ktap_on_fail:-}

ktap_header() {	# ktap_header PLAN
	ktap_plan=$1
	echo "KTAP version 1"
	echo "1..$1"
}

ktap_result() {	# ktap_result 0|1 NAME [DIAG...]: 0 = ok; DIAG lines only on failure
	local rc=$1 name=$2
	shift 2
	ktap_n=$((ktap_n + 1))
	# KTAP_TIMES=1 (the L1 suites): the seconds since the previous result
	[ -n "${KTAP_TIMES:-}" ] && echo "# $name: $((SECONDS - ktap_t)) s" && ktap_t=$SECONDS
	if [ "$rc" -eq 0 ]; then
		ktap_pass=$((ktap_pass + 1))
		echo "ok $ktap_n $name"
	else
		ktap_fail=$((ktap_fail + 1))
		[ $# -gt 0 ] && printf '# %s\n' "$@"
		echo "not ok $ktap_n $name"
	fi
}

ktap_skip() {	# ktap_skip NAME REASON
	ktap_n=$((ktap_n + 1))
	ktap_skip=$((ktap_skip + 1))
	echo "ok $ktap_n $1 # SKIP $2"
}

ktap_diag() {
	printf '# %s\n' "$@"
}

ktap_finish() {	# exit status: 1 if anything failed or a planned result is missing
	local rc=0
	echo "# totals: pass:$ktap_pass fail:$ktap_fail skip:$ktap_skip"
	# a guest that died in the middle prints fewer results than planned:
	# what did not run did not pass (guest_fault once printed 47 of 62, ok)
	if [ -n "${ktap_plan:-}" ] && [ "$ktap_n" -ne "$ktap_plan" ]; then
		echo "# planned $ktap_plan results, printed $ktap_n: the missing ones did not run"
		rc=1
	fi
	[ "$ktap_fail" -eq 0 ] || rc=1
	[ $rc -eq 0 ] || [ -z "$ktap_on_fail" ] || "$ktap_on_fail"
	return $rc
}
