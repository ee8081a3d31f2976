// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: the one way the module sleeps on a file: an entry on its wait queue. */
/*
 * Three things wait on a file without blocking in it: a writer on a port
 * that answered -EAGAIN (ports.c), the control thread on vtrace.ctl
 * (agent.c) and a drain thread on its CPU's trace_pipe_raw (stream.c).
 * Each hands the file's poll() a poll table whose queue function puts one
 * entry of ours on the queue poll() names (once), the way vhost_poll does.
 * When the file's driver wakes that queue, the entry's function sets
 * @woken and wakes the sleeper: the poller's own task, or a wait queue the
 * sleeper waits on with other conditions (the control thread's vtg.wq).
 *
 *   vtg_poller_add(p, file) --vfs_poll--> queue(): add_wait_queue(wqh, &p->wait)
 *   driver: wake_up(wqh) --> vtg_poller_wake(): p->woken = true, wake the sleeper
 *   vtg_poller_del(p): remove_wait_queue() (before the file is closed)
 *
 * Calls no other file of the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/wait.h>

#include "vtg.h"

/*
 * Wait queue function of a poller.  Runs in the file's wake-up path (an
 * interrupt, the ring buffer's irq_work) with the queue's lock held:
 * sets a flag and wakes the sleeper, nothing more.
 */
static int vtg_poller_wake(struct wait_queue_entry *wait, unsigned int mode, int sync, void *key)
{
	struct vtg_poller *p = container_of(wait, struct vtg_poller, wait);

	WRITE_ONCE(p->woken, true);
	if (p->wake)
		wake_up(p->wake);
	else
		wake_up_process(wait->private);
	return 0;
}

/* poll_table queue function: put the poller on the file's wait queue, once */
static void vtg_poller_queue(struct file *file, wait_queue_head_t *wqh, poll_table *pt)
{
	struct vtg_poller *p = container_of(pt, struct vtg_poller, pt);

	if (p->wqh)
		return;
	p->wqh = wqh;
	add_wait_queue(wqh, &p->wait);
}

/**
 * vtg_poller_init() - prepare a poller, not queued, not woken
 * @p:		the poller
 * @wake:	the wait queue to wake when the file wakes the poller, or
 *		NULL: wake the calling task
 *
 * Context: process context; @p must not be queued.
 */
void vtg_poller_init(struct vtg_poller *p, wait_queue_head_t *wake)
{
	init_waitqueue_func_entry(&p->wait, vtg_poller_wake);
	p->wait.private = current;
	init_poll_funcptr(&p->pt, vtg_poller_queue);
	p->wqh = NULL;
	p->wake = wake;
	p->woken = false;
}

/**
 * vtg_poller_add() - poll a file and queue the poller where it wakes its readers and writers
 * @p:		the poller (vtg_poller_init())
 * @file:	a file with ->poll
 *
 * The poller stays queued (vtg_poller_queued()) until vtg_poller_del().
 *
 * Context: process context.
 * Return: the file's poll() mask.
 */
__poll_t vtg_poller_add(struct vtg_poller *p, struct file *file)
{
	return vfs_poll(file, &p->pt);
}

/**
 * vtg_poller_del() - take the poller off the file's wait queue, if queued
 * @p:		the poller
 *
 * Must come before the file is closed: its wait queue goes with it.
 *
 * Context: process context.
 */
void vtg_poller_del(struct vtg_poller *p)
{
	if (p->wqh)
		remove_wait_queue(p->wqh, &p->wait);
	p->wqh = NULL;
}
