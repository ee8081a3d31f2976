// SPDX-License-Identifier: GPL-2.0
/* vtrace_irqoff: test-only: keep interrupts off on one CPU for a while, periodically. */
/*
 * The test bed's late wake-up phases inject causes of timer latency on
 * purpose; this one is a CPU that takes its interrupts late.  On the host
 * it delays the hrtimer KVM arms for a vCPU's guest timer (the host fires
 * the guest's timer late); inside a guest it delays the guest's own local
 * timer interrupt (the guest takes its interrupt late).
 *
 *   insmod vtrace_irqoff.ko cpu=1 off_us=3000 period_ms=20 duration_ms=2000
 *
 * A kthread bound to @cpu ("vtrace_irqoff/CPU", SCHED_FIFO at the lowest
 * priority, so that it starts each section when due) runs, every
 * @period_ms for @duration_ms from the load:
 *
 *   local_irq_disable(); spin until @off_us have passed (ktime_get());
 *   local_irq_enable();
 *
 * and sleeps between sections (an hrtimer sleep, woken early by rmmod).  Once the duration is over it logs the sections it ran and
 * sleeps until rmmod; @sections counts them meanwhile.
 *
 * The kthread never catches up on missed periods: after each section it
 * sleeps until the period's next start, and at least for the period less
 * the section, armed relative to the moment it sleeps (an absolute
 * deadline already past does not sleep at all).  So the CPU is never held
 * more than half the time.  A version that slept until absolute deadlines
 * fell behind them in a nested guest on a loaded test bed (3,000 sections
 * in 60 s), so never slept, and held the guest's CPU for 52 s on a kernel
 * without forced preemption: a soft lockup and an RCU stall.
 *
 * @off_us is at most OFF_MAX_US (10 ms): far below the kernel's own
 * watchdogs of irqs-off stretches (the hard lockup detector's 10 s, the
 * soft lockup's 20 s, RCU's stall warning's 21 s), so a section never
 * trips them; and at most half the period, so the CPU keeps taking its
 * interrupts half of the time.  Not for production kernels.
 */
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/irqflags.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched.h>

#define OFF_MAX_US	10000		/* one irqs-off section, at most */
#define PERIOD_MAX_MS	10000
#define DURATION_MAX_MS	600000		/* ten minutes */

static int vtio_cpu = -1;
module_param_named(cpu, vtio_cpu, int, 0444);
MODULE_PARM_DESC(cpu, "CPU whose interrupts are kept off (required)");

static uint vtio_off_us = 1000;
module_param_named(off_us, vtio_off_us, uint, 0444);
MODULE_PARM_DESC(off_us, "us of each irqs-off section (1-10000, at most half the period)");

static uint vtio_period_ms = 10;
module_param_named(period_ms, vtio_period_ms, uint, 0444);
MODULE_PARM_DESC(period_ms, "ms from one section's start to the next's (1-10000)");

static uint vtio_duration_ms = 1000;
module_param_named(duration_ms, vtio_duration_ms, uint, 0444);
MODULE_PARM_DESC(duration_ms, "ms from the load during which sections start (1-600000)");

static ulong vtio_sections;
module_param_named(sections, vtio_sections, ulong, 0444);
MODULE_PARM_DESC(sections, "irqs-off sections run so far");

static struct task_struct *vtio_thread;

/* keep this CPU's interrupts off for @us by the clock */
static void vtio_section(uint us)
{
	ktime_t end;

	local_irq_disable();
	end = ktime_add_us(ktime_get(), us);
	while (ktime_before(ktime_get(), end))
		cpu_relax();
	local_irq_enable();
}

/* sleep for @ns from now (KTIME_MAX: until woken) or until rmmod; true when told to stop */
static bool vtio_sleep(ktime_t ns)
{
	set_current_state(TASK_INTERRUPTIBLE);
	if (kthread_should_stop()) {
		__set_current_state(TASK_RUNNING);
		return true;
	}
	schedule_hrtimeout_range(&ns, 0, HRTIMER_MODE_REL);
	return kthread_should_stop();
}

static int vtio_fn(void *unused)
{
	ktime_t start = ktime_get(), next = start;
	ktime_t end = ktime_add_ms(start, vtio_duration_ms);
	ktime_t least = ktime_add_us(0, (u64)vtio_period_ms * 1000 - vtio_off_us);

	sched_set_fifo_low(current);
	while (!kthread_should_stop() && ktime_before(next, end)) {
		ktime_t wait;

		vtio_section(vtio_off_us);
		WRITE_ONCE(vtio_sections, vtio_sections + 1);
		next = ktime_add_ms(next, vtio_period_ms);
		wait = ktime_sub(next, ktime_get());
		if (wait < least) {	/* late: no catching up */
			wait = least;
			next = ktime_add(ktime_get(), least);
		}
		if (vtio_sleep(wait))
			return 0;
	}
	pr_info("vtrace_irqoff: cpu %d: %lu sections of %u us with irqs off, every %u ms, over %lld ms\n",
		vtio_cpu, vtio_sections, vtio_off_us, vtio_period_ms,
		ktime_ms_delta(ktime_get(), start));
	/* done: wait for kthread_stop(), which must find the thread alive */
	while (!vtio_sleep(KTIME_MAX))
		;
	return 0;
}

static int vtio_check_params(void)
{
	if (vtio_cpu < 0 || vtio_cpu >= nr_cpu_ids || !cpu_online(vtio_cpu)) {
		pr_err("vtrace_irqoff: cpu=%d is not an online CPU: give cpu=N\n", vtio_cpu);
		return -EINVAL;
	}
	if (!vtio_period_ms || vtio_period_ms > PERIOD_MAX_MS ||
	    !vtio_duration_ms || vtio_duration_ms > DURATION_MAX_MS) {
		pr_err("vtrace_irqoff: period_ms=%u or duration_ms=%u out of range (1-%u, 1-%u)\n",
		       vtio_period_ms, vtio_duration_ms, PERIOD_MAX_MS, DURATION_MAX_MS);
		return -EINVAL;
	}
	if (!vtio_off_us || vtio_off_us > OFF_MAX_US ||
	    (u64)vtio_off_us * 2 > (u64)vtio_period_ms * 1000) {
		pr_err("vtrace_irqoff: off_us=%u out of range (1-%u, at most half of period_ms=%u)\n",
		       vtio_off_us, OFF_MAX_US, vtio_period_ms);
		return -EINVAL;
	}
	return 0;
}

static int __init vtrace_irqoff_init(void)
{
	int ret = vtio_check_params();

	if (ret)
		return ret;
	vtio_thread = kthread_create_on_cpu(vtio_fn, NULL, vtio_cpu, "vtrace_irqoff/%u");
	if (IS_ERR(vtio_thread))
		return PTR_ERR(vtio_thread);
	wake_up_process(vtio_thread);
	return 0;
}

static void __exit vtrace_irqoff_exit(void)
{
	kthread_stop(vtio_thread);
}

module_init(vtrace_irqoff_init);
module_exit(vtrace_irqoff_exit);
MODULE_DESCRIPTION("vtrace test-only irqs-off injector");
MODULE_LICENSE("GPL");
