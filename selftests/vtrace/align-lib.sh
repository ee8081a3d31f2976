# SPDX-License-Identifier: GPL-2.0
# Alignment selftest, host side (sourced by l1/align*.sh inside L1).
#
# align_case NAME COUNT TSCWRITE...: run one guest per TSCWRITE argument, all at
# once, each emitting COUNT numbered marker pairs per vCPU around a
# hypercall (TSCWRITE 1: that guest adds 3e9 cycles to its vCPU 1's TSC
# half-way through, 0: its offsets never change); record
# the host's kvm_hypercall events with trace-cmd (-C x86-tsc), merge with
# vtrace-merge, and check every hypercall falls between its two markers.
# Prints KTAP results; the checker's report (ordered %, slack, the
# start/end-sample comparison) goes into the KTAP diagnostics.

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
	insmod "$VTRACE_HOST_KO" capacity=1048576 || { ktap_result 1 "$name"; return; }

	(cd /tmp && exec trace-cmd record -q -C x86-tsc -e kvm:kvm_hypercall \
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
		--tsc-khz "$(cat "$dir/tsc_khz")" "${args[@]}" --format jsonl \
		> "$dir/merged.jsonl" 2> "$dir/merge.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		ktap_result 1 "$name" "vtrace-merge failed ($rc):" "$(head -5 "$dir/merge.err")"
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
}
