// SPDX-License-Identifier: GPL-2.0
/* host_vms: make KVM VMs of one vCPU that write TSC offsets, without a guest. */
/*
 *   host_vms churn N		make and close N VMs, one after the other
 *   host_vms remake		make a VM, close it, make another: the second
 *				gets the first's descriptor, so the same
 *				"PID-FD" name under KVM's debugfs
 *   host_vms hold WRITES MS	make a VM and write its vCPU's IA32_TSC
 *				(KVM_SET_MSRS) WRITES times, MS ms apart
 *   host_vms steps N...	make a VM and write its IA32_TSC N times per
 *				step, as fast as it can; after each step
 *				print "wrote N" and, but after the last, wait
 *				for a line on stdin (the caller's go)
 *
 * Each VM's vCPU creation makes KVM write its TSC offset, and each
 * IA32_TSC write from userspace another: the records vtrace_host keeps.
 * Prints "vm PID-FD" for each VM made by remake, hold and steps, and exits 0
 * when every ioctl succeeded.
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define MSR_IA32_TSC	0x10

struct vm {
	int fd;
	int vcpu;
};

static int make_vm(int kvm, struct vm *vm)
{
	vm->fd = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm->fd < 0) {
		perror("KVM_CREATE_VM");
		return -1;
	}
	/*
	 * An in-kernel APIC, as QEMU makes: a vCPU without one switches
	 * KVM's static key kvm_has_noapic_vcpu on at its creation and off at
	 * its end, a text patch each time, which the nested test bed's TCG
	 * may run stale (Documentation/testbed.rst): 300 VMs, 600 patches
	 */
	if (ioctl(vm->fd, KVM_CREATE_IRQCHIP, 0)) {
		perror("KVM_CREATE_IRQCHIP");
		close(vm->fd);
		return -1;
	}
	vm->vcpu = ioctl(vm->fd, KVM_CREATE_VCPU, 0);
	if (vm->vcpu < 0) {
		perror("KVM_CREATE_VCPU");
		close(vm->fd);
		return -1;
	}
	return 0;
}

static void close_vm(struct vm *vm)
{
	close(vm->vcpu);
	close(vm->fd);
}

static int write_tsc(const struct vm *vm, unsigned long long value)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entry;
	} msrs;

	memset(&msrs, 0, sizeof(msrs));
	msrs.hdr.nmsrs = 1;
	msrs.entry.index = MSR_IA32_TSC;
	msrs.entry.data = value;
	if (ioctl(vm->vcpu, KVM_SET_MSRS, &msrs) != 1) {
		perror("KVM_SET_MSRS");
		return -1;
	}
	return 0;
}

/* steps: the writes of each step, a line on stdin between two */
static int steps(const struct vm *vm, int argc, char **argv)
{
	char line[64];
	long i, n;
	int s;

	for (s = 0; s < argc; s++) {
		n = atol(argv[s]);
		for (i = 0; i < n; i++)
			if (write_tsc(vm, 1000000ULL * (i + 1)))
				return 1;
		printf("wrote %ld\n", n);
		fflush(stdout);
		if (s + 1 < argc && !fgets(line, sizeof(line), stdin))
			return 1;
	}
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	struct vm vm;
	long i, n;
	int kvm;

	if (argc < 2) {
		fprintf(stderr, "usage: host_vms churn N | remake | hold WRITES MS | steps N...\n");
		return 2;
	}
	kvm = open("/dev/kvm", O_RDWR);
	if (kvm < 0) {
		perror("/dev/kvm");
		return 1;
	}
	if (!strcmp(argv[1], "churn") && argc == 3) {
		n = atol(argv[2]);
		for (i = 0; i < n; i++) {
			if (make_vm(kvm, &vm))
				return 1;
			close_vm(&vm);
		}
		return 0;
	}
	if (!strcmp(argv[1], "remake")) {
		for (i = 0; i < 2; i++) {
			if (make_vm(kvm, &vm))
				return 1;
			printf("vm %d-%d\n", getpid(), vm.fd);
			fflush(stdout);
			if (write_tsc(&vm, 1000000ULL * (i + 1)))
				return 1;
			close_vm(&vm);
		}
		return 0;
	}
	if (!strcmp(argv[1], "hold") && argc == 4) {
		n = atol(argv[2]);
		if (make_vm(kvm, &vm))
			return 1;
		printf("vm %d-%d\n", getpid(), vm.fd);
		fflush(stdout);
		for (i = 0; i < n; i++) {
			if (write_tsc(&vm, 1000000ULL * (i + 1)))
				return 1;
			sleep_ms(atol(argv[3]));
		}
		close_vm(&vm);
		return 0;
	}
	if (!strcmp(argv[1], "steps") && argc > 2) {
		if (make_vm(kvm, &vm))
			return 1;
		printf("vm %d-%d\n", getpid(), vm.fd);
		fflush(stdout);
		if (steps(&vm, argc - 2, argv + 2))
			return 1;
		close_vm(&vm);
		return 0;
	}
	fprintf(stderr, "usage: host_vms churn N | remake | hold WRITES MS | steps N...\n");
	return 2;
}
