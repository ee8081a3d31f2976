// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: the session's figures: ring statistics, STATUS and EOS, the "status" text. */
/*
 * The counters live in vtg.cpus[].st (the drain threads add to them) and
 * in vtg (ctl messages, host commands).  The ring buffer's own figures
 * (overruns, drops, entries left) come from the instance's
 * per_cpu/cpuK/stats, which only a task using the borrowed mm can read:
 * the control thread.  The same figures go to the host (STATUS, EOS) and
 * to debugfs ("status").  Calls only file.c and ctl.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <asm/msr.h>

#include "vtg.h"

#define VTG_STATUS_SIZE	(4096 + 128 * nr_cpu_ids)

static u64 vtg_stat_field(const char *text, const char *name)
{
	const char *p = strstr(text, name);
	unsigned long long v = 0;

	if (p && sscanf(p + strlen(name), " %llu", &v) != 1)
		v = 0;
	return v;
}

/**
 * vtg_ring_stat() - one figure of a CPU's ring (per_cpu/cpuK/stats)
 * @cpu:	the CPU
 * @name:	the field with its colon, e.g. "entries:"
 *
 * Context: the control thread (borrowed mm).
 * Return: the value, 0 when the file or the field cannot be read.
 */
u64 vtg_ring_stat(unsigned int cpu, const char *name)
{
	char rel[48];
	size_t len;
	char *buf;
	u64 v;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%u/stats", cpu);
	buf = vtg_read_instance(rel, &len);
	if (IS_ERR(buf))
		return 0;
	v = vtg_stat_field(buf, name);
	kvfree(buf);
	return v;
}

/**
 * vtg_refresh_ring_stats() - read the rings' losses and the CPU flags into vtg.cpus[].st
 *
 * events_lost_ring becomes the ring's overruns, commit overruns and dropped
 * events (per_cpu/cpuK/stats), plus what the stop left unread.
 *
 * Context: the control thread (borrowed mm).
 */
void vtg_refresh_ring_stats(void)
{
	unsigned int cpu;
	char rel[48];
	size_t len;
	char *buf;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct vtrace_cpu_stats *st = &vtg.cpus[cpu].st;

		st->cpu = cpu;
		st->flags = (vtg_port_present(&vtg.cpus[cpu].port) ? VTRACE_CPU_HAS_PORT : 0) |
			    (cpu_online(cpu) ? VTRACE_CPU_ONLINE : 0);
		snprintf(rel, sizeof(rel), "per_cpu/cpu%u/stats", cpu);
		buf = vtg_read_instance(rel, &len);
		if (IS_ERR(buf))
			continue;
		/* overwritten, lost to a writer lapping the reader, refused, left unread */
		st->events_lost_ring = vtg_stat_field(buf, "\noverrun:") +
				       vtg_stat_field(buf, "commit overrun:") +
				       vtg_stat_field(buf, "dropped events:") +
				       vtg.cpus[cpu].unread;
		kvfree(buf);
	}
}

/**
 * vtg_send_status() - send STATUS (reply to STATUS_REQ) or EOS on vtrace.ctl
 * @type:	%VTRACE_MSG_STATUS or %VTRACE_MSG_EOS
 *
 * The payload is struct vtrace_status, then the per-CPU stats, refreshed.
 *
 * Context: the control thread.
 * Return: 0 or a negative errno (the message was not delivered).
 */
int vtg_send_status(u16 type)
{
	struct vtrace_status s = {
		.state = vtg.state,
		.nr_cpus = nr_cpu_ids,
		.nr_ports = vtg.nr_ports,
		.flags = vtg.status_flags,
		.session = vtg.session,
		.tsc = rdtsc_ordered(),
	};
	struct vtrace_cpu_stats *st;
	unsigned int cpu;
	int ret;

	st = kvcalloc(nr_cpu_ids, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	vtg_refresh_ring_stats();
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		st[cpu] = vtg.cpus[cpu].st;
	ret = vtg_send(type, &s, sizeof(s), st, nr_cpu_ids * sizeof(*st), NULL, 0);
	kvfree(st);
	return ret;
}

static int vtg_status_cpu(char *buf, size_t size, const struct vtrace_cpu_stats *s)
{
	return scnprintf(buf, size, "%-4u %-4s %-6s %8llu %10llu %9llu %7llu %6llu %11llu %11llu %6llu\n",
			 s->cpu, s->flags & VTRACE_CPU_HAS_PORT ? "yes" : "no",
			 s->flags & VTRACE_CPU_ONLINE ? "yes" : "no", s->pages_sent,
			 s->bytes_sent, s->events_sent, s->fillers_sent, s->pages_lost,
			 s->events_lost_port, s->events_lost_ring, s->port_errors);
}

/**
 * vtg_status_format() - the text of "status"
 * @fresh:	the control thread, with the ring's figures read now; else
 *		any task, with the counters as they are (an unlocked snapshot,
 *		as every status read is) and the thread's business
 *
 * Return: kmalloc'ed text, NUL-terminated, or NULL.
 */
char *vtg_status_format(bool fresh)
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
		      vtg_prefix, vtg_port_present(&vtg.ctl) ? "yes" : "no",
		      vtg.nr_ports, nr_cpu_ids,
		      vtg.nr_ports < nr_cpu_ids ? " (CPUs without a port are not streamed)" : "",
		      vtg.version, vtg.ctl_sent, vtg.ctl_lost, vtg.cmds, vtg.cmd_errors);
	if (vtg.cmds_limited)
		n += scnprintf(buf + n, size - n, "host commands rate-limited: %llu\n",
			       vtg.cmds_limited);
	if (vtg.status_flags & VTRACE_STATUS_TRACING_ON)
		n += scnprintf(buf + n, size - n,
			       "not disarmed: tracing_on could not be set to 0, the rings may still record\n");
	if (vtg.status_flags & VTRACE_STATUS_EVENTS_ON)
		n += scnprintf(buf + n, size - n,
			       "not disarmed: events/enable could not be set to 0, events stay enabled\n");
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

/**
 * vtg_status_text() - the fresh text of "status", for a request
 * @lenp:	set to its length
 *
 * Context: the control thread.
 * Return: kmalloc'ed text or NULL.
 */
char *vtg_status_text(size_t *lenp)
{
	char *buf = vtg_status_format(true);

	if (buf)
		*lenp = strlen(buf);
	return buf;
}
