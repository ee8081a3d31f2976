#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_host with an unstable host TSC: KVM rewrites offsets at every vCPU load; unload under that load.
# vtrace-l1: --no-tsc-reliable --timeout 600 --no-kvm-pin
#
# Without tsc=reliable, L1's KVM rewrites each vCPU's offset whenever the
# vCPU is loaded (hundreds of writes a second).  The module must keep up
# (prev_offset chains without a break), survive unload/reload in the
# middle of it, and, once QEMU is stopped (SIGSTOP: no vCPU loads, no
# writes), hold exactly KVM's offsets.  Creation writes, made before the
# vCPU has an index, say vcpu_idx -1; a read of tsc_offsets in small
# pieces while the writes flow ends with one exact trailer; the teardown
# writes (KVM loads each vCPU after it freed the VM's debugfs folder)
# carry the VM's identity, three times with a reload in between; and the
# vtrace/ folder is shared with vtrace_guest (L1 is a guest too).
. "$VTRACE_PROJ/testbed/lib.sh"

D=/sys/kernel/debug/vtrace
KD=/sys/kernel/debug/kvm
KO=$VTRACE_HOST_KO
GKO=$(dirname "$KO")/../guest/vtrace_guest.ko
[ -z "${VTRACE_KMOD_DIR:-}" ] || GKO=$VTRACE_KMOD_DIR/vtrace_guest.ko
RDTSC=$VTRACE_PROJ/build/helpers/host_rdtsc

records() {
	grep -v '^#' "$D/tsc_offsets"
}

stat_of() {
	awk -v k="$1" '$1 == k { print $2 }' "$D/stats"
}

chain_ok() {	# every write's prev_offset is its vCPU's offset before
	records | awk '$11 != "snapshot" && ($5 in last) && last[$5] != $7 { bad = 1 }
		       { last[$5] = $8 } END { exit bad }'
}

# creation_idx VM: each vCPU's records start with vcpu_idx -1 (written while
# KVM creates it), then only its index (= vcpu_id here); prints "-1 then i"
# counts per vCPU
creation_idx() {
	records | awk -v vm="$1" '$4 != vm { next }
		$6 == -1 { if (later[$5]) bad = 1; early[$5]++; next }
		{ later[$5]++; if ($6 != $5) bad = 1 }
		END { for (v in later) { printf "vcpu%s:%d,%d ", v, early[v], later[v]
			if (!early[v]) bad = 1 }
		      exit bad || length(later) != 2 }'
}

# trailer_ok: a read in 200-byte pieces while writes flow: records seq 0..R-1,
# then only "# dropped"/"# vm_dropped" lines, then "# end host_tsc=T
# records=R dropped=D" with T between host TSC readings around the read
trailer_ok() {
	local b a copy=$VTRACE_OUT/tsc_offsets.copy last t r
	b=$("$RDTSC")
	dd if="$D/tsc_offsets" of="$copy" bs=200 2> /dev/null
	a=$("$RDTSC")
	last=$(tail -1 "$copy")
	ktap_diag "read between $b and $a: $(grep -c . "$copy") lines, last: $last"
	grep '^# [dv]' "$copy" | while read -r l; do ktap_diag "$l"; done
	[[ $last =~ ^"# end host_tsc="([0-9]+)" records="([0-9]+)" dropped="([0-9]+)$ ]] || return 1
	t=${BASH_REMATCH[1]} r=${BASH_REMATCH[2]}
	[ "$t" -ge "$b" ] && [ "$t" -le "$a" ] && [ "$(grep -c '^# end' "$copy")" = 1 ] &&
		[ "${BASH_REMATCH[3]}" -le "$(stat_of dropped)" ] || return 1
	awk -v r="$r" 'NR <= 2 { next } /^# (dropped|vm_dropped) / { if (n == r) next }
		/^# end / { exit !(n == r) } /^#/ { exit 1 } $1 != n++ { exit 1 }' "$copy"
}

# teardown GUEST: a VM that never runs (QEMU -S, 2 vCPUs) is created and
# killed; the writes of its teardown (after its host TSC reading) are there,
# for both vCPUs, with its pid, name and indexes
teardown() {
	local dir=$VTRACE_OUT/$1 qpid vm t n i
	mkdir -p "$dir"
	qemu-system-x86_64 -enable-kvm -cpu host,xsave=off -smp 2 -m 64 -S -display none \
		-monitor none -serial none -pidfile "$dir/qemu.pid" > "$dir/qemu.log" 2>&1 &
	for ((i = 0; i < 300; i++)); do
		qpid=$(cat "$dir/qemu.pid" 2>/dev/null) && vm=$(cd "$KD" && ls -d "$qpid"-* 2>/dev/null) &&
			[ "$(records | awk -v vm="$vm" '$4 == vm && $6 >= 0' | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	sleep 1
	t=$("$RDTSC")
	kill "$qpid"
	wait
	n=$(records | awk -v t="$t" '$2 > t' | wc -l)
	ktap_diag "$1: VM $vm: $n records after its kill, $(records | awk -v t="$t" '$2 > t { print $3, $4, $5, $6 }' | sort | uniq -c | tr -s ' \n' ' ')"
	[ -n "$vm" ] && [ "$(stat_of anomalies)" = 0 ] &&
		records | awk -v t="$t" -v p="$qpid" -v vm="$vm" '$2 <= t { next }
			{ n[$5]++; if ($3 != p || $4 != vm || $6 != $5) bad = 1 }
			END { exit bad || !n[0] || !n[1] }'
}

# shared_dir: vtrace_guest (L1 is a guest of L0) and vtrace_host in one
# vtrace/ folder, either one unloaded first; the folder goes with the last
files() {	# the files in vtrace/, sorted, on one line
	find "$D" -mindepth 1 -printf '%f\n' 2>/dev/null | sort | tr '\n' ' '
}

shared_dir() {
	insmod "$KO" && insmod "$GKO" || return 1
	ktap_diag "both loaded: $(files)"
	[ "$(files)" = "enable events stats status tsc_khz tsc_offsets vms " ] || return 1
	rmmod vtrace_host && [ "$(files)" = "enable events status " ] || return 1
	insmod "$KO" && rmmod vtrace_guest && [ "$(files)" = "stats tsc_khz tsc_offsets vms " ] ||
		return 1
	rmmod vtrace_host && [ ! -e "$D" ] || return 1
	insmod "$GKO" && insmod "$KO" && rmmod vtrace_guest && rmmod vtrace_host && [ ! -e "$D" ]
}

ktap_header 10
modprobe kvm_amd
insmod "$KO"
l2_start u /tests/host_idle.sh --cpus 2 --ports 0 --ctl none --timeout 200
for ((i = 0; i < 600; i++)); do
	grep -q "vtg: booted" "$VTRACE_OUT/u/console.log" 2>/dev/null && break
	sleep 0.2
done
sleep 3
qpid=$(cat "$VTRACE_OUT/u/qemu.pid")
vm=$(cd "$KD" && ls -d "$qpid"-* | head -1)
# KVM says so when the first SMP VM starts; L1 6.12 keeps its TSC stable here
stable=
dmesg | grep -q "host with unstable TSC" || stable="the host TSC is stable (KVM never said 'unstable TSC')"
ktap_diag "host TSC: ${stable:-unstable}"

n=$(records | wc -l)
ktap_diag "$n records since load, $(stat_of dropped) dropped," \
	"host TSC span of the kept ones: $(records | awk 'NR == 1 { f = $2 } { l = $2 } END { printf "%.0f", l - f }')"
if [ -n "$stable" ]; then
	ktap_skip "many_writes_recorded_for_the_vm" "$stable"
	ktap_skip "creation_records_without_index_then_right_index" "$stable"
else
	[ "$n" -gt 100 ] && [ "$(stat_of anomalies)" = 0 ] &&
		[ -z "$(records | awk -v vm="$vm" '$4 != vm')" ]
	ktap_result $? "many_writes_recorded_for_the_vm"

	ktap_diag "vcpu_idx -1 and then the index, records per vCPU: $(creation_idx "$vm")"
	creation_idx "$vm" > /dev/null && [ "$(awk -v vm="$vm" '$2 == vm { print $3 }' "$D/vms")" = 2 ]
	ktap_result $? "creation_records_without_index_then_right_index"
fi

trailer_ok
ktap_result $? "complete_read_ends_with_exact_trailer"

chain_ok
ktap_result $? "offset_chain_unbroken_under_load"

rc=0
for ((i = 0; i < 10; i++)); do
	rmmod vtrace_host && insmod "$KO" || rc=1
	sleep 0.3
done
ktap_result $rc "unload_reload_while_offsets_are_written"

kill -STOP "$qpid"
sleep 2
want=$(for f in "$KD/$vm"/vcpu*/tsc-offset; do
	id=${f%/tsc-offset}; echo "${id##*/vcpu} $(cat "$f")"; done | sort -n)
got=$(records | awk '{ last[$5] = $8 } END { for (v in last) print v, last[v] }' | sort -n)
ktap_diag "KVM: $(echo $want)" "module: $(echo $got)" "records since last load: $(records | wc -l)"
[ -n "$want" ] && [ "$want" = "$got" ]
ktap_result $? "offsets_equal_kvm_once_vm_stopped"
chain_ok
ktap_result $? "offset_chain_unbroken_after_reload"
kill -CONT "$qpid"
kill "$qpid"
l2_wait
rmmod vtrace_host

if [ -n "$stable" ]; then
	ktap_skip "teardown_writes_keep_the_vm_identity" "$stable"
else
	rc=0
	for i in 1 2 3; do
		insmod "$KO" && teardown "td$i" || rc=1
		rmmod vtrace_host || rc=1
	done
	ktap_result $rc "teardown_writes_keep_the_vm_identity"
fi

if [ -f "$GKO" ]; then
	shared_dir
	ktap_result $? "vtrace_folder_shared_with_vtrace_guest"
else
	ktap_skip "vtrace_folder_shared_with_vtrace_guest" "no $GKO"
fi

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/u/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
