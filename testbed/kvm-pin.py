#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hold one idle KVM VM in L1 for the whole run, so that KVM's own static
keys stay switched on while the suites' guests come and go.

KVM switches static keys as VMs come and go: preempt notifiers
(kvm_create_vm / kvm_destroy_vm) and apic_sw_disabled (a vCPU's local APIC
is created software-disabled; the key drops, HZ later, once every guest has
enabled its APIC, i.e. while the guest runs).  Each switch is a
text_poke_bp() in L1, and under TCG a vCPU may keep running the stale copy
of patched text (Documentation/testbed.rst: the "Oops: int3" at
__apic_accept_irq, the int3 livelocks of L1 stalls).  A VM with one vCPU
that never runs keeps both keys on: no L1 text patch per guest.

Prints "kvm-pin: pid N, VM fd F, vCPU fd C" and sleeps until killed.
"""
import fcntl
import os
import signal
import sys

KVMIO = 0xAE
KVM_CREATE_VM = (KVMIO << 8) | 0x01		# _IO(KVMIO, 0x01)
KVM_CREATE_VCPU = (KVMIO << 8) | 0x41		# _IO(KVMIO, 0x41)
KVM_CREATE_IRQCHIP = (KVMIO << 8) | 0x60	# _IO(KVMIO, 0x60)


def main():
    try:
        kvm = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
        vm = fcntl.ioctl(kvm, KVM_CREATE_VM, 0)
        fcntl.ioctl(vm, KVM_CREATE_IRQCHIP, 0)
        vcpu = fcntl.ioctl(vm, KVM_CREATE_VCPU, 0)
    except OSError as e:
        print(f"kvm-pin: no idle VM ({e}): KVM's static keys will switch per guest", flush=True)
        return 1
    print(f"kvm-pin: pid {os.getpid()}, VM fd {vm}, vCPU fd {vcpu}", flush=True)
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
