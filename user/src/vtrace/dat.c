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
 *     0 that ends its options (struct v6, dat-host.c)
 *
 *   kernelshark.json (with the host): a KernelShark session of the files,
 *     a KVM combo plot per vCPU (dat_write_session())
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
 *
 * The files (dat-local.h): this one is the command; dat-guest.c writes a
 * guest's file, dat-host.c the host's copy, dat-vcpu.c finds each guest
 * CPU's vCPU thread and runs the self-check, dat-session.c writes the
 * KernelShark session.
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

#include "dat-local.h"
#include "vtrace-check.h"
#include "vtrace-dump.h"
#include "vtrace-local.h"
#include "vtrace-proto.h"
#include "vtrace-tsc.h"
#include "vtrace-capture.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

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
		if (dat_used_intervals(d, c) || dat_check_history(d, c))
			return -1;
	}
	return dat_read_meta(d);
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
		dat_tsc2nsec(khz, &gs[i].ns_mult, &gs[i].ns_shift);
	}
	dat_tsc2nsec_anchor(gs, nr);
	return 0;
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
	if (find_khz(gs, nr) || dat_read_host(gs, nr))
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
		if (dat_write_guest(g, path))
			return -1;
		printf("%s: guest %s, %u CPUs, TIME_SHIFT from %s (pid %d), trace id 0x%" PRIx64
		       "\n", path, g->name, g->info->nr_cpus, g->offsets_src, g->pid, g->guest_id);
	}
	if (!gs[0].host)
		return 0;
	snprintf(path, sizeof(path), "%s/host.dat", gs[0].out);
	if (dat_write_host(gs, nr, path))
		return -1;
	printf("%s: %s with the GUEST option of %d guest%s\n", path, gs[0].host, nr,
	       nr > 1 ? "s" : "");
	if (!gs[0].host_kvm)
		dat_warn("%s has no kvm:kvm_entry/kvm:kvm_exit events: KernelShark's KVM combo"
			 " plots (kvm_combo) need them: record the host with trace-cmd record -C"
			 " x86-tsc -e kvm:kvm_entry -e kvm:kvm_exit (and the sched events)",
			 gs[0].host);
	snprintf(path, sizeof(path), "%s/kernelshark.json", gs[0].out);
	return dat_write_session(gs, nr, path);
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
