// SPDX-License-Identifier: GPL-2.0
/*
 * e2e_tscwrite: add DELTA cycles to IA32_TSC of one CPU (through /dev/cpu/N/msr).
 *
 * Then, in a kvm-clock guest, re-register that CPU's kvm-clock area with the
 * value it has (MSR_KVM_SYSTEM_TIME_NEW): KVM does not redo a vCPU's pvclock
 * when the guest writes IA32_TSC, so that CPU's clock would run ahead of the
 * others by DELTA cycles, and the guest's timers crawl (the align suite's
 * guest took 80 s instead of 1 for its second half, sleeps of 100 us lasting
 * 4 to 600 ms on the other CPU).  The write makes KVM recompute every vCPU's
 * pvclock; the TSC offset, which the test is about, stays as written.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#define MSR_IA32_TSC		0x10
#define MSR_KVM_SYSTEM_TIME_NEW	0x4b564d01

int main(int argc, char **argv)
{
	char path[64];
	uint64_t tsc, pvclock;
	long long delta;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: e2e_tscwrite CPU DELTA\n");
		return 2;
	}
	delta = atoll(argv[2]);
	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", atoi(argv[1]));
	fd = open(path, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "e2e_tscwrite: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (pread(fd, &tsc, sizeof(tsc), MSR_IA32_TSC) != sizeof(tsc)) {
		fprintf(stderr, "e2e_tscwrite: read TSC: %s\n", strerror(errno));
		return 1;
	}
	tsc += delta;
	if (pwrite(fd, &tsc, sizeof(tsc), MSR_IA32_TSC) != sizeof(tsc)) {
		fprintf(stderr, "e2e_tscwrite: write TSC: %s\n", strerror(errno));
		return 1;
	}
	printf("e2e_tscwrite: cpu %s TSC set to %llu\n", argv[1], (unsigned long long)tsc);
	if (pread(fd, &pvclock, sizeof(pvclock), MSR_KVM_SYSTEM_TIME_NEW) == sizeof(pvclock) &&
	    (pvclock & 1)) {
		if (pwrite(fd, &pvclock, sizeof(pvclock), MSR_KVM_SYSTEM_TIME_NEW) != sizeof(pvclock)) {
			fprintf(stderr, "e2e_tscwrite: re-register kvm-clock: %s\n", strerror(errno));
			return 1;
		}
		printf("e2e_tscwrite: cpu %s kvm-clock re-registered\n", argv[1]);
	}
	close(fd);
	return 0;
}
