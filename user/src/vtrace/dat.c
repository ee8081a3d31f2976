// SPDX-License-Identifier: GPL-2.0
/* dat.c: vtrace dat: a guest capture as a trace-cmd trace.dat, and the host's with its GUEST. */
/*
 * trace-cmd report -i host.dat -i guest.dat (and KernelShark) show a guest
 * on the host's clock when the two files carry trace-cmd's own time-sync
 * options (Documentation/trace-cmd/trace-cmd.dat.v6.5.txt and v7.5.txt):
 *
 *   guest.dat (version 6, written here)
 *     "\x17\x08\x44" "tracing" "6\0", endianness, long size, page size
 *     header_page, header_event, ftrace formats, event systems, kallsyms,
 *     printk formats, saved cmdlines: the guest's own, as its ctl carried them
 *     (printk formats without the lines the dump reader drops)
 *     cpu count, "options  \0":
 *       TRACECLOCK, UNAME, CPUCOUNT, VERSION
 *       TRACEID     the guest's session id
 *       TIME_SHIFT  peer (the host's TRACEID), flags 0, per guest CPU: each
 *                   interval of its vCPU's offset history from the first
 *                   its events use to the last, as a sample (guest TSC
 *                   where it starts, offset, scaling 1), then per CPU the
 *                   fraction bits (0)
 *       TSC2NSEC, OFFSET  host TSC to vtrace-merge's ns (when tsc_khz is known)
 *     0, "flyrecord\0", per CPU (offset, size), the CPU's pages, page aligned
 *
 *   host.dat (a copy of the host's trace.dat)
 *     a GUEST option per guest (name, the guest's TRACEID, guest CPU ->
 *     host thread id of its vCPU), TRACEID when the host file had none, and
 *     the guests' TSC2NSEC and OFFSET:
 *     version 7, in one more options section at the end of the file,
 *     chained from the last one's DONE; version 6, inserted before the
 *     0 that ends its options (struct v6)
 *
 *   kernelshark.json (with the host): a KernelShark session of the files,
 *     a KVM combo plot per vCPU (write_session())
 *
 * trace-cmd turns a guest time stamp into the host's with the sample in
 * force: host = guest * scaling >> fraction + offset, for the sample with
 * the largest time at or below the event's guest TSC.  With flags 0 there
 * is no interpolation, so for an unscaled vCPU this is exactly KVM's
 * guest_tsc = host_tsc + offset, the conversion vtrace-merge makes.  Two
 * quirks of trace-cmd 3.1 are worked around: with exactly two samples it
 * always uses the first, and after the last sample it uses the one before,
 * so a last sample at INT64_MAX repeats the last offset.
 *
 * The offset history is vtrace-merge's (vtrace_offsets_load()): --offsets
 * FILE, else the host trace.dat's vtrace_host:tsc_offset events (the
 * snapshot of every vCPU when the recording began, then every write).
 *
 * What trace-cmd cannot express is said, not hidden: a scaled guest TSC
 * (KVM's multiplier) is refused, and a vCPU whose guest TSC went back
 * (a guest TSC write) is mapped by guest time, so events in the overlap are
 * misplaced; vtrace-merge places them by ring-buffer order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-cmd.h>

#include "vtrace-check.h"
#include "vtrace-dump.h"
#include "vtrace-local.h"
#include "vtrace-proto.h"
#include "vtrace-tsc.h"
#include "vtrace-capture.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

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

static const char dat_usage[] =
"usage: vtrace dat --guest NAME=DIR[,pid=PID|,libvirt=DOMAIN[,connect=URI]]...\n"
"                  [--host FILE] [--offsets FILE]\n"
"                  [--tsc-khz KHZ|FILE] [--assume-constant-offset] [--force] --out DIR\n"
"       vtrace dat CAPTURE [--out DIR] [OPTIONS]\n"
"\n"
"CAPTURE, a capture folder of vtrace record, gives the host trace and the guests\n"
"(default --out CAPTURE/dat).\n"
"\n"
"Write each guest capture as a trace-cmd trace.dat (DIR/NAME.dat, version 6) whose\n"
"TIME_SHIFT option carries its vCPUs' TSC offset history, and with --host a copy\n"
"of the host's trace.dat (DIR/host.dat) with a GUEST option per guest, so that\n"
"\"trace-cmd report -i DIR/host.dat -i DIR/NAME.dat\" and KernelShark show both on\n"
"the host's TSC, in seconds when the host TSC frequency is known (TSC2NSEC).\n"
"\n"
"  --guest NAME=DIR[,pid=PID]  a guest dump folder (ctl, cpuK, qemu.pid); repeatable\n"
"                           libvirt=DOMAIN[,connect=URI]: without DIR/qemu.pid, the pid\n"
"                           of that running libvirt domain (connection as virsh -c URI)\n"
"  --host FILE              the host's trace.dat (trace-cmd record -C x86-tsc); with\n"
"                           -e vtrace_host it carries the offset history\n"
"  --offsets FILE           vtrace_host's tsc_offsets file (default: the host trace.dat's\n"
"                           vtrace_host:tsc_offset events, as vtrace-merge)\n"
"  --tsc-khz KHZ|FILE       host TSC frequency (default: the host trace.dat's vtrace_host\n"
"                           events', tsc_khz beside the offsets or host file; none: times\n"
"                           stay TSC cycles)\n"
"  --assume-constant-offset guest events before the offset history: the earliest offset\n"
"                           known (vtrace-merge's option; default: refused)\n"
"  --force                  write the files although guest events fall outside the\n"
"                           times their vCPU ran in the host trace (the self-check)\n"
"  --out DIR                output folder (created)\n";

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
static void dat_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void dat_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("vtrace dat: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- little-endian writers into a FILE (open_memstream or the output) */

static void put_le(FILE *f, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		fputc((v >> (8 * i)) & 0xff, f);
}

static void put_str0(FILE *f, const char *s)
{
	fwrite(s, 1, strlen(s) + 1, f);
}

static void put_option(FILE *f, unsigned int id, const void *data, uint32_t len)
{
	put_le(f, id, 2);
	put_le(f, len, 4);
	fwrite(data, 1, len, f);
}

static void put_option_str(FILE *f, unsigned int id, const char *s)
{
	put_option(f, id, s, strlen(s) + 1);
}

/* ---- the guest's metadata */

static int keep_file(struct dat *d, const struct vtrace_msg *msg)
{
	const struct vtrace_meta_file *mf;
	struct meta *n;
	const char *name;
	const void *data;

	if (vtrace_msg_meta_file(msg, &mf, &name, &data))
		return -1;
	n = realloc(d->files, (d->nr_files + 1) * sizeof(*n));
	if (!n)
		return -1;
	d->files = n;
	n = &d->files[d->nr_files];
	n->kind = mf->kind;
	n->len = mf->data_len;
	n->name = strdup(name);
	n->data = malloc(mf->data_len ? mf->data_len : 1);
	if (!n->name || !n->data) {
		free(n->name);
		free(n->data);
		return -1;
	}
	memcpy(n->data, data, mf->data_len);
	d->nr_files++;
	return 0;
}

/* META_FILE messages of the first session, as vtrace_dump_open() uses them */
static int read_meta(struct dat *d)
{
	char path[PATH_MAX];
	struct vtrace_proto *p;
	struct vtrace_msg msg;
	int infos = 0, ret;

	snprintf(path, sizeof(path), "%s/ctl", d->dir);
	p = vtrace_proto_open_file(path);
	if (!p)
		return -1;
	while ((ret = vtrace_proto_read(p, &msg)) > 0) {
		if (msg.hdr.type == VTRACE_MSG_META_INFO)
			infos++;
		if (msg.hdr.type == VTRACE_MSG_META_FILE && infos == 1 && keep_file(d, &msg)) {
			vtrace_msg_release(&msg);
			vtrace_proto_close(p);
			vtrace_set_error("%s: out of memory", path);
			return -1;
		}
		vtrace_msg_release(&msg);
	}
	if (ret < 0)
		vtrace_set_error("%s", vtrace_proto_error(p));
	vtrace_proto_close(p);
	return ret;
}

static const struct meta *find_meta(struct dat *d, unsigned int kind)
{
	for (int i = 0; i < d->nr_files; i++)
		if (d->files[i].kind == kind)
			return &d->files[i];
	return NULL;
}

static void put_sized(FILE *f, const struct meta *m, int size_bytes)
{
	put_le(f, m ? m->len : 0, size_bytes);
	if (m)
		fwrite(m->data, 1, m->len, f);
}

static void put_text(FILE *f, const char *text, int size_bytes)
{
	size_t len = text ? strlen(text) : 0;

	put_le(f, len, size_bytes);
	if (len)
		fwrite(text, 1, len, f);
}

/* "system/event" is in @system */
static bool in_system(const char *name, const char *system)
{
	const char *slash = strchr(name, '/');

	return slash && !strncmp(name, system, slash - name) && !system[slash - name];
}

static int count_kind(struct dat *d, unsigned int kind, const char *system)
{
	int n = 0;

	for (int i = 0; i < d->nr_files; i++)
		if (d->files[i].kind == kind && (!system || in_system(d->files[i].name, system)))
			n++;
	return n;
}

/* Event systems in order of first appearance, each with its format files */
static void put_systems(struct dat *d, FILE *f)
{
	char **seen = calloc(d->nr_files + 1, sizeof(*seen));
	int nr = 0;

	for (int i = 0; seen && i < d->nr_files; i++) {
		const char *name = d->files[i].name, *slash = strchr(name, '/');
		int k;

		if (d->files[i].kind != VTRACE_META_EVENT_FORMAT || !slash)
			continue;
		for (k = 0; k < nr && (strncmp(seen[k], name, slash - name) ||
				       seen[k][slash - name]); k++)
			;
		if (k == nr)
			seen[nr++] = strndup(name, slash - name);
	}
	put_le(f, nr, 4);
	for (int k = 0; k < nr; k++) {
		put_str0(f, seen[k] ? seen[k] : "");
		put_le(f, count_kind(d, VTRACE_META_EVENT_FORMAT, seen[k]), 4);
		for (int i = 0; i < d->nr_files; i++)
			if (d->files[i].kind == VTRACE_META_EVENT_FORMAT && seen[k] &&
			    in_system(d->files[i].name, seen[k]))
				put_sized(f, &d->files[i], 8);
		free(seen[k]);
	}
	free(seen);
}

/* ---- TIME_SHIFT: every interval of every guest CPU's vCPU */

/*
 * The intervals CPU @cpu's events fall in, as vtrace-merge converts them:
 * only those go into TIME_SHIFT.  An offset history also holds what came
 * before the trace (the firmware's TSC reset at boot puts the guest TSC
 * back to 0), and trace-cmd, which looks samples up by guest time, would
 * take those older samples for the trace's events.
 */
struct used {
	struct dat		*d;
	int			cpu;
	struct vtrace_tsc_map	map;
};

static int used_event(void *priv, const struct tep_record *rec, const uint64_t *host)
{
	struct used *u = priv;
	struct dat *d = u->d;

	if (!host) {
		/* vtrace-merge's refusal: trace-cmd would misplace it silently */
		vtrace_tsc_map_refused(&u->map, d->name, u->cpu, d->dir, rec->ts, rec->offset);
		return -1;
	}
	if (*host < d->host_lo)
		d->host_lo = *host;
	if (*host > d->host_hi)
		d->host_hi = *host;
	return 0;
}

static int used_intervals(struct dat *d, int cpu)
{
	struct used u = { .d = d, .cpu = cpu };
	struct vtrace_tsc_map *map = &u.map;

	vtrace_tsc_map_init(map, d->hist[cpu], d->assume_constant);
	if (vtrace_dump_cpu_host(d->dump, cpu, map, used_event, &u))
		return -1;
	if (map->ambiguous)
		dat_warn("guest %s cpu %d: %" PRIu64 " events read a guest TSC that two offset"
			 " intervals map (the offset was set back): trace-cmd's TIME_SHIFT picks an"
			 " interval by guest time alone, which may be wrong, and neither trace-cmd report"
			 " nor KernelShark can mark them; vtrace-merge marks those the host's"
			 " kvm_entry..kvm_exit do not tell apart \"[time ambiguous]\"", d->name, cpu,
			 map->ambiguous);
	d->first[cpu] = map->first_used == SIZE_MAX ? d->hist[cpu]->nr - 1 : map->first_used;
	d->last[cpu] = map->first_used == SIZE_MAX ? d->hist[cpu]->nr - 1 : map->last_used;
	return 0;
}

static int check_history(struct dat *d, int cpu)
{
	const struct vtrace_vcpu_history *h = d->hist[cpu];
	uint64_t prev = 0;

	for (size_t i = d->first[cpu]; i <= d->last[cpu]; i++) {
		const struct vtrace_tsc_interval *iv = &h->iv[i];
		uint64_t start = vtrace_tsc_guest(iv, iv->host_tsc);

		if (iv->mult != 1ULL << iv->frac) {
			vtrace_set_error("guest %s cpu %d: record %" PRIu64 " scales the TSC"
					 " (multiplier %" PRIu64 ", %u fraction bits): trace-cmd's"
					 " TIME_SHIFT cannot convert it exactly", d->name, cpu,
					 iv->seq, iv->mult, iv->frac);
			return -1;
		}
		if (i > d->first[cpu] && start < prev)
			dat_warn("guest %s cpu %d: the guest TSC went back at record %" PRIu64
				    ": trace-cmd maps by guest time and misplaces the events of"
				    " the overlap (vtrace-merge does not)", d->name, cpu, iv->seq);
		prev = start;
	}
	return 0;
}

static void put_time_shift(struct dat *d, FILE *f)
{
	int cpus = d->info->nr_cpus;

	put_le(f, d->host_id, 8);
	put_le(f, 0, 4);		/* flags: no interpolation */
	put_le(f, cpus, 4);
	for (int c = 0; c < cpus; c++) {
		const struct vtrace_tsc_interval *iv = d->hist[c]->iv + d->first[c];
		size_t n = d->last[c] - d->first[c] + 1;

		put_le(f, n + 1, 4);
		for (size_t i = 0; i < n; i++)
			put_le(f, vtrace_tsc_guest(&iv[i], iv[i].host_tsc), 8);
		put_le(f, INT64_MAX, 8);
		for (size_t i = 0; i <= n; i++)
			put_le(f, -iv[i < n ? i : n - 1].offset, 8);
		for (size_t i = 0; i <= n; i++)
			put_le(f, 1, 8);
	}
	for (int c = 0; c < cpus; c++)
		for (size_t i = d->first[c]; i <= d->last[c] + 1; i++)
			put_le(f, 0, 8);
}

/* ---- TSC2NSEC and OFFSET: the host TSC in nanoseconds, vtrace-merge's seconds */

/*
 * trace-cmd turns a time stamp (the guest's after TIME_SHIFT) into ns with
 * mul_u64_u32_shr(ts, mult, shift) = (ts * mult) >> shift, then adds the
 * OFFSET option's ns; TSC2NSEC's own offset (8 bytes) is unused by 3.1 and
 * written 0.  trace-cmd 3.1 keeps mult in an int, so it must stay below
 * 2^31, and shifts by 32 - shift, so shift is at most 32: the largest
 * shift whose rounded mult fits.  That slope is off vtrace-merge's
 * 10^6 / khz by up to 0.5 / mult of the time (2.3e-10 at 2.5 GHz: 28 ns at
 * a TSC of 300e9), so OFFSET puts the guests' first event exactly on
 * vtrace-merge's ns and the difference grows from there.
 */
static void tsc2nsec(uint64_t khz, uint32_t *mult, uint32_t *shift)
{
	for (int s = 32; s >= 0; s--) {
		unsigned __int128 m = (((unsigned __int128)1000000 << s) + khz / 2) / khz;

		if (m && m <= INT32_MAX) {
			*mult = m;
			*shift = s;
			return;
		}
	}
	*mult = 0;
}

/* trace-cmd's mul_u64_u32_shr(), exact for the mult and shift tsc2nsec() gives */
static uint64_t tsc2nsec_ns(uint64_t tsc, uint32_t mult, uint32_t shift)
{
	return (uint64_t)(((unsigned __int128)tsc * mult) >> shift);
}

/* OFFSET and the largest difference to vtrace-merge over the guests' events */
static void tsc2nsec_anchor(struct dat *gs, int nr)
{
	uint64_t lo = UINT64_MAX, hi = 0, khz = gs[0].khz;
	uint32_t mult = gs[0].ns_mult, shift = gs[0].ns_shift;
	unsigned __int128 a, b, err;
	int64_t off;

	for (int i = 0; i < nr; i++) {
		lo = gs[i].host_lo < lo ? gs[i].host_lo : lo;
		hi = gs[i].host_hi > hi ? gs[i].host_hi : hi;
	}
	if (lo > hi)
		lo = hi = 0;
	off = (int64_t)(vtrace_tsc_to_ns(lo, khz) - tsc2nsec_ns(lo, mult, shift));
	/* |mult / 2^shift - 10^6 / khz| * (hi - lo), rounded up, + 1 for the floors */
	a = (unsigned __int128)mult * khz;
	b = (unsigned __int128)1000000 << shift;
	err = ((a > b ? a - b : b - a) * (hi - lo) + ((unsigned __int128)khz << shift) - 1) /
	      ((unsigned __int128)khz << shift);
	for (int i = 0; i < nr; i++) {
		gs[i].ns_offset = off;
		gs[i].ns_error = (uint64_t)err + 1;
	}
}

static void put_tsc2nsec(const struct dat *d, FILE *f)
{
	char text[32];

	if (!d->ns_mult)
		return;
	put_le(f, OPT_TSC2NSEC, 2);
	put_le(f, 16, 4);
	put_le(f, d->ns_mult, 4);
	put_le(f, d->ns_shift, 4);
	put_le(f, 0, 8);
	snprintf(text, sizeof(text), "%" PRId64, d->ns_offset);
	put_option_str(f, OPT_OFFSET, text);
}

static void put_options(struct dat *d, FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	char uname[sizeof(d->info->hostname) + sizeof(d->info->release) + 32];

	put_option_str(f, OPT_TRACECLOCK, "[x86-tsc]\n");
	snprintf(uname, sizeof(uname), "Linux %s %s x86_64", d->info->hostname, d->info->release);
	put_option_str(f, OPT_UNAME, uname);
	m = open_memstream(&buf, &len);
	if (m) {
		put_le(m, d->info->nr_cpus, 4);
		fclose(m);
		put_option(f, OPT_CPUCOUNT, buf, len);
		free(buf);
	}
	put_option_str(f, OPT_VERSION, "vtrace dat");
	m = open_memstream(&buf, &len);
	if (m) {
		put_le(m, d->guest_id, 8);
		fclose(m);
		put_option(f, OPT_TRACEID, buf, len);
		free(buf);
	}
	m = open_memstream(&buf, &len);
	if (m) {
		put_time_shift(d, m);
		fclose(m);
		put_option(f, OPT_TIME_SHIFT, buf, len);
		free(buf);
	}
	put_tsc2nsec(d, f);
	put_le(f, OPT_DONE, 2);
}

/* Everything before the CPU data, with the flyrecord table for @sizes */
static int put_header(struct dat *d, FILE *f, const uint64_t *sizes, uint64_t data_start)
{
	int cpus = d->info->nr_cpus;
	uint64_t at = data_start;

	fwrite("\x17\x08\x44tracing6", 1, 11, f);
	fputc(0, f);
	fputc(0, f);				/* little endian */
	fputc(d->info->long_size ? d->info->long_size : 8, f);
	put_le(f, d->info->page_size, 4);
	fwrite("header_page", 1, 12, f);
	put_sized(f, find_meta(d, VTRACE_META_HEADER_PAGE), 8);
	fwrite("header_event", 1, 13, f);
	put_sized(f, find_meta(d, VTRACE_META_HEADER_EVENT), 8);
	put_le(f, count_kind(d, VTRACE_META_FTRACE_FORMAT, NULL), 4);
	for (int i = 0; i < d->nr_files; i++)
		if (d->files[i].kind == VTRACE_META_FTRACE_FORMAT)
			put_sized(f, &d->files[i], 8);
	put_systems(d, f);
	put_sized(f, find_meta(d, VTRACE_META_KALLSYMS), 4);
	/* as the dump reader filtered it: trace-cmd reads the same lines out of bounds */
	put_text(f, vtrace_dump_printk_formats(d->dump), 4);
	put_sized(f, find_meta(d, VTRACE_META_CMDLINES), 8);
	put_le(f, cpus, 4);
	fwrite("options  ", 1, 10, f);
	put_options(d, f);
	fwrite("flyrecord", 1, 10, f);
	for (int c = 0; c < cpus; c++) {
		put_le(f, sizes[c] ? at : 0, 8);
		put_le(f, sizes[c], 8);
		at += sizes[c];
	}
	return ferror(f) ? -1 : 0;
}

/* Whole pages of DIR/cpuK (a cut last page is left out) */
static uint64_t cpu_bytes(struct dat *d, int cpu)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/cpu%d", d->dir, cpu);
	if (stat(path, &st))
		return 0;
	return st.st_size / d->info->page_size * d->info->page_size;
}

static int copy_bytes(FILE *out, const char *path, uint64_t len)
{
	FILE *in = fopen(path, "r");
	char buf[65536];

	if (!in) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	while (len) {
		size_t n = fread(buf, 1, len < sizeof(buf) ? len : sizeof(buf), in);

		if (!n || fwrite(buf, 1, n, out) != n)
			break;
		len -= n;
	}
	fclose(in);
	if (len) {
		vtrace_set_error("%s: short read or write", path);
		return -1;
	}
	return 0;
}

static int write_guest(struct dat *d, const char *path)
{
	int cpus = d->info->nr_cpus;
	uint64_t *sizes = calloc(cpus, sizeof(*sizes)), start, page = d->info->page_size;
	char *head = NULL, cpath[PATH_MAX];
	size_t head_len = 0;
	FILE *m, *out = NULL;
	int ret = -1;

	if (!sizes)
		return -1;
	for (int c = 0; c < cpus; c++)
		sizes[c] = cpu_bytes(d, c);
	/* the header's length does not depend on the offsets in it */
	m = open_memstream(&head, &head_len);
	if (!m || put_header(d, m, sizes, 0) || fclose(m))
		goto error;
	start = (head_len + page - 1) / page * page;
	free(head);
	head = NULL;
	m = open_memstream(&head, &head_len);
	if (!m || put_header(d, m, sizes, start) || fclose(m))
		goto error;
	out = fopen(path, "w");
	if (!out) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		goto error;
	}
	fwrite(head, 1, head_len, out);
	for (uint64_t i = head_len; i < start; i++)
		fputc(0, out);
	for (int c = 0; c < cpus; c++) {
		snprintf(cpath, sizeof(cpath), "%s/cpu%d", d->dir, c);
		if (sizes[c] && copy_bytes(out, cpath, sizes[c]))
			goto error;
	}
	ret = 0;
error:
	if (out && fclose(out) && !ret) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		ret = -1;
	}
	free(head);
	free(sizes);
	return ret;
}

/* ---- the host's copy */

static int read_at(int fd, uint64_t off, void *buf, size_t len, const char *path)
{
	if (pread(fd, buf, len, off) != (ssize_t)len) {
		vtrace_set_error("%s: byte %" PRIu64 ": file too short", path, off);
		return -1;
	}
	return 0;
}

static uint64_t le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * Version 7: follow the options sections to the last one's DONE option.
 * Returns the offset of its 8-byte "next section" field, and the string id
 * of that section's description in *@desc.
 */
static int64_t last_done(int fd, const char *path, uint32_t *desc)
{
	unsigned char hdr[16], opt[6];
	char magic[32];
	uint64_t sect, off, end;
	size_t n;

	if (read_at(fd, 0, magic, sizeof(magic), path))
		return -1;
	if (memcmp(magic, "\x17\x08\x44tracing7", 11) || magic[11] || magic[12]) {
		vtrace_set_error("%s: byte 0: expected a little-endian trace.dat version 6 or 7",
				 path);
		return -1;
	}
	/* endianness, long size, page size, then "name\0version\0" */
	n = 18;
	for (int zeros = 0; n < sizeof(magic) && zeros < 2; n++)
		zeros += !magic[n];
	if (n >= sizeof(magic) || read_at(fd, n, hdr, 8, path))
		return -1;
	for (sect = le(hdr, 8); sect; sect = le(hdr, 8)) {
		if (read_at(fd, sect, hdr, 16, path))
			return -1;
		if (le(hdr, 2) != 0 || le(hdr + 2, 2) & 1) {
			vtrace_set_error("%s: byte %" PRIu64 ": expected an uncompressed options"
					 " section", path, sect);
			return -1;
		}
		*desc = le(hdr + 4, 4);
		end = sect + 16 + le(hdr + 8, 8);
		for (off = sect + 16; off + 6 <= end; off += 6 + le(opt + 2, 4)) {
			if (read_at(fd, off, opt, 6, path))
				return -1;
			if (le(opt, 2) == OPT_DONE)
				break;
		}
		if (off + 14 > end || le(opt, 2) != OPT_DONE) {
			vtrace_set_error("%s: byte %" PRIu64 ": options section without DONE", path,
					 sect);
			return -1;
		}
		if (read_at(fd, off + 6, hdr, 8, path))
			return -1;
		if (!le(hdr, 8))
			return off + 6;
	}
	return -1;
}

static void put_guest_option(struct dat *g, FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	put_str0(m, g->name);
	put_le(m, g->guest_id, 8);
	put_le(m, g->info->nr_cpus, 4);
	for (unsigned int c = 0; c < g->info->nr_cpus; c++) {
		put_le(m, c, 4);
		put_le(m, g->vcpu_tid[c], 4);
	}
	fclose(m);
	put_option(f, OPT_GUEST, buf, len);
	free(buf);
}

/*
 * What the host copy gets: a GUEST per guest, TRACEID if it has none, and
 * TSC2NSEC (after any the host file had: trace-cmd takes the last one read)
 */
static void host_options(struct dat *gs, int nr, FILE *m)
{
	for (int i = 0; i < nr; i++)
		put_guest_option(&gs[i], m);
	if (!gs[0].host_has_id) {
		put_le(m, OPT_TRACEID, 2);
		put_le(m, 8, 4);
		put_le(m, gs[0].host_id, 8);
	}
	put_tsc2nsec(&gs[0], m);
}

/* Version 7: the appended options section: header, host_options(), DONE */
static int host_section(struct dat *gs, int nr, uint32_t desc, char **sect, size_t *len)
{
	char *opts = NULL;
	size_t opts_len = 0;
	FILE *m = open_memstream(&opts, &opts_len);

	if (!m)
		return -1;
	host_options(gs, nr, m);
	put_le(m, OPT_DONE, 2);
	put_le(m, 8, 4);
	put_le(m, 0, 8);
	if (fclose(m))
		return -1;
	m = open_memstream(sect, len);
	if (!m) {
		free(opts);
		return -1;
	}
	put_le(m, 0, 2);		/* section id: options */
	put_le(m, 0, 2);		/* flags: not compressed */
	put_le(m, desc, 4);
	put_le(m, opts_len, 8);
	fwrite(opts, 1, opts_len, m);
	free(opts);
	return fclose(m);
}

/*
 * Version 6 keeps its options before the CPU table ("options  \0" ... 0,
 * "flyrecord\0", per CPU offset and size), the CPU data page aligned after
 * it.  struct v6 is where those are; the new options go before the 0 that
 * ends the options (or, with none, as "options  \0" ... 0 before
 * "flyrecord\0"), into the padding before the data if they fit, else the
 * data moves by whole pages and the table says so.
 */
struct v6 {
	int		fd;
	const char	*path;
	uint64_t	pos;
	uint64_t	insert;		/* where the new options go */
	bool		has_options;
	uint64_t	table;		/* the CPU table, after "flyrecord\0" */
	uint32_t	cpus;
	uint32_t	page;
	uint64_t	end;		/* end of the table */
	uint64_t	data;		/* first CPU data */
};

static int v6_read(struct v6 *v, void *buf, size_t len)
{
	if (read_at(v->fd, v->pos, buf, len, v->path))
		return -1;
	v->pos += len;
	return 0;
}

static int v6_num(struct v6 *v, int bytes, uint64_t *val)
{
	unsigned char b[8];

	if (v6_read(v, b, bytes))
		return -1;
	*val = le(b, bytes);
	return 0;
}

/* A block of data preceded by its @bytes-wide size */
static int v6_skip_sized(struct v6 *v, int bytes)
{
	uint64_t size;

	if (v6_num(v, bytes, &size))
		return -1;
	v->pos += size;
	return 0;
}

static int v6_expect(struct v6 *v, const char *str, size_t len)
{
	char buf[16];

	if (v6_read(v, buf, len))
		return -1;
	if (memcmp(buf, str, len)) {
		vtrace_set_error("%s: byte %" PRIu64 ": expected \"%s\"", v->path, v->pos - len,
				 str);
		return -1;
	}
	return 0;
}

/* Formats: @count files (each 8-byte size + data) */
static int v6_skip_files(struct v6 *v)
{
	uint64_t count;

	if (v6_num(v, 4, &count))
		return -1;
	while (count--)
		if (v6_skip_sized(v, 8))
			return -1;
	return 0;
}

static int v6_skip_systems(struct v6 *v)
{
	uint64_t systems;
	char c;

	if (v6_num(v, 4, &systems))
		return -1;
	while (systems--) {
		do {
			if (v6_read(v, &c, 1))
				return -1;
		} while (c);
		if (v6_skip_files(v))
			return -1;
	}
	return 0;
}

static int v6_options(struct v6 *v)
{
	char word[10];
	uint64_t id, size;

	if (v6_read(v, word, 10))
		return -1;
	if (!memcmp(word, "flyrecord", 10)) {
		v->insert = v->pos - 10;
		return 0;
	}
	if (memcmp(word, "options  ", 10)) {
		vtrace_set_error("%s: byte %" PRIu64 ": expected \"options\" or \"flyrecord\""
				 " (latency traces are not supported)", v->path, v->pos - 10);
		return -1;
	}
	v->has_options = true;
	for (;;) {
		if (v6_num(v, 2, &id))
			return -1;
		if (!id)
			break;
		if (v6_num(v, 4, &size))
			return -1;
		v->pos += size;
	}
	v->insert = v->pos - 2;
	return v6_expect(v, "flyrecord", 10);
}

static int v6_parse(struct v6 *v)
{
	uint64_t cpus, page, off;

	v->pos = 14;
	if (v6_num(v, 4, &page) || v6_expect(v, "header_page", 12) || v6_skip_sized(v, 8) ||
	    v6_expect(v, "header_event", 13) || v6_skip_sized(v, 8) || v6_skip_files(v) ||
	    v6_skip_systems(v) || v6_skip_sized(v, 4) || v6_skip_sized(v, 4) ||
	    v6_skip_sized(v, 8) || v6_num(v, 4, &cpus) || v6_options(v))
		return -1;
	v->page = page;
	v->cpus = cpus;
	v->table = v->pos;
	v->end = v->table + 16 * cpus;
	v->data = UINT64_MAX;
	for (uint32_t c = 0; c < v->cpus; c++) {
		if (v6_num(v, 8, &off))
			return -1;
		v->pos += 8;	/* its size */
		if (off && off < v->data)
			v->data = off;
	}
	if (v->data == UINT64_MAX)
		v->data = v->end;
	if (v->data < v->end || !v->page || v->page & (v->page - 1)) {
		vtrace_set_error("%s: byte %" PRIu64 ": CPU data inside the header", v->path,
				 v->table);
		return -1;
	}
	return 0;
}

/* The new header: old one with the options inserted, table moved by @shift */
static int v6_header(struct v6 *v, const char *ins, size_t ins_len, uint64_t shift, FILE *out)
{
	size_t len = v->end - v->insert;
	char *head = malloc(v->insert), *rest = malloc(len);
	int ret = -1;

	if (!head || !rest || read_at(v->fd, 0, head, v->insert, v->path) ||
	    read_at(v->fd, v->insert, rest, len, v->path))
		goto out;
	for (uint32_t c = 0; c < v->cpus; c++) {
		unsigned char *o = (unsigned char *)rest + (v->table - v->insert) + 16 * c;
		uint64_t off = le(o, 8);

		for (int i = 0; off && i < 8; i++)
			o[i] = ((off + shift) >> (8 * i)) & 0xff;
	}
	fwrite(head, 1, v->insert, out);
	fwrite(ins, 1, ins_len, out);
	fwrite(rest, 1, len, out);
	ret = 0;
out:
	free(head);
	free(rest);
	return ret;
}

/* Bytes @from.. of @in to the end of @out (copy_file_range copies in parts) */
static int copy_rest(int in, uint64_t from, int out)
{
	struct stat st;
	loff_t off = from;

	if (fstat(in, &st))
		return -1;
	while (off < st.st_size) {
		ssize_t n = copy_file_range(in, &off, out, NULL, st.st_size - off, 0);

		if (n <= 0)
			return -1;
	}
	return 0;
}

static int write_host_v6(struct dat *gs, int nr, int in, const char *path)
{
	struct v6 v = { .fd = in, .path = gs[0].host };
	uint64_t shift = 0, at;
	char *ins = NULL;
	size_t ins_len = 0;
	FILE *m, *out = NULL;
	int ret = -1;

	if (v6_parse(&v))
		return -1;
	m = open_memstream(&ins, &ins_len);
	if (!m)
		return -1;
	if (!v.has_options)
		fwrite("options  ", 1, 10, m);
	host_options(gs, nr, m);
	if (!v.has_options)
		put_le(m, OPT_DONE, 2);
	if (fclose(m))
		goto out;
	if (v.end + ins_len > v.data)
		shift = (v.end + ins_len - v.data + v.page - 1) / v.page * v.page;
	out = fopen(path, "w");
	if (!out || v6_header(&v, ins, ins_len, shift, out))
		goto out_errno;
	for (at = v.end + ins_len; at < v.data + shift; at++)
		fputc(0, out);
	if (fflush(out) || lseek(fileno(out), 0, SEEK_END) != (off_t)(v.data + shift))
		goto out_errno;
	if (copy_rest(in, v.data, fileno(out)))
		goto out_errno;
	ret = 0;
	goto out;
out_errno:
	vtrace_set_error("%s: %s", path, errno ? strerror(errno) : "cannot write");
out:
	if (out && fclose(out) && !ret) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		ret = -1;
	}
	free(ins);
	return ret;
}

/* A copy of the host's file, its last options section chained to a new one at the end */
static int write_host(struct dat *gs, int nr, const char *path)
{
	const char *host = gs[0].host;
	int in, out = -1, ret = -1;
	unsigned char next[8];
	char *sect = NULL;
	uint32_t desc = 0;
	size_t len = 0;
	int64_t done;
	off_t end;

	in = open(host, O_RDONLY);
	if (in < 0) {
		vtrace_set_error("%s: %s", host, strerror(errno));
		return -1;
	}
	if (read_at(in, 0, next, 8, host) == 0 && pread(in, next, 1, 10) == 1 && next[0] == '6') {
		ret = write_host_v6(gs, nr, in, path);
		close(in);
		return ret;
	}
	done = last_done(in, host, &desc);
	if (done < 0 || host_section(gs, nr, desc, &sect, &len))
		goto out;
	out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (out < 0 || copy_rest(in, 0, out))
		goto out_errno;
	end = lseek(out, 0, SEEK_END);
	for (int i = 0; i < 8; i++)
		next[i] = ((uint64_t)end >> (8 * i)) & 0xff;
	if (end < 0 || pwrite(out, sect, len, end) != (ssize_t)len ||
	    pwrite(out, next, 8, done) != 8)
		goto out_errno;
	ret = 0;
	goto out;
out_errno:
	vtrace_set_error("%s: %s", path, strerror(errno));
out:
	free(sect);
	close(in);
	if (out >= 0 && close(out) && !ret) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		ret = -1;
	}
	return ret;
}

/* ---- the host's trace id and vCPU threads */

/*
 * Which host thread ran each guest CPU's vCPU: vtrace-merge's choice
 * (src/lib/vcpu.c), the thread of the vCPU's name whose sched_switch or
 * kvm_entry..kvm_exit spans hold the guest CPU's events.  A host trace with
 * no such spans: the thread of that name in its saved cmdlines.
 */
static int cmdline_tid(struct dat *d, struct tep_handle *tep, int c)
{
	struct tep_cmdline *cl;
	char comm[32], tids[96] = "";
	int n = 0, tid = 0;
	size_t len = 0;

	snprintf(comm, sizeof(comm), "CPU %d/KVM", d->hist[c]->vcpu_idx);
	for (cl = tep_data_pid_from_comm(tep, comm, NULL); cl;
	     cl = tep_data_pid_from_comm(tep, comm, cl)) {
		if (!n++)
			tid = tep_cmdline_pid(tep, cl);
		if (len < sizeof(tids))
			len += snprintf(tids + len, sizeof(tids) - len, " %d", tep_cmdline_pid(tep, cl));
	}
	if (n > 1)
		dat_warn("guest %s cpu %d: ambiguous: no spans of \"%s\" in the host trace, and %d"
			 " threads of that name in its saved cmdlines (tids%s): tid %d is taken",
			 d->name, c, comm, n, tids, tid);
	if (!n)
		dat_warn("host: no thread \"%s\" in the host trace: guest %s cpu %d has host pid"
			 " 0 in the GUEST option", comm, d->name, c);
	return tid;
}

/* Guest CPU @c's vCPU thread, its events checked as vtrace-merge checks them */
static int vcpu_tid(struct dat *d, const struct vtrace_vthreads *vt, struct tep_handle *tep,
		    int c)
{
	const struct vtrace_vcpu_cand *k;
	struct vtrace_check_cpu cc;
	const struct vtrace_vcpu_fit *fit = &cc.fit;
	char tids[96] = "", name[64];
	size_t len = 0;
	bool amb;
	int tid;

	if (vtrace_check_cpu_init(&cc, vt, d->hist[c], d->khz))
		return -1;
	if (!fit->nr_cand) {
		d->sc_unverified++;
		return cmdline_tid(d, tep, c);
	}
	if (vtrace_check_cpu_read_dump(&cc, d->dump, c, d->hist[c], d->assume_constant)) {
		vtrace_check_cpu_free(&cc);
		return -1;
	}
	k = vtrace_vcpu_fit_best(fit, &amb);
	if (!k->checked)
		d->sc_unverified++;
	vtrace_check_sum_add(&d->sc, &cc, k);
	if (k->outside)
		fprintf(stderr, "vtrace dat: self-check: guest %s cpu %d: %" PRIu64 " checked, %"
			PRIu64 " outside the %s spans of host tid %d %s\n", d->name, c,
			k->checked, k->outside, vtrace_vcpu_fit_has_windows(fit) ?
			"kvm_entry..kvm_exit" : "sched_switch", k->t->tid,
			vtrace_vthread_name(k->t, name, sizeof(name)));
	tid = k->t->tid;
	if (amb) {
		for (int i = 0; i < fit->nr_cand && len < sizeof(tids); i++)
			len += snprintf(tids + len, sizeof(tids) - len, " %d", fit->cand[i].t->tid);
		dat_warn("guest %s cpu %d: ambiguous: %d threads %s %d%s (tids%s) fit the %"
			 PRIu64 " of its events in the host trace equally well: tid %d is taken",
			 d->name, c, fit->nr_cand, k->t->idx >= 0 ? "\"CPU" : "of vCPU",
			 d->hist[c]->vcpu_idx, k->t->idx >= 0 ? "/KVM\"" : "", tids, k->checked,
			 tid);
	}
	vtrace_check_cpu_free(&cc);
	return tid;
}

/* Each guest CPU's vCPU thread in the host trace @path */
static int find_vcpu_tids(struct dat *gs, int nr, const char *path, struct tep_handle *tep)
{
	struct vtrace_vthreads vt;
	int ret = vtrace_vthreads_read_dat(&vt, path);

	for (int i = 0; i < nr && !ret; i++)
		for (unsigned int c = 0; c < gs[i].info->nr_cpus && !ret; c++) {
			gs[i].vcpu_tid[c] = vcpu_tid(&gs[i], &vt, tep, c);
			ret = gs[i].vcpu_tid[c] < 0 ? -1 : 0;
		}
	vtrace_vthreads_free(&vt);
	return ret;
}

/*
 * vtrace-merge's self-check, on the times the files will give: each guest
 * event, on the host's TSC, inside a span of its vCPU's thread.  Events
 * outside make the timeline wrong: no files unless --force.
 */
static int self_check(struct dat *gs, int nr)
{
	uint64_t outside = 0, worst = 0, khz = gs[0].khz;
	const char *unit = khz ? "ns" : "TSC cycles";

	for (int i = 0; i < nr; i++) {
		struct dat *d = &gs[i];
		unsigned int cpus = d->info->nr_cpus;

		outside += d->sc.outside;
		if (d->sc.worst > worst)
			worst = d->sc.worst;
		if (d->sc_unverified == (int)cpus) {
			fprintf(stderr, "vtrace dat: self-check: guest %s: unverified: no spans of"
				" its vCPU threads in the host trace hold its events (record the host"
				" with trace-cmd record -C x86-tsc -e sched:sched_switch -e"
				" kvm:kvm_entry -e kvm:kvm_exit)\n", d->name);
			continue;
		}
		fprintf(stderr, "vtrace dat: self-check: guest %s: %" PRIu64 " events checked, %"
			PRIu64 " outside (tolerance %d ns), worst %" PRIu64 " %s outside: ", d->name,
			d->sc.checked, d->sc.outside, VTRACE_VCPU_TOLERANCE_NS,
			khz ? vtrace_tsc_to_ns(d->sc.worst, khz) : d->sc.worst, unit);
		if (d->sc.outside)
			fputs("FAILED\n", stderr);
		else if (d->sc_unverified)
			fprintf(stderr, "verified on %u of %u guest CPUs\n",
				cpus - d->sc_unverified, cpus);
		else
			fputs("verified\n", stderr);
	}
	if (!outside)
		return 0;
	if (khz)
		worst = vtrace_tsc_to_ns(worst, khz);
	if (gs[0].force) {
		dat_warn("self-check: %" PRIu64 " guest events fall outside the times their vCPU"
			 " could run (worst %" PRIu64 " %s): the files are written (--force), their"
			 " timeline is wrong", outside, worst, unit);
		return 0;
	}
	vtrace_set_error("self-check: %" PRIu64 " guest events fall outside the times their vCPU"
			 " could run (worst %" PRIu64 " %s): the timeline is wrong. Likely causes:"
			 " the offsets or the dump of another VM (pid=), an incomplete offset"
			 " history, a host trace of another boot or capture; --force writes the"
			 " files anyway", outside, worst, unit);
	return -1;
}

/*
 * The host copy keeps the host file's options, and trace-cmd adds its
 * OFFSET and DATE to every time stamp (and applies its TSC2NSEC and
 * TIME_SHIFT): the host would be shifted against its guests.  A record's
 * time stamp read as trace-cmd reads it must be the raw one.
 */
static int check_host_shift(const char *path, struct tracecmd_input *h)
{
	struct tracecmd_input *raw = vtrace_dat_open_raw(path);
	int cpus, ret = 0;

	if (!raw)
		return -1;
	cpus = tep_get_cpus(tracecmd_get_tep(h));
	for (int cpu = 0; cpu < cpus && !ret; cpu++) {
		struct tep_record *a = tracecmd_read_cpu_first(h, cpu);
		struct tep_record *b = tracecmd_read_cpu_first(raw, cpu);

		if (a && b && a->ts != b->ts) {
			vtrace_set_error("%s: trace-cmd reads its CPU %d's first time stamp as %llu,"
					 " the ring buffer's is %llu: its options (OFFSET, DATE,"
					 " TSC2NSEC or TIME_SHIFT: trace-cmd record --ts-offset, --date,"
					 " --tsc2nsec) shift or scale its times, and the host copy would"
					 " keep them: record the host without them", path, cpu,
					 a->ts, b->ts);
			ret = -1;
		}
		tracecmd_free_record(a);
		tracecmd_free_record(b);
	}
	tracecmd_close(raw);
	return ret;
}

static uint64_t fnv64(uint64_t h, const void *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ULL;
	return h;
}

/* The host's TRACEID (made up if it has none) and each guest's vCPU threads */
static int read_host(struct dat *gs, int nr)
{
	const char *host = gs[0].host;
	struct tracecmd_input *h = NULL;
	bool has_id = false;
	uint64_t id = 0;
	int ret;

	if (host) {
		h = tracecmd_open(host, TRACECMD_FL_LOAD_NO_PLUGINS);
		if (!h) {
			vtrace_set_error("%s: trace-cmd cannot open it as a trace.dat", host);
			return -1;
		}
		if (vtrace_dat_check_clock(host, vtrace_dat_clock(h)) ||
		    check_host_shift(host, h)) {
			tracecmd_close(h);
			return -1;
		}
		id = tracecmd_get_traceid(h);
		has_id = id != 0;
	}
	if (!host)
		host = "host";
	if (!id)
		id = fnv64(0xcbf29ce484222325ULL, host, strlen(host));
	for (int i = 0; i < nr; i++) {
		gs[i].host_id = id;
		gs[i].host_has_id = has_id;
		if (h) {
			struct tep_handle *tep = tracecmd_get_tep(h);

			gs[i].host_cpus = tep_get_cpus(tep);
			gs[i].host_kvm = tep_find_event_by_name(tep, "kvm", "kvm_entry") &&
					 tep_find_event_by_name(tep, "kvm", "kvm_exit");
		}
		gs[i].guest_id = fnv64(id, gs[i].name, strlen(gs[i].name)) | 1;
	}
	if (!h) {
		fprintf(stderr, "vtrace dat: self-check: unverified: no host trace (--host) to"
			" check the guests' times against\n");
		return 0;
	}
	ret = find_vcpu_tids(gs, nr, host, tracecmd_get_tep(h));
	tracecmd_close(h);
	return ret ? ret : self_check(gs, nr);
}

/* ---- the guest */

static int open_guest(struct dat *d)
{
	d->dump = vtrace_dump_open(d->dir, VTRACE_DUMP_NO_PLUGINS);
	if (!d->dump)
		return -1;
	d->info = vtrace_dump_info(d->dump);
	d->pid = vtrace_guest_spec_pid(&d->spec, vtrace_dump_qemu_pid(d->dump));
	if (d->pid < 0)
		return -1;
	if (!d->pid) {
		vtrace_set_error("guest %s: no %s/qemu.pid: give --guest %s=%s,pid=PID (or"
				 " libvirt=DOMAIN)", d->name, d->dir, d->name, d->dir);
		return -1;
	}
	if (!d->offsets) {
		vtrace_offsets_missing(d->name, d->host);
		return -1;
	}
	if (vtrace_offsets_check_pid(d->offsets, d->pid, d->name, d->offsets_src))
		return -1;
	d->hist = calloc(d->info->nr_cpus, sizeof(*d->hist));
	d->vcpu_tid = calloc(d->info->nr_cpus, sizeof(*d->vcpu_tid));
	d->first = calloc(d->info->nr_cpus, sizeof(*d->first));
	d->last = calloc(d->info->nr_cpus, sizeof(*d->last));
	if (!d->hist || !d->vcpu_tid || !d->first || !d->last)
		return -1;
	d->host_lo = UINT64_MAX;
	for (unsigned int c = 0; c < d->info->nr_cpus; c++) {
		const struct vtrace_cpu_info *ci = vtrace_dump_cpu(d->dump, c);

		d->hist[c] = ci ? vtrace_offsets_vcpu(d->offsets, d->pid, ci->apic_id) : NULL;
		if (!d->hist[c] || !d->hist[c]->nr) {
			vtrace_set_error("guest %s cpu %u: no offset history for pid %d APIC id"
					 " %u in %s", d->name, c, d->pid, ci ? ci->apic_id : 0,
					 d->offsets_src);
			return -1;
		}
		if (used_intervals(d, c) || check_history(d, c))
			return -1;
	}
	return read_meta(d);
}

static void dat_free(struct dat *d)
{
	for (int i = 0; i < d->nr_files; i++) {
		free(d->files[i].name);
		free(d->files[i].data);
	}
	free(d->files);
	free(d->hist);
	free(d->vcpu_tid);
	free(d->first);
	free(d->last);
	vtrace_dump_close(d->dump);
	vtrace_guest_spec_free(&d->spec);
}

/*
 * "NAME=DIR[,pid=PID|,libvirt=DOMAIN[,connect=URI]]": vtrace-merge's parser;
 * offset=N has no history to write
 */
static int parse_guest(struct dat *d, const char *arg)
{
	if (vtrace_guest_spec_parse(arg, &d->spec))
		return -1;
	if (d->spec.has_offset) {
		vtrace_set_error("--guest %s: offset=N is vtrace-merge's: vtrace dat writes the"
				 " guest's offset history (--offsets) into its TIME_SHIFT", arg);
		return -1;
	}
	d->name = d->spec.name;
	d->dir = d->spec.dir;
	d->pid = d->spec.pid;
	return 0;
}

/*
 * --tsc-khz, else the host trace.dat's vtrace_host events', else tsc_khz
 * beside the offsets file, else beside the host's: TSC2NSEC
 */
static int find_khz(struct dat *gs, int nr)
{
	uint64_t khz = 0;
	int ret = 0;

	if (gs[0].khz_arg)
		ret = vtrace_tsc_khz_read(gs[0].khz_arg, &khz) ? -1 : 1;
	if (!ret && vtrace_offsets_tsc_khz(gs[0].offsets)) {
		khz = vtrace_offsets_tsc_khz(gs[0].offsets);
		ret = 1;
	}
	if (!ret)
		ret = vtrace_tsc_khz_beside(gs[0].offsets_src, &khz);
	if (!ret && gs[0].host)
		ret = vtrace_tsc_khz_beside(gs[0].host, &khz);
	if (ret < 0)
		return -1;
	if (!ret) {
		dat_warn("host TSC frequency unknown (no --tsc-khz, no tsc_khz beside %s): no"
			 " TSC2NSEC, times stay host TSC cycles (trace-cmd and KernelShark take"
			 " them for ns)", gs[0].offsets_src);
		return 0;
	}
	for (int i = 0; i < nr; i++) {
		gs[i].khz = khz;
		tsc2nsec(khz, &gs[i].ns_mult, &gs[i].ns_shift);
	}
	tsc2nsec_anchor(gs, nr);
	return 0;
}

/* ---- a KernelShark 2.2 session: host and guests, a KVM combo plot per vCPU */

/*
 * KernelShark's session file (libkshark-configio.c, KsSession.cpp): the
 * streams in load order (host 0, guests 1..), each with its file's
 * absolute path and mtime (a session whose files changed is refused), its
 * filters, plugins and CPU plots; the dual marker (KernelShark 2.2 crashes
 * on a session without one); a combo plot per guest CPU: the guest CPU
 * (CPU | GUEST draw) over its vCPU thread on the host (TASK | HOST draw),
 * which the kvm_combo plugin draws from the host's kvm_entry/kvm_exit.
 */
enum {
	KS_TASK_DRAW	= 1 << 0,
	KS_CPU_DRAW	= 1 << 1,
	KS_HOST_DRAW	= 1 << 2,
	KS_GUEST_DRAW	= 1 << 3,
};

static int put_ks_stream(FILE *f, int sd, const char *file, bool kvm, int cpus)
{
	char abs[PATH_MAX];
	struct stat st;

	if (!realpath(file, abs) || stat(abs, &st)) {
		vtrace_set_error("%s: %s", file, strerror(errno));
		return -1;
	}
	fprintf(f, "%s  {\n   \"type\": \"kshark.config.stream\",\n   \"stream id\": %d,\n"
		"   \"data\": { \"type\": \"kshark.config.data\", \"file\": ", sd ? ",\n" : "",
		sd);
	vtrace_json_string(f, abs);
	fprintf(f, ", \"name\": \"top buffer\", \"time\": %lld },\n", (long long)st.st_mtime);
	fprintf(f, "   \"filters\": { \"type\": \"kshark.config.filter\", \"filter mask\": 7 },\n"
		"   \"plugins\": { \"type\": \"kshark.config.plugins\", \"registered\":"
		" [ [ \"sched_events\", true ], [ \"missed_events\", true ]%s ] },\n"
		"   \"CPUPlots\": [", kvm ? ", [ \"kvm_combo\", true ]" : "");
	for (int c = 0; c < cpus; c++)
		fprintf(f, "%s %d", c ? "," : "", c);
	fprintf(f, " ],\n   \"TaskPlots\": [ ]\n  }");
	return 0;
}

static int write_session(struct dat *gs, int nr, const char *path)
{
	char file[PATH_MAX];
	FILE *f = fopen(path, "w");
	int ret = -1, n = 0;

	if (!f) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n \"type\": \"kshark.config.session\",\n \"data streams\": [\n");
	snprintf(file, sizeof(file), "%s/host.dat", gs[0].out);
	if (put_ks_stream(f, 0, file, gs[0].host_kvm, gs[0].host_cpus))
		goto out;
	for (int i = 0; i < nr; i++) {
		snprintf(file, sizeof(file), "%s/%s.dat", gs[i].out, gs[i].name);
		if (put_ks_stream(f, i + 1, file, false, gs[i].info->nr_cpus))
			goto out;
	}
	fprintf(f, "\n ],\n \"Markers\": { \"type\": \"kshark.config.markers\", \"markA\":"
		" { \"isSet\": false }, \"markB\": { \"isSet\": false }, \"Active\": \"A\" },\n"
		" \"Splitter\": [ 600, 300 ],\n \"ComboPlots\": [");
	for (int i = 0; gs[0].host_kvm && i < nr; i++)
		for (unsigned int c = 0; c < gs[i].info->nr_cpus; c++)
			if (gs[i].vcpu_tid[c])
				fprintf(f, "%s\n  [ [ %d, %d, %u ], [ 0, %d, %d ] ]", n++ ? "," : "",
					i + 1, KS_CPU_DRAW | KS_GUEST_DRAW, c,
					KS_TASK_DRAW | KS_HOST_DRAW, gs[i].vcpu_tid[c]);
	fprintf(f, "\n ]\n}\n");
	ret = 0;
out:
	if (fclose(f) && !ret) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		ret = -1;
	}
	if (!ret && gs[0].host_kvm)
		printf("%s: kernelshark -s %s: host and guest%s with the KVM combo plot of %d"
		       " vCPU%s\n", path, path, nr > 1 ? "s" : "", n, n == 1 ? "" : "s");
	else if (!ret)
		printf("%s: kernelshark -s %s: host and guest%s (no KVM combo plots: the host"
		       " trace has no kvm:kvm_entry/kvm:kvm_exit)\n", path, path, nr > 1 ? "s" : "");
	return ret;
}

/* --offsets FILE, else the host trace.dat's vtrace_host events: vtrace-merge's history */
static int load_offsets(struct dat *gs, int nr)
{
	struct vtrace_offsets *o;
	const char *src;
	bool found;

	o = vtrace_offsets_load(gs[0].offsets_path, gs[0].host, &src, &found);
	/* a capture whose host trace has no vtrace_host events: its tsc_offsets copy */
	if (!o && !found && gs[0].capture_offsets)
		o = vtrace_offsets_load(gs[0].capture_offsets, NULL, &src, &found);
	if (!o && found)
		return -1;
	for (int i = 0; i < nr; i++) {
		gs[i].offsets = o;
		gs[i].offsets_src = src;
	}
	return 0;
}

static int run(struct dat *gs, int nr)
{
	char path[PATH_MAX];

	if (load_offsets(gs, nr))
		return -1;
	for (int i = 0; i < nr; i++)
		if (open_guest(&gs[i]))
			return -1;
	if (find_khz(gs, nr) || read_host(gs, nr))
		return -1;
	if (gs[0].ns_mult)
		printf("times in ns: TSC2NSEC tsc * %u >> %u (tsc_khz %" PRIu64 "), OFFSET %" PRId64
		       ": the guests' events within %" PRIu64 " ns of vtrace-merge's\n",
		       gs[0].ns_mult, gs[0].ns_shift, gs[0].khz, gs[0].ns_offset, gs[0].ns_error);
	if (mkdir(gs[0].out, 0755) && errno != EEXIST) {
		vtrace_set_error("%s: %s", gs[0].out, strerror(errno));
		return -1;
	}
	for (int i = 0; i < nr; i++) {
		struct dat *g = &gs[i];

		snprintf(path, sizeof(path), "%s/%s.dat", g->out, g->name);
		if (write_guest(g, path))
			return -1;
		printf("%s: guest %s, %u CPUs, TIME_SHIFT from %s (pid %d), trace id 0x%" PRIx64
		       "\n", path, g->name, g->info->nr_cpus, g->offsets_src, g->pid, g->guest_id);
	}
	if (!gs[0].host)
		return 0;
	snprintf(path, sizeof(path), "%s/host.dat", gs[0].out);
	if (write_host(gs, nr, path))
		return -1;
	printf("%s: %s with the GUEST option of %d guest%s\n", path, gs[0].host, nr,
	       nr > 1 ? "s" : "");
	if (!gs[0].host_kvm)
		dat_warn("%s has no kvm:kvm_entry/kvm:kvm_exit events: KernelShark's KVM combo"
			 " plots (kvm_combo) need them: record the host with trace-cmd record -C"
			 " x86-tsc -e kvm:kvm_entry -e kvm:kvm_exit (and the sched events)",
			 gs[0].host);
	snprintf(path, sizeof(path), "%s/kernelshark.json", gs[0].out);
	return write_session(gs, nr, path);
}

/* --guest NAME=DIR[,pid=PID|,libvirt=DOMAIN...]: one more guest */
static struct dat *add_guest(struct dat **gs, int *nr, const char *arg)
{
	struct dat *n = realloc(*gs, (*nr + 1) * sizeof(*n));

	if (!n)
		return NULL;
	*gs = n;
	memset(&n[*nr], 0, sizeof(*n));
	n[*nr].sc = (struct vtrace_check_sum)VTRACE_CHECK_SUM_INIT;
	if (parse_guest(&n[*nr], arg)) {
		vtrace_guest_spec_free(&n[*nr].spec);
		return NULL;
	}
	for (int i = 0; i < *nr; i++)
		if (!strcmp(n[i].name, n[*nr].name)) {
			vtrace_set_error("--guest %s: NAME %s used twice", arg, n[i].name);
			vtrace_guest_spec_free(&n[*nr].spec);
			return NULL;
		}
	return &n[(*nr)++];
}

static void free_guests(struct dat *gs, int nr)
{
	if (nr)
		vtrace_offsets_close(gs[0].offsets);
	for (int i = 0; i < nr; i++)
		dat_free(&gs[i]);
	free(gs);
}

/* CAPTURE: its guests and host trace (lib/capture.c); --out defaults to CAPTURE/dat */
static int dat_capture(const char *dir, struct dat **gs, int *nr, struct dat *common,
		       struct vtrace_capture **cap, char **host, char **out, char **offsets)
{
	char **specs = NULL;
	int n, ret = 0;

	if (*nr || common->host || common->offsets_path) {
		vtrace_set_error("%s: a capture folder names its host trace and guests itself:"
				 " leave --host, --guest and --offsets out", dir);
		return -1;
	}
	*cap = vtrace_capture_read(dir);
	if (!*cap)
		return -1;
	n = vtrace_capture_guests(*cap, &specs);
	for (int i = 0; i < n && !ret; i++)
		if (!add_guest(gs, nr, specs[i]))
			ret = -1;
	for (int i = 0; specs && specs[i]; i++)
		free(specs[i]);
	free(specs);
	*host = vtrace_capture_path(*cap, (*cap)->host);
	common->host = *host;
	if ((*cap)->offsets)
		common->capture_offsets = *offsets = vtrace_capture_path(*cap, (*cap)->offsets);
	if (!common->out && asprintf(out, "%s/dat", dir) > 0)
		common->out = *out;
	if (n < 0 || !*host || !common->out)
		ret = -1;
	return ret;
}

int vtrace_cmd_dat(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "guest",	required_argument, NULL, 'g' },
		{ "offsets",	required_argument, NULL, 'o' },
		{ "host",	required_argument, NULL, 'H' },
		{ "out",	required_argument, NULL, 'O' },
		{ "tsc-khz",	required_argument, NULL, 'k' },
		{ "assume-constant-offset", no_argument, NULL, 'a' },
		{ "force",	no_argument,	   NULL, 'f' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dat common = { 0 }, *gs = NULL;
	struct vtrace_capture *cap = NULL;
	char *cap_host = NULL, *cap_out = NULL, *cap_offsets = NULL;
	int opt, ret, nr = 0;

	vtrace_set_progname("vtrace dat");
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			if (!add_guest(&gs, &nr, optarg)) {
				fprintf(stderr, "vtrace dat: %s\n", vtrace_last_error());
				free_guests(gs, nr);
				return 2;
			}
			break;
		case 'o':	common.offsets_path = optarg; break;
		case 'H':	common.host = optarg; break;
		case 'O':	common.out = optarg; break;
		case 'k':	common.khz_arg = optarg; break;
		case 'a':	common.assume_constant = 1; break;
		case 'f':	common.force = 1; break;
		case 'h':	fputs(dat_usage, stdout); free_guests(gs, nr); return 0;
		default:	fputs(dat_usage, stderr); free_guests(gs, nr); return 2;
		}
	}
	if (optind == argc - 1 &&
	    dat_capture(argv[optind++], &gs, &nr, &common, &cap, &cap_host, &cap_out,
			&cap_offsets)) {
		fprintf(stderr, "vtrace dat: error: %s\n", vtrace_last_error());
		ret = 1;
		goto out;
	}
	if (optind < argc || !nr || !common.out) {
		fprintf(stderr, "vtrace dat: --guest and --out are needed\n%s",
			dat_usage);
		ret = 2;
		goto out;
	}
	for (int i = 0; i < nr; i++) {
		gs[i].offsets_path = common.offsets_path;
		gs[i].capture_offsets = common.capture_offsets;
		gs[i].host = common.host;
		gs[i].out = common.out;
		gs[i].khz_arg = common.khz_arg;
		gs[i].assume_constant = common.assume_constant;
		gs[i].force = common.force;
	}
	tracecmd_set_loglevel(TEP_LOG_WARNING);
	ret = run(gs, nr) ? 1 : 0;
	if (ret)
		fprintf(stderr, "vtrace dat: error: %s\n", vtrace_last_error());
out:
	free_guests(gs, nr);
	vtrace_capture_free(cap);
	free(cap_host);
	free(cap_out);
	free(cap_offsets);
	return ret;
}
