// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: /sys/kernel/debug/vtrace/{enable,events,status}. */
/*
 * Writers do not change anything themselves: they queue a request for the
 * control thread and sleep until it is done (vtg_request; killable), so a
 * start or stop from debugfs is serialized with those coming from the host.
 * Removing the files at exit waits for writers in flight, which the
 * control thread (stopped only after that) completes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vtg.h"
#include "../common/vtrace_debugfs.h"


static ssize_t vtg_enable_read(struct file *f, char __user *ubuf, size_t len, loff_t *ppos)
{
	char buf[3] = { vtg.state == VTRACE_STATE_TRACING ? '1' : '0', '\n' };

	return simple_read_from_buffer(ubuf, len, ppos, buf, 2);
}

static ssize_t vtg_enable_write(struct file *f, const char __user *ubuf, size_t len,
				loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &on);
	if (ret)
		return ret;
	ret = vtg_request(on ? VTG_OP_START : VTG_OP_STOP, NULL, 0, MAX_SCHEDULE_TIMEOUT, NULL);
	return ret ? ret : len;
}

static const struct file_operations vtg_enable_fops = {
	.owner	= THIS_MODULE,
	.read	= vtg_enable_read,
	.write	= vtg_enable_write,
	.llseek	= default_llseek,
};


/*
 * events: the selection as the control thread last set it
 * (vtg_set_events()), one text per open: a reader that reads it in pieces
 * (a shell's read, byte by byte) gets one whole selection, never parts of
 * two
 */
static int vtg_events_show(struct seq_file *m, void *v)
{
	mutex_lock(&vtg.events_lock);
	seq_printf(m, "%s\n", vtg.events);
	mutex_unlock(&vtg.events_lock);
	return 0;
}

static int vtg_events_open(struct inode *inode, struct file *f)
{
	return single_open(f, vtg_events_show, NULL);
}

static ssize_t vtg_events_write(struct file *f, const char __user *ubuf, size_t len,
				loff_t *ppos)
{
	char *spec;
	int ret;

	if (len > VTG_EVENTS_MAX)
		return -E2BIG;
	spec = memdup_user_nul(ubuf, len);
	if (IS_ERR(spec))
		return PTR_ERR(spec);
	ret = vtg_request(VTG_OP_EVENTS, strim(spec), 0, MAX_SCHEDULE_TIMEOUT, NULL);
	kfree(spec);
	return ret ? ret : len;
}

static const struct file_operations vtg_events_fops = {
	.owner		= THIS_MODULE,
	.open		= vtg_events_open,
	.read		= seq_read,
	.write		= vtg_events_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/*
 * status: a snapshot built by the control thread when the file is opened.
 * If the thread is busy (a start that waits for a slow host, a stop
 * flushing) for more than VTG_STATUS_WAIT_MS, the opener builds the text
 * itself from the counters as they are, without the ring's figures that
 * only the thread can read, and says so: the file stays readable exactly
 * when the module is stuck.
 */
static int vtg_status_open(struct inode *inode, struct file *f)
{
	char *text = NULL;
	int ret;

	ret = vtg_request(VTG_OP_STATUS_TEXT, NULL, 0, msecs_to_jiffies(VTG_STATUS_WAIT_MS),
			  &text);
	if (ret == -ETIMEDOUT)
		text = vtg_status_format(false);
	else if (ret)
		return ret;
	if (!text)
		return -ENOMEM;
	f->private_data = text;
	return 0;
}

static ssize_t vtg_status_read(struct file *f, char __user *ubuf, size_t len, loff_t *ppos)
{
	const char *text = f->private_data;

	return simple_read_from_buffer(ubuf, len, ppos, text, strlen(text));
}

static int vtg_status_release(struct inode *inode, struct file *f)
{
	kfree(f->private_data);
	return 0;
}

static const struct file_operations vtg_status_fops = {
	.owner		= THIS_MODULE,
	.open		= vtg_status_open,
	.read		= vtg_status_read,
	.release	= vtg_status_release,
	.llseek		= default_llseek,
};

static const char *const vtg_debugfs_files[] = { "enable", "events", "status", NULL };

/**
 * vtg_debugfs_init() - create /sys/kernel/debug/vtrace/{enable,events,status}
 *
 * Context: module load, after the control thread is ready.
 * Return: 0 or a negative errno.
 */
int vtg_debugfs_init(void)
{
	/* shared with vtrace_host on a host that is itself a guest */
	vtg.dbg = vtrace_debugfs_dir_get();
	if (IS_ERR(vtg.dbg))
		return PTR_ERR(vtg.dbg);
	debugfs_create_file("enable", 0600, vtg.dbg, NULL, &vtg_enable_fops);
	debugfs_create_file("events", 0600, vtg.dbg, NULL, &vtg_events_fops);
	debugfs_create_file("status", 0400, vtg.dbg, NULL, &vtg_status_fops);
	return 0;
}

/**
 * vtg_debugfs_exit() - remove the files, waiting for writers in flight
 *
 * Context: module unload, before the control thread stops.
 */
void vtg_debugfs_exit(void)
{
	vtrace_debugfs_dir_put(vtg.dbg, vtg_debugfs_files);
}
