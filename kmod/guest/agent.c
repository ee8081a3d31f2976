// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: agent mode, commands from the host on vtrace.ctl, validated and answered. */
/*
 * The control thread reads vtrace.ctl (O_NONBLOCK) when the port wakes it
 * and appends what arrived to vtg.rx, then takes whole messages off its
 * front.  It sleeps on the port itself: a permanent entry on the wait queue
 * virtio_console's poll() uses, which the driver wakes when bytes arrive,
 * the host end connects or disconnects, the host takes our output, and the
 * port is unplugged.  Each round ends with a poll() of the port that frees
 * the output buffers the host has used, so that other ports' interrupts
 * stop waking it, and whose EPOLLIN it acts on (vtg_ctl_reclaim()).  Only
 * while vtg.rx holds an incomplete message (or if the port has no poll())
 * does it also wake every poll_ms, for the timeouts below.
 *
 *   rx: [garbage][hdr|payload][hdr|pay...        (incomplete)
 *        ^ skipped up to the next magic, one ERROR (seq 0) per resync
 *
 * Every field the host sends is checked:
 *   magic            resync by scanning for the next VTRACE_MAGIC
 *   len              > VTRACE_CMD_MAX_PAYLOAD: ERROR -EMSGSIZE, resync
 *   incomplete       after VTG_RX_TIMEOUT_MS without more bytes: ERROR
 *                    -EPROTO (truncated), resync
 *   flags            non-zero: ERROR -EINVAL, message skipped by length
 *   version          outside [VTRACE_PROTO_VERSION_MIN, _VERSION] (except
 *                    HELLO): ERROR -EPROTONOSUPPORT, skipped
 *   seq              must grow; HELLO starts a new conversation (any seq),
 *                    and so does a host disconnect: ERROR -EPROTO otherwise
 *   type             unknown: ERROR -EOPNOTSUPP, skipped by length;
 *                    guest->host types: ERROR -EINVAL
 *   payload          exact size, reserved fields zero, text without NULs
 *
 * Commands that change state are refused in a confidential guest unless
 * trust_host is set; those and STATUS_REQ are rate limited
 * (vtg_cmd_allowed()).
 *
 * Each command gets exactly one ACK or ERROR carrying its seq (STATUS_REQ:
 * STATUS, then ACK; HELLO: a HELLO).  Log lines are rate limited.  Nothing
 * is allocated per message beyond the command's own work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "vtg.h"

#define VTG_RX_TIMEOUT_MS	1000
#define VTG_RX_OLD_MS		200
#define VTG_RX_SIZE		(sizeof(struct vtrace_msg_hdr) + VTRACE_CMD_MAX_PAYLOAD)

static void vtg_rx_drop(size_t n)
{
	n = min(n, vtg.rx_len);
	memmove(vtg.rx, vtg.rx + n, vtg.rx_len - n);
	vtg.rx_len -= n;
}

static void vtg_reply_error(const struct vtrace_msg_hdr *h, int error, const char *why)
{
	pr_warn_ratelimited("host message seq %llu type %u refused: %s\n",
			    h ? h->seq : 0, h ? h->type : 0, why);
	vtg_send_error(h ? h->seq : 0, h ? h->type : 0, error, why);
}

/**
 * vtg_agent_watch() - have vtg.ctl wake the control thread
 *
 * Queues vtg.ctl_poller on the port (after the port is opened).
 *
 * Context: the control thread.
 */
void vtg_agent_watch(void)
{
	vtg_port_watch(&vtg.ctl, &vtg.ctl_poller, &vtg.wq);
}

/**
 * vtg_agent_unwatch() - take vtg.ctl_poller off the port
 *
 * Before vtg.ctl is closed: the port's wait queue goes with the file.
 *
 * Context: the control thread.
 */
void vtg_agent_unwatch(void)
{
	vtg_poller_del(&vtg.ctl_poller);
}

/**
 * vtg_agent_timeout() - how long the control thread may sleep when nothing wakes it
 *
 * Return: poll_ms in jiffies while a message is incomplete or the port
 * cannot wake the thread, else %MAX_SCHEDULE_TIMEOUT.
 */
long vtg_agent_timeout(void)
{
	if (vtg_port_present(&vtg.ctl) && (!vtg_poller_queued(&vtg.ctl_poller) || vtg.rx_len))
		return msecs_to_jiffies(vtg_poll_ms);
	return MAX_SCHEDULE_TIMEOUT;
}

/*
 * Read what the host sent; a read of 0 means the host end is closed.
 * Return: whether bytes were read.
 */
static bool vtg_rx_fill(void)
{
	bool got = false;
	ssize_t ret;

	while (vtg.rx_len < VTG_RX_SIZE) {
		ret = vtg_port_read(&vtg.ctl, vtg.ubuf,
				    min_t(size_t, VTG_RX_SIZE - vtg.rx_len, VTG_UBUF_SIZE));
		if (ret == 0) {
			/*
			 * Host end closed: the next client starts afresh.  A new
			 * client's first bytes can arrive before the guest learns
			 * it connected (reads then still say "closed"): only bytes
			 * older than VTG_RX_OLD_MS are a departed client's.
			 */
			vtg.host_seq = 0;
			if (!got && time_after(jiffies, vtg.rx_since +
					       msecs_to_jiffies(VTG_RX_OLD_MS)))
				vtg.rx_len = 0;
			return got;
		}
		if (ret == -ENODEV) {
			/* hot-unplugged: later messages count as lost */
			pr_warn("control port removed\n");
			vtg_agent_unwatch();
			vtg_port_close(&vtg.ctl);
			vtg.rx_len = 0;
			return false;
		}
		if (ret < 0) {
			if (ret != -EAGAIN)
				pr_warn_ratelimited("reading ctl: %zd\n", ret);
			return got;
		}
		if (copy_from_user(vtg.rx + vtg.rx_len, vtg.ubuf, ret))
			return got;
		vtg.rx_len += ret;
		vtg.rx_since = jiffies;
		got = true;
		/* someone is there: replies get the full port_timeout_ms again */
		vtg_port_unstall(&vtg.ctl);
	}
	return got;
}

/* Skip to the next magic (or keep a tail that may start one) */
static void vtg_resync(void)
{
	static const u32 magic = VTRACE_MAGIC;
	size_t off;

	for (off = 1; off < vtg.rx_len; off++)
		if (!memcmp(vtg.rx + off, &magic, min_t(size_t, 4, vtg.rx_len - off)))
			break;
	vtg_rx_drop(off);
}

static bool vtg_text_ok(const char *p, size_t len)
{
	while (len && !p[len - 1])
		len--;
	return !memchr(p, '\0', len);
}

static void vtg_cmd_hello(const struct vtrace_msg_hdr *h, const void *p)
{
	const struct vtrace_hello *hi = p;
	u16 v;

	if (h->len != sizeof(*hi) || hi->flags || hi->reserved || hi->min_version > hi->max_version)
		return vtg_reply_error(h, -EINVAL, "malformed HELLO");
	v = min_t(u16, hi->max_version, VTRACE_PROTO_VERSION);
	if (v < hi->min_version || v < VTRACE_PROTO_VERSION_MIN)
		return vtg_reply_error(h, -EPROTONOSUPPORT, "no common protocol version");
	vtg.version = v;
	vtg.host_seq = h->seq;
	vtg_send_hello();
}

static int vtg_cmd_events(const struct vtrace_msg_hdr *h, const void *p)
{
	char *spec;
	int ret;

	if (!vtg_text_ok(p, h->len))
		return -EINVAL;
	spec = kmemdup_nul(p, h->len, GFP_KERNEL);
	if (!spec)
		return -ENOMEM;
	ret = vtg_set_events(spec);
	kfree(spec);
	return ret;
}

static int vtg_cmd_buffer_size(const struct vtrace_msg_hdr *h, const void *p)
{
	const struct vtrace_buffer_size *b = p;

	if (h->len != sizeof(*b) || b->reserved)
		return -EINVAL;
	return vtg_set_buffer_size(b->size_kb);
}

/* Carry out a command; > 0: already answered */
static int vtg_cmd(const struct vtrace_msg_hdr *h, const void *p)
{
	switch (h->type) {
	case VTRACE_MSG_START:
		return h->len ? -EINVAL : vtg_start();
	case VTRACE_MSG_STOP:
		return h->len ? -EINVAL : vtg_stop();
	case VTRACE_MSG_SET_EVENTS:
		return vtg_cmd_events(h, p);
	case VTRACE_MSG_SET_BUFFER_SIZE:
		return vtg_cmd_buffer_size(h, p);
	case VTRACE_MSG_STATUS_REQ:
		return h->len ? -EINVAL : vtg_send_status(VTRACE_MSG_STATUS);
	}
	return -EOPNOTSUPP;
}

/* Take a token of @b, which gains one per @ms up to VTG_CMD_BURST */
static bool vtg_take_token(struct vtg_bucket *b, unsigned int ms)
{
	unsigned long step = msecs_to_jiffies(ms) ?: 1;
	unsigned long n = (jiffies - b->refill) / step;

	if (b->tokens + n >= VTG_CMD_BURST) {
		b->tokens = VTG_CMD_BURST;
		b->refill = jiffies;
	} else {
		b->tokens += n;
		b->refill += n * step;
	}
	if (!b->tokens)
		return false;
	b->tokens--;
	return true;
}

static bool vtg_cmd_changes_state(u16 type)
{
	return type >= VTRACE_MSG_START && type <= VTRACE_MSG_SET_BUFFER_SIZE;
}

/*
 * Host commands that make the guest change something (START, STOP,
 * SET_EVENTS, SET_BUFFER_SIZE: static-key text patches, IPIs, ring-buffer
 * allocations) come from a token bucket: VTG_CMD_BURST at once, then one
 * per VTG_CMD_REFILL_MS.  STATUS_REQ (it reads every CPU's stats file)
 * has a bucket of its own: VTG_CMD_BURST, then one per
 * VTG_STATUS_REFILL_MS.  Beyond that the host gets ERROR -EAGAIN.
 * Debugfs, the guest's own admin, is not limited.
 */
static bool vtg_cmd_allowed(u16 type)
{
	if (vtg_cmd_changes_state(type))
		return vtg_take_token(&vtg.cmd_bucket, VTG_CMD_REFILL_MS);
	if (type == VTRACE_MSG_STATUS_REQ)
		return vtg_take_token(&vtg.status_bucket, VTG_STATUS_REFILL_MS);
	return true;
}

static void vtg_dispatch(const struct vtrace_msg_hdr *h, const void *p)
{
	int ret;

	vtg.cmds++;
	if (h->type == VTRACE_MSG_HELLO)
		return vtg_cmd_hello(h, p);
	if (h->type == VTRACE_MSG_ERROR) {
		pr_warn_ratelimited("host sent ERROR (seq %llu)\n", h->seq);
		return;
	}
	if (h->seq <= vtg.host_seq)
		return vtg_reply_error(h, -EPROTO, "sequence number out of order");
	vtg.host_seq = h->seq;
	if (h->type == VTRACE_MSG_ACK || h->type >= VTRACE_MSG_STATUS) {
		if (h->type <= VTRACE_MSG_EOS)
			return vtg_reply_error(h, -EINVAL, "not a host command");
		return vtg_reply_error(h, -EOPNOTSUPP, "unknown message type, skipped");
	}
	if (vtg_cmd_changes_state(h->type) && vtg.host_untrusted)
		return vtg_reply_error(h, -EPERM,
				       "confidential guest: host commands refused (trust_host=0)");
	if (!vtg_cmd_allowed(h->type)) {
		vtg.cmds_limited++;
		return vtg_reply_error(h, -EAGAIN, h->type == VTRACE_MSG_STATUS_REQ ?
				       "rate limited: 8 at once, then 4 a second" :
				       "rate limited: 8 at once, then 1 a second");
	}
	WRITE_ONCE(vtg.busy, "a host command");
	ret = vtg_cmd(h, p);
	WRITE_ONCE(vtg.busy, NULL);
	if (ret == -EOPNOTSUPP)
		return vtg_reply_error(h, ret, "unknown message type, skipped");
	if (ret)
		return vtg_reply_error(h, ret, "command failed or malformed");
	vtg_send_ack(h->seq, h->type);
}

/* Take one message off vtg.rx; false when more bytes are needed */
static bool vtg_rx_one(void)
{
	struct vtrace_msg_hdr h;
	bool stale = time_after(jiffies, vtg.rx_since + msecs_to_jiffies(VTG_RX_TIMEOUT_MS));

	if (vtg.rx_len >= 4 && *(u32 *)vtg.rx != VTRACE_MAGIC) {
		vtg_resync();
		vtg_reply_error(NULL, -EPROTO, "bad magic: bytes skipped to resynchronize");
		return true;
	}
	if (vtg.rx_len < sizeof(h)) {
		if (!stale)
			return false;
		vtg_rx_drop(vtg.rx_len);
		vtg_reply_error(NULL, -EPROTO, "truncated header");
		return true;
	}
	memcpy(&h, vtg.rx, sizeof(h));
	if (h.len > VTRACE_CMD_MAX_PAYLOAD) {
		vtg_resync();
		vtg_reply_error(&h, -EMSGSIZE, "payload too large");
		return true;
	}
	if (vtg.rx_len < sizeof(h) + h.len) {
		if (!stale)
			return false;
		vtg_resync();
		vtg_reply_error(&h, -EPROTO, "truncated message");
		return true;
	}
	if (h.flags)
		vtg_reply_error(&h, -EINVAL, "unknown header flags");
	else if (h.type != VTRACE_MSG_HELLO &&
		 (h.version < VTRACE_PROTO_VERSION_MIN || h.version > VTRACE_PROTO_VERSION))
		vtg_reply_error(&h, -EPROTONOSUPPORT, "unsupported protocol version");
	else
		vtg_dispatch(&h, vtg.rx + sizeof(h));
	vtg_rx_drop(sizeof(h) + h.len);
	return true;
}

/*
 * Free the control port's output buffers the host has used, and act on
 * what the port says while doing so.
 *
 * virtio_console frees them only at the port's next write or poll().
 * Until then the port's output virtqueue has used buffers pending, and
 * every interrupt of the device's vector (one vector for all virtqueues
 * when MSI-X vectors run short, as with one port per CPU) runs the port's
 * out_intr(), which wakes our entry: the thread woke at every data batch
 * of every port (Documentation/benchmarks.rst).
 *
 * The poll() also takes a host message that arrived since our last read
 * off the receive virtqueue (port_has_data() moves it to the port's
 * inbuf), and the interrupt that follows then finds the queue empty and
 * wakes nobody.  So its EPOLLIN is acted on here: with the host end
 * connected it means bytes to read, and the thread goes round again
 * (vtg.ctl_poller.woken) instead of sleeping.  With the host end closed
 * (EPOLLHUP) virtio_console sets EPOLLIN anyway (a read would not block,
 * it returns 0): one read tells, and takes any bytes the poll moved.
 */
static void vtg_ctl_reclaim(void)
{
	__poll_t mask;

	/* vtg_rx_fill() closes the port on hot-unplug: then the mask is 0 */
	mask = vtg_port_poll(&vtg.ctl);
	if (!(mask & EPOLLIN))
		return;
	if (!(mask & EPOLLHUP) || vtg_rx_fill())
		WRITE_ONCE(vtg.ctl_poller.woken, true);
}

/**
 * vtg_agent_poll() - one round of the control thread on vtrace.ctl
 *
 * Read, answer every whole message, reclaim.  The last look at the port
 * before the thread sleeps is a read that found nothing or a poll() whose
 * EPOLLIN the thread acts on, so a host message never waits for a later
 * wake-up.
 */
void vtg_agent_poll(void)
{
	WRITE_ONCE(vtg.ctl_poller.woken, false);
	if (!vtg_port_present(&vtg.ctl))
		return;
	vtg_rx_fill();
	while (vtg.rx_len && vtg_rx_one())
		;
	vtg_ctl_reclaim();
}
