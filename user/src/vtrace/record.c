// SPDX-License-Identifier: GPL-2.0
/* record.c: "vtrace record", one capture of the host and its guests into one folder. */
/*
 *   checks (root, vtrace_host, trace-cmd, the folder)
 *   guests: found, connected, HELLO, their events    (record-guest.c)
 *   trace-cmd record starts; wait until it records     (record-host.c)
 *   guests: START (their data port files' sizes taken just before)
 *   run COMMAND, or wait for Ctrl-C / SIGTERM; once a second: progress,
 *     the guests' STATUS, whether their QEMU lives
 *   guests: STOP, wait for each one's EOS
 *   trace-cmd: SIGINT, wait until it has written everything
 *   guests' data copied; vtrace_host's tsc_offsets, tsc_khz copied
 *   DIR/manifest written last (lib/capture.c), then the summary
 *
 * A guest that dies or fails during the recording is marked in the
 * manifest (its data up to then kept); the others are kept.  When the host
 * trace fails, or copying does (a full disk), no manifest is written: the
 * folder is no capture, and vtrace-merge says so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vtrace-capture.h"
#include "vtrace-ctl.h"
#include "vtrace-util.h"
#include "vtrace-local.h"
#include "record-local.h"

#ifndef VTRACE_VERSION
#define VTRACE_VERSION	"unknown"
#endif

static const char record_usage[] =
"usage: vtrace record -o DIR [--qemu PID]... [--libvirt NAME]... [--connect URI]\n"
"                     [--socket PATH --out GDIR]... [-e EVENTS] [--host-events LIST]\n"
"                     [-b KB] [-- COMMAND [ARGS...]]\n"
"\n"
"Record the host (trace-cmd record -C x86-tsc with every event vtrace-merge needs)\n"
"and its guests' vtrace_guest (agent mode) into one capture folder, for as long as\n"
"COMMAND runs, or until Ctrl-C.  Then: vtrace-merge DIR.\n"
"\n"
"  -o, --output DIR     the capture folder (created; must not exist or be empty)\n"
"  -p, --qemu PID       a guest: running QEMU PID (its vtrace ports from its command line)\n"
"  -L, --libvirt NAME   a guest: running libvirt domain NAME\n"
"  -c, --connect URI    the --libvirt domains' connection, as virsh -c URI\n"
"  -s, --socket PATH    a guest: its vtrace.ctl socket; with --out GDIR, the folder of\n"
"      --out GDIR       its data port files (cpu0, cpu1, ...; qemu.pid if there)\n"
"                       no guest given: every running QEMU with vtrace ports\n"
"  -e, --events EVENTS  guest events, set_event syntax; default:\n"
"                       %s\n"
"      --host-events LIST  more host events (comma-separated) beside vtrace-merge's\n"
"  -b, --buffer KB      host per-CPU buffer (trace-cmd record -b; default 8192)\n"
"  -q, --quiet          no progress line\n";

#define RECORD_GUEST_EVENTS	"sched:sched_switch sched:sched_wakeup sched:sched_waking " \
				"timer:hrtimer_start timer:hrtimer_expire_entry timer:hrtimer_expire_exit " \
				"irq_vectors:local_timer_entry"
#define RECORD_MAX_GUESTS	64
#define STOP_MS			30000

struct record {
	const char		*dir;
	const char		*events;
	const char		*host_extra;
	const char		*uri;
	unsigned int		buffer_kb;
	bool			quiet;
	char			**command;
	int			qemu_pids[RECORD_MAX_GUESTS];
	int			nr_qemu;
	const char		*domains[RECORD_MAX_GUESTS];
	int			nr_domains;
	const char		*sockets[RECORD_MAX_GUESTS];
	int			nr_sockets;
	const char		*gdirs[RECORD_MAX_GUESTS];
	int			nr_gdirs;
	struct rec_guest	*gs;
	int			nr;
	char			*host_events;
	char			start[32];
	char			stop[32];
	long long		t0;		/* monotonic ms at the start */
};

static volatile sig_atomic_t record_stop_sig;

static void on_signal(int sig)
{
	record_stop_sig = sig;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "vtrace record: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n\n");
	fprintf(stderr, record_usage, RECORD_GUEST_EVENTS);
	return 2;
}

static int parse_pid(const char *s, int *pid)
{
	uint64_t v;

	if (vtrace_parse_u64(s, &v) || !v || v > 0x7fffffff)
		return -1;
	*pid = v;
	return 0;
}

static int record_parse(int argc, char **argv, struct record *r)
{
	static const struct option opts[] = {
		{ "output",	 required_argument, NULL, 'o' },
		{ "qemu",	 required_argument, NULL, 'p' },
		{ "libvirt",	 required_argument, NULL, 'L' },
		{ "connect",	 required_argument, NULL, 'c' },
		{ "socket",	 required_argument, NULL, 's' },
		{ "out",	 required_argument, NULL, 'O' },
		{ "events",	 required_argument, NULL, 'e' },
		{ "host-events", required_argument, NULL, 'H' },
		{ "buffer",	 required_argument, NULL, 'b' },
		{ "quiet",	 no_argument,	    NULL, 'q' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "+o:p:L:c:s:e:b:qh", opts, NULL)) != -1) {
		if (strchr("pLsO", c) && r->nr_qemu + r->nr_domains + r->nr_sockets +
		    r->nr_gdirs >= RECORD_MAX_GUESTS)
			return usage_error("at most %s guests", "64");
		switch (c) {
		case 'o': r->dir = optarg; break;
		case 'p':
			if (parse_pid(optarg, &r->qemu_pids[r->nr_qemu++]))
				return usage_error("--qemu %s: expected a process id", optarg);
			break;
		case 'L': r->domains[r->nr_domains++] = optarg; break;
		case 'c': r->uri = optarg; break;
		case 's': r->sockets[r->nr_sockets++] = optarg; break;
		case 'O': r->gdirs[r->nr_gdirs++] = optarg; break;
		case 'e': r->events = optarg; break;
		case 'H': r->host_extra = optarg; break;
		case 'b':
			if (vtrace_parse_u64(optarg, &v) || v < 64 || v > (1U << 22))
				return usage_error("-b %s: expected KB per CPU, 64 to 4194304",
						   optarg);
			r->buffer_kb = v;
			break;
		case 'q': r->quiet = true; break;
		case 'h': printf(record_usage, RECORD_GUEST_EVENTS); exit(0);
		default: return usage_error("%s", "bad option");
		}
	}
	if (!r->dir)
		return usage_error("%s", "-o DIR is needed: the capture folder");
	if (r->nr_sockets != r->nr_gdirs)
		return usage_error("%s", "give one --out GDIR per --socket PATH");
	if (optind < argc)
		r->command = argv + optind;
	return 0;
}

/* The capture folder: created, or an empty one; 0 or -1 with the error set */
static int make_dir(const char *dir)
{
	int empty;

	if (!mkdir(dir, 0755))
		return 0;
	if (errno != EEXIST) {
		vtrace_set_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	empty = rmdir(dir) == 0 && mkdir(dir, 0755) == 0;
	if (!empty) {
		vtrace_set_error("%s: exists and is not empty: give a new folder (a capture is"
				 " never written over)", dir);
		return -1;
	}
	return 0;
}

/* The guests named on the command line, or every running one */
static int find_guests(struct record *r)
{
	int n = r->nr_qemu + r->nr_domains + r->nr_sockets, ret = 0;

	if (!n) {
		if (record_find_guests(&r->gs, &r->nr))
			return -1;
		if (!r->nr) {
			vtrace_set_error("no guest given and no running QEMU with vtrace ports (a"
					 " vtrace.ctl socket: vtrace qemu-args --agent) found");
			return -1;
		}
		for (int i = 0; i < r->nr; i++)
			fprintf(stderr, "vtrace record: found guest %s: QEMU pid %d, control port"
				" %s, %d data ports\n", r->gs[i].name, r->gs[i].pid,
				r->gs[i].ctl_path, r->gs[i].nr_cpus);
		return 0;
	}
	r->gs = calloc(n, sizeof(*r->gs));
	if (!r->gs)
		return -1;
	for (int i = 0; i < r->nr_qemu && !ret; i++)
		ret = record_guest_from_pid(&r->gs[r->nr++], r->qemu_pids[i], NULL);
	for (int i = 0; i < r->nr_domains && !ret; i++)
		ret = record_guest_from_libvirt(&r->gs[r->nr++], r->domains[i], r->uri);
	for (int i = 0; i < r->nr_sockets && !ret; i++)
		ret = record_guest_from_socket(&r->gs[r->nr++], r->sockets[i], r->gdirs[i]);
	return ret;
}

static void utc_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
}

/* One progress line: elapsed, MB per guest, events lost so far */
static void progress(struct record *r, long long t0, bool tty)
{
	char line[1024];
	int n;

	n = snprintf(line, sizeof(line), "vtrace record: %llds", (vtrace_now_ms() - t0) / 1000);
	for (int i = 0; i < r->nr && n < (int)sizeof(line) - 64; i++)
		n += snprintf(line + n, sizeof(line) - n, ", %s %.1f MB lost %llu%s",
			      r->gs[i].name, record_guest_bytes(&r->gs[i]) / 1048576.0,
			      (unsigned long long)r->gs[i].lost, r->gs[i].dead ? " (died)" : "");
	n += snprintf(line + n, sizeof(line) - n, ", host lost %llu",
		      (unsigned long long)record_host_lost());
	if (tty)
		fprintf(stderr, "\r%s\033[K", line);
}

/* The recording's length: COMMAND's, or until a signal; -1 when COMMAND could not run */
static int record_wait(struct record *r, pid_t host)
{
	bool tty = !r->quiet && isatty(STDERR_FILENO);
	long long t0 = vtrace_now_ms(), next = t0 + 1000;
	pid_t cmd = 0;
	int status, ret = 0;

	if (r->command) {
		cmd = fork();
		if (cmd == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			execvp(r->command[0], r->command);
			fprintf(stderr, "vtrace record: %s: %s\n", r->command[0], strerror(errno));
			_exit(127);
		}
	}
	while (!record_stop_sig) {
		if (cmd > 0 && waitpid(cmd, &status, WNOHANG) == cmd) {
			if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
				ret = -1;
			break;
		}
		if (waitpid(host, &status, WNOHANG) == host) {
			vtrace_set_error("trace-cmd record ended during the recording: see"
					 " %s/trace-cmd.log", r->dir);
			return -2;
		}
		usleep(50000);
		if (vtrace_now_ms() >= next) {
			next += 1000;
			record_guests_poll(r->gs, r->nr);
			progress(r, t0, tty);
		}
	}
	if (tty)
		fputc('\n', stderr);
	if (cmd > 0 && record_stop_sig) {
		kill(cmd, SIGTERM);
		waitpid(cmd, &status, 0);
	}
	return ret;
}

/* Each guest's vCPU threads, read while it runs */
static void read_vcpus(struct record *r)
{
	for (int i = 0; i < r->nr; i++)
		if (r->gs[i].pid && !r->gs[i].dead &&
		    vtrace_qemu_vcpus(r->gs[i].pid, &r->gs[i].vcpus, &r->gs[i].nr_vcpus))
			fprintf(stderr, "vtrace record: guest %s: its vCPU threads: %s\n",
				r->gs[i].name, vtrace_last_error());
}

/* The manifest (lib/capture.c), written last */
static int write_manifest(struct record *r, uint64_t tsc_khz, bool has_offsets)
{
	struct vtrace_capture c = {
		.dir = (char *)r->dir, .vtrace = VTRACE_VERSION, .start = r->start,
		.stop = r->stop, .host = "host.dat", .host_events = r->host_events,
		.offsets = has_offsets ? "tsc_offsets" : NULL, .tsc_khz = tsc_khz,
		.nr_guests = r->nr,
	};
	char status[1024] = "complete";
	int n = 0, ret;

	c.guests = calloc(r->nr + 1, sizeof(*c.guests));
	if (!c.guests)
		return -1;
	for (int i = 0; i < r->nr; i++) {
		struct rec_guest *g = &r->gs[i];

		if (!g->status[0])
			strcpy(g->status, "complete");
		c.guests[i] = (struct vtrace_capture_guest){
			.name = g->name, .dir = g->name, .pid = g->pid,
			.events = (char *)r->events, .status = g->status, .lost = g->lost,
			.bytes = g->copied, .vcpus = g->vcpus, .nr_vcpus = g->nr_vcpus,
		};
		if (strcmp(g->status, "complete"))
			n += snprintf(status + n, n < (int)sizeof(status) ? sizeof(status) - n : 0,
				      "%s guest %s %s", n ? ";" : "partial:", g->name, g->status);
	}
	c.status = status;
	ret = vtrace_capture_write(&c);
	free(c.guests);
	return ret;
}

static void summary(struct record *r, long long ms)
{
	fprintf(stderr, "vtrace record: %.1f s recorded: host.dat", ms / 1000.0);
	for (int i = 0; i < r->nr; i++)
		fprintf(stderr, ", %s %.1f MB (%llu events lost, %d vCPU threads%s%s)",
			r->gs[i].name, r->gs[i].copied / 1048576.0,
			(unsigned long long)r->gs[i].lost, r->gs[i].nr_vcpus,
			strcmp(r->gs[i].status, "complete") ? ": " : "",
			strcmp(r->gs[i].status, "complete") ? r->gs[i].status : "");
	fprintf(stderr, "\nvtrace record: capture in %s; merge it with: vtrace-merge %s"
		" (or vtrace-merge %s --explain)\n", r->dir, r->dir, r->dir);
}

/* Guests connected, trace-cmd started, guests started: 0, or -1 (host failed) */
static int record_begin(struct record *r, pid_t *host)
{
	const char *tc = record_trace_cmd();

	for (int i = 0; i < r->nr; i++)
		if (record_guest_open(&r->gs[i], r->dir, r->events))
			return -1;
	*host = record_host_start(tc, r->dir, r->host_events, r->buffer_kb);
	if (*host < 0 || record_host_wait_started(*host, 30000))
		return -1;
	utc_now(r->start, sizeof(r->start));
	r->t0 = vtrace_now_ms();
	if (record_guests_command(r->gs, r->nr, VTRACE_MSG_START, STOP_MS))
		for (int i = 0; i < r->nr; i++)
			if (r->gs[i].dead)
				fprintf(stderr, "vtrace record: guest %s: %s\n", r->gs[i].name,
					r->gs[i].status);
	read_vcpus(r);
	return 0;
}

/* Guests stopped, trace-cmd stopped, data copied, manifest: the exit code */
static int record_end(struct record *r, pid_t host)
{
	uint64_t khz;
	bool has_offsets;
	int failed = 0;

	record_guests_command(r->gs, r->nr, VTRACE_MSG_STOP, STOP_MS);
	utc_now(r->stop, sizeof(r->stop));
	if (record_host_stop(host, r->dir))
		return -1;
	for (int i = 0; i < r->nr; i++) {
		if (r->gs[i].started && record_guest_copy(&r->gs[i]))
			return -1;
		failed += r->gs[i].dead;
	}
	if (record_host_copy_files(r->dir, &khz, &has_offsets) ||
	    write_manifest(r, khz, has_offsets))
		return -1;
	summary(r, vtrace_now_ms() - r->t0);
	return failed ? 1 : 0;
}

static void record_free(struct record *r)
{
	for (int i = 0; i < r->nr; i++)
		record_guest_free(&r->gs[i]);
	free(r->gs);
	free(r->host_events);
}

/* Stop what was started after a failure: the guests, trace-cmd */
static void record_abort(struct record *r, pid_t host)
{
	int status;

	for (int i = 0; i < r->nr; i++)
		if (r->gs[i].started && !r->gs[i].dead)
			vtrace_ctl_send(r->gs[i].ctl, VTRACE_MSG_STOP, NULL, 0);
	if (host > 0 && waitpid(host, &status, WNOHANG) == 0) {
		kill(host, SIGINT);
		waitpid(host, &status, 0);
	}
}

int vtrace_cmd_record(int argc, char **argv)
{
	struct record r = { .events = RECORD_GUEST_EVENTS, .buffer_kb = 8192 };
	struct sigaction sa = { .sa_handler = on_signal };
	pid_t host = -1;
	int ret, wait_ret = 0;

	vtrace_set_progname("vtrace record");
	ret = record_parse(argc, argv, &r);
	if (ret)
		return ret;
	r.host_events = record_host_event_list(r.host_extra);
	if (!r.host_events || record_check_host(record_trace_cmd()) || find_guests(&r) ||
	    make_dir(r.dir)) {
		fprintf(stderr, "vtrace record: error: %s\n", vtrace_last_error());
		record_free(&r);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	ret = record_begin(&r, &host);
	if (!ret) {
		fprintf(stderr, "vtrace record: recording the host and %d guest%s into %s; %s\n",
			r.nr, r.nr == 1 ? "" : "s", r.dir,
			r.command ? "until the command ends" : "Ctrl-C to stop");
		wait_ret = record_wait(&r, host);
	}
	if (!ret && wait_ret != -2) {
		ret = record_end(&r, host);
		if (ret >= 0 && wait_ret == -1) {
			fprintf(stderr, "vtrace record: the command could not run\n");
			ret = 1;
		}
	} else {
		record_abort(&r, ret ? host : -1);
		ret = -1;
	}
	if (ret < 0)
		fprintf(stderr, "vtrace record: error: %s; no capture written (%s has no"
			" manifest)\n", vtrace_last_error(), r.dir);
	record_free(&r);
	return ret ? 1 : 0;
}
