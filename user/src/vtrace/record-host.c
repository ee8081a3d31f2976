// SPDX-License-Identifier: GPL-2.0
/* record-host.c: "vtrace record"'s host side: checks, trace-cmd record, vtrace_host's files. */
/*
 * The host is recorded by trace-cmd itself (fork/exec), with the TSC as
 * clock and every event vtrace-merge, its self-check and --explain read
 * (record_host_events[]: the one list).  trace-cmd runs in a process group
 * of its own, so that a Ctrl-C at the terminal reaches vtrace record (and
 * the command it runs), not trace-cmd: the guests are stopped first, then
 * trace-cmd gets its SIGINT, and is waited for: it reads what its buffers
 * still hold before it exits.
 *
 * For tests without a VM (user/tests/test-record.sh) the environment points
 * it elsewhere: VTRACE_TRACE_CMD (the trace-cmd program), VTRACE_SYS_MODULE
 * (for /sys/module), VTRACE_TRACEFS, VTRACE_HOST_DEBUGFS (for
 * /sys/kernel/debug/vtrace), VTRACE_RECORD_NOT_ROOT_OK (no root check).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vtrace-ctl.h"
#include "vtrace-util.h"
#include "record-local.h"

/*
 * What the merge reads on the host: vtrace_host's offset history; the
 * vCPU threads' runs and guest mode (the self-check, --explain); wake-ups;
 * the host's interrupts, softirqs and tick (--explain's causes); KVM's
 * hrtimers of the vCPUs' APIC timers (--explain's timer path)
 */
const char *const record_host_events[] = {
	"vtrace_host",
	"sched:sched_switch",
	"sched:sched_wakeup",
	"kvm:kvm_entry",
	"kvm:kvm_exit",
	"irq_vectors:local_timer_entry",
	"irq:irq_handler_entry",
	"irq:irq_handler_exit",
	"irq:softirq_entry",
	"irq:softirq_exit",
	"timer:hrtimer_start",
	"timer:hrtimer_expire_entry",
	NULL,
};

#define VTRACE_DEBUGFS	"/sys/kernel/debug/vtrace"

/* trace-cmd: $VTRACE_TRACE_CMD, else the one in PATH */
const char *record_trace_cmd(void)
{
	const char *t = getenv("VTRACE_TRACE_CMD");

	return t && *t ? t : "trace-cmd";
}

static int in_path(const char *prog)
{
	char *path, *save = NULL, file[PATH_MAX];
	int found = 0;

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	path = strdup(getenv("PATH") ?: "/usr/bin:/bin");
	for (char *d = strtok_r(path, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		snprintf(file, sizeof(file), "%s/%s", d, prog);
		found = access(file, X_OK) == 0;
	}
	free(path);
	return found;
}

/* root, vtrace_host loaded, trace-cmd there; 0 or -1 with the error set */
int record_check_host(const char *trace_cmd)
{
	const char *sys = getenv("VTRACE_SYS_MODULE") ?: "/sys/module";
	char path[PATH_MAX];

	if (geteuid() && !getenv("VTRACE_RECORD_NOT_ROOT_OK")) {
		vtrace_set_error("not root: recording the host (trace-cmd, vtrace_host's files)"
				 " and the guests' ports needs root: run it with sudo");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/vtrace_host", sys);
	if (access(path, F_OK)) {
		vtrace_set_error("vtrace_host is not loaded (no %s): modprobe vtrace_host (or"
				 " insmod kmod/host/vtrace_host.ko); it logs the TSC offsets the"
				 " merge needs", path);
		return -1;
	}
	if (!in_path(trace_cmd)) {
		vtrace_set_error("%s not found: install trace-cmd (apt-get install trace-cmd)",
				 trace_cmd);
		return -1;
	}
	return 0;
}

/* The host events: record_host_events[] and @extra (comma or blank separated), one string */
char *record_host_event_list(const char *extra)
{
	size_t len = 1;
	char *s;

	for (int i = 0; record_host_events[i]; i++)
		len += strlen(record_host_events[i]) + 1;
	len += extra ? strlen(extra) + 1 : 0;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; record_host_events[i]; i++)
		strcat(strcat(s, i ? " " : ""), record_host_events[i]);
	if (extra) {
		char *e = strdup(extra), *save = NULL;

		for (char *t = e ? strtok_r(e, ", ", &save) : NULL; t;
		     t = strtok_r(NULL, ", ", &save))
			strcat(strcat(s, " "), t);
		free(e);
	}
	return s;
}

/* trace-cmd record's argv, in @argv (at least 2 * nr events + 12 entries) */
static char **host_argv(const char *trace_cmd, char *events, const char *out, char *bufkb)
{
	int n = 0, nr = 1;
	char **argv, *save = NULL;

	for (char *p = events; *p; p++)
		nr += *p == ' ';
	argv = calloc(2 * nr + 12, sizeof(*argv));
	if (!argv)
		return NULL;
	argv[n++] = (char *)trace_cmd;
	argv[n++] = "record";
	argv[n++] = "-q";
	argv[n++] = "-C";
	argv[n++] = "x86-tsc";
	argv[n++] = "-b";
	argv[n++] = bufkb;
	for (char *t = strtok_r(events, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		argv[n++] = "-e";
		argv[n++] = t;
	}
	argv[n++] = "-o";
	argv[n++] = (char *)out;
	return argv;
}

/**
 * record_host_start - fork and exec trace-cmd record into DIR/host.dat
 * @trace_cmd:	the program
 * @dir:	the capture folder (its output: DIR/trace-cmd.log)
 * @events:	the host events, blank-separated
 * @buffer_kb:	per-CPU buffer size (-b)
 *
 * Returns its pid, or -1 with the error set.
 */
pid_t record_host_start(const char *trace_cmd, const char *dir, const char *events,
			unsigned int buffer_kb)
{
	char out[PATH_MAX], log[PATH_MAX], bufkb[16], *ev = strdup(events), **argv;
	pid_t pid;
	int fd;

	snprintf(out, sizeof(out), "%s/host.dat", dir);
	snprintf(log, sizeof(log), "%s/trace-cmd.log", dir);
	snprintf(bufkb, sizeof(bufkb), "%u", buffer_kb);
	argv = ev ? host_argv(trace_cmd, ev, out, bufkb) : NULL;
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!argv || fd < 0) {
		vtrace_set_error("%s: %s", log, strerror(errno));
		goto error;
	}
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);	/* a terminal's Ctrl-C is ours to pass on */
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(trace_cmd, argv);
		fprintf(stderr, "%s: %s\n", trace_cmd, strerror(errno));
		_exit(127);
	}
	if (pid < 0)
		vtrace_set_error("fork: %s", strerror(errno));
	close(fd);
	free(argv);
	free(ev);
	return pid;
error:
	if (fd >= 0)
		close(fd);
	free(argv);
	free(ev);
	return -1;
}

static const char *tracefs(void)
{
	static const char *t;

	if (!t)
		t = access("/sys/kernel/tracing/tracing_on", F_OK) ?
			"/sys/kernel/debug/tracing" : "/sys/kernel/tracing";
	return getenv("VTRACE_TRACEFS") ?: t;
}

static int read_flag(const char *rel)
{
	char path[PATH_MAX], c = '0';
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tracefs(), rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/*
 * Wait until trace-cmd records: tracing on, vtrace_host's event enabled
 * (it enables the events, then turns recording on).  0, or -1 with the
 * error set (trace-cmd ended, or did not get there in @timeout_ms).
 */
int record_host_wait_started(pid_t pid, int timeout_ms)
{
	long long end = vtrace_now_ms() + timeout_ms;
	int status;

	while (vtrace_now_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			vtrace_set_error("trace-cmd record ended before it recorded (exit %d):"
					 " see trace-cmd.log in the capture folder",
					 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			return -1;
		}
		if (read_flag("tracing_on") && read_flag("events/vtrace_host/enable") &&
		    read_flag("events/kvm/kvm_entry/enable")) {
			usleep(300000);	/* its readers start after the flags */
			return 0;
		}
		usleep(50000);
	}
	vtrace_set_error("trace-cmd record did not start recording within %d s: see"
			 " trace-cmd.log in the capture folder", timeout_ms / 1000);
	return -1;
}

/*
 * Stop trace-cmd (SIGINT, as at a terminal) and wait until it has written
 * what its buffers held.  0, or -1 with the error set.
 */
int record_host_stop(pid_t pid, const char *dir)
{
	int status;

	if (pid <= 0) {		/* never kill(-1): every process */
		vtrace_set_error("no trace-cmd to stop");
		return -1;
	}
	kill(pid, SIGINT);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			vtrace_set_error("waiting for trace-cmd: %s", strerror(errno));
			return -1;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	vtrace_set_error("trace-cmd record failed (%s %d): see %s/trace-cmd.log",
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), dir);
	return -1;
}

/* Events the host's ring buffers overwrote or dropped so far, every CPU */
uint64_t record_host_lost(void)
{
	char pat[PATH_MAX], line[256];
	uint64_t sum = 0;
	glob_t gl;

	snprintf(pat, sizeof(pat), "%s/per_cpu/cpu*/stats", tracefs());
	if (glob(pat, 0, NULL, &gl))
		return 0;
	for (size_t i = 0; i < gl.gl_pathc; i++) {
		FILE *f = fopen(gl.gl_pathv[i], "r");
		unsigned long long v;

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %llu", &v) == 1 ||
			    sscanf(line, "dropped events: %llu", &v) == 1)
				sum += v;
		if (f)
			fclose(f);
	}
	globfree(&gl);
	return sum;
}

/* A debugfs file (its size says 0) copied by reading to its end */
static int copy_small(const char *from, const char *to)
{
	FILE *in = fopen(from, "r"), *out = in ? fopen(to, "w") : NULL;
	char buf[65536];
	size_t n;
	int ret = 0;

	if (!in || !out) {
		vtrace_set_error("%s: %s", in ? to : from, strerror(errno));
		ret = -1;
		goto out;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in) || ferror(out)) {
		vtrace_set_error("copying %s to %s: %s", from, to, strerror(errno));
		ret = -1;
	}
out:
	if (out && fclose(out) && !ret) {
		vtrace_set_error("%s: %s", to, strerror(errno));
		ret = -1;
	}
	if (in)
		fclose(in);
	return ret;
}

/*
 * vtrace_host's tsc_offsets (the writes made before the recording too) and
 * tsc_khz into the capture folder.  0, or -1 with the error set.
 */
int record_host_copy_files(const char *dir, uint64_t *tsc_khz, bool *has_offsets)
{
	const char *dbg = getenv("VTRACE_HOST_DEBUGFS") ?: VTRACE_DEBUGFS;
	char from[PATH_MAX], to[PATH_MAX];
	unsigned long long khz;
	FILE *f;

	*tsc_khz = 0;
	*has_offsets = false;
	snprintf(from, sizeof(from), "%s/tsc_offsets", dbg);
	snprintf(to, sizeof(to), "%s/tsc_offsets", dir);
	if (!access(from, R_OK)) {
		if (copy_small(from, to))
			return -1;
		*has_offsets = true;
	}
	snprintf(from, sizeof(from), "%s/tsc_khz", dbg);
	snprintf(to, sizeof(to), "%s/tsc_khz", dir);
	f = fopen(from, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &khz) == 1)
		*tsc_khz = khz;
	fclose(f);
	return copy_small(from, to);
}
