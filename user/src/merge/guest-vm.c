// SPDX-License-Identifier: GPL-2.0
/* guest-vm.c: which VM of the offset history a guest is, when nothing names it: by the fit. */
/*
 * A guest's dump names its VM by QEMU's pid (DIR/qemu.pid, pid=PID, a
 * capture's manifest).  QEMU removes its pidfile when it exits, so a guest
 * may come with none.  The offset history then holds every VM whose vCPUs
 * match the guest's APIC ids, and with several VMs of one shape those are
 * several.  The host trace tells them apart: put on the host's TSC with the
 * offsets of the right VM, the guest's events fall inside the kvm_entry..
 * kvm_exit windows (or the run spans) of that VM's vCPU threads; with the
 * offsets of another VM they fall elsewhere.  For each VM that matches, the
 * guest's events are read once and fitted as the self-check fits them
 * (src/lib/check-core.c, vtrace_check_vm_fit()):
 *
 *   fits        some events checked, none outside, every guest CPU a thread
 *   does not    events outside, or a guest CPU with no thread of that VM
 *   cannot tell none of the events falls within the host trace, or the host
 *               trace holds no vCPU thread (no sched_switch, kvm_entry)
 *
 * The one VM that fits is taken, and said with every VM's figures.  None
 * or several fit: an error with the figures and what to do (pid=PID).  When
 * the host trace cannot tell any of them, the APIC ids decide as they do
 * without a host trace (machine.c), only if one VM matches, and that is said.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge-local.h"
#include "vtrace-check.h"
#include "vtrace-dump.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

/* VMs whose figures a message lists; the rest are counted */
#define LISTED	8

enum vm_verdict { VM_CANNOT_TELL, VM_FITS, VM_NOT };

struct vm_cand {
	int			pid;
	struct vtrace_check_vm	fit;
	enum vm_verdict		verdict;
};

/* A guest still to be told: no pid from its folder, pid=, or offset= */
static bool needs_vm(const struct machine *m)
{
	return m->guest && m->pid < 0 && !m->has_offset;
}

/**
 * guest_vm_needed - does a guest need its VM told by the host trace?
 *
 * With a host trace (@machines[0]) and an offset history only.
 */
bool guest_vm_needed(struct machine **machines, int nr, struct vtrace_offsets *offsets)
{
	if (!offsets || !nr || machines[0]->guest)
		return false;
	for (int i = 1; i < nr; i++)
		if (needs_vm(machines[i]))
			return true;
	return false;
}

/* The VMs of the history whose vCPUs match @m's APIC ids: a malloc'd array, *@nr of them */
static struct vm_cand *matching_vms(struct machine *m, struct vtrace_offsets *offsets, int *nr)
{
	char *pids = vtrace_offsets_pids(offsets), *save = NULL;
	struct vm_cand *c = NULL;
	int n = 0;

	*nr = 0;
	if (!pids)
		return NULL;
	for (char *t = strtok_r(pids, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		int pid = atoi(t);
		struct vm_cand *more;

		if (pid <= 0 || !machine_vm_matches(m, offsets, pid))
			continue;
		more = realloc(c, (n + 1) * sizeof(*c));
		if (!more) {
			free(c);
			free(pids);
			return NULL;
		}
		c = more;
		c[n++] = (struct vm_cand){ .pid = pid };
	}
	free(pids);
	*nr = n;
	return c ? c : calloc(1, sizeof(*c));
}

static enum vm_verdict verdict(const struct vtrace_check_vm *f)
{
	if (f->sum.outside || f->no_thread)
		return VM_NOT;
	return f->sum.checked ? VM_FITS : VM_CANNOT_TELL;
}

/* "pid 5101: 104 of 104 events checked, 0 outside; pid 5102: ..." into @buf */
static void figures(const struct vm_cand *c, int nr, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < nr && i < LISTED && at < len; i++) {
		const struct vtrace_check_vm *f = &c[i].fit;

		at += snprintf(buf + at, len - at, "%spid %d: %" PRIu64 " of %" PRIu64 " events"
			       " checked, %" PRIu64 " outside", i ? "; " : "", c[i].pid,
			       f->sum.checked, f->seen, f->sum.outside);
		if (f->no_thread && at < len)
			at += snprintf(buf + at, len - at, ", %d cpu%s with no vCPU thread of it",
				       f->no_thread, f->no_thread == 1 ? "" : "s");
	}
	if (nr > LISTED && at < len)
		snprintf(buf + at, len - at, "; %d more VMs", nr - LISTED);
}

/* Each VM's fit, and how many fit */
static int weigh(struct machine *m, const struct vtrace_vthreads *vt,
		 struct vtrace_offsets *offsets, const struct merge_opts *opts,
		 struct vm_cand *c, int nr, int *fits)
{
	*fits = 0;
	for (int i = 0; i < nr; i++) {
		if (vtrace_check_vm_fit(&c[i].fit, vt, m->dump, offsets, c[i].pid, opts->khz,
					opts->assume_constant)) {
			vtrace_set_error("guest %s: with the offsets of pid %d: %s", m->name,
					 c[i].pid, vtrace_last_error());
			return -1;
		}
		c[i].verdict = verdict(&c[i].fit);
		*fits += c[i].verdict == VM_FITS;
	}
	return 0;
}

/* No VM (of @nr >= 1) told by the host trace: the APIC ids, as without one, if one matches */
static int cannot_tell(struct machine *m, const struct vtrace_vthreads *vt,
		       const struct vm_cand *c, int nr, struct guest_vm *vm)
{
	const char *why = vt->nr_th ? "none of the guest's events falls within it" :
		"it holds no vCPU thread: record sched:sched_switch, kvm:kvm_entry and"
		" kvm:kvm_exit";
	char list[600];

	if (nr == 1) {
		vm->pid = c[0].pid;
		vm->warn = true;
		if (asprintf(&vm->note, "guest %s: no %s/qemu.pid: using pid %d, the only"
			     " VM of the offsets file whose vCPUs match its APIC ids; the host"
			     " trace cannot confirm it (%s) (pid=PID to choose)", m->name,
			     m->path, c[0].pid, why) < 0)
			vm->note = NULL;
		return 0;
	}
	list[0] = '\0';
	for (int i = 0, at = 0; i < nr && at < (int)sizeof(list) - 12; i++)
		at += snprintf(list + at, sizeof(list) - at, "%s%d", i ? " " : "", c[i].pid);
	vtrace_set_error("guest %s: no %s/qemu.pid and no pid=PID: more than one VM of the"
			 " offsets file matches its APIC ids (pids %s), and the host trace cannot"
			 " tell them apart (%s): give pid=PID (the recording's QEMU)", m->name,
			 m->path, list, why);
	return -1;
}

/* @c's VMs weighed: the one that fits, or an error that shows the figures */
static int decide(struct machine *m, const struct vtrace_vthreads *vt,
		  const struct vm_cand *c, int nr, int fits, struct guest_vm *vm)
{
	char figs[700];
	int i;

	for (i = 0; i < nr && c[i].verdict == VM_CANNOT_TELL; i++)
		;
	if (i == nr)
		return cannot_tell(m, vt, c, nr, vm);
	figures(c, nr, figs, sizeof(figs));
	if (fits == 1) {
		for (i = 0; c[i].verdict != VM_FITS; i++)
			;
		vm->pid = c[i].pid;
		if (asprintf(&vm->note, "guest %s: no %s/qemu.pid: using pid %d, the only VM of the"
			     " offsets file whose vCPU threads in the host trace its events fit (%s);"
			     " pid=PID to choose", m->name, m->path, c[i].pid, figs) < 0)
			vm->note = NULL;
		return 0;
	}
	vtrace_set_error("guest %s: no %s/qemu.pid and no pid=PID: its events fit the vCPU"
			 " threads in the host trace of %s VM of the offsets file (of those whose"
			 " vCPUs match its APIC ids: %s): give pid=PID (the recording's QEMU)",
			 m->name, m->path, fits ? "more than one" : "no", figs);
	return -1;
}

static int choose_one(struct machine *m, const struct vtrace_vthreads *vt,
		      struct vtrace_offsets *offsets, const struct merge_opts *opts,
		      struct guest_vm *vm)
{
	int nr, fits = 0, ret;
	struct vm_cand *c = matching_vms(m, offsets, &nr);

	if (!c) {
		vtrace_set_error("guest %s: out of memory for the VMs of the offsets file",
				 m->name);
		return -1;
	}
	/* none matches: machine.c's error says so, as without a host trace */
	ret = nr ? weigh(m, vt, offsets, opts, c, nr, &fits) : 0;
	if (!ret && nr)
		ret = decide(m, vt, c, nr, fits, vm);
	free(c);
	return ret;
}

/* The line that said which VM, each time the inputs are opened (quiet the times after) */
static void say(const struct guest_vm *vm)
{
	if (vm->note && vm->warn)
		vtrace_warn("%s", vm->note);
	else if (vm->note)
		vtrace_note("%s", vm->note);
}

/**
 * guest_vm_choose - the VM of each guest that has none, by the host trace
 * @vm:		one per machine, @vm[i] for @machines[i]: a VM chosen at an earlier
 *		opening of the same inputs is taken again (and said again), else
 *		it is filled
 *
 * Guests without a VM (guest_vm_needed()) get the one whose offsets put
 * their events inside its vCPU threads' spans.  Returns 0, or -1 with an
 * error set (none or several fit, the host trace cannot tell, a read error).
 */
int guest_vm_choose(struct machine **machines, int nr, struct vtrace_offsets *offsets,
		    const struct merge_opts *opts, struct guest_vm *vm)
{
	struct vtrace_vthreads vt = { 0 };
	uint64_t bad_pages = 0;
	bool read = false;
	int ret = 0;

	for (int i = 1; i < nr && !ret; i++) {
		struct machine *host = machines[0], *m = machines[i];

		if (!needs_vm(m))
			continue;
		if (!vm[i].pid && !read) {
			ret = vtrace_vthreads_read_pages(&vt, host->dump ? host->dump :
							 host->dat_pages, &bad_pages);
			read = true;
		}
		if (!ret && !vm[i].pid)
			ret = choose_one(m, &vt, offsets, opts, &vm[i]);
		if (!ret && vm[i].pid > 0) {
			m->pid = vm[i].pid;
			say(&vm[i]);
		}
	}
	if (read)
		vtrace_vthreads_free(&vt);
	return ret;
}
