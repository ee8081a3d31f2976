#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo, host side (runs in the test bed's L1): "vtrace record" captures host
# + guest while a host task steals the physical CPU under the guest's cyclictest vCPU.
. "$VTRACE_PROJ/testbed/lib.sh"
set -u
out=$VTRACE_OUT
secs=${1:-20}
cap=/tmp/capture	# L1's tmpfs: trace-cmd writes at memory speed, not over the 9p share

step() { echo "demo: $*"; }
# guest_said TEXT SECONDS: wait until the guest's console shows TEXT
guest_said() {
	local i
	for ((i = 0; i < $2; i++)); do
		grep -q "$1" "$out/guest/console.log" 2> /dev/null && return 0
		sleep 1
	done
	return 1
}

modprobe kvm_amd
insmod "$VTRACE_HOST_KO" || exit 1
# trace-cmd starts while the guest runs: no text patch for its events then
l1_hold_events sched/sched_switch sched/sched_wakeup kvm/kvm_entry kvm/kvm_exit \
	irq_vectors/local_timer_entry irq/irq_handler_entry irq/irq_handler_exit \
	irq/softirq_entry irq/softirq_exit timer/hrtimer_start timer/hrtimer_expire_entry ||
	echo "demo: could not hold L1's events (text patches while the guest runs)" >&2

step "starting the guest: 2 vCPUs, its vtrace control port a socket (agent mode)"
l2_start guest /tests/e2e_cyclic.sh --hostroot --ctl socket --data-dir /tmp/guest \
	--cpus 2 --mem 768 --arg "$secs" --timeout $((secs + 300))
# pinned as soon as QEMU has the thread, before the guest boots: every wake-up of
# cyclictest then ran on host CPU 1 (pinned once cyclictest ran, the first ones ran on CPU 0)
vcpu=
for ((i = 0; i < 300; i++)); do
	vcpu=$(l2_vcpu_tid guest 1 2> /dev/null) && break
	sleep 0.2
done
if [ -z "$vcpu" ]; then
	echo "demo: QEMU has no thread \"CPU 1/KVM\" after 60 s; see $out/guest/" >&2
	exit 1
fi
step "vCPU 1 is host thread $vcpu; pinning it to host CPU 1"
taskset -pc 1 "$vcpu" > /dev/null
if ! guest_said "vtg: # agent ready" 300; then
	echo "demo: the guest did not load vtrace_guest; see $out/guest/console.log" >&2
	exit 1
fi

step "vtrace record --qemu $(cat "$out/guest/qemu.pid") until the guest's cyclictest ends (${secs}s)"
"$VTRACE_PROJ/user/vtrace" record -o "$cap" --qemu "$(cat "$out/guest/qemu.pid")" \
	-e "sched:sched_switch sched:sched_wakeup timer:hrtimer_start timer:hrtimer_expire_entry timer:hrtimer_expire_exit irq_vectors:local_timer_entry" \
	-- bash -c "$(declare -f guest_said); out='$out'; guest_said 'vtg: # cyclictest done' $((secs + 240))" \
	> "$out/record.log" 2>&1 &
rec=$!
# the hog must come while cyclictest measures: its binary comes over 9p, slow to start
guest_said "vtg: # cyclictest running" 300
sleep $((secs / 4))
step "host task e2e_hog takes host CPU 1 for 50 ms bursts, every 700 ms, for 5 s"
"$VTRACE_PROJ/build/helpers/e2e_hog" 1 5 50000 700000 20

wait "$rec"
rc=$?
l2_wait
rmmod vtrace_host
cp -r "$cap" "$out/capture"
# the capture's last line names the folder the demo merges: the copy in build/demo
sed "s/^/demo: /; /merge it with/s|$cap|$out/capture|g" "$out/record.log"
grep -a "T: 0" "$out/guest/console.log" | sed 's/^/demo: guest cyclictest: /'
[ $rc -eq 0 ] || { echo "demo: vtrace record failed (exit $rc); see $out/record.log" >&2; exit 1; }
step "capture done"
