// SPDX-License-Identifier: GPL-2.0
/* guest_loader: load a module and stay alive, then, on SIGUSR1, eat memory until the OOM killer comes. */
/*
 *   guest_loader KO [PARAMS]
 *
 * A long-lived process that loads a kernel module itself (finit_module(),
 * as a daemon using libkmod does), prints "loaded" and waits.  On SIGUSR1
 * it touches 1 MiB after 1 MiB of fresh memory until it is killed: put in
 * a memory cgroup with a small memory.max, it is the victim of that
 * cgroup's OOM killer, whose reaper then empties its address space.  Exit
 * 1 if the load fails; the memory loop never ends by itself.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t hog;

static void on_usr1(int sig)
{
	(void)sig;
	hog = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	const size_t chunk = 1 << 20;
	char *p;
	int fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: guest_loader KO [PARAMS]\n");
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, argc > 2 ? argv[2] : "", 0)) {
		perror(argv[1]);
		return 1;
	}
	close(fd);
	printf("loaded\n");
	fflush(stdout);
	while (!hog)
		pause();
	for (;;) {
		p = malloc(chunk);
		if (p)
			memset(p, 0x5a, chunk);
	}
}
