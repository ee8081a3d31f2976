/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/* vtrace: the guest<->host protocol and the host's offset-history format. */
/*
 * This header is the single source of truth for everything vtrace moves
 * between kernels and tools:
 *
 *   guest kernel (vtrace_guest.ko)                    host
 *   +---------------------------+   vtrace.ctl   +------------------------+
 *   | control thread            |<==============>| vtrace agent / QEMU    |
 *   |   HELLO, ACK, ERROR,      |   messages     | chardev file "ctl"     |
 *   |   META_*, STARTED, EOS,   |   (this file)  |                        |
 *   |   STATUS                  |                |                        |
 *   +---------------------------+                +------------------------+
 *   | per-CPU thread K          |  vtrace.cpuK   | chardev file "cpuK"    |
 *   |   splice(trace_pipe_raw)  |===============>| whole ring-buffer      |
 *   +---------------------------+  raw pages     | pages, back to back    |
 *                                                +------------------------+
 *
 * Data ports carry nothing but ring-buffer pages of VTRACE page size (the
 * instance's sub-buffer size, announced in META_INFO), exactly as the
 * guest's trace_pipe_raw hands them out: the header described by the
 * events/header_page sent in META_FILE, then events.  No framing is added.
 *
 * The control port carries a stream of messages, each a struct
 * vtrace_msg_hdr followed by @len bytes of payload.  All integers are
 * little-endian (x86 only).  Payload structures are naturally aligned,
 * sizes are multiples of 8, reserved fields must be zero and are rejected
 * by the peer otherwise.  A receiver skips messages of unknown type by
 * their length (so new message types never break old peers) and rejects
 * unknown header flags with an ERROR reply.
 *
 * Conversation on vtrace.ctl:
 *
 *   guest -> host  HELLO          when the port opens (its host end connected),
 *                                 and as reply to HELLO
 *   host  -> guest HELLO          optional; selects the version both speak
 *   host  -> guest START/STOP/SET_EVENTS/SET_BUFFER_SIZE/STATUS_REQ
 *   guest -> host  ACK or ERROR   one per command, carrying its seq
 *   guest -> host  META_INFO, META_FILE..., STARTED   when tracing starts
 *   guest -> host  EOS            when tracing stops, after the last page
 *   guest -> host  STATUS         reply to STATUS_REQ (before its ACK)
 *
 * The guest never waits for the host: if nobody reads the port, messages
 * that cannot be delivered are counted in struct vtrace_cpu_stats.
 */
#ifndef _UAPI_LINUX_VTRACE_H
#define _UAPI_LINUX_VTRACE_H

#include <linux/types.h>

/* "VTRC" read as a little-endian __u32 */
#define VTRACE_MAGIC			0x43525456U

/* Highest protocol version this header describes */
#define VTRACE_PROTO_VERSION		1
/* Oldest version a peer built from this header still speaks */
#define VTRACE_PROTO_VERSION_MIN	1

/* Largest payload the guest accepts from the host (commands are small) */
#define VTRACE_CMD_MAX_PAYLOAD		(64U << 10)
/* Largest payload the host accepts from the guest (kallsyms is large) */
#define VTRACE_MSG_MAX_PAYLOAD		(64U << 20)

/* Default port names; the prefix "vtrace" is a module parameter */
#define VTRACE_PORT_PREFIX		"vtrace"
#define VTRACE_CTL_PORT_SUFFIX		".ctl"
#define VTRACE_CPU_PORT_SUFFIX		".cpu"

/*
 * Text of the trace_marker filler that older guests wrote to push out partly
 * filled pages at a session's end.  vtrace_guest now reads the last partial
 * page instead and writes none; it still counts such markers in the pages it
 * sends (fillers_sent), and vtrace-merge drops them.
 */
#define VTRACE_FILLER_TEXT		"vtrace-flush-filler"

/**
 * struct vtrace_msg_hdr - header of every message on the control port
 * @magic:	%VTRACE_MAGIC; anything else means the stream is out of sync
 * @version:	protocol version of the payload (the negotiated one, or for
 *		HELLO the sender's highest)
 * @type:	one of &enum vtrace_msg_type
 * @flags:	no flags are defined yet: must be zero, non-zero is rejected
 * @len:	number of payload bytes that follow this header
 * @seq:	sender's sequence number, 1 for its first message, +1 for each
 *		message; replies name the seq they answer in their payload
 */
struct vtrace_msg_hdr {
	__u32 magic;
	__u16 version;
	__u16 type;
	__u32 flags;
	__u32 len;
	__u64 seq;
};

/**
 * enum vtrace_msg_type - message types
 * @VTRACE_MSG_HELLO:		both ways, payload &struct vtrace_hello
 * @VTRACE_MSG_ACK:		guest->host, payload &struct vtrace_ack
 * @VTRACE_MSG_ERROR:		both ways, payload &struct vtrace_error + text
 * @VTRACE_MSG_START:		host->guest, no payload: start tracing
 * @VTRACE_MSG_STOP:		host->guest, no payload: stop, flush, send EOS
 * @VTRACE_MSG_SET_EVENTS:	host->guest, payload: text in tracefs
 *				set_event syntax, one event spec per line
 *				("sched:sched_switch", "irq:*", "!sched:*");
 *				replaces the instance's event selection
 * @VTRACE_MSG_SET_BUFFER_SIZE:	host->guest, payload &struct vtrace_buffer_size
 * @VTRACE_MSG_STATUS_REQ:	host->guest, no payload
 * @VTRACE_MSG_STATUS:		guest->host, payload &struct vtrace_status
 *				followed by nr_cpus &struct vtrace_cpu_stats
 * @VTRACE_MSG_META_INFO:	guest->host, payload &struct vtrace_meta_info
 *				followed by nr_cpus &struct vtrace_cpu_info
 * @VTRACE_MSG_META_FILE:	guest->host, payload &struct vtrace_meta_file,
 *				its name, then the file's bytes
 * @VTRACE_MSG_STARTED:		guest->host, payload &struct vtrace_started;
 *				all metadata of this session was sent before
 * @VTRACE_MSG_EOS:		guest->host, end of stream: payload as STATUS;
 *				every page of the session was sent before it
 */
enum vtrace_msg_type {
	VTRACE_MSG_HELLO		= 1,
	VTRACE_MSG_ACK			= 2,
	VTRACE_MSG_ERROR		= 3,

	VTRACE_MSG_START		= 16,
	VTRACE_MSG_STOP			= 17,
	VTRACE_MSG_SET_EVENTS		= 18,
	VTRACE_MSG_SET_BUFFER_SIZE	= 19,
	VTRACE_MSG_STATUS_REQ		= 20,

	VTRACE_MSG_STATUS		= 32,
	VTRACE_MSG_META_INFO		= 33,
	VTRACE_MSG_META_FILE		= 34,
	VTRACE_MSG_STARTED		= 35,
	VTRACE_MSG_EOS			= 36,
};

/**
 * struct vtrace_hello - version negotiation
 * @min_version:	oldest protocol version the sender speaks
 * @max_version:	newest protocol version the sender speaks
 * @flags:		reserved, must be zero
 * @reserved:		must be zero
 *
 * The guest answers a host HELLO with its own HELLO whose header @version
 * is the version both will use: the highest both speak.  If there is none,
 * it answers ERROR with -EPROTONOSUPPORT and keeps its current version.
 */
struct vtrace_hello {
	__u16 min_version;
	__u16 max_version;
	__u32 flags;
	__u64 reserved;
};

/**
 * struct vtrace_ack - a command was carried out
 * @seq:	seq of the command
 * @type:	type of the command
 * @reserved0:	must be zero
 * @reserved1:	must be zero
 */
struct vtrace_ack {
	__u64 seq;
	__u16 type;
	__u16 reserved0;
	__u32 reserved1;
};

/**
 * struct vtrace_error - a message was refused
 * @seq:	seq of the refused message (0 if its header was unreadable)
 * @type:	type of the refused message
 * @reserved:	must be zero
 * @error:	negative errno saying why (-EINVAL, -EPROTO, -EMSGSIZE, ...)
 *
 * Followed by a NUL-terminated human-readable text within the payload.
 */
struct vtrace_error {
	__u64 seq;
	__u16 type;
	__u16 reserved;
	__s32 error;
};

/**
 * struct vtrace_buffer_size - SET_BUFFER_SIZE payload
 * @size_kb:	per-CPU ring-buffer size in KiB, as tracefs buffer_size_kb
 * @reserved:	must be zero
 */
struct vtrace_buffer_size {
	__u32 size_kb;
	__u32 reserved;
};

/**
 * enum vtrace_state - guest tracing state
 * @VTRACE_STATE_IDLE:		not tracing
 * @VTRACE_STATE_TRACING:	events are recorded and pages streamed
 */
enum vtrace_state {
	VTRACE_STATE_IDLE	= 0,
	VTRACE_STATE_TRACING	= 1,
};

/**
 * struct vtrace_status - STATUS and EOS payload head
 * @state:	&enum vtrace_state
 * @nr_cpus:	number of &struct vtrace_cpu_stats that follow
 * @nr_ports:	data ports found (ports may be fewer than CPUs)
 * @flags:	%VTRACE_STATUS_TRACING_ON, %VTRACE_STATUS_EVENTS_ON: what the
 *		last stop (or failed start) could not turn off, even after
 *		retries; 0 while tracing.  Other bits are zero.
 * @session:	number of the tracing session (1 for the first START)
 * @tsc:	guest TSC when the message was built
 */
struct vtrace_status {
	__u32 state;
	__u32 nr_cpus;
	__u32 nr_ports;
	__u32 flags;
	__u64 session;
	__u64 tsc;
};

/* vtrace_status.flags */
#define VTRACE_STATUS_TRACING_ON	(1U << 0)	/* tracing_on stayed 1: the rings may record */
#define VTRACE_STATUS_EVENTS_ON		(1U << 1)	/* events/enable stayed on: events armed */
#define VTRACE_STATUS_FLAGS		(VTRACE_STATUS_TRACING_ON | VTRACE_STATUS_EVENTS_ON)

/* vtrace_cpu_stats.flags */
#define VTRACE_CPU_HAS_PORT	(1U << 0)	/* a data port exists for the CPU */
#define VTRACE_CPU_ONLINE	(1U << 1)	/* the CPU was online */

/**
 * struct vtrace_cpu_stats - per-CPU counters of the current session
 * @cpu:		guest CPU number
 * @flags:		%VTRACE_CPU_HAS_PORT, %VTRACE_CPU_ONLINE
 * @pages_sent:		ring-buffer pages written whole to the data port
 * @bytes_sent:		bytes written to the data port (pages_sent * page size)
 * @events_sent:	events (not counting padding and time stamps) in
 *			the pages sent, fillers included
 * @fillers_sent:	filler events (%VTRACE_FILLER_TEXT) in the pages sent
 * @pages_lost:		pages taken from the ring buffer that could not be
 *			written to the port (port closed, host too slow)
 * @events_lost_port:	events in those lost pages
 * @events_lost_ring:	events the ring buffer overwrote or dropped before
 *			they could be read (its overrun, commit overrun and
 *			dropped events counters; the overwritten ones are
 *			also in the missed-events counts of the page headers),
 *			and events left in it after the stop's last read
 *			because a read failed
 * @port_errors:	write errors seen on the data port
 */
struct vtrace_cpu_stats {
	__u32 cpu;
	__u32 flags;
	__u64 pages_sent;
	__u64 bytes_sent;
	__u64 events_sent;
	__u64 fillers_sent;
	__u64 pages_lost;
	__u64 events_lost_port;
	__u64 events_lost_ring;
	__u64 port_errors;
};

/* Length of the text fields of struct vtrace_meta_info, NUL included */
#define VTRACE_UUID_LEN		40
#define VTRACE_NAME_LEN		72
#define VTRACE_CLOCK_LEN	16

/**
 * struct vtrace_meta_info - who the guest is and how to read its pages
 * @tsc_khz:		guest's TSC frequency in kHz
 * @start_tsc:		guest TSC when this message was built
 * @session:		tracing session number (1 for the first START)
 * @nr_cpus:		number of &struct vtrace_cpu_info that follow
 *			(nr_cpu_ids of the guest)
 * @page_size:		size of one ring-buffer page on the data ports: the
 *			instance's sub-buffer size (buffer_subbuf_size_kb,
 *			v6.8+, at most 32 KiB), else the guest's PAGE_SIZE.
 *			The header_page META_FILE describes the same size.
 * @long_size:		sizeof(long) in the guest kernel (8)
 * @reserved:		must be zero
 * @uuid:		SMBIOS system UUID, NUL-terminated ("" if none)
 * @release:		kernel release (uname -r), NUL-terminated
 * @hostname:		host name (uname -n), NUL-terminated
 * @clock:		trace clock of the pages: always "x86-tsc"
 */
struct vtrace_meta_info {
	__u64 tsc_khz;
	__u64 start_tsc;
	__u64 session;
	__u32 nr_cpus;
	__u32 page_size;
	__u32 long_size;
	__u32 reserved;
	char uuid[VTRACE_UUID_LEN];
	char release[VTRACE_NAME_LEN];
	char hostname[VTRACE_NAME_LEN];
	char clock[VTRACE_CLOCK_LEN];
};

/**
 * struct vtrace_cpu_info - one guest CPU
 * @cpu:	guest CPU number (the K of vtrace.cpuK)
 * @apic_id:	its initial APIC id: KVM's vcpu_id for this vCPU on the host
 * @flags:	%VTRACE_CPU_HAS_PORT, %VTRACE_CPU_ONLINE
 * @reserved:	must be zero
 */
struct vtrace_cpu_info {
	__u32 cpu;
	__u32 apic_id;
	__u32 flags;
	__u32 reserved;
};

/**
 * enum vtrace_meta_kind - what a META_FILE carries
 * @VTRACE_META_HEADER_PAGE:	tracefs events/header_page
 * @VTRACE_META_HEADER_EVENT:	tracefs events/header_event
 * @VTRACE_META_EVENT_FORMAT:	an enabled event's format file; name is
 *				"system/event"
 * @VTRACE_META_FTRACE_FORMAT:	a format file of the ftrace system (print,
 *				function, ...); name is "ftrace/event"
 * @VTRACE_META_CMDLINES:	tracefs saved_cmdlines
 * @VTRACE_META_KALLSYMS:	/proc/kallsyms
 * @VTRACE_META_PRINTK_FORMATS:	tracefs printk_formats
 */
enum vtrace_meta_kind {
	VTRACE_META_HEADER_PAGE		= 1,
	VTRACE_META_HEADER_EVENT	= 2,
	VTRACE_META_EVENT_FORMAT	= 3,
	VTRACE_META_FTRACE_FORMAT	= 4,
	VTRACE_META_CMDLINES		= 5,
	VTRACE_META_KALLSYMS		= 6,
	VTRACE_META_PRINTK_FORMATS	= 7,
};

/**
 * struct vtrace_meta_file - META_FILE payload head
 * @kind:	&enum vtrace_meta_kind
 * @name_len:	bytes of name that follow, NUL included, padded with NULs to
 *		a multiple of 8
 * @data_len:	bytes of file data after the name
 * @reserved:	must be zero
 *
 * The file data is the file exactly as the guest kernel read it.
 */
struct vtrace_meta_file {
	__u32 kind;
	__u32 name_len;
	__u64 data_len;
	__u64 reserved;
};

/**
 * struct vtrace_started - STARTED payload
 * @session:	tracing session number
 * @tsc:	guest TSC right after events were enabled
 * @nr_files:	number of META_FILE messages sent for this session
 * @reserved:	must be zero
 */
struct vtrace_started {
	__u64 session;
	__u64 tsc;
	__u32 nr_files;
	__u32 reserved;
};

/*
 * Host side: /sys/kernel/debug/vtrace/tsc_offsets of vtrace_host.ko
 *
 * Text, one record per line, oldest first, after a version line and a
 * header line:
 *
 *   # vtrace-offsets v1
 *   # seq host_tsc pid vm vcpu_id vcpu_idx prev_offset offset multiplier frac_bits kind cpu serial tid
 *
 * seq:		record number, from 0, in the order the records were claimed;
 *		a record dropped still takes no number, so the numbers have no
 *		gaps (drops are said by the trailer lines below)
 * host_tsc:	host TSC (rdtsc) when KVM wrote the offset, decimal
 * pid:		tgid of the VM's userspace (QEMU's pid)
 * vm:		the VM's directory name under /sys/kernel/debug/kvm ("1234-11")
 * vcpu_id:	KVM vcpu_id (the vCPU's APIC id), vcpu_idx: its index in the VM
 * prev_offset, offset: L1 TSC offset before and after, signed decimal
 *		(as KVM's debugfs tsc-offset prints it)
 * multiplier:	L1 TSC multiplier in force, frac_bits: its fraction bits;
 *		guest_tsc = ((host_tsc * multiplier) >> frac_bits) + offset
 * kind:	"write" (KVM wrote the offset), "snapshot" (the value KVM had
 *		when vtrace_host loaded; host_tsc is the load time) or
 *		"multiplier" (KVM wrote the multiplier of a running vCPU;
 *		prev_offset == offset, multiplier is the new one)
 * cpu:		the host CPU that read host_tsc (on a host whose TSCs are not
 *		synchronised, a host_tsc means something only with its CPU)
 * serial:	the VM's number among the VMs vtrace_host saw since it was
 *		loaded, from 1: two VMs of one name (a process that closes its
 *		VM and makes another gets the same "PID-FD") have two serials;
 *		0 for a VM that found the module's table of VMs full (its
 *		records are attributed by pid and vm only)
 * tid:		the thread that made the write (QEMU writes a vCPU's offset
 *		from that vCPU's own thread: its creation, KVM_SET_MSRS, the
 *		guest's IA32_TSC writes, its loads on a host with an unstable
 *		TSC), 0 for a snapshot: tells which host threads are the VM's
 *
 * From a record's host_tsc on, its offset and multiplier are in force for
 * its (pid, vm, serial, vcpu_id), until the next record of that vCPU.
 * Before a vCPU's first "write" record, its prev_offset was in force; where
 * that disagrees with a "snapshot" record (a write racing with the load),
 * the write's prev_offset wins.  Unknown VM: vm "?", vcpu_idx -1 and
 * serial 0 (see the stats file's anomalies).  Documentation:
 * Documentation/vtrace_host.rst.
 *
 * The form before v1 had no version line, and no cpu, serial or tid:
 * readers take both.
 */
#define VTRACE_OFFSETS_VERSION	"# vtrace-offsets v1"
#define VTRACE_OFFSETS_HEADER \
	"# seq host_tsc pid vm vcpu_id vcpu_idx prev_offset offset multiplier frac_bits kind cpu serial tid"
/* The header of the form before v1 (no version line) */
#define VTRACE_OFFSETS_HEADER_V0 \
	"# seq host_tsc pid vm vcpu_id vcpu_idx prev_offset offset multiplier frac_bits kind"

/*
 * Line of the trailer, "# dropped N", N records that did not fit the
 * module's capacity.  The history of every vCPU stops at the record
 * before it; a tool must not assume offsets after that.
 */
#define VTRACE_OFFSETS_DROPPED	"# dropped"

/*
 * Line of the trailer for each VM that lost records of its own,
 * "# vm_dropped PID VM N SERIAL" (before v1: "# vm_dropped PID VM N"): the
 * VM (pid, vm and serial as in its records) used up its share of the
 * module's capacity (vm_share) and N of its records were dropped.  That
 * VM's history stops at its last record; the others' are not cut.  Comes
 * after the records (and "# dropped"), before "# end".
 */
#define VTRACE_OFFSETS_VM_DROPPED	"# vm_dropped"

/*
 * Line of the trailer (v1), "# untracked_dropped N": the VMs that found
 * the table of VMs full (serial 0) share one vm_share, and N of their
 * records were dropped.  The history of every vCPU with a record of
 * serial 0 stops at its last record.
 */
#define VTRACE_OFFSETS_UNTRACKED_DROPPED	"# untracked_dropped"

/*
 * Last line of every complete read of the history:
 *   "# end host_tsc=T records=R dropped=D"
 * T: host TSC when the reader reached the end (records after T are not in
 * this copy), R: records in this copy, D: records dropped so far.  A copy
 * without it was cut (a partial read, a truncated file): a tool treats its
 * history as ending at its last record, as for "# dropped".
 */
#define VTRACE_OFFSETS_END	"# end"

#endif /* _UAPI_LINUX_VTRACE_H */
