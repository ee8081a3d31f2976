/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace_guest: declarations shared by the files of the guest module. */
#ifndef _VTG_H
#define _VTG_H

#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/path.h>
#include <linux/refcount.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/vtrace.h>

#define VTG_INSTANCE		"vtrace"
/* Pages handed out per splice: the direct-splice pipe's default size */
#define VTG_SPLICE_PAGES	16
/* The control thread's bounce buffer in the borrowed mm */
#define VTG_UBUF_SIZE		(128U << 10)
/* virtio_console's port_fops_write takes at most this much per call */
#define VTG_PORT_CHUNK		(32U << 10)
/*
 * Largest sub-buffer (buffer_subbuf_size_kb, v6.8+) streamed: the stop sends
 * the last one with one port write (VTG_PORT_CHUNK), and a splice takes
 * whole sub-buffers of at most VTG_SPLICE_PAGES pages.
 */
#define VTG_SUBBUF_MAX		VTG_PORT_CHUNK
/* Largest events specification accepted (debugfs and SET_EVENTS) */
#define VTG_EVENTS_MAX		4096
/* Host commands that change state: a burst of this many, then one per VTG_CMD_REFILL_MS */
#define VTG_CMD_BURST		8
#define VTG_CMD_REFILL_MS	1000
/* STATUS_REQ (nr_cpu_ids stats files read each): a burst of 8, then one per this */
#define VTG_STATUS_REFILL_MS	250
/* A ctl message gets port_timeout_ms, plus as much again per this many bytes */
#define VTG_CTL_TIMEOUT_BYTES	(4U << 20)
/* A start's metadata gets at most this many port_timeout_ms in total */
#define VTG_META_TIMEOUTS	5
/*
 * A stop's drains end this many port_timeout_ms after the stop began: what
 * the rings still hold then counts as lost (session.c, stream.c).  EOS gets
 * one port_timeout_ms more, so a stop returns within VTG_STOP_TIMEOUTS + 1 of
 * them, however the host reads.
 */
#define VTG_STOP_TIMEOUTS	3
/* ... but at least and at most this long after it began (session.c) */
#define VTG_STOP_MIN_MS		1000U
#define VTG_STOP_MAX_MS		60000U
/* A drain thread not done this long after the stop's deadline is left to kthread_stop() */
#define VTG_STOP_GRACE_MS	1000
/* How long opening "status" waits for the control thread's fresh figures */
#define VTG_STATUS_WAIT_MS	1000

/**
 * struct vtg_poller - an entry of ours on a file's wait queue (poll.c)
 * @pt:		poll table handed to the file's poll()
 * @wait:	our entry on the file's wait queue
 * @wqh:	that wait queue, NULL while not queued
 * @wake:	wait queue the file's wake-up wakes, or NULL: the task that
 *		called vtg_poller_init()
 * @woken:	the file woke the poller since it was last cleared
 */
struct vtg_poller {
	poll_table pt;
	struct wait_queue_entry wait;
	wait_queue_head_t *wqh;
	wait_queue_head_t *wake;
	bool woken;
};

/**
 * struct vtg_port - one virtio-serial port: its file and its stall state (ports.c)
 * @file:	the port's device, opened O_NONBLOCK; NULL: no such port, or
 *		closed (unplugged)
 * @stalled:	a write timed out: later writes are tried once, without
 *		waiting, until vtg_port_unstall()
 *
 * Only ports.c touches the fields; the other files use its functions.
 */
struct vtg_port {
	struct file *file;
	bool stalled;
};

/**
 * struct vtg_page_count - what a page of the pipe holds, counted before sending
 * @events:	data events
 * @fillers:	of those, markers of %VTRACE_FILLER_TEXT, which the merger
 *		drops (older modules wrote them at the stop; none now)
 */
struct vtg_page_count {
	u32 events;
	u32 fillers;
};

/**
 * struct vtg_cpu - one guest CPU: its data port and its drain thread
 * @cpu:	CPU number
 * @port:	vtrace.cpuK; absent if the host gave none
 * @raw:	the instance's per_cpu/cpuK/trace_pipe_raw (tracing only)
 * @task:	drain thread (tracing only)
 * @pos:	page-aligned read position handed to splice
 * @ubuf:	%VTG_SUBBUF_MAX bytes in the borrowed mm for the stop's read()
 *		of the last sub-buffer; CPUs with a port only (control.c)
 * @port_gone:	the port was unplugged (-ENODEV): the drain thread ended, the
 *		port is closed at the stop
 * @flushed:	the drain thread emptied the ring (stop) or ended (port gone)
 * @pending:	per sub-buffer in the pipe (from the tail), counts of the
 *		sub-buffers in flight
 * @unread:	events still in the ring after the stop's last drain (a read
 *		failed, the port went away): counted in events_lost_ring
 * @st:		counters of the session, reported in STATUS and EOS
 * @ring:	the drain thread's poller on @raw between drains (stream.c)
 * @ring_subbufs: sub-buffers of the CPU's ring at the start (session.c)
 * @busy:	the rest of the ring fills too fast after a buffer_percent
 *		wake-up: the thread drains every drain_ms (vtg_drain_pace())
 * @wake_pages:	pages the last drain after a buffer_percent wake-up moved
 * @drained_at:	jiffies at the end of the last drain
 */
struct vtg_cpu {
	unsigned int cpu;
	struct vtg_port port;
	struct file *raw;
	struct task_struct *task;
	loff_t pos;
	char __user *ubuf;
	bool port_gone;
	struct completion flushed;
	struct vtg_page_count pending[VTG_SPLICE_PAGES];
	u64 unread;
	struct vtrace_cpu_stats st;
	struct vtg_poller ring;
	unsigned int ring_subbufs;
	bool busy;
	u64 wake_pages;
	unsigned long drained_at;
};

/* What the control thread is asked to do */
enum vtg_op {
	VTG_OP_START,
	VTG_OP_STOP,
	VTG_OP_EVENTS,
	VTG_OP_BUFFER_SIZE,
	VTG_OP_STATUS_TEXT,
};

/**
 * struct vtg_bucket - a token bucket for host commands (agent.c)
 * @tokens:	commands allowed now, at most %VTG_CMD_BURST
 * @refill:	jiffies of the last token added
 */
struct vtg_bucket {
	unsigned int tokens;
	unsigned long refill;
};

/**
 * struct vtg_req - a request queued for the control thread
 * @node:	in vtg.reqs; empty once the control thread took it
 * @ref:	the requester's and the control thread's: a requester that is
 *		killed or times out may leave before the thread is done
 * @op:		what to do
 * @arg:	VTG_OP_EVENTS: the specification text (the request's copy)
 * @val:	VTG_OP_BUFFER_SIZE: KiB
 * @out:	VTG_OP_STATUS_TEXT: kmalloc'ed text, freed with the request
 *		unless the requester took it
 * @out_len:	its length
 * @ret:	0 or negative errno
 * @done:	completed by the control thread
 */
struct vtg_req {
	struct list_head node;
	refcount_t ref;
	enum vtg_op op;
	char *arg;
	unsigned long val;
	char *out;
	size_t out_len;
	int ret;
	struct completion done;
};

/**
 * struct vtg - the module's state; one guest, one instance
 * @mm:		mm borrowed from the loading process (see main.c)
 * @root:	root directory of the loading process
 * @tracefs:	module-internal mount of tracefs
 * @tr:		the "vtrace" instance
 * @own_instance: the module created the instance (destroys it at exit)
 * @ctl:	vtrace.ctl; absent if the host gave none
 * @ctl_poller: the control thread's poller on @ctl (agent.c); woken: @ctl
 *		woke us (bytes, host connect/disconnect, unplug)
 * @cpus:	nr_cpu_ids entries
 * @nr_ports:	data ports found
 * @ctl_task:	the control thread
 * @ubuf:	control thread's bounce buffer in @mm, %VTG_UBUF_SIZE bytes
 * @cpu_ubuf:	%VTG_SUBBUF_MAX bytes per data port in @mm (vtg_cpu.ubuf)
 * @cpu_ubufs:	how many of them: the data ports found at load
 * @state:	&enum vtrace_state
 * @session:	current or last session number
 * @tx_seq:	seq of the last message sent on ctl
 * @version:	protocol version in use on ctl
 * @host_seq:	seq of the last command accepted from the host
 * @req_lock:	protects @reqs
 * @reqs:	queued &struct vtg_req
 * @wq:		wakes the control thread
 * @ready:	the control thread finished its set-up (@init_err)
 * @init_err:	its result
 * @stopping:	drain threads empty their rings and exit
 * @stop_budget: most sub-buffers a drain thread takes at the stop (session.c)
 * @stop_deadline: jiffies when the stop's drains end (set before @stopping)
 * @flushed_wq:	the control thread waits here for the drain threads' flushes
 * @subbuf_size: bytes of one ring-buffer sub-buffer, the unit on the data
 *		ports and META_INFO's page_size: the instance's
 *		buffer_subbuf_size_kb (v6.8+), else PAGE_SIZE; read at start
 * @subbuf_pages: @subbuf_size in pages
 * @drain_wq:	drain threads sleep here between drains
 * @events:	event specification applied at start (set_event syntax); written
 *		by the control thread, read by debugfs readers: under @events_lock
 * @events_lock: serialises @events' writer with its readers
 * @rx:		bytes received on ctl, not yet parsed
 * @rx_len:	valid bytes in @rx
 * @rx_since:	jiffies when @rx last grew (truncated-message timeout)
 * @meta_files:	META_FILE messages sent for the current session
 * @ctl_sent:	messages sent on ctl
 * @ctl_lost:	messages dropped (ctl not writable)
 * @cmds:	host commands received
 * @cmd_errors:	ERROR replies sent
 * @cmds_limited: host commands refused by the rate limit
 * @cmd_bucket:	state-changing host commands allowed (agent.c)
 * @status_bucket: STATUS_REQs allowed (agent.c)
 * @host_untrusted: confidential guest without trust_host: host commands
 *		refused, no address-bearing metadata
 * @ctl_deadline: when set (@ctl_deadline_set), no ctl write waits past it
 * @ctl_deadline_set: a deadline for the messages of one operation is set
 * @ctl_slow:	a ctl write timed out while the host end was connected
 * @status_flags: %VTRACE_STATUS_TRACING_ON, %VTRACE_STATUS_EVENTS_ON: what
 *		the last stop or failed start could not turn off (session.c)
 * @busy:	what the control thread is doing, NULL when it waits for work
 *		(the status text says it when the thread is too busy to answer)
 * @dbg:	debugfs directory
 */
struct vtg {
	struct mm_struct *mm;
	struct path root;
	struct vfsmount *tracefs;
	struct trace_array *tr;
	bool own_instance;
	struct vtg_port ctl;
	struct vtg_poller ctl_poller;
	struct vtg_cpu *cpus;
	unsigned int nr_ports;
	struct task_struct *ctl_task;
	char __user *ubuf;
	char __user *cpu_ubuf;
	unsigned int cpu_ubufs;
	u32 state;
	u64 session;
	u64 tx_seq;
	u16 version;
	u64 host_seq;
	spinlock_t req_lock;
	struct list_head reqs;
	wait_queue_head_t wq;
	struct completion ready;
	int init_err;
	bool stopping;
	unsigned int stop_budget;
	unsigned long stop_deadline;
	wait_queue_head_t flushed_wq;
	unsigned int subbuf_size;
	unsigned int subbuf_pages;
	wait_queue_head_t drain_wq;
	char *events;
	struct mutex events_lock;
	u8 *rx;
	size_t rx_len;
	unsigned long rx_since;
	unsigned int meta_files;
	u64 ctl_sent;
	u64 ctl_lost;
	u64 cmds;
	u64 cmd_errors;
	u64 cmds_limited;
	struct vtg_bucket cmd_bucket;
	struct vtg_bucket status_bucket;
	bool host_untrusted;
	unsigned long ctl_deadline;
	bool ctl_deadline_set;
	bool ctl_slow;
	u32 status_flags;
	const char *busy;
	struct dentry *dbg;
};

extern struct vtg vtg;

/* module parameters (main.c) */
extern char *vtg_prefix;
extern unsigned int vtg_port_timeout_ms;
extern unsigned int vtg_poll_ms;
extern unsigned int vtg_drain_ms;
extern unsigned int vtg_drain_max_ms;
extern bool vtg_send_kallsyms;
extern bool vtg_trust_host;

/* poll.c: sleeping on a file's wait queue */
void vtg_poller_init(struct vtg_poller *p, wait_queue_head_t *wake);
__poll_t vtg_poller_add(struct vtg_poller *p, struct file *file);
void vtg_poller_del(struct vtg_poller *p);

static inline bool vtg_poller_queued(const struct vtg_poller *p)
{
	return p->wqh;
}

static inline bool vtg_poller_woken(const struct vtg_poller *p)
{
	return READ_ONCE(p->woken);
}

/* file.c: files through the borrowed mm (control thread or drain threads) */
struct file *vtg_open_path(const char *path, int flags);
struct file *vtg_open_instance(const char *rel, int flags);
struct file *vtg_open_tracefs(const char *rel, int flags);
void vtg_close(struct file *f);
int vtg_read_text(const char *path, char *buf, size_t size);
ssize_t vtg_write_user(struct file *f, const char __user *ubuf, size_t len);
ssize_t vtg_write_kbuf(struct file *f, const void *buf, size_t len);
void *vtg_read_whole(struct file *f, size_t *lenp);
void *vtg_read_instance(const char *rel, size_t *lenp);
int vtg_write_instance(const char *rel, const char *text, bool trunc);

/* ports.c: the ports and their one write/splice and stall policy */
struct pipe_inode_info;

int vtg_ports_open(void);
void vtg_ports_close(void);
ssize_t vtg_port_write(struct vtg_port *p, const char __user *ubuf, size_t len,
		       unsigned long deadline);
ssize_t vtg_port_splice(struct vtg_port *p, struct pipe_inode_info *pipe,
			unsigned long deadline);
ssize_t vtg_port_read(struct vtg_port *p, char __user *ubuf, size_t len);
__poll_t vtg_port_poll(struct vtg_port *p);
bool vtg_port_connected(struct vtg_port *p);
void vtg_port_watch(struct vtg_port *p, struct vtg_poller *w, wait_queue_head_t *wake);
void vtg_port_close(struct vtg_port *p);

/* vtg_port_present() - the port is open (the host gave it, not unplugged) */
static inline bool vtg_port_present(const struct vtg_port *p)
{
	return p->file;
}

/* vtg_port_stalled() - the port's last write timed out (see vtg_port_write()) */
static inline bool vtg_port_stalled(const struct vtg_port *p)
{
	return p->stalled;
}

/* vtg_port_unstall() - give the port its full deadline again (data went through) */
static inline void vtg_port_unstall(struct vtg_port *p)
{
	p->stalled = false;
}

/* ctl.c: messages to the host */
int vtg_send(u16 type, const void *p1, size_t l1, const void *p2, size_t l2,
	     const void *p3, size_t l3);
int vtg_send_ack(u64 seq, u16 type);
int vtg_send_error(u64 seq, u16 type, int error, const char *text);
int vtg_send_hello(void);

/* agent.c: commands from the host */
void vtg_agent_poll(void);
void vtg_agent_watch(void);
void vtg_agent_unwatch(void);
long vtg_agent_timeout(void);

/* session.c */
void vtg_instance_defaults(void);
int vtg_start(void);
int vtg_stop(void);
int vtg_set_events(const char *spec);
int vtg_set_buffer_size(unsigned long kb);

/* status.c: the session's figures */
u64 vtg_ring_stat(unsigned int cpu, const char *name);
void vtg_refresh_ring_stats(void);
int vtg_send_status(u16 type);
char *vtg_status_format(bool fresh);
char *vtg_status_text(size_t *lenp);

/* stream.c */
int vtg_stream_start(void);
void vtg_stream_stop(void);

/* meta.c */
int vtg_meta_send(void);

/* control.c */
int vtg_ctl_thread(void *unused);
int vtg_request(enum vtg_op op, const char *arg, unsigned long val, long timeout, char **out);

/* debugfs.c */
int vtg_debugfs_init(void);
void vtg_debugfs_exit(void);

#endif /* _VTG_H */
