// SPDX-License-Identifier: GPL-2.0
/* test-fuzz-replay.c: the inputs the fuzzers found, replayed through the fuzz targets. */
/*
 * Each file of fixtures/fuzz/TARGET/ once made a fuzz target (user/fuzz/)
 * crash, leak or hit undefined behaviour.  The targets themselves are
 * compiled in here with a plain main(): every file must now go through
 * its target.  "make test" catches crashes; "make test-asan" runs this
 * very binary with AddressSanitizer and UndefinedBehaviorSanitizer, which
 * catch the reads past a buffer and the UB the fuzzers reported.  The
 * checks after the replay assert what the fixes do.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define FUZZ_PAGES "fixtures/debian-6.1/real-cpu0.pages"
#define LLVMFuzzerTestOneInput fuzz_proto_one
#include "../fuzz/fuzz.c"
#include "../fuzz/fuzz-proto.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_dump_one
#define print_event dump_print_event
#define read_cpu dump_read_cpu
#include "../fuzz/fuzz-dump.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_meta_one
#define LLVMFuzzerInitialize fuzz_meta_init
#include "../fuzz/fuzz-meta.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_offsets_one
#include "../fuzz/fuzz-offsets.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define FUZZ_HOST_DAT "fixtures/real-l2/host.dat"
#define LLVMFuzzerTestOneInput fuzz_merge_one
#define LLVMFuzzerInitialize fuzz_merge_init
#include "../fuzz/fuzz-merge.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define LLVMFuzzerTestOneInput fuzz_host_one
#define LLVMFuzzerInitialize fuzz_host_init
#include "../fuzz/fuzz-host.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define FUZZ_CTL "fixtures/real-l2/ctl"
#define LLVMFuzzerTestOneInput fuzz_pages_one
#define LLVMFuzzerInitialize fuzz_pages_init
#include "../fuzz/fuzz-pages.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize

#include "vtrace-dump.h"
#include "vtrace-tsc.h"
#include "vtrace-vcpu.h"
#include "ktap.h"

static const struct {
	const char *name;
	int (*one)(const uint8_t *data, size_t size);
} targets[] = {
	{ "proto",	fuzz_proto_one },
	{ "dump",	fuzz_dump_one },
	{ "meta",	fuzz_meta_one },
	{ "offsets",	fuzz_offsets_one },
	{ "merge",	fuzz_merge_one },
	{ "host",	fuzz_host_one },
	{ "pages",	fuzz_pages_one },
};

static int replay_dir(const char *target, int (*one)(const uint8_t *, size_t), int run)
{
	char dir[256], path[512], name[300];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "fixtures/fuzz/%s", target);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		uint64_t len;
		char *buf;

		if (de->d_name[0] == '.')
			continue;
		n++;
		if (!run)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(name, sizeof(name), "replay_%s_%s", target, de->d_name);
		buf = vtrace_read_file(path, 1 << 20, &len);
		if (!buf) {
			ktap_check(0, name, "%s", vtrace_last_error());
			continue;
		}
		one((const uint8_t *)buf, len);
		free(buf);
		ktap_check(1, name, "%s", "");
	}
	closedir(d);
	return n;
}

/* A dump folder of @ctl: META_INFO, header_page and one printk_formats META_FILE */
static struct vtrace_dump *dump_with_printk(const char *text)
{
	put_prologue();
	put_meta_file(VTRACE_META_PRINTK_FORMATS, "printk_formats", text, strlen(text));
	fuzz_write("ctl", ctl, ctl_len);
	return vtrace_dump_open(fuzz_dir(), VTRACE_DUMP_NO_PLUGINS);
}

/* What libtraceevent registered, as tep_print_printk() prints it to stdout */
static void registered_printk(struct tep_handle *tep, char *buf, size_t size)
{
	int fd = memfd_create("printk", 0), saved = dup(1);
	ssize_t n;

	fflush(stdout);
	dup2(fd, 1);
	tep_print_printk(tep);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	n = pread(fd, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

static void test_printk_formats(void)
{
	struct vtrace_dump *d;
	char got[256] = "";

	d = dump_with_printk("0xffffffff81000000 : \"kept\"\nno colon here\n"
			     "0xffffffff81000010 : \"\"\n0xffffffff81000020 :\n:\n0x1");
	ktap_check(d != NULL, "printk_formats_malformed_lines_ignored", "%s",
		   vtrace_last_error());
	if (d)
		registered_printk(vtrace_dump_tep(d), got, sizeof(got));
	ktap_check(!strcmp(got, "ffffffff81000000 kept\n"), "printk_formats_good_line_kept",
		   "registered: \"%s\"", got);
	vtrace_dump_close(d);

	/* the last line kept has no '\n': the filter once wrote one past the text */
	d = dump_with_printk("0xffffffff81000000 : \"last\"");
	got[0] = '\0';
	if (d)
		registered_printk(vtrace_dump_tep(d), got, sizeof(got));
	ktap_check(!strcmp(got, "ffffffff81000000 last\n"), "printk_formats_last_line_kept",
		   "registered: \"%s\"", got);
	vtrace_dump_close(d);
}

/* ftrace's kernel_stack format, its print fmt naming REC->@field under __print_flags() */
static struct vtrace_dump *dump_with_flags_of(const char *field)
{
	char fmt[1024];

	snprintf(fmt, sizeof(fmt), "name: kernel_stack\nID: 4\nformat:\n"
		 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		 "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		 "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		 "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		 "\tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n"
		 "\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n\n"
		 "print fmt: \"%%s\", __print_flags(REC->%s, \"|\", { 1, \"A\" })\n", field);
	put_prologue();
	put_meta_file(VTRACE_META_FTRACE_FORMAT, "ftrace/kernel_stack", fmt, strlen(fmt));
	fuzz_write("ctl", ctl, ctl_len);
	return vtrace_dump_open(fuzz_dir(), VTRACE_DUMP_NO_PLUGINS);
}

static void test_print_fmt_fields(void)
{
	struct vtrace_dump *d = dump_with_flags_of("size");

	ktap_check(d != NULL, "format_flags_of_own_field_parses", "%s", vtrace_last_error());
	vtrace_dump_close(d);
	/* libtraceevent would write through a NULL field here */
	d = dump_with_flags_of("nosuch");
	ktap_check(!d && strstr(vtrace_last_error(), "REC->nosuch, not a field of the format"),
		   "format_flags_of_unknown_field_refused", "%s",
		   d ? "opened" : vtrace_last_error());
	vtrace_dump_close(d);
}

/* A format @tail completes after the common_type field */
static struct vtrace_dump *dump_with_fields(const char *tail, size_t len)
{
	static const char head[] = "name: ev\nID: 9\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n";
	char fmt[512];

	memcpy(fmt, head, sizeof(head) - 1);
	memcpy(fmt + sizeof(head) - 1, tail, len);
	put_prologue();
	put_meta_file(VTRACE_META_EVENT_FORMAT, "sys/ev", fmt, sizeof(head) - 1 + len);
	fuzz_write("ctl", ctl, ctl_len);
	return vtrace_dump_open(fuzz_dir(), VTRACE_DUMP_NO_PLUGINS);
}

/*
 * A guest's ftrace:bprint format with the fields of ftrace:print (ip, buf,
 * no fmt): libtraceevent prints a bprint record from its field fmt without
 * looking for it (a SEGV, found by fuzz-host in a host file).  The dump
 * opens; the event prints as a format that failed to parse: its fields.
 */
static void test_guest_bprint_without_fmt(void)
{
	static const char fmt[] = "name: bprint\nID: 6\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
		"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		"\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:1;\n\n"
		"print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n";
	/* a bprint record: type 6, ip 0xabc, buf "hi" */
	unsigned char data[24] = { 6, 0, 0, 0, 0, 0, 0, 0, 0xbc, 0x0a, 0, 0, 0, 0, 0, 0, 'h', 'i' };
	struct tep_record rec = { .data = data, .size = sizeof(data) };
	struct vtrace_dump *d;
	struct trace_seq s;

	put_prologue();
	put_meta_file(VTRACE_META_EVENT_FORMAT, "ftrace/bprint", fmt, sizeof(fmt) - 1);
	fuzz_write("ctl", ctl, ctl_len);
	d = vtrace_dump_open(fuzz_dir(), VTRACE_DUMP_NO_PLUGINS);
	trace_seq_init(&s);
	if (d)
		tep_print_event(vtrace_dump_tep(d), &s, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	ktap_check(d && strstr(s.buffer, "[FAILED TO PARSE]") && strstr(s.buffer, "ip=0xabc"),
		   "format_bprint_without_fmt_printed_as_failed", "%s",
		   d ? s.buffer : vtrace_last_error());
	trace_seq_destroy(&s);
	vtrace_dump_close(d);
}

/* libtraceevent calls strcmp() on a NULL token in both cases */
static void test_format_text(void)
{
	static const char open_at_end[] = "\tfield:char x[";
	static const char binary[] = "\tfield:char x[\xb1" "6];\toffset:2;\tsize:16;\tsigned:1;\n";
	struct vtrace_dump *d;

	d = dump_with_fields(open_at_end, sizeof(open_at_end) - 1);
	ktap_check(!d && strstr(vtrace_last_error(), "'[' without its ']'"),
		   "format_open_bracket_refused", "%s", d ? "opened" : vtrace_last_error());
	vtrace_dump_close(d);
	d = dump_with_fields(binary, sizeof(binary) - 1);
	ktap_check(!d && strstr(vtrace_last_error(), "byte 0xb1"), "format_binary_byte_refused",
		   "%s", d ? "opened" : vtrace_last_error());
	vtrace_dump_close(d);
}

/* One page of CPU 0 holding a single 8-byte event of id 9 */
static void write_one_event_page(void)
{
	static uint8_t page[4096];
	uint64_t commit = 12;
	uint32_t ev_hdr = 2;		/* type_len 2: 8 bytes of data, time delta 0 */
	uint16_t id = 9;

	memcpy(page + 8, &commit, 8);
	memcpy(page + 16, &ev_hdr, 4);
	memcpy(page + 20, &id, 2);
	fuzz_write("cpu0", page, sizeof(page));
}

/* The first event of a dump whose format for id 9 ends with @field */
static int read_event_with(const char *field)
{
	char fmt[512];
	struct vtrace_cpu_reader *r;
	struct tep_record *rec;
	struct vtrace_dump *d;
	int filler, ret = -2;

	snprintf(fmt, sizeof(fmt), "\t%s\n\nprint fmt: \"%%s\", REC->x\n", field);
	d = dump_with_fields(fmt, strlen(fmt));
	r = d ? vtrace_cpu_reader_open(d, 0) : NULL;
	if (r)
		ret = vtrace_cpu_reader_next(r, &rec, &filler);
	vtrace_cpu_reader_close(r);
	vtrace_dump_close(d);
	return ret;
}

/*
 * libtraceevent prints fields past the record without looking at its size
 * (these formats have no blank line: every field is a common one)
 */
static void test_fields_past_record(void)
{
	write_one_event_page();
	ktap_check(read_event_with("field:char x[4];\toffset:4;\tsize:4;\tsigned:1;") == 1,
		   "event_fields_inside_record_read", "%s", vtrace_last_error());
	ktap_check(read_event_with("field:char x[];\toffset:200;\tsize:0;\tsigned:1;") == -1 &&
		   strstr(vtrace_last_error(), "last field starts at 200"),
		   "event_shorter_than_its_rest_field_refused", "%s", vtrace_last_error());
	ktap_check(read_event_with("field:char x[4];\toffset:5000;\tsize:4;\tsigned:1;") == -1 &&
		   strstr(vtrace_last_error(), "byte 5004") &&
		   strstr(vtrace_last_error(), "past a page of 4096"),
		   "format_field_past_a_page_refused", "%s", vtrace_last_error());
	fuzz_unlink("cpu0");
}

/* ftrace bprint with "R%EC->fmt": libtraceevent computes a modulo by zero, a SIGFPE */
static void test_division_by_zero(void)
{
	static const char tail[] = "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		"\tfield:const char * fmt;\toffset:16;\tsize:8;\tsigned:0;\n"
		"\tfield:u32 buf[];\toffset:24;\tsize:0;\tsigned:0;\n\n"
		"print fmt: \"%ps: %s\", (void *)REC->ip, R%EC->fmt\n";
	struct vtrace_dump *d = dump_with_fields(tail, sizeof(tail) - 1);

	ktap_check(!d && strstr(vtrace_last_error(), "print fmt divides by \"EC->fmt"),
		   "format_modulo_by_zero_refused", "%s", d ? "opened" : vtrace_last_error());
	vtrace_dump_close(d);
}

/*
 * A sched_switch format whose mangled print fmt makes libtraceevent's
 * process_op() dereference a NULL operand (found by fuzz-dat).  The probe
 * child dies on it, the dump is refused naming the file; parsed in this
 * process (VTRACE_DUMP_NO_PROBE) it does kill the process.
 */
#define PROCESS_OP_CRASH "fixtures/fuzz/dump/sched-switch-process-op-null-operand"

static bool dies_without_probe(const char *buf)
{
	int status, null;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		null = open("/dev/null", O_WRONLY);
		dup2(null, 2);
		fuzz_write("ctl", buf + 4, fuzz_le32((const uint8_t *)buf));
		fuzz_unlink("cpu0");
		vtrace_dump_close(vtrace_dump_open(fuzz_dir(), VTRACE_DUMP_NO_PROBE));
		_exit(0);
	}
	/* SIGSEGV, or the sanitizers' exit code (86 or 87) in "make test-asan" */
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	       ((WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) ||
		(WIFEXITED(status) && (WEXITSTATUS(status) == 86 || WEXITSTATUS(status) == 87)));
}

/*
 * The refusal, in a copy of this test run with the sanitizers exiting 1 (their
 * default): the probe child's exit status 1 must not pass for "refused"
 * (the child must say how it ended).  Run as "test-fuzz-replay probe-only".
 */
static bool probe_only(void)
{
	uint64_t len;
	char *buf = vtrace_read_file(PROCESS_OP_CRASH, 1 << 20, &len);
	bool ok = buf && len >= 4 && fuzz_le32((uint8_t *)buf) <= len - 4;

	if (ok)
		fuzz_dump_one((const uint8_t *)buf, len);
	free(buf);
	return ok && strstr(vtrace_last_error(), " parsing it (in a child process)");
}

static bool refused_with_sanitizers_exiting_1(void)
{
	int status, null;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		setenv("UBSAN_OPTIONS", "exitcode=1:halt_on_error=1", 1);
		setenv("ASAN_OPTIONS", "exitcode=1:detect_leaks=0", 1);
		execl("/proc/self/exe", "test-fuzz-replay", "probe-only", NULL);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static void test_probe_refuses_crashing_format(void)
{
	static const char want[] = "/ctl: byte 2926: META_FILE \"sched/sched_switch\": refused:"
		" libtraceevent ";
	const char *err;
	uint64_t len;
	char *buf = vtrace_read_file(PROCESS_OP_CRASH, 1 << 20, &len);

	if (!buf || len < 4 || fuzz_le32((uint8_t *)buf) > len - 4) {
		ktap_check(0, "probe_refuses_format_killing_libtraceevent", "%s", PROCESS_OP_CRASH);
		ktap_check(0, "probe_input_kills_libtraceevent_without_probe", "%s", "");
		free(buf);
		return;
	}
	fuzz_dump_one((const uint8_t *)buf, len);
	err = vtrace_last_error();
	ktap_check(strstr(err, want) && strstr(err, " parsing it (in a child process)") &&
		   (strstr(err, "died of SIGSEGV") || strstr(err, "exited with status 86") ||
		    strstr(err, "exited with status 87")),
		   "probe_refuses_format_killing_libtraceevent", "%s", err);
	ktap_check(dies_without_probe(buf), "probe_input_kills_libtraceevent_without_probe",
		   "%s", "parsed without the probe, it did not crash: the test proves nothing");
	ktap_check(refused_with_sanitizers_exiting_1(), "probe_child_exit_1_is_not_a_refusal",
		   "%s", "with the sanitizers exiting 1, the input crashed or was not refused");
	free(buf);
}

/* This process's children, as "PID PID ... ", in @buf: how many */
static int children(char *buf, size_t len)
{
	char path[64];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", getpid());
	f = fopen(path, "r");
	snprintf(buf, len, "?");
	if (!f)
		return -1;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	for (char *p = buf; *p; p++)
		n += *p == ' ';
	return n;
}

static bool opens(const char *dir)
{
	struct vtrace_dump *d = vtrace_dump_open(dir, 0);

	vtrace_dump_close(d);
	return d != NULL;
}

/*
 * The probe's child is forked once and kept: twenty dumps opened, the same
 * children; after a dump that kills it, the next dump opens with a new one.
 */
static void test_probe_kept(void)
{
	char first[256], after[256], again[256];
	uint64_t len;
	char *buf = vtrace_read_file(PROCESS_OP_CRASH, 1 << 20, &len);
	int n = 0, nr_first, nr_again;
	bool ok = opens("fixtures/real-l2");

	nr_first = children(first, sizeof(first));
	for (int i = 0; i < 20; i++)
		n += opens("fixtures/real-l2");
	ktap_check(ok && n == 20 && nr_first > 0 && children(after, sizeof(after)) == nr_first &&
		   !strcmp(first, after), "probe_child_kept_across_dumps",
		   "children after one dump \"%s\", after 20 more \"%s\", %d of 20 opened",
		   first, after, n);
	/* a Ctrl-C reaches the whole process group: the tool may go on, its probe must too */
	for (char *p = first, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		kill(pid, SIGINT);
	}
	usleep(100000);
	ok = opens("fixtures/real-l2") && children(after, sizeof(after)) == nr_first &&
	     !strcmp(first, after);
	ktap_check(ok, "probe_child_ignores_sigint", "children \"%s\" after a SIGINT to \"%s\"",
		   after, first);
	if (buf && len >= 4)
		fuzz_dump_one((const uint8_t *)buf, len);
	ok = strstr(vtrace_last_error(), " parsing it (in a child process)") &&
	     opens("fixtures/real-l2");
	nr_again = children(again, sizeof(again));
	ktap_check(ok && nr_again == nr_first && strcmp(again, first),
		   "probe_child_restarted_after_death", "children \"%s\", before the input that"
		   " killed the probe \"%s\"; %s", again, first, ok ? "" : vtrace_last_error());
	free(buf);
}

/* What fuzz-meta makes of a seed: fuzz_sink grows with every event it printed */
static uint64_t meta_seed_printed(const char *name)
{
	char path[256];
	uint64_t len, before = fuzz_sink;
	char *buf;

	snprintf(path, sizeof(path), "../fuzz/corpus/meta/%s", name);
	buf = vtrace_read_file(path, 1 << 20, &len);
	if (!buf)
		return 0;
	fuzz_meta_one((const uint8_t *)buf, len);
	free(buf);
	return fuzz_sink - before;
}

/*
 * The header_page is the guest's: the 6.18 one (signed:0 on data) reads the
 * real pages as Debian 6.1's does; one whose commit field is not long_size
 * is refused (the pages could not be read).
 */
static void test_header_page(void)
{
	uint64_t debian = meta_seed_printed("header_page-debian-6.1.all");
	uint64_t v618 = meta_seed_printed("header_page-6.18.all");
	static const char narrow[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield: char data;\toffset:12;\tsize:4084;\tsigned:1;\n";
	struct vtrace_dump *d;

	ktap_check(debian > 1000 && v618 == debian, "header_page_6_18_reads_the_same_events",
		   "printed %llu with Debian's header_page, %llu with 6.18's",
		   (unsigned long long)debian, (unsigned long long)v618);
	put_info();
	put_meta_file(VTRACE_META_HEADER_PAGE, "header_page", narrow, sizeof(narrow) - 1);
	fuzz_write("ctl", ctl, ctl_len);
	d = vtrace_dump_open(fuzz_dir(), VTRACE_DUMP_NO_PLUGINS);
	ktap_check(!d && strstr(vtrace_last_error(), "META_FILE \"header_page\": expected an"
				" 8-byte timestamp and a commit field of long_size"),
		   "header_page_with_4_byte_commit_refused", "%s",
		   d ? "opened" : vtrace_last_error());
	vtrace_dump_close(d);
}

static void test_offsets_without_records(void)
{
	static const char text[] = VTRACE_OFFSETS_VERSION "\n" VTRACE_OFFSETS_HEADER "\n# nothing yet\n";
	struct vtrace_offsets *o;

	fuzz_write("tsc_offsets", text, sizeof(text) - 1);
	o = vtrace_offsets_open(fuzz_path("tsc_offsets"));
	ktap_check(o && vtrace_offsets_records(o) == 0 && !vtrace_offsets_has_pid(o, 1),
		   "offsets_header_only_is_empty", "%s", o ? "" : vtrace_last_error());
	vtrace_offsets_close(o);
}

/* "120.967191332:" */
static bool is_time(const char *t, double *v)
{
	char *end;

	*v = strtod(t, &end);
	return isdigit((unsigned char)*t) && strchr(t, '.') && end[0] == ':' && !end[1];
}

/* fuzz-merge's run() with @extra options, its output into DIR/merge.out */
static int merge_to_file(uint32_t flags, const char *const *extra)
{
	int out = open(fuzz_path("merge.out"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int null = devnull, ret;

	if (out < 0)
		return -1;
	devnull = out;
	ret = run(flags, extra);
	devnull = null;
	close(out);
	return ret;
}

/* The same with --format text: host and guest lines, in time order? */
static int merge_text(uint32_t flags, int *hosts, int *guests, bool *sorted)
{
	static const char *const text[] = { "--format", "text", NULL };
	double prev = 0, t;
	char line[1024];
	int ret;
	FILE *f;

	*hosts = *guests = 0;
	*sorted = true;
	ret = merge_to_file(flags, text);
	f = fopen(fuzz_path("merge.out"), "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *save = NULL;

		*hosts += !strncmp(line, "host ", 5);
		*guests += !strncmp(line, "g ", 2);
		for (char *tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (is_time(tok, &t)) {
				*sorted = *sorted && t >= prev;
				prev = t;
				break;
			}
	}
	if (f)
		fclose(f);
	return ret;
}

/*
 * fuzz-merge's seed of the real L2 capture merges: every event of the host
 * fixture (447, as trace-cmd report counts them) and the guest's, in time
 * order, and --explain finds its worst wake-up; without an offsets file the
 * same input ends in status 1 naming it.
 */
static void test_merge_target(void)
{
	static const char *const explain[] = { "--explain", NULL };
	static const char worst[] = "Worst wake-up of a guest task in guest g: 47.900 ms\n"
				    "  task       rcu_preempt (pid 15) on guest cpu 1\n";
	char *text;
	uint64_t len;
	char *buf = vtrace_read_file("../fuzz/corpus/merge/real-l2.0", 1 << 20, &len);
	int ret, hosts, guests;
	bool sorted;

	if (!buf || len < 16) {
		ktap_check(0, "fuzz_merge_real_l2_seed_merges", "%s", vtrace_last_error());
		ktap_check(0, "fuzz_merge_real_l2_seed_explains", "%s", "no seed");
		ktap_check(0, "fuzz_merge_empty_offsets_exit_1", "%s", "no seed");
		ktap_check(0, "explain_timer_lateness_overflow", "%s", "no seed");
		free(buf);
		return;
	}
	fuzz_merge_one((const uint8_t *)buf, len);
	ret = merge_text(0, &hosts, &guests, &sorted);
	ktap_check(ret == 0 && hosts == 447 && guests > 100 && sorted,
		   "fuzz_merge_real_l2_seed_merges", "exit %d, %d host and %d guest lines, %s",
		   ret, hosts, guests, sorted ? "in order" : "out of order");
	ret = merge_to_file(0, explain);
	text = vtrace_read_file(fuzz_path("merge.out"), 1 << 20, NULL);
	ktap_check(ret == 0 && text && strstr(text, worst), "fuzz_merge_real_l2_seed_explains",
		   "exit %d, output starts: %.80s", ret, text ? text : "");
	free(text);
	memset(buf + 8, 0, 4);	/* offsets_len 0: an empty tsc_offsets */
	fuzz_merge_one((const uint8_t *)buf, len);
	ret = merge_text(0, &hosts, &guests, &sorted);
	ktap_check(ret == 1 && strstr(vtrace_last_error(), "/tsc_offsets"),
		   "fuzz_merge_empty_offsets_exit_1", "exit %d: %s", ret, vtrace_last_error());
	free(buf);

	/*
	 * Its hrtimer_starts with expires = S64_MIN + 1 and no function: "now -
	 * expires" overflowed (UBSan, make test-asan); the timers now count as
	 * infinitely late, that is not at all, and the worst wake-up stays
	 */
	buf = vtrace_read_file("fixtures/fuzz/merge/hrtimer-expires-s64-min", 1 << 20, &len);
	if (buf)
		fuzz_merge_one((const uint8_t *)buf, len);
	ret = buf ? merge_to_file(0, explain) : -1;
	text = vtrace_read_file(fuzz_path("merge.out"), 1 << 20, NULL);
	ktap_check(ret == 0 && text && strstr(text, worst), "explain_timer_lateness_overflow",
		   "exit %d, output starts: %.80s", ret, text ? text : "");
	free(text);
	free(buf);
}

/* The host.dat of a fuzz-host input, as DIR/@name */
static const char *host_dat_of(const char *input, const char *name)
{
	uint64_t len;
	char *buf = vtrace_read_file(input, 1 << 20, &len);
	uint32_t dat_len = buf && len >= 4 ? fuzz_le32((uint8_t *)buf) & 0x7fffffff : 0;

	if (dat_len > len - 4)
		dat_len = buf ? len - 4 : 0;
	fuzz_write(name, buf ? buf + 4 : "", dat_len);
	free(buf);
	return fuzz_path(name);
}

/* The records, pids and range of the offset history in fuzz-host's seed @seed's host.dat */
static void host_history(const char *seed, char *out, size_t len)
{
	char path[256];
	struct vtrace_offsets *o;
	uint64_t first = 0, last = 0, end = 0;
	bool found;
	char *pids;

	snprintf(path, sizeof(path), "../fuzz/corpus/host/%s", seed);
	o = vtrace_offsets_open_dat(host_dat_of(path, "h.dat"), &found);
	if (!o) {
		snprintf(out, len, "%s: %s", seed, found ? vtrace_last_error() : "no events");
		return;
	}
	pids = vtrace_offsets_pids(o);
	vtrace_offsets_range(o, &first, &last);
	vtrace_offsets_end(o, &end);
	snprintf(out, len, "%llu records of pids %s, host TSC %llu to %llu, end %llu",
		 (unsigned long long)vtrace_offsets_records(o), pids, (unsigned long long)first,
		 (unsigned long long)last, (unsigned long long)end);
	free(pids);
	vtrace_offsets_close(o);
}

static void test_host_same_history(void)
{
	char v7[256], v6[256], z[256];

	host_history("ev.v7", v7, sizeof(v7));
	host_history("ev.v6", v6, sizeof(v6));
	host_history("ev.compressed", z, sizeof(z));
	ktap_check(strstr(v7, " records of pids 4245, host TSC ") && !strcmp(v7, v6) &&
		   !strcmp(v7, z), "host_dat_same_history_v7_v6_compressed",
		   "v7: %s; v6: %s; compressed: %s", v7, v6, z);
}

/* vtrace_dat_open_raw(@dat) in this process only, in a child: true if that child crashed */
static bool raw_open_dies_without_probe(const char *dat)
{
	int status, null;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		vtrace_dat_no_probe = true;
		vtrace_dat_open_raw(dat);
		_exit(0);
	}
	/* SIGSEGV, or the sanitizers' exit code (86 or 87) in "make test-asan" */
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	       ((WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) ||
		(WIFEXITED(status) && (WEXITSTATUS(status) == 86 || WEXITSTATUS(status) == 87)));
}

/*
 * Version 6 headers whose sizes libtracecmd took on trust: it allocated what
 * they said (up to 2^64 bytes: out of memory in the fuzzer, NULL in a normal
 * build) or read past its copy (a printk line without ':'): each refused
 * before libtracecmd reads it, naming what is wrong and where.
 */
static void test_host_v6_headers(void)
{
	static const struct {
		const char *input, *error;
	} cases[] = {
		{ "v6-header-page-size-past-file", "byte 38: header_page of 17108185427958767309"
		  " bytes, expected within the file's 16384 bytes" },
		{ "v6-ftrace-format-count-past-file", "byte 473: 540680304 ftrace formats, more than"
		  " the file can hold" },
		{ "v6-event-format-count-past-file", "byte 3226: 4245 event formats, more than the"
		  " file can hold" },
		{ "v6-event-system-name-without-end", "byte 910: an event system's name, expected a"
		  " name of under 256 bytes and its NUL" },
		{ "v6-printk-size-past-file", "byte 5354: the printk formats of 4294966736 bytes,"
		  " expected within the file's 20416 bytes" },
		{ "v6-printk-line-without-colon", "byte 6108: a printk format line without \":\"" },
		{ "v6-cmdlines-size-past-file", "byte 1735: cmdlines of 150994944671088640 bytes" },
	};
	char path[256], name[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vtrace_dump *d;
		const char *dat;

		snprintf(path, sizeof(path), "fixtures/fuzz/host/%s", cases[i].input);
		dat = host_dat_of(path, "v6.dat");
		d = vtrace_dump_open_dat(dat, 0);
		snprintf(name, sizeof(name), "host_dat_%s_refused", cases[i].input);
		for (char *c = name; *c; c++)
			*c = *c == '-' ? '_' : *c;
		ktap_check(!d && strstr(vtrace_last_error(), "v6.dat: ") &&
			   strstr(vtrace_last_error(), cases[i].error), name, "%s",
			   d ? "opened" : vtrace_last_error());
		vtrace_dump_close(d);
	}
}

/*
 * Damaged host files the readers once handed to libtracecmd, which crashed
 * or leaked on them: refused now, before libtracecmd reads what is wrong.
 */
static void test_host_files(void)
{
	const char *dat = host_dat_of("fixtures/fuzz/host/v6-page-commit-past-page", "c.dat");
	struct vtrace_vthreads vt = { 0 };
	struct vtrace_offsets *o;
	struct vtrace_dump *d;
	bool found;
	int ret;

	/* its CPU 1's first page says 0xafb8c4b6fffffffd bytes: kbuffer read past the map */
	o = vtrace_offsets_open_dat(dat, &found);
	ktap_check(!o && found && strstr(vtrace_last_error(), "c.dat: byte 13768: bad page"),
		   "host_dat_offsets_bad_page_refused", "%s", o ? "opened" : vtrace_last_error());
	vtrace_offsets_close(o);
	ret = vtrace_vthreads_read_dat(&vt, dat);
	ktap_check(ret == -1 && strstr(vtrace_last_error(), "c.dat: byte 13768: bad page"),
		   "host_dat_vthreads_bad_page_refused", "%d: %s", ret, vtrace_last_error());
	vtrace_vthreads_free(&vt);

	/* an option 21760 bytes long in a 32869-byte file: libtracecmd leaked its buffer */
	dat = host_dat_of("fixtures/fuzz/host/v7-option-past-file-end", "l.dat");
	d = vtrace_dump_open_dat(dat, 0);
	ktap_check(!d && strstr(vtrace_last_error(), "l.dat: byte 32768: options"
		   " section of 21760 bytes, expected within the file's 32869 bytes (truncated?)"),
		   "host_dat_options_past_file_end_refused", "%s",
		   d ? "opened" : vtrace_last_error());
	vtrace_dump_close(d);
	ktap_check(!vtrace_dat_open_raw(dat) && strstr(vtrace_last_error(), "options section of"
		   " 21760 bytes"), "host_dat_raw_options_past_file_end_refused", "%s",
		   vtrace_last_error());

	/* a section flagged compressed in a file without compression: libtracecmd leaked */
	dat = host_dat_of("fixtures/fuzz/host/v7-compressed-section-in-plain-file", "z.dat");
	d = vtrace_dump_open_dat(dat, 0);
	ktap_check(!d && strstr(vtrace_last_error(), "z.dat: byte 49152: a"
		   " compressed options section, in a file whose header names no compression"),
		   "host_dat_compressed_section_in_plain_file_refused", "%s",
		   d ? "opened" : vtrace_last_error());
	vtrace_dump_close(d);

	test_host_v6_headers();

	/* libtracecmd's tracecmd_close() after its init_data failed: a NULL dereference */
	dat = host_dat_of("fixtures/fuzz/host/close-after-failed-init-data", "n.dat");
	ktap_check(!vtrace_dat_open_raw(dat) && strstr(vtrace_last_error(), "n.dat: refused:"
		   " libtracecmd ") && strstr(vtrace_last_error(), " reading its headers (in a"
		   " child process)"), "host_dat_probe_refuses_file_killing_libtracecmd", "%s",
		   vtrace_last_error());
	ktap_check(raw_open_dies_without_probe(dat), "host_dat_input_kills_libtracecmd_without_probe",
		   "%s", "opened without the probe, it did not crash: the test proves nothing");

	/* an event format that makes libtraceevent dereference NULL while libtracecmd reads it */
	dat = host_dat_of("fixtures/fuzz/host/v6-event-format-killing-libtraceevent", "f.dat");
	d = vtrace_dump_open_dat(dat, 0);
	ktap_check(!d && strstr(vtrace_last_error(), "f.dat: refused: libtracecmd ") &&
		   strstr(vtrace_last_error(), " reading its headers (in a child process)"),
		   "host_dat_probe_refuses_format_killing_libtraceevent", "%s",
		   d ? "opened" : vtrace_last_error());
	vtrace_dump_close(d);
	ktap_check(raw_open_dies_without_probe(dat), "host_dat_format_kills_without_probe", "%s",
		   "opened without the probe, it did not crash: the test proves nothing");

	/* the same history through vtrace's page reader: v7, v6 and compressed */
	test_host_same_history();
}

/*
 * fuzz-pages: an event whose length word makes kbuffer's size of it near
 * INT_MAX; check_events() added it to the event's index in an int (UBSan:
 * signed overflow).  The page is refused, or skipped with the skip flag.
 */
static void test_event_size_past_int_max(void)
{
	const char *path = "fixtures/fuzz/pages/event-size-past-int-max";
	struct vtrace_cpu_reader *r;
	struct tep_record *rec;
	int filler, ret = 0, n = 0;
	uint64_t len;
	char *buf = vtrace_read_file(path, 1 << 20, &len);

	if (!buf || len < 1 + 4096) {
		ktap_check(0, "page_event_size_past_int_max_refused", "%s", vtrace_last_error());
		ktap_check(0, "page_event_size_past_int_max_skipped", "%s", "no input");
		free(buf);
		return;
	}
	fuzz_write("pages/cpu0", buf + 1, 4096);	/* its one whole page */
	r = vtrace_cpu_reader_open(pages_dumps[0], 0);
	while (r && (ret = vtrace_cpu_reader_next(r, &rec, &filler)) > 0)
		n++;
	ktap_check(r && ret < 0 && strstr(vtrace_last_error(), "runs past the commit size"),
		   "page_event_size_past_int_max_refused", "%d events, then %d: %s", n, ret,
		   vtrace_last_error());
	vtrace_cpu_reader_close(r);
	r = vtrace_cpu_reader_open(pages_dumps[1], 0);
	n = 0;
	while (r && (ret = vtrace_cpu_reader_next(r, &rec, &filler)) > 0)
		n++;
	ktap_check(r && !ret && vtrace_cpu_reader_counts(r)->bad_pages == 1,
		   "page_event_size_past_int_max_skipped", "%d events, then %d, %llu bad pages",
		   n, ret, r ? (unsigned long long)vtrace_cpu_reader_counts(r)->bad_pages : 0ULL);
	vtrace_cpu_reader_close(r);
	fuzz_unlink("pages/cpu0");
	free(buf);
}

void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

/*
 * fuzz-meta's corpus input @name, read as fuzz-meta reads it (its real pages
 * as cpu0): how many events of CPU 0 came before the reader stopped, with
 * its last return in *@ret and its bad pages in *@bad.  libtraceevent leaks
 * parsing the mangled formats of these inputs (the fuzz targets suppress its
 * leaks), so LeakSanitizer looks away meanwhile.
 */
static int read_meta_input(const char *name, unsigned int flags, int *ret, uint64_t *bad)
{
	char path[256];
	struct vtrace_cpu_reader *r = NULL;
	struct vtrace_dump *d = NULL;
	struct tep_record *rec;
	int filler, n = 0;
	uint64_t len;
	char *buf;

	snprintf(path, sizeof(path), "../fuzz/corpus/meta/%s", name);
	buf = vtrace_read_file(path, 1 << 20, &len);
	*ret = -2;
	*bad = 0;
	if (__lsan_disable)
		__lsan_disable();
	if (buf) {
		fuzz_write("cpu0", pages, pages_len);	/* fuzz-meta's real pages, as at its start */
		fuzz_meta_one((const uint8_t *)buf, len);	/* DIR/ctl: its dump */
		d = vtrace_dump_open(fuzz_dir(), VTRACE_DUMP_NO_PLUGINS | flags);
	}
	r = d ? vtrace_cpu_reader_open(d, 0) : NULL;
	while (r && (*ret = vtrace_cpu_reader_next(r, &rec, &filler)) > 0)
		n++;
	if (r)
		*bad = vtrace_cpu_reader_counts(r)->bad_pages;
	vtrace_cpu_reader_close(r);
	vtrace_dump_close(d);
	free(buf);
	if (__lsan_enable)
		__lsan_enable();
	return n;
}

/*
 * fuzz-meta: metadata that defines event ids 1, 5, 6 and 319 twice, with
 * formats of different extents.  build_extents() kept the last format's,
 * libtraceevent printed with the other: a record too short for it made
 * tep_print_event() ask malloc() for 4 GiB.  The extent is now the larger:
 * the page with that record (byte 4384 of the real pages) is refused.
 */
static void test_duplicate_event_id(void)
{
	uint64_t bad;
	int ret, n = read_meta_input("duplicate-event-id-larger-extent", VTRACE_DUMP_SKIP_BAD,
				     &ret, &bad);

	/* as fuzz-meta reads it (skipping bad pages): the second page is refused */
	ktap_check(!ret && n == 59 && bad == 1 &&
		   strstr(vtrace_last_error(), "event of 28 bytes, its format's last field starts at 32"),
		   "meta_duplicate_event_id_larger_extent", "%d events, then %d: %s", n, ret,
		   vtrace_last_error());
}

/*
 * fuzz-dump without the probe child: a later session's format file that ends
 * in the digits of its "ID: " line made format_id() strtol() past the
 * message (heap-buffer-overflow under the sanitizers; the probe child died on
 * the same read, so with it the dump was refused).  Read within the file, the
 * stream goes on to where the input breaks it.
 */
static void test_format_id_at_message_end(void)
{
	const char *path = "../fuzz/corpus/dump/format-id-at-message-end";
	uint64_t len;
	char *buf = vtrace_read_file(path, 1 << 20, &len);
	struct vtrace_dump *d = NULL;

	if (__lsan_disable)
		__lsan_disable();
	if (buf) {
		setenv("FUZZ_NO_PROBE", "1", 1);
		fuzz_dump_one((const uint8_t *)buf, len);	/* DIR/ctl, DIR/cpu0 */
		d = vtrace_dump_open(fuzz_dir(), VTRACE_DUMP_NO_PLUGINS | VTRACE_DUMP_NO_PROBE);
		unsetenv("FUZZ_NO_PROBE");
		vtrace_dat_no_probe = false;
	}
	ktap_check(buf && !d && strstr(vtrace_last_error(), "ctl: byte 5320: bad magic 0x726f660a"),
		   "dump_format_id_at_message_end", "%s", buf ? vtrace_last_error() : path);
	vtrace_dump_close(d);
	free(buf);
	if (__lsan_enable)
		__lsan_enable();
}

/*
 * fuzz-meta: a format with "common_pid ... offset:88888888888888884" (a
 * sched_switch of an id no record has, the lowest id of the metadata):
 * libtraceevent reads every record's pid at that offset (917,737,012 as an
 * int), a SEGV in tep_read_number() while printing.  The pages are refused
 * now, each with the reach of the common fields.
 */
static void test_common_fields_past_page(void)
{
	uint64_t bad;
	int ret, n = read_meta_input("common-pid-past-page", 0, &ret, &bad);

	ktap_check(ret < 0 && ret != -2 && !n &&
		   strstr(vtrace_last_error(), "a format's common fields reach byte 917737016 of a"
			  " record, past a page of 4096"),
		   "meta_common_fields_past_page_refused", "%d events, then %d: %s", n, ret,
		   vtrace_last_error());
}

/* @n bytes of @b written into the file @path at @at, or at its end if @at is negative */
static bool write_into(const char *path, off_t at, const void *b, size_t n)
{
	int fd = open(path, O_WRONLY | (at < 0 ? O_APPEND : 0));
	bool ok = fd >= 0 && (at < 0 ? write(fd, b, n) : pwrite(fd, b, n, at)) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* @dat opened as the tools open it (libtraceevent's leaks on mangled formats not reported) */
static struct vtrace_dump *open_host_dat(const char *dat)
{
	struct vtrace_dump *d;

	if (__lsan_disable)
		__lsan_disable();
	d = vtrace_dump_open_dat(dat, VTRACE_DUMP_NO_PLUGINS);
	if (__lsan_enable)
		__lsan_enable();
	return d;
}

/*
 * fuzz-host: a v6 trace clock text whose "[" word is brackets alone
 * ("... boot [") made libtracecmd's tracecmd_parse_trace_clock() sscanf() a
 * NULL string (SEGV), a call of the tool's, not of the probe child's.
 */
static void test_trace_clock_brackets_only(void)
{
	struct vtrace_dump *d = open_host_dat(host_dat_of("../fuzz/corpus/host/"
							  "v6-trace-clock-brackets-only",
							  "host.dat"));

	ktap_check(!d && strstr(vtrace_last_error(), "byte 6234: a trace clock text whose"
						 " \"[\" names no clock"),
		   "host_trace_clock_brackets_only_refused", "%s", vtrace_last_error());
	vtrace_dump_close(d);
	fuzz_unlink("host.dat");
}

/*
 * fuzz-host: a v7 section whose size is 2^64 - 256 sent libtracecmd's
 * opening (tracecmd_alloc_fd(), its walk over the sections) 240 bytes back,
 * round and round: every opening of the file waited a minute for the probe
 * child.  Refused at once now, plain and compressed; a size that steps back
 * before the file's start ends libtracecmd's walk (lseek() fails) and is
 * left to it.
 */
static void check_steps_back(const char *name, uint64_t at, uint64_t size, const char *want,
			     const char *test)
{
	unsigned char le[8];
	struct vtrace_dump *d = NULL;
	char path[256];
	const char *dat;
	struct stat st;
	bool ok;

	for (int i = 0; i < 8; i++)
		le[i] = size >> (8 * i);
	snprintf(path, sizeof(path), "../fuzz/corpus/host/%s", name);
	dat = host_dat_of(path, "host.dat");
	/* the section's u64 size, 8 bytes into its header at @at */
	ok = !stat(dat, &st) && (uint64_t)st.st_size > at + 16 &&
	     write_into(dat, at + 8, le, sizeof(le));
	if (ok)
		d = open_host_dat(dat);
	ktap_check(ok && (want ? !d && strstr(vtrace_last_error(), want) :
			  !strstr(vtrace_last_error(), "step back")), test, "%s",
		   vtrace_last_error());
	vtrace_dump_close(d);
	fuzz_unlink("host.dat");
}

static void test_section_steps_back(void)
{
	check_steps_back("v7-section-size-steps-back", 5290, -256ULL,
			 "byte 5290: a section (id 0) of 18446744073709551360 bytes, past any file's"
			 " end: libtracecmd takes it for a step back to byte 5050",
			 "host_section_size_stepping_back_refused");
	check_steps_back("v7-zstd-section-size-steps-back", 2520, -256ULL,
			 "byte 2520: a section (id 0) of 18446744073709551360 bytes",
			 "host_zstd_section_size_stepping_back_refused");
	vtrace_set_error("none");
	check_steps_back("v7-section-size-steps-back", 5290, -(5290ULL + 17), NULL,
			 "host_section_stepping_before_file_start_left_to_libtracecmd");
}

/*
 * A file cut inside a strings section at its end (libtracecmd reads it to
 * the end and the walk stops there; the strings only name sections): read
 * as before the walk was checked, not refused.
 */
static void test_cut_strings_section(void)
{
	/* id 15 (strings), flags 0, description 0, size 100; then 50 of the 100 bytes */
	static const unsigned char cut[16 + 50] = { 15, 0, 0, 0, 0, 0, 0, 0, 100 };
	const char *dat = host_dat_of("../fuzz/corpus/host/ev.v7", "host.dat");
	struct vtrace_dump *d = write_into(dat, -1, cut, sizeof(cut)) ? open_host_dat(dat) : NULL;

	ktap_check(d && vtrace_dump_info(d)->nr_cpus == 2, "host_cut_strings_section_read",
		   "%s", d ? "" : vtrace_last_error());
	vtrace_dump_close(d);
	fuzz_unlink("host.dat");
}

/* The host file in corpus/host/@input is refused on opening, the error holding @msg */
static void check_host_refused(const char *input, const char *msg, const char *name)
{
	char path[PATH_MAX];
	struct vtrace_dump *d;

	snprintf(path, sizeof(path), "../fuzz/corpus/host/%s", input);
	d = open_host_dat(host_dat_of(path, "host.dat"));
	ktap_check(!d && strstr(vtrace_last_error(), msg), name, "%s", vtrace_last_error());
	vtrace_dump_close(d);
	fuzz_unlink("host.dat");
}

/*
 * fuzz-host: sched_switch's print fmt ending "REC->n%xt_prio" (an atom that
 * libtraceevent evaluates to 0): printing a record was a SIGFPE in
 * tep_print_event(), in the tool.  An ftrace event named "bprint" with the
 * fields of "print" (ip, buf; no fmt): libtraceevent prints a bprint from
 * its field fmt without looking for it, a SEGV in tep_print_event(), in the
 * tool.  Both refused when the file is opened.
 */
static void test_print_fmts(void)
{
	check_host_refused("v7-print-fmt-divides-by-atom",
			   "event sched:sched_switch (id 319): print fmt divides by xt_prio,"
			   " expected a non-zero number", "host_print_fmt_dividing_by_zero_refused");
	check_host_refused("v6-bprint-without-fmt",
			   "event ftrace:bprint (id 5): no field fmt, the address of its format",
			   "host_bprint_without_fmt_refused");
}

int main(int argc, char **argv)
{
	int n = 0;

	vtrace_set_quiet(true);
	if (argc == 2 && !strcmp(argv[1], "probe-only"))
		return probe_only() ? 0 : 1;
	fuzz_meta_init(NULL, NULL);
	fuzz_merge_init(NULL, NULL);
	fuzz_host_init(NULL, NULL);
	fuzz_pages_init(NULL, NULL);
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		n += replay_dir(targets[i].name, targets[i].one, 0);
	printf("KTAP version 1\n1..%d\n", n + 54);
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		replay_dir(targets[i].name, targets[i].one, 1);
	test_printk_formats();
	test_print_fmt_fields();
	test_format_text();
	test_guest_bprint_without_fmt();
	test_fields_past_record();
	test_division_by_zero();
	test_probe_refuses_crashing_format();
	test_probe_kept();
	test_header_page();
	test_offsets_without_records();
	test_merge_target();
	test_host_files();
	test_event_size_past_int_max();
	test_duplicate_event_id();
	test_format_id_at_message_end();
	test_common_fields_past_page();
	test_trace_clock_brackets_only();
	test_section_steps_back();
	test_cut_strings_section();
	test_print_fmts();
	return ktap_finish();
}
