// SPDX-License-Identifier: GPL-2.0
/* fuzz-proto.c: the control-message stream, as vtrace-merge and vtrace agent read it. */
/*
 * The input is a whole control stream.  It goes through two paths:
 *
 *   1. vtrace_proto_read() over a memfd, message after message, every
 *      checked message taken apart with its typed view (strings read to
 *      their NUL, counted arrays walked): a view that reaches outside the
 *      payload is an ASan report;
 *   2. vtrace_msg_check_hdr() + vtrace_msg_check() on the first message
 *      held in a buffer of exactly its size (the agent's in-memory path).
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "fuzz.h"
#include "vtrace-proto.h"

static void take_apart(const struct vtrace_msg *msg)
{
	const struct vtrace_hello *hello;
	const struct vtrace_ack *ack;
	const struct vtrace_error *error;
	const struct vtrace_meta_info *mi;
	const struct vtrace_cpu_info *ci;
	const struct vtrace_meta_file *mf;
	const struct vtrace_status *st;
	const struct vtrace_cpu_stats *cs;
	const struct vtrace_started *started;
	const char *text;
	const void *data;

	fuzz_sink += strlen(vtrace_msg_type_name(msg->hdr.type));
	switch (msg->hdr.type) {
	case VTRACE_MSG_HELLO:
		if (!vtrace_msg_hello(msg, &hello))
			fuzz_touch(hello, sizeof(*hello));
		break;
	case VTRACE_MSG_ACK:
		if (!vtrace_msg_ack(msg, &ack))
			fuzz_touch(ack, sizeof(*ack));
		break;
	case VTRACE_MSG_ERROR:
		if (!vtrace_msg_error(msg, &error, &text))
			fuzz_sink += error->error + strlen(text);
		break;
	case VTRACE_MSG_META_INFO:
		if (vtrace_msg_meta_info(msg, &mi, &ci))
			break;
		fuzz_sink += strlen(mi->uuid) + strlen(mi->release) + strlen(mi->hostname) +
			     strlen(mi->clock);
		fuzz_touch(ci, (size_t)mi->nr_cpus * sizeof(*ci));
		break;
	case VTRACE_MSG_META_FILE:
		if (vtrace_msg_meta_file(msg, &mf, &text, &data))
			break;
		fuzz_sink += strlen(text) + strlen(vtrace_meta_kind_name(mf->kind));
		fuzz_touch(data, mf->data_len);
		break;
	case VTRACE_MSG_STATUS:
	case VTRACE_MSG_EOS:
		if (!vtrace_msg_status(msg, &st, &cs))
			fuzz_touch(cs, (size_t)st->nr_cpus * sizeof(*cs));
		break;
	case VTRACE_MSG_STARTED:
		if (!vtrace_msg_started(msg, &started))
			fuzz_touch(started, sizeof(*started));
		break;
	default:
		fuzz_touch(msg->data, msg->hdr.len);
	}
}

static void read_stream(const uint8_t *data, size_t size)
{
	struct vtrace_proto *p;
	struct vtrace_msg msg;
	int fd, ret;

	fd = memfd_create("ctl", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET))
		abort();
	p = vtrace_proto_open(fd, "ctl");
	if (!p)
		abort();
	while ((ret = vtrace_proto_read(p, &msg)) > 0) {
		if (msg.offset + sizeof(msg.hdr) + msg.hdr.len > size)
			abort();	/* a message longer than the stream */
		take_apart(&msg);
		vtrace_msg_release(&msg);
	}
	if (ret < 0)
		fuzz_sink += strlen(vtrace_proto_error(p));
	fuzz_sink += vtrace_proto_offset(p);
	vtrace_proto_close(p);
	close(fd);
}

static void check_buffer(const uint8_t *data, size_t size)
{
	struct vtrace_msg_hdr hdr;
	char err[256];
	void *payload;

	if (size < sizeof(hdr))
		return;
	memcpy(&hdr, data, sizeof(hdr));
	if (vtrace_msg_check_hdr(&hdr, size - sizeof(hdr), err, sizeof(err)))
		return;
	/* exactly hdr.len bytes on the heap: one byte more read is a report */
	payload = malloc(hdr.len ? hdr.len : 1);
	if (!payload)
		abort();
	memcpy(payload, data + sizeof(hdr), hdr.len);
	if (vtrace_msg_check(&hdr, hdr.len ? payload : NULL, err, sizeof(err)))
		fuzz_sink += strlen(err);
	free(payload);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_stream(data, size);
	check_buffer(data, size);
	return 0;
}
