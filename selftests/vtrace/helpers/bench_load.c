// SPDX-License-Identifier: GPL-2.0
/* bench_load: fixed-size trace markers at a set rate on each CPU (transport benchmark load). */
/*
 *   bench_load MARKER_FILE RATE COUNT SIZE [CPU...]    default: every online CPU
 *
 * One child per CPU, pinned with sched_setaffinity(), writes COUNT markers of
 * SIZE bytes ("bench cpu=K seq=N " padded with 'x') to MARKER_FILE, RATE per
 * second (paced in 10 ms ticks with absolute deadlines, so a late tick is
 * caught up). RATE 0 writes as fast as it can. Prints per CPU
 * "load cpu=K written=N usec=T cpu_us=U" (U: that child's CPU time) and
 * exits 1 if any write failed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "pin_open.h"

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int load(const char *marker, int cpu, long rate, long count, int size)
{
	char buf[4096];
	struct timespec ts;
	long long t0, deadline;
	long n = 0, per_tick;
	int fd, len;

	fd = pin_open("bench_load", cpu, marker, O_WRONLY);
	if (fd < 0)
		return 1;
	memset(buf, 'x', sizeof(buf));
	per_tick = rate > 0 ? (rate + 99) / 100 : count;
	t0 = now_ns();
	deadline = t0;
	while (n < count) {
		long k;

		for (k = 0; k < per_tick && n < count; k++, n++) {
			len = snprintf(buf, sizeof(buf), "bench cpu=%d seq=%ld ", cpu, n);
			buf[len] = 'x';
			if (write(fd, buf, size) != size) {
				perror("write");
				goto out;
			}
		}
		if (rate > 0) {
			/* next tick: the time at which n markers are due */
			deadline = t0 + (long long)n * 1000000000LL / rate;
			ts.tv_sec = deadline / 1000000000LL;
			ts.tv_nsec = deadline % 1000000000LL;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
out:
	close(fd);
	/* the load's own CPU time, which the bench subtracts from the guest's */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	printf("load cpu=%d written=%ld usec=%lld cpu_us=%lld\n", cpu, n, (now_ns() - t0) / 1000,
	       (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
	fflush(stdout);
	return n != count;
}

int main(int argc, char **argv)
{
	int cpus[256], nr = 0, i, status, rc = 0, size;
	long rate, count;
	cpu_set_t set;

	if (argc < 5) {
		fprintf(stderr, "usage: bench_load MARKER_FILE RATE COUNT SIZE [CPU...]\n");
		return 2;
	}
	rate = atol(argv[2]);
	count = atol(argv[3]);
	size = atoi(argv[4]);
	if (size < 32 || size > 4000) {
		fprintf(stderr, "bench_load: SIZE must be 32..4000\n");
		return 2;
	}
	if (argc > 5) {
		for (i = 5; i < argc && nr < 256; i++)
			cpus[nr++] = atoi(argv[i]);
	} else {
		if (sched_getaffinity(0, sizeof(set), &set))
			return 1;
		for (i = 0; i < CPU_SETSIZE && nr < 256; i++)
			if (CPU_ISSET(i, &set))
				cpus[nr++] = i;
	}
	for (i = 0; i < nr; i++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (p == 0)
			_exit(load(argv[1], cpus[i], rate, count, size));
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	return rc;
}
