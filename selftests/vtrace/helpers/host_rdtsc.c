// SPDX-License-Identifier: GPL-2.0
/* host_rdtsc: print this CPU's TSC (rdtsc, ordered by lfence) in decimal. */
#include <stdio.h>
#include <stdint.h>

static uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

int main(void)
{
	printf("%llu\n", (unsigned long long)rdtsc_ordered());
	return 0;
}
