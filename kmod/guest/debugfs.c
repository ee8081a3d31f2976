// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: /sys/kernel/debug/vtrace/{enable,events,status}. */
/*
 * Writers do not change anything themselves: they queue a request for the
 * control thread and sleep until it is done (vtg_request; killable), so a
 * start or stop from debugfs is serialized with those coming from the host.
 * Removing the files at exit waits for writers in flight, which the
 * control thread (stopped only after that) completes.
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vtg.h"
#include "../common/vtrace_debugfs.h"

#define VTG_STATUS_SIZE	(4096 + 128 * nr_cpu_ids)

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

static char *vtg_status_format(bool fresh);

static ssize_t vtg_events_read(struct file *f, char __user *ubuf, size_t len, loff_t *ppos)
{
	char *text = kasprintf(GFP_KERNEL, "%s\n", vtg.events);
	ssize_t ret;

	if (!text)
		return -ENOMEM;
	ret = simple_read_from_buffer(ubuf, len, ppos, text, strlen(text));
	kfree(text);
	return ret;
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
	.owner	= THIS_MODULE,
	.read	= vtg_events_read,
	.write	= vtg_events_write,
	.llseek	= default_llseek,
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

static int vtg_status_cpu(char *buf, size_t size, const struct vtrace_cpu_stats *s)
{
	return scnprintf(buf, size, "%-4u %-4s %-6s %8llu %10llu %9llu %7llu %6llu %11llu %11llu %6llu\n",
			 s->cpu, s->flags & VTRACE_CPU_HAS_PORT ? "yes" : "no",
			 s->flags & VTRACE_CPU_ONLINE ? "yes" : "no", s->pages_sent,
			 s->bytes_sent, s->events_sent, s->fillers_sent, s->pages_lost,
			 s->events_lost_port, s->events_lost_ring, s->port_errors);
}

/*
 * The text of "status".  @fresh: the control thread, with the ring's
 * figures read now; else any task, with the counters as they are (an
 * unlocked snapshot, as every status read is) and the thread's business.
 */
static char *vtg_status_format(bool fresh)
{
	size_t size = VTG_STATUS_SIZE, n;
	char *buf = kmalloc(size, GFP_KERNEL);
	const char *busy = READ_ONCE(vtg.busy);
	unsigned int cpu;

	if (!buf)
		return NULL;
	if (fresh)
		vtg_refresh_ring_stats();
	n = scnprintf(buf, size,
		      "state: %s\nsession: %llu\nprefix: %s\nctl port: %s\ndata ports: %u of %u CPUs%s\n"
		      "protocol version: %u\nctl messages: %llu sent, %llu lost\n"
		      "host commands: %llu received, %llu refused\n",
		      vtg.state == VTRACE_STATE_TRACING ? "tracing" : "idle", vtg.session,
		      vtg_prefix, vtg.ctl ? "yes" : "no", vtg.nr_ports, nr_cpu_ids,
		      vtg.nr_ports < nr_cpu_ids ? " (CPUs without a port are not streamed)" : "",
		      vtg.version, vtg.ctl_sent, vtg.ctl_lost, vtg.cmds, vtg.cmd_errors);
	if (vtg.cmds_limited)
		n += scnprintf(buf + n, size - n, "host commands rate-limited: %llu\n",
			       vtg.cmds_limited);
	if (vtg.host_untrusted)
		n += scnprintf(buf + n, size - n, "host: untrusted (confidential guest, trust_host=0)\n");
	if (!fresh)
		n += scnprintf(buf + n, size - n,
			       "control thread: busy (%s) for more than %u ms; ring_lost as of its last look\n",
			       busy ? busy : "between two tasks", VTG_STATUS_WAIT_MS);
	n += scnprintf(buf + n, size - n,
		       "cpu  port online    pages      bytes    events fillers  lost lost_events ring_lost port_errors\n");
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		n += vtg_status_cpu(buf + n, size - n, &vtg.cpus[cpu].st);
	return buf;
}

/* Control thread: the text of "status" */
char *vtg_status_text(size_t *lenp)
{
	char *buf = vtg_status_format(true);

	if (buf)
		*lenp = strlen(buf);
	return buf;
}

static const char *const vtg_debugfs_files[] = { "enable", "events", "status", NULL };

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

void vtg_debugfs_exit(void)
{
	vtrace_debugfs_dir_put(vtg.dbg, vtg_debugfs_files);
}
