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
 *         slot = atomic64_inc(next) - 1            | walk slots 0, 1, ...
 *         slot >= capacity ? dropped++             | stop at the first
 *         fill vth_records[slot]                   | slot not yet ready
 *         smp_store_release(ready, 1) ------------>| smp_load_acquire(ready)
 *
 *   vth_records: [0][1][2] ... [capacity-1]   vmalloc'ed at load, never
 *                 ^ oldest                    reused: a full array drops
 *                                             new records and counts them
 *
 * Writers never wait for anything: a slot is claimed with one atomic
 * increment and published with a release store; readers never block
 * writers.  A record is never overwritten.
 *
 * Identity: every call site of kvm_vcpu_write_tsc_offset() runs with the
 * vCPU loaded on this CPU (vcpu_load() in the vCPU ioctls and in
 * kvm_arch_vcpu_postcreate(), kvm_sched_in() before kvm_arch_vcpu_load(),
 * vcpu_enter_guest()), so kvm_get_running_vcpu() is the vCPU being written.
 * The probe checks that its vcpu_id matches the tracepoint's and counts a
 * mismatch (or no running vCPU) as an anomaly, recording the write with an
 * unknown VM ("?", vcpu_idx -1) rather than dropping it.
 *
 * VMs that existed before the module loaded: after the probe is live, the
 * module walks KVM's debugfs directory (looked up with debugfs_lookup("kvm")) and
 * appends one "snapshot" record per vCPU holding the offset KVM has at that
 * moment.  Holding the directory's inode lock keeps every VM in it alive:
 * kvm_destroy_vm() removes the VM's debugfs directory, which needs that
 * lock, before it frees the vCPUs.
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
 * Unload: debugfs files go first (debugfs drains readers in flight), then
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
#include <asm/tsc.h>
#include <linux/vtrace.h>

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

/* Header line of the vms file (documented in Documentation/vtrace_host.rst) */
#define VTH_VMS_HEADER	"# pid vm vcpus first_host_tsc last_host_tsc records flags"

static unsigned int capacity = 1U << 16;
module_param(capacity, uint, 0444);
MODULE_PARM_DESC(capacity, "records kept before new ones are dropped (default 65536)");

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
 * @pad:	zero
 * @ready:	set (release) once every other field is written
 * @vm:		name of the VM's directory under KVM's debugfs, "?" if unknown
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
	u8 pad[2];
	int ready;
	char vm[VTH_VM_NAME_LEN];
};

static struct vth_record *vth_records;
static atomic64_t vth_next = ATOMIC64_INIT(0);	/* slots claimed so far */
static atomic64_t vth_dropped = ATOMIC64_INIT(0);
static atomic64_t vth_anomalies = ATOMIC64_INIT(0);
static atomic64_t vth_snapshots = ATOMIC64_INIT(0);
static struct dentry *vth_dir;
static bool vth_mult_hooked;

/* ---- writers ---------------------------------------------------------- */

/*
 * Claim the next free slot, or count a drop.  Runs in the tracepoint probe
 * (IRQs off, raw spinlock held by KVM): one atomic, nothing else.
 */
static struct vth_record *vth_claim(void)
{
	s64 slot = atomic64_inc_return(&vth_next) - 1;

	if (slot >= capacity) {
		atomic64_inc(&vth_dropped);
		return NULL;
	}
	return &vth_records[slot];
}

/* Make a filled record visible to readers.  Runs in the tracepoint probe. */
static void vth_publish(struct vth_record *rec)
{
	smp_store_release(&rec->ready, 1);
}

/*
 * Copy the VM's identity and the multiplier of @vcpu into @rec.  Runs in
 * the tracepoint probe: the VM is alive (its vCPU is loaded here) and its
 * debugfs dentry, set at VM creation, stays until kvm_destroy_vm().
 */
static void vth_fill_vcpu(struct vth_record *rec, struct kvm_vcpu *vcpu)
{
	struct dentry *dent = vcpu->kvm->debugfs_dentry;

	if (IS_ERR_OR_NULL(dent))
		strscpy(rec->vm, "-", sizeof(rec->vm));
	else
		strscpy(rec->vm, dent->d_name.name, sizeof(rec->vm));
	rec->vcpu_idx = vcpu->vcpu_idx;
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
 * Tracepoint probe of kvm_write_tsc_offset.  Called by
 * kvm_vcpu_write_tsc_offset() just before KVM stores @next, often under
 * kvm->arch.tsc_write_lock (a raw spinlock) with IRQs off: it must not
 * sleep, allocate or print.
 */
static void vth_probe(void *data, unsigned int vcpu_id, u64 prev, u64 next)
{
	struct kvm_vcpu *vcpu = kvm_get_running_vcpu();
	struct vth_record *rec = vth_claim();

	if (!rec)
		return;
	rec->host_tsc = rdtsc_ordered();
	rec->prev = prev;
	rec->offset = next;
	rec->pid = current->tgid;
	rec->vcpu_id = vcpu_id;
	rec->kind = VTH_KIND_WRITE;
	if (vcpu && vcpu->vcpu_id == vcpu_id) {
		vth_fill_vcpu(rec, vcpu);
	} else {
		atomic64_inc(&vth_anomalies);
		strscpy(rec->vm, "?", sizeof(rec->vm));
		rec->vcpu_idx = -1;
		rec->multiplier = kvm_caps.default_tsc_scaling_ratio;
		rec->frac_bits = kvm_caps.tsc_scaling_ratio_frac_bits;
	}
	vth_publish(rec);
}

/*
 * kprobe pre-handler on the entry of kvm_vcpu_write_tsc_multiplier(vcpu,
 * l1_multiplier), before KVM stores the multiplier.  Runs with preemption
 * off, maybe under KVM's locks: it must not sleep, allocate or print.
 */
static int vth_mult_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct kvm_vcpu *vcpu = (struct kvm_vcpu *)regs->di;
	struct vth_record *rec;

	/*
	 * kvm_arch_vcpu_create() loads the vCPU and sets its multiplier before
	 * the vCPU has an index (or may still fail): skip it, the creation
	 * offset write that follows carries the multiplier.
	 */
	if (!vcpu || vcpu != kvm_get_running_vcpu() ||
	    kvm_get_vcpu(vcpu->kvm, vcpu->vcpu_idx) != vcpu)
		return 0;
	rec = vth_claim();
	if (!rec)
		return 0;
	rec->host_tsc = rdtsc_ordered();
	rec->offset = READ_ONCE(vcpu->arch.l1_tsc_offset);
	rec->prev = rec->offset;
	rec->pid = current->tgid;
	rec->vcpu_id = vcpu->vcpu_id;
	rec->kind = VTH_KIND_MULTIPLIER;
	vth_fill_vcpu(rec, vcpu);
	rec->multiplier = regs->si;
	vth_publish(rec);
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

/* Append a snapshot record of @vcpu; its VM is kept alive by the caller. */
static void vth_snapshot_vcpu(struct kvm *kvm, struct kvm_vcpu *vcpu)
{
	struct vth_record *rec = vth_claim();

	if (!rec)
		return;
	rec->host_tsc = rdtsc_ordered();
	rec->offset = READ_ONCE(vcpu->arch.l1_tsc_offset);
	rec->prev = rec->offset;
	rec->vcpu_id = vcpu->vcpu_id;
	rec->kind = VTH_KIND_SNAPSHOT;
	vth_fill_vcpu(rec, vcpu);
	/* Set by KVM's creation uevent; the name "PID-FD" has it too */
	rec->pid = kvm->userspace_pid;
	if (!rec->pid && sscanf(rec->vm, "%d-", &rec->pid) != 1)
		rec->pid = 0;
	vth_publish(rec);
	atomic64_inc(&vth_snapshots);
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

static void vth_snapshot_vm(struct dentry *vmdir)
{
	struct kvm *kvm = vth_kvm_of_dir(vmdir);
	struct kvm_vcpu *vcpu;
	unsigned long i;

	if (!kvm)
		return;
	kvm_for_each_vcpu(i, vcpu, kvm)
		vth_snapshot_vcpu(kvm, vcpu);
}

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
		if (n < max)
			out[n] = dget(child);
		n++;
	}
	spin_unlock(&dir->d_lock);
	return n;
}

static int vth_snapshot_all(void)
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
		vth_snapshot_vm(vms[i]);
		dput(vms[i]);
	}
	kfree(vms);
out_unlock:
	inode_unlock_shared(d_inode(dir));
	dput(dir);
	return ret;
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

/* Stands for the "# dropped" line that ends a full history */
#define VTH_DROPPED_TOKEN ((void *)2)

/*
 * tsc_offsets: position 0 is the header, position n + 1 is slot n; once
 * every slot is used and records were dropped, position capacity + 1 is a
 * "# dropped" line, so that a reader of the file alone knows the history
 * stops there.
 */
static void *vth_offsets_at(loff_t pos)
{
	if (pos == 0)
		return SEQ_START_TOKEN;
	if (pos == (loff_t)capacity + 1 && atomic64_read(&vth_dropped))
		return VTH_DROPPED_TOKEN;
	return vth_get(pos - 1);
}

static void *vth_offsets_start(struct seq_file *m, loff_t *pos)
{
	return vth_offsets_at(*pos);
}

static void *vth_offsets_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return vth_offsets_at(*pos);
}

static void vth_offsets_stop(struct seq_file *m, void *v)
{
}

static int vth_offsets_show(struct seq_file *m, void *v)
{
	const struct vth_record *rec = v;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, VTRACE_OFFSETS_HEADER "\n");
		return 0;
	}
	if (v == VTH_DROPPED_TOKEN) {
		seq_printf(m, VTRACE_OFFSETS_DROPPED " %lld\n", atomic64_read(&vth_dropped));
		return 0;
	}
	seq_printf(m, "%td %llu %d %s %u %d %lld %lld %llu %u %s\n",
		   rec - vth_records, rec->host_tsc, rec->pid, rec->vm,
		   rec->vcpu_id, rec->vcpu_idx, (s64)rec->prev, (s64)rec->offset,
		   rec->multiplier, rec->frac_bits, vth_kind_name(rec));
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
	return vth_open_check(file) ?: seq_open(file, &vth_offsets_sops);
}

static const struct file_operations vth_offsets_fops = {
	.owner		= THIS_MODULE,
	.open		= vth_offsets_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= seq_release,
};

/**
 * struct vth_vm - one line of the vms file, built at read time
 * @pid:	userspace tgid of the VM
 * @name:	KVM debugfs directory name
 * @first:	host TSC of its first record
 * @last:	host TSC of its last record
 * @records:	records of this VM
 * @snapshot:	the VM existed when the module loaded
 * @vcpus:	vcpu_idx values seen
 */
struct vth_vm {
	s32 pid;
	char name[VTH_VM_NAME_LEN];
	u64 first;
	u64 last;
	u64 records;
	bool snapshot;
	DECLARE_BITMAP(vcpus, KVM_MAX_VCPUS);
};

struct vth_vm_table {
	struct vth_vm *vm;
	unsigned int nr;
	unsigned int size;
};

/* The table entry of @rec's VM, added if new; NULL when out of memory. */
static struct vth_vm *vth_vm_find(struct vth_vm_table *t, const struct vth_record *rec)
{
	struct vth_vm *vm;
	unsigned int i;

	for (i = t->nr; i-- > 0; )
		if (t->vm[i].pid == rec->pid && !strcmp(t->vm[i].name, rec->vm))
			return &t->vm[i];
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
	vm->pid = rec->pid;
	strscpy(vm->name, rec->vm, sizeof(vm->name));
	vm->first = rec->host_tsc;
	return vm;
}

static int vth_vm_account(struct vth_vm_table *t, const struct vth_record *rec)
{
	struct vth_vm *vm = vth_vm_find(t, rec);

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

static int vth_vms_show(struct seq_file *m, void *v)
{
	struct vth_vm_table t = {};
	const struct vth_record *rec;
	unsigned int i;
	int ret = 0;
	u64 idx;

	for (idx = 0; (rec = vth_get(idx)); idx++) {
		ret = vth_vm_account(&t, rec);
		if (ret)
			goto out_free_table;
	}
	seq_puts(m, VTH_VMS_HEADER "\n");
	for (i = 0; i < t.nr; i++)
		seq_printf(m, "%d %s %u %llu %llu %llu %s\n", t.vm[i].pid, t.vm[i].name,
			   bitmap_weight(t.vm[i].vcpus, KVM_MAX_VCPUS), t.vm[i].first,
			   t.vm[i].last, t.vm[i].records, t.vm[i].snapshot ? "snapshot" : "-");
out_free_table:
	kfree(t.vm);
	return ret;
}

static int vth_stats_show(struct seq_file *m, void *v)
{
	u64 claimed = atomic64_read(&vth_next);

	seq_printf(m, "kept %llu\n", min_t(u64, claimed, capacity));
	seq_printf(m, "dropped %lld\n", atomic64_read(&vth_dropped));
	seq_printf(m, "capacity %u\n", capacity);
	seq_printf(m, "anomalies %lld\n", atomic64_read(&vth_anomalies));
	seq_printf(m, "snapshots %lld\n", atomic64_read(&vth_snapshots));
	seq_printf(m, "has_tsc_control %d\n", kvm_caps.has_tsc_control);
	seq_printf(m, "multiplier_hook %d\n", vth_mult_hooked);
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
	BUILD_BUG_ON(sizeof(struct vth_record) != 80);
	vth_records = vzalloc(array_size(capacity, sizeof(*vth_records)));
	if (!vth_records)
		return -ENOMEM;

	vth_dir = debugfs_create_dir("vtrace", NULL);
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
		ret = vth_snapshot_all();
		if (ret)
			goto out_unregister_probe;
	}
	return 0;

out_unregister_probe:
	vth_unhook_multiplier();
	tracepoint_probe_unregister(&__tracepoint_kvm_write_tsc_offset, vth_probe, NULL);
	tracepoint_synchronize_unregister();
out_remove_dir:
	debugfs_remove_recursive(vth_dir);
out_free_records:
	vfree(vth_records);
	return ret;
}

static void __exit vtrace_host_exit(void)
{
	/* No reader left after this: debugfs waits for those in flight. */
	debugfs_remove_recursive(vth_dir);
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
