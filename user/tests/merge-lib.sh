# SPDX-License-Identifier: GPL-2.0
# merge-lib.sh: what the vtrace-merge tests share (test-merge.sh and
# test-explain.sh source it from tests/): the binaries, a temporary folder,
# KTAP, and run/expect_error.  Prints the KTAP version line.
here=$PWD
M=${VTRACE_BINDIR:-$here/..}/vtrace-merge
GEN="python3 $here/gen.py"
T=$(mktemp -d "/tmp/vtrace-${0##*/}.XXXXXX")
trap 'rm -rf "$T"' EXIT
n=0

echo "KTAP version 1"
. "$here/ktap.sh"
# renumber the KTAP lines of a sub-check
relay() {
	while IFS= read -r line; do
		case $line in
		"ok "*|"not ok "*)
			n=$((n + 1))
			echo "$line" | sed -E "s/^(not )?ok [0-9]+/\1ok $n/" ;;
		*)	echo "$line" ;;
		esac
	done
}
guests() {
	python3 -c "import json,sys; print(' '.join('--guest ' + g for g in
		json.load(open(sys.argv[1]))['guests']))" "$1/stats.json"
}
# run vtrace-merge; never a crash or a hang: exit 0 or 1 only
run() {
	timeout 20 "$M" "$@" > "$T/out" 2> "$T/err"
	rc=$?
	return $rc
}
# expect_error NAME STRING ARGS...: exit 1 and STRING in the error message
expect_error() {
	local name=$1 want=$2
	shift 2
	run "$@"
	if [ $rc -eq 1 ] && grep -qF -- "$want" "$T/err"; then
		ok 0 "$name"
	else
		ok 1 "$name" "exit $rc, stderr: $(head -c 300 "$T/err"), expected: $want"
	fi
}
