// SPDX-License-Identifier: GPL-2.0
/* test-proto.c: control-stream round trips and every rejected message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vtrace-proto.h"
#include "ktap.h"

/* A temporary file holding @len bytes of @buf, read back through a reader */
static struct vtrace_proto *reader_for(const void *buf, size_t len)
{
	char path[] = "/tmp/vtrace-test-proto-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		exit(2);
	unlink(path);
	lseek(fd, 0, SEEK_SET);
	return vtrace_proto_open(fd, "ctl");
}

struct meta_info_msg {
	struct vtrace_msg_hdr	hdr;
	struct vtrace_meta_info	mi;
	struct vtrace_cpu_info	ci[2];
};

static void fill_meta_info(struct meta_info_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->hdr = (struct vtrace_msg_hdr){ VTRACE_MAGIC, 1, VTRACE_MSG_META_INFO, 0,
					  sizeof(m->mi) + sizeof(m->ci), 1 };
	m->mi.tsc_khz = 2000000;
	m->mi.nr_cpus = 2;
	m->mi.page_size = 4096;
	m->mi.long_size = 8;
	strcpy(m->mi.clock, "x86-tsc");
	m->ci[0] = (struct vtrace_cpu_info){ 0, 4, VTRACE_CPU_HAS_PORT, 0 };
	m->ci[1] = (struct vtrace_cpu_info){ 1, 6, VTRACE_CPU_HAS_PORT, 0 };
}

/* Expect the reader to refuse @m with an error containing @want */
static void expect_reject(const char *name, const void *m, size_t len, const char *want)
{
	struct vtrace_proto *p = reader_for(m, len);
	struct vtrace_msg msg;
	int ret = vtrace_proto_read(p, &msg);

	ktap_check(ret == -1 && strstr(vtrace_proto_error(p), want), name,
		   "ret %d, error \"%s\", expected one containing \"%s\"", ret,
		   vtrace_proto_error(p), want);
	vtrace_proto_close(p);
}

static void test_round_trip(void)
{
	char path[] = "/tmp/vtrace-test-proto-XXXXXX";
	int fd = mkstemp(path);
	struct vtrace_meta_file mf = { .kind = VTRACE_META_HEADER_PAGE, .name_len = 16,
				       .data_len = 5 };
	char tail[21] = "header_page";
	const struct vtrace_meta_file *rmf;
	const struct vtrace_hello *hello;
	struct vtrace_proto *p;
	struct vtrace_msg msg;
	const char *name;
	const void *data;
	int ok;

	memcpy(tail + 16, "abcde", 5);
	unlink(path);
	ok = !vtrace_msg_write_hello(fd, 1) &&
	     !vtrace_msg_write2(fd, VTRACE_MSG_META_FILE, 2, &mf, sizeof(mf), tail, 21) &&
	     !vtrace_msg_write(fd, 77, 3, "future", 6) &&
	     !vtrace_msg_write_set_events(fd, 4, "sched:*\n");
	lseek(fd, 0, SEEK_SET);
	p = vtrace_proto_open(fd, "ctl");
	ok = ok && vtrace_proto_read(p, &msg) == 1 && !vtrace_msg_hello(&msg, &hello) &&
	     hello->min_version == 1 && hello->max_version == VTRACE_PROTO_VERSION;
	vtrace_msg_release(&msg);
	ktap_check(ok, "proto_hello_round_trip", "%s", vtrace_proto_error(p));

	ok = vtrace_proto_read(p, &msg) == 1 && !vtrace_msg_meta_file(&msg, &rmf, &name, &data) &&
	     !strcmp(name, "header_page") && rmf->data_len == 5 && !memcmp(data, "abcde", 5) &&
	     msg.offset == sizeof(struct vtrace_msg_hdr) + sizeof(struct vtrace_hello);
	vtrace_msg_release(&msg);
	ktap_check(ok, "proto_meta_file_round_trip", "%s", vtrace_proto_error(p));

	ok = vtrace_proto_read(p, &msg) == 1 && msg.hdr.type == 77 && msg.hdr.len == 6;
	vtrace_msg_release(&msg);
	ktap_check(ok, "proto_unknown_type_passed_to_caller", "%s", vtrace_proto_error(p));

	ok = vtrace_proto_read(p, &msg) == 1 && msg.hdr.type == VTRACE_MSG_SET_EVENTS &&
	     msg.hdr.seq == 4;
	vtrace_msg_release(&msg);
	ok = ok && vtrace_proto_read(p, &msg) == 0;
	ktap_check(ok, "proto_clean_end_of_stream", "%s", vtrace_proto_error(p));
	vtrace_proto_close(p);
	close(fd);
}

static void test_meta_info(void)
{
	const struct vtrace_meta_info *mi;
	const struct vtrace_cpu_info *ci;
	struct meta_info_msg m, bad;
	struct vtrace_proto *p;
	struct vtrace_msg msg;
	int ok;

	fill_meta_info(&m);
	p = reader_for(&m, sizeof(m));
	ok = vtrace_proto_read(p, &msg) == 1 && !vtrace_msg_meta_info(&msg, &mi, &ci) &&
	     mi->nr_cpus == 2 && ci[1].apic_id == 6;
	vtrace_msg_release(&msg);
	ktap_check(ok, "proto_meta_info_accepted", "%s", vtrace_proto_error(p));
	vtrace_proto_close(p);

	bad = m;
	bad.mi.page_size = 3000;
	expect_reject("proto_rejects_bad_page_size", &bad, sizeof(bad), "page_size 3000");
	bad = m;
	bad.mi.nr_cpus = 3;
	expect_reject("proto_rejects_cpu_count_mismatch", &bad, sizeof(bad), "expected 288 for 3 CPUs");
	bad = m;
	bad.ci[1].reserved = 1;
	expect_reject("proto_rejects_nonzero_reserved", &bad, sizeof(bad), "reserved");
	bad = m;
	memset(bad.mi.release, 'x', sizeof(bad.mi.release));
	expect_reject("proto_rejects_unterminated_string", &bad, sizeof(bad),
		      "release is not NUL-terminated");
	bad = m;
	bad.ci[0].cpu = 9;
	expect_reject("proto_rejects_cpu_out_of_range", &bad, sizeof(bad), "cpu_info[0].cpu = 9");
}

static void test_headers(void)
{
	struct meta_info_msg m, bad;
	char twice[2 * sizeof(m)];

	fill_meta_info(&m);
	bad = m;
	bad.hdr.magic = 0x12345678;
	expect_reject("proto_rejects_bad_magic", &bad, sizeof(bad), "byte 0: bad magic");
	bad = m;
	bad.hdr.version = 9;
	expect_reject("proto_rejects_unknown_version", &bad, sizeof(bad), "version 9");
	bad = m;
	bad.hdr.flags = 4;
	expect_reject("proto_rejects_header_flags", &bad, sizeof(bad), "flags 0x4");
	bad = m;
	bad.hdr.len = VTRACE_MSG_MAX_PAYLOAD + 1;
	expect_reject("proto_rejects_huge_payload", &bad, sizeof(bad), "expected at most");
	expect_reject("proto_rejects_truncated_header", &m, 10, "truncated message header");
	memcpy(twice, &m, sizeof(m));
	memcpy(twice + sizeof(m), &m, sizeof(m));
	{
		struct vtrace_proto *p = reader_for(twice, sizeof(twice) - 8);
		struct vtrace_msg msg;
		int ok = vtrace_proto_read(p, &msg) == 1;

		vtrace_msg_release(&msg);
		ok = ok && vtrace_proto_read(p, &msg) == -1 &&
		     strstr(vtrace_proto_error(p), "ctl: byte 296: truncated META_INFO");
		ktap_check(ok, "proto_truncation_names_byte_offset", "%s", vtrace_proto_error(p));
		vtrace_proto_close(p);
	}
}

static void test_small_messages(void)
{
	struct {
		struct vtrace_msg_hdr hdr;
		struct vtrace_meta_file mf;
		char name[8];
	} mf = { { VTRACE_MAGIC, 1, VTRACE_MSG_META_FILE, 0, sizeof(mf.mf) + 8, 1 },
		 { VTRACE_META_KALLSYMS, 8, 0, 0 }, "kallsym" };
	struct {
		struct vtrace_msg_hdr hdr;
		struct vtrace_status st;
		struct vtrace_cpu_stats cs;
	} eos = { { VTRACE_MAGIC, 1, VTRACE_MSG_EOS, 0, sizeof(eos.st) + sizeof(eos.cs), 1 },
		  { 0, 1, 1, 0, 1, 0 }, { 0 } };
	/* START with 4 payload bytes: the header and those bytes in one buffer */
	struct {
		struct vtrace_msg_hdr hdr;
		char payload[4];
	} start = { { VTRACE_MAGIC, 1, VTRACE_MSG_START, 0, 4, 1 }, "" };
	typeof(mf) bad_mf;
	typeof(eos) bad_eos;

	bad_mf = mf;
	memset(bad_mf.name, 'n', 8);
	expect_reject("proto_rejects_unterminated_file_name", &bad_mf, sizeof(bad_mf),
		      "name is not NUL-terminated");
	bad_mf = mf;
	bad_mf.mf.data_len = 100;
	expect_reject("proto_rejects_file_length_mismatch", &bad_mf, sizeof(bad_mf),
		      "data_len 100");
	bad_mf = mf;
	bad_mf.mf.name_len = 5;
	expect_reject("proto_rejects_unaligned_name_len", &bad_mf, sizeof(bad_mf), "name_len 5");
	bad_eos = eos;
	bad_eos.st.nr_cpus = 0;
	expect_reject("proto_rejects_eos_without_cpus", &bad_eos, sizeof(bad_eos), "nr_cpus 0");
	bad_eos = eos;
	bad_eos.st.state = 7;
	expect_reject("proto_rejects_unknown_state", &bad_eos, sizeof(bad_eos), "state 7");
	expect_reject("proto_rejects_payload_on_start", &start, sizeof(start),
		      "payload of 4 bytes, expected 0");
}

/* EOS flags: what the guest's stop could not turn off; unknown bits refused */
static void test_status_flags(void)
{
	struct {
		struct vtrace_msg_hdr	hdr;
		struct vtrace_status	st;
		struct vtrace_cpu_stats	cs;
	} m, bad;
	const struct vtrace_status *st;
	const struct vtrace_cpu_stats *cs;
	struct vtrace_proto *p;
	struct vtrace_msg msg;
	int ok;

	memset(&m, 0, sizeof(m));
	m.hdr = (struct vtrace_msg_hdr){ VTRACE_MAGIC, 1, VTRACE_MSG_EOS, 0,
					 sizeof(m.st) + sizeof(m.cs), 1 };
	m.st = (struct vtrace_status){ .nr_cpus = 1, .nr_ports = 1, .session = 3,
				       .flags = VTRACE_STATUS_TRACING_ON | VTRACE_STATUS_EVENTS_ON };
	p = reader_for(&m, sizeof(m));
	ok = vtrace_proto_read(p, &msg) == 1 && !vtrace_msg_status(&msg, &st, &cs) &&
	     st->flags == (VTRACE_STATUS_TRACING_ON | VTRACE_STATUS_EVENTS_ON) && st->session == 3;
	vtrace_msg_release(&msg);
	ktap_check(ok, "proto_eos_flags_accepted", "%s", vtrace_proto_error(p));
	vtrace_proto_close(p);
	bad = m;
	bad.st.flags = 1U << 2;
	expect_reject("proto_rejects_unknown_status_flags", &bad, sizeof(bad),
		      "EOS: reserved field flags (unknown bits) is not zero");
}

int main(void)
{
	printf("KTAP version 1\n1..%d\n", 24);
	test_round_trip();
	test_meta_info();
	test_headers();
	test_small_messages();
	test_status_flags();
	return ktap_finish();
}
