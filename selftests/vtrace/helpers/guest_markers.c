// SPDX-License-Identifier: GPL-2.0
/* guest_markers: write numbered trace markers to the vtrace instance, pinned on each CPU. */
/*
 *   guest_markers COUNT [CPU...]     default: every online CPU
 *
 * One child per CPU, pinned with sched_setaffinity(), writes COUNT markers
 * "vtg-mark cpu=K seq=N" (N = BASE..BASE+COUNT-1, BASE from the environment
 * variable MARK_BASE, default 0) to the instance's trace_marker.
 * MARK_WIDTH=W pads N with zeros to W digits (every marker event then has
 * the same size).  A failed write stops the CPU's child, unless
 * MARK_KEEP_GOING=1: then the marker's number is skipped, the failure
 * counted and the next marker written (a full ring buffer that does not
 * overwrite refuses writes).  MARK_BURST=B MARK_PAUSE_MS=P: sleep P ms after
 * every B markers (bursts a ring buffer cannot hold, read in the pauses).
 * Prints "markers cpu=K written=N failed=F" per CPU; exit 1 if any write
 * failed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pin_open.h"

#define MARKER	"/sys/kernel/tracing/instances/vtrace/trace_marker"

static int write_markers(int cpu, long base, long count)
{
	int width = getenv("MARK_WIDTH") ? atoi(getenv("MARK_WIDTH")) : 0;
	int keep_going = getenv("MARK_KEEP_GOING") && atoi(getenv("MARK_KEEP_GOING"));
	long burst = getenv("MARK_BURST") ? atol(getenv("MARK_BURST")) : 0;
	long pause_ms = getenv("MARK_PAUSE_MS") ? atol(getenv("MARK_PAUSE_MS")) : 0;
	long n, written = 0, failed = 0;
	char buf[64];
	int fd, len;

	fd = pin_open("guest_markers", cpu, MARKER, O_WRONLY);
	if (fd < 0)
		return 1;
	for (n = 0; n < count; n++) {
		if (burst > 0 && n && n % burst == 0)
			usleep(pause_ms * 1000);
		len = snprintf(buf, sizeof(buf), "vtg-mark cpu=%d seq=%0*ld", cpu, width, base + n);
		if (write(fd, buf, len) == len) {
			written++;
			continue;
		}
		failed++;
		if (!keep_going) {
			perror("write");
			break;
		}
	}
	close(fd);
	printf("markers cpu=%d written=%ld failed=%ld\n", cpu, written, failed);
	return written != count;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 1000;
	long base = getenv("MARK_BASE") ? atol(getenv("MARK_BASE")) : 0;
	int cpus[256], nr = 0, i, status, rc = 0;
	cpu_set_t set;

	if (argc > 2) {
		for (i = 2; i < argc && nr < 256; i++)
			cpus[nr++] = atoi(argv[i]);
	} else {
		sched_getaffinity(0, sizeof(set), &set);
		for (i = 0; i < CPU_SETSIZE && nr < 256; i++)
			if (CPU_ISSET(i, &set))
				cpus[nr++] = i;
	}
	fflush(stdout);
	for (i = 0; i < nr; i++)
		if (fork() == 0)
			exit(write_markers(cpus[i], base, count));
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	return rc;
}
