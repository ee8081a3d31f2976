/* SPDX-License-Identifier: GPL-2.0 */
/* compat.h: kernel API differences vtrace_guest meets, keyed on what Kbuild found. */
#ifndef _VTG_COMPAT_H
#define _VTG_COMPAT_H

#include <linux/trace.h>
#include <asm/processor.h>

/*
 * trace_array_get_by_name() gained a "systems" argument (the event systems
 * a new instance gets; NULL for all) in v6.7.  Kbuild looks at the
 * prototype in the headers it builds against and defines
 * VTG_TA_GET_HAS_SYSTEMS when it has two arguments.
 */
static inline struct trace_array *vtg_trace_array_get(const char *name)
{
#ifdef VTG_TA_GET_HAS_SYSTEMS
	return trace_array_get_by_name(name, NULL);
#else
	return trace_array_get_by_name(name);
#endif
}

/*
 * The initial APIC id of a CPU (KVM's vcpu_id for it on the host) moved
 * into cpuinfo_x86.topo in v6.9; VTG_CPU_HAS_TOPO says so.
 */
static inline u32 vtg_cpu_apic_id(unsigned int cpu)
{
#ifdef VTG_CPU_HAS_TOPO
	return cpu_data(cpu).topo.initial_apicid;
#else
	return cpu_data(cpu).initial_apicid;
#endif
}

#endif /* _VTG_COMPAT_H */
