// SPDX-License-Identifier: GPL-2.0
/* vtrace_failinj: test-only fault injector: make a kernel function fail for chosen callers. */
/*
 * Debian's kernels have neither CONFIG_FAULT_INJECTION (failslab,
 * fail_page_alloc) nor CONFIG_FUNCTION_ERROR_INJECTION (fail_function,
 * bpf_override_return).  This module does what fail_function does, with a
 * kprobe of its own: at the entry of @func, for a matching call, it points
 * the saved instruction pointer at a stub that returns @ret, so the
 * function body never runs and its caller sees the failure (as livepatch
 * redirects a function, through the ftrace-based kprobe's IPMODIFY).
 *
 *   insmod vtrace_failinj.ko func=__kmalloc ret=0 gfp_arg=2 \
 *          comm=vtrace- caller=vtrace_guest nth=3 times=1
 *
 * A call matches when it runs in a task (not interrupt) whose comm starts
 * with @comm ("*": any task), its direct caller (the return address at entry) lies in
 * module @caller if one is given, and in function @caller_fn if one is
 * given (built-in or module code: "caller_fn=pipe_to_sg" fails the page
 * virtio_console copies a pipe page into), and, for an allocator (@gfp_arg = which
 * argument holds the gfp flags), it is not __GFP_NOFAIL.  Matching calls
 * are counted in @hits; calls @nth .. @nth + @times - 1 fail (@times 0:
 * every one from @nth), counted in @injected and logged with their call
 * site.  nth, times, hits and injected can be rewritten at run time to
 * re-arm without reloading.
 *
 * Not for production kernels: any function can be made to fail, not only
 * those marked ALLOW_ERROR_INJECTION.
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <asm/pgtable.h>

static char *vtfi_func = "";
module_param_named(func, vtfi_func, charp, 0444);
MODULE_PARM_DESC(func, "function to make fail");

static long vtfi_ret = -ENOMEM;
module_param_named(ret, vtfi_ret, long, 0644);
MODULE_PARM_DESC(ret, "value the failed call returns (0 = NULL; -12 = -ENOMEM or ERR_PTR(-ENOMEM))");

static char *vtfi_comm = "";
module_param_named(comm, vtfi_comm, charp, 0444);
MODULE_PARM_DESC(comm, "only tasks whose comm starts with this (\"*\": any task)");

static char *vtfi_caller = "";
module_param_named(caller, vtfi_caller, charp, 0444);
MODULE_PARM_DESC(caller, "only calls made directly from this module (empty: any caller)");

static char *vtfi_caller_fn = "";
module_param_named(caller_fn, vtfi_caller_fn, charp, 0444);
MODULE_PARM_DESC(caller_fn, "only calls made directly from this function (empty: any)");

static uint vtfi_gfp_arg;
module_param_named(gfp_arg, vtfi_gfp_arg, uint, 0444);
MODULE_PARM_DESC(gfp_arg, "argument (1-3) holding gfp flags: __GFP_NOFAIL calls are never failed");

static ulong vtfi_nth = 1;
module_param_named(nth, vtfi_nth, ulong, 0644);
MODULE_PARM_DESC(nth, "first matching call to fail (1-based)");

static ulong vtfi_times = 1;
module_param_named(times, vtfi_times, ulong, 0644);
MODULE_PARM_DESC(times, "matching calls to fail from nth on (0: all)");

static ulong vtfi_hits;
module_param_named(hits, vtfi_hits, ulong, 0644);
MODULE_PARM_DESC(hits, "matching calls seen");

static ulong vtfi_injected;
module_param_named(injected, vtfi_injected, ulong, 0644);
MODULE_PARM_DESC(injected, "calls made to fail");

static DEFINE_RAW_SPINLOCK(vtfi_lock);
static char vtfi_tag[MODULE_NAME_LEN + 3];

/* Runs instead of the probed function: its caller gets @ret */
static noinline notrace long vtfi_stub(void)
{
	return READ_ONCE(vtfi_ret);
}

static unsigned long vtfi_arg(struct pt_regs *regs, unsigned int n)
{
	switch (n) {
	case 1: return regs->di;
	case 2: return regs->si;
	case 3: return regs->dx;
	}
	return 0;
}

/* Direct caller in module @caller: "%pS" ends with " [module]" there */
static bool vtfi_caller_matches(unsigned long caller)
{
	char sym[KSYM_SYMBOL_LEN];
	size_t n, t = strlen(vtfi_tag);

	if (!*vtfi_caller)
		return true;
	/* cheap first: module text lives in the modules area (x86-64) */
	if (caller < MODULES_VADDR || caller >= MODULES_END)
		return false;
	n = snprintf(sym, sizeof(sym), "%pS", (void *)caller);
	n = min(n, sizeof(sym) - 1);
	return n >= t && !strcmp(sym + n - t, vtfi_tag);
}

/* Direct caller in function @caller_fn: "%ps" is its name, then " [module]" for a module's */
static bool vtfi_caller_fn_matches(unsigned long caller)
{
	size_t len = strlen(vtfi_caller_fn);
	char sym[KSYM_SYMBOL_LEN];

	if (!len)
		return true;
	snprintf(sym, sizeof(sym), "%ps", (void *)caller);
	return !strncmp(sym, vtfi_caller_fn, len) && (!sym[len] || sym[len] == ' ');
}

/*
 * The probed call runs in a task, not in an interrupt.  An int3 kprobe's
 * handler runs as an NMI (exc_int3() calls irqentry_nmi_enter(), which adds
 * NMI_OFFSET + HARDIRQ_OFFSET), so in_task() is false there whatever was
 * interrupted: take that entry's share off and look at the rest.  A kprobe
 * on an ftrace site (or optimised) adds nothing.
 */
static bool vtfi_in_task(void)
{
	unsigned long pc = preempt_count();

	if (pc & NMI_MASK)
		pc -= NMI_OFFSET + HARDIRQ_OFFSET;
	return !(pc & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET));
}

/*
 * kprobe pre-handler at @func's entry (preemption off, may not sleep):
 * regs->sp points at the return address into the caller.
 */
static int vtfi_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long caller = *(unsigned long *)regs->sp;
	bool fail;
	ulong n;

	if (!vtfi_in_task() || (strcmp(vtfi_comm, "*") &&
			   strncmp(current->comm, vtfi_comm, strlen(vtfi_comm))))
		return 0;
	if (vtfi_gfp_arg && (vtfi_arg(regs, vtfi_gfp_arg) & __GFP_NOFAIL))
		return 0;
	if (!vtfi_caller_matches(caller) || !vtfi_caller_fn_matches(caller))
		return 0;
	raw_spin_lock(&vtfi_lock);
	n = ++vtfi_hits;
	fail = n >= vtfi_nth && (!vtfi_times || n < vtfi_nth + vtfi_times);
	if (fail)
		vtfi_injected++;
	raw_spin_unlock(&vtfi_lock);
	if (!fail)
		return 0;
	pr_notice("vtrace_failinj: %s call %lu fails (%ld) for %s, from %pS\n",
		vtfi_func, n, vtfi_ret, current->comm, (void *)caller);
	instruction_pointer_set(regs, (unsigned long)vtfi_stub);
	return 1;
}

/*
 * Never called (vtfi_pre() returns 1 when it redirects, so no single step
 * follows), but a kprobe with a post-handler is never optimised into a
 * jump, which would ignore vtfi_pre()'s new instruction pointer (functions
 * of kernel/trace/ have no ftrace site, so their kprobe is an int3 the
 * optimiser would replace), and an ftrace-based one gets IPMODIFY: as the
 * kernel's fail_function does.
 */
static void vtfi_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

static struct kprobe vtfi_kp = {
	.pre_handler = vtfi_pre,
	.post_handler = vtfi_post,
};

static int __init vtrace_failinj_init(void)
{
	int ret;

	if (!*vtfi_func || !*vtfi_comm ||
	    (!strcmp(vtfi_comm, "*") && !*vtfi_caller && !*vtfi_caller_fn)) {
		pr_err("vtrace_failinj: func= and comm= (or comm=* with caller= or caller_fn=) are required\n");
		return -EINVAL;
	}
	if (vtfi_gfp_arg > 3)
		return -EINVAL;
	snprintf(vtfi_tag, sizeof(vtfi_tag), "[%s]", vtfi_caller);
	vtfi_kp.symbol_name = vtfi_func;
	ret = register_kprobe(&vtfi_kp);
	if (ret) {
		pr_err("vtrace_failinj: cannot probe %s: %d\n", vtfi_func, ret);
		return ret;
	}
	pr_info("vtrace_failinj: %s fails with %ld for comm %s*, caller %s%s%s, calls %lu+%lu\n",
		vtfi_func, vtfi_ret, vtfi_comm, *vtfi_caller ? vtfi_caller : "any",
		*vtfi_caller_fn ? " in " : "", vtfi_caller_fn, vtfi_nth, vtfi_times);
	return 0;
}

static void __exit vtrace_failinj_exit(void)
{
	unregister_kprobe(&vtfi_kp);
	pr_info("vtrace_failinj: %s: %lu matching calls, %lu failed\n", vtfi_func, vtfi_hits,
		vtfi_injected);
}

module_init(vtrace_failinj_init);
module_exit(vtrace_failinj_exit);
MODULE_DESCRIPTION("vtrace test-only fault injector (kprobe that makes a function fail)");
MODULE_LICENSE("GPL");
