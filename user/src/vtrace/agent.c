// SPDX-License-Identifier: GPL-2.0
/* agent.c: "vtrace agent", drive a guest's vtrace_guest over its vtrace.ctl port. */
/*
 * QEMU exposes the host end of vtrace.ctl as a unix socket
 * (-chardev socket,id=vtctl,path=PATH,server=on,wait=off).  This command
 * connects to it, says HELLO, sends the commands given on the command line
 * one after the other, waits for each one's ACK or ERROR, and prints every
 * message the guest sends.  Every byte received is appended to DIR/ctl, so
 * vtrace-merge reads the same file whether ctl was a chardev file or this
 * socket.
 *
 *   vtrace agent --socket PATH --out DIR [--socket PATH --out DIR ...]
 *                [--timeout SEC] COMMAND...
 *     hello | start | stop | status | events SPEC | buffer-size KB
 *     | raw-file FILE | listen SEC
 *
 * A libvirt guest is named instead of its socket (--libvirt NAME --out DIR):
 * the socket is DIR/ctl.sock, where "vtrace qemu-args --libvirt --agent
 * --out DIR" put it, and libvirt's pid file NAME.pid is copied to
 * DIR/qemu.pid, where vtrace-merge looks for the guest's QEMU pid (libvirt
 * removes its copy when the domain stops).  Where libvirt keeps that file
 * depends on the connection (--connect URI, as virsh -c URI): src/lib/libvirt.c.
 *
 * With several guests (--socket/--out pairs), each command goes to every
 * guest before any reply is awaited, so that "start" and "stop" reach all
 * of them within a few milliseconds; then the replies are collected guest
 * by guest, each under a "== DIR" line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vtrace-ctl.h"
#include "vtrace-proto.h"
#include "vtrace-util.h"
#include "vtrace-local.h"

static const char agent_usage[] =
"usage: vtrace agent --socket PATH|--libvirt NAME --out DIR [... --out DIR ...]\n"
"                    [--connect URI] [--timeout SEC] [-q] COMMAND...\n"
"\n"
"Drive vtrace_guest in one or several guests through the host ends of their\n"
"vtrace.ctl ports.  Everything a guest sends is appended to its DIR/ctl.\n"
"\n"
"  -s, --socket PATH   QEMU's unix socket for vtrace.ctl (server=on)\n"
"  -o, --out DIR       folder for that guest's ctl stream (created if needed);\n"
"                      repeat the pair for each guest: every command goes to\n"
"                      all of them at once\n"
"  -L, --libvirt NAME  instead of --socket: libvirt domain NAME, socket\n"
"                      DIR/ctl.sock (vtrace qemu-args --libvirt --agent --out DIR);\n"
"                      its QEMU pid (/run/libvirt/qemu/NAME.pid) goes to DIR/qemu.pid\n"
"  -c, --connect URI   the --libvirt domains' connection, as virsh -c URI:\n"
"                      qemu:///system, qemu:///session or qemu:///embed?root=DIR\n"
"                      (default $LIBVIRT_DEFAULT_URI, else system for root, else session)\n"
"  -t, --timeout SEC   wait at most SEC for each reply (default 60)\n"
"  -q, --quiet         print only replies, not metadata messages\n"
"\n"
"Commands, carried out in order, each waiting for its ACK or ERROR:\n"
"  hello               negotiate the protocol version (always sent first)\n"
"  start | stop        start tracing / stop, flush and end the stream\n"
"  status              print the guest's counters\n"
"  events SPEC         event selection, set_event syntax (\"sched:* irq:*\")\n"
"  buffer-size KB      per-CPU ring-buffer size\n"
"  raw-file FILE       send FILE's bytes as they are, print what comes back\n"
"  listen SEC          print what the guest sends for SEC seconds\n";

#define AGENT_MAX_GUESTS	64

struct agent {
	const char	*name;		/* its --out folder, for "== DIR" lines */
	const char	*path;		/* its --socket */
	const char	*domain;	/* its --libvirt NAME, or NULL */
	char		*sock_path;	/* DIR/ctl.sock for a libvirt domain */
	struct vtrace_ctl *ctl;
	int		out;
	int		timeout_ms;
	bool		quiet;
};

static int agent_connect(struct agent *a, const char *path)
{
	a->ctl = vtrace_ctl_open(path, a->out, "vtrace agent");
	if (!a->ctl) {
		fprintf(stderr, "vtrace agent: %s\n", vtrace_last_error());
		return -1;
	}
	return 0;
}

static int agent_open_out(struct agent *a, const char *dir)
{
	char path[4096];

	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "vtrace agent: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/ctl", dir);
	a->out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (a->out < 0) {
		fprintf(stderr, "vtrace agent: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* libvirt's pid file of domain @a->domain to DIR/qemu.pid; socket DIR/ctl.sock */
static int agent_libvirt(struct agent *a, const char *uri)
{
	if (vtrace_libvirt_keep_pid(a->domain, uri, a->name) < 0) {
		fprintf(stderr, "vtrace agent: %s\n", vtrace_last_error());
		return -1;
	}
	if (asprintf(&a->sock_path, "%s/ctl.sock", a->name) < 0)
		return -1;
	a->path = a->sock_path;
	return 0;
}

static void print_stats(const struct vtrace_msg *m, const char *what)
{
	const struct vtrace_status *st;
	const struct vtrace_cpu_stats *cs;

	if (vtrace_msg_status(m, &st, &cs))
		return;
	printf("%s: state %s, session %" PRIu64 ", %u data ports for %u CPUs\n", what,
	       st->state == VTRACE_STATE_TRACING ? "tracing" : "idle", (uint64_t)st->session,
	       st->nr_ports, st->nr_cpus);
	if (st->flags & VTRACE_STATUS_TRACING_ON)
		printf("  not disarmed: the guest could not turn tracing_on off, its rings may still record\n");
	if (st->flags & VTRACE_STATUS_EVENTS_ON)
		printf("  not disarmed: the guest could not disable the events, they stay enabled\n");
	printf("  cpu port    pages     events  fillers  lost lost_events ring_lost errors\n");
	for (uint32_t i = 0; i < st->nr_cpus; i++)
		printf("  %3u %-4s %8llu %10llu %8llu %5llu %11llu %9llu %6llu\n", cs[i].cpu,
		       cs[i].flags & VTRACE_CPU_HAS_PORT ? "yes" : "no",
		       (unsigned long long)cs[i].pages_sent, (unsigned long long)cs[i].events_sent,
		       (unsigned long long)cs[i].fillers_sent, (unsigned long long)cs[i].pages_lost,
		       (unsigned long long)cs[i].events_lost_port,
		       (unsigned long long)cs[i].events_lost_ring,
		       (unsigned long long)cs[i].port_errors);
}

static void print_meta(const struct agent *a, const struct vtrace_msg *m)
{
	const struct vtrace_meta_info *mi;
	const struct vtrace_cpu_info *ci;
	const struct vtrace_meta_file *mf;
	const struct vtrace_started *s;
	const char *name;
	const void *data;

	if (m->hdr.type == VTRACE_MSG_STARTED && !vtrace_msg_started(m, &s)) {
		printf("STARTED: session %" PRIu64 ", tsc %" PRIu64 ", %u metadata files\n",
		       (uint64_t)s->session, (uint64_t)s->tsc, s->nr_files);
	} else if (a->quiet) {
		return;
	} else if (m->hdr.type == VTRACE_MSG_META_INFO && !vtrace_msg_meta_info(m, &mi, &ci)) {
		printf("META_INFO: %s (%s), uuid '%s', %u CPUs, page %u, tsc_khz %" PRIu64
		       ", clock %s\n", mi->hostname, mi->release, mi->uuid, mi->nr_cpus,
		       mi->page_size, (uint64_t)mi->tsc_khz, mi->clock);
	} else if (m->hdr.type == VTRACE_MSG_META_FILE &&
		   !vtrace_msg_meta_file(m, &mf, &name, &data)) {
		printf("META_FILE: %s (%s, %" PRIu64 " bytes)\n", name,
		       vtrace_meta_kind_name(mf->kind), (uint64_t)mf->data_len);
	}
}

/* Print one message; returns the seq it answers (ACK/ERROR), else 0 */
static uint64_t print_msg(const struct agent *a, const struct vtrace_msg *m)
{
	const struct vtrace_hello *h;
	const struct vtrace_ack *ack;
	const struct vtrace_error *e;
	const char *text;

	switch (m->hdr.type) {
	case VTRACE_MSG_HELLO:
		if (!vtrace_msg_hello(m, &h))
			printf("HELLO: guest speaks %u..%u, uses %u\n", h->min_version,
			       h->max_version, m->hdr.version);
		return 0;
	case VTRACE_MSG_ACK:
		if (vtrace_msg_ack(m, &ack))
			return 0;
		printf("ACK: %s (seq %" PRIu64 ")\n", vtrace_msg_type_name(ack->type),
		       (uint64_t)ack->seq);
		return ack->seq;
	case VTRACE_MSG_ERROR:
		if (vtrace_msg_error(m, &e, &text))
			return 0;
		printf("ERROR: %s (seq %" PRIu64 "): %s (%d): %s\n", vtrace_msg_type_name(e->type),
		       (uint64_t)e->seq, strerror(-e->error), e->error, text);
		return e->seq;
	case VTRACE_MSG_STATUS:
	case VTRACE_MSG_EOS:
		print_stats(m, m->hdr.type == VTRACE_MSG_EOS ? "EOS" : "STATUS");
		return 0;
	default:
		print_meta(a, m);
		return 0;
	}
}

/* Handle what arrived; returns true once the reply to @seq was seen */
static bool agent_process(struct agent *a, uint64_t seq, uint16_t type, int *result)
{
	struct vtrace_msg m = { 0 };
	bool done = false;

	while (vtrace_ctl_next(a->ctl, &m)) {
		uint64_t answers = print_msg(a, &m);

		if (seq && answers == seq) {
			done = true;
			if (m.hdr.type == VTRACE_MSG_ERROR)
				*result = 1;
		}
		if (seq && type == VTRACE_MSG_HELLO && m.hdr.type == VTRACE_MSG_HELLO)
			done = true;
		vtrace_ctl_consume(a->ctl);
	}
	return done;
}

/* Read and print until the reply to @seq arrives (seq 0: for @ms only) */
static int agent_wait(struct agent *a, uint64_t seq, uint16_t type, int ms)
{
	long long end = vtrace_now_ms() + ms;
	int result = 0;

	fflush(stdout);
	while (vtrace_now_ms() < end) {
		if (vtrace_ctl_recv(a->ctl, end - vtrace_now_ms()) < 0) {
			fprintf(stderr, "vtrace agent: connection %s\n",
				vtrace_ctl_closed(a->ctl) ? "closed by QEMU" : "failed");
			return 1;
		}
		if (agent_process(a, seq, type, &result))
			return result;
		fflush(stdout);
	}
	if (!seq)
		return 0;
	fprintf(stderr, "vtrace agent: no reply to %s (seq %" PRIu64 ") within %d ms\n",
		vtrace_msg_type_name(type), seq, ms);
	return 1;
}

static int agent_send_file(struct agent *a, const char *path)
{
	unsigned char chunk[65536];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "vtrace agent: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((r = read(fd, chunk, sizeof(chunk))) > 0)
		if (vtrace_ctl_send_raw(a->ctl, chunk, r))
			break;
	close(fd);
	return agent_wait(a, 0, 0, 2000);
}

/* Send one command; returns its seq, 0 when it could not be sent */
static uint64_t agent_send(struct agent *a, uint16_t type, const void *p, uint32_t len)
{
	uint64_t seq = vtrace_ctl_send(a->ctl, type, p, len);

	if (!seq) {
		fprintf(stderr, "vtrace agent: %s: sending %s: %s\n", a->name,
			vtrace_msg_type_name(type), strerror(errno));
		return 0;
	}
	return seq;
}

/*
 * Send one command to every guest, then wait for each one's reply;
 * returns 0 when every guest answered ACK.
 */
static int agent_command(struct agent *as, int nr, uint16_t type, const void *p, uint32_t len)
{
	uint64_t seq[AGENT_MAX_GUESTS];
	int i, ret = 0;

	for (i = 0; i < nr; i++)
		seq[i] = agent_send(&as[i], type, p, len);
	for (i = 0; i < nr; i++) {
		if (nr > 1)
			printf("== %s\n", as[i].name);
		if (!seq[i] || agent_wait(&as[i], seq[i], type, as[i].timeout_ms))
			ret = 1;
	}
	return ret;
}

/* A command that is not a message: each guest in turn */
static int agent_each(struct agent *as, int nr, const char *cmd, const char *arg)
{
	int i, ret = 0;

	for (i = 0; i < nr; i++) {
		if (nr > 1)
			printf("== %s\n", as[i].name);
		if (!strcmp(cmd, "raw-file"))
			ret |= agent_send_file(&as[i], arg);
		else
			ret |= agent_wait(&as[i], 0, 0, atoi(arg) * 1000);
	}
	return ret;
}

/* One command word (and its argument); *used: argv entries consumed */
static int agent_run(struct agent *as, int nr, char **argv, int argc, int *used)
{
	const char *cmd = argv[0];
	struct vtrace_buffer_size b = { 0 };

	*used = 1;
	if (!strcmp(cmd, "hello"))
		return agent_command(as, nr, VTRACE_MSG_HELLO, NULL, 0);
	if (!strcmp(cmd, "start"))
		return agent_command(as, nr, VTRACE_MSG_START, NULL, 0);
	if (!strcmp(cmd, "stop"))
		return agent_command(as, nr, VTRACE_MSG_STOP, NULL, 0);
	if (!strcmp(cmd, "status"))
		return agent_command(as, nr, VTRACE_MSG_STATUS_REQ, NULL, 0);
	if (argc < 2) {
		fprintf(stderr, "vtrace agent: '%s' needs an argument (or is unknown)\n", cmd);
		return 2;
	}
	*used = 2;
	if (!strcmp(cmd, "events"))
		return agent_command(as, nr, VTRACE_MSG_SET_EVENTS, argv[1], strlen(argv[1]));
	if (!strcmp(cmd, "buffer-size")) {
		b.size_kb = strtoul(argv[1], NULL, 0);
		return agent_command(as, nr, VTRACE_MSG_SET_BUFFER_SIZE, &b, sizeof(b));
	}
	if (!strcmp(cmd, "raw-file") || !strcmp(cmd, "listen"))
		return agent_each(as, nr, cmd, argv[1]);
	fprintf(stderr, "vtrace agent: unknown command '%s'\n", cmd);
	return 2;
}

static const struct option agent_opts[] = {
	{ "socket",	required_argument,	NULL, 's' },
	{ "out",	required_argument,	NULL, 'o' },
	{ "libvirt",	required_argument,	NULL, 'L' },
	{ "connect",	required_argument,	NULL, 'c' },
	{ "timeout",	required_argument,	NULL, 't' },
	{ "quiet",	no_argument,		NULL, 'q' },
	{ "help",	no_argument,		NULL, 'h' },
	{ NULL,		0,			NULL, 0 },
};

/* Fill @as from the --socket/--out pairs; returns the number of guests, -1 on misuse */
static int agent_parse_args(int argc, char **argv, struct agent *as, int *timeout_ms, bool *quiet,
			    const char **uri)
{
	int c, nr_sock = 0, nr_out = 0;

	while ((c = getopt_long(argc, argv, "s:o:L:c:t:qh", agent_opts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'L':
		case 'o':
			if ((c == 'o' ? nr_out : nr_sock) == AGENT_MAX_GUESTS) {
				fprintf(stderr, "vtrace agent: at most %d guests\n", AGENT_MAX_GUESTS);
				return -1;
			}
			if (c == 's')
				as[nr_sock++].path = optarg;
			else if (c == 'L')
				as[nr_sock++].domain = optarg;
			else
				as[nr_out++].name = optarg;
			break;
		case 'c': *uri = optarg; break;
		case 't': *timeout_ms = atoi(optarg) * 1000; break;
		case 'q': *quiet = true; break;
		case 'h': fputs(agent_usage, stdout); exit(0);
		default: return -1;
		}
	}
	if (!nr_sock || nr_sock != nr_out || optind >= argc) {
		if (nr_sock != nr_out)
			fprintf(stderr, "vtrace agent: give one --out DIR per --socket PATH (or --libvirt NAME)\n\n");
		return -1;
	}
	return nr_sock;
}

int vtrace_cmd_agent(int argc, char **argv)
{
	static struct agent as[AGENT_MAX_GUESTS];
	int timeout_ms = 60000, nr, i, used, ret = 0;
	const char *uri = NULL;
	bool quiet = false;

	for (i = 0; i < AGENT_MAX_GUESTS; i++)
		as[i] = (struct agent){ .out = -1 };
	nr = agent_parse_args(argc, argv, as, &timeout_ms, &quiet, &uri);
	if (nr < 0) {
		fputs(agent_usage, stderr);
		return 2;
	}
	for (i = 0; i < nr && !ret; i++) {
		as[i].timeout_ms = timeout_ms;
		as[i].quiet = quiet;
		if (agent_open_out(&as[i], as[i].name) ||
		    (as[i].domain && agent_libvirt(&as[i], uri)) ||
		    agent_connect(&as[i], as[i].path))
			ret = 1;
	}
	if (!ret && strcmp(argv[optind], "hello") && strcmp(argv[optind], "raw-file"))
		ret = agent_command(as, nr, VTRACE_MSG_HELLO, NULL, 0);
	while (!ret && optind < argc) {
		ret = agent_run(as, nr, argv + optind, argc - optind, &used);
		optind += used;
	}
	for (i = 0; i < nr; i++) {
		vtrace_ctl_close(as[i].ctl);
		if (as[i].out >= 0)
			close(as[i].out);
		free(as[i].sock_path);
	}
	return ret;
}
