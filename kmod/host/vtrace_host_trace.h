/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace_host:tsc_offset, one event per offset record, kept or dropped by the array. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vtrace_host

#if !defined(_VTRACE_HOST_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VTRACE_HOST_TRACE_H

#include <linux/tracepoint.h>

/*
 * The fields of a tsc_offsets line (Documentation/vtrace_host.rst), with
 * the same meaning; kind: 0 write, 1 snapshot, 2 multiplier.  Emitted for
 * every record, also those the array or the VM's share drops, so that
 * "trace-cmd record -e vtrace_host" keeps the whole history in host.dat.
 * Four more fields: since, in the snapshots the module writes into a trace
 * buffer when the event is enabled there (vth_event_reg()), is the host
 * TSC of that enable (0 in every other record); tsc_khz is the host's TSC
 * frequency, so that host.dat carries it; cpu and serial are the file's
 * columns of those names.
 */
TRACE_EVENT(tsc_offset,
	TP_PROTO(u64 host_tsc, s32 pid, const char *vm, u32 vcpu_id, s32 vcpu_idx,
		 u64 prev, u64 offset, u64 multiplier, u8 frac_bits, u8 kind, u16 cpu,
		 u32 serial),
	TP_ARGS(host_tsc, pid, vm, vcpu_id, vcpu_idx, prev, offset, multiplier, frac_bits, kind,
		cpu, serial),
	TP_STRUCT__entry(
		__field(u64, host_tsc)
		__field(s64, prev_offset)
		__field(s64, offset)
		__field(u64, multiplier)
		__field(u64, since)
		__field(u32, tsc_khz)
		__field(s32, pid)
		__field(u32, vcpu_id)
		__field(s32, vcpu_idx)
		__field(u32, serial)
		__field(u16, cpu)
		__field(u8, frac_bits)
		__field(u8, kind)
		__array(char, vm, 24)
	),
	TP_fast_assign(
		__entry->host_tsc = host_tsc;
		__entry->prev_offset = prev;
		__entry->offset = offset;
		__entry->multiplier = multiplier;
		__entry->since = 0;	/* set in the snapshots of an enable, vth_emit_to() */
		__entry->tsc_khz = tsc_khz;
		__entry->pid = pid;
		__entry->vcpu_id = vcpu_id;
		__entry->vcpu_idx = vcpu_idx;
		__entry->serial = serial;
		__entry->cpu = cpu;
		__entry->frac_bits = frac_bits;
		__entry->kind = kind;
		strscpy_pad(__entry->vm, vm, sizeof(__entry->vm));
	),
	TP_printk("host_tsc=%llu pid=%d vm=%s vcpu_id=%u vcpu_idx=%d prev_offset=%lld offset=%lld multiplier=%llu frac_bits=%u kind=%s since=%llu tsc_khz=%u cpu=%u serial=%u",
		  __entry->host_tsc, __entry->pid, __entry->vm, __entry->vcpu_id,
		  __entry->vcpu_idx, __entry->prev_offset, __entry->offset,
		  __entry->multiplier, __entry->frac_bits,
		  __print_symbolic(__entry->kind, { 0, "write" }, { 1, "snapshot" },
				   { 2, "multiplier" }), __entry->since, __entry->tsc_khz,
		  __entry->cpu, __entry->serial)
);

#endif /* _VTRACE_HOST_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE vtrace_host_trace
#include <trace/define_trace.h>
