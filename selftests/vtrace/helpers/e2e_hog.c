// SPDX-License-Identifier: GPL-2.0
/* e2e_hog: a host task that takes a CPU away from a vCPU thread, in bursts. */
/*
 * Pinned to CPU, at SCHED_FIFO priority PRIO (0: SCHED_OTHER), for SECONDS: spin BURST_US
 * microseconds, then sleep PERIOD_US - BURST_US, again and again.  Used by
 * the demo: a vCPU thread pinned to the same CPU cannot run during a burst,
 * so the guest's timers fire late by about BURST_US.
 *
 *   e2e_hog CPU SECONDS BURST_US PERIOD_US [PRIO [BURSTS [-]]]
 *
 * With BURSTS, at most that many bursts (a test that counts what they did).
 * With "-", pinned and at its priority, it first reads a line from stdin:
 * a test starts it early and says when (its exec and set-up, as a normal
 * task on CPU, would delay the vCPU too).  SECONDS count from then.
 * Prints "e2e_hog: N bursts of BURST_US us on cpu CPU" at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 10 };
	long long end, burst, period, t, bursts = -1, n = 0;
	struct timespec nap;
	cpu_set_t set;
	int cpu;

	if (argc < 5) {
		fprintf(stderr, "usage: e2e_hog CPU SECONDS BURST_US PERIOD_US [PRIO [BURSTS]]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	burst = atoll(argv[3]);
	period = atoll(argv[4]);
	if (argc > 5)
		sp.sched_priority = atoi(argv[5]);
	if (argc > 6)
		bursts = atoll(argv[6]);
	if (burst <= 0 || period <= burst) {
		fprintf(stderr, "e2e_hog: need 0 < BURST_US < PERIOD_US\n");
		return 2;
	}

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    (sp.sched_priority && sched_setscheduler(0, SCHED_FIFO, &sp))) {
		fprintf(stderr, "e2e_hog: cpu %d prio %d: %s\n", cpu, sp.sched_priority,
			strerror(errno));
		return 1;
	}
	if (argc > 7 && !strcmp(argv[7], "-")) {
		char line[64];

		if (!fgets(line, sizeof(line), stdin)) {
			fprintf(stderr, "e2e_hog: no start line on stdin\n");
			return 1;
		}
	}
	end = now_us() + atoll(argv[2]) * 1000000LL;
	nap.tv_sec = 0;
	nap.tv_nsec = (period - burst) * 1000;
	while ((t = now_us()) < end && n != bursts) {
		while (now_us() - t < burst)
			;
		n++;
		nanosleep(&nap, NULL);
	}
	printf("e2e_hog: %lld bursts of %lld us on cpu %d\n", n, burst, cpu);
	return 0;
}
