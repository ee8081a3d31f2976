// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: the port object: find vtrace.ctl and vtrace.cpuK, open, write, splice, close. */
/*
 * A port is one struct vtg_port: the opened file and its stall state.
 * Only this file touches them; the others write (vtg_port_write()),
 * splice (vtg_port_splice()), read, poll and close through its functions,
 * so every port follows one write/splice and stall policy.
 *
 * virtio_console names each port in sysfs (/sys/class/virtio-ports/
 * vportNpM/name) and creates /dev/vportNpM; the /dev/virtio-ports/NAME links
 * come from udev, which a minimal guest may not run.  So the module lists
 * /sys/class/virtio-ports itself, reads each name, and opens the matching
 * /dev/vportNpM (devtmpfs) with O_NONBLOCK, and checks that what it opened
 * is that port (a character device with the number sysfs gives).  The
 * guest never waits for the host (see stream.c and ctl.c for what happens
 * when a port is not writable).  Runs in the control thread at its start.
 *
 * A port that does not take data (virtqueue full, host end not connected)
 * answers -EAGAIN.  vtg_port_write() and vtg_port_splice() then sleep
 * until virtio_console wakes the port's wait queue (a poller, poll.c),
 * write again, and give up at the caller's deadline, marking the port
 * stalled: the one stall policy of the ctl port (ctl.c) and the data ports
 * (stream.c).  The driver wakes the queue when the host has used our
 * buffers (out_intr), when the host end connects or goes away, and when
 * the port is unplugged; no timer runs while the host is slow.
 *
 *   writer: write() -EAGAIN -> vtg_poller_add(port) --queue--> port->waitqueue
 *           sleep (TASK_IDLE, up to the deadline)                   | out_intr()
 *           <------------- vtg_poller_wake(): woken = true ----------+
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/pipe_fs_i.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "vtg.h"

#define VTG_SYSFS_PORTS		"/sys/class/virtio-ports"
#define VTG_MAX_PORTS		256

struct vtg_dir_names {
	struct dir_context ctx;
	char (*names)[32];
	unsigned int n;
};

/* iterate_dir() actor: collect "vportNpM" entries (directory lock held) */
static bool vtg_dir_actor(struct dir_context *ctx, const char *name, int len,
			  loff_t off, u64 ino, unsigned int type)
{
	struct vtg_dir_names *d = container_of(ctx, struct vtg_dir_names, ctx);

	if (len >= 32 || strncmp(name, "vport", 5) || d->n >= VTG_MAX_PORTS)
		return true;
	memcpy(d->names[d->n], name, len);
	d->names[d->n][len] = '\0';
	d->n++;
	return true;
}

/* The port's name from sysfs, without its newline */
static int vtg_port_name(const char *dev, char *name, size_t size)
{
	char path[96];

	snprintf(path, sizeof(path), VTG_SYSFS_PORTS "/%s/name", dev);
	return vtg_read_text(path, name, size);
}

/* The port's device number from sysfs ("MAJ:MIN") */
static int vtg_port_devt(const char *dev, dev_t *devt)
{
	unsigned int major, minor;
	char path[96], text[32];
	int ret;

	snprintf(path, sizeof(path), VTG_SYSFS_PORTS "/%s/dev", dev);
	ret = vtg_read_text(path, text, sizeof(text));
	if (ret)
		return ret;
	if (sscanf(text, "%u:%u", &major, &minor) != 2)
		return -EINVAL;
	*devt = MKDEV(major, minor);
	return 0;
}

/*
 * The file opened must be the port sysfs names: a character device with
 * the port's device number (not whatever a user bind-mounted or created
 * at /dev/vportNpM), with the methods the module calls: ->write and
 * ->read (ctl), ->write and ->splice_write (data ports).  ->poll may be
 * missing (the waits fall back to a timer).
 */
static int vtg_port_check(struct file *f, const char *dev, bool ctl)
{
	struct inode *inode = file_inode(f);
	dev_t devt;
	int ret = vtg_port_devt(dev, &devt);

	if (ret)
		return ret;
	if (!S_ISCHR(inode->i_mode) || inode->i_rdev != devt)
		return -ENXIO;
	if (!f->f_op->write || (ctl ? !f->f_op->read : !f->f_op->splice_write))
		return -EOPNOTSUPP;
	return 0;
}

static struct file *vtg_port_open(const char *dev, const char *name, bool ctl)
{
	char path[64];
	struct file *f;
	int ret;

	snprintf(path, sizeof(path), "/dev/%s", dev);
	f = vtg_open_path(path, O_RDWR | O_NONBLOCK);
	if (IS_ERR(f)) {
		pr_warn("port %s (%s): cannot open: %ld\n", name, path, PTR_ERR(f));
		return f;
	}
	ret = vtg_port_check(f, dev, ctl);
	if (ret) {
		pr_warn("port %s: %s is not that port's device (%d), not used\n",
			name, path, ret);
		vtg_close(f);
		return ERR_PTR(ret);
	}
	return f;
}

/* Match one port against PREFIX.ctl / PREFIX.cpuK and open it */
static void vtg_port_match(const char *dev)
{
	size_t plen = strlen(vtg_prefix);
	char name[64];
	unsigned int cpu;
	struct file *f;

	if (vtg_port_name(dev, name, sizeof(name)) || strncmp(name, vtg_prefix, plen))
		return;
	if (!strcmp(name + plen, VTRACE_CTL_PORT_SUFFIX) && !vtg.ctl.file) {
		f = vtg_port_open(dev, name, true);
		if (!IS_ERR(f))
			vtg.ctl = (struct vtg_port) { .file = f };
		return;
	}
	if (strncmp(name + plen, VTRACE_CPU_PORT_SUFFIX, strlen(VTRACE_CPU_PORT_SUFFIX)) ||
	    kstrtouint(name + plen + strlen(VTRACE_CPU_PORT_SUFFIX), 10, &cpu))
		return;
	if (cpu >= nr_cpu_ids) {
		pr_warn("port %s: no CPU %u in this guest, ignored\n", name, cpu);
		return;
	}
	if (vtg.cpus[cpu].port.file)
		return;
	f = vtg_port_open(dev, name, false);
	if (IS_ERR(f))
		return;
	vtg.cpus[cpu].port = (struct vtg_port) { .file = f };
	vtg.nr_ports++;
}

static void vtg_ports_report(void)
{
	unsigned int cpu;

	if (!vtg.ctl.file)
		pr_warn("no port %s%s: no metadata, no agent mode\n",
			vtg_prefix, VTRACE_CTL_PORT_SUFFIX);
	if (vtg.nr_ports == nr_cpu_ids)
		return;
	pr_warn("%u data port(s) for %u CPUs; pages of these CPUs are not streamed:\n",
		vtg.nr_ports, nr_cpu_ids);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (!vtg.cpus[cpu].port.file)
			pr_warn("  cpu%u (no port %s%s%u)\n", cpu, vtg_prefix,
				VTRACE_CPU_PORT_SUFFIX, cpu);
}

/**
 * vtg_ports_open() - find and open PREFIX.ctl and PREFIX.cpuK
 *
 * Opens vtg.ctl and vtg.cpus[].port, sets vtg.nr_ports; a port missing or not
 * the device it claims to be is left out with a warning.
 *
 * Context: the control thread, at its start (borrowed mm).
 * Return: 0, or a negative errno if the ports cannot be listed.
 */
int vtg_ports_open(void)
{
	struct vtg_dir_names d = { .ctx.actor = vtg_dir_actor };
	struct file *dir;
	unsigned int i;
	int ret;

	d.names = kcalloc(VTG_MAX_PORTS, sizeof(*d.names), GFP_KERNEL);
	if (!d.names)
		return -ENOMEM;
	dir = vtg_open_path(VTG_SYSFS_PORTS, O_RDONLY | O_DIRECTORY);
	if (IS_ERR(dir)) {
		ret = PTR_ERR(dir);
		pr_warn("%s: %d (is sysfs mounted, virtio_console loaded?)\n",
			VTG_SYSFS_PORTS, ret);
		goto out_free_names;
	}
	ret = iterate_dir(dir, &d.ctx);
	vtg_close(dir);
	if (ret)
		goto out_free_names;
	for (i = 0; i < d.n; i++)
		vtg_port_match(d.names[i]);
	vtg_ports_report();
out_free_names:
	kfree(d.names);
	return ret;
}

/*
 * After a write to @port answered -EAGAIN: sleep until the port's wait
 * queue is woken, poll() says it is writable, or @deadline (jiffies)
 * passes.  The caller then writes again and judges the deadline itself.
 * Not interruptible (the stop's final writes run after kthread_stop() may
 * have flagged the thread), bounded by @deadline.  Process context only.
 */
static void vtg_port_wait(struct file *port, unsigned long deadline)
{
	struct vtg_poller w;
	__poll_t mask;
	long left;

	if (!port->f_op->poll) {
		usleep_range(1000, 2000);
		return;
	}
	vtg_poller_init(&w, NULL);
	mask = vtg_poller_add(&w, port);
	for (;;) {
		set_current_state(TASK_IDLE);
		if ((mask & EPOLLOUT) || vtg_poller_woken(&w))
			break;
		left = (long)(deadline - jiffies);
		if (left <= 0)
			break;
		schedule_timeout(left);
	}
	__set_current_state(TASK_RUNNING);
	vtg_poller_del(&w);
}

/*
 * One write or splice to a port, with the module's one stall policy:
 * while @op answers -EAGAIN, sleep on the port (vtg_port_wait()) and try
 * again, until @deadline.  Then the port is stalled: later calls try @op
 * once and give up at once on -EAGAIN, until the caller's data went
 * through whole (vtg_port_unstall()).  The guest never waits for a host
 * that does not read for more than one deadline per stall.  Returns
 * @op's result other than -EAGAIN, or -ETIMEDOUT (the port stalled).
 */
static ssize_t vtg_port_io(struct vtg_port *p, unsigned long deadline,
			   ssize_t (*op)(struct file *port, void *arg), void *arg)
{
	ssize_t ret;

	for (;;) {
		ret = op(p->file, arg);
		if (ret != -EAGAIN)
			return ret;
		if (p->stalled || !time_before(jiffies, deadline)) {
			p->stalled = true;
			return -ETIMEDOUT;
		}
		vtg_port_wait(p->file, deadline);
	}
}

struct vtg_port_buf {
	const char __user *ubuf;
	size_t len;
};

/* vtg_port_io() op: one ->write from the borrowed mm */
static ssize_t vtg_port_write_op(struct file *port, void *arg)
{
	const struct vtg_port_buf *b = arg;
	loff_t pos = 0;

	return port->f_op->write(port, b->ubuf, b->len, &pos);
}

/**
 * vtg_port_write() - one ->write to a port, with the stall policy
 * @p:		the port, present
 * @ubuf:	the bytes, in the borrowed mm
 * @len:	how many, at most %VTG_PORT_CHUNK (virtio_console's limit)
 * @deadline:	jiffies after which -EAGAIN (port full, host end not
 *		connected) is final
 *
 * While the port answers -EAGAIN, sleep until it wakes its wait queue and
 * write again, until @deadline.  Then the port is stalled: later writes
 * are tried once and give up at once on -EAGAIN, until the caller's data
 * went through whole (vtg_port_unstall()).
 *
 * Context: process context, the borrowed mm in use; may sleep up to @deadline.
 * Return: bytes written, -ETIMEDOUT (the port stalled), or ->write's error
 * (-ENODEV: unplugged).
 */
ssize_t vtg_port_write(struct vtg_port *p, const char __user *ubuf, size_t len,
		       unsigned long deadline)
{
	struct vtg_port_buf b = { .ubuf = ubuf, .len = len };

	return vtg_port_io(p, deadline, vtg_port_write_op, &b);
}

/* vtg_port_io() op: one ->splice_write of what the pipe holds */
static ssize_t vtg_port_splice_op(struct file *port, void *arg)
{
	struct pipe_inode_info *pipe = arg;
	size_t len = pipe_occupancy(pipe->head, pipe->tail) * PAGE_SIZE;	/* a page a slot */
	loff_t pos = 0;

	return port->f_op->splice_write(pipe, port, &pos, len, 0);
}

/**
 * vtg_port_splice() - one ->splice_write of what @pipe holds, with the stall policy
 * @p:		a data port, present
 * @pipe:	the caller's pipe, one page a slot
 * @deadline:	as for vtg_port_write()
 *
 * As vtg_port_write(), the pages of @pipe for the bytes.
 *
 * Context: process context; may sleep up to @deadline.
 * Return: bytes spliced, -ETIMEDOUT (the port stalled), or
 * ->splice_write's error (-ENODEV: unplugged).
 */
ssize_t vtg_port_splice(struct vtg_port *p, struct pipe_inode_info *pipe,
			unsigned long deadline)
{
	return vtg_port_io(p, deadline, vtg_port_splice_op, pipe);
}

/**
 * vtg_port_read() - one non-blocking ->read from a port
 * @p:		the control port, present
 * @ubuf:	where to, in the borrowed mm
 * @len:	at most this many bytes
 *
 * Context: the control thread.
 * Return: bytes read, 0 when the host end is closed, -EAGAIN when nothing
 * is there, -ENODEV when the port was unplugged.
 */
ssize_t vtg_port_read(struct vtg_port *p, char __user *ubuf, size_t len)
{
	loff_t pos = 0;

	return p->file->f_op->read(p->file, ubuf, len, &pos);
}

/**
 * vtg_port_poll() - what poll() says of a port now
 * @p:		the port
 *
 * Return: the poll mask, 0 when the port is absent or cannot be polled.
 */
__poll_t vtg_port_poll(struct vtg_port *p)
{
	if (!p->file || !p->file->f_op->poll)
		return 0;
	return vfs_poll(p->file, NULL);
}

/**
 * vtg_port_connected() - the host end of the port is connected
 * @p:		the port
 *
 * A write that timed out on a connected port means a slow host.
 *
 * Return: true when the port is present, can be polled and has no EPOLLHUP.
 */
bool vtg_port_connected(struct vtg_port *p)
{
	return p->file && p->file->f_op->poll && !(vfs_poll(p->file, NULL) & EPOLLHUP);
}

/**
 * vtg_port_watch() - have the port's wake-ups wake @wake
 * @p:		the port
 * @w:		the caller's poller, taken off with vtg_poller_del() before
 *		the port is closed (its wait queue goes with the file)
 * @wake:	the wait queue to wake
 *
 * Nothing when the port is absent or cannot be polled.
 *
 * Context: process context.
 */
void vtg_port_watch(struct vtg_port *p, struct vtg_poller *w, wait_queue_head_t *wake)
{
	if (!p->file || !p->file->f_op->poll)
		return;
	vtg_poller_init(w, wake);
	vtg_poller_add(w, p->file);
}

/**
 * vtg_port_close() - close a port; it is absent afterwards
 * @p:		the port (absent: nothing to do)
 *
 * Any poller on the port was taken off first.
 *
 * Context: process context, no thread using the port.
 */
void vtg_port_close(struct vtg_port *p)
{
	vtg_close(p->file);
	p->file = NULL;
	p->stalled = false;
}

/**
 * vtg_ports_close() - close the control port and every data port
 *
 * The caller has taken its own entries off their wait queues first
 * (vtg_agent_unwatch()): a port's wait queue goes with its file.
 *
 * Context: the control thread, no drain thread running.
 */
void vtg_ports_close(void)
{
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		vtg_port_close(&vtg.cpus[cpu].port);
	vtg_port_close(&vtg.ctl);
	vtg.nr_ports = 0;
}
