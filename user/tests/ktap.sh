# SPDX-License-Identifier: GPL-2.0
# ktap.sh: KTAP result lines for the shell tests (sourced; $n counts the results).
n=0
ok() {	# ok CONDITION-EXIT-CODE NAME [DIAGNOSTIC]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		[ -n "${3:-}" ] && echo "# $3"
		echo "not ok $n $2"
	fi
}
skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}
