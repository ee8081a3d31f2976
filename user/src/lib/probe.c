// SPDX-License-Identifier: GPL-2.0
/* probe.c: a child process that hands hostile input to a library first, in case it dies of it. */
/*
 * libtraceevent and libtracecmd are not written for hostile input: some
 * print formats and some damaged trace.dat headers kill them (dump.c and
 * tracedat.c say which).  So their callers have the input read first in a
 * child process, and read it themselves only if the child came through.
 *
 * A probe is one such child per caller, forked at its first request and
 * kept for the next ones, so that reading many inputs (a fuzz target runs
 * thousands a second) costs one fork, not one per input:
 *
 *   caller (probe_run)                   child (probe_serve)
 *     request: bytes, e.g. a path  --->    alarm(seconds); work(request, shared)
 *                                  <---    answer: work()'s int
 *     the socket's end (EOF): the child died on this request, or hung
 *     (SIGALRM); waitpid() says how, and the next request forks a new one
 *
 * The requests and answers are SOCK_SEQPACKET messages on a socketpair.
 * @shared is a MAP_SHARED mapping in which work() notes where it is, so
 * that the caller can say what the child died on.  The child keeps
 * nothing of the caller but the socket (stdin, stdout and stderr go to
 * /dev/null: the caller prints the libraries' warnings once, when it reads
 * the input itself), dies of the fatal signals instead of running the
 * caller's handlers (a sanitizer's or libFuzzer's would report a crash of
 * the caller), ignores those sent to the process group (SIGINT, SIGTERM,
 * ...), and ends when the caller closes the socket: at its exit, or
 * after PROBE_MAX_REQUESTS requests, which bounds what the libraries leak
 * on input they refuse.
 *
 * A request runs in a process that read the earlier requests before it
 * (the caller did too: it read each input the child came through).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib-local.h"
#include "vtrace-util.h"

/* Requests one child serves before it is replaced */
#define PROBE_MAX_REQUESTS	10000

/* A sanitized build's death callback (libFuzzer's saves the input it is running as a crash) */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static struct probe *probes;	/* the started ones, ended at exit */

/* In the child: the socket only, as fd 3 or above; /dev/null for the standard files */
static int child_files(int fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 3)
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0 || null < 0)
		_exit(1);
	dup2(null, STDIN_FILENO);
	dup2(null, STDOUT_FILENO);
	dup2(null, STDERR_FILENO);
	if (fd > 3)
		close_range(3, fd - 1, 0);
	close_range(fd + 1, ~0U, 0);
	return fd;
}

/*
 * In the child: the signals of a crash kill it (no handler of the caller's
 * runs), and those a terminal or a supervisor sends the whole process group
 * are ignored: a caller that goes on after a Ctrl-C (vtrace record stops
 * and then reads its dumps) must not find its probe dead of it.  The child
 * ends with the caller all the same, when the socket closes.
 */
static void child_signals(void)
{
	static const int fatal[] = { SIGALRM, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP,
				     SIGSYS };
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(NULL);
	vtrace_set_quiet(true);
}

/* In the child: answer requests until the socket ends, never return */
static void __attribute__((noreturn)) probe_serve(struct probe *p, int fd)
{
	char req[PROBE_MAX_REQUEST];

	fd = child_files(fd);
	child_signals();
	for (;;) {
		ssize_t n = recv(fd, req, sizeof(req), 0);
		int answer;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		memset(p->shared, 0, p->shared_size);
		alarm(p->seconds);
		answer = p->work(req, n, p->shared);
		alarm(0);
		if (send(fd, &answer, sizeof(answer), MSG_NOSIGNAL) != sizeof(answer))
			_exit(0);
	}
}

/* The child's end: its wait status, or -1 if it could not be waited for */
static int probe_reap(struct probe *p)
{
	int status = -1;

	close(p->fd);
	p->fd = -1;
	while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
		;
	p->pid = 0;
	return status;
}

static void probe_end_all(void)
{
	for (struct probe *p = probes; p; p = p->next)
		if (p->pid > 0)
			probe_reap(p);
}

static int probe_start(struct probe *p)
{
	int sv[2];
	pid_t pid;

	if (!p->shared) {
		p->shared = mmap(NULL, p->shared_size, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p->shared == MAP_FAILED) {
			p->shared = NULL;
			vtrace_set_error("probe: mmap: %s", strerror(errno));
			return -1;
		}
		p->fd = -1;
		p->next = probes;
		if (!probes)
			atexit(probe_end_all);
		probes = p;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		vtrace_set_error("probe: socketpair: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		vtrace_set_error("probe: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (!pid) {
		close(sv[0]);
		probe_serve(p, sv[1]);
	}
	close(sv[1]);
	p->pid = pid;
	p->fd = sv[0];
	p->served = 0;
	return 0;
}

/* Send @req to a running child, forking one first if there is none or it ended while idle */
static int probe_send(struct probe *p, const void *req, size_t len)
{
	for (int tries = 0; tries < 2; tries++) {
		if (p->pid <= 0 && probe_start(p))
			return -1;
		if (send(p->fd, req, len, MSG_NOSIGNAL) == (ssize_t)len)
			return 0;
		/* it died between requests (killed from outside): not this request's doing */
		probe_reap(p);
	}
	vtrace_set_error("probe: cannot send a request to the child process: %s",
			 strerror(errno));
	return -1;
}

/* The requests a child died on, in this process (vtrace-dump.h) */
unsigned long vtrace_probe_deaths;

/**
 * probe_run - have the probe's child run its work() on one request
 * @p:		the probe: work, seconds and shared_size set, the rest zero at first
 * @req:	the request's bytes (at most PROBE_MAX_REQUEST)
 * @len:	their length
 * @answer:	work()'s return value, if the child came through
 * @status:	the child's wait status, if it died on the request (or -1)
 *
 * Returns 0 if the child answered, 1 if it died on the request (the
 * caller says why with probe_how(); @p->shared holds what work() noted),
 * -1 on a system error (message set).
 */
int probe_run(struct probe *p, const void *req, size_t len, int *answer, int *status)
{
	ssize_t n;

	*status = -1;
	if (len > PROBE_MAX_REQUEST) {
		vtrace_set_error("probe: request of %zu bytes, at most %d", len, PROBE_MAX_REQUEST);
		return -1;
	}
	if (p->pid > 0 && p->served >= PROBE_MAX_REQUESTS)
		probe_reap(p);
	if (probe_send(p, req, len))
		return -1;
	p->served++;
	do
		n = recv(p->fd, answer, sizeof(*answer), 0);
	while (n < 0 && errno == EINTR);
	if (n == sizeof(*answer))
		return 0;
	*status = probe_reap(p);
	vtrace_probe_deaths++;
	return 1;
}

/**
 * probe_how - how a probe's child ended, for a message
 * @p:		the probe
 * @status:	probe_run()'s @status
 * @buf:	"died of SIGSEGV", "took over 60 s", "exited with status 1"
 * @len:	its size
 */
void probe_how(const struct probe *p, int status, char *buf, size_t len)
{
	if (status == -1)
		snprintf(buf, len, "ended (its status lost)");
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		snprintf(buf, len, "took over %u s", p->seconds);
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "died of SIG%s", sigabbrev_np(WTERMSIG(status)) ?
			 sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}
