#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The second half of l1/record.sh, run on this machine once L1 has ended:
# vtrace-merge, --explain and vtrace dat take the captures vtrace record made,
# the folder alone.  Each guest's self-check verified on its own vCPU threads
# (the manifest's), the plain guest's too; the capture that lost a guest
# merges the other with a warning naming the dead one.
. "$VTRACE_PROJ/testbed/lib.sh"

M=$VTRACE_PROJ/user/vtrace-merge
V=$VTRACE_PROJ/user/vtrace
out=$VTRACE_OUT
cap=$out/cap
ktap_header 8

"$M" "$cap" > "$out/merged.txt" 2> "$out/merge.err"
rc=$?
sed 's/^/# /' "$out/merge.err"
[ $rc -eq 0 ] && grep -q "self-check: .* outside (tolerance 1000 ns), alignment error at most [0-9]* ns: verified$" "$out/merge.err"
ktap_result $? merge_capture_verified
# trace-cmd's own shortfall: each CPU's entries + read events at its stop (trace-cmd
# report --stat) against the events trace-cmd report prints of it
tc_lacks() {	# tc_lacks DAT: "cpu C: LACK of STAT" for each CPU whose file lacks events
	local stat=$out/tc-stat.txt
	trace-cmd report --stat -i "$1" > "$stat" 2> /dev/null
	trace-cmd report -i "$1" 2> /dev/null |
		awk -v stat="$stat" '
		BEGIN { while ((getline l < stat) > 0) {
				if (l ~ /^CPU: /) { split(l, a, " "); c = a[2] }
				else if (l ~ /^entries: /) { split(l, a, " "); s[c] += a[2] }
				else if (l ~ /^read events: /) { split(l, a, " "); s[c] += a[3] } } }
		match($0, /\[[0-9]+\]/) { n[substr($0, RSTART + 1, RLENGTH - 2) + 0]++ }
		END {	for (c = 0; c in s; c++)
				if (n[c] < s[c]) {
					printf "%scpu %d: %d of %d", sep, c, s[c] - n[c], s[c]
					sep = "; "
				} }'
}
# A capture whose host.dat lacks events by trace-cmd's own counts gets the merge's warning
# with those counts, and no other: in the bed, 2 recordings of 11 lacked about a page of a
# CPU (84, 93 events), their sched_switch chains and kvm_entry/exit pairs unbroken
lacks=$(tc_lacks "$cap/host.dat")
warns=$(grep warning "$out/merge.err")
if [ -n "$lacks" ]; then
	ktap_diag "trace-cmd's host.dat lacks events by trace-cmd's own counts: $lacks"
	[ "$warns" = "vtrace-merge: warning: $cap/host.dat: events trace-cmd counted at its stop (read, and left in the kernel's buffer: trace-cmd report --stat) but the file lacks: $lacks (trace-cmd stopped before it read them all)" ]
else
	[ -z "$warns" ]
fi
ktap_result $? merge_capture_no_warning_but_trace_cmds_own_loss "$warns"
# each guest CPU verified on a thread of its own QEMU (manifest: guest-pid, guest-vcpu)
r=0
while read -r name; do
	pid=$(sed -n "/^guest $name\$/,/^guest-status/s/^guest-pid //p" "$cap/manifest")
	for c in 0 1; do
		line=$(grep "self-check: guest $name cpu $c: " "$out/merge.err")
		tid=$(sed -n 's/.* of host tid \([0-9]*\) .*/\1/p' <<< "$line")
		grep -q "^guest-vcpu $c idx -\?[0-9]* tid $tid\$" \
			<(sed -n "/^guest $name\$/,/^guest-status/p" "$cap/manifest") &&
			grep -q " 0 outside" <<< "$line" || { r=1; echo "# $name cpu $c: $line"; }
	done
	echo "# guest $name (pid $pid): its vCPU threads verified"
done < <(sed -n 's/^guest //p' "$cap/manifest")
ktap_result $r merge_each_guest_on_its_own_threads
[ "$(grep -c '^' "$out/merged.txt")" -gt 1000 ] &&
	[ "$(awk '{print $1}' "$out/merged.txt" | sort -u | grep -c .)" -ge 3 ]
ktap_result $? merge_capture_has_host_and_guests "$(head -3 "$out/merged.txt")"

"$M" "$cap" --explain --worst 1 > "$out/explain.txt" 2> "$out/explain.err"
rc=$?
sed 's/^/# /' "$out/explain.txt" | head -40
[ $rc -eq 0 ] && grep -q "^Late wake-ups" "$out/explain.txt"
ktap_result $? explain_capture "$(cat "$out/explain.err")"

"$V" dat "$cap" --out "$out/dat" > "$out/dat.out" 2>&1
rc=$?
[ $rc -eq 0 ] && [ -s "$out/dat/host.dat" ] && [ "$(ls "$out/dat"/*.dat | wc -l)" -eq 3 ]
ktap_result $? dat_capture "$(cat "$out/dat.out")"

"$M" "$out/cap-died" > "$out/merged-died.txt" 2> "$out/merge-died.err"
rc=$?
sed 's/^/# /' "$out/merge-died.err"
[ $rc -eq 0 ] && grep -q "warning: $out/cap-died: guest g2 left out: died: " "$out/merge-died.err" &&
	grep -q "verified$" "$out/merge-died.err"
ktap_result $? merge_capture_with_a_dead_guest
! awk '$1 == "g2"' "$out/merged-died.txt" | grep -q .
ktap_result $? merge_dead_guest_left_out
ktap_finish
