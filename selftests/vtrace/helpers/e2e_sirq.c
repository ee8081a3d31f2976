// SPDX-License-Identifier: GPL-2.0
/* e2e_sirq: network softirq work on one host CPU, sent from another (loopback UDP, RPS). */
/*
 * The host's part of a test that needs softirq work on the CPU a vCPU
 * thread runs on, with no task of its own there: loopback is brought up,
 * its receive queue steered to CPU alone (RPS, rps_cpus), and from FROM
 * (another CPU) UDP datagrams of 64 bytes go to 127.0.0.1:PORT for SECONDS.
 * Each is received on CPU, in its NET_RX softirq (an IPI from FROM, then
 * net_rx_action when the interrupt returns, or ksoftirqd/CPU once the
 * softirq has run too long), whatever task runs there.  The socket bound to
 * PORT is never read, and a socket filter of 4096 instructions (classic
 * BPF: 4095 additions, then "drop") makes the softirq's work for each
 * datagram long enough to keep CPU busy (about 25,000 datagrams a second
 * left one host CPU of the nested test bed, TCG, for the other's softirq:
 * without the filter, that softirq took 7% of the CPU's time).  The filter
 * (32 KiB) is more than 6.1's default net.core.optmem_max (20 KiB, the
 * most a socket may hold): raised to OPTMEM for the run.  rps_cpus and
 * optmem_max are set back to what they were at the end.
 *
 *   e2e_sirq CPU FROM SECONDS [-]
 *
 * With "-", ready (socket bound, pinned), it first reads a line from stdin.
 * Prints "e2e_sirq: N datagrams in S s to cpu CPU's softirq, host TSC A to B":
 * A and B the TSC (the x86-tsc trace clock) read right before the first
 * datagram and right after the last, the flood's span on the host trace's
 * time line.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define RPS_CPUS	"/sys/class/net/lo/queues/rx-0/rps_cpus"
#define OPTMEM_MAX	"/proc/sys/net/core/optmem_max"
#define OPTMEM		"262144\n"
#define PORT		9919

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc = -1;

	if (fd >= 0 && !ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* write @val into @path, the old value into @old (if not NULL) */
static int file_set(const char *path, const char *val, char *old, size_t len)
{
	FILE *f = fopen(path, "r+");
	int rc = -1;

	if (!f)
		return -1;
	if (old && !fgets(old, len, f))
		goto out;
	rewind(f);
	rc = fputs(val, f) < 0 ? -1 : 0;
out:
	if (fclose(f))
		rc = -1;
	return rc;
}

/* the socket that takes the datagrams, each through BPF_MAXINSNS filter instructions */
static int bind_sink(struct sockaddr_in *to)
{
	static struct sock_filter insns[BPF_MAXINSNS];
	struct sock_fprog prog = { .len = BPF_MAXINSNS, .filter = insns };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	for (int i = 0; i < BPF_MAXINSNS - 1; i++)
		insns[i] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1);
	insns[BPF_MAXINSNS - 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)to, sizeof(*to)) ||
	    setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		return -1;
	return fd;
}

/* set both back */
static void restore(const char *rps, const char *optmem)
{
	file_set(RPS_CPUS, rps, NULL, 0);
	if (*optmem)
		file_set(OPTMEM_MAX, optmem, NULL, 0);
}

int main(int argc, char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	char old[64] = "", optmem[32] = "", mask[32], buf[64] = { 0 };
	unsigned long long tsc0, tsc1;
	unsigned long n = 0;
	double t0, end;
	int cpu, sink, fd;
	cpu_set_t set;

	if (argc < 4) {
		fprintf(stderr, "usage: e2e_sirq CPU FROM SECONDS [-]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[2]), &set);
	snprintf(mask, sizeof(mask), "%x\n", 1u << cpu);
	if (cpu < 0 || cpu > 31 || sched_setaffinity(0, sizeof(set), &set) || lo_up() ||
	    file_set(RPS_CPUS, mask, old, sizeof(old))) {
		fprintf(stderr, "e2e_sirq: cpu %d from %s, lo, " RPS_CPUS ": %s\n", cpu, argv[2],
			strerror(errno));
		return 1;
	}
	if (file_set(OPTMEM_MAX, OPTMEM, optmem, sizeof(optmem)))
		fprintf(stderr, "e2e_sirq: " OPTMEM_MAX ": %s\n", strerror(errno));
	if (atol(optmem) > atol(OPTMEM)) {	/* already more: as it was */
		file_set(OPTMEM_MAX, optmem, NULL, 0);
		*optmem = 0;
	}
	sink = bind_sink(&to);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (sink < 0 || fd < 0) {
		fprintf(stderr, "e2e_sirq: sockets: %s\n", strerror(errno));
		restore(old, optmem);
		return 1;
	}
	if (argc > 4 && !strcmp(argv[4], "-") && !fgets(mask, sizeof(mask), stdin)) {
		fprintf(stderr, "e2e_sirq: no start line on stdin\n");
		restore(old, optmem);
		return 1;
	}
	tsc0 = __rdtsc();
	t0 = now_s();
	end = t0 + atof(argv[3]);
	do {
		for (int i = 0; i < 16; i++)
			n += sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&to,
				    sizeof(to)) == sizeof(buf);
	} while (now_s() < end);
	tsc1 = __rdtsc();
	printf("e2e_sirq: %lu datagrams in %.1f s to cpu %d's softirq, host TSC %llu to %llu\n", n,
	       now_s() - t0, cpu, tsc0, tsc1);
	restore(old, optmem);
	return 0;
}
