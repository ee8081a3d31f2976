# SPDX-License-Identifier: GPL-2.0
# What the vtrace_guest suites (selftests/vtrace/l1/guest*.sh) share: sourced after testbed/lib.sh.

# l2_results NAME PREFIX: the guest's "vtg: ok N name" lines as results here
l2_results() {
	local line tmp=$VTRACE_OUT/$1.ktap
	l2_ktap "$1" > "$tmp"
	while read -r line; do
		case "$line" in
		"ok "*)		ktap_result 0 "$2_${line#ok * }" ;;
		"not ok "*)	ktap_result 1 "$2_${line#not ok * }" ;;
		esac
	done < "$tmp"
}

# checker NAME TEST ARGS...: guest_check.py on the guest's port files, one result
checker() {
	local name=$1 test=$2 out rc
	shift 2
	out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_check.py" "$VTRACE_OUT/$name" "$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	ktap_result $rc "$test"
}
