// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: messages from the guest to the host on vtrace.ctl. */
/*
 * Every message is built whole in a kernel buffer (header + payload parts)
 * and written to the port in chunks of at most 32 KiB, virtio_console's
 * limit per write, through the control thread's bounce buffer.
 *
 * The port is non-blocking.  When it does not take data (host end not
 * connected, or not reading), the writer sleeps on the port's wait queue
 * and writes again each time the port wakes it (vtg_port_write() in
 * ports.c), until the message's deadline: port_timeout_ms for the whole
 * message (plus as much per 4 MiB), not per chunk, so a host that reads
 * slowly cannot stretch one message to minutes.  Then the message is
 * dropped and counted (ctl_lost), and the port is marked stalled: later
 * messages are tried once, without waiting, until one goes through whole,
 * so a guest without a host never spends more than one timeout per stall.
 * A timeout while the host end is connected marks the host slow
 * (vtg.ctl_slow): a start then fails (meta.c).  A message cut short
 * mid-way leaves a truncated message in the stream, which the host
 * detects (short payload, then a magic mismatch) and resyncs from.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "vtg.h"

/* One chunk through the bounce buffer; -EAGAIN: port full or host end not connected */
static ssize_t vtg_ctl_write_chunk(const u8 *buf, size_t len, unsigned long deadline)
{
	if (copy_to_user(vtg.ubuf, buf, len))
		return -EFAULT;
	return vtg_port_write(&vtg.ctl, vtg.ubuf, len, deadline);
}

/*
 * The deadline of one message of @len bytes, for all its chunks together:
 * port_timeout_ms, plus as much again per VTG_CTL_TIMEOUT_BYTES (a 5 MiB
 * kallsyms gets two), never past the operation's deadline (a start's
 * metadata, meta.c).
 */
static unsigned long vtg_ctl_deadline(size_t len)
{
	unsigned long d = jiffies + msecs_to_jiffies(READ_ONCE(vtg_port_timeout_ms)) *
				    (1 + len / VTG_CTL_TIMEOUT_BYTES);

	if (vtg.ctl_deadline_set && time_before(vtg.ctl_deadline, d))
		d = vtg.ctl_deadline;
	return d;
}

/*
 * Write one message whole, or give up at its deadline.  A stalled port
 * (the last message timed out) gets no wait at all: what the port takes
 * at once is written, the rest dropped, until a message goes through.
 */
static int vtg_ctl_write(const u8 *buf, size_t len)
{
	unsigned long deadline = vtg_ctl_deadline(len);
	size_t off = 0;
	ssize_t ret;

	while (off < len) {
		ret = vtg_ctl_write_chunk(buf + off, min_t(size_t, len - off, VTG_PORT_CHUNK),
					  deadline);
		if (ret <= 0)
			return ret ? ret : -EIO;
		off += ret;
	}
	vtg_port_unstall(&vtg.ctl);
	return 0;
}

/**
 * vtg_send() - send one message on vtrace.ctl
 * @type:	%VTRACE_MSG_*
 * @p1:		first payload part, @l1 bytes (NULL if @l1 is 0)
 * @l1:		its length
 * @p2:		second part, @l2 bytes
 * @l2:		its length
 * @p3:		third part, @l3 bytes
 * @l3:		its length
 *
 * The header, then the parts back to back; sent whole or dropped at its
 * deadline (see the top of this file).
 *
 * Context: the control thread.
 * Return: 0, or a negative errno (the message counts in ctl_lost).
 */
int vtg_send(u16 type, const void *p1, size_t l1, const void *p2, size_t l2,
	     const void *p3, size_t l3)
{
	size_t len = sizeof(struct vtrace_msg_hdr) + l1 + l2 + l3;
	struct vtrace_msg_hdr *h;
	u8 *buf;
	int ret;

	if (!vtg_port_present(&vtg.ctl)) {
		vtg.ctl_lost++;
		return -ENODEV;
	}
	buf = kvmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	h = (struct vtrace_msg_hdr *)buf;
	*h = (struct vtrace_msg_hdr) {
		.magic = VTRACE_MAGIC,
		.version = vtg.version,
		.type = type,
		.len = l1 + l2 + l3,
		.seq = ++vtg.tx_seq,
	};
	if (l1)
		memcpy(buf + sizeof(*h), p1, l1);
	if (l2)
		memcpy(buf + sizeof(*h) + l1, p2, l2);
	if (l3)
		memcpy(buf + sizeof(*h) + l1 + l2, p3, l3);
	ret = vtg_ctl_write(buf, len);
	kvfree(buf);
	if (ret) {
		if (ret == -ETIMEDOUT && vtg_port_connected(&vtg.ctl))
			vtg.ctl_slow = true;
		vtg.ctl_lost++;
		pr_warn_ratelimited("message type %u seq %llu not delivered: %d\n",
				    type, vtg.tx_seq, ret);
		return ret;
	}
	vtg.ctl_sent++;
	return 0;
}

/**
 * vtg_send_ack() - send ACK of a host command
 * @seq:	the command's seq
 * @type:	the command's type
 *
 * Context: the control thread.
 * Return: as vtg_send().
 */
int vtg_send_ack(u64 seq, u16 type)
{
	struct vtrace_ack a = { .seq = seq, .type = type };

	return vtg_send(VTRACE_MSG_ACK, &a, sizeof(a), NULL, 0, NULL, 0);
}

/**
 * vtg_send_error() - send ERROR about a host message
 * @seq:	the message's seq (0: no message, e.g. a resync)
 * @type:	its type
 * @error:	negative errno
 * @text:	why, for the host's log
 *
 * Payload: struct vtrace_error, then the text, NUL, padded to 8 bytes.
 *
 * Context: the control thread.
 * Return: as vtg_send().
 */
int vtg_send_error(u64 seq, u16 type, int error, const char *text)
{
	struct vtrace_error e = { .seq = seq, .type = type, .error = error };
	static const char zeros[8];
	size_t tlen = strlen(text) + 1;

	vtg.cmd_errors++;
	return vtg_send(VTRACE_MSG_ERROR, &e, sizeof(e), text, tlen,
			zeros, ALIGN(tlen, 8) - tlen);
}

/**
 * vtg_send_hello() - send HELLO with the protocol versions the guest speaks
 *
 * Context: the control thread.
 * Return: as vtg_send().
 */
int vtg_send_hello(void)
{
	struct vtrace_hello h = {
		.min_version = VTRACE_PROTO_VERSION_MIN,
		.max_version = VTRACE_PROTO_VERSION,
	};

	return vtg_send(VTRACE_MSG_HELLO, &h, sizeof(h), NULL, 0, NULL, 0);
}
