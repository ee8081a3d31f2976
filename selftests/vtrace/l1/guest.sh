#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_guest data path: markers of every CPU reach the host's cpuK files, metadata, EOS counters.
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/guest-lib.sh"

# markers_in_order FILE COUNT: every CPU's "vtg-mark cpu=K seq=N" of a vtrace-merge or
# trace-cmd report text, N = 0..COUNT-1 each once and in order, on CPU K, for CPUs 0 and 1
markers_in_order() {
	python3 - "$1" "$2" <<'EOF'
import re, sys
seqs = {}
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"\[0*(\d+)\].*vtg-mark cpu=(\d+) seq=(\d+)", line)
    if m:
        seqs.setdefault(int(m.group(2)), []).append((int(m.group(1)), int(m.group(3))))
n = int(sys.argv[2])
bad = [c for c in (0, 1) if seqs.get(c) != [(c, i) for i in range(n)]]
print("# markers per CPU: %s%s" % ({c: len(s) for c, s in sorted(seqs.items())},
                                   ", CPU %s not 0..%d in order" % (bad, n - 1) if bad else ""))
sys.exit(1 if bad else 0)
EOF
}

ktap_header 26
modprobe kvm_amd
l2_run gdata /tests/guest_data.sh --cpus 2 --arg 3000 --timeout 240
ktap_result $? "data_l2_runs"
l2_results gdata data
G=$VTRACE_OUT/gdata
if grep -q 'subbuf_8k_session # SKIP' "$G/console.log"; then
	checker gdata data_host_side --markers 3000 --console "$G/console.log"
	for t in 8k 16k; do
		ktap_skip "data_host_side_subbuf_$t" "no buffer_subbuf_size_kb in the guest (before 6.8)"
		ktap_skip "subbuf_${t}_merge" "no buffer_subbuf_size_kb in the guest (before 6.8)"
	done
	ktap_skip subbuf_8k_dat_trace_cmd_report "no buffer_subbuf_size_kb in the guest (before 6.8)"
	ktap_skip subbuf_8k_overrun_host_side "no buffer_subbuf_size_kb in the guest (before 6.8)"
else
	# sessions: 1 at 4 KiB, 2 at 8 KiB, 3 at 16 KiB, the same 3000 markers per CPU;
	# 4 at 8 KiB with overruns
	checker gdata data_host_side --sessions 4 --session 1 --markers 3000 \
		--console "$G/console.log"
	s=2
	for t in 8k 16k; do
		checker gdata "data_host_side_subbuf_$t" --sessions 4 --session $s --markers 3000 \
			--console "$G/console.log" --extract "$G-$t"
		s=$((s + 1))
		# the session alone, merged: every marker once, in order, nothing lost
		"$VTRACE_PROJ/user/vtrace-merge" -q --guest "g=$G-$t,offset=0" --raw-tsc \
			> "$G-$t/merged" 2> "$G-$t/merge.err" &&
			"$VTRACE_PROJ/user/vtrace-merge" -q --guest "g=$G-$t,offset=0" --stats \
				> "$G-$t/stats" 2>> "$G-$t/merge.err" &&
			markers_in_order "$G-$t/merged" 3000 &&
			[ "$(awk '$1 == "g" { n++; if ($6 + $7 + $8) bad++ } END { print n + 0, bad + 0 }' \
				"$G-$t/stats")" = "2 0" ]
		ktap_result $? "subbuf_${t}_merge"
		cat "$G-$t/stats" "$G-$t/merge.err" 2> /dev/null | sed 's/^/# /'
	done
	# session 4: every marker delivered or counted lost where the page headers say, the
	# ring, status and EOS agree, and so does vtrace-merge --stats of the session alone
	python3 "$VTRACE_PROJ/selftests/vtrace/guest_check.py" "$G" --sessions 4 --session 4 \
		--accounting --console "$G/console.log" --extract "$G-acct" > /dev/null 2>&1
	"$VTRACE_PROJ/user/vtrace-merge" -q --guest "g=$G-acct,offset=0" --stats \
		> "$G-acct/stats.txt" 2>&1
	checker gdata subbuf_8k_overrun_host_side --sessions 4 --session 4 --accounting \
		--console "$G/console.log" --merge-stats "$G-acct/stats.txt"
	# vtrace dat of the 8 KiB session (no host: offset 0 for both vCPUs), read by trace-cmd;
	# the made-up history holds to the end of time (vtrace dat refuses, as vtrace-merge
	# does, an event after a history's "# end")
	X=$G-8k
	command -v trace-cmd > /dev/null || X=
	[ -n "$X" ] && {
		echo "# seq host_tsc pid vm vcpu_id vcpu_idx prev_offset offset multiplier frac_bits kind"
		for c in 0 1; do
			echo "$c 0 $(cat "$X/qemu.pid") $(cat "$X/qemu.pid")-1 $c $c 0 0 4294967296 32 write"
		done
		echo "# end host_tsc=18446744073709551615 records=2 dropped=0"
	} > "$X/tsc_offsets" &&
	"$VTRACE_PROJ/user/vtrace" dat --guest "g=$X" --offsets "$X/tsc_offsets" --out "$X/dat" \
		> /dev/null 2> "$X/dat.err" &&
		trace-cmd report -i "$X/dat/g.dat" > "$X/report" 2> "$X/report.err" &&
		! grep -qiE "error|fail|warn" "$X/report.err" &&
		trace-cmd dump --summary -i "$X/dat/g.dat" 2>&1 | grep -qE "^\s+8192\s+\[Page size" &&
		markers_in_order "$X/report" 3000
	rc=$?
	if [ -z "$X" ]; then
		ktap_skip subbuf_8k_dat_trace_cmd_report "trace-cmd not installed"
	else
		ktap_result $rc subbuf_8k_dat_trace_cmd_report
		cat "$X/dat.err" "$X/report.err" 2> /dev/null | sed 's/^/# /'
	fi
fi
sed -n 's/\r$//; s/^vtg-\(status\|time\|dmesg\): /# \1: /p' "$G/console.log"
ls -l "$G" | sed 's/^/# /'

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/*.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
