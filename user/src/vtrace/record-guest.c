// SPDX-License-Identifier: GPL-2.0
/* record-guest.c: "vtrace record"'s guests: finding them, driving their vtrace_guest, their data. */
/*
 * A guest is a QEMU with vtrace ports whose control port is a unix socket
 * (agent mode): named by pid (its command line says where its ports' host
 * ends are), by libvirt domain (its pid from libvirt), or by socket and
 * folder of data port files; with none named, every such QEMU running.
 *
 * Its data ports' files are QEMU's, appended to for as long as the VM
 * lives, sessions after sessions.  This recording's part is what they
 * gained between the START (their sizes taken just before it) and the
 * guest's EOS (sent after its last page): that part is copied to
 * DIR/NAME/cpuK, and DIR/NAME/ctl gets every byte the guest sent on this
 * connection (META_INFO, META_FILE..., STARTED, STATUS, EOS: a dump
 * folder's ctl, lib/dump.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vtrace-ctl.h"
#include "vtrace-proto.h"
#include "vtrace-util.h"
#include "record-local.h"

#define HELLO_MS	5000

void record_guest_free(struct rec_guest *g)
{
	for (int i = 0; i < g->nr_cpus; i++)
		free(g->cpu[i]);
	free(g->cpu);
	free(g->start_off);
	free(g->cur_off);
	free(g->name);
	free(g->prefix);
	free(g->ctl_path);
	free(g->out);
	free(g->vcpus);
	vtrace_ctl_close(g->ctl);
	if (g->ctl_fd > 0)
		close(g->ctl_fd);
	memset(g, 0, sizeof(*g));
}

/* A guest name is a folder name and a --guest NAME: no '/', '=', ',' or blank */
static char *clean_name(const char *name)
{
	char *n = strdup(name);

	for (char *p = n; p && *p; p++)
		if (strchr("/=, \t\n", *p))
			*p = '_';
	return n;
}

/* The error set so far, after "@fmt: " (vtrace_set_error() may not read its own buffer) */
static void prefix_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void prefix_error(const char *fmt, ...)
{
	char *why = strdup(vtrace_last_error()), head[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	vtrace_set_error("%s: %s", head, why ? why : "out of memory");
	free(why);
}

static int guest_alloc(struct rec_guest *g, int nr_cpus)
{
	g->nr_cpus = nr_cpus;
	g->start_off = calloc(nr_cpus + 1, sizeof(*g->start_off));
	g->cur_off = calloc(nr_cpus + 1, sizeof(*g->cur_off));
	if (!g->cpu)
		g->cpu = calloc(nr_cpus + 1, sizeof(*g->cpu));
	return g->start_off && g->cur_off && g->cpu && g->name ? 0 : -1;
}

/*
 * The data ports' files libvirt opened and passed to QEMU as fds
 * (path=/dev/fdset/N: QEMU keeps a copy of the fd under another number):
 * their paths from the status XML of domain @domain (connection @uri).
 */
static int resolve_fdsets(struct rec_guest *g, const char *domain, const char *uri)
{
	char port[300];

	for (int k = 0; k < g->nr_cpus; k++) {
		char *path;

		if (!g->cpu[k] || strncmp(g->cpu[k], "/dev/fdset/", 11))
			continue;
		snprintf(port, sizeof(port), "%s.cpu%d", g->prefix, k);
		path = domain ? vtrace_libvirt_channel_path(domain, uri, port) : NULL;
		if (!path) {
			if (domain)
				prefix_error("domain %s: port %s's file", domain, port);
			else
				vtrace_set_error("port %s's file is %s, an fd QEMU was given",
						 port, g->cpu[k]);
			return -1;
		}
		free(g->cpu[k]);
		g->cpu[k] = path;
	}
	return 0;
}

/*
 * Guest of running QEMU @pid (its ports from its command line), named @name
 * or after -name.  Its data ports' files that libvirt passed as fds get their
 * paths from domain @domain (connection @uri); with @domain NULL, from the
 * domain QEMU's -name names under the connection the folder libvirt gave it
 * as $HOME says.
 */
static int guest_from_pid(struct rec_guest *g, int pid, const char *name,
			  const char *domain, const char *uri)
{
	struct vtrace_qemu_ports p;
	char buf[32], *home_uri = NULL;
	int ret = -1;

	if (vtrace_qemu_ports_of_pid(pid, &p)) {
		prefix_error("QEMU pid %d", pid);
		return -1;
	}
	if (!p.ctl) {
		vtrace_set_error("QEMU pid %d: its %s.ctl port's host end is %s: vtrace record"
				 " drives a guest over a unix socket (vtrace qemu-args --agent)",
				 pid, p.prefix, p.ctl_is_file ? "a file (file mode)" : "not a socket");
		vtrace_qemu_ports_free(&p);
		return -1;
	}
	snprintf(buf, sizeof(buf), "qemu-%d", pid);
	g->name = clean_name(name ?: p.name ?: buf);
	g->pid = pid;
	g->ctl_path = p.ctl;
	g->cpu = p.cpu;
	g->prefix = p.prefix;
	p.ctl = NULL;
	p.cpu = NULL;
	p.prefix = NULL;
	if (guest_alloc(g, p.nr_cpus))
		goto out;
	if (domain) {
		ret = resolve_fdsets(g, domain, uri);
		goto out;
	}
	home_uri = p.home ? vtrace_libvirt_uri_of_home(p.home) : NULL;
	ret = resolve_fdsets(g, home_uri ? p.name : NULL, home_uri);
	if (ret && !home_uri)
		prefix_error("QEMU pid %d: not started by libvirt, or its folder unknown"
			     " (name the domain: --libvirt NAME --connect URI)", pid);
	else if (ret)
		prefix_error("QEMU pid %d (libvirt %s)", pid, home_uri);
out:
	free(home_uri);
	p.nr_cpus = 0;
	vtrace_qemu_ports_free(&p);
	return ret;
}

int record_guest_from_pid(struct rec_guest *g, int pid, const char *name)
{
	return guest_from_pid(g, pid, name, NULL, NULL);
}

/* Guest of running libvirt domain @domain (connection @uri) */
int record_guest_from_libvirt(struct rec_guest *g, const char *domain, const char *uri)
{
	int pid = vtrace_libvirt_pid(domain, uri);

	return pid < 0 ? -1 : guest_from_pid(g, pid, domain, domain, uri);
}

/* Guest of socket @sock whose data port files are @gdir/cpuK (qemu.pid there: its pid) */
int record_guest_from_socket(struct rec_guest *g, const char *sock, const char *gdir)
{
	char path[PATH_MAX], *copy = strdup(gdir), *text;
	uint64_t pid;
	int n = 0;

	g->name = copy ? clean_name(basename(copy)) : NULL;
	free(copy);
	g->ctl_path = strdup(sock);
	for (;; n++) {
		snprintf(path, sizeof(path), "%s/cpu%d", gdir, n);
		if (access(path, F_OK))
			break;
	}
	g->cpu = calloc(n + 1, sizeof(*g->cpu));
	for (int i = 0; g->cpu && i < n; i++) {
		snprintf(path, sizeof(path), "%s/cpu%d", gdir, i);
		g->cpu[i] = strdup(path);
	}
	snprintf(path, sizeof(path), "%s/qemu.pid", gdir);
	text = vtrace_read_file(path, 64, NULL);
	if (text && !vtrace_parse_u64(strtok(text, "\n") ?: "", &pid) && pid && pid < INT_MAX)
		g->pid = pid;
	free(text);
	if (!n) {
		vtrace_set_error("%s: no data port files (cpu0, cpu1, ...)", gdir);
		return -1;
	}
	return g->ctl_path ? guest_alloc(g, n) : -1;
}

/* Whether process @pid runs QEMU itself (not a wrapper whose arguments are QEMU's) */
static bool is_qemu(int pid)
{
	char path[64], exe[PATH_MAX];
	ssize_t l;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	l = readlink(path, exe, sizeof(exe) - 1);
	if (l <= 0)
		return false;
	exe[l] = '\0';
	return strstr(basename(exe), "qemu") != NULL;
}

/* Every running QEMU whose command line has vtrace ports with a socket ctl port */
int record_find_guests(struct rec_guest **gs, int *nr)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d) {
		vtrace_set_error("/proc: %s", strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		int pid = atoi(de->d_name);
		struct rec_guest *n;

		if (pid <= 0 || pid == getpid() || !is_qemu(pid) || !vtrace_qemu_has_ports(pid))
			continue;
		n = realloc(*gs, (*nr + 1) * sizeof(*n));
		if (!n)
			break;
		*gs = n;
		memset(&n[*nr], 0, sizeof(*n));
		if (record_guest_from_pid(&n[*nr], pid, NULL) == 0) {
			(*nr)++;
		} else {
			vtrace_warn("left out: %s", vtrace_last_error());
			record_guest_free(&n[*nr]);
		}
	}
	closedir(d);
	return 0;
}

static void guest_died(struct rec_guest *g, const char *why)
{
	if (g->dead)
		return;
	g->dead = true;
	snprintf(g->status, sizeof(g->status), "died: %s", why);
}

/* Counters of a STATUS or EOS */
static void guest_status(struct rec_guest *g, const struct vtrace_msg *m)
{
	const struct vtrace_status *st;
	const struct vtrace_cpu_stats *cs;
	uint64_t lost = 0;

	if (vtrace_msg_status(m, &st, &cs))
		return;
	for (uint32_t i = 0; i < st->nr_cpus; i++)
		lost += cs[i].events_lost_port + cs[i].events_lost_ring;
	g->lost = lost;
	if (m->hdr.type == VTRACE_MSG_EOS && g->started)
		g->stopped = true;
}

/* Handle what arrived; returns 1 once the reply to @seq came (0 none yet, -1 an ERROR) */
static int guest_process(struct rec_guest *g, uint64_t seq)
{
	const struct vtrace_error *e;
	const struct vtrace_ack *ack;
	struct vtrace_msg m = { 0 };
	const char *text;
	int ret = 0;

	while (vtrace_ctl_next(g->ctl, &m)) {
		switch (m.hdr.type) {
		case VTRACE_MSG_HELLO:
			if (seq == 1)
				ret = 1;
			break;
		case VTRACE_MSG_ACK:
			if (!vtrace_msg_ack(&m, &ack) && seq && ack->seq == seq)
				ret = 1;
			break;
		case VTRACE_MSG_ERROR:
			if (!vtrace_msg_error(&m, &e, &text) && seq && e->seq == seq) {
				snprintf(g->status, sizeof(g->status), "failed: %s refused: %s (%s)",
					 vtrace_msg_type_name(e->type), text, strerror(-e->error));
				ret = -1;
			}
			break;
		case VTRACE_MSG_STATUS:
		case VTRACE_MSG_EOS:
			guest_status(g, &m);
			break;
		}
		vtrace_ctl_consume(g->ctl);
	}
	return ret;
}

/* Read until the reply to @seq (and, for a STOP, the EOS); 0, or -1 with g->status set */
static int guest_wait(struct rec_guest *g, uint64_t seq, uint16_t type, int ms)
{
	long long end = vtrace_now_ms() + (ms > 0 ? ms : 0);
	bool acked = false;
	int ret, got;

	do {
		got = vtrace_ctl_recv(g->ctl, end - vtrace_now_ms());
		ret = guest_process(g, seq);
		if (ret < 0)
			return -1;
		acked |= ret > 0;
		if (acked && (type != VTRACE_MSG_STOP || g->stopped))
			return 0;
		if (got < 0) {
			guest_died(g, vtrace_ctl_closed(g->ctl) ?
				   "QEMU closed its control port (the VM ended?)" :
				   "its control port failed");
			return -1;
		}
	} while (got > 0 || vtrace_now_ms() < end);
	if (type == VTRACE_MSG_HELLO)
		snprintf(g->status, sizeof(g->status), "failed: no vtrace_guest answering on its"
			 " control port: load it in the guest (modprobe vtrace_guest)");
	else
		snprintf(g->status, sizeof(g->status), "failed: no %s to %s in time",
			 acked ? "EOS" : "reply", vtrace_msg_type_name(type));
	return -1;
}

static int guest_send(struct rec_guest *g, uint16_t type, const char *payload)
{
	g->seq = vtrace_ctl_send(g->ctl, type, payload, payload ? strlen(payload) : 0);
	if (g->seq)
		return 0;
	if (errno == EPIPE || errno == ECONNRESET)
		guest_died(g, "QEMU closed its control port (the VM ended?)");
	else
		snprintf(g->status, sizeof(g->status), "failed: sending %s: %s",
			 vtrace_msg_type_name(type), strerror(errno));
	return -1;
}

/*
 * DIR/NAME, its ctl, the connection, HELLO and the events: 0, or -1 with
 * the error set (the guest's message)
 */
int record_guest_open(struct rec_guest *g, const char *dir, const char *events)
{
	char path[PATH_MAX];

	if (asprintf(&g->out, "%s/%s", dir, g->name) < 0) {
		g->out = NULL;
		return -1;
	}
	if (mkdir(g->out, 0755)) {
		vtrace_set_error("%s: %s%s", g->out, strerror(errno),
				 errno == EEXIST ? " (two guests of that name? give --qemu PID"
				 " or --libvirt NAME one by one)" : "");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/ctl", g->out);
	g->ctl_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (g->ctl_fd < 0) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	g->ctl = vtrace_ctl_open(g->ctl_path, g->ctl_fd, "vtrace record");
	if (!g->ctl) {
		prefix_error("guest %s: control port", g->name);
		return -1;
	}
	if (guest_send(g, VTRACE_MSG_HELLO, NULL) || guest_wait(g, g->seq, VTRACE_MSG_HELLO,
								 HELLO_MS) ||
	    guest_send(g, VTRACE_MSG_SET_EVENTS, events) ||
	    guest_wait(g, g->seq, VTRACE_MSG_SET_EVENTS, HELLO_MS)) {
		vtrace_set_error("guest %s (%s): %s", g->name, g->ctl_path, g->status);
		return -1;
	}
	return 0;
}

static off_t file_size(const char *path)
{
	struct stat st;

	return path && !stat(path, &st) ? st.st_size : 0;
}

/*
 * Send @type to every guest still alive, then await each one's reply (a
 * STOP: its EOS too).  The data port files' sizes are taken just before a
 * START.  All within @timeout_ms.  Returns the number of guests that failed
 * (their status says why).
 */
int record_guests_command(struct rec_guest *gs, int nr, uint16_t type, int timeout_ms)
{
	long long end = vtrace_now_ms() + timeout_ms;
	int failed = 0;

	for (int i = 0; i < nr; i++) {
		if (gs[i].dead)
			continue;
		for (int k = 0; type == VTRACE_MSG_START && k < gs[i].nr_cpus; k++)
			gs[i].start_off[k] = gs[i].cur_off[k] = file_size(gs[i].cpu[k]);
		if (guest_send(&gs[i], type, NULL))
			gs[i].dead = true;
	}
	for (int i = 0; i < nr; i++) {
		if (gs[i].dead || guest_wait(&gs[i], gs[i].seq, type, end - vtrace_now_ms())) {
			gs[i].dead = true;
			failed++;
			continue;
		}
		gs[i].started |= type == VTRACE_MSG_START;
	}
	return failed;
}

/* Once a second while recording: what the guests said, their counters, whether they live */
void record_guests_poll(struct rec_guest *gs, int nr)
{
	for (int i = 0; i < nr; i++) {
		struct rec_guest *g = &gs[i];
		char why[128];

		if (g->dead)
			continue;
		while (vtrace_ctl_recv(g->ctl, 0) > 0)
			;
		guest_process(g, 0);
		if (vtrace_ctl_closed(g->ctl) || (g->pid && kill(g->pid, 0) && errno == ESRCH)) {
			snprintf(why, sizeof(why), "QEMU pid %d ended during the recording", g->pid);
			guest_died(g, vtrace_ctl_closed(g->ctl) && !g->pid ?
				   "QEMU closed its control port during the recording" : why);
			continue;
		}
		vtrace_ctl_send(g->ctl, VTRACE_MSG_STATUS_REQ, NULL, 0);
	}
}

/* Bytes this recording added to the guest's data port files so far */
uint64_t record_guest_bytes(struct rec_guest *g)
{
	uint64_t sum = 0;

	for (int k = 0; k < g->nr_cpus; k++) {
		off_t s = file_size(g->cpu[k]);

		if (s > g->cur_off[k])
			g->cur_off[k] = s;
		sum += g->cur_off[k] - g->start_off[k];
	}
	return sum;
}

/*
 * Up to @len bytes of @in at *@from to @out's end: copy_file_range(), or
 * read and write where the file systems cannot (9p, two of them)
 */
static ssize_t copy_range(int in, off_t *from, int out, size_t len)
{
	static char buf[1 << 20];
	ssize_t n = copy_file_range(in, from, out, NULL, len, 0);

	if (n >= 0 || (errno != EXDEV && errno != EOPNOTSUPP && errno != ENOSYS &&
		       errno != EINVAL))
		return n;
	n = pread(in, buf, len < sizeof(buf) ? len : sizeof(buf), *from);
	if (n <= 0)
		return n;
	for (ssize_t done = 0, w; done < n; done += w) {
		w = write(out, buf + done, n - done);
		if (w <= 0)
			return -1;
	}
	*from += n;
	return n;
}

/* Bytes [@from, end) of @src to new file @dst; 0 or -1 with the error set */
static int copy_tail(const char *src, off_t from, const char *dst, uint64_t *bytes)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1;
	off_t end;
	ssize_t n;

	if (in < 0) {
		vtrace_set_error("%s: %s", src, strerror(errno));
		return -1;
	}
	end = lseek(in, 0, SEEK_END);
	if (end < from) {
		vtrace_set_error("%s: %lld bytes, %lld when the recording started: the file was"
				 " cut during the recording", src, (long long)end, (long long)from);
		goto error;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		vtrace_set_error("%s: %s", dst, strerror(errno));
		goto error;
	}
	while (from < end) {
		n = copy_range(in, &from, out, end - from);
		if (n <= 0) {
			vtrace_set_error("copying %s to %s: %s", src, dst,
					 n ? strerror(errno) : "unexpected end");
			goto error;
		}
		*bytes += n;
	}
	close(in);
	if (close(out)) {
		vtrace_set_error("%s: %s", dst, strerror(errno));
		return -1;
	}
	return 0;
error:
	close(in);
	if (out >= 0)
		close(out);
	return -1;
}

/* This recording's part of each data port file to DIR/NAME/cpuK, and qemu.pid */
int record_guest_copy(struct rec_guest *g)
{
	char path[PATH_MAX];
	FILE *f;

	for (int k = 0; k < g->nr_cpus; k++) {
		if (!g->cpu[k])
			continue;
		snprintf(path, sizeof(path), "%s/cpu%d", g->out, k);
		if (copy_tail(g->cpu[k], g->start_off[k], path, &g->copied))
			return -1;
	}
	if (!g->pid)
		return 0;
	snprintf(path, sizeof(path), "%s/qemu.pid", g->out);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", g->pid) < 0 || fclose(f)) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
