// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: the guest kernel streams its own ftrace pages into virtio-serial ports. */
/*
 * Design
 * ======
 *
 *   insmod/modprobe (process context)
 *     |  get_task_mm(current)  -> vtg.mm   (borrowed, like vhost's worker)
 *     |  get_fs_root(current)  -> vtg.root (/sys, /dev, /proc of the loader)
 *     |  kern_mount(tracefs)   -> vtg.tracefs, trace_array_get_by_name("vtrace")
 *     v
 *   control thread  (kthread_use_mm(vtg.mm), vm_mmap'ed bounce buffer)
 *     | finds vtrace.ctl / vtrace.cpuK in /sys/class/virtio-ports, opens
 *     | /dev/vportNpM O_NONBLOCK; sends HELLO; then loops:
 *     |   - requests queued by debugfs writers (start, stop, events, status)
 *     |   - commands read from vtrace.ctl (agent mode), ACK/ERROR replies
 *     |   start: trace_clock=x86-tsc, reset, set_event, META_INFO,
 *     |          META_FILE..., drain threads, tracing_on=1, STARTED
 *     |   stop:  tracing_on=0, synchronize_rcu, drain threads empty the
 *     |          frozen rings and exit, events off, EOS (per-CPU counters)
 *     v
 *   drain thread K (one per CPU with a port, unbound)
 *       splice_direct_to_actor(per_cpu/cpuK/trace_pipe_raw, vtg_actor)
 *         vtg_actor: count events/fillers of each page, then
 *                    port->f_op->splice_write(pipe, vtrace.cpuK)
 *       -EAGAIN from the port: retry for port_timeout_ms, then count lost
 *       stop: drain the whole pages (bounded), then read() the last
 *             partial page (online or offline CPU alike)
 *
 * Why a borrowed mm: virtio_console ports and tracefs control files have
 * only ->read/->write with user pointers, so kernel_read()/kernel_write()
 * refuse them, and tracing_set_clock() is not exported.  A kernel thread
 * that adopts a user mm (kthread_use_mm) can mmap an anonymous buffer in it
 * and call those ->read/->write methods with real user pointers, exactly as
 * a process writing "x86-tsc" to trace_clock does.  The mm is that of the
 * process that loaded the module; the module holds it (mmget) until exit.
 * Page data does not go through it: pages move pipe-to-port in the kernel
 * (one memcpy a page in virtio_console's pipe_to_sg); the one exception is
 * the last partial page of a CPU that is offline at stop (stream.c).
 *
 * Paths: the ports are opened as /dev/vportNpM under the loader's root, so
 * /dev must be a devtmpfs (or hold those nodes); /sys and /proc must be
 * mounted there too.  tracefs needs no mount: the module mounts it itself.
 *
 * Locking: every state change runs in the control thread, so start, stop
 * and the ctl port need no lock.  Drain threads own their struct vtg_cpu
 * while tracing; status readers take an unlocked snapshot of the counters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cc_platform.h>
#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/fs_struct.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/trace.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "vtg.h"

char *vtg_prefix = VTRACE_PORT_PREFIX;
module_param_named(prefix, vtg_prefix, charp, 0444);
MODULE_PARM_DESC(prefix, "port name prefix: PREFIX.ctl, PREFIX.cpuK (default vtrace)");

/**
 * struct vtg_uint_param - a module parameter with bounds
 * @val:	the value
 * @min:	smallest value accepted
 * @max:	largest value accepted
 * @zero:	0 is accepted too (it means "off")
 *
 * poll_ms=0 or drain_ms=0 would make a thread loop without sleeping, and a
 * port_timeout_ms of minutes would hold a start for minutes: values out of
 * bounds are refused (insmod fails, a write to the parameter's sysfs file
 * fails with EINVAL), with a message naming the bounds.
 */
struct vtg_uint_param {
	unsigned int *val;
	unsigned int min, max;
	bool zero;
};

static int vtg_param_set(const char *s, const struct kernel_param *kp)
{
	const struct vtg_uint_param *p = kp->arg;
	unsigned int v;
	int ret = kstrtouint(s, 0, &v);

	if (ret)
		return ret;
	if ((v < p->min || v > p->max) && !(v == 0 && p->zero)) {
		pr_warn("%s=%u refused: %u..%u%s\n", kp->name, v, p->min, p->max,
			p->zero ? " or 0" : "");
		return -EINVAL;
	}
	WRITE_ONCE(*p->val, v);
	return 0;
}

static int vtg_param_get(char *buf, const struct kernel_param *kp)
{
	const struct vtg_uint_param *p = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(*p->val));
}

static const struct kernel_param_ops vtg_uint_ops = {
	.set = vtg_param_set,
	.get = vtg_param_get,
};

#define VTG_UINT_PARAM(name, var, lo, hi, z, desc)				\
	static struct vtg_uint_param vtg_param_##name = {			\
		.val = &(var), .min = (lo), .max = (hi), .zero = (z),		\
	};									\
	module_param_cb(name, &vtg_uint_ops, &vtg_param_##name, 0644);		\
	MODULE_PARM_DESC(name, desc)

unsigned int vtg_port_timeout_ms = 2000;
VTG_UINT_PARAM(port_timeout_ms, vtg_port_timeout_ms, 1, 30000, true,
	       "how long a full or unconnected port is retried before data counts as lost (0..30000)");

unsigned int vtg_poll_ms = 20;
VTG_UINT_PARAM(poll_ms, vtg_poll_ms, 1, 10000, false,
	       "control port poll interval while a host message is incomplete (1..10000)");

unsigned int vtg_drain_ms = 20;
VTG_UINT_PARAM(drain_ms, vtg_drain_ms, 1, 600000, false,
	       "sleep between drains of a CPU's ring buffer when the ring cannot wake the drain thread (1..600000)");

unsigned int vtg_drain_max_ms = 1000;
VTG_UINT_PARAM(drain_max_ms, vtg_drain_max_ms, 1, 600000, true,
	       "longest sleep between drains while the ring stays below the instance's buffer_percent (1..600000; 0: no ring wake-ups, drain every drain_ms)");

bool vtg_send_kallsyms = true;
module_param_named(send_kallsyms, vtg_send_kallsyms, bool, 0644);
MODULE_PARM_DESC(send_kallsyms, "send /proc/kallsyms as metadata at start (default 1)");

bool vtg_trust_host;
module_param_named(trust_host, vtg_trust_host, bool, 0444);
MODULE_PARM_DESC(trust_host, "in a confidential-computing guest: accept host commands and send address-bearing metadata (default 0: refused, not sent)");

static char *vtg_events_param = "";
module_param_named(events, vtg_events_param, charp, 0444);
MODULE_PARM_DESC(events, "initial event specification, set_event syntax, comma separated");

struct vtg vtg;

static int vtg_check_abi(void)
{
	BUILD_BUG_ON(sizeof(struct vtrace_msg_hdr) != 24);
	BUILD_BUG_ON(sizeof(struct vtrace_hello) != 16);
	BUILD_BUG_ON(sizeof(struct vtrace_ack) != 16);
	BUILD_BUG_ON(sizeof(struct vtrace_error) != 16);
	BUILD_BUG_ON(sizeof(struct vtrace_buffer_size) != 8);
	BUILD_BUG_ON(sizeof(struct vtrace_status) != 32);
	BUILD_BUG_ON(sizeof(struct vtrace_cpu_stats) != 72);
	BUILD_BUG_ON(sizeof(struct vtrace_meta_info) != 240);
	BUILD_BUG_ON(sizeof(struct vtrace_cpu_info) != 16);
	BUILD_BUG_ON(sizeof(struct vtrace_meta_file) != 24);
	BUILD_BUG_ON(sizeof(struct vtrace_started) != 24);
	return 0;
}

/* The module's own tracefs mount and its "vtrace" instance */
static int vtg_instance_get(void)
{
	struct file_system_type *fs = get_fs_type("tracefs");
	struct file *dir;

	if (!fs)
		return -ENODEV;
	vtg.tracefs = kern_mount(fs);
	module_put(fs->owner);
	if (IS_ERR(vtg.tracefs))
		return PTR_ERR(vtg.tracefs);

	/*
	 * Only a lookup that says the instance does not exist makes it ours:
	 * after any other error (no memory, a permission or mount problem) the
	 * instance may be a user's, and rmmod must never destroy that.
	 */
	dir = file_open_root_mnt(vtg.tracefs, "instances/" VTG_INSTANCE,
				 O_RDONLY | O_DIRECTORY, 0);
	vtg.own_instance = PTR_ERR_OR_ZERO(dir) == -ENOENT;
	if (IS_ERR(dir) && !vtg.own_instance)
		pr_warn("instances/%s: lookup failed (%ld): treated as the user's, kept at unload\n",
			VTG_INSTANCE, PTR_ERR(dir));
	if (!IS_ERR(dir))
		fput(dir);

	vtg.tr = vtg_trace_array_get(VTG_INSTANCE);
	if (!vtg.tr) {
		kern_unmount(vtg.tracefs);
		return -ENOMEM;
	}
	return 0;
}

static void vtg_instance_put(void)
{
	trace_array_put(vtg.tr);
	if (vtg.own_instance && trace_array_destroy(vtg.tr))
		pr_warn("instance %s still in use, left in place\n", VTG_INSTANCE);
	kern_unmount(vtg.tracefs);
}

static int vtg_events_init(void)
{
	char *p;

	vtg.events = kzalloc(VTG_EVENTS_MAX + 1, GFP_KERNEL);
	if (!vtg.events)
		return -ENOMEM;
	strscpy(vtg.events, vtg_events_param, VTG_EVENTS_MAX + 1);
	for (p = vtg.events; *p; p++)
		if (*p == ',')
			*p = '\n';
	return 0;
}

static int vtg_start_thread(void)
{
	vtg.ctl_task = kthread_run(vtg_ctl_thread, NULL, "vtrace-ctl");
	if (IS_ERR(vtg.ctl_task))
		return PTR_ERR(vtg.ctl_task);
	wait_for_completion(&vtg.ready);
	if (vtg.init_err) {
		kthread_stop(vtg.ctl_task);
		return vtg.init_err;
	}
	return 0;
}

static int __init vtrace_guest_init(void)
{
	int ret = vtg_check_abi();

	spin_lock_init(&vtg.req_lock);
	mutex_init(&vtg.events_lock);
	INIT_LIST_HEAD(&vtg.reqs);
	init_waitqueue_head(&vtg.wq);
	init_waitqueue_head(&vtg.drain_wq);
	init_waitqueue_head(&vtg.flushed_wq);
	vtg.subbuf_size = PAGE_SIZE;
	vtg.subbuf_pages = 1;
	init_completion(&vtg.ready);
	vtg.version = VTRACE_PROTO_VERSION;
	vtg.cmd_bucket.tokens = VTG_CMD_BURST;
	vtg.status_bucket.tokens = VTG_CMD_BURST;
	/* a confidential guest does not trust its host (trust model: Documentation/vtrace_guest.rst) */
	vtg.host_untrusted = cc_platform_has(CC_ATTR_GUEST_MEM_ENCRYPT) && !vtg_trust_host;
	if (vtg.host_untrusted)
		pr_info("confidential guest: host commands refused, no kallsyms or printk_formats sent (trust_host=0)\n");

	vtg.mm = get_task_mm(current);
	if (!vtg.mm)
		return -EINVAL;
	get_fs_root(current->fs, &vtg.root);

	ret = -ENOMEM;
	vtg.cpus = kcalloc(nr_cpu_ids, sizeof(*vtg.cpus), GFP_KERNEL);
	if (!vtg.cpus)
		goto out_put_root;
	for (ret = 0; ret < nr_cpu_ids; ret++)
		vtg.cpus[ret].cpu = ret;
	ret = -ENOMEM;
	vtg.rx = kvmalloc(sizeof(struct vtrace_msg_hdr) + VTRACE_CMD_MAX_PAYLOAD, GFP_KERNEL);
	if (!vtg.rx)
		goto out_free_cpus;
	ret = vtg_events_init();
	if (ret)
		goto out_free_rx;
	ret = vtg_instance_get();
	if (ret)
		goto out_free_events;
	ret = vtg_start_thread();
	if (ret)
		goto out_put_instance;
	ret = vtg_debugfs_init();
	if (ret)
		goto out_stop_thread;
	pr_info("ready, %u data port(s) for %u CPU(s)%s\n", vtg.nr_ports,
		nr_cpu_ids, vtg_port_present(&vtg.ctl) ? ", control port" : ", no control port");
	return 0;

out_stop_thread:
	kthread_stop(vtg.ctl_task);
out_put_instance:
	vtg_instance_put();
out_free_events:
	kfree(vtg.events);
out_free_rx:
	kvfree(vtg.rx);
out_free_cpus:
	kfree(vtg.cpus);
out_put_root:
	path_put(&vtg.root);
	mmput(vtg.mm);
	return ret;
}

static void __exit vtrace_guest_exit(void)
{
	vtg_debugfs_exit();
	kthread_stop(vtg.ctl_task);
	vtg_instance_put();
	kfree(vtg.events);
	kvfree(vtg.rx);
	kfree(vtg.cpus);
	path_put(&vtg.root);
	mmput(vtg.mm);
}

module_init(vtrace_guest_init);
module_exit(vtrace_guest_exit);
MODULE_DESCRIPTION("vtrace guest: ftrace pages to the host over virtio-serial");
MODULE_LICENSE("GPL");
