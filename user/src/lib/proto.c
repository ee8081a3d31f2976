// SPDX-License-Identifier: GPL-2.0
/* proto.c: read, validate and write vtrace control-port messages. */
/*
 * Every message is a struct vtrace_msg_hdr then hdr.len payload bytes.
 * The peer (a guest) is not trusted, so nothing in a payload is used
 * before vtrace_msg_check() has verified it:
 *
 *   header	magic, version in [MIN, MAX] (HELLO: any >= 1), flags == 0,
 *		len <= max payload
 *   payload	exact size for the type (counted arrays included), reserved
 *		fields zero, strings NUL-terminated inside their field,
 *		counts and CPU numbers within bounds
 *
 * Unknown types pass with only the header checked: receivers skip them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vtrace-proto.h"

/* More CPUs than any guest we could merge; bounds the counted arrays */
#define VTRACE_MAX_CPUS		8192

struct vtrace_proto {
	int		fd;
	bool		own_fd;
	char		*name;
	uint64_t	offset;
	uint32_t	max_payload;
	char		err[512];
};

static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static const char * const type_names[] = {
	[VTRACE_MSG_HELLO]		= "HELLO",
	[VTRACE_MSG_ACK]		= "ACK",
	[VTRACE_MSG_ERROR]		= "ERROR",
	[VTRACE_MSG_START]		= "START",
	[VTRACE_MSG_STOP]		= "STOP",
	[VTRACE_MSG_SET_EVENTS]		= "SET_EVENTS",
	[VTRACE_MSG_SET_BUFFER_SIZE]	= "SET_BUFFER_SIZE",
	[VTRACE_MSG_STATUS_REQ]		= "STATUS_REQ",
	[VTRACE_MSG_STATUS]		= "STATUS",
	[VTRACE_MSG_META_INFO]		= "META_INFO",
	[VTRACE_MSG_META_FILE]		= "META_FILE",
	[VTRACE_MSG_STARTED]		= "STARTED",
	[VTRACE_MSG_EOS]		= "EOS",
};

const char *vtrace_msg_type_name(unsigned int type)
{
	if (type < sizeof(type_names) / sizeof(type_names[0]) && type_names[type])
		return type_names[type];
	return "unknown";
}

static const char * const kind_names[] = {
	[VTRACE_META_HEADER_PAGE]	= "header_page",
	[VTRACE_META_HEADER_EVENT]	= "header_event",
	[VTRACE_META_EVENT_FORMAT]	= "event format",
	[VTRACE_META_FTRACE_FORMAT]	= "ftrace format",
	[VTRACE_META_CMDLINES]		= "saved_cmdlines",
	[VTRACE_META_KALLSYMS]		= "kallsyms",
	[VTRACE_META_PRINTK_FORMATS]	= "printk_formats",
};

const char *vtrace_meta_kind_name(unsigned int kind)
{
	if (kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

int vtrace_msg_check_hdr(const struct vtrace_msg_hdr *hdr, uint32_t max_payload,
			 char *err, size_t err_len)
{
	if (hdr->magic != VTRACE_MAGIC) {
		set_err(err, err_len, "bad magic 0x%08x, expected 0x%08x (stream out of sync?)",
			hdr->magic, VTRACE_MAGIC);
		return -1;
	}
	if (hdr->type == VTRACE_MSG_HELLO ? hdr->version < 1 :
	    hdr->version < VTRACE_PROTO_VERSION_MIN || hdr->version > VTRACE_PROTO_VERSION) {
		set_err(err, err_len, "%s: unsupported protocol version %u, expected %u..%u",
			vtrace_msg_type_name(hdr->type), hdr->version,
			VTRACE_PROTO_VERSION_MIN, VTRACE_PROTO_VERSION);
		return -1;
	}
	if (hdr->flags) {
		set_err(err, err_len, "%s: unknown header flags 0x%x, expected 0",
			vtrace_msg_type_name(hdr->type), hdr->flags);
		return -1;
	}
	if (hdr->len > max_payload) {
		set_err(err, err_len, "%s: payload of %u bytes, expected at most %u",
			vtrace_msg_type_name(hdr->type), hdr->len, max_payload);
		return -1;
	}
	return 0;
}

/* A payload that is exactly one struct of @size bytes */
static int check_fixed(const struct vtrace_msg_hdr *hdr, size_t size, char *err, size_t err_len)
{
	if (hdr->len != size) {
		set_err(err, err_len, "%s: payload of %u bytes, expected %zu",
			vtrace_msg_type_name(hdr->type), hdr->len, size);
		return -1;
	}
	return 0;
}

/* A head struct of @size bytes then @count entries of @entry bytes */
static int check_array(const struct vtrace_msg_hdr *hdr, size_t size, uint32_t count,
		       size_t entry, char *err, size_t err_len)
{
	const char *type = vtrace_msg_type_name(hdr->type);

	if (count == 0 || count > VTRACE_MAX_CPUS) {
		set_err(err, err_len, "%s: nr_cpus %u, expected 1..%u", type, count,
			VTRACE_MAX_CPUS);
		return -1;
	}
	if (hdr->len != size + (uint64_t)count * entry) {
		set_err(err, err_len, "%s: payload of %u bytes, expected %zu for %u CPUs",
			type, hdr->len, size + count * entry, count);
		return -1;
	}
	return 0;
}

static int check_reserved(const struct vtrace_msg_hdr *hdr, bool nonzero, const char *field,
			  char *err, size_t err_len)
{
	if (!nonzero)
		return 0;
	set_err(err, err_len, "%s: reserved field %s is not zero",
		vtrace_msg_type_name(hdr->type), field);
	return -1;
}

static int check_string(const struct vtrace_msg_hdr *hdr, const char *s, size_t size,
			const char *field, char *err, size_t err_len)
{
	if (memchr(s, '\0', size))
		return 0;
	set_err(err, err_len, "%s: %s is not NUL-terminated within its %zu bytes",
		vtrace_msg_type_name(hdr->type), field, size);
	return -1;
}

static int check_hello(const struct vtrace_msg_hdr *hdr, const struct vtrace_hello *h,
		       char *err, size_t err_len)
{
	if (check_fixed(hdr, sizeof(*h), err, err_len) ||
	    check_reserved(hdr, h->flags, "flags", err, err_len) ||
	    check_reserved(hdr, h->reserved, "reserved", err, err_len))
		return -1;
	if (h->min_version < 1 || h->min_version > h->max_version) {
		set_err(err, err_len, "HELLO: bad version range %u..%u",
			h->min_version, h->max_version);
		return -1;
	}
	return 0;
}

static int check_error(const struct vtrace_msg_hdr *hdr, const void *data,
		       char *err, size_t err_len)
{
	const struct vtrace_error *e = data;

	if (hdr->len <= sizeof(*e)) {
		set_err(err, err_len, "ERROR: payload of %u bytes, expected more than %zu",
			hdr->len, sizeof(*e));
		return -1;
	}
	if (check_reserved(hdr, e->reserved, "reserved", err, err_len))
		return -1;
	return check_string(hdr, (const char *)data + sizeof(*e), hdr->len - sizeof(*e),
			    "text", err, err_len);
}

static int check_status(const struct vtrace_msg_hdr *hdr, const void *data,
			char *err, size_t err_len)
{
	const struct vtrace_status *st = data;
	const struct vtrace_cpu_stats *cs;

	/* a short payload may be no payload at all (data NULL): no pointer past it */
	if (hdr->len < sizeof(*st)) {
		set_err(err, err_len, "%s: payload of %u bytes, expected at least %zu",
			vtrace_msg_type_name(hdr->type), hdr->len, sizeof(*st));
		return -1;
	}
	cs = (const void *)(st + 1);
	if (check_array(hdr, sizeof(*st), st->nr_cpus, sizeof(*cs), err, err_len) ||
	    check_reserved(hdr, st->flags & ~VTRACE_STATUS_FLAGS, "flags (unknown bits)", err,
			   err_len))
		return -1;
	if (st->state > VTRACE_STATE_TRACING) {
		set_err(err, err_len, "%s: unknown state %u", vtrace_msg_type_name(hdr->type),
			st->state);
		return -1;
	}
	for (uint32_t i = 0; i < st->nr_cpus; i++) {
		if (cs[i].cpu >= VTRACE_MAX_CPUS) {
			set_err(err, err_len, "%s: cpu_stats[%u].cpu = %u, expected < %u",
				vtrace_msg_type_name(hdr->type), i, cs[i].cpu, VTRACE_MAX_CPUS);
			return -1;
		}
	}
	return 0;
}

static int check_meta_info(const struct vtrace_msg_hdr *hdr, const void *data,
			   char *err, size_t err_len)
{
	const struct vtrace_meta_info *mi = data;
	const struct vtrace_cpu_info *ci;

	if (hdr->len < sizeof(*mi)) {
		set_err(err, err_len, "META_INFO: payload of %u bytes, expected at least %zu",
			hdr->len, sizeof(*mi));
		return -1;
	}
	ci = (const void *)(mi + 1);
	if (check_array(hdr, sizeof(*mi), mi->nr_cpus, sizeof(*ci), err, err_len) ||
	    check_reserved(hdr, mi->reserved, "reserved", err, err_len) ||
	    check_string(hdr, mi->uuid, sizeof(mi->uuid), "uuid", err, err_len) ||
	    check_string(hdr, mi->release, sizeof(mi->release), "release", err, err_len) ||
	    check_string(hdr, mi->hostname, sizeof(mi->hostname), "hostname", err, err_len) ||
	    check_string(hdr, mi->clock, sizeof(mi->clock), "clock", err, err_len))
		return -1;
	if (mi->page_size < 64 || mi->page_size > (1U << 20) ||
	    (mi->page_size & (mi->page_size - 1))) {
		set_err(err, err_len, "META_INFO: page_size %u, expected a power of two 64..1M",
			mi->page_size);
		return -1;
	}
	if (mi->long_size != 4 && mi->long_size != 8) {
		set_err(err, err_len, "META_INFO: long_size %u, expected 4 or 8", mi->long_size);
		return -1;
	}
	for (uint32_t i = 0; i < mi->nr_cpus; i++) {
		if (ci[i].cpu >= mi->nr_cpus) {
			set_err(err, err_len, "META_INFO: cpu_info[%u].cpu = %u, expected < %u",
				i, ci[i].cpu, mi->nr_cpus);
			return -1;
		}
		if (check_reserved(hdr, ci[i].reserved, "cpu_info.reserved", err, err_len))
			return -1;
	}
	return 0;
}

static int check_meta_file(const struct vtrace_msg_hdr *hdr, const void *data,
			   char *err, size_t err_len)
{
	const struct vtrace_meta_file *mf = data;
	const char *name;

	if (hdr->len < sizeof(*mf)) {
		set_err(err, err_len, "META_FILE: payload of %u bytes, expected at least %zu",
			hdr->len, sizeof(*mf));
		return -1;
	}
	name = (const char *)(mf + 1);
	if (check_reserved(hdr, mf->reserved, "reserved", err, err_len))
		return -1;
	if (!mf->name_len || mf->name_len % 8) {
		set_err(err, err_len, "META_FILE: name_len %u, expected a non-zero multiple of 8",
			mf->name_len);
		return -1;
	}
	if ((uint64_t)hdr->len != sizeof(*mf) + (uint64_t)mf->name_len + mf->data_len) {
		set_err(err, err_len,
			"META_FILE: payload of %u bytes, expected %zu + name_len %u + data_len %llu",
			hdr->len, sizeof(*mf), mf->name_len, (unsigned long long)mf->data_len);
		return -1;
	}
	return check_string(hdr, name, mf->name_len, "name", err, err_len);
}

int vtrace_msg_check(const struct vtrace_msg_hdr *hdr, const void *data,
		     char *err, size_t err_len)
{
	switch (hdr->type) {
	case VTRACE_MSG_HELLO:
		return check_hello(hdr, data, err, err_len);
	case VTRACE_MSG_ACK: {
		const struct vtrace_ack *a = data;

		return check_fixed(hdr, sizeof(*a), err, err_len) ||
		       check_reserved(hdr, a->reserved0 || a->reserved1, "reserved",
				      err, err_len) ? -1 : 0;
	}
	case VTRACE_MSG_ERROR:
		return check_error(hdr, data, err, err_len);
	case VTRACE_MSG_START:
	case VTRACE_MSG_STOP:
	case VTRACE_MSG_STATUS_REQ:
		return check_fixed(hdr, 0, err, err_len);
	case VTRACE_MSG_SET_EVENTS:
		return 0;
	case VTRACE_MSG_SET_BUFFER_SIZE: {
		const struct vtrace_buffer_size *b = data;

		return check_fixed(hdr, sizeof(*b), err, err_len) ||
		       check_reserved(hdr, b->reserved, "reserved", err, err_len) ? -1 : 0;
	}
	case VTRACE_MSG_STATUS:
	case VTRACE_MSG_EOS:
		return check_status(hdr, data, err, err_len);
	case VTRACE_MSG_META_INFO:
		return check_meta_info(hdr, data, err, err_len);
	case VTRACE_MSG_META_FILE:
		return check_meta_file(hdr, data, err, err_len);
	case VTRACE_MSG_STARTED: {
		const struct vtrace_started *s = data;

		return check_fixed(hdr, sizeof(*s), err, err_len) ||
		       check_reserved(hdr, s->reserved, "reserved", err, err_len) ? -1 : 0;
	}
	default:
		return 0;
	}
}

struct vtrace_proto *vtrace_proto_open(int fd, const char *name)
{
	struct vtrace_proto *proto;

	proto = calloc(1, sizeof(*proto));
	if (!proto)
		return NULL;
	proto->name = strdup(name ? name : "control stream");
	if (!proto->name)
		goto error;
	proto->fd = fd;
	proto->max_payload = VTRACE_MSG_MAX_PAYLOAD;
	return proto;
error:
	free(proto);
	return NULL;
}

struct vtrace_proto *vtrace_proto_open_file(const char *path)
{
	struct vtrace_proto *proto;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	proto = vtrace_proto_open(fd, path);
	if (!proto) {
		close(fd);
		return NULL;
	}
	proto->own_fd = true;
	return proto;
}

void vtrace_proto_close(struct vtrace_proto *proto)
{
	if (!proto)
		return;
	if (proto->own_fd)
		close(proto->fd);
	free(proto->name);
	free(proto);
}

void vtrace_proto_set_max_payload(struct vtrace_proto *proto, uint32_t max)
{
	proto->max_payload = max;
}

const char *vtrace_proto_error(struct vtrace_proto *proto)
{
	return proto->err;
}

uint64_t vtrace_proto_offset(struct vtrace_proto *proto)
{
	return proto->offset;
}

/* Read exactly @len bytes; returns bytes read (< @len only at end of file) or -1 */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, (char *)buf + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += r;
	}
	return done;
}

static int read_payload(struct vtrace_proto *proto, struct vtrace_msg *msg)
{
	ssize_t r;

	if (!msg->hdr.len)
		return 0;
	msg->data = malloc(msg->hdr.len);
	if (!msg->data) {
		snprintf(proto->err, sizeof(proto->err), "%s: byte %llu: %s payload of %u bytes: %s",
			 proto->name, (unsigned long long)msg->offset,
			 vtrace_msg_type_name(msg->hdr.type), msg->hdr.len, strerror(errno));
		return -1;
	}
	r = read_full(proto->fd, msg->data, msg->hdr.len);
	if (r < 0) {
		snprintf(proto->err, sizeof(proto->err), "%s: byte %llu: read: %s", proto->name,
			 (unsigned long long)(proto->offset + sizeof(msg->hdr)), strerror(errno));
		return -1;
	}
	if ((size_t)r < msg->hdr.len) {
		snprintf(proto->err, sizeof(proto->err),
			 "%s: byte %llu: truncated %s message: %zd of %u payload bytes",
			 proto->name, (unsigned long long)msg->offset,
			 vtrace_msg_type_name(msg->hdr.type), r, msg->hdr.len);
		return -1;
	}
	return 0;
}

/**
 * vtrace_proto_read - read and check the next message
 * @proto:	the reader
 * @msg:	filled with the message; release it with vtrace_msg_release()
 *
 * Returns 1 with a message, 0 at a clean end of stream (between messages),
 * -1 on error with vtrace_proto_error() saying what, where.
 */
int vtrace_proto_read(struct vtrace_proto *proto, struct vtrace_msg *msg)
{
	char err[384];
	ssize_t r;

	memset(msg, 0, sizeof(*msg));
	msg->offset = proto->offset;
	r = read_full(proto->fd, &msg->hdr, sizeof(msg->hdr));
	if (r == 0)
		return 0;
	if (r < 0) {
		snprintf(proto->err, sizeof(proto->err), "%s: byte %llu: read: %s", proto->name,
			 (unsigned long long)proto->offset, strerror(errno));
		return -1;
	}
	if ((size_t)r < sizeof(msg->hdr)) {
		snprintf(proto->err, sizeof(proto->err),
			 "%s: byte %llu: truncated message header: %zd of %zu bytes",
			 proto->name, (unsigned long long)proto->offset, r, sizeof(msg->hdr));
		return -1;
	}
	if (vtrace_msg_check_hdr(&msg->hdr, proto->max_payload, err, sizeof(err)))
		goto error;
	if (read_payload(proto, msg))
		goto error_set;
	if (vtrace_msg_check(&msg->hdr, msg->data, err, sizeof(err)))
		goto error;
	proto->offset += sizeof(msg->hdr) + msg->hdr.len;
	return 1;
error:
	snprintf(proto->err, sizeof(proto->err), "%s: byte %llu: %s", proto->name,
		 (unsigned long long)msg->offset, err);
error_set:
	vtrace_msg_release(msg);
	return -1;
}

void vtrace_msg_release(struct vtrace_msg *msg)
{
	free(msg->data);
	msg->data = NULL;
}

static int want_type(const struct vtrace_msg *msg, unsigned int type)
{
	if (msg->hdr.type == type)
		return 0;
	errno = EINVAL;
	return -1;
}

int vtrace_msg_hello(const struct vtrace_msg *msg, const struct vtrace_hello **hello)
{
	if (want_type(msg, VTRACE_MSG_HELLO))
		return -1;
	*hello = msg->data;
	return 0;
}

int vtrace_msg_ack(const struct vtrace_msg *msg, const struct vtrace_ack **ack)
{
	if (want_type(msg, VTRACE_MSG_ACK))
		return -1;
	*ack = msg->data;
	return 0;
}

int vtrace_msg_error(const struct vtrace_msg *msg, const struct vtrace_error **error,
		     const char **text)
{
	if (want_type(msg, VTRACE_MSG_ERROR))
		return -1;
	*error = msg->data;
	*text = (const char *)(*error + 1);
	return 0;
}

int vtrace_msg_meta_info(const struct vtrace_msg *msg, const struct vtrace_meta_info **info,
			 const struct vtrace_cpu_info **cpus)
{
	if (want_type(msg, VTRACE_MSG_META_INFO))
		return -1;
	*info = msg->data;
	*cpus = (const void *)(*info + 1);
	return 0;
}

int vtrace_msg_meta_file(const struct vtrace_msg *msg, const struct vtrace_meta_file **file,
			 const char **name, const void **data)
{
	if (want_type(msg, VTRACE_MSG_META_FILE))
		return -1;
	*file = msg->data;
	*name = (const char *)(*file + 1);
	*data = *name + (*file)->name_len;
	return 0;
}

int vtrace_msg_status(const struct vtrace_msg *msg, const struct vtrace_status **status,
		      const struct vtrace_cpu_stats **cpus)
{
	if (msg->hdr.type != VTRACE_MSG_STATUS && want_type(msg, VTRACE_MSG_EOS))
		return -1;
	*status = msg->data;
	*cpus = (const void *)(*status + 1);
	return 0;
}

int vtrace_msg_started(const struct vtrace_msg *msg, const struct vtrace_started **started)
{
	if (want_type(msg, VTRACE_MSG_STARTED))
		return -1;
	*started = msg->data;
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += w;
	}
	return 0;
}

int vtrace_msg_write2(int fd, uint16_t type, uint64_t seq, const void *head, uint32_t head_len,
		      const void *tail, uint32_t tail_len)
{
	struct vtrace_msg_hdr hdr = {
		.magic		= VTRACE_MAGIC,
		.version	= VTRACE_PROTO_VERSION,
		.type		= type,
		.len		= head_len + tail_len,
		.seq		= seq,
	};

	if ((uint64_t)head_len + tail_len > UINT32_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	if (write_full(fd, &hdr, sizeof(hdr)) ||
	    (head_len && write_full(fd, head, head_len)) ||
	    (tail_len && write_full(fd, tail, tail_len)))
		return -1;
	return 0;
}

int vtrace_msg_write(int fd, uint16_t type, uint64_t seq, const void *payload, uint32_t len)
{
	return vtrace_msg_write2(fd, type, seq, payload, len, NULL, 0);
}

int vtrace_msg_write_hello(int fd, uint64_t seq)
{
	struct vtrace_hello hello = {
		.min_version	= VTRACE_PROTO_VERSION_MIN,
		.max_version	= VTRACE_PROTO_VERSION,
	};

	return vtrace_msg_write(fd, VTRACE_MSG_HELLO, seq, &hello, sizeof(hello));
}

int vtrace_msg_write_set_events(int fd, uint64_t seq, const char *events)
{
	size_t len = strlen(events);

	if (len > VTRACE_CMD_MAX_PAYLOAD) {
		errno = EMSGSIZE;
		return -1;
	}
	return vtrace_msg_write(fd, VTRACE_MSG_SET_EVENTS, seq, events, len);
}

int vtrace_msg_write_buffer_size(int fd, uint64_t seq, uint32_t size_kb)
{
	struct vtrace_buffer_size b = { .size_kb = size_kb };

	return vtrace_msg_write(fd, VTRACE_MSG_SET_BUFFER_SIZE, seq, &b, sizeof(b));
}
