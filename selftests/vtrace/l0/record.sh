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
! grep -q "warning" "$out/merge.err"
ktap_result $? merge_capture_no_warning "$(grep warning "$out/merge.err")"
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
