// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: tracing sessions (start, stop and flush), event selection, status. */
/*
 * All of this runs in the control thread, through the instance's standard
 * tracefs files (see file.c for why that works from a kernel thread):
 *
 *   start: buffer_subbuf_size_kb read (at most 32 KiB, refuse otherwise),
 *          trace_clock <- x86-tsc (verified by reading it back; refuse
 *          otherwise), tracing_on <- 0, trace truncated and every CPU not
 *          online then reset (per_cpu/cpuK/trace), set_event <- the event
 *          specification, META_INFO + META_FILEs, drain threads,
 *          tracing_on <- 1, STARTED; a step that fails from set_event on
 *          stops the drain threads it started and disarms: tracing_on <- 0,
 *          events/enable <- 0 (vtg_disarm())
 *   stop:  tracing_on <- 0, synchronize_rcu() (no writer still
 *          committing), drain threads empty the frozen rings (whole pages
 *          by splice, the last partial page by read()), events/enable <- 0,
 *          EOS with the per-CPU counters
 *
 * The instance stays usable by hand between sessions (filters, triggers,
 * buffer_size_kb); the event selection belongs to the module and is set
 * again at every start.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/stringify.h>
#include <linux/rcupdate.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/msr.h>

#include "vtg.h"

#define VTG_CLOCK	"x86-tsc"
/* set_event reads words of at most this many bytes (EVENT_BUF_SIZE + 1) */
#define VTG_EVENT_WORD_MAX	128
/* buffer_percent of the instance the module creates (vtg_instance_defaults()) */
#define VTG_BUFFER_PERCENT	25
/* Writes that disarm the instance: tries, and the pause between two */
#define VTG_DISARM_TRIES	3
#define VTG_DISARM_RETRY_MS	10
/* A CPU ring's size when buffer_size_kb cannot be read (the kernel's default) */
#define VTG_STOP_DEFAULT_KB	1408

static int vtg_set_clock(void)
{
	int ret = vtg_write_instance("trace_clock", VTG_CLOCK, false);
	size_t len;
	char *buf;

	buf = vtg_read_instance("trace_clock", &len);
	if (IS_ERR(buf)) {
		ret = ret ? ret : PTR_ERR(buf);
	} else {
		if (!strstr(buf, "[" VTG_CLOCK "]"))
			ret = ret ? ret : -EINVAL;
		kvfree(buf);
	}
	if (ret)
		pr_err("cannot set trace clock %s in instances/%s (%d); not starting. Set it by hand: echo %s > /sys/kernel/tracing/instances/%s/trace_clock\n",
		       VTG_CLOCK, VTG_INSTANCE, ret, VTG_CLOCK, VTG_INSTANCE);
	return ret;
}

/* Apply a set_event specification (lines or blanks between specs) */
static int vtg_apply_events(const char *spec)
{
	int ret = vtg_write_instance("set_event", spec, true);

	if (ret)
		pr_warn_ratelimited("set_event refused the specification: %d\n", ret);
	return ret;
}

/*
 * The instance's sub-buffer size (buffer_subbuf_size_kb, v6.8+; no such
 * file: a page) is the unit of everything that follows: splice and read()
 * of trace_pipe_raw hand out whole sub-buffers, the data ports carry them
 * back to back and META_INFO's page_size says their size.  Sizes above
 * VTG_SUBBUF_MAX are refused: the stop's last sub-buffer goes out in one
 * port write, which virtio_console caps at 32 KiB.  The size is read once
 * per session: changing it while tracing is not supported (stream.c drops
 * sub-buffers of another size, counted lost).
 */
static int vtg_read_subbuf(void)
{
	unsigned long kb = 0;
	size_t len;
	char *buf;

	vtg.subbuf_size = PAGE_SIZE;
	vtg.subbuf_pages = 1;
	buf = vtg_read_instance("buffer_subbuf_size_kb", &len);
	if (IS_ERR(buf))
		return PTR_ERR(buf) == -ENOENT ? 0 : PTR_ERR(buf);
	if (kstrtoul(strim(buf), 10, &kb))
		kb = 0;
	kvfree(buf);
	if (kb && kb <= VTG_SUBBUF_MAX >> 10 && IS_ALIGNED(kb << 10, PAGE_SIZE)) {
		vtg.subbuf_size = kb << 10;
		vtg.subbuf_pages = vtg.subbuf_size / PAGE_SIZE;
		return 0;
	}
	pr_err("instances/%s/buffer_subbuf_size_kb is %lu, more than the %u KiB a sub-buffer may have to be streamed: not starting. Set it to %u or less: echo %lu > /sys/kernel/tracing/instances/%s/buffer_subbuf_size_kb\n",
	       VTG_INSTANCE, kb, VTG_SUBBUF_MAX >> 10, VTG_SUBBUF_MAX >> 10, PAGE_SIZE >> 10,
	       VTG_INSTANCE);
	return -EOPNOTSUPP;
}

/*
 * Truncating "trace" and changing the clock reset the buffers of the CPUs
 * online at that moment only: an offline CPU would keep events from before
 * the session, maybe in another clock, and stream them into it once it
 * comes back (or at the stop).  Tracing is off by now, so no CPU writes
 * any more: reset every CPU that was not online across the truncation,
 * one by one (per_cpu/cpuK/trace).
 */
static int vtg_reset_buffers(void)
{
	cpumask_var_t was_online;
	unsigned int cpu;
	char rel[48];
	int ret;

	if (!zalloc_cpumask_var(&was_online, GFP_KERNEL))
		return -ENOMEM;
	cpumask_copy(was_online, cpu_online_mask);
	ret = vtg_write_instance("trace", "", true);
	for_each_possible_cpu(cpu) {
		if (ret)
			break;
		if (cpumask_test_cpu(cpu, was_online) && cpu_online(cpu))
			continue;
		snprintf(rel, sizeof(rel), "per_cpu/cpu%u/trace", cpu);
		ret = vtg_write_instance(rel, "", true);
	}
	free_cpumask_var(was_online);
	return ret;
}

/* Sub-buffers of a CPU's ring when its buffer_size_kb cannot be read */
static unsigned int vtg_default_subbufs(void)
{
	return DIV_ROUND_UP(VTG_STOP_DEFAULT_KB << 10, vtg.subbuf_size);
}

/* Sub-buffers of @cpu's ring (per_cpu/cpuN/buffer_size_kb), 0 if unreadable */
static unsigned int vtg_ring_subbufs(unsigned int cpu)
{
	unsigned long kb = 0;
	char rel[48];
	size_t len;
	char *buf;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%u/buffer_size_kb", cpu);
	buf = vtg_read_instance(rel, &len);
	if (IS_ERR(buf))
		return 0;
	if (kstrtoul(strim(buf), 10, &kb) || kb > UINT_MAX >> 10)
		kb = 0;
	kvfree(buf);
	return DIV_ROUND_UP(kb << 10, vtg.subbuf_size);
}

/*
 * Each drain thread paces its sleeps by the share of its ring still free
 * when it wakes (stream.c): the ring's sub-buffers at the start.
 */
static void vtg_set_ring_sizes(void)
{
	unsigned int cpu, n;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (!vtg_port_present(&vtg.cpus[cpu].port))
			continue;
		n = vtg_ring_subbufs(cpu);
		vtg.cpus[cpu].ring_subbufs = n ?: vtg_default_subbufs();
	}
}

static int vtg_prepare(void)
{
	int ret = vtg_read_subbuf();

	if (!ret)
		ret = vtg_set_clock();
	if (ret)
		return ret;
	ret = vtg_write_instance("tracing_on", "0", false);
	if (!ret)
		ret = vtg_reset_buffers();
	if (!ret)
		vtg_set_ring_sizes();
	return ret;
}

/*
 * Write "0" to the instance's @rel (tracing_on, events/enable), up to
 * VTG_DISARM_TRIES times: a failure leaves the ring recording or the
 * events armed, which an idle guest must not hide.  @flag (VTRACE_STATUS_*)
 * goes into vtg.status_flags (status, STATUS, EOS) if every try failed,
 * out if one succeeded.
 */
static int vtg_disarm_write(const char *rel, u32 flag)
{
	unsigned int i;
	int ret;

	for (i = 0; i < VTG_DISARM_TRIES; i++) {
		if (i)
			msleep(VTG_DISARM_RETRY_MS);
		ret = vtg_write_instance(rel, "0", false);
		if (!ret) {
			vtg.status_flags &= ~flag;
			return 0;
		}
		pr_warn("instances/%s/%s <- 0: %d (try %u of %u)\n", VTG_INSTANCE, rel, ret,
			i + 1, VTG_DISARM_TRIES);
	}
	vtg.status_flags |= flag;
	pr_err("instances/%s/%s is still on: status and EOS say so. Turn it off by hand: echo 0 > /sys/kernel/tracing/instances/%s/%s\n",
	       VTG_INSTANCE, rel, VTG_INSTANCE, rel);
	return ret;
}

/*
 * Tracing off and the event selection disarmed: what an idle instance
 * looks like.  The undo of a failed start: the selection it applied would
 * otherwise cost every selected event until the next stop, and on a
 * user's own instance outlive the module.
 */
static void vtg_disarm(void)
{
	vtg_disarm_write("tracing_on", VTRACE_STATUS_TRACING_ON);
	vtg_disarm_write("events/enable", VTRACE_STATUS_EVENTS_ON);
}

static void vtg_send_started(void)
{
	struct vtrace_started s = {
		.session = vtg.session,
		.tsc = rdtsc_ordered(),
		.nr_files = vtg.meta_files,
	};

	vtg_send(VTRACE_MSG_STARTED, &s, sizeof(s), NULL, 0, NULL, 0);
}

/**
 * vtg_start() - start a session (see the top of this file)
 *
 * Context: the control thread.
 * Return: 0, -EBUSY (tracing), -ENODEV (no data port), or the failed
 * step's errno: then tracing is off and no event of the instance is
 * enabled (the trace clock stays x86-tsc and the rings were emptied, as
 * after a stop); the session number was used.
 */
int vtg_start(void)
{
	int ret;

	if (vtg.state == VTRACE_STATE_TRACING)
		return -EBUSY;
	if (!vtg.nr_ports) {
		pr_warn("no data port %s%s0..: nothing to stream to\n",
			vtg_prefix, VTRACE_CPU_PORT_SUFFIX);
		return -ENODEV;
	}
	ret = vtg_prepare();
	if (ret)
		goto out_warn;
	ret = vtg_apply_events(vtg.events);
	if (ret)
		goto out_disarm;
	vtg.session++;
	ret = vtg_meta_send();
	if (ret)
		goto out_disarm;
	ret = vtg_stream_start();
	if (ret)
		goto out_disarm;
	ret = vtg_write_instance("tracing_on", "1", false);
	if (ret)
		goto out_stop_stream;
	vtg.state = VTRACE_STATE_TRACING;
	vtg.status_flags = 0;
	vtg_send_started();
	pr_info("session %llu started\n", vtg.session);
	return 0;

out_stop_stream:
	vtg_stream_stop();
out_disarm:
	/* whichever step failed: the selection may be armed (set_event) */
	vtg_disarm();
out_warn:
	pr_warn("start failed: %d\n", ret);
	return ret;
}

static void vtg_log_totals(void)
{
	struct vtrace_cpu_stats t = {};
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct vtrace_cpu_stats *s = &vtg.cpus[cpu].st;

		t.pages_sent += s->pages_sent;
		t.events_sent += s->events_sent;
		t.fillers_sent += s->fillers_sent;
		t.pages_lost += s->pages_lost;
		t.events_lost_ring += s->events_lost_ring;
	}
	pr_info("session %llu stopped: %llu pages, %llu events (%llu fillers) sent, %llu pages lost, %llu events overwritten\n",
		vtg.session, t.pages_sent, t.events_sent, t.fillers_sent, t.pages_lost,
		t.events_lost_ring);
}

/*
 * After the stop's last drain a CPU's ring is empty, unless a read failed,
 * the drain hit its limit or the port went away: count what is left as
 * lost (in events_lost_ring), so that nothing vanishes uncounted.
 */
static void vtg_count_unread(void)
{
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct vtg_cpu *c = &vtg.cpus[cpu];

		if (!vtg_port_present(&c->port) && !c->port_gone)
			continue;
		c->unread = vtg_ring_stat(cpu, "entries:");
		if (c->unread)
			pr_warn("cpu%u: %llu events left unread in the ring, counted lost\n",
				cpu, c->unread);
	}
}

/**
 * vtg_instance_defaults() - settings of the instance the module created
 *
 * Its drain threads wake at VTG_BUFFER_PERCENT of a CPU's ring rather than
 * the kernel's 50: three quarters of the ring stay free for the wake-up,
 * the first drain of a burst and a vCPU the host does not run meanwhile,
 * for the same notifications per MB (a splice round sends at most
 * VTG_SPLICE_PAGES pages whatever the batch).  An instance the user made
 * keeps its own; a value written by hand after the load stays.
 *
 * Context: the control thread, once, at its start.
 */
void vtg_instance_defaults(void)
{
	int ret;

	if (!vtg.own_instance)
		return;
	ret = vtg_write_instance("buffer_percent", __stringify(VTG_BUFFER_PERCENT), false);
	if (ret)
		pr_warn("instances/%s/buffer_percent: cannot set %u (%d): drain threads wake at the kernel's default\n",
			VTG_INSTANCE, VTG_BUFFER_PERCENT, ret);
}

/*
 * The stop's drain takes at most twice the sub-buffers the largest CPU ring
 * holds (buffer_size_kb): a frozen ring holds no more, so only a bug or a
 * producer that ignores tracing_on could reach the bound.
 */
static void vtg_set_stop_budget(void)
{
	unsigned int cpu, n = 0;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (vtg.cpus[cpu].task)
			n = max(n, vtg_ring_subbufs(cpu));
	if (!n)
		n = vtg_default_subbufs();
	vtg.stop_budget = 2 * (n + VTG_SPLICE_PAGES);
}

/*
 * The stop's one deadline: its drains end VTG_STOP_TIMEOUTS port_timeout_ms
 * after it began, at least VTG_STOP_MIN_MS (a host that keeps up empties
 * the rings in that time, whatever port_timeout_ms), at most
 * VTG_STOP_MAX_MS (with the largest port_timeout_ms a stop, EOS included,
 * still ends well before the hung-task detector's default 120 s would flag
 * an rmmod waiting for it).  A host that takes each write just within
 * port_timeout_ms cannot stretch the stop beyond it.
 */
static void vtg_set_stop_deadline(void)
{
	unsigned int ms = VTG_STOP_TIMEOUTS * READ_ONCE(vtg_port_timeout_ms);

	vtg.stop_deadline = jiffies + msecs_to_jiffies(clamp(ms, VTG_STOP_MIN_MS, VTG_STOP_MAX_MS));
}

/**
 * vtg_stop() - stop the session and flush every ring
 *
 * Tracing off first: no event, tracer or trace_marker write enters the
 * ring after that, and ring-buffer writers run with preemption off, so
 * after synchronize_rcu() none is still committing.  Then every drain
 * thread empties its frozen ring (bounded in pages and by the stop's
 * deadline, see stream.c), what is left counts as lost, and the event
 * selection is disarmed: the instance's set_event is empty between
 * sessions.  Each disarming write is retried; one that still fails is
 * reported in status, STATUS and EOS (VTRACE_STATUS_*) and the kernel log,
 * and the session ends all the same.
 *
 * Context: the control thread.
 * Return: 0, or -EALREADY when idle.
 */
int vtg_stop(void)
{
	if (vtg.state != VTRACE_STATE_TRACING)
		return -EALREADY;
	vtg_set_stop_deadline();
	/* if it stays on, the drains below end at their bound or the deadline */
	vtg_disarm_write("tracing_on", VTRACE_STATUS_TRACING_ON);
	synchronize_rcu();
	vtg_set_stop_budget();
	/* the drain threads read vtg.stop_deadline once they see vtg.stopping */
	smp_store_release(&vtg.stopping, true);
	vtg_stream_stop();
	vtg_count_unread();
	vtg_disarm_write("events/enable", VTRACE_STATUS_EVENTS_ON);
	vtg.state = VTRACE_STATE_IDLE;
	vtg_send_status(VTRACE_MSG_EOS);
	vtg_log_totals();
	return 0;
}

/*
 * Does one set_event word (without its '!') name "sys:name"?  As the
 * kernel's ftrace_set_clr_event() reads it: SYS:EVENT, either half empty
 * or "*" for any; a word without ':' names a system or an event.
 */
static bool vtg_event_matches(const char *word, const char *sys, const char *name)
{
	const char *colon = strchr(word, ':');
	size_t slen;

	if (!colon)
		return !strcmp(word, sys) || !strcmp(word, name);
	slen = colon - word;
	if (slen && strncmp(word, "*:", 2) && (strlen(sys) != slen || strncmp(word, sys, slen)))
		return false;
	return !colon[1] || !strcmp(colon + 1, "*") || !strcmp(colon + 1, name);
}

/* Does @word name at least one line "sys:name" of @avail (available_events)? */
static bool vtg_event_known(const char *word, const char *avail)
{
	const char *line, *end;
	char ev[128], *colon;

	for (line = avail; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		if (end - line >= sizeof(ev))
			continue;
		memcpy(ev, line, end - line);
		ev[end - line] = '\0';
		colon = strchr(ev, ':');
		if (!colon)
			continue;
		*colon = '\0';
		if (vtg_event_matches(word, ev, colon + 1))
			return true;
	}
	return false;
}

/* The top-level available_events (instances have none; ours has every system) */
static char *vtg_available_events(void)
{
	struct file *f = vtg_open_tracefs("available_events", O_RDONLY);
	size_t len;
	char *buf;

	if (IS_ERR(f))
		return ERR_CAST(f);
	buf = vtg_read_whole(f, &len);
	vtg_close(f);
	return buf;
}

/*
 * Check a specification against available_events without applying it:
 * the selection is armed only by a start, so an idle guest keeps the
 * set_event it has, whatever the host sends.  A word that names no event
 * is refused, as set_event would refuse it (-EINVAL).
 */
static int vtg_check_events(const char *spec)
{
	char *copy, *p, *word, *avail;
	int ret = 0;

	avail = vtg_available_events();
	if (IS_ERR(avail)) {
		pr_warn_ratelimited("available_events: %ld\n", PTR_ERR(avail));
		return PTR_ERR(avail);
	}
	copy = kstrdup(spec, GFP_KERNEL);
	if (!copy) {
		kvfree(avail);
		return -ENOMEM;
	}
	for (p = copy; !ret && (word = strsep(&p, " \t\n\r"));) {
		if (*word == '!')
			word++;
		if (!*word)
			continue;
		if (strlen(word) >= VTG_EVENT_WORD_MAX ||
		    !vtg_event_known(word, avail)) {
			pr_warn_ratelimited("event specification: %s names no event\n",
					    word);
			ret = -EINVAL;
		}
	}
	kfree(copy);
	kvfree(avail);
	return ret;
}

/**
 * vtg_set_events() - a new event selection: checked now, applied at every start
 * @spec:	set_event syntax, words separated by blanks
 *
 * Context: the control thread.
 * Return: 0, or a negative errno (the old selection kept).
 */
int vtg_set_events(const char *spec)
{
	int ret;

	if (vtg.state == VTRACE_STATE_TRACING)
		return -EBUSY;
	if (strlen(spec) > VTG_EVENTS_MAX)
		return -E2BIG;
	ret = vtg_check_events(spec);
	if (ret)
		return ret;
	/* a debugfs reader of events sees the old text or the new, never half of each */
	mutex_lock(&vtg.events_lock);
	strscpy(vtg.events, spec, VTG_EVENTS_MAX + 1);
	mutex_unlock(&vtg.events_lock);
	return 0;
}

/**
 * vtg_set_buffer_size() - the instance's buffer_size_kb, when idle
 * @kb:		KiB per CPU
 *
 * SET_BUFFER_SIZE from the host.  The ring buffer allocates every CPU's
 * pages at once; a host must not be able to push the guest into memory
 * pressure (allocation failure warnings, the OOM killer): at most half of
 * the memory available now, for all CPUs together.
 *
 * Context: the control thread.
 * Return: 0, -EBUSY (tracing), -EINVAL (0), -ENOMEM (too large), or the
 * write's errno.
 */
int vtg_set_buffer_size(unsigned long kb)
{
	unsigned long avail_kb = si_mem_available() << (PAGE_SHIFT - 10);
	char text[24];

	if (vtg.state == VTRACE_STATE_TRACING)
		return -EBUSY;
	if (!kb)
		return -EINVAL;
	if (kb > avail_kb / 2 / num_possible_cpus()) {
		pr_warn_ratelimited("buffer size %lu KiB per CPU refused: %lu KiB available\n",
				    kb, avail_kb);
		return -ENOMEM;
	}
	snprintf(text, sizeof(text), "%lu", kb);
	return vtg_write_instance("buffer_size_kb", text, false);
}
