// SPDX-License-Identifier: GPL-2.0
/* e2e_lat: a guest timer task in short sleeps, beside an exit-heavy loop or a task above it. */
/*
 * On CPU, as task NAME at SCHED_FIFO priority 50, for SECONDS: sleep
 * PERIOD_US, again and again.  The sleeps are relative (clock_nanosleep
 * without TIMER_ABSTIME), so a wake-up the host delayed delays only itself:
 * a host task that holds the vCPU's host CPU for one burst makes one late
 * wake-up (cyclictest's absolute sleeps would make the following ones late
 * too, their due times already past).
 *
 * With LOAD, a SCHED_OTHER child on the same CPU (task e2e_load, so that
 * NAME's wake-ups are the timer's alone) runs an exit-heavy loop for the
 * same time: LOAD a number, a byte written to that I/O port again and again
 * through /dev/port (each write an exit the host's QEMU handles: "io" on
 * AMD); "cpuid", the CPUID instruction (an exit KVM handles itself); "msr",
 * writes of MSR_K7_HWCR (0xc0010015) through /dev/cpu/CPU/msr (module msr),
 * the value read from it written back, 64 writes a write(2) (an exit KVM
 * handles itself, "msr": a guest cannot write an MSR from user space, and
 * the batch keeps the system calls' own time out of the loop; HWCR because
 * KVM emulates it on every x86 host and takes its own value back as is).
 * When the timer fires, the vCPU is most likely in the host for one of
 * them.  The timer task preempts the loop in the guest.
 *
 * With "burst N BURST_US EVERY_US" instead, the child is task e2e_burst at
 * SCHED_FIFO priority 60, above the timer task, on the same CPU: after
 * 0.2 s, N times, it spins BURST_US then sleeps until EVERY_US from the
 * burst's start.  A wake-up of NAME due during a burst waits for its end.
 *
 *   e2e_lat NAME CPU SECONDS PERIOD_US [PORT|cpuid|msr|burst N BURST_US EVERY_US]
 *
 * Prints "e2e_lat NAME: W wake-ups" and, with a loop, "e2e_lat NAME: N LOAD
 * exits" (the loop's own count), with bursts "e2e_lat NAME: N bursts of
 * BURST_US us", or how the child failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define MSR_K7_HWCR	0xc0010015
#define MSR_BATCH	64	/* MSR writes a write(2) */

static void cpuid(void)
{
	unsigned int a = 0, b, c = 0, d;

	asm volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
}

/* the child's MSR loop: HWCR's own value written back, MSR_BATCH times a write(2) */
static int msr_loop(const char *name, int cpu, double seconds, unsigned long *n)
{
	double end = now_s() + seconds;
	unsigned long long v[MSR_BATCH];
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
	fd = open(path, O_RDWR);
	if (fd < 0 || pread(fd, &v[0], 8, MSR_K7_HWCR) != 8) {
		printf("e2e_lat %s: %s: read of MSR 0x%x: %s\n", name, path, MSR_K7_HWCR,
		       strerror(errno));
		return 1;
	}
	for (int i = 1; i < MSR_BATCH; i++)
		v[i] = v[0];
	do {
		if (pwrite(fd, v, sizeof(v), MSR_K7_HWCR) != sizeof(v)) {
			printf("e2e_lat %s: write of MSR 0x%x: %s\n", name, MSR_K7_HWCR,
			       strerror(errno));
			return 1;
		}
		*n += MSR_BATCH;
	} while (now_s() < end);
	close(fd);
	return 0;
}

/*
 * the child: exits until SECONDS are over (port < 0: CPUID), the time read
 * every 64.  A port is written through /dev/port (the kernel's OUTB, one
 * write(2) each): OUTB from user space after ioperm() took a SIGSEGV in the
 * test bed's L2 (QEMU TCG's nested SVM), as if the TSS I/O bitmap did not count.
 */
static int load_loop(const char *name, const char *load, int cpu, int port, double seconds)
{
	double end = now_s() + seconds;
	unsigned long n = 0;
	char zero = 0;
	int fd = -1;

	if (!strcmp(load, "msr")) {
		if (msr_loop(name, cpu, seconds, &n))
			return 1;
		goto done;
	}
	if (port >= 0) {
		fd = open("/dev/port", O_WRONLY);
		if (fd < 0) {
			printf("e2e_lat %s: /dev/port: %s\n", name, strerror(errno));
			return 1;
		}
	}
	do {
		for (int i = 0; i < 64; i++, n++) {
			if (port < 0) {
				cpuid();
			} else if (pwrite(fd, &zero, 1, port) != 1) {
				printf("e2e_lat %s: /dev/port write: %s\n", name, strerror(errno));
				return 1;
			}
		}
	} while (now_s() < end);
done:
	printf("e2e_lat %s: %lu %s exits\n", name, n, load);
	return 0;
}

/* the child at SCHED_FIFO 60: N bursts of burst_us, one every every_us, after 0.2 s */
static int burst_loop(const char *name, long n, long burst_us, long every_us)
{
	struct sched_param sp = { .sched_priority = 60 };
	struct timespec nap = { 0, 200 * 1000000 };
	long i;

	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		printf("e2e_lat %s: e2e_burst SCHED_FIFO 60: %s\n", name, strerror(errno));
		return 1;
	}
	nanosleep(&nap, NULL);
	for (i = 0; i < n; i++) {
		double t = now_s();

		while (now_s() - t < burst_us / 1e6)
			;
		nap.tv_sec = (every_us - burst_us) / 1000000;
		nap.tv_nsec = (every_us - burst_us) % 1000000 * 1000;
		nanosleep(&nap, NULL);
	}
	printf("e2e_lat %s: %ld bursts of %ld us\n", name, i, burst_us);
	return 0;
}

static int timer_loop(const char *name, double seconds, long period_us)
{
	struct sched_param sp = { .sched_priority = 50 };
	struct timespec nap = { period_us / 1000000, period_us % 1000000 * 1000 };
	double end = now_s() + seconds;
	unsigned long n = 0;

	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "e2e_lat %s: SCHED_FIFO: %s\n", name, strerror(errno));
		return 1;
	}
	while (now_s() < end) {
		clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
		n++;
	}
	printf("e2e_lat %s: %lu wake-ups\n", name, n);
	return 0;
}

int main(int argc, char **argv)
{
	long period_us, burst[3] = { 0 };
	int port = -1, rc, status = 0;
	const char *load = NULL;
	pid_t child = 0;
	double seconds;
	cpu_set_t set;

	if (argc < 5) {
		fprintf(stderr, "usage: e2e_lat NAME CPU SECONDS PERIOD_US "
			"[PORT|cpuid|msr|burst N BURST_US EVERY_US]\n");
		return 2;
	}
	seconds = atof(argv[3]);
	period_us = atol(argv[4]);
	if (argc > 5) {
		load = argv[5];
		if (!strcmp(load, "burst"))
			for (int i = 0; i < 3 && argc == 9; i++)
				burst[i] = atol(argv[6 + i]);
		else if (strcmp(load, "cpuid") && strcmp(load, "msr"))
			port = strtol(load, NULL, 0);
	}
	if (period_us <= 0 || seconds <= 0 || port > 0xffff ||
	    (load && !strcmp(load, "burst") &&
	     (burst[0] <= 0 || burst[1] <= 0 || burst[2] <= burst[1]))) {
		fprintf(stderr, "e2e_lat: need SECONDS > 0, PERIOD_US > 0, LOAD a port, cpuid, msr "
			"or burst N > 0 BURST_US > 0 EVERY_US > BURST_US\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[2]), &set);
	if (sched_setaffinity(0, sizeof(set), &set) || prctl(PR_SET_NAME, argv[1])) {
		fprintf(stderr, "e2e_lat %s: cpu %s: %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}
	fflush(stdout);
	if (load) {
		child = fork();
		if (child < 0) {
			perror("e2e_lat: fork");
			return 1;
		}
		if (child == 0) {
			if (burst[0]) {
				prctl(PR_SET_NAME, "e2e_burst");
				return burst_loop(argv[1], burst[0], burst[1], burst[2]);
			}
			prctl(PR_SET_NAME, "e2e_load");
			return load_loop(argv[1], load, atoi(argv[2]), port, seconds);
		}
	}
	rc = timer_loop(argv[1], seconds, period_us);
	if (child > 0) {
		if (rc)
			kill(child, SIGKILL);
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			printf("e2e_lat %s: the %s child failed: %s %d\n", argv[1], load,
			       WIFSIGNALED(status) ? "signal" : "exit status",
			       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			rc = 1;
		}
	}
	return rc;
}
