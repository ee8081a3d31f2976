/* SPDX-License-Identifier: GPL-2.0 */
/* compat.h: kernel API differences vtrace_guest meets, keyed on what Kbuild found. */
#ifndef _VTG_COMPAT_H
#define _VTG_COMPAT_H

#include <linux/mm.h>
#include <linux/trace.h>
#include <asm/apic.h>
#include <asm/processor.h>
#include <asm/smp.h>

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
 * The APIC id of a CPU (KVM's vcpu_id for it on the host), from the
 * per-CPU map the kernel fills when it enumerates the CPUs (ACPI MADT):
 * also right for a CPU that is possible but never came online, whose
 * cpuinfo_x86 is still zero.  BAD_APICID (an unknown id: 0xffff on 6.1,
 * 0xffffffff later) reads as VTG_NO_APIC_ID.
 */
#define VTG_NO_APIC_ID	0xffffffffU

static inline u32 vtg_cpu_apic_id(unsigned int cpu)
{
	u32 id = per_cpu(x86_cpu_to_apicid, cpu);

	return id == BAD_APICID ? VTG_NO_APIC_ID : id;
}

/*
 * Set flags of a VMA, mmap_lock held for writing: through vm_flags_set()
 * since v6.3 (which also takes the VMA's own lock), by hand before
 * (VTG_HAS_VM_FLAGS_SET comes from Kbuild).
 */
static inline void vtg_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#ifdef VTG_HAS_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

#endif /* _VTG_COMPAT_H */
