// SPDX-License-Identifier: GPL-2.0
/* bench_tscset: time host-initiated IA32_TSC writes to an idle vCPU (host probe benchmark). */
/*
 *   bench_tscset COUNT [RATE]
 *
 * Creates a VM with one vCPU that never runs and issues COUNT KVM_SET_MSRS
 * ioctls, each writing IA32_TSC.  KVM handles a host-initiated IA32_TSC
 * write with kvm_synchronize_tsc(), which writes the vCPU's L1 TSC offset
 * through kvm_vcpu_write_tsc_offset(): one kvm_write_tsc_offset tracepoint
 * call, i.e. one vtrace_host record, per ioctl.  COUNT / 10 writes warm up
 * first (not timed).  With RATE, the timed writes are paced to RATE a
 * second (as many as are due, then a 1 ms sleep; a host too slow for RATE
 * writes without pause).  Prints "tscset count=N ns=T" (wall time of the
 * COUNT timed writes) and exits 1 if any ioctl failed.
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define MSR_IA32_TSC	0x10

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* COUNT writes of IA32_TSC on @vcpu: 0 if every ioctl wrote its one MSR */
static int write_tsc(int vcpu, long count)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entry;
	} msrs = { .hdr.nmsrs = 1, .entry.index = MSR_IA32_TSC };
	long i;

	for (i = 0; i < count; i++) {
		/* whatever the value, KVM writes the offset (__kvm_synchronize_tsc) */
		msrs.entry.data = (unsigned long long)(i + 1) * 1000000000ULL;
		if (ioctl(vcpu, KVM_SET_MSRS, &msrs) != 1) {
			perror("KVM_SET_MSRS");
			return 1;
		}
	}
	return 0;
}

/* COUNT writes at RATE a second from @t0 on: those due, then 1 ms of sleep */
static int write_paced(int vcpu, long count, long rate, long long t0)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	long done = 0, due;

	while (done < count) {
		due = (now_ns() - t0) * (double)rate / 1e9 + 1;
		if (due > count)
			due = count;
		if (due > done && write_tsc(vcpu, due - done))
			return 1;
		done = due > done ? due : done;
		if (done < count)
			nanosleep(&ms, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int kvm, vm, vcpu;
	long long t0, t1;
	long count, rate = 0;

	if (argc < 2 || argc > 3 || (count = atol(argv[1])) <= 0 ||
	    (argc == 3 && (rate = atol(argv[2])) <= 0)) {
		fprintf(stderr, "usage: bench_tscset COUNT [RATE]\n");
		return 2;
	}
	kvm = open("/dev/kvm", O_RDWR);
	if (kvm < 0) {
		perror("/dev/kvm");
		return 1;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		perror("KVM_CREATE_VM");
		return 1;
	}
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0) {
		perror("KVM_CREATE_VCPU");
		return 1;
	}
	if (write_tsc(vcpu, count / 10 + 1))
		return 1;
	t0 = now_ns();
	if (rate ? write_paced(vcpu, count, rate, t0) : write_tsc(vcpu, count))
		return 1;
	t1 = now_ns();
	printf("tscset count=%ld ns=%lld\n", count, t1 - t0);
	close(vcpu);
	close(vm);
	close(kvm);
	return 0;
}
