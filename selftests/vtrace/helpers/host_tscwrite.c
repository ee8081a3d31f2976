// SPDX-License-Identifier: GPL-2.0
/* host_tscwrite: move one CPU's TSC by a signed delta through /dev/cpu/N/msr. */
/*
 *   host_tscwrite CPU DELTA [tsc|adjust]
 *
 * "tsc" (default) writes IA32_TSC (0x10) with rdtsc() + DELTA, read on that
 * CPU; "adjust" adds DELTA to IA32_TSC_ADJUST (0x3b).  Either way KVM on
 * the host changes the vCPU's TSC offset by about DELTA.  Prints the values
 * written.  Needs module msr.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MSR_IA32_TSC		0x10
#define MSR_IA32_TSC_ADJUST	0x3b

static uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	int adjust = argc > 3 && !strcmp(argv[3], "adjust");
	uint64_t val, old = 0;
	char path[64];
	int64_t delta;
	int cpu, fd;

	if (argc < 3) {
		fprintf(stderr, "usage: host_tscwrite CPU DELTA [tsc|adjust]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	delta = strtoll(argv[2], NULL, 0);
	if (pin(cpu)) {
		perror("sched_setaffinity");
		return 1;
	}
	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
	fd = open(path, O_RDWR);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	if (adjust && pread(fd, &old, 8, MSR_IA32_TSC_ADJUST) != 8) {
		perror("read IA32_TSC_ADJUST");
		return 1;
	}
	val = adjust ? old + delta : rdtsc_ordered() + delta;
	if (pwrite(fd, &val, 8, adjust ? MSR_IA32_TSC_ADJUST : MSR_IA32_TSC) != 8) {
		perror("write msr");
		return 1;
	}
	printf("cpu %d %s %llu\n", cpu, adjust ? "tsc_adjust" : "tsc", (unsigned long long)val);
	close(fd);
	return 0;
}
