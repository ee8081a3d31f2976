// SPDX-License-Identifier: GPL-2.0
/* fuzz-dump.c: a whole dump folder (ctl + cpu0), opened and read to the last event. */
/*
 * Input layout (seeds: fuzz/seeds.py):
 *
 *   u32 LE  ctl_len, top bit set = open with VTRACE_DUMP_SKIP_BAD
 *   ctl_len bytes   DIR/ctl   (all the rest if the input is shorter)
 *   the rest        DIR/cpu0  (absent when empty)
 *
 * vtrace_dump_open() parses the control stream and its metadata through
 * libtraceevent; every CPU reader of the dump is then drained with
 * vtrace_cpu_reader_next() and each event printed as vtrace-merge prints
 * it (tep_print_event() with the guest's own print formats).
 */
#include <event-parse.h>
#include <trace-seq.h>

#include "fuzz.h"
#include "vtrace-dump.h"

#define MAX_CPUS	4	/* readers opened; only cpu0 has data */
#define MAX_EVENTS	4096	/* per input, to keep executions fast */

static void print_event(struct tep_handle *tep, struct tep_record *rec, struct trace_seq *s)
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

static void read_cpu(struct vtrace_dump *d, unsigned int cpu, struct trace_seq *s)
{
	struct vtrace_cpu_reader *r = vtrace_cpu_reader_open(d, cpu);
	const struct vtrace_cpu_counts *c;
	struct tep_record *rec;
	int filler, ret, n = 0;

	if (!r)
		return;
	while (n++ < MAX_EVENTS && (ret = vtrace_cpu_reader_next(r, &rec, &filler)) > 0) {
		fuzz_touch(rec->data, rec->size);
		print_event(vtrace_dump_tep(d), rec, s);
	}
	c = vtrace_cpu_reader_counts(r);
	fuzz_sink += c->events + c->missed + c->bad_pages + c->truncated;
	vtrace_cpu_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct vtrace_meta_info *mi;
	struct vtrace_dump *d;
	struct trace_seq s;
	uint32_t ctl_len;
	unsigned int flags = VTRACE_DUMP_NO_PLUGINS | fuzz_dump_flags();
	const uint8_t *input = data;
	size_t input_size = size;

	if (size < 4)
		return 0;
	ctl_len = fuzz_le32(data);
	if (ctl_len >> 31)
		flags |= VTRACE_DUMP_SKIP_BAD;
	ctl_len &= 0x7fffffff;
	data += 4;
	size -= 4;
	if (ctl_len > size)
		ctl_len = size;
	fuzz_write("ctl", data, ctl_len);
	if (size > ctl_len)
		fuzz_write("cpu0", data + ctl_len, size - ctl_len);
	else
		fuzz_unlink("cpu0");

	d = vtrace_dump_open(fuzz_dir(), flags);
	if (!d) {
		fuzz_note_contained(input, input_size);
		return 0;
	}
	mi = vtrace_dump_info(d);
	fuzz_sink += vtrace_dump_has_eos(d) + vtrace_dump_qemu_pid(d);
	if (vtrace_dump_kallsyms(d))
		fuzz_sink += strlen(vtrace_dump_kallsyms(d));
	trace_seq_init(&s);
	for (unsigned int cpu = 0; cpu < mi->nr_cpus && cpu < MAX_CPUS; cpu++) {
		const struct vtrace_cpu_stats *eos = vtrace_dump_eos(d, cpu);

		fuzz_sink += vtrace_dump_cpu(d, cpu)->apic_id + (eos ? eos->events_sent : 0);
		read_cpu(d, cpu, &s);
	}
	trace_seq_destroy(&s);
	vtrace_dump_close(d);
	return 0;
}
