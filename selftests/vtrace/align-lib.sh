# SPDX-License-Identifier: GPL-2.0
# Alignment selftest, host side (sourced by l1/align*.sh inside L1).
#
# align_case NAME COUNT TSCWRITE...: run one guest per TSCWRITE argument, all at
# once, each emitting COUNT numbered marker pairs per vCPU around a
# hypercall (TSCWRITE 1: that guest adds 3e9 cycles to its vCPU 1's TSC
# half-way through, 0: its offsets never change); record
# the host's kvm_hypercall events with trace-cmd (-C x86-tsc), merge with
# vtrace-merge, and check every hypercall falls between its two markers.
# Prints two KTAP results, NAME and NAME-self-check; the checker's report
# (ordered %, slack, the start/end-sample comparison) and vtrace-merge's
# self-check summary go into the KTAP diagnostics.  The host also records
# sched_switch and kvm_entry/kvm_exit, so that vtrace-merge's self-check
# verifies every guest event against its vCPU's guest-mode windows: it must
# say "0 outside" and "verified", with every guest CPU checked.

ALIGN_MERGE=$VTRACE_PROJ/user/vtrace-merge
ALIGN_CHECK=$VTRACE_PROJ/selftests/vtrace/align_check.py

align_case() {
	local name=$1 count=$2
	shift 2
	local tscwrites=("$@") guests=$#
	local dir=$VTRACE_OUT/$name g pids=() rc args=()

	mkdir -p "$dir"
	rmmod vtrace_host 2>/dev/null
	# an unstable host TSC writes thousands of offsets a second: room for 1M records
	insmod "$VTRACE_HOST_KO" capacity=1048576 || {
		ktap_result 1 "$name"
		ktap_result 1 "$name-self-check" "not run"
		return
	}

	(cd /tmp && exec trace-cmd record -q -C x86-tsc -b 8192 -e kvm:kvm_hypercall \
		-e sched:sched_switch -e kvm:kvm_entry -e kvm:kvm_exit \
		-o "/tmp/$name-host.dat") > "$dir/trace-cmd.log" 2>&1 &
	local tc=$!
	sleep 3

	for ((g = 1; g <= guests; g++)); do
		l2_start "$name-g$g" /tests/e2e_align.sh --cpus 2 --timeout 400 --vtrace-args \
			--arg "$count,$g,${tscwrites[g - 1]}"
		pids+=("$L2_PID")
	done
	for ((g = 1; g <= guests; g++)); do
		wait "${pids[g - 1]}"
		echo $? > "$VTRACE_OUT/$name-g$g/exit"
	done
	kill -INT "$tc"
	wait "$tc"
	cp "/tmp/$name-host.dat" "$dir/host.dat"
	cat /sys/kernel/debug/vtrace/tsc_offsets > "$dir/tsc_offsets"
	cat /sys/kernel/debug/vtrace/tsc_khz > "$dir/tsc_khz"
	rmmod vtrace_host

	for ((g = 1; g <= guests; g++)); do
		args+=(--guest "g$g=$VTRACE_OUT/$name-g$g")
		l2_ktap "$name-g$g" | grep -q '^ok 1 align_guest_done' || {
			ktap_diag "guest g$g did not finish (QEMU exit $(cat "$VTRACE_OUT/$name-g$g/exit" 2>/dev/null)); the end of $VTRACE_OUT/$name-g$g/console.log:"
			tail -n 25 "$VTRACE_OUT/$name-g$g/console.log" | tr -d '\r' | while IFS= read -r l; do
				ktap_diag "  $l"
			done
		}
	done
	"$ALIGN_MERGE" --host "$dir/host.dat" --offsets "$dir/tsc_offsets" \
		--tsc-khz "$(cat "$dir/tsc_khz")" "${args[@]}" --format jsonl --event kvm_hypercall,print \
		> "$dir/merged.jsonl" 2> "$dir/merge.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		ktap_result 1 "$name" "vtrace-merge failed ($rc):" "$(head -5 "$dir/merge.err")"
		align_self_check "$name" "$dir/merge.err"
		return
	fi
	local pidargs=()
	for ((g = 1; g <= guests; g++)); do
		pidargs+=(--pid "g$g=$(cat "$VTRACE_OUT/$name-g$g/qemu.pid")")
	done
	python3 "$ALIGN_CHECK" --offsets "$dir/tsc_offsets" --samples "$count" "${pidargs[@]}" \
		--khz "$(cat "$dir/tsc_khz")" \
		--guests "$guests" "$dir/merged.jsonl" > "$dir/check.txt" 2>&1
	rc=$?
	sed 's/^/# /' "$dir/check.txt"
	ktap_result $rc "$name"
	align_self_check "$name" "$dir/merge.err"
}

# align_self_check NAME MERGE_ERR: vtrace-merge's self-check said 0 outside, every CPU checked
align_self_check() {
	local name=$1 err=$2 n
	grep 'self-check: ' "$err" | sed 's/^/# /'
	n=$(sed -nE 's/^vtrace-merge: self-check: ([0-9]+) guest events checked, 0 outside .*: verified$/\1/p' "$err")
	[ "${n:-0}" -gt 0 ] && ! grep -q 'self-check: .*unverified' "$err"
	ktap_result $? "$name-self-check"
}
