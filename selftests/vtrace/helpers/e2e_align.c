// SPDX-License-Identifier: GPL-2.0
/* e2e_align: numbered guest markers around a hypercall, for the alignment selftest. */
/*
 * On one CPU, COUNT times:
 *
 *   trace_marker  "vtrace-align c=CPU n=I before"
 *   vmmcall       RAX=NR RBX=CPU RCX=I RDX=TAG  (the host traces kvm_hypercall)
 *   trace_marker  "vtrace-align c=CPU n=I after"
 *
 * KVM refuses a hypercall from CPL 3, but traces it (nr, a0..a3) first, so
 * the host's kvm_hypercall event is a marker that must fall between the two
 * guest markers on one correct timeline.
 *
 *   e2e_align CPU COUNT [MARKER_FILE] [NR] [SLEEP_US] [TAG] [FIRST]
 *
 * Samples are numbered FIRST .. FIRST+COUNT-1 (default FIRST 0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pin_open.h"

static void hypercall(unsigned long nr, unsigned long a0, unsigned long a1, unsigned long a2)
{
	unsigned long ret;

	asm volatile("vmmcall" : "=a"(ret) : "a"(nr), "b"(a0), "c"(a1), "d"(a2) : "memory");
	(void)ret;
}

static int mark(int fd, int cpu, long i, const char *when)
{
	char buf[64];
	int len = snprintf(buf, sizeof(buf), "vtrace-align c=%d n=%ld %s", cpu, i, when);

	return write(fd, buf, len) == len ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *marker = "/sys/kernel/tracing/instances/vtrace/trace_marker";
	unsigned long nr = 0x7654;
	unsigned long tag = 0;
	long count, i, first = 0, sleep_us = 0;
	int cpu, fd;

	if (argc < 3) {
		fprintf(stderr, "usage: e2e_align CPU COUNT [MARKER_FILE] [NR] [SLEEP_US] [TAG] [FIRST]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	count = atol(argv[2]);
	if (argc > 3)
		marker = argv[3];
	if (argc > 4)
		nr = strtoul(argv[4], NULL, 0);
	if (argc > 5)
		sleep_us = atol(argv[5]);
	if (argc > 6)
		tag = strtoul(argv[6], NULL, 0);
	if (argc > 7)
		first = atol(argv[7]);

	fd = pin_open("e2e_align", cpu, marker, O_WRONLY);
	if (fd < 0)
		return 1;
	for (i = first; i < first + count; i++) {
		if (mark(fd, cpu, i, "before"))
			goto error;
		hypercall(nr, cpu, i, tag);
		if (mark(fd, cpu, i, "after"))
			goto error;
		if (sleep_us)
			usleep(sleep_us);
	}
	close(fd);
	return 0;
error:
	fprintf(stderr, "e2e_align: write %s: %s\n", marker, strerror(errno));
	close(fd);
	return 1;
}
