#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What the L2 guest scripts share (sourced as /tests/lib.sh): KTAP lines on the console, status numbers.
D=/sys/kernel/debug/vtrace
n=0
t() {	# t RC NAME: one "vtg: ok N NAME" line, which the L1 suite turns into a result
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "vtg: ok $n $2"; else echo "vtg: not ok $n $2"; fi
}
col() {	# col CPU FIELD: a number of the status table
	awk -v c="$1" -v f="$2" '$1 == c && NF == 11 { print $f }' $D/status
}
waitfor() {	# waitfor SECONDS COMMAND...: poll until COMMAND succeeds
	s=$1
	shift
	i=0
	while [ $i -lt $((s * 10)) ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
enabled() { [ "$(cat $D/enable)" = "$1" ]; }	# enabled 0|1: the module's enable reads so
