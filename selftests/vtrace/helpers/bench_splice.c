// SPDX-License-Identifier: GPL-2.0
/* bench_splice: user-space splice loop trace_pipe_raw -> pipe -> virtio-serial port (virtio-trace design). */
/*
 *   bench_splice TRACE_DIR PREFIX [POLL_MS]
 *
 * For every CPU K with a port named PREFIX.cpuK (/sys/class/virtio-ports/
 * vportNpM/name), one thread pinned on CPU K splices TRACE_DIR/per_cpu/cpuK/
 * trace_pipe_raw into a pipe and the pipe into /dev/vportNpM: whole pages,
 * no copy to user space (the design of the historical virtio-trace agent).
 * The ring buffer is read non-blocking; when it has no full page the thread
 * sleeps POLL_MS (default 20, as vtrace_guest's drain_ms). On SIGTERM/SIGINT
 * every thread stops and "splice cpu=K bytes=N" lines are printed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXCPU	64
#define CHUNK	(16 * 4096)

struct cpu {
	int cpu, in, out, pfd[2];
	long long bytes;
	pthread_t th;
};

static volatile sig_atomic_t stop;
static int poll_ms = 20;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

static int find_port(const char *want)
{
	char path[512], name[128];
	struct dirent *d;
	DIR *dir = opendir("/sys/class/virtio-ports");
	int fd = -1;

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f)) {
			name[strcspn(name, "\n")] = 0;
			if (!strcmp(name, want)) {
				snprintf(path, sizeof(path), "/dev/%s", d->d_name);
				fd = open(path, O_WRONLY);
			}
		}
		fclose(f);
		if (fd >= 0)
			break;
	}
	closedir(dir);
	return fd;
}

static void *drain(void *arg)
{
	struct cpu *c = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!stop) {
		ssize_t n = splice(c->in, NULL, c->pfd[1], NULL, CHUNK,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				perror("splice trace_pipe_raw");
				break;
			}
			usleep(poll_ms * 1000);
			continue;
		}
		while (n > 0) {
			ssize_t w = splice(c->pfd[0], NULL, c->out, NULL, n, SPLICE_F_MOVE);

			if (w < 0) {
				if (errno == EINTR)
					continue;
				perror("splice port");
				return NULL;
			}
			n -= w;
			c->bytes += w;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct cpu cpus[MAXCPU];
	struct sigaction sa;
	char path[512], want[128];
	int nr = 0, k;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_splice TRACE_DIR PREFIX [POLL_MS]\n");
		return 2;
	}
	if (argc > 3)
		poll_ms = atoi(argv[3]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (k = 0; k < MAXCPU; k++) {
		struct cpu *c = &cpus[nr];

		snprintf(want, sizeof(want), "%s.cpu%d", argv[2], k);
		c->out = find_port(want);
		if (c->out < 0)
			continue;
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", argv[1], k);
		c->in = open(path, O_RDONLY | O_NONBLOCK);
		if (c->in < 0 || pipe(c->pfd)) {
			perror(path);
			return 1;
		}
		fcntl(c->pfd[1], F_SETPIPE_SZ, CHUNK);
		c->cpu = k;
		nr++;
	}
	if (!nr) {
		fprintf(stderr, "bench_splice: no port %s.cpuK\n", argv[2]);
		return 1;
	}
	for (k = 0; k < nr; k++)
		pthread_create(&cpus[k].th, NULL, drain, &cpus[k]);
	printf("splice ready cpus=%d\n", nr);
	fflush(stdout);
	for (k = 0; k < nr; k++)
		pthread_join(cpus[k].th, NULL);
	for (k = 0; k < nr; k++)
		printf("splice cpu=%d bytes=%lld\n", cpus[k].cpu, cpus[k].bytes);
	return 0;
}
