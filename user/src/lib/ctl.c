// SPDX-License-Identifier: GPL-2.0
/* ctl.c: a live connection to a guest's vtrace.ctl port: connect, send, receive, parse. */
/*
 * QEMU exposes the host end of vtrace.ctl as a unix socket
 * (-chardev socket,...,server=on,wait=off).  The connection keeps what it
 * received in a buffer and hands out whole, checked messages; every byte
 * received is also appended to an output file (the dump folder's ctl), so
 * that vtrace-merge reads the same stream whether ctl was a chardev file
 * or this socket.  Bytes before a bad header are skipped with a warning
 * naming the connection.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vtrace-ctl.h"
#include "vtrace-util.h"

struct vtrace_ctl {
	char		*who;		/* the start of its warnings ("vtrace agent") */
	int		sock;
	int		out;		/* not owned */
	uint64_t	seq;
	unsigned char	*buf;
	size_t		len;
	size_t		cap;
	size_t		msg_size;	/* of the message vtrace_ctl_next() handed out */
	bool		closed;
};

long long vtrace_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/**
 * vtrace_ctl_open - connect to the unix socket @path of a guest's vtrace.ctl
 * @path:	QEMU's socket (server=on)
 * @out_fd:	file every received byte is appended to, -1 for none (not closed)
 * @who:	what warnings start with
 *
 * Returns the connection, or NULL with the error set.
 */
struct vtrace_ctl *vtrace_ctl_open(const char *path, int out_fd, const char *who)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct vtrace_ctl *ctl;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		vtrace_set_error("socket path too long: %s", path);
		return NULL;
	}
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl || !(ctl->who = strdup(who))) {
		free(ctl);
		vtrace_set_error("out of memory");
		return NULL;
	}
	ctl->out = out_fd;
	strcpy(addr.sun_path, path);
	ctl->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl->sock < 0 || connect(ctl->sock, (struct sockaddr *)&addr, sizeof(addr))) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		vtrace_ctl_close(ctl);
		return NULL;
	}
	return ctl;
}

void vtrace_ctl_close(struct vtrace_ctl *ctl)
{
	if (!ctl)
		return;
	if (ctl->sock >= 0)
		close(ctl->sock);
	free(ctl->buf);
	free(ctl->who);
	free(ctl);
}

int vtrace_ctl_fd(const struct vtrace_ctl *ctl)
{
	return ctl->sock;
}

/* The peer (QEMU) closed the connection */
bool vtrace_ctl_closed(const struct vtrace_ctl *ctl)
{
	return ctl->closed;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= w;
	}
	return 0;
}

/* Send one command; returns its seq, 0 (errno set) when it could not be sent */
uint64_t vtrace_ctl_send(struct vtrace_ctl *ctl, uint16_t type, const void *p, uint32_t len)
{
	uint64_t seq = ++ctl->seq;
	int ret;

	if (type == VTRACE_MSG_HELLO)
		ret = vtrace_msg_write_hello(ctl->sock, seq);
	else
		ret = vtrace_msg_write(ctl->sock, type, seq, p, len);
	return ret ? 0 : seq;
}

/* Bytes as they are (a test's raw input); 0 or -1 with errno */
int vtrace_ctl_send_raw(struct vtrace_ctl *ctl, const void *p, size_t len)
{
	return write_all(ctl->sock, p, len);
}

/*
 * Receive what arrives within @ms (0: what is there); append it to the
 * output file and the parse buffer.  Returns 1 when bytes came, 0 when
 * none did, -1 when the connection is closed (vtrace_ctl_closed()) or failed.
 */
int vtrace_ctl_recv(struct vtrace_ctl *ctl, int ms)
{
	struct pollfd pfd = { .fd = ctl->sock, .events = POLLIN };
	ssize_t r;
	int ret;

	ret = poll(&pfd, 1, ms < 0 ? 0 : ms);
	if (ret <= 0)
		return ret < 0 && errno != EINTR ? -1 : 0;
	if (ctl->cap - ctl->len < 65536) {
		unsigned char *n = realloc(ctl->buf, ctl->cap * 2 + 65536);

		if (!n)
			return -1;
		ctl->buf = n;
		ctl->cap = ctl->cap * 2 + 65536;
	}
	r = read(ctl->sock, ctl->buf + ctl->len, ctl->cap - ctl->len);
	if (r == 0) {
		ctl->closed = true;
		return -1;
	}
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	if (ctl->out >= 0 && write_all(ctl->out, ctl->buf + ctl->len, r))
		fprintf(stderr, "%s: writing ctl: %s\n", ctl->who, strerror(errno));
	ctl->len += r;
	return 1;
}

static void ctl_drop(struct vtrace_ctl *ctl, size_t n)
{
	memmove(ctl->buf, ctl->buf + n, ctl->len - n);
	ctl->len -= n;
}

/* The message vtrace_ctl_next() handed out is done with */
void vtrace_ctl_consume(struct vtrace_ctl *ctl)
{
	ctl_drop(ctl, ctl->msg_size);
	ctl->msg_size = 0;
}

/*
 * The next whole message of the buffer: returns 1 with *m filled (its
 * payload points into the buffer until vtrace_ctl_consume()), 0 when more
 * bytes are needed.  Bad messages are skipped with a warning.
 */
int vtrace_ctl_next(struct vtrace_ctl *ctl, struct vtrace_msg *m)
{
	char err[256];
	size_t skip;

	while (ctl->len >= sizeof(m->hdr)) {
		memcpy(&m->hdr, ctl->buf, sizeof(m->hdr));
		if (!vtrace_msg_check_hdr(&m->hdr, VTRACE_MSG_MAX_PAYLOAD, err, sizeof(err))) {
			if (ctl->len < sizeof(m->hdr) + m->hdr.len)
				return 0;
			m->data = m->hdr.len ? ctl->buf + sizeof(m->hdr) : NULL;
			ctl->msg_size = sizeof(m->hdr) + m->hdr.len;
			if (vtrace_msg_check(&m->hdr, m->data, err, sizeof(err)) == 0)
				return 1;
			fprintf(stderr, "%s: skipping a bad message: %s\n", ctl->who, err);
			vtrace_ctl_consume(ctl);
			continue;
		}
		fprintf(stderr, "%s: %s; resynchronizing\n", ctl->who, err);
		for (skip = 1; skip + 4 <= ctl->len; skip++)
			if (*(uint32_t *)(ctl->buf + skip) == VTRACE_MAGIC)
				break;
		ctl_drop(ctl, skip);
	}
	return 0;
}
