/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-proto.h: read, validate and write vtrace control-port messages. */
/*
 * The wire format is include/uapi/linux/vtrace.h.  This is the userspace
 * side of it, shared by vtrace-merge (which reads a recorded "ctl" file)
 * and vtrace (which talks to a live guest):
 *
 *   reader = vtrace_proto_open(fd, "dump/ctl");
 *   while ((ret = vtrace_proto_read(reader, &msg)) > 0) {
 *           switch (msg.hdr.type) { ... vtrace_msg_meta_info(&msg, ...) ... }
 *           vtrace_msg_release(&msg);
 *   }
 *   if (ret < 0)
 *           fprintf(stderr, "%s\n", vtrace_proto_error(reader));
 *   vtrace_proto_close(reader);
 *
 * vtrace_proto_read() checks every header (magic, version, flags, length)
 * and, for the types it knows, the payload (sizes, counts, reserved fields,
 * NUL-terminated strings).  Errors name the stream and the byte offset of
 * the offending message.  Unknown types are returned unchecked so that the
 * caller can skip them.
 */
#ifndef _VTRACE_PROTO_H
#define _VTRACE_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/vtrace.h>

struct vtrace_proto;

/**
 * struct vtrace_msg - one message read from a control stream
 * @hdr:	its header, as sent
 * @data:	@hdr.len payload bytes (NULL when @hdr.len is 0); owned by
 *		the message, freed by vtrace_msg_release()
 * @offset:	byte offset of the header in the stream
 */
struct vtrace_msg {
	struct vtrace_msg_hdr	hdr;
	void			*data;
	uint64_t		offset;
};

struct vtrace_proto *vtrace_proto_open(int fd, const char *name);
struct vtrace_proto *vtrace_proto_open_file(const char *path);
void vtrace_proto_close(struct vtrace_proto *proto);
void vtrace_proto_set_max_payload(struct vtrace_proto *proto, uint32_t max);
int vtrace_proto_read(struct vtrace_proto *proto, struct vtrace_msg *msg);
const char *vtrace_proto_error(struct vtrace_proto *proto);
uint64_t vtrace_proto_offset(struct vtrace_proto *proto);
void vtrace_msg_release(struct vtrace_msg *msg);

/* Checks usable without a reader (a buffer already in memory) */
int vtrace_msg_check_hdr(const struct vtrace_msg_hdr *hdr, uint32_t max_payload,
			 char *err, size_t err_len);
int vtrace_msg_check(const struct vtrace_msg_hdr *hdr, const void *data,
		     char *err, size_t err_len);
const char *vtrace_msg_type_name(unsigned int type);
const char *vtrace_meta_kind_name(unsigned int kind);

/* Typed views of a checked message's payload (pointers into msg->data) */
int vtrace_msg_hello(const struct vtrace_msg *msg, const struct vtrace_hello **hello);
int vtrace_msg_ack(const struct vtrace_msg *msg, const struct vtrace_ack **ack);
int vtrace_msg_error(const struct vtrace_msg *msg, const struct vtrace_error **error,
		     const char **text);
int vtrace_msg_meta_info(const struct vtrace_msg *msg, const struct vtrace_meta_info **info,
			 const struct vtrace_cpu_info **cpus);
int vtrace_msg_meta_file(const struct vtrace_msg *msg, const struct vtrace_meta_file **file,
			 const char **name, const void **data);
int vtrace_msg_status(const struct vtrace_msg *msg, const struct vtrace_status **status,
		      const struct vtrace_cpu_stats **cpus);
int vtrace_msg_started(const struct vtrace_msg *msg, const struct vtrace_started **started);

/*
 * Writing: one header + payload, written whole (retrying short writes).
 * @seq is the caller's counter.  vtrace_msg_write2() sends two payload
 * parts back to back (a head struct and its array or text).
 */
int vtrace_msg_write(int fd, uint16_t type, uint64_t seq, const void *payload, uint32_t len);
int vtrace_msg_write2(int fd, uint16_t type, uint64_t seq, const void *head, uint32_t head_len,
		      const void *tail, uint32_t tail_len);
int vtrace_msg_write_hello(int fd, uint64_t seq);
int vtrace_msg_write_set_events(int fd, uint64_t seq, const char *events);
int vtrace_msg_write_buffer_size(int fd, uint64_t seq, uint32_t size_kb);

#endif /* _VTRACE_PROTO_H */
