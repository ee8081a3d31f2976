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
 * answers -EAGAIN.  vtg_port_io() then sleeps until virtio_console wakes the
 * port's wait queue (a poller, poll.c), writes again, and gives up at the
 * caller's deadline, marking the port stalled: the one stall policy of the
 * ctl port (ctl.c) and the data ports (stream.c).  The driver wakes the
 * queue when the host has used our buffers (out_intr), when the host end
 * connects or goes away, and when the port is unplugged; no timer runs
 * while the host is slow.
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

/**
 * vtg_ports_open() - find and open PREFIX.ctl and PREFIX.cpuK
 *
 * Sets vtg.ctl, vtg.cpus[].port and vtg.nr_ports; a port missing or not
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

/**
 * vtg_port_io() - one write or splice to a port, with the module's one stall policy
 * @port:	the port (O_NONBLOCK)
 * @stalled:	the port's stall flag
 * @deadline:	jiffies after which -EAGAIN is final
 * @op:		the write or splice; returns what ->write/->splice_write do
 * @arg:	its argument
 *
 * While @op answers -EAGAIN, sleep on the port (vtg_port_wait()) and try
 * again, until @deadline.  Then the port is stalled: later calls try @op
 * once and give up at once on -EAGAIN, until the caller clears *@stalled
 * (its data went through whole).  The guest never waits for a host that
 * does not read for more than one deadline per stall.
 *
 * Context: process context; may sleep up to @deadline.
 * Return: @op's result other than -EAGAIN, or -ETIMEDOUT (*@stalled set).
 */
ssize_t vtg_port_io(struct file *port, bool *stalled, unsigned long deadline,
		    ssize_t (*op)(struct file *port, void *arg), void *arg)
{
	ssize_t ret;

	for (;;) {
		ret = op(port, arg);
		if (ret != -EAGAIN)
			return ret;
		if (*stalled || !time_before(jiffies, deadline)) {
			*stalled = true;
			return -ETIMEDOUT;
		}
		vtg_port_wait(port, deadline);
	}
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
