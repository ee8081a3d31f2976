// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: the control thread, which owns the borrowed mm and every state change. */
/*
 *   debugfs writer --vtg_request()--> vtg.reqs --+
 *   (killable sleep on req->done)                v
 *                                   control thread: kthread_use_mm(vtg.mm)
 *   vtrace.ctl (host commands) -- port wakes us --> start/stop/events/...
 *                                                    replies on vtrace.ctl
 *
 * Serializing every start, stop and event change in this one thread makes
 * them atomic with respect to each other, and keeps all ctl writes in the
 * thread that has the bounce buffer.  At exit (rmmod) the thread stops a
 * running session (flush + EOS), fails queued requests, closes every file
 * synchronously and unmaps its buffer.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "compat.h"
#include "vtg.h"

static void vtg_req_put(struct vtg_req *req)
{
	if (!refcount_dec_and_test(&req->ref))
		return;
	kfree(req->arg);
	kfree(req->out);
	kfree(req);
}

/* The requester gave up: take the request back if the thread has not */
static void vtg_req_abandon(struct vtg_req *req)
{
	bool queued;

	spin_lock(&vtg.req_lock);
	queued = !list_empty(&req->node);
	if (queued)
		list_del_init(&req->node);
	spin_unlock(&vtg.req_lock);
	if (queued)
		vtg_req_put(req);
	vtg_req_put(req);
}

/**
 * vtg_request() - have the control thread do something, and wait for it
 * @op:		what to do
 * @arg:	VTG_OP_EVENTS: the specification (copied), else NULL
 * @val:	VTG_OP_BUFFER_SIZE: KiB
 * @timeout:	jiffies to wait at most (MAX_SCHEDULE_TIMEOUT: no limit)
 * @out:	VTG_OP_STATUS_TEXT: the text (the caller frees it), else NULL
 *
 * The wait is killable: a user stuck behind a slow control thread can
 * leave (the thread still carries the request out).  Process context.
 *
 * Return: the result, -ETIMEDOUT when @timeout passed, -EINTR when killed.
 */
int vtg_request(enum vtg_op op, const char *arg, unsigned long val, long timeout, char **out)
{
	struct vtg_req *req = kzalloc(sizeof(*req), GFP_KERNEL);
	long left;
	int ret;

	if (!req)
		return -ENOMEM;
	if (arg) {
		req->arg = kstrdup(arg, GFP_KERNEL);
		if (!req->arg) {
			kfree(req);
			return -ENOMEM;
		}
	}
	req->op = op;
	req->val = val;
	refcount_set(&req->ref, 2);
	init_completion(&req->done);
	spin_lock(&vtg.req_lock);
	list_add_tail(&req->node, &vtg.reqs);
	spin_unlock(&vtg.req_lock);
	wake_up(&vtg.wq);
	left = wait_for_completion_killable_timeout(&req->done, timeout);
	if (left <= 0) {
		vtg_req_abandon(req);
		return left ? -EINTR : -ETIMEDOUT;
	}
	ret = req->ret;
	if (out) {
		*out = req->out;
		req->out = NULL;
	}
	vtg_req_put(req);
	return ret;
}

static int vtg_do_request(struct vtg_req *req)
{
	switch (req->op) {
	case VTG_OP_START:
		return vtg_start();
	case VTG_OP_STOP:
		return vtg_stop();
	case VTG_OP_EVENTS:
		return vtg_set_events(req->arg);
	case VTG_OP_BUFFER_SIZE:
		return vtg_set_buffer_size(req->val);
	case VTG_OP_STATUS_TEXT:
		req->out = vtg_status_text(&req->out_len);
		return req->out ? 0 : -ENOMEM;
	}
	return -EINVAL;
}

static struct vtg_req *vtg_next_request(void)
{
	struct vtg_req *req;

	spin_lock(&vtg.req_lock);
	req = list_first_entry_or_null(&vtg.reqs, struct vtg_req, node);
	if (req)
		list_del_init(&req->node);
	spin_unlock(&vtg.req_lock);
	return req;
}

static void vtg_run_requests(bool fail)
{
	struct vtg_req *req;

	while ((req = vtg_next_request())) {
		WRITE_ONCE(vtg.busy, "a request from debugfs");
		req->ret = fail ? -ESHUTDOWN : vtg_do_request(req);
		WRITE_ONCE(vtg.busy, NULL);
		complete(&req->done);
		vtg_req_put(req);
	}
}

static bool vtg_has_requests(void)
{
	bool ret;

	spin_lock(&vtg.req_lock);
	ret = !list_empty(&vtg.reqs);
	spin_unlock(&vtg.req_lock);
	return ret;
}

/*
 * @len bytes in the borrowed mm, populated: no fault later in a drain
 * thread.  Shared anonymous memory (shmem), not private: the loader may
 * live on and die, and if the OOM killer takes it, the OOM reaper empties
 * the private memory of its mm and marks the mm unstable, so that every
 * later fault in a private mapping fails (check_stable_address_space()):
 * every read and write through the buffers would then fail with -EFAULT
 * until the module is reloaded.  The reaper leaves shared mappings alone,
 * and their faults are not refused.  A child the loader forks does not get
 * the mapping (VM_DONTCOPY, as MADV_DONTFORK): shared, it could otherwise
 * write into what the module hands to tracefs and the ports.
 */
static char __user *vtg_map(size_t len)
{
	unsigned long addr = vm_mmap(NULL, 0, len, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, 0);
	struct vm_area_struct *vma;

	if (IS_ERR_VALUE(addr))
		return ERR_PTR((long)addr);
	mmap_write_lock(vtg.mm);
	vma = find_vma(vtg.mm, addr);
	if (vma && vma->vm_start == addr)
		vtg_vm_flags_set(vma, VM_DONTCOPY);
	mmap_write_unlock(vtg.mm);
	return (char __user *)addr;
}

/* The bounce buffer, for everything the control thread reads and writes */
static int vtg_map_ubuf(void)
{
	char __user *p = vtg_map(VTG_UBUF_SIZE);

	if (IS_ERR(p))
		return PTR_ERR(p);
	vtg.ubuf = p;
	return 0;
}

/*
 * A sub-buffer's room for each CPU with a data port (the stop's read() of
 * its last sub-buffer, stream.c): sized by the ports, not by the possible
 * CPUs (a guest started with maxcpus=64 and two vCPUs has two ports, or
 * few more).
 */
static int vtg_map_cpu_ubufs(void)
{
	unsigned int cpu, k = 0;
	char __user *p;

	if (!vtg.nr_ports)
		return 0;
	p = vtg_map(vtg.nr_ports * VTG_SUBBUF_MAX);
	if (IS_ERR(p))
		return PTR_ERR(p);
	vtg.cpu_ubuf = p;
	vtg.cpu_ubufs = vtg.nr_ports;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (vtg_port_present(&vtg.cpus[cpu].port))
			vtg.cpus[cpu].ubuf = p + k++ * VTG_SUBBUF_MAX;
	return 0;
}

static void vtg_unmap_cpu_ubufs(void)
{
	if (vtg.cpu_ubufs)
		vm_munmap((unsigned long)vtg.cpu_ubuf, vtg.cpu_ubufs * VTG_SUBBUF_MAX);
	vtg.cpu_ubufs = 0;
}

static void vtg_unmap_ubuf(void)
{
	vm_munmap((unsigned long)vtg.ubuf, VTG_UBUF_SIZE);
}

static int vtg_ctl_setup(void)
{
	int ret;

	kthread_use_mm(vtg.mm);
	ret = vtg_map_ubuf();
	if (ret)
		goto out_unuse_mm;
	ret = vtg_ports_open();
	if (ret)
		goto out_unmap_ubuf;
	ret = vtg_map_cpu_ubufs();
	if (ret)
		goto out_close_ports;
	vtg_instance_defaults();
	vtg_agent_watch();
	return 0;

out_close_ports:
	vtg_ports_close();
out_unmap_ubuf:
	vtg_unmap_ubuf();
out_unuse_mm:
	kthread_unuse_mm(vtg.mm);
	return ret;
}

static void vtg_ctl_teardown(void)
{
	if (vtg.state == VTRACE_STATE_TRACING)
		vtg_stop();
	vtg_run_requests(true);
	vtg_agent_unwatch();
	vtg_ports_close();
	vtg_unmap_cpu_ubufs();
	vtg_unmap_ubuf();
	kthread_unuse_mm(vtg.mm);
}

static void vtg_wait_for_stop(void)
{
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
}

/**
 * vtg_ctl_thread() - the control thread: requests, host commands, teardown
 * @unused:	NULL
 *
 * Sets up (buffers, ports), completes vtg.ready with vtg.init_err, then
 * runs queued requests and host commands until kthread_stop().
 *
 * Return: 0.
 */
int vtg_ctl_thread(void *unused)
{
	vtg.init_err = vtg_ctl_setup();
	complete(&vtg.ready);
	if (vtg.init_err) {
		vtg_wait_for_stop();
		return 0;
	}
	/*
	 * after insmod returned: a host that does not listen must not delay it;
	 * one not connected yet (agent mode: vtrace record connects later) sends
	 * its HELLO itself, and ours would only time out (a warning at every load)
	 */
	if (vtg_port_present(&vtg.ctl) && vtg_port_connected(&vtg.ctl))
		vtg_send_hello();
	while (!kthread_should_stop()) {
		vtg_run_requests(false);
		vtg_agent_poll();
		wait_event_interruptible_timeout(vtg.wq,
						 vtg_has_requests() || vtg_poller_woken(&vtg.ctl_poller) ||
						 kthread_should_stop(),
						 vtg_agent_timeout());
	}
	vtg_ctl_teardown();
	return 0;
}
