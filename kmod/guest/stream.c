// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: per-CPU drain threads moving ring-buffer pages from trace_pipe_raw to vtrace.cpuK. */
/*
 * One drain thread per CPU that has a data port:
 *
 *   per_cpu/cpuK/trace_pipe_raw           vtrace.cpuK (/dev/vportNpM)
 *   (O_NONBLOCK, FMODE_LSEEK set)                ^
 *        |  splice_direct_to_actor()             |  ->splice_write()
 *        v                                       |  (pipe_to_sg: 1 memcpy/page)
 *   current->splice_pipe  --- vtg_actor() -------+
 *        (up to 16 pages of       counts events and fillers of each
 *         whole sub-buffers)      sub-buffer, one pipe slot per page
 *
 * The unit is the instance's sub-buffer (vtg.subbuf_size: a page, or
 * buffer_subbuf_size_kb on v6.8+, at most VTG_SUBBUF_MAX): trace_pipe_raw
 * hands out one sub-buffer per pipe slot, and the ports carry them back to
 * back.  virtio_console's ->splice_write copies at most a page per slot,
 * so a sub-buffer of k pages is first given k slots (vtg_split_subbufs()):
 * one ->splice_write then sends whole sub-buffers or none, and a port that
 * stalls cannot tear one in two.  (It would send part of the pipe only if
 * the page it allocates to copy a slot into could not be had part-way;
 * the buffer it then queues has zero-length descriptors after the pages
 * copied, its scatterlist's end being where the pipe's last slot is, and
 * QEMU marks the device broken.  An order-0 GFP_KERNEL allocation of a
 * kernel thread does not fail outside fault injection, so a partial send
 * is not accounted for here.)
 *
 * trace_pipe_raw's splice only hands out pages the writer has left, which
 * is what keeps a page from being sent twice.  splice_direct_to_actor()
 * refuses input without FMODE_LSEEK; tracefs opens trace_pipe_raw
 * non-seekable, so the module sets the flag on its own private struct file
 * and always passes position 0 (page aligned, which is all the tracefs
 * splice checks).
 *
 * The port is non-blocking.  On -EAGAIN (host end not connected, host not
 * reading) the actor sleeps on the port's wait queue until the port wakes
 * it (the host used our buffers, connected, went away) and writes again,
 * for at most port_timeout_ms in all (vtg_port_splice() in ports.c); then the
 * pages in the pipe count as lost and the port is "stalled": later pages
 * are tried once and dropped at once until a write succeeds.
 * A page taken from the ring buffer is therefore always either sent or
 * counted lost: nothing is queued in the guest beyond the ring buffer.
 *
 * Stop: the control thread has turned the instance's tracing off and
 * waited for writers in flight (vtg_stop()): every ring is frozen, whatever
 * wrote to it (events, a tracer such as function, trace_marker).  Each
 * thread then drains the whole sub-buffers left, at most twice the ring's
 * size (vtg.stop_budget: a frozen ring cannot hold more, so the bound only
 * matters if something is wrong) and until the stop's deadline
 * (vtg.stop_deadline: no port write waits past it, so a host that takes
 * each write just within port_timeout_ms cannot stretch the stop; what is
 * left then counts as lost), and reads the CPU's last, partly filled
 * sub-buffer with read() (ring_buffer_read_page() with full=0) through its
 * VTG_SUBBUF_MAX bytes in the borrowed mm, then sends it with one port
 * write (at most 32 KiB): one extra copy, at stop only.  Online and offline
 * CPUs take the same path; the thread never needs to run on its CPU.
 *
 * Between drains a thread sleeps until its CPU's ring holds the instance's
 * buffer_percent (the ring buffer wakes poll()ers of trace_pipe_raw from
 * an irq_work; 25 in the instance the module creates, see
 * vtg_instance_defaults() in session.c), or
 * drain_max_ms passes: a few wake-ups per second at a steady rate rather
 * than one every drain_ms (see vtg_drain_sleep()).  When, at the rate the
 * ring reached buffer_percent, the rest of it would fill within
 * VTG_BUSY_HEADROOM_MS, that is too little headroom for the wake-up, the
 * drain and a vCPU the host does not run meanwhile.  The thread then
 * drains every drain_ms, as a polling reader does, until the rate falls
 * (vtg_drain_pace()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/pipe_fs_i.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/splice.h>
#include <linux/trace_events.h>

#include "vtg.h"

/*
 * A trace_marker event is struct print_entry: struct trace_entry, the ip
 * (unsigned long, naturally aligned), then the text.  trace_entry is 8
 * bytes, 12 on PREEMPT_RT kernels (preempt_lazy_count): 16 or 24 here.
 */
#define VTG_PRINT_TEXT_OFF	(ALIGN(sizeof(struct trace_entry), sizeof(long)) + sizeof(long))
#define VTG_RB_MISSED_FLAGS	(3UL << 30)
#define VTG_RB_PADDING		29
#define VTG_RB_TIME_EXTEND	30
#define VTG_RB_TIME_STAMP	31
/* Reads of the stop's drains retried after an error */
#define VTG_FINAL_RETRIES	3
/* read()s of a frozen ring's last page: one, and one to see it empty */
#define VTG_FINAL_READS		4
/*
 * A ring whose free part, when buffer_percent wakes the thread, fills
 * within this time at that rate leaves too little headroom to wait for
 * buffer_percent again (vtg_drain_pace()).  At 25 % of 512 KiB (96 free
 * sub-buffers) that is from about 7,700 256-byte markers a second on the
 * CPU up.
 */
#define VTG_BUSY_HEADROOM_MS	200

static bool vtg_is_filler(const u8 *data, size_t len)
{
	size_t flen = sizeof(VTRACE_FILLER_TEXT) - 1;

	return len >= VTG_PRINT_TEXT_OFF + flen &&
	       !memcmp(data + VTG_PRINT_TEXT_OFF, VTRACE_FILLER_TEXT, flen);
}

/*
 * Count data events and fillers of one ring-buffer page, walking it as
 * events/header_page and header_event describe: u64 time stamp, u64 commit
 * (data length, flag bits 30-31), then events with a 32-bit header
 * (type_len:5, time_delta:27).
 */
static void vtg_count_page(const u8 *page, size_t size, struct vtg_page_count *pc)
{
	/*
	 * The ring buffer adds RB_MISSED_EVENTS, an int (1 << 31), to the long
	 * commit: it arrives sign-extended, bits 32-63 set.  Bits 0-29 are
	 * the data length; the missed count, if stored, follows the data.
	 */
	size_t len = lower_32_bits(*(const u64 *)(page + 8)) & ~VTG_RB_MISSED_FLAGS;
	const u8 *data = page + 16;
	size_t off = 0, elen, dlen;
	u32 h, type_len;

	pc->events = 0;
	pc->fillers = 0;
	len = min(len, size - 16);
	while (off + 4 <= len) {
		h = *(const u32 *)(data + off);
		type_len = h & 0x1f;
		if (type_len == VTG_RB_PADDING && !(h >> 5))
			break;
		if (type_len == VTG_RB_TIME_EXTEND || type_len == VTG_RB_TIME_STAMP) {
			off += 8;
			continue;
		}
		if (type_len == 0 || type_len == VTG_RB_PADDING) {
			if (off + 8 > len)
				break;
			elen = *(const u32 *)(data + off + 4) + 4;
		} else {
			elen = type_len * 4 + 4;
		}
		if (elen < 8 || off + elen > len)
			break;
		if (type_len != VTG_RB_PADDING) {
			pc->events++;
			dlen = type_len ? elen - 4 : elen - 8;
			if (vtg_is_filler(data + off + (type_len ? 4 : 8), dlen))
				pc->fillers++;
		}
		off += elen;
	}
}

/*
 * The port was hot-unplugged (virtio_console answers -ENODEV): write to it
 * no more, since its device may be freed next.  The drain thread ends; the
 * control thread closes the port at the stop, and what is left in the
 * CPU's ring counts as unread (lost).
 */
static void vtg_cpu_port_gone(struct vtg_cpu *c)
{
	if (!c->port_gone)
		pr_warn("cpu%u: port %s%s%u is gone, its drain thread ends\n",
			c->cpu, vtg_prefix, VTRACE_CPU_PORT_SUFFIX, c->cpu);
	c->port_gone = true;
}

/* Sub-buffers @first..@first+@n-1 of c->pending were sent, or are lost */
static void vtg_account(struct vtg_cpu *c, unsigned int first, unsigned int n, bool sent)
{
	struct vtg_page_count *pc;
	unsigned int i;

	for (i = first; i < first + n && i < VTG_SPLICE_PAGES; i++) {
		pc = &c->pending[i];
		if (sent) {
			c->st.pages_sent++;
			c->st.bytes_sent += vtg.subbuf_size;
			c->st.events_sent += pc->events;
			c->st.fillers_sent += pc->fillers;
		} else {
			c->st.pages_lost++;
			c->st.events_lost_port += pc->events;
		}
	}
}

/*
 * The deadline of one port write: port_timeout_ms from now, and, once the
 * stop began, never past the stop's deadline (vtg_stop() sets it before
 * it sets vtg.stopping).
 */
static unsigned long vtg_write_deadline(void)
{
	unsigned long d = jiffies + msecs_to_jiffies(READ_ONCE(vtg_port_timeout_ms));

	if (smp_load_acquire(&vtg.stopping) && time_before(vtg.stop_deadline, d))
		d = vtg.stop_deadline;
	return d;
}

/* The stop's deadline passed (only while vtg.stopping): its drains end */
static bool vtg_stop_overdue(void)
{
	return !time_before(jiffies, vtg.stop_deadline);
}

/* One ->splice_write of what the pipe holds; -EAGAIN retried up to the deadline */
static ssize_t vtg_cpu_splice(struct vtg_cpu *c, struct pipe_inode_info *pipe)
{
	unsigned long deadline = vtg_write_deadline();
	bool was_stalled = vtg_port_stalled(&c->port);
	ssize_t ret;

	ret = vtg_port_splice(&c->port, pipe, deadline);
	if (ret > 0)
		vtg_port_unstall(&c->port);
	else if (ret == -ETIMEDOUT && !was_stalled)
		pr_warn_ratelimited("cpu%u: port not writable for %u ms, dropping pages\n",
				    c->cpu, vtg_port_timeout_ms);
	return ret;
}

/*
 * Give each page of the @n sub-buffers in the pipe its own slot, in order,
 * each a reference of its sub-buffer's pipe buffer (the trace pipe buffer
 * frees the sub-buffer with its last reference, whatever the slot's page).
 * The pipe is current->splice_pipe, this thread's own.  Returns false,
 * the pipe untouched, if the slots do not fit or a reference is refused.
 */
static bool vtg_split_subbufs(struct pipe_inode_info *pipe, unsigned int n)
{
	struct pipe_buffer orig[VTG_SPLICE_PAGES / 2];
	unsigned int k = vtg.subbuf_pages, mask = pipe->ring_size - 1;
	unsigned int i, j, got;
	struct pipe_buffer *buf;

	if (k == 1)
		return true;
	if (n > ARRAY_SIZE(orig) || n * k > pipe->max_usage)
		return false;
	for (i = 0; i < n; i++) {
		orig[i] = pipe->bufs[(pipe->tail + i) & mask];
		for (got = 1; got < k; got++)
			if (!pipe_buf_get(pipe, &orig[i]))
				goto out_put;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < k; j++) {
			buf = &pipe->bufs[(pipe->tail + i * k + j) & mask];
			*buf = orig[i];
			buf->page = nth_page(orig[i].page, j);
			buf->offset = 0;
			buf->len = PAGE_SIZE;
		}
	}
	pipe->head = pipe->tail + n * k;
	return true;

out_put:
	/* the references of orig[i] taken so far, then those of the earlier ones */
	for (;;) {
		while (--got) {
			buf = &pipe->bufs[(pipe->tail + i) & mask];
			buf->ops->release(pipe, buf);
		}
		if (!i--)
			return false;
		got = k;
	}
}

/*
 * Count the events of each sub-buffer in the pipe into c->pending.  False
 * if one is not a whole sub-buffer of this session's size (the size was
 * changed while tracing): the host could not cut the stream into
 * sub-buffers any more, so none of them is sent.
 */
static bool vtg_count_subbufs(struct vtg_cpu *c, struct pipe_inode_info *pipe, unsigned int n)
{
	struct pipe_buffer *buf;
	bool whole = true;
	unsigned int i;

	for (i = 0; i < n; i++) {
		buf = &pipe->bufs[(pipe->tail + i) & (pipe->ring_size - 1)];
		vtg_count_page(page_address(buf->page) + buf->offset, buf->len, &c->pending[i]);
		if (buf->offset || buf->len != vtg.subbuf_size)
			whole = false;
	}
	if (!whole)
		pr_warn_ratelimited("cpu%u: a sub-buffer not of the session's %u bytes: dropped (buffer_subbuf_size_kb changed while tracing?)\n",
				    c->cpu, vtg.subbuf_size);
	return whole;
}

/*
 * splice_direct_to_actor() actor: send every sub-buffer in the pipe, or
 * count it lost.  Returns the bytes sent; when that is less than the pipe
 * held, splice_direct_to_actor() releases the remaining (already counted)
 * ones.
 */
static int vtg_actor(struct pipe_inode_info *pipe, struct splice_desc *sd)
{
	struct vtg_cpu *c = sd->u.data;
	unsigned int k = vtg.subbuf_pages;
	unsigned int n = pipe_occupancy(pipe->head, pipe->tail);
	unsigned int i, done = 0, tail;
	ssize_t ret, sent = 0;

	n = min_t(unsigned int, n, VTG_SPLICE_PAGES);
	if (!vtg_count_subbufs(c, pipe, n) || !vtg_split_subbufs(pipe, n)) {
		vtg_account(c, 0, n, false);
		return 0;
	}
	while (done < n) {
		tail = pipe->tail;
		ret = vtg_cpu_splice(c, pipe);
		i = (pipe->tail - tail) / k;
		if (ret > 0) {
			vtg_account(c, done, i, true);
			sent += ret;
			done += i;
			continue;
		}
		/* consumed but not sent (0), or refused: all of it is lost */
		if (ret == -ENODEV)
			vtg_cpu_port_gone(c);
		if (ret != -ETIMEDOUT) {
			c->st.port_errors++;
			pr_warn_ratelimited("cpu%u: port write failed: %zd\n",
					    c->cpu, ret);
		}
		vtg_account(c, done, n - done, false);
		break;
	}
	return sent;
}

/* Pages taken out of the ring so far, sent or lost */
static u64 vtg_taken(const struct vtg_cpu *c)
{
	return c->st.pages_sent + c->st.pages_lost;
}

/*
 * Move pages until the ring buffer has no full page left.  A drain between
 * stops ends when the stop begins; the stop's own drain (@final) takes at
 * most vtg.stop_budget pages, ends at the stop's deadline, and retries a
 * failed read (say -ENOMEM) a few times: what it leaves behind is lost
 * (counted by vtg_count_unread()).
 */
static void vtg_drain(struct vtg_cpu *c, bool final)
{
	unsigned int retries = final ? VTG_FINAL_RETRIES : 0;
	u64 limit = final ? vtg_taken(c) + vtg.stop_budget : U64_MAX;
	struct splice_desc sd;
	u64 lost;
	ssize_t ret;

	for (;;) {
		sd = (struct splice_desc) {
			.total_len = VTG_SPLICE_PAGES / vtg.subbuf_pages * vtg.subbuf_size,
			.u.data = c,
		};
		lost = c->st.pages_lost;
		ret = splice_direct_to_actor(c->raw, &sd, vtg_actor);
		if (c->port_gone || vtg_taken(c) >= limit)
			break;
		if (final && vtg_stop_overdue())
			break;
		if (!final && (kthread_should_stop() || READ_ONCE(vtg.stopping)))
			break;
		if (ret > 0 || c->st.pages_lost != lost)
			continue;
		/* -ENODEV: no ring for the CPU (never online), nothing to read */
		if (ret == 0 || ret == -EAGAIN || ret == -ENODEV || !retries--)
			break;
		pr_warn_ratelimited("cpu%u: reading trace_pipe_raw: %zd, retrying\n",
				    c->cpu, ret);
		msleep(10);
	}
	if (ret < 0 && ret != -EAGAIN && ret != -ENODEV)
		pr_warn_ratelimited("cpu%u: reading trace_pipe_raw: %zd\n", c->cpu, ret);
	if (final && vtg_taken(c) >= limit)
		pr_warn("cpu%u: stop drained its limit of %u pages, the rest counts as lost\n",
			c->cpu, vtg.stop_budget);
	else if (final && vtg_stop_overdue())
		pr_warn("cpu%u: the host did not take the ring's pages by the stop's deadline, the rest counts as lost\n",
			c->cpu);
}

/* ->write of one sub-buffer from the borrowed mm; -EAGAIN retried up to the deadline */
static ssize_t vtg_cpu_write_user(struct vtg_cpu *c, const char __user *ubuf)
{
	return vtg_port_write(&c->port, ubuf, vtg.subbuf_size, vtg_write_deadline());
}

/*
 * At the stop, once the whole sub-buffers are drained: the CPU's last,
 * partly filled sub-buffer comes out of read() (ring_buffer_read_page()
 * with full=0), through this CPU's VTG_SUBBUF_MAX bytes in the borrowed mm.
 * The ring is frozen, so one read gives it and the next finds the ring
 * empty (-EAGAIN).
 */
static void vtg_flush_by_read(struct vtg_cpu *c)
{
	char __user *ubuf = c->ubuf;
	ssize_t size = vtg.subbuf_size;
	u8 *page = kvmalloc(size, GFP_KERNEL);
	unsigned int reads = 0;
	loff_t pos = 0;
	ssize_t ret;

	if (!page)
		return;
	kthread_use_mm(vtg.mm);
	while (reads++ < VTG_FINAL_READS && !vtg_stop_overdue() &&
	       c->raw->f_op->read(c->raw, ubuf, size, &pos) == size) {
		if (copy_from_user(page, ubuf, size))
			break;
		vtg_count_page(page, size, &c->pending[0]);
		ret = vtg_cpu_write_user(c, ubuf);
		if (ret != size && ret != -ETIMEDOUT)
			c->st.port_errors++;
		vtg_account(c, 0, 1, ret == size);
		if (ret == -ENODEV) {
			vtg_cpu_port_gone(c);
			break;
		}
	}
	kthread_unuse_mm(vtg.mm);
	kvfree(page);
}

static bool vtg_drain_due(struct vtg_cpu *c)
{
	return vtg_poller_woken(&c->ring) || READ_ONCE(vtg.stopping) || kthread_should_stop();
}

/*
 * Between two drains.  trace_pipe_raw's poll() queues c->ring (poll.c)
 * where the ring buffer wakes its readers once the CPU's buffer holds the
 * instance's buffer_percent (25, see vtg_instance_defaults()): the thread
 * sleeps until then, or
 * drain_max_ms.  If the ring is readable at once (buffer_percent 0 and a
 * partial page, or a drain that left data behind), a wake-up would come at
 * the next event: the thread sleeps drain_ms on the timer instead, as it
 * always does with drain_max_ms 0.  A busy thread (vtg_drain_pace())
 * sleeps drain_ms with the poller queued; the thread of a CPU that has no
 * ring yet (never online) drain_max_ms.  Returns true if the ring woke it.
 */
static bool vtg_drain_sleep(struct vtg_cpu *c)
{
	unsigned int ms = vtg_drain_ms;
	bool woken;
	__poll_t mask;

	vtg_poller_init(&c->ring, NULL);
	if (!vtg_drain_max_ms)
		goto sleep;
	mask = vtg_poller_add(&c->ring, c->raw);
	if (mask & EPOLLERR) {
		/*
		 * No ring for this CPU (possible, never online yet): nothing
		 * will wake the thread, and nothing is there to drain until
		 * the CPU comes up.  Look again at drain_max_ms, not drain_ms.
		 */
		vtg_poller_del(&c->ring);
		ms = max(vtg_drain_max_ms, vtg_drain_ms);
	} else if (mask & EPOLLIN) {
		vtg_poller_del(&c->ring);
	} else if (vtg_poller_queued(&c->ring) && !c->busy)
		ms = max(vtg_drain_max_ms, vtg_drain_ms);
sleep:
	wait_event_interruptible_timeout(vtg.drain_wq, vtg_drain_due(c), msecs_to_jiffies(ms));
	woken = vtg_poller_woken(&c->ring);
	vtg_poller_del(&c->ring);
	return woken;
}

/* Sub-buffers of the ring still free when a drain took @taken of them */
static u64 vtg_ring_free(const struct vtg_cpu *c, u64 taken)
{
	return taken < c->ring_subbufs ? c->ring_subbufs - taken : 0;
}

/*
 * After a drain that moved @moved sub-buffers: how the thread sleeps next.
 * A drain the ring's buffer_percent woke (@by_ring) took about that share
 * of the ring; if, at the rate it filled since the previous drain's end,
 * the rest of the ring fills within VTG_BUSY_HEADROOM_MS, the thread turns
 * busy: it sleeps drain_ms (the ring may still wake it sooner).  A busy
 * thread turns back when, at the rate of its last drain, that rest would
 * take over twice VTG_BUSY_HEADROOM_MS.
 */
static void vtg_drain_pace(struct vtg_cpu *c, u64 moved, bool by_ring)
{
	unsigned long now = jiffies;
	u64 ms = jiffies_to_msecs(now - c->drained_at);

	c->drained_at = now;
	if (by_ring) {
		c->wake_pages = moved;
		c->busy = moved && vtg_ring_free(c, moved) * ms < VTG_BUSY_HEADROOM_MS * moved;
	} else if (c->busy &&
		   vtg_ring_free(c, c->wake_pages) * ms >= 2 * VTG_BUSY_HEADROOM_MS * moved) {
		c->busy = false;
	}
}

/* The thread's flush is over (or it ends): vtg_wait_flushed() may go on */
static void vtg_flush_done(struct vtg_cpu *c)
{
	complete(&c->flushed);
	wake_up_all(&vtg.flushed_wq);
}

static int vtg_drain_thread(void *data)
{
	struct vtg_cpu *c = data;
	bool by_ring = false;
	u64 taken;

	c->drained_at = jiffies;
	while (!kthread_should_stop() && !READ_ONCE(vtg.stopping) && !c->port_gone) {
		taken = vtg_taken(c);
		vtg_drain(c, false);
		vtg_drain_pace(c, vtg_taken(c) - taken, by_ring);
		by_ring = vtg_drain_sleep(c);
	}
	if (c->port_gone) {
		/* vtg_stream_stop() holds a reference to this task */
		vtg_flush_done(c);
		return 0;
	}
	if (smp_load_acquire(&vtg.stopping)) {
		vtg_drain(c, true);
		if (!c->port_gone && !vtg_stop_overdue())
			vtg_flush_by_read(c);
	}
	vtg_flush_done(c);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static int vtg_stream_start_cpu(struct vtg_cpu *c)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "per_cpu/cpu%u/trace_pipe_raw", c->cpu);
	c->raw = vtg_open_instance(rel, O_RDONLY | O_NONBLOCK);
	if (IS_ERR(c->raw)) {
		int ret = PTR_ERR(c->raw);

		/* a session that cannot read a CPU with a port would lose it silently */
		c->raw = NULL;
		pr_warn("cpu%u: %s: %d, not starting\n", c->cpu, rel, ret);
		return ret;
	}
	c->raw->f_mode |= FMODE_LSEEK;
	vtg_port_unstall(&c->port);
	c->ring.wqh = NULL;
	c->port_gone = false;
	c->busy = false;
	c->wake_pages = 0;
	init_completion(&c->flushed);
	c->task = kthread_create(vtg_drain_thread, c, "vtrace-cpu%u", c->cpu);
	if (IS_ERR(c->task)) {
		int ret = PTR_ERR(c->task);

		c->task = NULL;
		vtg_close(c->raw);
		c->raw = NULL;
		return ret;
	}
	/* the thread ends by itself when its port goes: keep its task_struct */
	get_task_struct(c->task);
	wake_up_process(c->task);
	return 0;
}

/*
 * Wait for @c's flush.  Every port write of the stop's drain gives up at
 * vtg.stop_deadline and the drain ends there, so the thread is done soon
 * after it; VTG_STOP_GRACE_MS later kthread_stop() ends it whatever it
 * does (a splice then fails with -ERESTARTSYS).  TASK_IDLE, as the port
 * waits are: a bounded wait for a slow host is no hung task.
 */
static void vtg_wait_flushed(struct vtg_cpu *c)
{
	unsigned long until = vtg.stop_deadline + msecs_to_jiffies(VTG_STOP_GRACE_MS);
	long left = (long)(until - jiffies);

	if (left > 0)
		wait_event_idle_timeout(vtg.flushed_wq, completion_done(&c->flushed), left);
	if (!completion_done(&c->flushed))
		pr_warn("cpu%u: drain thread still busy %u ms after the stop's deadline, stopping it\n",
			c->cpu, VTG_STOP_GRACE_MS);
}

/**
 * vtg_stream_stop() - stop every drain thread
 *
 * Stop and flush (vtg.stopping) or just stop (start failed) every drain
 * thread.  The flush must be over before kthread_stop(): that sets
 * TIF_NOTIFY_SIGNAL, and splice then fails with -ERESTARTSYS.  The wait
 * ends at vtg.stop_deadline, plus VTG_STOP_GRACE_MS.
 */
void vtg_stream_stop(void)
{
	unsigned int cpu;

	wake_up_all(&vtg.drain_wq);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (vtg.cpus[cpu].task && READ_ONCE(vtg.stopping))
			vtg_wait_flushed(&vtg.cpus[cpu]);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct vtg_cpu *c = &vtg.cpus[cpu];

		if (!c->task)
			continue;
		kthread_stop(c->task);
		put_task_struct(c->task);
		c->task = NULL;
		vtg_close(c->raw);
		c->raw = NULL;
		if (c->port_gone) {
			vtg_port_close(&c->port);
			vtg.nr_ports--;
		}
	}
	WRITE_ONCE(vtg.stopping, false);
}

/**
 * vtg_stream_start() - open each CPU's trace_pipe_raw and start its drain thread
 *
 * Only CPUs with a data port; the session's per-CPU counters start at 0.
 *
 * Context: the control thread.
 * Return: 0, or a negative errno (no thread left running).
 */
int vtg_stream_start(void)
{
	unsigned int cpu;
	int ret;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct vtg_cpu *c = &vtg.cpus[cpu];

		memset(&c->st, 0, sizeof(c->st));
		c->st.cpu = cpu;
		c->unread = 0;
		c->port_gone = false;
		if (!vtg_port_present(&c->port))
			continue;
		ret = vtg_stream_start_cpu(c);
		if (ret)
			goto out_stop_threads;
	}
	return 0;

out_stop_threads:
	vtg_stream_stop();
	return ret;
}
