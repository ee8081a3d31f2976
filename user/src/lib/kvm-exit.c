// SPDX-License-Identifier: GPL-2.0
/* kvm-exit.c: KVM's exit reasons named as kvm_exit's print format names them. */
/*
 * kvm_exit's reason is a number whose meaning depends on the vendor (VMX's
 * basic exit reasons, SVM's exit codes: the event's isa field tells which);
 * its print format turns it into a name with __print_symbolic() tables the
 * kernel writes into the format file.  Those tables are the authority, so
 * the name is what libtraceevent prints between "reason " and " rip " (the
 * kernel's "vcpu %u reason %s%s%s rip 0x%lx ...", older ones "reason %s rip
 * ..."), the kvm plugin's own handler left out (TEP_EVENT_FL_NOHANDLE): the
 * number in hex when that fails.  A trace names few reasons: each is looked
 * up once, on its first kvm_exit (vtrace_kvm_exit_index()).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event-parse.h>

#include "vtrace-kvm.h"

/**
 * vtrace_kvm_exit_name - the name kvm_exit's print format gives @rec's reason
 * @key:	exit_reason (and isa << 32): the name when the print has none
 * @name:	@len bytes; a name that does not fit is replaced by the number
 */
void vtrace_kvm_exit_name(struct trace_seq *seq, struct tep_handle *tep, struct tep_record *rec,
			  uint64_t key, char *name, size_t len)
{
	struct tep_event *ev = tep_find_event(tep, tep_data_type(tep, rec));
	const char *p = NULL, *end = NULL;
	int flags;

	if (ev) {
		flags = ev->flags;
		ev->flags |= TEP_EVENT_FL_NOHANDLE;
		trace_seq_reset(seq);
		tep_print_event(tep, seq, rec, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(seq);
		ev->flags = flags;
		p = strstr(seq->buffer, "reason ");
		end = p ? strstr(p + 7, " rip ") : NULL;
	}
	if (p && end && end > p + 7 && (size_t)(end - (p + 7)) < len)
		snprintf(name, len, "%.*s", (int)(end - (p + 7)), p + 7);
	else
		snprintf(name, len, "0x%" PRIx64, key & 0xffffffff);
}

/* @len: the names' room, at most VTRACE_KVM_EXIT_LEN */
void vtrace_kvm_exits_init(struct vtrace_kvm_exits *x, size_t len)
{
	x->len = len < VTRACE_KVM_EXIT_LEN ? len : VTRACE_KVM_EXIT_LEN;
	x->nr = 0;
	trace_seq_init(&x->seq);
}

void vtrace_kvm_exits_free(struct vtrace_kvm_exits *x)
{
	trace_seq_destroy(&x->seq);
}

/**
 * vtrace_kvm_exit_index - the index of kvm_exit @rec's reason @key in @x->name
 *
 * Named on its first sight; past VTRACE_KVM_EXITS - 1 reasons, every new
 * one is the last, "other".
 */
int vtrace_kvm_exit_index(struct vtrace_kvm_exits *x, struct tep_handle *tep,
			  struct tep_record *rec, uint64_t key)
{
	for (int i = 0; i < x->nr; i++)
		if (x->key[i] == key)
			return i;
	if (x->nr == VTRACE_KVM_EXITS)
		return VTRACE_KVM_EXITS - 1;
	x->key[x->nr] = key;
	if (x->nr == VTRACE_KVM_EXITS - 1)
		snprintf(x->name[x->nr], x->len, "other");
	else
		vtrace_kvm_exit_name(&x->seq, tep, rec, key, x->name[x->nr], x->len);
	return x->nr++;
}
