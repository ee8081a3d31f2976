// SPDX-License-Identifier: GPL-2.0
/* vtrace_host: record every per-vCPU TSC offset KVM writes, with the host TSC of the write. */
/*
 * The merger needs, for every vCPU of every VM, the L1 TSC offset and
 * multiplier in force at every host instant.  KVM announces each offset
 * write through the kvm_write_tsc_offset tracepoint (exported by kvm.ko);
 * this module hooks it and appends one record per write to a preallocated
 * array, which debugfs shows as text:
 *
 *   KVM, vCPU thread, IRQs off            readers (any number)
 *   kvm_vcpu_write_tsc_offset()           cat /sys/kernel/debug/vtrace/...
 *     trace_kvm_write_tsc_offset()          tsc_offsets  vms  stats  tsc_khz
 *       vth_probe()                               |
 *         vm = vth_vm_of(kvm)                      | walk slots 0, 1, ...
 *         vm->kept == vm->share ? dropped++        | stop at the first
 *         slot = atomic64_inc(next) - 1            | slot not yet ready,
 *         slot >= capacity ? dropped++             | then the trailer:
 *         fill vth_records[slot]                   | "# vm_dropped" per VM
 *         smp_store_release(ready, 1) ------------>| that lost records,
 *                                                  | "# end host_tsc=..."
 *   vth_records: [0][1][2] ... [capacity-1]   vmalloc'ed at load, never
 *                 ^ oldest                    reused: a full array drops
 *                                             new records and counts them
 *
 * Writers never wait: a slot is claimed with atomics and published with a
 * release store, and the VM table (vth_vms, one entry per VM seen, its
 * identity and its kept/dropped counts) takes a raw spinlock for a few
 * instructions.  Readers never block writers.  A record is never
 * overwritten.  Fairness: each VM keeps at most its share of records, so
 * a VM that writes offsets in a loop fills its own share and no other
 * VM's.  The shares divide what is left of the array among the VMs alive:
 *
 *   participants: every live VM, and one bucket for the VMs with no entry
 *   free:         capacity - slots claimed
 *   level L:      free + the records the participants hold, spread so
 *                 that each can reach L:  sum(max(L - kept_i, 0)) = free
 *   share_i:      max(L, kept_i)    (a VM never loses what it holds)
 *
 *   e.g. capacity 4096, 10 live VMs + the bucket holding nothing: L = 372;
 *        8 of them go away, holding 16 records: L = (4096 - 16) / 3 = 1360
 *        (if the 2 left and the bucket hold fewer than that)
 *
 * So the shares of the participants never add up to more than the array
 * holds: a quiet VM always has the room of its share.  The level is
 * recomputed (vth_shares_update()) when a VM comes (its first record) and
 * when VMs are found gone: by the sweep, which walks KVM's debugfs and runs
 * when a VM comes and, at most once every VTH_SWEEP_INTERVAL, when a share
 * is full, or by an offset write of the VM's teardown (unstable TSC).  A
 * VM found gone keeps its records; what its share had left goes back to
 * the others.  With vm_share=N each VM's share is N instead.
 *
 * Identity: every call site of kvm_vcpu_write_tsc_offset() runs with the
 * vCPU loaded on this CPU (vcpu_load() in the vCPU ioctls, in
 * kvm_arch_vcpu_create() and kvm_arch_vcpu_postcreate(), and in
 * kvm_unload_vcpu_mmus() at VM teardown; kvm_sched_in() before
 * kvm_arch_vcpu_load(); vcpu_enter_guest()), so kvm_get_running_vcpu() is
 * the vCPU being written.  The probe checks that its vcpu_id matches the
 * tracepoint's and counts a mismatch (or no running vCPU) as an anomaly,
 * recording the write with an unknown VM ("?", vcpu_idx -1) rather than
 * dropping it.  The VM's name (its KVM debugfs folder) is copied into the
 * VM table at its first record, while the VM has users: the teardown
 * writes come after KVM freed that folder (see vth_vm_of()).  A vCPU being
 * created is not in its VM yet and has no index: vcpu_idx -1.
 *
 * VMs that existed before the module loaded: after the probe is live, the
 * module walks KVM's debugfs directory (looked up with debugfs_lookup("kvm")) and
 * appends one "snapshot" record per vCPU holding the offset KVM has at that
 * moment.  Holding the directory's inode lock keeps every VM in it alive:
 * kvm_destroy_vm() removes the VM's debugfs directory, which needs that
 * lock, before it frees the vCPUs.  KVM stores a new offset after the
 * tracepoint: a snapshot read while a write is in flight may see the
 * offset before it.  So a snapshot placed after a record of its vCPU takes
 * that record's offset (vth_offset_before()); a snapshot placed before a
 * write that it already saw is the case the readers' rule covers (a
 * write's prev_offset wins over the snapshot before it).  VMs that existed
 * before a recording: when the trace event is enabled in a trace buffer,
 * the module writes a snapshot event per vCPU into that buffer, after
 * waiting until KVM stored every write whose probe ran before the enable
 * (see "snapshot into a trace buffer" below).
 *
 * The TSC multiplier in force is read from the vCPU with every record.  KVM
 * writes it in kvm_vcpu_write_tsc_multiplier(), static and without a
 * tracepoint; a kprobe on its entry (vcpu in %rdi, new multiplier in %rsi)
 * appends a "multiplier" record when a loaded vCPU's multiplier is written
 * (KVM_SET_TSC_KHZ, which QEMU issues at every vCPU reset).  At vCPU
 * creation the vCPU has no index yet and is not in its VM: the creation
 * offset write, which follows, carries the multiplier.  Where the kprobe cannot be placed (the function inlined), a
 * multiplier change shows up with the next offset write.  Without TSC
 * scaling (kvm_caps.has_tsc_control == 0, as on the TCG test bed) the
 * multiplier is always 1.0: 1 << frac_bits.
 *
 * Unload: the snapshot work is cancelled (vth_enable_stop()), then the
 * module's debugfs files go (debugfs drains readers in
 * flight; the vtrace/ folder is shared with vtrace_guest, see
 * kmod/common/vtrace_debugfs.h), then
 * the probe is unregistered and tracepoint_synchronize_unregister() waits
 * for probes in flight, then the array is freed.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kvm_host.h>
#include <linux/tracepoint.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/dcache.h>
#include <linux/kprobes.h>
#include <linux/sort.h>
#include <linux/bsearch.h>
#include <linux/mm.h>
#include <asm/tsc.h>
#include <linux/vtrace.h>
#include "../common/vtrace_debugfs.h"

#define CREATE_TRACE_POINTS
#include "vtrace_host_trace.h"

/*
 * The head of arch/x86/kvm/x86.h's struct kvm_caps, which the headers
 * package lacks.  Only these leading fields are read, at the offsets
 * Debian's 6.1 kvm.ko itself uses (0, 8 and 24, seen in its code).
 * Re-check them when porting to another kernel.
 */
struct kvm_caps {
	bool has_tsc_control;
	u32 max_guest_tsc_khz;
	u8 tsc_scaling_ratio_frac_bits;
	u64 max_tsc_scaling_ratio;
	u64 default_tsc_scaling_ratio;
};
extern struct kvm_caps kvm_caps;

/* DECLARE_TRACE(kvm_write_tsc_offset) lives in arch/x86/kvm/trace.h */
extern struct tracepoint __tracepoint_kvm_write_tsc_offset;

#define VTH_VM_NAME_LEN		24	/* KVM's dir_name[ITOA_MAX_LEN * 2] */
#define VTH_CAPACITY_MAX	(1U << 22)
#define VTH_MAX_VMS		256	/* VMs with their own share at once */
#define VTH_SWEEP_INTERVAL	HZ	/* between two sweeps asked for by a full share */

/* Header line of the vms file (documented in Documentation/vtrace_host.rst) */
#define VTH_VMS_HEADER	"# pid vm vcpus first_host_tsc last_host_tsc records flags dropped serial"

static unsigned int capacity = 1U << 16;
module_param(capacity, uint, 0444);
MODULE_PARM_DESC(capacity, "records kept before new ones are dropped (default 65536)");

static unsigned int vm_share;
module_param(vm_share, uint, 0444);
MODULE_PARM_DESC(vm_share, "records kept per VM at most (default 0: the free records divided among the live VMs)");

static bool snapshot = true;
module_param(snapshot, bool, 0444);
MODULE_PARM_DESC(snapshot, "record the offsets of VMs that exist at load time (default Y)");

static bool hook_multiplier = true;
module_param(hook_multiplier, bool, 0444);
MODULE_PARM_DESC(hook_multiplier, "kprobe kvm_vcpu_write_tsc_multiplier (default Y)");

enum vth_kind {
	VTH_KIND_WRITE,
	VTH_KIND_SNAPSHOT,
	VTH_KIND_MULTIPLIER,
};

/**
 * struct vth_record - one offset KVM applied (or found at load time)
 * @host_tsc:	host TSC when the write happened (or the snapshot was taken)
 * @prev:	L1 offset before the write (equal to @offset for snapshots
 *		and multiplier writes)
 * @offset:	L1 offset after the write
 * @multiplier:	L1 TSC multiplier in force (the new one for multiplier writes)
 * @pid:	tgid of the VM's userspace
 * @vcpu_id:	KVM vcpu_id (APIC id)
 * @vcpu_idx:	index of the vCPU in its VM, -1 if unknown
 * @frac_bits:	fraction bits of @multiplier
 * @kind:	&enum vth_kind
 * @cpu:	the host CPU that read @host_tsc
 * @ready:	set (release) once every other field is written
 * @vm:		name of the VM's directory under KVM's debugfs, "?" if unknown
 * @serial:	the VM's serial (&struct vth_vm), 0 if it has none
 * @tid:	the thread that made the write (for QEMU, the vCPU's own
 *		thread), 0 for a snapshot
 * @pad:	zero
 */
struct vth_record {
	u64 host_tsc;
	u64 prev;
	u64 offset;
	u64 multiplier;
	s32 pid;
	u32 vcpu_id;
	s32 vcpu_idx;
	u8 frac_bits;
	u8 kind;
	u16 cpu;
	int ready;
	char vm[VTH_VM_NAME_LEN];
	u32 serial;
	s32 tid;
	u32 pad;
};

/**
 * struct vth_vm - a VM the module has seen (vth_vms, in order of first record)
 * @kvm:	the VM while it may write; NULL once retired (a new VM took its address)
 * @ino:	inode number of its directory under KVM's debugfs, 0 if none
 * @pid:	tgid of its userspace
 * @serial:	its number among the VMs seen since the load, from 1
 * @name:	name of its directory under KVM's debugfs
 * @kept:	records of this VM in the array (at most @share)
 * @dropped:	records of this VM dropped (its share or the array full)
 * @share:	records it may keep (vth_shares_update()), never below @kept
 * @gone:	its VM left KVM's debugfs (vth_sweep_fn()): no part in the shares
 *
 * Two VMs can have one name ("PID-FD": a process that closes its VM and
 * makes another, which gets the same descriptor) and one address: the
 * directory's inode number tells them apart, and each gets its own serial.
 * A retired or gone entry with no drop to report is reused by the next new
 * VM; an entry with drops stays, for the "# vm_dropped" line of its VM.  A
 * gone entry keeps @kvm: the offset writes of its VM's teardown find it.
 */
struct vth_vm {
	struct kvm *kvm;
	unsigned long ino;
	s32 pid;
	u32 serial;
	char name[VTH_VM_NAME_LEN];
	atomic64_t kept;
	atomic64_t dropped;
	s64 share;
	bool gone;
};

static struct vth_vm vth_vms[VTH_MAX_VMS];
static unsigned int vth_nr_vms;			/* entries used (retired ones included) */
static u32 vth_serial;				/* serials given so far */
static DEFINE_RAW_SPINLOCK(vth_vms_lock);	/* guards vth_vms, vth_nr_vms, vth_serial */
/* The share of the VMs that found no entry (more than VTH_MAX_VMS at once) */
static struct vth_vm vth_untracked;
static void vth_sweep_fn(struct work_struct *work);
static DECLARE_WORK(vth_sweep_work, vth_sweep_fn);
static bool vth_sweep_live;			/* cleared at unload, under vth_vms_lock */
static unsigned long vth_sweep_next;		/* jiffies before which a full share asks no sweep */
static s64 vth_share_fixed;			/* vm_share, 0: the fair share */
static s64 vth_share;				/* the level of the shares (or vm_share) */
static unsigned int vth_live_vms;		/* VMs with a part in the shares */
/* Scratch of vth_shares_update(), under vth_vms_lock: too big for a probe's stack */
static s64 vth_held[VTH_MAX_VMS + 1];

static struct vth_record *vth_records;
static atomic64_t vth_next = ATOMIC64_INIT(0);	/* slots claimed so far */
static atomic64_t vth_dropped = ATOMIC64_INIT(0);
static atomic64_t vth_anomalies = ATOMIC64_INIT(0);
static atomic64_t vth_snapshots = ATOMIC64_INIT(0);
static struct dentry *vth_dir;
static bool vth_mult_hooked;

/* ---- the VMs seen ----------------------------------------------------- */

/* The inode number of @kvm's debugfs directory, 0 if none. Its VM has users. */
static unsigned long vth_kvm_ino(struct kvm *kvm)
{
	struct dentry *dent = READ_ONCE(kvm->debugfs_dentry);

	return !IS_ERR_OR_NULL(dent) && d_inode(dent) ? d_inode(dent)->i_ino : 0;
}

/* A VM with a part in the shares: neither retired nor gone. vth_vms_lock held. */
static bool vth_vm_live(const struct vth_vm *vm)
{
	return vm->kvm && !vm->gone;
}

/*
 * A free entry for a new VM: a never used one, else a retired one with no
 * drop, else a gone one with no drop (the teardown writes of its VM then
 * find no entry).  vth_vms_lock held.
 */
static struct vth_vm *vth_vm_free_entry(void)
{
	unsigned int i;

	if (vth_nr_vms < VTH_MAX_VMS)
		return &vth_vms[vth_nr_vms];
	for (i = 0; i < VTH_MAX_VMS; i++)
		if (!vth_vms[i].kvm && !atomic64_read(&vth_vms[i].dropped))
			return &vth_vms[i];
	for (i = 0; i < VTH_MAX_VMS; i++)
		if (vth_vms[i].gone && !atomic64_read(&vth_vms[i].dropped))
			return &vth_vms[i];
	return NULL;
}

static int vth_s64_cmp(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The level of the shares: the largest L with sum(max(L - held[i], 0)) <=
 * @free over the @n participants (@n >= 1).  The largest holders leave the
 * sum while they hold more than the level.  A holder at the level stays:
 * records kept below the level then leave it unchanged (free goes down as
 * much as the held records go up), so the level only moves when VMs come
 * and go.  Sorts @held.  Any context.
 */
static s64 vth_fair_level(s64 *held, unsigned int n, s64 free)
{
	s64 sum = free;
	unsigned int i;

	sort(held, n, sizeof(*held), vth_s64_cmp, NULL);
	for (i = 0; i < n; i++)
		sum += held[i];
	while (n > 1 && held[n - 1] > div_s64(sum, n))
		sum -= held[--n];
	return div_s64(sum, n);
}

/*
 * Give each live VM, and the bucket of the VMs with no entry, its share of
 * what is left of the array (see the top of this file).  vth_vms_lock held,
 * in the probes too (IRQs or preemption off): no allocation, at most
 * VTH_MAX_VMS + 1 values sorted in place.
 */
static void vth_shares_update(void)
{
	s64 free = capacity - min_t(s64, atomic64_read(&vth_next), capacity);
	unsigned int i, n = 0;
	s64 level;

	for (i = 0; i < vth_nr_vms; i++)
		if (vth_vm_live(&vth_vms[i]))
			vth_held[n++] = atomic64_read(&vth_vms[i].kept);
	vth_held[n++] = atomic64_read(&vth_untracked.kept);
	vth_live_vms = n - 1;
	level = vth_share_fixed ?: vth_fair_level(vth_held, n, free);
	WRITE_ONCE(vth_share, level);
	for (i = 0; i < vth_nr_vms; i++)
		if (vth_vm_live(&vth_vms[i]))
			WRITE_ONCE(vth_vms[i].share,
				   max_t(s64, level, atomic64_read(&vth_vms[i].kept)));
	WRITE_ONCE(vth_untracked.share, max_t(s64, level, atomic64_read(&vth_untracked.kept)));
}

/* Queue the sweep of the entries of VMs gone. vth_vms_lock held. */
static void vth_sweep_queue(void)
{
	if (!vth_sweep_live)
		return;
	WRITE_ONCE(vth_sweep_next, jiffies + VTH_SWEEP_INTERVAL);
	queue_work(system_unbound_wq, &vth_sweep_work);
}

/*
 * A share is full: sweep, so that the shares of VMs gone go to the others,
 * at most once every VTH_SWEEP_INTERVAL.  Runs in the probes.
 */
static void vth_sweep_soon(void)
{
	unsigned long flags;

	if (time_before(jiffies, READ_ONCE(vth_sweep_next)))
		return;
	raw_spin_lock_irqsave(&vth_vms_lock, flags);
	vth_sweep_queue();
	raw_spin_unlock_irqrestore(&vth_vms_lock, flags);
}

/*
 * Find @kvm's entry in vth_vms, adding it if new; NULL when no entry is
 * free (its records then count against vth_untracked's share), or for a
 * VM being destroyed that has no entry.  Runs in the tracepoint probe and
 * the kprobe (IRQs or preemption off): a raw spinlock, no allocation.
 *
 * The VM's name and inode number are read from its debugfs dentry only
 * while users_count > 0: kvm_destroy_vm() runs once it reached 0, removes
 * the VM's debugfs folder (freeing the dentry), then loads each vCPU to
 * unload its MMU, and on a host with an unstable TSC that load writes an
 * offset.  Every other writer holds a reference (the VM or vCPU file it
 * issues an ioctl on).  A VM being destroyed is the newest VM at its
 * address, so the live entry of that address is its own.  A live VM whose
 * directory differs from the entry of its address is a new VM at a freed
 * VM's address: the old entry is retired.  Entries of VMs that are gone
 * otherwise are marked gone by vth_sweep_fn(), queued when a new VM comes.
 * A new VM takes part in the shares from its first record on.
 */
static struct vth_vm *vth_vm_of(struct kvm *kvm, s32 pid)
{
	bool alive = refcount_read(&kvm->users_count) > 0;
	struct dentry *dent = READ_ONCE(kvm->debugfs_dentry);
	const char *name = alive && !IS_ERR_OR_NULL(dent) ? (const char *)dent->d_name.name : "-";
	unsigned long ino = alive ? vth_kvm_ino(kvm) : 0;
	struct vth_vm *vm = NULL;
	unsigned long flags;
	unsigned int i;

	raw_spin_lock_irqsave(&vth_vms_lock, flags);
	for (i = 0; i < vth_nr_vms; i++) {
		if (vth_vms[i].kvm != kvm)
			continue;
		if (!alive || (vth_vms[i].ino == ino && !strcmp(vth_vms[i].name, name))) {
			vm = &vth_vms[i];
			if (!alive && !vm->gone) {	/* its teardown: its share goes */
				vm->gone = true;
				vth_shares_update();
			}
			goto out_unlock;
		}
		WRITE_ONCE(vth_vms[i].kvm, NULL);	/* retired: its VM was freed */
	}
	if (!alive)
		goto out_unlock;
	vm = vth_vm_free_entry();
	if (vm) {
		atomic64_set(&vm->kept, 0);
		vm->pid = pid;
		vm->ino = ino;
		vm->serial = ++vth_serial;
		vm->gone = false;
		strscpy(vm->name, name, sizeof(vm->name));
		WRITE_ONCE(vm->kvm, kvm);
		if (vm == &vth_vms[vth_nr_vms])
			smp_store_release(&vth_nr_vms, vth_nr_vms + 1);	/* readers take no lock */
		vth_shares_update();
		vth_sweep_queue();	/* a VM came: find those gone, whose shares go */
	} else if (time_after_eq(jiffies, vth_sweep_next)) {
		vth_sweep_queue();	/* the table is full: free the entries of VMs gone */
	}
out_unlock:
	raw_spin_unlock_irqrestore(&vth_vms_lock, flags);
	return vm;
}

/* ---- writers ---------------------------------------------------------- */

/* Count one more record of @vm if its share has room. Any context: atomics only. */
static bool vth_vm_take(struct vth_vm *vm)
{
	s64 kept = atomic64_read(&vm->kept);

	do {
		if (kept >= READ_ONCE(vm->share))
			return false;
	} while (!atomic64_try_cmpxchg(&vm->kept, &kept, kept + 1));
	return true;
}

/*
 * Claim the next free slot for a record of @vm (vth_untracked: a VM with
 * no entry; NULL: an unknown VM), or count a drop.  A VM keeps at most its
 * share of records, so that a VM writing offsets in a loop cannot take the
 * slots of the others; the VMs with no entry share one share.  Runs in
 * the tracepoint probe and the kprobe (IRQs or preemption off): atomics,
 * and vth_vms_lock when a full share asks for a sweep.
 */
static struct vth_record *vth_claim(struct vth_vm *vm)
{
	s64 slot;

	if (vm && !vth_vm_take(vm)) {
		vth_sweep_soon();
		goto out_drop;
	}
	slot = atomic64_inc_return(&vth_next) - 1;
	if (slot < capacity)
		return &vth_records[slot];
	if (vm)
		atomic64_dec(&vm->kept);
out_drop:
	if (vm)
		atomic64_inc(&vm->dropped);
	atomic64_inc(&vth_dropped);
	return NULL;
}

/* The host TSC now, and the CPU that read it. Any context. */
static void vth_stamp(struct vth_record *rec)
{
	rec->tid = current->pid;
	rec->cpu = get_cpu();
	rec->host_tsc = rdtsc_ordered();
	put_cpu();
}

/*
 * A record is filled: emit it as the trace event vtrace_host:tsc_offset,
 * and, if it has a slot (@kept; else it is on the caller's stack), make it
 * visible to readers.  Runs in the tracepoint probe and the kprobe.
 */
static void vth_publish(struct vth_record *rec, bool kept)
{
	trace_tsc_offset(rec->host_tsc, rec->pid, rec->vm, rec->vcpu_id, rec->vcpu_idx,
			 rec->prev, rec->offset, rec->multiplier, rec->frac_bits, rec->kind, rec->cpu,
			 rec->serial);
	if (kept)
		smp_store_release(&rec->ready, 1);
}

/*
 * The identity of a VM with no entry in vth_vms: read from KVM at each
 * record while the VM has users (more than VTH_MAX_VMS VMs at once), with
 * no serial, else unknown (a VM being destroyed that had no record
 * before): an anomaly.  Runs in the tracepoint probe and the kprobe.
 */
static void vth_fill_untracked(struct vth_record *rec, struct kvm *kvm)
{
	struct dentry *dent = READ_ONCE(kvm->debugfs_dentry);

	rec->pid = current->tgid;
	rec->serial = 0;
	if (refcount_read(&kvm->users_count) > 0 && !IS_ERR_OR_NULL(dent)) {
		strscpy(rec->vm, dent->d_name.name, sizeof(rec->vm));
		return;
	}
	atomic64_inc(&vth_anomalies);
	strscpy(rec->vm, "?", sizeof(rec->vm));
}

/*
 * Copy the identity of @vm (NULL: unknown) and @vcpu, and the multiplier of
 * @vcpu, into @rec.  Runs in the tracepoint probe and the kprobe.
 */
static void vth_fill_vcpu(struct vth_record *rec, const struct vth_vm *vm,
			  struct kvm_vcpu *vcpu)
{
	rec->vcpu_id = vcpu->vcpu_id;
	if (vm) {
		rec->pid = vm->pid;
		rec->serial = vm->serial;
		strscpy(rec->vm, vm->name, sizeof(rec->vm));
	} else {
		vth_fill_untracked(rec, vcpu->kvm);
	}
	/*
	 * kvm_arch_vcpu_create() loads the vCPU (which, with an unstable TSC,
	 * writes its offset) before KVM gives it an index and puts it in its
	 * VM: its index is not known yet.
	 */
	if (kvm_get_vcpu(vcpu->kvm, vcpu->vcpu_idx) == vcpu)
		rec->vcpu_idx = vcpu->vcpu_idx;
	else
		rec->vcpu_idx = -1;
	rec->multiplier = READ_ONCE(vcpu->arch.l1_tsc_scaling_ratio);
	/*
	 * On a host with an unstable TSC, KVM writes an offset while it
	 * creates the vCPU, before kvm_set_tsc_khz() sets its multiplier:
	 * the vCPU cannot run guest code yet, and the multiplier it will
	 * run with is KVM's default (no scaling) until that write, which
	 * the multiplier kprobe records.
	 */
	if (!rec->multiplier)
		rec->multiplier = kvm_caps.default_tsc_scaling_ratio;
	rec->frac_bits = kvm_caps.tsc_scaling_ratio_frac_bits;
}

/*
 * A write with no running vCPU, or whose running vCPU is not the one
 * written: recorded with an unknown VM.  Runs in the tracepoint probe.
 */
static void vth_probe_unknown(unsigned int vcpu_id, u64 prev, u64 next)
{
	struct vth_record *rec = vth_claim(NULL), local;
	bool kept = rec;

	atomic64_inc(&vth_anomalies);
	if (!kept)
		rec = &local;
	vth_stamp(rec);
	rec->serial = 0;
	rec->prev = prev;
	rec->offset = next;
	rec->pid = current->tgid;
	rec->vcpu_id = vcpu_id;
	rec->vcpu_idx = -1;
	rec->kind = VTH_KIND_WRITE;
	strscpy(rec->vm, "?", sizeof(rec->vm));
	rec->multiplier = kvm_caps.default_tsc_scaling_ratio;
	rec->frac_bits = kvm_caps.tsc_scaling_ratio_frac_bits;
	vth_publish(rec, kept);
}

/*
 * Tracepoint probe of kvm_write_tsc_offset.  Called by
 * kvm_vcpu_write_tsc_offset() just before KVM stores @next, often under
 * kvm->arch.tsc_write_lock (a raw spinlock) with IRQs off: it must not
 * sleep, allocate or print.
 */
static void vth_probe(void *data, unsigned int vcpu_id, u64 prev, u64 next)
{
	struct kvm_vcpu *vcpu = kvm_get_running_vcpu();
	struct vth_record *rec, local;
	struct vth_vm *vm;

	if (!vcpu || vcpu->vcpu_id != vcpu_id) {
		vth_probe_unknown(vcpu_id, prev, next);
		return;
	}
	vm = vth_vm_of(vcpu->kvm, current->tgid);
	rec = vth_claim(vm ?: &vth_untracked) ?: &local;
	vth_stamp(rec);
	rec->prev = prev;
	rec->offset = next;
	rec->kind = VTH_KIND_WRITE;
	vth_fill_vcpu(rec, vm, vcpu);
	vth_publish(rec, rec != &local);
}

/*
 * kprobe pre-handler on the entry of kvm_vcpu_write_tsc_multiplier(vcpu,
 * l1_multiplier), before KVM stores the multiplier.  Runs with preemption
 * off, maybe under KVM's locks: it must not sleep, allocate or print.
 */
static int vth_mult_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct kvm_vcpu *vcpu = (struct kvm_vcpu *)regs->di;
	struct vth_record *rec, local;
	struct vth_vm *vm;

	/*
	 * kvm_arch_vcpu_create() loads the vCPU and sets its multiplier before
	 * the vCPU has an index (or may still fail): skip it, the creation
	 * offset write that follows carries the multiplier.
	 */
	if (!vcpu || vcpu != kvm_get_running_vcpu() ||
	    kvm_get_vcpu(vcpu->kvm, vcpu->vcpu_idx) != vcpu)
		return 0;
	vm = vth_vm_of(vcpu->kvm, current->tgid);
	rec = vth_claim(vm ?: &vth_untracked) ?: &local;
	vth_stamp(rec);
	rec->offset = READ_ONCE(vcpu->arch.l1_tsc_offset);
	rec->prev = rec->offset;
	rec->kind = VTH_KIND_MULTIPLIER;
	vth_fill_vcpu(rec, vm, vcpu);
	rec->multiplier = regs->si;
	vth_publish(rec, rec != &local);
	return 0;
}

static struct kprobe vth_mult_kprobe = {
	.symbol_name	= "kvm_vcpu_write_tsc_multiplier",
	.pre_handler	= vth_mult_pre,
};

/* Optional: without the hook, multiplier changes show at the next write. */
static void vth_hook_multiplier(void)
{
	int ret;

	if (!hook_multiplier)
		return;
	ret = register_kprobe(&vth_mult_kprobe);
	if (ret) {
		pr_info("vtrace_host: no kprobe on %s (%d): multiplier changes show at the next offset write\n",
			vth_mult_kprobe.symbol_name, ret);
		return;
	}
	vth_mult_hooked = true;
}

static void vth_unhook_multiplier(void)
{
	if (vth_mult_hooked)
		unregister_kprobe(&vth_mult_kprobe);	/* waits for handlers in flight */
	vth_mult_hooked = false;
}

/* ---- snapshot of the VMs that exist at load time ---------------------- */

/*
 * Wait, a bounded time (1 s), for claimed slot @idx to be published; false
 * if it was not.  Process context: writers publish within a few
 * instructions, with IRQs or preemption off, so a few reads normally do;
 * then the reader sleeps a jiffy at a time rather than spin.
 */
static bool vth_wait_ready(u64 idx)
{
	unsigned long deadline = jiffies + HZ;
	unsigned int spins = 0;

	while (!smp_load_acquire(&vth_records[idx].ready)) {
		if (time_after(jiffies, deadline))
			return false;
		if (++spins < 64)
			cpu_relax();
		else
			schedule_timeout_uninterruptible(1);
	}
	return true;
}

/*
 * The latest record of @rec's vCPU in slots @from..@to - 1, or NULL.
 * Process context.
 */
static const struct vth_record *vth_latest_in(const struct vth_record *rec, u64 from, u64 to)
{
	while (to-- > from) {
		const struct vth_record *r = &vth_records[to];

		if (!(to & 4095))
			cond_resched();
		if (!vth_wait_ready(to))
			continue;
		if (r->vcpu_id == rec->vcpu_id && r->pid == rec->pid && r->serial == rec->serial &&
		    !strcmp(r->vm, rec->vm))
			return r;
	}
	return NULL;
}

/* QEMU's pid: set by KVM's creation uevent; the name "PID-FD" has it too */
static s32 vth_kvm_pid(struct kvm *kvm)
{
	s32 pid = kvm->userspace_pid;

	if (!pid && sscanf(kvm->debugfs_dentry->d_name.name, "%d-", &pid) != 1)
		pid = 0;
	return pid;
}

/*
 * Fill @rec with the identity of @vcpu (@vm: its VM's entry, NULL if none)
 * and the offset and multiplier KVM has now, kind snapshot.  Its VM is kept
 * alive by the caller.  The host TSC is read after the vCPU's values: a
 * write whose record has a later host_tsc was not stored yet when they
 * were read (its probe runs before KVM stores it), so a snapshot never
 * holds a value of a write recorded after it.
 */
static void vth_snapshot_fill(struct vth_record *rec, const struct vth_vm *vm, s32 pid,
			      struct kvm_vcpu *vcpu)
{
	rec->offset = READ_ONCE(vcpu->arch.l1_tsc_offset);
	rec->kind = VTH_KIND_SNAPSHOT;
	vth_fill_vcpu(rec, vm, vcpu);
	if (!vm)
		rec->pid = pid;
	vth_stamp(rec);
	rec->tid = 0;		/* read by the module, written by no thread of the VM */
}

/*
 * Append a snapshot record of @vcpu to the array (the snapshot at load
 * time).  A write whose probe ran before the snapshot claimed its slot may
 * not be stored by KVM yet when the snapshot reads the offset: that
 * write's new offset, not the value read, is the one in force after it, so
 * the snapshot takes the offset of its vCPU's latest record before its
 * slot.  The record is built first and the slots before it are scanned
 * before the claim, so that its slot stays unpublished only while the few
 * slots claimed in between are looked at.
 */
static void vth_snapshot_vcpu(struct kvm *kvm, struct kvm_vcpu *vcpu, void *unused)
{
	s32 pid = vth_kvm_pid(kvm);
	struct vth_vm *vm = vth_vm_of(kvm, pid);
	const struct vth_record *before;
	struct vth_record local = {}, *rec;
	u64 seen;

	vth_snapshot_fill(&local, vm, pid, vcpu);
	seen = min_t(u64, atomic64_read(&vth_next), capacity);
	before = vth_latest_in(&local, 0, seen);
	rec = vth_claim(vm ?: &vth_untracked);
	if (rec) {
		before = vth_latest_in(&local, seen, rec - vth_records) ?: before;
		atomic64_inc(&vth_snapshots);
	}
	if (before)
		local.offset = before->offset;
	local.prev = local.offset;
	if (rec)
		*rec = local;	/* ready is 0 until vth_publish() */
	vth_publish(rec ?: &local, rec != NULL);
}

/*
 * The struct kvm behind a VM directory of KVM's debugfs: the VM-wide
 * statistics files there carry a struct kvm_stat_data.  Checked against the
 * VM's own dentry, so a foreign directory yields NULL.
 */
static struct kvm *vth_kvm_of_dir(struct dentry *vmdir)
{
	struct dentry *stat = debugfs_lookup("remote_tlb_flush", vmdir);
	struct kvm_stat_data *sd;
	struct kvm *kvm = NULL;

	if (!stat)
		return NULL;
	sd = d_inode(stat)->i_private;
	if (sd && sd->kvm && sd->kvm->debugfs_dentry == vmdir)
		kvm = sd->kvm;
	dput(stat);
	return kvm;
}

/* What is done with each VM of KVM's debugfs (its directory locked, the VM alive) */
typedef void (*vth_each_vm_fn)(struct kvm *kvm, struct dentry *vmdir, void *ctx);

/*
 * Take a reference on up to @max positive subdirectories of @dir into
 * @out; returns how many there are (which may exceed @max).  The caller
 * holds @dir's inode lock, so positive children come and go only with it;
 * d_lock guards the list against negative dentries of lookups.
 */
/* A dentry's children: a list until v6.8, an hlist since (Kbuild detects which) */
#ifdef VTH_DENTRY_HLIST
#define vth_for_each_child(child, dir) hlist_for_each_entry(child, &(dir)->d_children, d_sib)
#else
#define vth_for_each_child(child, dir) list_for_each_entry(child, &(dir)->d_subdirs, d_child)
#endif

static unsigned int vth_grab_subdirs(struct dentry *dir, struct dentry **out,
				     unsigned int max)
{
	struct dentry *child;
	unsigned int n = 0;

	spin_lock(&dir->d_lock);
	vth_for_each_child(child, dir) {
		if (!simple_positive(child) || !d_is_dir(child))
			continue;
		if (n < max) {
			/* a child's d_lock nests in its parent's */
			spin_lock_nested(&child->d_lock, DENTRY_D_LOCK_NESTED);
			out[n] = dget_dlock(child);
			spin_unlock(&child->d_lock);
		}
		n++;
	}
	spin_unlock(&dir->d_lock);
	return n;
}

/*
 * Call @fn for every VM in KVM's debugfs but those being destroyed (they
 * write no more offsets that matter).  Process context: it sleeps (the
 * directory's inode lock, an allocation).
 */
static int vth_for_each_vm(vth_each_vm_fn fn, void *ctx)
{
	struct dentry *dir, **vms;
	unsigned int n, i;
	int ret = 0;

	/* KVM's debugfs folder: kvm_debugfs_dir is no longer exported in v6.12 */
	dir = debugfs_lookup("kvm", NULL);
	if (IS_ERR_OR_NULL(dir))
		return 0;
	inode_lock_shared(d_inode(dir));
	n = vth_grab_subdirs(dir, NULL, 0);
	vms = kcalloc(max(n, 1U), sizeof(*vms), GFP_KERNEL);
	if (!vms) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	n = min(n, vth_grab_subdirs(dir, vms, n));
	for (i = 0; i < n; i++) {
		struct kvm *kvm = vth_kvm_of_dir(vms[i]);

		if (kvm && refcount_read(&kvm->users_count))
			fn(kvm, vms[i], ctx);
		dput(vms[i]);
	}
	kfree(vms);
out_unlock:
	inode_unlock_shared(d_inode(dir));
	dput(dir);
	return ret;
}

/* What a snapshot does with each vCPU: append it to the array, or emit it into a trace */
typedef void (*vth_vcpu_fn)(struct kvm *kvm, struct kvm_vcpu *vcpu, void *ctx);

struct vth_each_vcpu {
	vth_vcpu_fn fn;
	void *ctx;
};

static void vth_snapshot_vm(struct kvm *kvm, struct dentry *vmdir, void *ctx)
{
	const struct vth_each_vcpu *each = ctx;
	struct kvm_vcpu *vcpu;
	unsigned long i;

	kvm_for_each_vcpu(i, vcpu, kvm)
		each->fn(kvm, vcpu, each->ctx);
}

/* Call @fn for every vCPU of every VM in KVM's debugfs.  Process context. */
static int vth_snapshot_all(vth_vcpu_fn fn, void *ctx)
{
	struct vth_each_vcpu each = { .fn = fn, .ctx = ctx };

	return vth_for_each_vm(vth_snapshot_vm, &each);
}

/* ---- retiring the entries of VMs that are gone ------------------------ */

/* A VM KVM's debugfs shows: its address and its directory's inode number */
struct vth_live_vm {
	struct kvm *kvm;
	unsigned long ino;
};

struct vth_live {
	struct vth_live_vm *vm;
	unsigned int nr;
	unsigned int max;
};

static void vth_live_note(struct kvm *kvm, struct dentry *vmdir, void *ctx)
{
	struct vth_live *live = ctx;

	if (live->nr < live->max)
		live->vm[live->nr] = (struct vth_live_vm){ kvm, d_inode(vmdir)->i_ino };
	live->nr++;
}

static int vth_live_cmp(const void *a, const void *b)
{
	const struct vth_live_vm *x = a, *y = b;

	if (x->kvm != y->kvm)
		return x->kvm < y->kvm ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/*
 * Mark gone the entries of VMs that are gone, so that their shares go to
 * the VMs alive and new VMs find a free entry (vth_vm_free_entry()).  An
 * entry whose VM had its debugfs directory when the walk began and is not
 * in it now is gone: a VM removes its directory first thing when it is
 * destroyed.  Entries made after the walk began, and those of VMs with no
 * directory (ino 0: KVM could not make it), are left.  Process context
 * (system_unbound_wq).
 */
static void vth_sweep_fn(struct work_struct *work)
{
	struct vth_live live = { .max = VTH_MAX_VMS * 2 };
	unsigned long flags;
	struct vth_vm *vm;
	unsigned int i;
	u32 bound;

	live.vm = kvmalloc_array(live.max, sizeof(*live.vm), GFP_KERNEL);
	if (!live.vm)
		return;
	raw_spin_lock_irqsave(&vth_vms_lock, flags);
	bound = vth_serial;
	raw_spin_unlock_irqrestore(&vth_vms_lock, flags);
	if (vth_for_each_vm(vth_live_note, &live) || live.nr > live.max)
		goto out_free;		/* not all seen: none can be called gone */
	sort(live.vm, live.nr, sizeof(*live.vm), vth_live_cmp, NULL);
	raw_spin_lock_irqsave(&vth_vms_lock, flags);
	for (i = 0; i < vth_nr_vms; i++) {
		struct vth_live_vm key;

		vm = &vth_vms[i];
		key = (struct vth_live_vm){ vm->kvm, vm->ino };
		if (!vth_vm_live(vm) || !vm->ino || vm->serial > bound ||
		    bsearch(&key, live.vm, live.nr, sizeof(key), vth_live_cmp))
			continue;
		WRITE_ONCE(vm->gone, true);
	}
	vth_shares_update();
	raw_spin_unlock_irqrestore(&vth_vms_lock, flags);
out_free:
	kvfree(live.vm);
}

/* At unload (or a failed load): no sweep queued or running from now on */
static void vth_sweep_stop(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&vth_vms_lock, flags);
	vth_sweep_live = false;
	raw_spin_unlock_irqrestore(&vth_vms_lock, flags);
	cancel_work_sync(&vth_sweep_work);
}

/* ---- snapshot into a trace buffer, when the event is enabled there ---- */

/*
 * On a host with a stable TSC, KVM writes a vCPU's offset when QEMU creates
 * or resets it: a VM started before "trace-cmd record -e vtrace_host" has
 * no write record in the trace.  So when the event is enabled in a trace
 * buffer (the top one or an instance), the module writes one snapshot
 * event per existing vCPU into that buffer, with since = the host TSC of
 * the enable.  Every write after the enable is in that buffer too (when
 * it records), so a snapshot that is its vCPU's first record there was in
 * force from since, or from the buffer's first event if later, on.
 *
 *   echo 1 > .../tsc_offset/enable (event_mutex held)   system_long_wq
 *     vth_event_reg(REGISTER, file)
 *       trace_event_reg(): the event's probe is live
 *       vth_enables += { file, since = rdtsc } ----------> vth_enable_work()
 *                                                          RCU Tasks grace period:
 *                                                            writes before since stored
 *                                                          reserve in file's buffer
 *                                                          NULL, pid filter? given up
 *                                                          NULL (not recording yet)?
 *                                                            again in 10 ms, for 60 s
 *                                                          else a snapshot per vCPU
 *     vth_event_reg(UNREGISTER, file)
 *       vth_enables -= file (vth_enable_lock: the work is done with it)
 *       trace_event_reg()
 *
 * Why a work and retries, not the reg callback itself: trace-cmd record
 * enables the events while tracing_on is 0 and turns it on once its
 * readers run, and a buffer that does not record refuses the events (the
 * TRACE_EVENT_FN regfunc is worse: it runs before the probe is added, and
 * only for the first buffer).  A buffer that filters events by pid
 * (set_event_pid: trace-cmd record -P) and not this worker's is given up at
 * once and counted: the same filter drops the write events of the vCPU
 * threads outside it, so a snapshot let through would make a cut history
 * look whole.
 *
 * The snapshot's values, and the race with a write: KVM stores a new offset
 * just after the tracepoint, in the writer's straight-line code (no
 * voluntary context switch between the probe and the store).  So before its
 * first read of an enable's snapshot the work waits for an RCU Tasks grace
 * period begun after that enable (vth_enable_sync()): every write whose
 * probe ran before since is then stored, and the snapshot holds it.  The
 * snapshot's host_tsc is read after the values (vth_snapshot_fill()): a
 * write recorded with a later host_tsc is not in them.  A write recorded
 * at or after since and before the snapshot may or may not be: its record
 * wins, the readers' rule (Documentation/vtrace_host.rst).
 */
#define VTH_ENABLE_RETRY	msecs_to_jiffies(10)
#define VTH_ENABLE_TIMEOUT	(60 * HZ)

/**
 * struct vth_enable - a trace buffer that enabled the event and awaits its snapshot
 * @node:	in vth_enables
 * @file:	the event's file in that buffer (valid until its UNREGISTER)
 * @since:	host TSC of the enable
 * @deadline:	jiffies after which the snapshot is given up (counted)
 * @seq:	order of the enables, for vth_enable_sync()
 * @synced:	every write whose probe ran before @since is stored by KVM
 */
struct vth_enable {
	struct list_head node;
	struct trace_event_file *file;
	u64 since;
	unsigned long deadline;
	u64 seq;
	bool synced;
};

static LIST_HEAD(vth_enables);
static DEFINE_MUTEX(vth_enable_lock);	/* guards vth_enables and vth_enable_live */
static bool vth_enable_live;		/* set at the end of the load, cleared at unload */
static atomic64_t vth_enable_events = ATOMIC64_INIT(0);
static atomic64_t vth_enable_missed = ATOMIC64_INIT(0);
static atomic64_t vth_enable_pid_filtered = ATOMIC64_INIT(0);
static u64 vth_enable_seq;		/* enables queued so far, under vth_enable_lock */
static void vth_enable_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(vth_enable_work, vth_enable_work_fn);

/*
 * One vtrace_host:tsc_offset event into @file's buffer only (the fields
 * of TP_fast_assign); false when the buffer takes none (not recording,
 * soft-disabled, filtered out).  Process context: preemption is disabled
 * around reserve..commit as a tracepoint's caller has it, since
 * trace_event_buffer_reserve() takes one level of the preempt count for
 * the tracepoint's own (tracing_gen_ctx_dec()) and reads per-CPU state
 * (the pid filter).
 */
static bool vth_emit_to(struct trace_event_file *file, const struct vth_record *rec, u64 since)
{
	struct trace_event_raw_tsc_offset *entry;
	struct trace_event_buffer fbuffer;
	bool emitted = false;

	preempt_disable_notrace();
	if (trace_trigger_soft_disabled(file))
		goto out_preempt;
	entry = trace_event_buffer_reserve(&fbuffer, file, sizeof(*entry));
	if (!entry)
		goto out_preempt;
	entry->host_tsc = rec->host_tsc;
	entry->prev_offset = rec->prev;
	entry->offset = rec->offset;
	entry->multiplier = rec->multiplier;
	entry->since = since;
	entry->tsc_khz = tsc_khz;
	entry->pid = rec->pid;
	entry->vcpu_id = rec->vcpu_id;
	entry->vcpu_idx = rec->vcpu_idx;
	entry->frac_bits = rec->frac_bits;
	entry->kind = rec->kind;
	entry->cpu = rec->cpu;
	entry->serial = rec->serial;
	strscpy_pad(entry->vm, rec->vm, sizeof(entry->vm));
	trace_event_buffer_commit(&fbuffer);
	emitted = true;
out_preempt:
	preempt_enable_notrace();
	return emitted;
}

/* A snapshot of one enable in progress */
struct vth_emit {
	const struct vth_enable *e;
	unsigned int emitted;
	unsigned int failed;
};

static void vth_emit_vcpu(struct kvm *kvm, struct kvm_vcpu *vcpu, void *ctx)
{
	struct vth_emit *em = ctx;
	struct vth_record rec = {};
	struct vth_vm *vm;
	s32 pid;

	if (em->failed && !em->emitted)
		return;		/* the buffer does not record yet: all again later */
	pid = vth_kvm_pid(kvm);
	vm = vth_vm_of(kvm, pid);
	/* KVM's values: every write whose probe ran before since is stored (vth_enable_sync()) */
	vth_snapshot_fill(&rec, vm, pid, vcpu);
	rec.prev = rec.offset;
	if (vth_emit_to(em->e->file, &rec, em->e->since))
		em->emitted++;
	else
		em->failed++;
}

/*
 * @file's buffer filters events by pid (set_event_pid, as trace-cmd record
 * -P sets it) and drops this task's.  Process context.
 */
static bool vth_pid_filtered(struct trace_event_file *file)
{
	bool ignored;

	if (!(READ_ONCE(file->flags) & EVENT_FILE_FL_PID_FILTER))
		return false;
	preempt_disable();	/* the filter's verdict is per CPU, for its current task */
	ignored = trace_event_ignore_this_pid(file);
	preempt_enable();
	return ignored;
}

/* The snapshot of @e: true when done (or given up), false to try again later */
static bool vth_enable_snapshot(const struct vth_enable *e)
{
	struct vth_emit em = { .e = e };
	bool filtered = false;
	int ret = vth_snapshot_all(vth_emit_vcpu, &em);

	if (!ret && em.failed && !em.emitted) {
		filtered = vth_pid_filtered(e->file);
		if (!filtered && time_before(jiffies, e->deadline))
			return false;
	}
	atomic64_add(em.emitted, &vth_enable_events);
	if (ret || em.failed)
		atomic64_inc(&vth_enable_missed);
	if (filtered)
		atomic64_inc(&vth_enable_pid_filtered);
	return true;
}

/*
 * Wait until KVM has stored every write whose probe ran before the since
 * of each enable queued now.  KVM stores the offset in the writer's
 * straight-line code after the tracepoint, with no voluntary context switch
 * in between: a writer there when the RCU Tasks grace period begins stores
 * before the grace period can end.  Process context, without
 * vth_enable_lock held while it waits (a disable takes that lock under
 * ftrace's event_mutex).
 */
static void vth_enable_sync(void)
{
	struct vth_enable *e;
	bool waiting = false;
	u64 upto;

	mutex_lock(&vth_enable_lock);
	upto = vth_enable_seq;
	list_for_each_entry(e, &vth_enables, node)
		waiting |= !e->synced;
	mutex_unlock(&vth_enable_lock);
	if (!waiting)
		return;
	synchronize_rcu_tasks();
	mutex_lock(&vth_enable_lock);
	list_for_each_entry(e, &vth_enables, node)
		if (e->seq <= upto)
			e->synced = true;
	mutex_unlock(&vth_enable_lock);
}

static void vth_enable_work_fn(struct work_struct *work)
{
	struct vth_enable *e, *tmp;
	bool again = false;

	vth_enable_sync();
	mutex_lock(&vth_enable_lock);
	list_for_each_entry_safe(e, tmp, &vth_enables, node) {
		if (!e->synced || !vth_enable_snapshot(e)) {
			again = true;
			continue;
		}
		list_del(&e->node);
		kfree(e);
	}
	if (again && vth_enable_live)
		queue_delayed_work(system_long_wq, &vth_enable_work, VTH_ENABLE_RETRY);
	mutex_unlock(&vth_enable_lock);
}

/* The event is enabled in @file's buffer: its snapshot is due. event_mutex held. */
static void vth_enable_add(struct trace_event_file *file)
{
	struct vth_enable *e = kzalloc(sizeof(*e), GFP_KERNEL);

	if (!e) {
		atomic64_inc(&vth_enable_missed);
		return;
	}
	e->file = file;
	e->since = rdtsc_ordered();
	e->deadline = jiffies + VTH_ENABLE_TIMEOUT;
	mutex_lock(&vth_enable_lock);
	if (vth_enable_live) {
		e->seq = ++vth_enable_seq;
		list_add_tail(&e->node, &vth_enables);
		mod_delayed_work(system_long_wq, &vth_enable_work, 0);
		e = NULL;
	}
	mutex_unlock(&vth_enable_lock);
	kfree(e);
}

/* The event is disabled in @file's buffer: no snapshot into it from now on. */
static void vth_enable_del(struct trace_event_file *file)
{
	struct vth_enable *e, *tmp;

	mutex_lock(&vth_enable_lock);
	list_for_each_entry_safe(e, tmp, &vth_enables, node) {
		if (e->file != file)
			continue;
		list_del(&e->node);
		kfree(e);
		atomic64_inc(&vth_enable_missed);
	}
	mutex_unlock(&vth_enable_lock);
}

/*
 * The event class's reg callback (ftrace's trace_event_reg() plus the
 * snapshot).  Called with event_mutex held, in process context.
 */
static int vth_event_reg(struct trace_event_call *call, enum trace_reg type, void *data)
{
	int ret;

	if (type == TRACE_REG_UNREGISTER)
		vth_enable_del(data);
	ret = trace_event_reg(call, type, data);
	if (type == TRACE_REG_REGISTER && !ret)
		vth_enable_add(data);
	return ret;
}

static void vth_enable_start(void)
{
	mutex_lock(&vth_enable_lock);
	vth_enable_live = true;
	mutex_unlock(&vth_enable_lock);
	/* ftrace added the event when the module came: enables from now on */
	WRITE_ONCE(event_class_tsc_offset.reg, vth_event_reg);
}

/*
 * At unload: no snapshot work left.  The event's files go after the
 * module's exit (ftrace's module notifier): until then vth_event_reg()
 * may still run, and finds vth_enable_live false.
 */
static void vth_enable_stop(void)
{
	struct vth_enable *e, *tmp;

	mutex_lock(&vth_enable_lock);
	vth_enable_live = false;
	mutex_unlock(&vth_enable_lock);
	cancel_delayed_work_sync(&vth_enable_work);
	list_for_each_entry_safe(e, tmp, &vth_enables, node) {
		list_del(&e->node);
		kfree(e);
	}
}

/* ---- readers ---------------------------------------------------------- */

/* The record in slot @idx if it is published, else NULL. */
static struct vth_record *vth_get(u64 idx)
{
	u64 claimed = atomic64_read(&vth_next);

	if (idx >= min_t(u64, claimed, capacity))
		return NULL;
	if (!smp_load_acquire(&vth_records[idx].ready))
		return NULL;
	return &vth_records[idx];
}

static const char *vth_kind_name(const struct vth_record *rec)
{
	switch (rec->kind) {
	case VTH_KIND_SNAPSHOT:
		return "snapshot";
	case VTH_KIND_MULTIPLIER:
		return "multiplier";
	default:
		return "write";
	}
}

/*
 * A read of tsc_offsets: position 0 is the header, position n + 1 is slot
 * n, up to the first slot not published when the reader gets there
 * (@end_pos).  The trailer follows: a "# dropped" line if the array is full
 * and records were dropped, a "# vm_dropped" line per VM that lost records
 * (one position per VM seen, empty for the others), then the "# end" line.
 * @end_pos is fixed once found, so that a record published later never
 * follows the trailer.
 */
struct vth_iter {
	loff_t end_pos;		/* position of the first trailer line, 0: not yet */
	u64 end_tsc;		/* host TSC when the reader reached the end */
	bool full;		/* the array was full at the end */
	unsigned int nr_vms;	/* VMs seen at the end */
};

#define VTH_DROPPED_TOKEN	((void *)2)	/* the "# dropped" line */
#define VTH_END_TOKEN		((void *)3)	/* the "# end" line */
#define VTH_UNTRACKED_TOKEN	((void *)4)	/* the "# untracked_dropped" line */

/*
 * Fix the end of this read at @pos.  Every record whose host TSC is below
 * end_tsc is in the copy (or dropped): its slot was claimed before end_tsc
 * was read and every claimed slot is waited for.  Records claimed later may
 * be in the copy too.
 */
static void vth_offsets_fix_end(struct vth_iter *it, loff_t pos)
{
	u64 claimed, slot;

	it->end_tsc = rdtsc_ordered();
	claimed = min_t(u64, atomic64_read(&vth_next), capacity);
	for (slot = pos - 1; slot < claimed && vth_wait_ready(slot); slot++)
		;
	if (slot < claimed)	/* a writer that never published: cut here */
		it->end_tsc = slot ? vth_records[slot - 1].host_tsc : 0;
	it->end_pos = slot + 1;
	it->full = slot == capacity && atomic64_read(&vth_dropped);
	it->nr_vms = smp_load_acquire(&vth_nr_vms);
}

static void *vth_offsets_at(struct vth_iter *it, loff_t pos)
{
	struct vth_record *rec;

	if (pos == 0) {
		it->end_pos = 0;
		return SEQ_START_TOKEN;
	}
	if (!it->end_pos) {
		rec = vth_get(pos - 1);
		if (rec)
			return rec;
		vth_offsets_fix_end(it, pos);
	}
	if (pos < it->end_pos)
		return &vth_records[pos - 1];
	if (pos == it->end_pos && it->full)
		return VTH_DROPPED_TOKEN;
	pos -= it->end_pos + it->full;
	if (pos < it->nr_vms)
		return &vth_vms[pos];
	if (pos == it->nr_vms)
		return VTH_UNTRACKED_TOKEN;
	if (pos == it->nr_vms + 1)
		return VTH_END_TOKEN;
	return NULL;
}

static void *vth_offsets_start(struct seq_file *m, loff_t *pos)
{
	return vth_offsets_at(m->private, *pos);
}

static void *vth_offsets_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return vth_offsets_at(m->private, *pos);
}

static void vth_offsets_stop(struct seq_file *m, void *v)
{
}

static int vth_offsets_show(struct seq_file *m, void *v)
{
	const struct vth_record *rec = v;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, VTRACE_OFFSETS_VERSION "\n" VTRACE_OFFSETS_HEADER "\n");
		return 0;
	}
	if (v == VTH_UNTRACKED_TOKEN) {
		s64 dropped = atomic64_read(&vth_untracked.dropped);

		if (!dropped)
			return SEQ_SKIP;
		seq_printf(m, VTRACE_OFFSETS_UNTRACKED_DROPPED " %lld\n", dropped);
		return 0;
	}
	if (v == VTH_DROPPED_TOKEN) {
		seq_printf(m, VTRACE_OFFSETS_DROPPED " %lld\n", atomic64_read(&vth_dropped));
		return 0;
	}
	if (v >= (void *)vth_vms && v < (void *)(vth_vms + VTH_MAX_VMS)) {
		const struct vth_vm *vm = v;
		s64 dropped = atomic64_read(&vm->dropped);

		if (!dropped)
			return SEQ_SKIP;
		seq_printf(m, VTRACE_OFFSETS_VM_DROPPED " %d %s %lld %u\n", vm->pid, vm->name,
			   dropped, vm->serial);
		return 0;
	}
	if (v == VTH_END_TOKEN) {
		const struct vth_iter *it = m->private;

		seq_printf(m, VTRACE_OFFSETS_END " host_tsc=%llu records=%lld dropped=%lld\n",
			   it->end_tsc, it->end_pos - 1, atomic64_read(&vth_dropped));
		return 0;
	}
	seq_printf(m, "%td %llu %d %s %u %d %lld %lld %llu %u %s %u %u %d\n",
		   rec - vth_records, rec->host_tsc, rec->pid, rec->vm,
		   rec->vcpu_id, rec->vcpu_idx, (s64)rec->prev, (s64)rec->offset,
		   rec->multiplier, rec->frac_bits, vth_kind_name(rec), rec->cpu, rec->serial,
		   rec->tid);
	return 0;
}

static const struct seq_operations vth_offsets_sops = {
	.start	= vth_offsets_start,
	.next	= vth_offsets_next,
	.stop	= vth_offsets_stop,
	.show	= vth_offsets_show,
};

/* The files are read-only, also for root (whom mode 0444 does not stop). */
static int vth_open_check(struct file *file)
{
	return (file->f_mode & FMODE_WRITE) ? -EPERM : 0;
}

static int vth_offsets_open(struct inode *inode, struct file *file)
{
	return vth_open_check(file) ?:
		seq_open_private(file, &vth_offsets_sops, sizeof(struct vth_iter));
}

static const struct file_operations vth_offsets_fops = {
	.owner		= THIS_MODULE,
	.open		= vth_offsets_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= seq_release_private,
};

/**
 * struct vth_vm_line - one line of the vms file, built at read time
 * @pid:	userspace tgid of the VM
 * @serial:	its serial, 0 if none (&struct vth_vm)
 * @name:	KVM debugfs directory name
 * @first:	host TSC of its first record
 * @last:	host TSC of its last record
 * @records:	records of this VM
 * @dropped:	records of this VM dropped
 * @snapshot:	the VM existed when the module loaded
 * @vcpus:	vcpu_idx values seen
 */
struct vth_vm_line {
	s32 pid;
	u32 serial;
	char name[VTH_VM_NAME_LEN];
	u64 first;
	u64 last;
	u64 records;
	u64 dropped;
	bool snapshot;
	DECLARE_BITMAP(vcpus, KVM_MAX_VCPUS);
};

/* The lines of the vms file; @by_serial: the index + 1 of the line of each serial */
struct vth_vm_table {
	struct vth_vm_line *vm;
	unsigned int nr;
	unsigned int size;
	struct xarray by_serial;
};

/* The line of VM (@pid, @name, @serial), added if new; NULL when out of memory. */
static struct vth_vm_line *vth_vm_find(struct vth_vm_table *t, s32 pid, const char *name,
				       u32 serial)
{
	struct vth_vm_line *vm;
	unsigned int i;

	if (serial) {
		i = xa_to_value(xa_load(&t->by_serial, serial) ?: xa_mk_value(0));
		if (i)
			return &t->vm[i - 1];
	} else {
		for (i = t->nr; i-- > 0; )
			if (!t->vm[i].serial && t->vm[i].pid == pid && !strcmp(t->vm[i].name, name))
				return &t->vm[i];
	}
	if (serial && xa_err(xa_store(&t->by_serial, serial, xa_mk_value(t->nr + 1), GFP_KERNEL)))
		return NULL;
	if (t->nr == t->size) {
		unsigned int size = t->size ? 2 * t->size : 8;

		vm = krealloc_array(t->vm, size, sizeof(*vm), GFP_KERNEL);
		if (!vm)
			return NULL;
		memset(vm + t->size, 0, (size - t->size) * sizeof(*vm));
		t->vm = vm;
		t->size = size;
	}
	vm = &t->vm[t->nr++];
	vm->pid = pid;
	vm->serial = serial;
	strscpy(vm->name, name, sizeof(vm->name));
	vm->first = U64_MAX;
	return vm;
}

static int vth_vm_account(struct vth_vm_table *t, const struct vth_record *rec)
{
	struct vth_vm_line *vm = vth_vm_find(t, rec->pid, rec->vm, rec->serial);

	if (!vm)
		return -ENOMEM;
	vm->first = min(vm->first, rec->host_tsc);
	vm->last = max(vm->last, rec->host_tsc);
	vm->records++;
	if (rec->kind == VTH_KIND_SNAPSHOT)
		vm->snapshot = true;
	if (rec->vcpu_idx >= 0 && rec->vcpu_idx < KVM_MAX_VCPUS)
		__set_bit(rec->vcpu_idx, vm->vcpus);
	return 0;
}

/* The records of each VM, then the drops of each VM seen (also with no record). */
static int vth_vm_table_fill(struct vth_vm_table *t)
{
	const struct vth_record *rec;
	struct vth_vm_line *vm;
	unsigned int i, nr;
	u64 idx;
	int ret;

	nr = smp_load_acquire(&vth_nr_vms);
	for (idx = 0; (rec = vth_get(idx)); idx++) {
		ret = vth_vm_account(t, rec);
		if (ret)
			return ret;
		if (!(idx & 4095))
			cond_resched();
	}
	for (i = 0; i < nr; i++) {
		if (!vth_vms[i].serial)
			continue;	/* being filled: it has no record yet */
		vm = vth_vm_find(t, vth_vms[i].pid, vth_vms[i].name, vth_vms[i].serial);
		if (!vm)
			return -ENOMEM;
		vm->dropped += atomic64_read(&vth_vms[i].dropped);
	}
	return 0;
}

static int vth_vms_show(struct seq_file *m, void *v)
{
	struct vth_vm_table t = {};
	struct vth_vm_line *vm;
	unsigned int i;
	int ret;

	xa_init(&t.by_serial);
	ret = vth_vm_table_fill(&t);
	if (ret)
		goto out_free_table;
	seq_puts(m, VTH_VMS_HEADER "\n");
	for (i = 0; i < t.nr; i++) {
		vm = &t.vm[i];
		seq_printf(m, "%d %s %u %llu %llu %llu %s %llu %u\n", vm->pid, vm->name,
			   bitmap_weight(vm->vcpus, KVM_MAX_VCPUS), vm->records ? vm->first : 0,
			   vm->last, vm->records, vm->snapshot ? "snapshot" : "-", vm->dropped,
			   vm->serial);
	}
out_free_table:
	xa_destroy(&t.by_serial);
	kfree(t.vm);
	return ret;
}

static int vth_stats_show(struct seq_file *m, void *v)
{
	u64 claimed = atomic64_read(&vth_next);
	unsigned int i, nr;

	seq_printf(m, "kept %llu\n", min_t(u64, claimed, capacity));
	seq_printf(m, "dropped %lld\n", atomic64_read(&vth_dropped));
	seq_printf(m, "capacity %u\n", capacity);
	seq_printf(m, "vm_share %lld\n", READ_ONCE(vth_share));
	seq_printf(m, "vms %u\n", READ_ONCE(vth_serial));
	seq_printf(m, "live_vms %u\n", READ_ONCE(vth_live_vms));
	seq_printf(m, "anomalies %lld\n", atomic64_read(&vth_anomalies));
	seq_printf(m, "snapshots %lld\n", atomic64_read(&vth_snapshots));
	seq_printf(m, "enable_snapshots %lld\n", atomic64_read(&vth_enable_events));
	seq_printf(m, "enable_snapshots_missed %lld\n", atomic64_read(&vth_enable_missed));
	seq_printf(m, "enable_snapshots_pid_filtered %lld\n",
		   atomic64_read(&vth_enable_pid_filtered));
	seq_printf(m, "has_tsc_control %d\n", kvm_caps.has_tsc_control);
	seq_printf(m, "multiplier_hook %d\n", vth_mult_hooked);
	nr = smp_load_acquire(&vth_nr_vms);
	for (i = 0; i < nr; i++)
		seq_printf(m, "vm %d %s kept %lld dropped %lld serial %u share %lld%s\n",
			   vth_vms[i].pid, vth_vms[i].name, atomic64_read(&vth_vms[i].kept),
			   atomic64_read(&vth_vms[i].dropped), vth_vms[i].serial,
			   READ_ONCE(vth_vms[i].share),
			   READ_ONCE(vth_vms[i].kvm) && !READ_ONCE(vth_vms[i].gone) ? "" : " retired");
	seq_printf(m, "untracked kept %lld dropped %lld share %lld\n",
		   atomic64_read(&vth_untracked.kept), atomic64_read(&vth_untracked.dropped),
		   READ_ONCE(vth_untracked.share));
	return 0;
}

static int vth_tsc_khz_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%u\n", tsc_khz);
	return 0;
}

#define VTH_SINGLE_FOPS(name)						\
static int vth_##name##_open(struct inode *inode, struct file *file)	\
{									\
	return vth_open_check(file) ?: single_open(file, vth_##name##_show, NULL); \
}									\
static const struct file_operations vth_##name##_fops = {		\
	.owner		= THIS_MODULE,					\
	.open		= vth_##name##_open,				\
	.read		= seq_read,					\
	.llseek		= seq_lseek,					\
	.release	= single_release,				\
}

VTH_SINGLE_FOPS(vms);
VTH_SINGLE_FOPS(stats);
VTH_SINGLE_FOPS(tsc_khz);

static const char *const vth_file_names[] = {
	"tsc_offsets", "vms", "stats", "tsc_khz", NULL
};

static void vth_create_files(struct dentry *dir)
{
	debugfs_create_file("tsc_offsets", 0444, dir, NULL, &vth_offsets_fops);
	debugfs_create_file("vms", 0444, dir, NULL, &vth_vms_fops);
	debugfs_create_file("stats", 0444, dir, NULL, &vth_stats_fops);
	debugfs_create_file("tsc_khz", 0444, dir, NULL, &vth_tsc_khz_fops);
}

/* ---- load and unload -------------------------------------------------- */

static int __init vtrace_host_init(void)
{
	int ret;

	if (capacity == 0 || capacity > VTH_CAPACITY_MAX) {
		pr_err("vtrace_host: capacity must be 1..%u\n", VTH_CAPACITY_MAX);
		return -EINVAL;
	}
	BUILD_BUG_ON(sizeof(struct vth_record) != 88);
	vth_records = vzalloc(array_size(capacity, sizeof(*vth_records)));
	if (!vth_records)
		return -ENOMEM;

	vth_share_fixed = vm_share ? min(vm_share, capacity) : 0;
	raw_spin_lock_irq(&vth_vms_lock);
	vth_shares_update();
	vth_sweep_next = jiffies;
	vth_sweep_live = true;
	raw_spin_unlock_irq(&vth_vms_lock);
	vth_dir = vtrace_debugfs_dir_get();
	if (IS_ERR(vth_dir)) {
		ret = PTR_ERR(vth_dir);
		goto out_free_records;
	}
	vth_create_files(vth_dir);

	ret = tracepoint_probe_register(&__tracepoint_kvm_write_tsc_offset, vth_probe, NULL);
	if (ret)
		goto out_remove_dir;
	vth_hook_multiplier();

	/* After the probe: a VM written to from now on has write records. */
	if (snapshot) {
		ret = vth_snapshot_all(vth_snapshot_vcpu, NULL);
		if (ret)
			goto out_unregister_probe;
	}
	vth_enable_start();
	return 0;

out_unregister_probe:
	vth_unhook_multiplier();
	tracepoint_probe_unregister(&__tracepoint_kvm_write_tsc_offset, vth_probe, NULL);
	tracepoint_synchronize_unregister();
out_remove_dir:
	vtrace_debugfs_dir_put(vth_dir, vth_file_names);
out_free_records:
	vth_sweep_stop();
	vfree(vth_records);
	return ret;
}

static void __exit vtrace_host_exit(void)
{
	vth_enable_stop();
	vth_sweep_stop();
	/* No reader left after this: debugfs waits for those in flight. */
	vtrace_debugfs_dir_put(vth_dir, vth_file_names);
	vth_unhook_multiplier();
	tracepoint_probe_unregister(&__tracepoint_kvm_write_tsc_offset, vth_probe, NULL);
	/* No probe left after this. */
	tracepoint_synchronize_unregister();
	vfree(vth_records);
}

module_init(vtrace_host_init);
module_exit(vtrace_host_exit);
MODULE_DESCRIPTION("vtrace: history of the TSC offsets KVM writes to each vCPU");
MODULE_LICENSE("GPL");
