/* SPDX-License-Identifier: GPL-2.0 */
/* dat-local.h: vtrace dat's private types, shared by its files (dat.c: design). */
/*
 *   dat.c           the command: its options, the guests opened, the files in turn
 *   dat-guest.c     a guest's trace.dat: metadata, TIME_SHIFT, TSC2NSEC, its pages
 *   dat-host.c      the host's copy with the GUEST options (version 7 and 6)
 *   dat-vcpu.c      the host's trace id, each guest CPU's vCPU thread, the self-check
 *   dat-session.c   the KernelShark session
 */
#ifndef _DAT_LOCAL_H
#define _DAT_LOCAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vtrace-check.h"
#include "vtrace-dump.h"
#include "vtrace-proto.h"
#include "vtrace-util.h"

/* trace-cmd's option ids (trace-cmd.dat.v7(5)) */
enum {
	OPT_DONE	= 0,
	OPT_TRACECLOCK	= 4,
	OPT_UNAME	= 5,
	OPT_OFFSET	= 7,
	OPT_CPUCOUNT	= 8,
	OPT_VERSION	= 9,
	OPT_TRACEID	= 11,
	OPT_TIME_SHIFT	= 12,
	OPT_GUEST	= 13,
	OPT_TSC2NSEC	= 14,
};

/* The guest's metadata files, as its ctl carried them (first session) */
struct meta {
	unsigned int	kind;
	char		*name;
	void		*data;
	uint64_t	len;
};

/* One guest (the command's options are copied into each) */
struct dat {
	const char			*name;
	const char			*dir;
	const char			*offsets_path;	/* --offsets, or NULL */
	const char			*capture_offsets; /* a capture's tsc_offsets, or NULL */
	const char			*offsets_src;	/* where the history was read */
	const char			*host;
	const char			*out;
	const char			*khz_arg;
	int				assume_constant;	/* --assume-constant-offset */
	int				force;		/* --force: write a failed timeline */
	/* trace-cmd's TSC2NSEC: ns = tsc * ns_mult >> ns_shift (ns_mult 0: none) */
	uint32_t			ns_mult;
	uint32_t			ns_shift;
	uint64_t			khz;
	int64_t				ns_offset;	/* OFFSET: ns added after TSC2NSEC */
	uint64_t			ns_error;	/* at most this far from vtrace-merge */
	/* host TSC of the guest's first and last event (UINT64_MAX, 0: none) */
	uint64_t			host_lo;
	uint64_t			host_hi;
	int				pid;
	struct vtrace_guest_spec	spec;		/* --guest, parsed: owns name and dir */
	struct vtrace_dump		*dump;
	struct vtrace_offsets		*offsets;	/* shared by the guests */
	const struct vtrace_meta_info	*info;
	const struct vtrace_vcpu_history **hist;	/* per guest CPU */
	struct meta			*files;
	int				nr_files;
	uint64_t			host_id;
	bool				host_has_id;
	bool				host_kvm;	/* kvm_entry, kvm_exit formats: kvm_combo's test */
	int				host_cpus;
	uint64_t			guest_id;
	/* per guest CPU: host tid of its vCPU (0: unknown), intervals its events use */
	int				*vcpu_tid;
	size_t				*first;
	size_t				*last;
	/* the self-check (vtrace-merge's, src/lib/check-core.c): the checked CPUs' sum */
	struct vtrace_check_sum		sc;
	int				sc_unverified;	/* guest CPUs not checked */
};

/* this command's own warnings (the library's vtrace_warn() says "vtrace dat" too) */
static inline void dat_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline void dat_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("vtrace dat: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- little-endian writers into a FILE (open_memstream or the output) */

static inline void put_le(FILE *f, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		fputc((v >> (8 * i)) & 0xff, f);
}

static inline void put_str0(FILE *f, const char *s)
{
	fwrite(s, 1, strlen(s) + 1, f);
}

static inline void put_option(FILE *f, unsigned int id, const void *data, uint32_t len)
{
	put_le(f, id, 2);
	put_le(f, len, 4);
	fwrite(data, 1, len, f);
}

static inline void put_option_str(FILE *f, unsigned int id, const char *s)
{
	put_option(f, id, s, strlen(s) + 1);
}

/* dat-guest.c */
int dat_read_meta(struct dat *d);
int dat_used_intervals(struct dat *d, int cpu);
int dat_check_history(struct dat *d, int cpu);
void dat_tsc2nsec(uint64_t khz, uint32_t *mult, uint32_t *shift);
void dat_tsc2nsec_anchor(struct dat *gs, int nr);
void dat_put_tsc2nsec(const struct dat *d, FILE *f);
int dat_write_guest(struct dat *d, const char *path);

/* dat-host.c */
int dat_write_host(struct dat *gs, int nr, const char *path);

/* dat-vcpu.c */
int dat_read_host(struct dat *gs, int nr);

/* dat-session.c */
int dat_write_session(struct dat *gs, int nr, const char *path);

#endif /* _DAT_LOCAL_H */
