// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: find the vtrace.ctl and vtrace.cpuK virtio-serial ports by name and open them. */
/*
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
 * answers -EAGAIN.  vtg_port_wait() sleeps until virtio_console wakes the
 * port's wait queue, the way vhost_poll waits on a file: an entry of our
 * own, put on that queue by the port's poll(), whose wake function wakes
 * the writer.  The driver wakes the queue when the host has used our
 * buffers (out_intr), when the host end connects or goes away, and when
 * the port is unplugged; no timer runs while the host is slow.
 *
 *   writer: write() -EAGAIN -> vfs_poll(port, pt) --queue--> port->waitqueue
 *           sleep (TASK_IDLE, up to the deadline)              | out_intr()
 *           <------------- vtg_port_wake(): woken = true ------+
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
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
	if (!strcmp(name + plen, VTRACE_CTL_PORT_SUFFIX) && !vtg.ctl) {
		f = vtg_port_open(dev, name, true);
		if (!IS_ERR(f))
			vtg.ctl = f;
		return;
	}
	if (strncmp(name + plen, VTRACE_CPU_PORT_SUFFIX, strlen(VTRACE_CPU_PORT_SUFFIX)) ||
	    kstrtouint(name + plen + strlen(VTRACE_CPU_PORT_SUFFIX), 10, &cpu))
		return;
	if (cpu >= nr_cpu_ids) {
		pr_warn("port %s: no CPU %u in this guest, ignored\n", name, cpu);
		return;
	}
	if (vtg.cpus[cpu].port)
		return;
	f = vtg_port_open(dev, name, false);
	if (IS_ERR(f))
		return;
	vtg.cpus[cpu].port = f;
	vtg.nr_ports++;
}

static void vtg_ports_report(void)
{
	unsigned int cpu;

	if (!vtg.ctl)
		pr_warn("no port %s%s: no metadata, no agent mode\n",
			vtg_prefix, VTRACE_CTL_PORT_SUFFIX);
	if (vtg.nr_ports == nr_cpu_ids)
		return;
	pr_warn("%u data port(s) for %u CPUs; pages of these CPUs are not streamed:\n",
		vtg.nr_ports, nr_cpu_ids);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (!vtg.cpus[cpu].port)
			pr_warn("  cpu%u (no port %s%s%u)\n", cpu, vtg_prefix,
				VTRACE_CPU_PORT_SUFFIX, cpu);
}

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

/**
 * struct vtg_port_waiter - one writer waiting for a port (on its stack)
 * @pt:		poll table handed to the port's poll()
 * @wait:	our entry on the port's wait queue
 * @wqh:	that wait queue, NULL until poll() gave it
 * @task:	the writer
 * @woken:	the port woke the queue since @wait was queued
 */
struct vtg_port_waiter {
	poll_table pt;
	struct wait_queue_entry wait;
	wait_queue_head_t *wqh;
	struct task_struct *task;
	bool woken;
};

/*
 * Wait queue function of a waiter.  Runs in the port's interrupt path with
 * the queue's lock held and interrupts off: sets a flag and wakes the
 * writer, nothing more.
 */
static int vtg_port_wake(struct wait_queue_entry *wait, unsigned int mode, int sync, void *key)
{
	struct vtg_port_waiter *w = container_of(wait, struct vtg_port_waiter, wait);

	WRITE_ONCE(w->woken, true);
	wake_up_process(w->task);
	return 0;
}

/* poll_table queue function: put the waiter on the port's wait queue, once */
static void vtg_port_queue(struct file *file, wait_queue_head_t *wqh, poll_table *pt)
{
	struct vtg_port_waiter *w = container_of(pt, struct vtg_port_waiter, pt);

	if (w->wqh)
		return;
	w->wqh = wqh;
	add_wait_queue(wqh, &w->wait);
}

/*
 * After a write to @port answered -EAGAIN: sleep until the port's wait
 * queue is woken, poll() says it is writable, or @deadline (jiffies)
 * passes.  The caller then writes again and judges the deadline itself.
 * Not interruptible (the stop's final writes run after kthread_stop() may
 * have flagged the thread), bounded by @deadline.  Process context only.
 */
void vtg_port_wait(struct file *port, unsigned long deadline)
{
	struct vtg_port_waiter w = { .task = current };
	__poll_t mask;
	long left;

	if (!port->f_op->poll) {
		usleep_range(1000, 2000);
		return;
	}
	init_waitqueue_func_entry(&w.wait, vtg_port_wake);
	init_poll_funcptr(&w.pt, vtg_port_queue);
	mask = vfs_poll(port, &w.pt);
	for (;;) {
		set_current_state(TASK_IDLE);
		if ((mask & EPOLLOUT) || READ_ONCE(w.woken))
			break;
		left = (long)(deadline - jiffies);
		if (left <= 0)
			break;
		schedule_timeout(left);
	}
	__set_current_state(TASK_RUNNING);
	if (w.wqh)
		remove_wait_queue(w.wqh, &w.wait);
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

	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		vtg_close(vtg.cpus[cpu].port);
		vtg.cpus[cpu].port = NULL;
	}
	vtg_close(vtg.ctl);
	vtg.ctl = NULL;
	vtg.nr_ports = 0;
}
