#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo, host side (runs in the test bed's L1): capture host + guest while a
# host task steals the physical CPU under the guest's cyclictest vCPU.
. "$VTRACE_PROJ/testbed/lib.sh"
set -u
out=$VTRACE_OUT
secs=${1:-20}

step() { echo "demo: $*"; }

modprobe kvm_amd
insmod "$VTRACE_HOST_KO" || exit 1

step "recording the host with trace-cmd (-C x86-tsc), the offset history (-e vtrace_host), the vCPUs' kvm_entry/kvm_exit, the host's tick and its timers too"
(cd /tmp && exec trace-cmd record -q -C x86-tsc -b 8192 -e vtrace_host -e sched:sched_switch \
	-e sched:sched_wakeup -e kvm:kvm_entry -e kvm:kvm_exit -e irq_vectors:local_timer_entry \
	-e timer:hrtimer_start -e timer:hrtimer_expire_entry \
	-o /tmp/host.dat) \
	> "$out/trace-cmd.log" 2>&1 &
tc=$!
sleep 3

step "starting the guest: 2 vCPUs, cyclictest on vCPU 1 for ${secs}s"
l2_start guest /tests/e2e_cyclic.sh --hostroot --vtrace-args --cpus 2 --mem 768 --arg "$secs" \
	--timeout $((secs + 120))
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
# the hog must come while cyclictest measures: its binary comes over 9p, slow to start
for ((i = 0; i < 300; i++)); do
	grep -q "# cyclictest running" "$out/guest/console.log" 2>/dev/null && break
	sleep 1
done

sleep $((secs / 4))
step "host task e2e_hog takes host CPU 1 for 50 ms bursts, every 700 ms, for 5 s"
"$VTRACE_PROJ/build/helpers/e2e_hog" 1 5 50000 700000 20

l2_wait
kill -INT "$tc"
wait "$tc"
cp /tmp/host.dat "$out/host.dat"
rmmod vtrace_host
grep -a "T: 0" "$out/guest/console.log" | sed 's/^/demo: guest cyclictest: /'
step "capture done"
