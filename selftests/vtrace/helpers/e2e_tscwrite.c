// SPDX-License-Identifier: GPL-2.0
/* e2e_tscwrite: add DELTA cycles to IA32_TSC of one CPU (through /dev/cpu/N/msr). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#define MSR_IA32_TSC	0x10

int main(int argc, char **argv)
{
	char path[64];
	uint64_t tsc;
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
	close(fd);
	return 0;
}
