// SPDX-License-Identifier: GPL-2.0
/* main.c: vtrace-merge command line (vtrace_merge_main(); main() is in vtrace-merge.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "merge-local.h"
#include "vtrace-capture.h"
#include "vtrace-util.h"

static const char usage_text[] =
"usage: vtrace-merge [--host FILE|DIR] [--guest NAME=DIR[,pid=PID][,offset=N]]...\n"
"                    [--offsets FILE]\n"
"                    [--tsc-khz KHZ|FILE] [OPTIONS]\n"
"       vtrace-merge CAPTURE [OPTIONS]\n"
"\n"
"Merge the host's trace and guest dumps into one stream on the host's TSC.\n"
"\n"
"  CAPTURE                  a capture folder of vtrace record: its host trace and guests,\n"
"                           as its manifest names them\n"
"  --host FILE|DIR          host trace.dat (trace-cmd record -C x86-tsc) or host dump folder\n"
"                           (marked by a file host_dump in it)\n"
"  --guest NAME=DIR[,pid=PID][,offset=N]  a guest dump folder (ctl, cpuK, qemu.pid);\n"
"                           repeatable; offset=N: a constant TSC offset (KVM's debugfs\n"
"                           tsc-offset) for a VM without offset records;\n"
"                           libvirt=DOMAIN[,connect=URI] instead of pid=: without\n"
"                           DIR/qemu.pid, the pid of that running libvirt domain\n"
"  --offsets FILE           vtrace_host's tsc_offsets file (default: the host trace.dat's\n"
"                           vtrace_host:tsc_offset events, trace-cmd record -e vtrace_host)\n"
"  --tsc-khz KHZ|FILE       host TSC frequency (default: the host trace.dat's vtrace_host\n"
"                           events', tsc_khz in the offsets file's or the host trace.dat's\n"
"                           folder, or a host dump's META_INFO)\n"
"  --format FMT             text (default), jsonl, perfetto (Chrome JSON trace events for\n"
"                           ui.perfetto.dev) or svg (a picture of the CPUs' tasks)\n"
"  --raw-tsc                show host TSC values instead of seconds\n"
"  --stats                  per machine and CPU counters instead of events\n"
"  --from NS, --to NS       time window on the host clock (ns, or seconds with a '.')\n"
"  --machine NAME           print only these machines (repeatable, or comma list)\n"
"  --event [SYS:]NAME       print only these events (globs; repeatable, or comma list)\n"
"  --vmlinux [NAME=]FILE    resolve NAME's kernel addresses with this vmlinux (elfutils)\n"
"  --explain                guest wake-ups later than --threshold, per cause (host task,\n"
"                           host irq/softirq, host idle, guest task, ...), then the worst:\n"
"                           what the host ran on the vCPU's host CPU, the timeline\n"
"  --threshold DUR          with --explain: late means later than DUR (default 100us;\n"
"                           ns, us, ms or s, a bare number is us)\n"
"  --worst N                with --explain: tell the story of the worst N (default 3)\n"
"  --task COMM              with --explain: only wake-ups of guest tasks named COMM (glob);\n"
"                           when some of them are real-time (prio < 100 in the guest's\n"
"                           sched events), only those (cyclictest's measuring threads,\n"
"                           not its main thread): a line says which were left out\n"
"  --tid TID[,TID...]       with --explain: only wake-ups of these guest threads, of any\n"
"                           priority (cyclictest prints its threads' tids: T: 0 ( 159))\n"
"  --assume-constant-offset convert guest events the offset history does not cover\n"
"                           (before it, or after a history cut by dropped records) with\n"
"                           the nearest offset known (an approximation; warns)\n"
"  --skip-bad-pages         skip and count damaged pages instead of stopping\n"
"  --force                  exit 0 even when the self-check finds guest events outside\n"
"                           the times their vCPU could run (the summary still says so)\n"
"  --progress, --no-progress  progress on stderr (default: when stderr is a terminal)\n"
"  -q, --quiet              no warnings\n"
"  -h, --help               this text\n";

enum {
	OPT_HOST = 256, OPT_GUEST, OPT_OFFSETS, OPT_KHZ, OPT_FORMAT, OPT_RAW, OPT_STATS,
	OPT_FROM, OPT_TO, OPT_MACHINE, OPT_EVENT, OPT_VMLINUX, OPT_ASSUME, OPT_SKIP,
	OPT_PROGRESS, OPT_NO_PROGRESS, OPT_EXPLAIN, OPT_TASK, OPT_THRESHOLD, OPT_WORST,
	OPT_FORCE, OPT_TID,
};

static const struct option long_opts[] = {
	{ "host",			required_argument, NULL, OPT_HOST },
	{ "guest",			required_argument, NULL, OPT_GUEST },
	{ "offsets",			required_argument, NULL, OPT_OFFSETS },
	{ "tsc-khz",			required_argument, NULL, OPT_KHZ },
	{ "format",			required_argument, NULL, OPT_FORMAT },
	{ "raw-tsc",			no_argument,	   NULL, OPT_RAW },
	{ "stats",			no_argument,	   NULL, OPT_STATS },
	{ "from",			required_argument, NULL, OPT_FROM },
	{ "to",				required_argument, NULL, OPT_TO },
	{ "machine",			required_argument, NULL, OPT_MACHINE },
	{ "event",			required_argument, NULL, OPT_EVENT },
	{ "vmlinux",			required_argument, NULL, OPT_VMLINUX },
	{ "assume-constant-offset",	no_argument,	   NULL, OPT_ASSUME },
	{ "skip-bad-pages",		no_argument,	   NULL, OPT_SKIP },
	{ "progress",			no_argument,	   NULL, OPT_PROGRESS },
	{ "no-progress",		no_argument,	   NULL, OPT_NO_PROGRESS },
	{ "explain",			no_argument,	   NULL, OPT_EXPLAIN },
	{ "threshold",			required_argument, NULL, OPT_THRESHOLD },
	{ "worst",			required_argument, NULL, OPT_WORST },
	{ "task",			required_argument, NULL, OPT_TASK },
	{ "tid",			required_argument, NULL, OPT_TID },
	{ "force",			no_argument,	   NULL, OPT_FORCE },
	{ "quiet",			no_argument,	   NULL, 'q' },
	{ "help",			no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct cmdline {
	struct merge_opts	opts;
	const char		*host;
	const char		*offsets;
	const char		*khz;
	char			**guests;
	int			nr_guests;
	char			**vmlinux;
	int			nr_vmlinux;
	int			nr_machines;
	int			nr_events;
	struct vtrace_capture	*capture;	/* the CAPTURE folder's manifest */
	char			**capture_guests;	/* its guests' --guest specs */
	char			*capture_host;	/* its host trace */
	char			*capture_offsets;	/* its tsc_offsets, or NULL */
	struct guest_vm		*vms;		/* each guest's VM when the host trace told it */
};

static int die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "vtrace-merge: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	return 2;
}

/* Append the comma-separated items of @arg to the NULL-terminated @list */
static int add_list(char ***list, int *nr, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;

	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char **n = realloc(*list, (*nr + 2) * sizeof(**list));

		if (!n)
			return -1;
		*list = n;
		n[(*nr)++] = strdup(t);
		n[*nr] = NULL;
	}
	free(copy);
	return 0;
}

/* --tid 159,160: appended to o->tids (repeatable) */
static int add_tids(struct merge_opts *o, const char *arg)
{
	const char *p = arg;

	do {
		char *end;
		long v = strtol(p, &end, 10);
		int *n;

		if (end == p || v <= 0 || v > INT_MAX || (*end && *end != ','))
			return -1;
		n = realloc(o->tids, (o->nr_tids + 1) * sizeof(*n));
		if (!n)
			return -1;
		o->tids = n;
		o->tids[o->nr_tids++] = v;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

static int add_one(char ***list, int *nr, const char *arg)
{
	char **n = realloc(*list, (*nr + 2) * sizeof(**list));

	if (!n)
		return -1;
	*list = n;
	n[(*nr)++] = (char *)arg;
	n[*nr] = NULL;
	return 0;
}

/* "123" ns or "1.5" seconds */
static int parse_time(const char *s, uint64_t *ns)
{
	const char *dot = strchr(s, '.');
	uint64_t sec, frac = 0;
	char buf[32];
	size_t digits;

	if (!dot)
		return vtrace_parse_u64(s, ns);
	if ((size_t)(dot - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, dot - s);
	buf[dot - s] = '\0';
	digits = strlen(dot + 1);
	if (vtrace_parse_u64(buf, &sec) || digits > 9 || (digits && vtrace_parse_u64(dot + 1, &frac)))
		return -1;
	while (digits++ < 9)
		frac *= 10;
	*ns = sec * 1000000000ULL + frac;
	return 0;
}

/* CAPTURE: the host trace and the guests of a vtrace record folder (lib/capture.c) */
static int use_capture(struct cmdline *c, const char *dir)
{
	int nr;

	if (c->host || c->nr_guests || c->offsets)
		return die_usage("%s: a capture folder names its host trace and guests itself:"
				 " leave --host, --guest and --offsets out", dir);
	c->capture = vtrace_capture_read(dir);
	if (!c->capture) {
		fprintf(stderr, "vtrace-merge: error: %s\n", vtrace_last_error());
		return 1;
	}
	c->opts.capture = c->capture;
	nr = vtrace_capture_guests(c->capture, &c->capture_guests);
	for (int i = 0; i < nr; i++)
		add_one(&c->guests, &c->nr_guests, c->capture_guests[i]);
	c->host = c->capture_host = vtrace_capture_path(c->capture, c->capture->host);
	if (c->capture->offsets)
		c->capture_offsets = vtrace_capture_path(c->capture, c->capture->offsets);
	if (nr < 0 || !c->host) {
		fprintf(stderr, "vtrace-merge: error: %s: out of memory\n", dir);
		return 1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct cmdline *c)
{
	struct merge_opts *o = &c->opts;
	int opt;

	o->to_ns = UINT64_MAX;
	o->threshold_ns = EXPLAIN_THRESHOLD_NS;
	o->worst = EXPLAIN_WORST;
	o->progress = isatty(STDERR_FILENO);
	while ((opt = getopt_long(argc, argv, "qh", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_HOST:		c->host = optarg; break;
		case OPT_GUEST:		add_one(&c->guests, &c->nr_guests, optarg); break;
		case OPT_OFFSETS:	c->offsets = optarg; break;
		case OPT_KHZ:		c->khz = optarg; break;
		case OPT_RAW:		o->raw_tsc = true; break;
		case OPT_STATS:		o->stats = true; break;
		case OPT_ASSUME:	o->assume_constant = true; break;
		case OPT_SKIP:		o->skip_bad = true; break;
		case OPT_FORCE:		o->force = true; break;
		case OPT_PROGRESS:	o->progress = true; break;
		case OPT_NO_PROGRESS:	o->progress = false; break;
		case OPT_EXPLAIN:	o->explain = true; break;
		case OPT_TASK:		o->task = optarg; break;
		case 'q':		vtrace_set_quiet(true); break;
		case OPT_VMLINUX:	add_one(&c->vmlinux, &c->nr_vmlinux, optarg); break;
		case OPT_MACHINE:	add_list(&o->machines, &c->nr_machines, optarg); break;
		case OPT_EVENT:		add_list(&o->events, &c->nr_events, optarg); break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				o->format = MERGE_TEXT;
			else if (!strcmp(optarg, "jsonl"))
				o->format = MERGE_JSONL;
			else if (!strcmp(optarg, "perfetto"))
				o->format = MERGE_PERFETTO;
			else if (!strcmp(optarg, "svg"))
				o->format = MERGE_SVG;
			else
				return die_usage("--format %s: expected text, jsonl, perfetto or svg",
						 optarg);
			break;
		case OPT_THRESHOLD:
			if (explain_parse_duration(optarg, &o->threshold_ns))
				return die_usage("--threshold %s: expected a duration (100us, 1ms)",
						 optarg);
			break;
		case OPT_WORST:
			o->worst = atoi(optarg);
			if (o->worst < 0 || o->worst > 100000)
				return die_usage("--worst %s: expected 0 to 100000", optarg);
			break;
		case OPT_TID:
			if (add_tids(o, optarg))
				return die_usage("--tid %s: expected thread ids, comma-separated",
						 optarg);
			break;
		case OPT_FROM:
			if (parse_time(optarg, &o->from_ns))
				return die_usage("--from %s: expected ns or seconds", optarg);
			break;
		case OPT_TO:
			if (parse_time(optarg, &o->to_ns))
				return die_usage("--to %s: expected ns or seconds", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			return die_usage("%s", "bad option");
		}
	}
	if (optind + 1 < argc)
		return die_usage("unexpected argument %s", argv[optind + 1]);
	if (optind < argc)
		return use_capture(c, argv[optind]);
	if (!c->host && !c->nr_guests)
		return die_usage("%s", "nothing to merge: give --host and/or --guest");
	return 0;
}

/*
 * --tsc-khz, else the host trace.dat's own (its vtrace_host:tsc_offset
 * events carry it), else tsc_khz beside the offsets (file or host
 * trace.dat), else a host dump's
 */
static int find_khz(struct cmdline *c, struct machine *host, struct vtrace_offsets *offsets)
{
	int ret;

	if (c->khz)
		return vtrace_tsc_khz_read(c->khz, &c->opts.khz);
	if (offsets && vtrace_offsets_tsc_khz(offsets)) {
		c->opts.khz = vtrace_offsets_tsc_khz(offsets);
		return 0;
	}
	if (c->opts.offsets_src) {
		ret = vtrace_tsc_khz_beside(c->opts.offsets_src, &c->opts.khz);
		if (ret)
			return ret < 0 ? -1 : 0;
	}
	if (host && host->dump) {
		c->opts.khz = vtrace_dump_info(host->dump)->tsc_khz;
		return 0;
	}
	if (!c->opts.raw_tsc && !c->opts.stats) {
		vtrace_set_error("host TSC frequency unknown: give --tsc-khz KHZ (or --raw-tsc)");
		return -1;
	}
	return 0;
}

/*
 * The offset history: --offsets FILE, else the host trace.dat's own
 * vtrace_host:tsc_offset events (none: NULL, and guests are refused in
 * machine_bind_offsets() unless they have offset=N).
 */
static int open_offsets(struct cmdline *c, struct machine *host, struct vtrace_offsets **offsets)
{
	bool found;

	/* a dump folder has no such events */
	if (host && host->dat_pages)
		c->opts.host_dat = host->path;
	*offsets = vtrace_offsets_load(c->offsets, c->opts.host_dat, &c->opts.offsets_src, &found);
	/* a capture whose host trace has no vtrace_host events: its tsc_offsets copy */
	if (!*offsets && !found && c->capture_offsets)
		*offsets = vtrace_offsets_load(c->capture_offsets, NULL, &c->opts.offsets_src,
					       &found);
	c->opts.offsets_in_trace = *offsets && vtrace_offsets_is_trace(*offsets);
	return *offsets || !found ? 0 : -1;
}

/* --vmlinux [NAME=]FILE: NAME defaults to the only guest, else to the host */
static int attach_vmlinux(struct cmdline *c, struct machine **machines, int nr)
{
	for (int i = 0; i < c->nr_vmlinux; i++) {
		char *spec = c->vmlinux[i], *eq = strchr(spec, '=');
		const char *file = eq ? eq + 1 : spec;
		struct machine *m = NULL;
		int guests = 0;

		for (int k = 0; k < nr; k++) {
			if (eq && !strncmp(machines[k]->name, spec, eq - spec) &&
			    !machines[k]->name[eq - spec])
				m = machines[k];
			if (!eq && machines[k]->guest && !guests++)
				m = machines[k];
		}
		if (!eq && guests != 1)
			m = machines[0]->guest ? NULL : machines[0];
		if (!m) {
			vtrace_set_error("--vmlinux %s: which machine? write NAME=FILE", spec);
			return -1;
		}
		if (symbols_attach(m, file))
			return -1;
	}
	return 0;
}

/* Where this run's output starts in standard output, a regular file; -1 for anything else */
static off_t output_file_start(void)
{
	struct stat st;

	int fl = fcntl(STDOUT_FILENO, F_GETFL);

	if (fstat(STDOUT_FILENO, &st) || !S_ISREG(st.st_mode) || fl < 0)
		return -1;
	/* >>: the offset is 0 until the first write, which goes to the end */
	return fl & O_APPEND ? st.st_size : lseek(STDOUT_FILENO, 0, SEEK_CUR);
}

/*
 * A timeline the self-check FAILED is wrong: the file it went to keeps
 * nothing of it (what was there before this run stays).  A pipe or a
 * terminal has it already, its last line (jsonl), metadata (perfetto) or
 * title (svg) saying FAILED.
 */
static void drop_output(off_t start)
{
	char *why;

	if (start < 0 || ftruncate(STDOUT_FILENO, start))
		return;
	lseek(STDOUT_FILENO, start, SEEK_SET);
	why = strdup(vtrace_last_error());
	if (why)
		vtrace_set_error("%s; what it wrote to the output file was removed", why);
	free(why);
}

/*
 * Guests whose VM nothing names (no qemu.pid, no pid=): the host trace
 * tells it (guest-vm.c), once; the inputs opened again take it from there
 */
static int choose_vms(struct cmdline *c, struct machine **ms, int nr,
		      struct vtrace_offsets *offsets)
{
	if (!guest_vm_needed(ms, nr, offsets))
		return 0;
	if (!c->vms && !(c->vms = calloc(nr, sizeof(*c->vms))))
		return -1;
	if (find_khz(c, ms[0], offsets))	/* the self-check's tolerance */
		return -1;
	return guest_vm_choose(ms, nr, offsets, &c->opts, c->vms);
}

static int open_all(struct cmdline *c, struct machine ***out, int *nr,
		    struct vtrace_offsets **offsets)
{
	struct machine **ms = calloc(c->nr_guests + 1, sizeof(*ms));

	*out = ms;
	if (!ms)
		return -1;
	if (c->host) {
		ms[*nr] = machine_open_host(c->host, &c->opts);
		if (!ms[*nr])
			return -1;
		ms[*nr]->index = *nr;
		(*nr)++;
	}
	for (int i = 0; i < c->nr_guests; i++) {
		for (int k = 0; k < *nr; k++)
			if (!strncmp(ms[k]->name, c->guests[i], strlen(ms[k]->name)) &&
			    c->guests[i][strlen(ms[k]->name)] == '=') {
				vtrace_set_error("--guest %s: name used twice", c->guests[i]);
				return -1;
			}
		ms[*nr] = machine_open_guest(c->guests[i], &c->opts);
		if (!ms[*nr])
			return -1;
		ms[*nr]->index = *nr;
		(*nr)++;
	}
	if (open_offsets(c, c->host ? ms[0] : NULL, offsets))
		return -1;
	if (choose_vms(c, ms, *nr, *offsets))
		return -1;
	for (int i = 0; i < *nr; i++)
		if (machine_bind_offsets(ms[i], *offsets, &c->opts) ||
		    machine_select(ms[i], &c->opts))
			return -1;
	if (find_khz(c, c->host ? ms[0] : NULL, *offsets) || attach_vmlinux(c, ms, *nr))
		return -1;
	return 0;
}

static void close_all(struct machine **machines, int nr, struct vtrace_offsets *offsets)
{
	for (int i = 0; i < nr; i++)
		machine_close(machines[i]);
	free(machines);
	vtrace_offsets_close(offsets);
}

/*
 * An offset history that sets a guest's clock back makes some of its events
 * ambiguous: the host's guest windows place them, in every pass as in the
 * plain merge (check.c, src/lib/tsc.c).  NULL with no error when not needed.
 */
static int explain_windows(struct cmdline *c, struct machine **ms, int nr, struct check **chk)
{
	*chk = NULL;
	if (!check_may_be_ambiguous(ms, nr))
		return 0;
	*chk = check_open(ms, nr, &c->opts);
	return *chk ? 0 : -1;
}

/*
 * --explain's first pass reads every event, as the plain merge does: the
 * self-check runs on it (issue 15), and a timeline that fails it tells no
 * story, unless --force.  @check false: the caller merges the same inputs
 * after it (--format svg, perfetto), and that merge checks them.  With a
 * host trace the check is open in any case: its fit of the guest's events
 * to the host's vCPU threads tells which thread of a name (several VMs) is
 * each guest CPU's (source->fit, vtrace_vcpu_fit_tid()).
 */
static int explain_check_open(struct cmdline *c, struct machine **ms, int nr,
			      struct vtrace_offsets *offsets, bool check, struct check **chk)
{
	if (!check && !(nr && !ms[0]->guest))
		return explain_windows(c, ms, nr, chk);
	*chk = check_open(ms, nr, &c->opts);
	if (!*chk || (check && check_offsets(*chk, offsets, c->opts.offsets_src)))
		return -1;
	return 0;
}

/*
 * Each host cpu's tick, read from the start of the host trace (ticks.c) on
 * inputs of its own; NULL when not known: pass 1 then opens them again and
 * says what went wrong, if anything did
 */
static struct ticks *explain_ticks(struct cmdline *c, int *ret)
{
	struct vtrace_offsets *offsets = NULL;
	struct machine **ms = NULL;
	struct ticks *t = NULL;
	bool quiet = vtrace_set_quiet(true), err = false;
	int nr = 0;

	if (!open_all(c, &ms, &nr, &offsets))
		t = ticks_open(ms, nr, &err);
	if (t) {
		struct merge_pass pass = ticks_pass(t);
		struct merge_opts o = c->opts;

		if (merge_run(ms, nr, &o, &pass, 1)) {
			ticks_free(t);
			t = NULL;
			err = true;
		}
	}
	close_all(ms, nr, offsets);
	vtrace_set_quiet(quiet);
	*ret = err ? -1 : 0;
	return t;
}

/* --explain's pass 1 over @ms: the self-check (when open) and the late wake-ups */
static int explain_pass1(struct cmdline *c, struct machine **ms, int nr, struct check *chk,
			 const struct ticks *ticks, struct explain **x, FILE *out)
{
	struct merge_pass passes[2];
	int n = 0;

	*x = explain_open(ms, nr, &c->opts, ticks_result(ticks));
	if (!*x)
		return -1;
	if (chk)
		passes[n++] = check_pass(chk, NULL);
	passes[n++] = explain_pass(*x);
	if (merge_run(ms, nr, &c->opts, passes, n))
		return -1;
	return explain_summary(*x, out);
}

/* --explain's pass 2, once per story, over inputs opened again: the @rank-th worst */
static int explain_pass2(struct cmdline *c, struct explain *x, int rank, FILE *out)
{
	struct vtrace_offsets *offsets = NULL;
	struct machine **ms = NULL;
	struct check *chk = NULL;
	struct merge_pass passes[2];
	struct merge_opts o = c->opts;
	int nr = 0, n = 0, ret;

	ret = open_all(c, &ms, &nr, &offsets);
	if (!ret)
		ret = explain_windows(c, ms, nr, &chk);
	if (!ret) {
		ret = explain_story_open(x, ms, nr, rank, &o.to_ns);
		if (chk)
			passes[n++] = check_pass(chk, NULL);
		passes[n++] = explain_story_pass(x);
		if (!ret)
			ret = merge_run(ms, nr, &o, passes, n);
		ret = explain_story_close(x, out, ret < 0);
	}
	check_close(chk);
	close_all(ms, nr, offsets);
	return ret;
}

/* --explain: the hosts' ticks, then two passes, each over freshly opened inputs (explain.c) */
static int explain_main(struct cmdline *c, FILE *out, bool check)
{
	struct vtrace_offsets *offsets = NULL;
	struct machine **ms = NULL;
	struct check *chk = NULL;
	struct explain *x = NULL;
	struct ticks *ticks;
	const char *v = NULL;
	char verdict[512];
	int nr = 0, ret;
	bool quiet, verify;

	c->opts.stats = false;
	c->opts.progress = false;
	verify = check && !getenv("VTRACE_MERGE_NO_SELF_CHECK");
	ticks = explain_ticks(c, &ret);
	if (!ret)
		ret = open_all(c, &ms, &nr, &offsets);
	if (!ret)
		ret = explain_check_open(c, ms, nr, offsets, verify, &chk);
	if (!ret)
		ret = explain_pass1(c, ms, nr, chk, ticks, &x, out);
	if (ret >= 0)
		check_explain_report(chk, c->opts.format == MERGE_JSONL ? out : stderr,
				     c->opts.format == MERGE_JSONL);
	if (ret >= 0 && verify && fflush(out) == 0 && check_report(chk, stderr, c->opts.force))
		ret = -1;
	if (ret >= 0 && verify && c->opts.format == MERGE_JSONL)
		v = check_verdict(chk, verdict, sizeof(verdict));
	check_close(chk);
	close_all(ms, nr, offsets);
	/* the same inputs again, once per story: pass 1 said their warnings already */
	quiet = vtrace_set_quiet(true);
	for (int rank = 0, stories = ret; rank < stories && ret >= 0; rank++)
		ret = explain_pass2(c, x, rank, out);
	vtrace_set_quiet(quiet);
	if (ret >= 0)	/* --format jsonl: the verdict is the last record */
		output_jsonl_verdict(out, v);
	explain_free(x);
	ticks_free(ticks);
	if (ret >= 0 && check && !verify)
		fprintf(stderr, "vtrace-merge: self-check: not run (VTRACE_MERGE_NO_SELF_CHECK is"
			" set): the timeline is unverified\n");
	return ret < 0 ? ret : 0;
}

/*
 * --explain --format svg|perfetto: explain.c's JSON lines of the late
 * wake-ups (the worst LATE_MAX: 100000) for out-svg.c and out-perfetto.c,
 * then the merge as usual
 */
static int explain_drawn(struct cmdline *c)
{
	enum merge_format format = c->opts.format;
	size_t len;
	FILE *mem = open_memstream(&c->opts.explain_text, &len);
	int ret, worst = c->opts.worst;

	if (!mem)
		return -1;
	c->opts.format = MERGE_JSONL;
	c->opts.worst = 100000;
	ret = explain_main(c, mem, false);
	fclose(mem);
	c->opts.format = format;
	c->opts.worst = worst;
	c->opts.explain = false;
	return ret;
}

/*
 * The plain merge: the self-check (unless VTRACE_MERGE_NO_SELF_CHECK), then
 * the output, which carries its verdict (jsonl), or --stats
 */
static int merge_main(const struct merge_opts *opts, struct machine **ms, int nr,
		      struct check *chk)
{
	struct output_stats st = { .out = stdout, .machines = ms, .nr = nr, .opts = opts };
	/* jsonl, perfetto and svg carry the verdict; text leaves it to stderr */
	bool carry = opts->format != MERGE_TEXT && !opts->stats;
	struct merge_pass passes[2];
	struct output *o = NULL;
	const char *verdict = NULL;
	int n = 0, ret;

	if (chk)
		passes[n++] = check_pass(chk, carry ? &verdict : NULL);
	if (opts->stats) {
		passes[n++] = output_stats_pass(&st);
	} else {
		o = output_open(stdout, opts, 0, ms, nr, &verdict);
		if (!o)
			return -1;
		passes[n++] = output_pass(o);
	}
	ret = merge_run(ms, nr, opts, passes, n);
	output_close(o);
	return ret;
}

static void free_list(char **list)
{
	for (char **p = list; p && *p; p++)
		free(*p);
	free(list);
}

/* --guest and --vmlinux point into argv; --machine and --event were copied */
static void free_cmdline(struct cmdline *c)
{
	free(c->guests);
	free(c->vmlinux);
	free_list(c->opts.machines);
	free_list(c->opts.events);
	free(c->opts.explain_text);
	free(c->opts.tids);
	free_list(c->capture_guests);
	free(c->capture_host);
	free(c->capture_offsets);
	vtrace_capture_free(c->capture);
	for (int i = 0; c->vms && i <= c->nr_guests; i++)
		free(c->vms[i].note);
	free(c->vms);
}

/*
 * The whole program but main(), callable again in one process (the fuzz
 * target user/fuzz/fuzz-merge.c does): getopt_long() starts over when the
 * caller sets optind to 0 first.
 */
int vtrace_merge_main(int argc, char **argv)
{
	struct vtrace_offsets *offsets = NULL;
	struct machine **machines = NULL;
	struct cmdline c = { 0 };
	struct check *chk = NULL;
	int nr = 0, ret;
	off_t out_start;

	ret = parse_args(argc, argv, &c);
	if (ret) {
		free_cmdline(&c);
		return ret;
	}
	out_start = output_file_start();
	tracecmd_set_loglevel(TEP_LOG_WARNING);
	if (c.opts.explain && (c.opts.format == MERGE_SVG || c.opts.format == MERGE_PERFETTO) &&
	    explain_drawn(&c)) {
		fprintf(stderr, "vtrace-merge: error: %s\n", vtrace_last_error());
		free_cmdline(&c);
		return 1;
	}
	if (c.opts.explain) {
		ret = explain_main(&c, stdout, true);
		if (ret)
			fprintf(stderr, "vtrace-merge: error: %s\n", vtrace_last_error());
		free_cmdline(&c);
		return ret ? 1 : 0;
	}
	ret = open_all(&c, &machines, &nr, &offsets);
	if (!ret && getenv("VTRACE_MERGE_NO_SELF_CHECK")) {
		/* bench/merge.sh: what the self-check costs */
		fprintf(stderr, "vtrace-merge: self-check: not run (VTRACE_MERGE_NO_SELF_CHECK is"
			" set): the timeline is unverified\n");
	} else if (!ret) {
		chk = check_open(machines, nr, &c.opts);
		if (!chk || check_offsets(chk, offsets, c.opts.offsets_src))
			ret = -1;
	}
	if (!ret)
		ret = merge_main(&c.opts, machines, nr, chk);
	if (!ret && c.opts.stats)
		check_stats(chk, stdout, c.opts.format == MERGE_JSONL);
	if (!ret && fflush(stdout) == 0) {
		ret = check_report(chk, stderr, c.opts.force);
		if (ret)
			drop_output(out_start);
	}
	if (!ret && fflush(stdout)) {
		vtrace_set_error("writing the output: %s", strerror(errno));
		ret = -1;
	}
	if (ret)
		fprintf(stderr, "vtrace-merge: error: %s\n", vtrace_last_error());
	check_close(chk);
	close_all(machines, nr, offsets);
	free_cmdline(&c);
	return ret ? 1 : 0;
}
