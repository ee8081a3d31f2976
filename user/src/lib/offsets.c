// SPDX-License-Identifier: GPL-2.0
/* offsets.c: parse vtrace_host's tsc_offsets file into per-vCPU histories. */
/*
 * The format is the comment above VTRACE_OFFSETS_HEADER in
 * include/uapi/linux/vtrace.h: the version line "# vtrace-offsets v1" and
 * the header, then one record per line, thirteen fields separated by
 * blanks; or the form before v1: no version line, its own header, eleven
 * fields (no cpu and serial).  Every field is checked; a bad line stops
 * the parse with the file, line, byte offset and field named.  Other
 * lines starting with '#' after the header are comments.
 *
 * Records are grouped by (pid, vcpu_id) and kept in seq order: each one
 * starts an interval of its vCPU's history (struct vtrace_vcpu_history).
 * Where a group holds the records of two VMs (serials: one process made a
 * VM after another), only the newest VM's are kept, and that is said.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/vtrace.h>

#include "vtrace-tsc.h"
#include "vtrace-util.h"

/* "# vm_dropped" lines kept, at most (one per VM of the host) */
#define VM_CUT_MAX		256

/* Biggest offsets file accepted: ~85,000 records in 5 minutes is the worst seen */
#define OFFSETS_MAX_BYTES	(1ULL << 31)

struct offset_rec {
	int				pid;
	uint32_t			vcpu_id;
	uint32_t			serial;		/* the VM's, 0 if none or v0 */
	int				tid;		/* the writer thread, 0 if not known */
	char				vm[32];
	uint64_t			prev_offset;
	int				vcpu_idx;
	uint64_t			since;		/* of an enable snapshot, else 0 */
	struct vtrace_tsc_interval	iv;
};

struct vtrace_offsets {
	size_t				nr_hist, hist_alloc;
	struct vtrace_vcpu_history	*hist;	/* in (pid, vcpu_id) order */
	uint64_t			records;
	uint64_t			gaps;
	uint64_t			anomalies;
	bool				dropped;
	bool				has_end;	/* the "# end" line */
	int				vm_cut[VM_CUT_MAX];	/* pids of "# vm_dropped" */
	uint32_t			vm_cut_serial[VM_CUT_MAX];	/* their serials (v1) */
	int				nr_vm_cut;
	bool				untracked_cut;	/* "# untracked_dropped" */
	int				version;	/* of the file: 0 (before v1) or 1 */
	uint64_t			end_tsc;	/* its host_tsc */
	uint64_t			first_tsc;	/* host_tsc of the earliest record */
	uint64_t			last_tsc;	/* of the latest */
	bool				trace;		/* read from a trace's events */
	uint64_t			trace_start;	/* the trace's first time stamp */
	uint64_t			tsc_khz;	/* the trace's, 0 if not known */
	struct thread_vm		*threads;	/* by tid: the VM each wrote for */
	size_t				nr_threads;
};

/* A thread that wrote offsets, and for which VM (pid; -1 for several) */
struct thread_vm {
	int				tid;
	int				pid;
};

struct line_ctx {
	const char	*path;
	unsigned long	line;
	size_t		offset;
};

static int bad_field(const struct line_ctx *c, const char *field, const char *want,
		     const char *got)
{
	vtrace_set_error("%s: line %lu (byte %zu): field %s: expected %s, got \"%.40s\"",
			 c->path, c->line, c->offset, field, want, got ? got : "(missing)");
	return -1;
}

static int parse_record(const struct line_ctx *c, char *line, struct offset_rec *r, int version)
{
	static const char * const names[] = { "seq", "host_tsc", "pid", "vm", "vcpu_id",
		"vcpu_idx", "prev_offset", "offset", "multiplier", "frac_bits", "kind", "cpu",
		"serial", "tid" };
	const int nf = version ? 14 : 11;
	const char *want = version ? "14 fields" : "11 fields";
	char *f[14], *save = NULL;
	int64_t s, prev, idx;
	uint32_t kind;
	uint64_t u[14];
	int n = 0;

	for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == nf)
			return bad_field(c, "(extra)", want, tok);
		f[n++] = tok;
	}
	if (n < nf)
		return bad_field(c, names[n], want, NULL);
	for (int i = 0; i < nf; i++) {
		if (i == 3 || i == 5 || i == 6 || i == 7 || i == 10)
			continue;
		if (vtrace_parse_u64(f[i], &u[i]))
			return bad_field(c, names[i], "an unsigned decimal", f[i]);
	}
	if (u[2] == 0 || u[2] > 0x7fffffff)
		return bad_field(c, "pid", "a process id", f[2]);
	if (u[4] > UINT32_MAX)
		return bad_field(c, "vcpu_id", "a 32-bit vcpu id", f[4]);
	if (vtrace_parse_s64(f[5], &idx) || idx < -1 || idx > UINT32_MAX)
		return bad_field(c, "vcpu_idx", "a vCPU index or -1", f[5]);
	if (vtrace_parse_s64(f[6], &prev))
		return bad_field(c, "prev_offset", "a signed decimal", f[6]);
	if (vtrace_parse_s64(f[7], &s))
		return bad_field(c, "offset", "a signed decimal", f[7]);
	if (u[8] == 0)
		return bad_field(c, "multiplier", "a non-zero multiplier", f[8]);
	if (u[9] > 63)
		return bad_field(c, "frac_bits", "0..63", f[9]);
	if (version && u[11] > 65535)
		return bad_field(c, "cpu", "a CPU number", f[11]);
	if (version && u[12] > UINT32_MAX)
		return bad_field(c, "serial", "a 32-bit serial", f[12]);
	if (version && u[13] > 0x7fffffff)
		return bad_field(c, "tid", "a thread id or 0", f[13]);
	if (strlen(f[3]) >= sizeof(r->vm))
		return bad_field(c, "vm", "a name under 32 characters", f[3]);
	if (!strcmp(f[10], "write"))
		kind = VTRACE_TSC_WRITE;
	else if (!strcmp(f[10], "snapshot"))
		kind = VTRACE_TSC_SNAPSHOT;
	else if (!strcmp(f[10], "multiplier"))
		kind = VTRACE_TSC_MULTIPLIER;
	else
		return bad_field(c, "kind", "\"write\", \"snapshot\" or \"multiplier\"", f[10]);
	r->pid = u[2];
	r->vcpu_id = u[4];
	r->serial = version ? u[12] : 0;
	r->tid = version && kind != VTRACE_TSC_SNAPSHOT ? (int)u[13] : 0;
	strcpy(r->vm, f[3]);
	r->prev_offset = (uint64_t)prev;
	r->vcpu_idx = idx;
	r->iv = (struct vtrace_tsc_interval){
		.host_tsc	= u[1],
		.offset		= (uint64_t)s,
		.mult		= u[8],
		.frac		= u[9],
		.kind		= kind,
		.seq		= u[0],
	};
	return 0;
}

/* Comparisons made by the sorts and searches, for the tests' complexity check */
static uint64_t steps;

uint64_t vtrace_offsets_steps(void)
{
	return steps;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	steps++;
	return x < y ? -1 : x > y;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct offset_rec *x = a, *y = b;

	steps++;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->vcpu_id != y->vcpu_id)
		return x->vcpu_id < y->vcpu_id ? -1 : 1;
	if (x->iv.seq != y->iv.seq)
		return x->iv.seq < y->iv.seq ? -1 : 1;
	return 0;
}

/* "# vm_dropped PID VM N [SERIAL]": that VM's history stops at its last record */
static int parse_vm_dropped(struct vtrace_offsets *o, const struct line_ctx *c, const char *line)
{
	unsigned long long n;
	unsigned int serial = 0;
	int pid, len = 0;
	char vm[32];

	if ((o->version ?
	     sscanf(line, VTRACE_OFFSETS_VM_DROPPED " %d %31s %llu %u%n", &pid, vm, &n, &serial,
		    &len) != 4 :
	     sscanf(line, VTRACE_OFFSETS_VM_DROPPED " %d %31s %llu%n", &pid, vm, &n, &len) != 3) ||
	    line[len] || pid <= 0) {
		vtrace_set_error("%s: line %lu (byte %zu): expected \"%s PID VM N%s\", got \"%.60s\"",
				 c->path, c->line, c->offset, VTRACE_OFFSETS_VM_DROPPED,
				 o->version ? " SERIAL" : "", line);
		return -1;
	}
	if (o->nr_vm_cut < VM_CUT_MAX) {
		o->vm_cut_serial[o->nr_vm_cut] = serial;
		o->vm_cut[o->nr_vm_cut++] = pid;
	}
	vtrace_warn("%s: VM %s (pid %d) lost %llu records (its vm_share of vtrace_host's capacity"
		    " was full): its history stops at its last record", c->path, vm, pid, n);
	return 0;
}

/* "# untracked_dropped N": the histories with records of serial 0 stop at their last */
static int parse_untracked(struct vtrace_offsets *o, const struct line_ctx *c, const char *line)
{
	unsigned long long n;
	int len = 0;

	if (sscanf(line, VTRACE_OFFSETS_UNTRACKED_DROPPED " %llu%n", &n, &len) != 1 || line[len]) {
		vtrace_set_error("%s: line %lu (byte %zu): expected \"%s N\", got \"%.60s\"",
				 c->path, c->line, c->offset, VTRACE_OFFSETS_UNTRACKED_DROPPED, line);
		return -1;
	}
	o->untracked_cut = true;
	vtrace_warn("%s: %llu records of VMs that found vtrace_host's table of VMs full (serial 0)"
		    " were dropped: their histories stop at their last record", c->path, n);
	return 0;
}

/* "# end host_tsc=T records=R dropped=D": the copy is whole; R must be the records read */
static int parse_end(struct vtrace_offsets *o, const struct line_ctx *c, const char *line,
		     size_t nr, uint64_t anomalies)
{
	unsigned long long t, r, d;
	int n = 0;

	if (sscanf(line, VTRACE_OFFSETS_END " host_tsc=%llu records=%llu dropped=%llu%n", &t, &r,
		   &d, &n) != 3 || line[n]) {
		vtrace_set_error("%s: line %lu (byte %zu): expected \"%s host_tsc=T records=R"
				 " dropped=D\", got \"%.60s\"", c->path, c->line, c->offset,
				 VTRACE_OFFSETS_END, line);
		return -1;
	}
	if (r != nr + anomalies) {
		vtrace_set_error("%s: line %lu (byte %zu): \"%s\" says records=%llu, the file holds"
				 " %zu: records lost or added in this copy", c->path, c->line,
				 c->offset, VTRACE_OFFSETS_END, r, nr + anomalies);
		return -1;
	}
	/* D counts every drop: "# dropped" and "# vm_dropped" said whose histories stop */
	o->has_end = true;
	o->end_tsc = t;
	return 0;
}

/* Split @text into records; returns their number or -1 */
static long parse_lines(struct vtrace_offsets *o, const char *path, char *text,
			struct offset_rec **recs, uint64_t *anomalies, bool *dropped)
{
	struct line_ctx c = { .path = path };
	size_t nr = 0, alloc = 0;
	int header = 0;
	char *line = text;

	*recs = NULL;
	while (*line) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		c.line++;
		c.offset = line - text;
		line[len] = '\0';
		if (len && line[len - 1] == '\r')
			line[len - 1] = '\0';
		if (o->has_end && line[0]) {
			vtrace_set_error("%s: line %lu (byte %zu): a line after the \"%s\" line",
					 path, c.line, c.offset, VTRACE_OFFSETS_END);
			goto error;
		}
		if (!header) {
			if (c.line == 1 && !strcmp(line, VTRACE_OFFSETS_VERSION)) {
				o->version = 1;
			} else if (!o->version && !strcmp(line, VTRACE_OFFSETS_HEADER_V0)) {
				header = 1;
			} else if (o->version && !strcmp(line, VTRACE_OFFSETS_HEADER)) {
				header = 1;
			} else {
				vtrace_set_error("%s: line %lu (byte %zu): expected %s, got \"%.60s\" (a"
						 " tsc_offsets file of another vtrace_host version?)",
						 path, c.line, c.offset, o->version ?
						 "the header \"" VTRACE_OFFSETS_HEADER "\"" :
						 "the line \"" VTRACE_OFFSETS_VERSION "\" and the header,"
						 " or the header of the form before it \""
						 VTRACE_OFFSETS_HEADER_V0 "\"", line);
				goto error;
			}
		} else if (o->version && !strncmp(line, VTRACE_OFFSETS_UNTRACKED_DROPPED " ",
					       strlen(VTRACE_OFFSETS_UNTRACKED_DROPPED " "))) {
			if (parse_untracked(o, &c, line))
				goto error;
		} else if (!strncmp(line, VTRACE_OFFSETS_END " ", strlen(VTRACE_OFFSETS_END " "))) {
			if (parse_end(o, &c, line, nr, *anomalies))
				goto error;
		} else if (!strncmp(line, VTRACE_OFFSETS_VM_DROPPED " ",
				    strlen(VTRACE_OFFSETS_VM_DROPPED " "))) {
			if (parse_vm_dropped(o, &c, line))
				goto error;
		} else if (!strncmp(line, VTRACE_OFFSETS_DROPPED " ",
				    strlen(VTRACE_OFFSETS_DROPPED " "))) {
			/* vtrace_host ran out of capacity: nothing after the last record */
			*dropped = true;
			vtrace_warn("%s: %s records: vtrace_host's capacity was full, the history "
				    "stops at its last record (reload vtrace_host with a larger "
				    "capacity=)", path, line + 2);
		} else if (line[0] && line[0] != '#') {
			if (nr == alloc) {
				struct offset_rec *n;

				alloc = alloc ? alloc * 2 : 256;
				n = realloc(*recs, alloc * sizeof(**recs));
				if (!n)
					goto error;
				*recs = n;
			}
			if (parse_record(&c, line, &(*recs)[nr], o->version))
				goto error;
			nr++;
			/* a write KVM made with no vCPU of the VM running: not attributable */
			if (!strcmp((*recs)[nr - 1].vm, "?"))
				nr--, (*anomalies)++;
		}
		line += len + (nl ? 1 : 0);
	}
	if (!header) {
		vtrace_set_error("%s: %s, expected the header \"%s\"", path,
				 o->version ? "no header" : "empty file", VTRACE_OFFSETS_HEADER);
		goto error;
	}
	return nr;
error:
	free(*recs);
	*recs = NULL;
	return -1;
}

/* Gaps and duplicates named one by one, up to this many; then only counted */
#define GAP_WARN_MAX		8

/*
 * Records missing from the seq numbers (vtrace_host dropped them) and seq
 * numbers seen twice.  Sorted with qsort(): the file is the host's, but an
 * insertion sort made a hostile one (seqs in reverse order) quadratic.
 */
static void count_gaps(struct vtrace_offsets *o, const char *path, struct offset_rec *recs,
		       size_t nr)
{
	uint64_t *seqs = malloc(nr * sizeof(*seqs)), twice = 0, warned = 0;

	if (!seqs)
		return;
	for (size_t i = 0; i < nr; i++)
		seqs[i] = recs[i].iv.seq;
	if (nr)
		qsort(seqs, nr, sizeof(*seqs), cmp_u64);
	for (size_t i = 1; i < nr; i++) {
		if (seqs[i] == seqs[i - 1]) {
			twice++;
			if (warned++ < GAP_WARN_MAX)
				vtrace_warn("%s: seq %llu appears twice", path,
					    (unsigned long long)seqs[i]);
		} else if (seqs[i] != seqs[i - 1] + 1) {
			o->gaps += seqs[i] - seqs[i - 1] - 1;
			if (warned++ < GAP_WARN_MAX)
				vtrace_warn("%s: records %llu..%llu are missing (dropped by"
					    " vtrace_host?)", path,
					    (unsigned long long)seqs[i - 1] + 1,
					    (unsigned long long)seqs[i] - 1);
		}
	}
	if (warned > GAP_WARN_MAX)
		vtrace_warn("%s: %llu more gaps or repeated seqs not listed (%llu records missing,"
			    " %llu seqs repeated in all)", path,
			    (unsigned long long)(warned - GAP_WARN_MAX),
			    (unsigned long long)o->gaps, (unsigned long long)twice);
	free(seqs);
}

/*
 * A snapshot of the trace event's enable after another record of its vCPU
 * in the same trace: a record at or after its enable (@since) was written
 * while the buffer recorded, so KVM may not have stored it yet when the
 * snapshot read the offset: the record's values win.  A record before
 * @since is of an earlier enable: the writes in between are not in the
 * trace, and the snapshot's values stand (warned when they differ).
 */
static void enable_snapshot_rule(struct vtrace_vcpu_history *h, size_t k, uint64_t since,
				 const char *path)
{
	struct vtrace_tsc_interval *prev = &h->iv[k - 1], *iv = &h->iv[k];

	if (!since)
		return;
	if (prev->host_tsc >= since) {
		iv->offset = prev->offset;
		iv->mult = prev->mult;
		iv->frac = prev->frac;
	} else if (iv->offset != prev->offset || iv->mult != prev->mult) {
		vtrace_warn("%s: pid %d vcpu %u: the snapshot of seq %llu differs from seq %llu"
			    " before it: offsets written while vtrace_host:tsc_offset was disabled",
			    path, h->pid, h->vcpu_id, (unsigned long long)iv->seq,
			    (unsigned long long)prev->seq);
	}
}

/*
 * What the vCPU's first interval stands on.  In a trace, a snapshot of the
 * event's enable (@since) says that every write from max(since, the
 * trace's first event) on is in the trace: the values of the vCPU's first
 * record, or the prev_offset of a first write, held from there.
 */
static void set_start(struct vtrace_offsets *o, struct vtrace_vcpu_history *h,
		      const struct offset_rec *recs, size_t nr, bool assumed)
{
	uint64_t known = 0;

	for (size_t k = 0; k < nr; k++)
		if (recs[k].iv.kind == VTRACE_TSC_SNAPSHOT && recs[k].since &&
		    (!known || recs[k].since < known))
			known = recs[k].since;
	if (known && o->trace_start > known)
		known = o->trace_start;
	/* the first record from before: of an earlier enable, or the snapshot itself */
	if (known && known > recs[0].iv.host_tsc)
		known = recs[0].since ? recs[0].iv.host_tsc : 0;
	if (known) {
		h->start_why = VTRACE_START_ENABLE;
		h->iv[0].host_tsc = known;
		if (assumed)
			h->iv[0].kind = VTRACE_TSC_SNAPSHOT;
	} else if (recs[0].iv.kind == VTRACE_TSC_SNAPSHOT) {
		h->start_why = VTRACE_START_LOAD;
	} else if (!assumed) {
		h->start_why = VTRACE_START_CREATION;
	}
}

/*
 * The reading rules of Documentation/vtrace_host.rst, per vCPU:
 *  - each record starts an interval with its offset and multiplier;
 *  - a write's prev_offset is the offset before it: where it disagrees
 *    with a snapshot before it (a write racing with the load), the write
 *    wins; elsewhere a disagreement means records were dropped (warned);
 *  - before a first "write" record with a non-zero prev_offset (the vCPU
 *    existed before the module loaded and has no snapshot), that
 *    prev_offset held since an unknown time: an ASSUMED interval;
 *  - in a trace, a snapshot of the event's enable: see
 *    enable_snapshot_rule() and set_start().
 */
static void apply_rules(struct vtrace_vcpu_history *h, const struct offset_rec *recs,
			size_t first, const char *path)
{
	for (size_t k = first + 1; k < h->nr; k++) {
		struct vtrace_tsc_interval *prev = &h->iv[k - 1];
		uint64_t prev_offset = recs[k - first].prev_offset;

		if (h->iv[k].kind == VTRACE_TSC_SNAPSHOT) {
			enable_snapshot_rule(h, k, recs[k - first].since, path);
			continue;
		}
		if (prev_offset == prev->offset)
			continue;
		if (prev->kind == VTRACE_TSC_SNAPSHOT)
			prev->offset = prev_offset;
		else
			vtrace_warn("%s: pid %d vcpu %u: prev_offset of seq %llu is not the offset of"
				    " seq %llu (records dropped?)", path, h->pid, h->vcpu_id,
				    (unsigned long long)h->iv[k].seq,
				    (unsigned long long)prev->seq);
	}
}

static int add_history(struct vtrace_offsets *o, const char *path, const struct offset_rec *recs,
		       size_t nr)
{
	bool assumed = recs[0].iv.kind != VTRACE_TSC_SNAPSHOT && recs[0].prev_offset;
	struct vtrace_vcpu_history *h, *n;
	size_t first = assumed ? 1 : 0;

	if (o->nr_hist == o->hist_alloc) {
		size_t alloc = o->hist_alloc ? 2 * o->hist_alloc : 16;

		n = realloc(o->hist, alloc * sizeof(*o->hist));
		if (!n)
			return -1;
		o->hist = n;
		o->hist_alloc = alloc;
	}
	h = &o->hist[o->nr_hist++];
	*h = (struct vtrace_vcpu_history){ .pid = recs[0].pid, .vcpu_id = recs[0].vcpu_id,
					   .vcpu_idx = recs[nr - 1].vcpu_idx, .nr = nr + first,
					   .offsets = o };
	for (size_t k = 0; k < nr; k++) {
		if (recs[k].serial)
			h->serial = recs[k].serial;
		else
			h->untracked = true;
	}
	memcpy(h->vm, recs[0].vm, sizeof(h->vm));
	h->iv = malloc(h->nr * sizeof(*h->iv));
	if (!h->iv)
		return -1;
	if (assumed) {
		h->iv[0] = recs[0].iv;
		h->iv[0].host_tsc = 0;
		h->iv[0].offset = recs[0].prev_offset;
		h->iv[0].kind = VTRACE_TSC_ASSUMED;
	}
	for (size_t k = 0; k < nr; k++) {
		h->iv[first + k] = recs[k].iv;
		if (k && recs[k].iv.host_tsc < recs[k - 1].iv.host_tsc)
			vtrace_warn("%s: pid %d vcpu %u: host_tsc of seq %llu is before seq %llu",
				    path, h->pid, h->vcpu_id, (unsigned long long)recs[k].iv.seq,
				    (unsigned long long)recs[k - 1].iv.seq);
		if (k && strcmp(recs[k].vm, recs[0].vm))
			vtrace_warn("%s: pid %d vcpu %u: records of two VMs (%s, %s)", path,
				    h->pid, h->vcpu_id, recs[0].vm, recs[k].vm);
	}
	apply_rules(h, recs, first, path);
	set_start(o, h, recs, nr, assumed);
	return 0;
}

/*
 * The first of @recs[0..@nr) from which they are all of one VM: one
 * process's VM and a VM it made later have one pid and may have one name
 * (v1 files tell them apart by serial; serial 0 is of no known VM).  The
 * newest VM's records alone make the history; the others are said.
 */
static size_t newest_vm(const char *path, const struct offset_rec *recs, size_t nr)
{
	uint32_t last = 0;
	size_t start = nr;

	while (start > 0) {
		uint32_t serial = recs[start - 1].serial;

		if (serial && last && serial != last)
			break;
		if (serial)
			last = serial;
		start--;
	}
	if (start)
		vtrace_warn("%s: pid %d vcpu %u: records of more than one VM of that process (serial"
			    " %u, then %u from seq %llu, host TSC %llu: the process made a new VM):"
			    " only the newest VM's %zu records make its history, %zu before are"
			    " left out", path, recs[0].pid, recs[0].vcpu_id, recs[start - 1].serial,
			    last, (unsigned long long)recs[start].iv.seq,
			    (unsigned long long)recs[start].iv.host_tsc, nr - start, start);
	return start;
}

static int build_histories(struct vtrace_offsets *o, const char *path, struct offset_rec *recs,
			   size_t nr)
{
	if (!nr)
		return 0;	/* recs is NULL: a header and no records */
	qsort(recs, nr, sizeof(*recs), cmp_rec);
	for (size_t i = 0; i < nr; ) {
		size_t j = i, k;

		while (j < nr && recs[j].pid == recs[i].pid && recs[j].vcpu_id == recs[i].vcpu_id)
			j++;
		k = i + newest_vm(path, recs + i, j - i);
		if (add_history(o, path, recs + k, j - k))
			return -1;
		i = j;
	}
	return 0;
}

static void end_histories(struct vtrace_offsets *o, uint64_t end, int why)
{
	for (size_t i = 0; i < o->nr_hist; i++) {
		o->hist[i].end_tsc = end;
		o->hist[i].end_why = why;
	}
}

/* A full history ends at its last record, for every vCPU */
static uint64_t cut_histories(struct vtrace_offsets *o, const struct offset_rec *recs,
			      size_t nr, int why)
{
	uint64_t end = 0;

	for (size_t i = 0; i < nr; i++)
		if (recs[i].iv.host_tsc > end)
			end = recs[i].iv.host_tsc;
	end_histories(o, end, why);
	return end;
}

/* @h ends at @end if that is earlier than where it ends now */
static void cut_at(struct vtrace_vcpu_history *h, uint64_t end)
{
	if (!h->end_tsc || end < h->end_tsc) {
		h->end_tsc = end;
		h->end_why = VTRACE_END_DROPPED;
	}
}

/*
 * A VM of a "# vm_dropped" line (pid, and serial in v1): its histories
 * stop at its last record; after "# untracked_dropped", so do those with
 * records of serial 0.
 */
static void cut_vms(struct vtrace_offsets *o, const struct offset_rec *recs, size_t nr)
{
	uint64_t end_untracked = 0;

	for (int k = 0; k < o->nr_vm_cut; k++) {
		uint32_t serial = o->vm_cut_serial[k];
		uint64_t end = 0;

		for (size_t i = 0; i < nr; i++)
			if (recs[i].pid == o->vm_cut[k] && (!serial || recs[i].serial == serial) &&
			    recs[i].iv.host_tsc > end)
				end = recs[i].iv.host_tsc;
		for (size_t i = 0; i < o->nr_hist; i++)
			if (o->hist[i].pid == o->vm_cut[k] && (!serial || o->hist[i].serial == serial))
				cut_at(&o->hist[i], end);
	}
	if (!o->untracked_cut)
		return;
	for (size_t i = 0; i < nr; i++)
		if (!recs[i].serial && recs[i].iv.host_tsc > end_untracked)
			end_untracked = recs[i].iv.host_tsc;
	for (size_t i = 0; i < o->nr_hist; i++)
		if (o->hist[i].untracked)
			cut_at(&o->hist[i], end_untracked);
}

/* No "# end" line: the copy may have been cut anywhere after its last record */
static void incomplete(struct vtrace_offsets *o, const char *path, const struct offset_rec *recs,
		       size_t nr)
{
	uint64_t end = cut_histories(o, recs, nr, VTRACE_END_CUT);

	vtrace_warn("%s: no \"%s\" line: an incomplete copy (cut short, or read from a"
		    " vtrace_host without it); the history of every vCPU is taken to end at its"
		    " last record (host TSC %llu)", path, VTRACE_OFFSETS_END,
		    (unsigned long long)end);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct thread_vm *x = a, *y = b;

	steps++;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * The threads that made writes, each with the VM it wrote for: QEMU writes
 * a vCPU's offset from the vCPU's own thread, so a thread that wrote VM
 * P's offsets is a thread of P.  A tid seen writing for two VMs (a tid
 * used again after its process ended) says nothing: pid -1.
 */
static int collect_threads(struct vtrace_offsets *o, const struct offset_rec *recs, size_t nr)
{
	size_t n = 0;

	o->threads = malloc((nr ? nr : 1) * sizeof(*o->threads));
	if (!o->threads)
		return -1;
	for (size_t i = 0; i < nr; i++)
		if (recs[i].tid > 0)
			o->threads[n++] = (struct thread_vm){ recs[i].tid, recs[i].pid };
	if (n)
		qsort(o->threads, n, sizeof(*o->threads), cmp_thread);
	o->nr_threads = 0;
	for (size_t i = 0; i < n; i++) {
		struct thread_vm *last = o->nr_threads ? &o->threads[o->nr_threads - 1] : NULL;

		if (last && last->tid == o->threads[i].tid) {
			if (last->pid != o->threads[i].pid)
				last->pid = -1;
			continue;
		}
		o->threads[o->nr_threads++] = o->threads[i];
	}
	return 0;
}

/**
 * vtrace_offsets_thread_pid - the VM (QEMU's pid) host thread @tid wrote offsets for
 *
 * Return: the pid, 0 when the thread wrote none (or the records do not
 * say their writer: a tsc_offsets file of the form before v1), -1 when it
 * wrote for several VMs.
 */
int vtrace_offsets_thread_pid(const struct vtrace_offsets *o, int tid)
{
	size_t lo = 0, hi = o ? o->nr_threads : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->threads[mid].tid == tid)
			return o->threads[mid].pid;
		if (o->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* What both sources share: the records' range, gaps in their seqs, the histories */
static int offsets_build(struct vtrace_offsets *o, const char *path, struct offset_rec *recs,
			 size_t nr)
{
	o->records = nr;
	o->first_tsc = UINT64_MAX;
	for (size_t i = 0; i < nr; i++) {
		if (recs[i].iv.host_tsc < o->first_tsc)
			o->first_tsc = recs[i].iv.host_tsc;
		if (recs[i].iv.host_tsc > o->last_tsc)
			o->last_tsc = recs[i].iv.host_tsc;
	}
	if (o->anomalies)
		vtrace_warn("%s: %llu records of writes with no vCPU (vm \"?\") ignored", path,
			    (unsigned long long)o->anomalies);
	count_gaps(o, path, recs, nr);
	if (collect_threads(o, recs, nr))
		return -1;
	return build_histories(o, path, recs, nr);
}

struct vtrace_offsets *vtrace_offsets_open(const char *path)
{
	struct vtrace_offsets *o = NULL;
	struct offset_rec *recs = NULL;
	uint64_t len, anomalies = 0;
	bool dropped = false;
	char *text;
	long nr;

	text = vtrace_read_file(path, OFFSETS_MAX_BYTES, &len);
	if (!text)
		return NULL;
	if (strlen(text) != len) {
		vtrace_set_error("%s: byte %zu: NUL byte, expected text", path, strlen(text));
		goto error;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		goto error;
	nr = parse_lines(o, path, text, &recs, &anomalies, &dropped);
	if (nr < 0)
		goto error;
	o->anomalies = anomalies;
	if (offsets_build(o, path, recs, nr))
		goto error;
	if (dropped)
		cut_histories(o, recs, nr, VTRACE_END_DROPPED);
	else if (o->has_end)
		end_histories(o, o->end_tsc, VTRACE_END_READ);
	else if (nr)
		incomplete(o, path, recs, nr);
	cut_vms(o, recs, nr);
	free(recs);
	free(text);
	return o;
error:
	vtrace_offsets_close(o);
	free(recs);
	free(text);
	return NULL;
}

/* A record of a trace as the file's parser makes it; false for an anomaly (vm "?") */
static bool from_record(const struct vtrace_offset_record *r, struct offset_rec *out)
{
	*out = (struct offset_rec){
		.pid		= r->pid,
		.vcpu_id	= r->vcpu_id,
		.serial		= r->serial,
		.tid		= r->kind == VTRACE_TSC_SNAPSHOT ? 0 : r->tid,
		.prev_offset	= r->prev_offset,
		.vcpu_idx	= r->vcpu_idx,
		.since		= r->kind == VTRACE_TSC_SNAPSHOT ? r->since : 0,
		.iv		= { .host_tsc = r->host_tsc, .offset = r->offset, .mult = r->mult,
				    .frac = r->frac, .kind = r->kind, .seq = r->seq },
	};
	snprintf(out->vm, sizeof(out->vm), "%s", r->vm);
	return strcmp(r->vm, "?") != 0;
}

/*
 * vtrace_offsets_from_trace - the history of vtrace_host:tsc_offset events
 *
 * @recs are the events of a host trace in host_tsc order (@seq numbering
 * them).  The trace holds every record written while it recorded, unless
 * one of its CPUs lost events: from that CPU's last event before the loss
 * on, a record of a vCPU whose thread may have run there may be missing
 * (@trace->cuts, offsets-gaps.c), so that vCPU's history stops there (and
 * a guest event after it is refused, as after a file's dropped records).
 * The other histories go on to the trace's last event.  What held
 * before a vCPU's first record is known only when that record is its
 * creation (a write from offset 0) or a snapshot: a VM created before the
 * recording began gets an assumed interval, and its guest events before
 * its first record are refused (the file's rule, Documentation/vtrace_host.rst).
 */
static size_t lower_bound(struct vtrace_offsets *o, int pid, uint32_t vcpu_id);

/* Where the trace's losses cut the history of (@pid, @vcpu_id), NULL: nowhere */
static const struct vtrace_offsets_cut *cut_of(const struct vtrace_offsets_trace *t, int pid,
					       uint32_t vcpu_id)
{
	for (size_t i = 0; i < t->nr_cuts; i++)
		if (t->cuts[i].pid == pid && t->cuts[i].vcpu_id == vcpu_id)
			return &t->cuts[i];
	return NULL;
}

/* Each history a loss may have cut stops at it, said with the loss */
static void cut_lost(struct vtrace_offsets *o, const char *path,
		     const struct vtrace_offsets_trace *t)
{
	for (size_t i = 0; i < t->nr_cuts; i++) {
		const struct vtrace_offsets_cut *c = &t->cuts[i];
		size_t k = lower_bound(o, c->pid, c->vcpu_id);
		char lost[32] = "an unknown number of";

		if (k == o->nr_hist || o->hist[k].pid != c->pid || o->hist[k].vcpu_id != c->vcpu_id)
			continue;
		o->hist[k].end_tsc = c->tsc;
		o->hist[k].end_why = VTRACE_END_LOST;
		if (c->nr > 0)
			snprintf(lost, sizeof(lost), "%lld", c->nr);
		if (c->cpu < 0)
			vtrace_warn("%s: pid %d vCPU %u: its offset history stops at host TSC %llu,"
				    " where the first of the trace's losses not looked into began"
				    " (record with a larger trace-cmd -b)", path, c->pid, c->vcpu_id,
				    (unsigned long long)c->tsc);
		else
			vtrace_warn("%s: cpu %d lost %s events after host TSC %llu: pid %d vCPU %u's"
				    " offset history stops there, a record of its writes may be among"
				    " them (its threads were not all seen on other CPUs that while;"
				    " record with a larger trace-cmd -b, or give --offsets with"
				    " vtrace_host's tsc_offsets file)", path, c->cpu, lost,
				    (unsigned long long)c->tsc, c->pid, c->vcpu_id);
	}
}

/* The histories the losses cannot have touched, said in one line */
static void say_whole(struct vtrace_offsets *o, const char *path,
		      const struct vtrace_offsets_trace *t)
{
	char list[512];
	size_t at = 0, nr = 0, more = 0;

	for (size_t i = 0; i < o->nr_hist; i++) {
		if (o->hist[i].end_why == VTRACE_END_LOST)
			continue;
		nr++;
		if (at + 40 > sizeof(list)) {
			more++;
			continue;
		}
		at += snprintf(list + at, sizeof(list) - at, "%spid %d vCPU %u", at ? ", " : "",
			       o->hist[i].pid, o->hist[i].vcpu_id);
	}
	if (!nr)
		return;
	if (more)
		snprintf(list + at, sizeof(list) - at, " and %zu more", more);
	vtrace_warn("%s: its CPUs lost events %zu time%s; the offset histor%s of %s stay%s whole:"
		    " %s threads ran on other CPUs all through each loss", path, t->nr_gaps,
		    t->nr_gaps == 1 ? "" : "s", nr == 1 ? "y" : "ies", list, nr == 1 ? "s" : "",
		    nr == 1 ? "its" : "their");
}

struct vtrace_offsets *vtrace_offsets_from_trace(const char *path,
						 const struct vtrace_offset_record *recs, size_t nr,
						 const struct vtrace_offsets_trace *trace)
{
	struct vtrace_offsets *o = calloc(1, sizeof(*o));
	struct offset_rec *kept = calloc(nr ? nr : 1, sizeof(*kept));
	size_t n = 0;

	if (!o || !kept)
		goto error;
	o->trace = true;
	o->trace_start = trace->start_tsc;
	o->tsc_khz = trace->tsc_khz;
	for (size_t i = 0; i < nr; i++) {
		const struct vtrace_offsets_cut *c = cut_of(trace, recs[i].pid, recs[i].vcpu_id);

		if (c && recs[i].host_tsc > c->tsc)
			continue;
		if (from_record(&recs[i], &kept[n]))
			n++;
		else
			o->anomalies++;
	}
	if (offsets_build(o, path, kept, n))
		goto error;
	o->has_end = true;
	o->end_tsc = trace->end_tsc;
	end_histories(o, o->end_tsc, VTRACE_END_TRACE);
	cut_lost(o, path, trace);
	if (trace->nr_gaps)
		say_whole(o, path, trace);
	free(kept);
	return o;
error:
	vtrace_offsets_close(o);
	free(kept);
	return NULL;
}

void vtrace_offsets_close(struct vtrace_offsets *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nr_hist; i++)
		free(o->hist[i].iv);
	free(o->hist);
	free(o->threads);
	free(o);
}

/* The first history of @pid with a vcpu_id of at least @vcpu_id: a binary search */
static size_t lower_bound(struct vtrace_offsets *o, int pid, uint32_t vcpu_id)
{
	size_t lo = 0, hi = o->nr_hist;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct vtrace_vcpu_history *h = &o->hist[mid];

		steps++;
		if (h->pid < pid || (h->pid == pid && h->vcpu_id < vcpu_id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct vtrace_vcpu_history *vtrace_offsets_vcpu(struct vtrace_offsets *o, int pid,
						      uint32_t vcpu_id)
{
	size_t i = lower_bound(o, pid, vcpu_id);

	if (i < o->nr_hist && o->hist[i].pid == pid && o->hist[i].vcpu_id == vcpu_id)
		return &o->hist[i];
	return NULL;
}

int vtrace_offsets_has_pid(struct vtrace_offsets *o, int pid)
{
	size_t i = lower_bound(o, pid, 0);

	return i < o->nr_hist && o->hist[i].pid == pid;
}

/* "1234 5678" (the pids with records), for error messages; caller frees */
char *vtrace_offsets_pids(struct vtrace_offsets *o)
{
	size_t len = 0, size = 16 + o->nr_hist * 12;
	char *s = malloc(size);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < o->nr_hist; i++)
		if (!i || o->hist[i].pid != o->hist[i - 1].pid)
			len += snprintf(s + len, size - len, "%s%d", len ? " " : "",
					o->hist[i].pid);
	if (!len)
		snprintf(s, size, "none");
	return s;
}

/* Host TSC of the earliest and the latest record: 0 without records */
int vtrace_offsets_range(struct vtrace_offsets *o, uint64_t *first, uint64_t *last)
{
	if (!o->records)
		return 0;
	*first = o->first_tsc;
	*last = o->last_tsc;
	return 1;
}

/* The host TSC of the "# end" line: 0 without one */
int vtrace_offsets_end(struct vtrace_offsets *o, uint64_t *end_tsc)
{
	if (!o->has_end)
		return 0;
	*end_tsc = o->end_tsc;
	return 1;
}

uint64_t vtrace_offsets_records(struct vtrace_offsets *o)
{
	return o->records;
}

uint64_t vtrace_offsets_anomalies(struct vtrace_offsets *o)
{
	return o->anomalies;
}

uint64_t vtrace_offsets_tsc_khz(struct vtrace_offsets *o)
{
	return o->tsc_khz;
}

int vtrace_offsets_is_trace(struct vtrace_offsets *o)
{
	return o->trace;
}

/* The form of a tsc_offsets file read: 1, or 0 for the form before v1 (and for a trace) */
int vtrace_offsets_version(struct vtrace_offsets *o)
{
	return o->version;
}

uint64_t vtrace_offsets_gaps(struct vtrace_offsets *o)
{
	return o->gaps;
}
