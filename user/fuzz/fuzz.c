// SPDX-License-Identifier: GPL-2.0
/* fuzz.c: helpers shared by the libFuzzer targets. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "fuzz.h"
#include "vtrace-dump.h"
#include "vtrace-tsc.h"

volatile uint64_t fuzz_sink;
static char dir[PATH_MAX];

static void remove_dir(void)
{
	char cmd[PATH_MAX + 16];

	if (dir[0] && snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) < (int)sizeof(cmd))
		if (system(cmd))
			fprintf(stderr, "fuzz: could not remove %s\n", dir);
}

/*
 * $TMPDIR, else /dev/shm: the inputs are written to files, and on a disk's
 * file system (ext4) replacing a file flushes it (auto_da_alloc), which
 * cost fuzz-meta an eighth of its time; tmpfs writes to memory only
 */
static const char *tmp_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp && *tmp)
		return tmp;
	return access("/dev/shm", W_OK | X_OK) ? "/tmp" : "/dev/shm";
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/vtrace-fuzz.XXXXXX", tmp_dir());
		if (!mkdtemp(dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(remove_dir);
	}
	return dir;
}

const char *fuzz_path(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	return path;
}

void fuzz_write(const char *name, const void *buf, size_t len)
{
	int fd = open(fuzz_path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;

	if (fd < 0) {
		perror("fuzz: open");
		abort();
	}
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			perror("fuzz: write");
			abort();
		}
		done += w;
	}
	close(fd);
}

void fuzz_unlink(const char *name)
{
	if (unlink(fuzz_path(name)) && errno != ENOENT) {
		perror("fuzz: unlink");
		abort();
	}
}

unsigned int fuzz_dump_flags(void)
{
	/* the host trace.dat's probe child too */
	vtrace_dat_no_probe = getenv("FUZZ_NO_PROBE") != NULL;
	return vtrace_dat_no_probe ? VTRACE_DUMP_NO_PROBE : 0;
}

unsigned long fuzz_contained;

void fuzz_note_contained(const uint8_t *data, size_t size)
{
	static unsigned long deaths;	/* vtrace_probe_deaths at the last call */
	const char *keep = getenv("FUZZ_CONTAINED");
	uint64_t h = 0xcbf29ce484222325ULL;
	char path[PATH_MAX];
	int fd;

	/*
	 * A probe child died since the last call.  Not the error's text: the
	 * fuzzer learnt to write "(in a child process)" into a META_FILE's name,
	 * which the error quotes.
	 */
	if (vtrace_probe_deaths == deaths)
		return;
	deaths = vtrace_probe_deaths;
	fuzz_contained++;
	if (!keep)
		return;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 0x100000001b3ULL;
	snprintf(path, sizeof(path), "%s/contained-%016llx", keep, (unsigned long long)h);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;		/* kept already */
	if (write(fd, data, size) != (ssize_t)size)
		perror("fuzz: write");
	close(fd);
}

/* One event as vtrace-merge prints it, and the number fields its jsonl output reads */
void fuzz_print_event(struct tep_handle *tep, struct tep_record *rec, struct trace_seq *s)
{
	struct tep_event *ev = tep_find_event(tep, tep_data_type(tep, rec));

	trace_seq_reset(s);
	fuzz_sink += tep_data_pid(tep, rec) + strlen(tep_data_comm_from_pid(tep,
								      tep_data_pid(tep, rec)));
	if (!ev)
		return;
	tep_print_event(tep, s, rec, "%s-%d %s %s", TEP_PRINT_COMM, TEP_PRINT_PID,
			TEP_PRINT_NAME, TEP_PRINT_INFO);
	fuzz_sink += s->len;
	/* the fields vtrace-merge --format jsonl reads, where they fit the record */
	for (struct tep_format_field *f = ev->format.fields; f; f = f->next) {
		unsigned long long v;

		if (f->offset >= 0 && f->size > 0 && f->offset + f->size <= rec->size &&
		    !(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) &&
		    (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) &&
		    !tep_read_number_field(f, rec->data, &v))
			fuzz_sink += v;
	}
}

struct trace_seq *fuzz_seq(void)
{
	static struct trace_seq s;
	static bool init;

	if (!init) {
		trace_seq_init(&s);
		init = true;
	}
	return &s;
}

void fuzz_read_cpu(struct vtrace_dump *d, unsigned int cpu, struct trace_seq *s, int max)
{
	struct vtrace_cpu_reader *r = vtrace_cpu_reader_open(d, cpu);
	const struct vtrace_cpu_counts *c;
	struct tep_record *rec;
	int filler, n = 0;

	if (!r)
		return;
	while (n++ < max && vtrace_cpu_reader_next(r, &rec, &filler) > 0) {
		fuzz_touch(rec->data, rec->size);
		fuzz_print_event(vtrace_dump_tep(d), rec, s);
	}
	c = vtrace_cpu_reader_counts(r);
	fuzz_sink += c->events + c->missed + c->bad_pages + c->truncated;
	vtrace_cpu_reader_close(r);
}

static void convert(const struct vtrace_vcpu_history *h, int assume)
{
	struct vtrace_tsc_map map;
	uint64_t host;

	vtrace_tsc_map_init(&map, h, assume);
	for (size_t i = 0; i < h->nr; i++) {
		uint64_t g = vtrace_tsc_guest(&h->iv[i], h->iv[i].host_tsc);

		if (!vtrace_tsc_host(&h->iv[i], g, &host))
			fuzz_sink += host;
		for (int d = -1; d <= 1; d++)
			if (!vtrace_tsc_map_event(&map, g + d, &host))
				fuzz_sink += host;
	}
	fuzz_sink += map.backwards + map.extrapolated + vtrace_tsc_to_ns(map.prev_host, 2000000) +
		     vtrace_ns_to_tsc(map.prev_guest, 2000000);
}

void fuzz_use_offsets(struct vtrace_offsets *o)
{
	char *pids = vtrace_offsets_pids(o), *p = pids, *end;
	uint64_t first, last;

	fuzz_sink += vtrace_offsets_records(o) + vtrace_offsets_gaps(o) +
		     vtrace_offsets_anomalies(o) + vtrace_offsets_tsc_khz(o) +
		     vtrace_offsets_is_trace(o);
	if (vtrace_offsets_range(o, &first, &last))
		fuzz_sink += first + last;
	if (vtrace_offsets_end(o, &last))
		fuzz_sink += last;
	/* the histories of the first pids the file names, through the public lookups only */
	for (int n = 0; p && *p && n < 16; n++, p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (!vtrace_offsets_has_pid(o, pid))
			abort();	/* a pid it names but does not find */
		for (uint32_t vcpu = 0; vcpu < 16; vcpu++) {
			const struct vtrace_vcpu_history *h = vtrace_offsets_vcpu(o, pid, vcpu);

			if (h) {
				fuzz_sink += strlen(h->vm) + h->vcpu_idx;
				convert(h, 0);
				convert(h, 1);
			}
		}
	}
	free(pids);
}

/*
 * libtracecmd loads libtraceevent's plugins for each handle it opens (a
 * dlopen() of every plugin, a dlclose() at tracecmd_close()), and
 * fuzz-host opens its file six times per input (three readings, as the
 * tools read it, each in the probe child first): mapping and relocating
 * the plugins again each time was a third of its time.  A tep handle that
 * holds them for the process's life keeps them mapped, so each dlopen() is
 * a reference taken; what the plugins register in each handle is unchanged.
 * Call it before the first probe child is forked (LLVMFuzzerInitialize()),
 * and the child inherits them mapped too.
 */
static struct {
	struct tep_handle	*tep;
	struct tep_plugin_list	*plugins;
} kept;

void fuzz_keep_plugins(void)
{
	if (!kept.tep && (kept.tep = tep_alloc()))
		kept.plugins = tep_load_plugins(kept.tep);
}

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vtrace_set_quiet(true);
	return 0;
}
