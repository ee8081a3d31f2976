/* SPDX-License-Identifier: GPL-2.0 */
/* vtrace-kvm.h: KVM's exit reasons named as kvm_exit's print format names them. */
#ifndef _VTRACE_KVM_H
#define _VTRACE_KVM_H

#include <stddef.h>
#include <stdint.h>

#include <trace-seq.h>

struct tep_handle;
struct tep_record;

#define VTRACE_KVM_EXITS	64	/* reasons named; the last stands for all the others */
#define VTRACE_KVM_EXIT_LEN	48	/* the longest name kept, its NUL included */

/**
 * struct vtrace_kvm_exits - the exit reasons of one trace, each named on its first kvm_exit
 * @len:	a name must fit in this (at most VTRACE_KVM_EXIT_LEN), else it is its number
 * @nr:		reasons named so far
 * @key:	exit_reason | isa << 32, per reason
 * @name:	its name ("hlt", "io", "EPT_VIOLATION"), "other" for the last
 */
struct vtrace_kvm_exits {
	size_t			len;
	int			nr;
	struct trace_seq	seq;
	uint64_t		key[VTRACE_KVM_EXITS];
	char			name[VTRACE_KVM_EXITS][VTRACE_KVM_EXIT_LEN];
};

void vtrace_kvm_exits_init(struct vtrace_kvm_exits *x, size_t len);
void vtrace_kvm_exits_free(struct vtrace_kvm_exits *x);
int vtrace_kvm_exit_index(struct vtrace_kvm_exits *x, struct tep_handle *tep,
			  struct tep_record *rec, uint64_t key);
void vtrace_kvm_exit_name(struct trace_seq *seq, struct tep_handle *tep, struct tep_record *rec,
			  uint64_t key, char *name, size_t len);

#endif /* _VTRACE_KVM_H */
