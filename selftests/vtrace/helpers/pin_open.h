/* SPDX-License-Identifier: GPL-2.0 */
/* pin_open.h: what the marker-writing helpers do first (included after _GNU_SOURCE). */
#ifndef VTRACE_HELPERS_PIN_OPEN_H
#define VTRACE_HELPERS_PIN_OPEN_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

/*
 * pin_open - pin the calling process to @cpu, then open @path with @flags
 *
 * Returns the file descriptor, or -1 after printing "PROG: cpu N: ..." or
 * "PROG: PATH: ..." to stderr.
 */
static inline int pin_open(const char *prog, int cpu, const char *path, int flags)
{
	cpu_set_t set;
	int fd;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "%s: cpu %d: %s\n", prog, cpu, strerror(errno));
		return -1;
	}
	fd = open(path, flags);
	if (fd < 0)
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
	return fd;
}

#endif
