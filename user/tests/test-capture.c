// SPDX-License-Identifier: GPL-2.0
/* test-capture.c: capture manifests (written, read, refused) and QEMU command lines' vtrace ports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vtrace-capture.h"
#include "vtrace-util.h"
#include "ktap.h"

static char dir[] = "/tmp/vtrace-test-capture-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		exit(2);
}

static void test_roundtrip(void)
{
	struct vtrace_capture_vcpu v[2] = { { 0, 0, 301 }, { 2, 1, 302 } };
	struct vtrace_capture_guest g[2] = {
		{ .name = "g1", .dir = "g1", .pid = 956, .events = "sched:sched_switch",
		  .status = "complete", .lost = 3, .bytes = 8192, .vcpus = v, .nr_vcpus = 2 },
		{ .name = "g2", .dir = "g2", .pid = 963, .status = "died: QEMU pid 963 ended" },
	};
	struct vtrace_capture c = {
		.dir = dir, .vtrace = "0.1.0", .start = "2026-12-04T09:00:00Z",
		.stop = "2026-12-04T09:00:20Z", .host = "host.dat", .host_events = "vtrace_host",
		.offsets = "tsc_offsets", .tsc_khz = 2596131, .status = "partial: guest g2 died",
		.guests = g, .nr_guests = 2,
	};
	struct vtrace_capture *r;
	char **specs = NULL, path[512];
	int n;

	put("host.dat", "x");
	ktap_check(vtrace_capture_write(&c) == 0, "manifest_written", "%s", vtrace_last_error());
	snprintf(path, sizeof(path), "%s/manifest.tmp", dir);
	ktap_check(access(path, F_OK) != 0, "manifest_tmp_renamed", "%s left", path);
	r = vtrace_capture_read(dir);
	ktap_check(r && r->version == 1 && r->tsc_khz == 2596131 && !strcmp(r->host, "host.dat") &&
		   !strcmp(r->offsets, "tsc_offsets") && r->nr_guests == 2 &&
		   !strcmp(r->status, "partial: guest g2 died"), "manifest_read_back",
		   "%s", r ? r->status : vtrace_last_error());
	ktap_check(r && r->guests[0].pid == 956 && r->guests[0].nr_vcpus == 2 &&
		   r->guests[0].vcpus[1].id == 2 && r->guests[0].vcpus[1].idx == 1 &&
		   r->guests[0].vcpus[1].tid == 302 && r->guests[0].lost == 3 &&
		   r->guests[0].bytes == 8192 && !strcmp(r->guests[1].status,
							 "died: QEMU pid 963 ended"),
		   "manifest_guests_read_back", "guest fields differ");
	vtrace_set_quiet(true);
	n = r ? vtrace_capture_guests(r, &specs) : -1;
	snprintf(path, sizeof(path), "g1=%s/g1,pid=956", dir);
	ktap_check(n == 1 && !strcmp(specs[0], path) && !specs[1], "capture_guests_complete_only",
		   "%d: %s", n, specs && specs[0] ? specs[0] : "-");
	for (int i = 0; specs && specs[i]; i++)
		free(specs[i]);
	free(specs);
	vtrace_capture_free(r);
}

/* A manifest of @text must be refused with @want in the error */
static void refused(const char *name, const char *text, const char *want)
{
	struct vtrace_capture *r;

	put("manifest", text);
	r = vtrace_capture_read(dir);
	ktap_check(!r && strstr(vtrace_last_error(), want), name, "%s",
		   r ? "accepted" : vtrace_last_error());
	vtrace_capture_free(r);
}

#define HEAD "vtrace-capture 1\nhost host.dat\n"

static void test_refusals(void)
{
	struct vtrace_capture *r;
	char path[512];

	refused("manifest_cut_short", HEAD "status complete\n", "cut short");
	refused("manifest_newer_version", "vtrace-capture 2\nhost host.dat\nstatus complete\nend\n",
		"format version 2");
	refused("manifest_not_one", "hello\n", "expected \"vtrace-capture 1\"");
	refused("manifest_failed_status", HEAD "status failed: trace-cmd\nend\n", "failed");
	refused("manifest_no_status", HEAD "end\n", "no \"status\" line");
	refused("manifest_bad_line", HEAD "tsc-khz many\nstatus complete\nend\n",
		"line 3: tsc-khz");
	refused("manifest_path_outside", "vtrace-capture 1\nhost ../etc/passwd\nstatus complete\nend\n",
		"line 2: host");
	refused("manifest_guest_key_first", HEAD "guest-pid 3\nstatus complete\nend\n",
		"line 3: guest-pid");
	refused("manifest_guest_no_dir", HEAD "guest g\nguest-status complete\nstatus complete\nend\n",
		"guest g: no guest-dir line");
	refused("manifest_after_end", HEAD "status complete\nend\nstatus complete\n",
		"after the \"end\" line");
	refused("manifest_host_missing", "vtrace-capture 1\nhost nothere.dat\nstatus complete\nend\n",
		"nothere.dat");
	put("manifest", HEAD "future-key what\nstatus complete\nend\n");
	r = vtrace_capture_read(dir);
	ktap_check(r != NULL, "manifest_unknown_key_skipped", "%s", vtrace_last_error());
	vtrace_capture_free(r);
	snprintf(path, sizeof(path), "%s/manifest", dir);
	unlink(path);
	r = vtrace_capture_read(dir);
	ktap_check(!r && strstr(vtrace_last_error(), "no manifest"), "no_manifest_refused", "%s",
		   vtrace_last_error());
	vtrace_capture_free(r);
}

static int parse_line(const char *line, const char *cwd, struct vtrace_qemu_ports *p)
{
	char *copy = strdup(line), *argv[64], *save = NULL;
	int argc = 0, ret;

	for (char *t = strtok_r(copy, " ", &save); t && argc < 64; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	ret = vtrace_qemu_ports_parse(argv, argc, cwd, p);
	free(copy);
	return ret;
}

static void test_cmdlines(void)
{
	struct vtrace_qemu_ports p;
	int ret;

	/* a kernel developer's: no -name, no -pidfile, paths relative to QEMU's folder */
	ret = parse_line("qemu-system-x86_64 -enable-kvm -smp 2 -m 1G -kernel bzImage"
			 " -device virtio-serial-pci,id=vs -chardev socket,path=vt.sock,server=on,"
			 "wait=off,id=c -device virtserialport,chardev=c,name=vtrace.ctl"
			 " -chardev file,id=d0,path=out/cpu0 -device virtserialport,chardev=d0,"
			 "name=vtrace.cpu0 -chardev file,id=d1,path=/abs/cpu1"
			 " -device virtserialport,bus=vs.0,chardev=d1,name=vtrace.cpu1", "/home/k", &p);
	ktap_check(!ret && !p.name && !strcmp(p.ctl, "/home/k/vt.sock") && p.nr_cpus == 2 &&
		   !strcmp(p.cpu[0], "/home/k/out/cpu0") && !strcmp(p.cpu[1], "/abs/cpu1"),
		   "cmdline_plain_kernel_developer", "%s", ret ? vtrace_last_error() : p.ctl);
	vtrace_qemu_ports_free(&p);

	/* vtrace qemu-args --agent's, with a comma in a path (",,") */
	ret = parse_line("qemu -name g1,debug-threads=on -device virtio-serial-pci,id=vtrace0,"
			 "max_ports=3 -chardev socket,id=vtrace-ctl,path=/v/a,,b/ctl.sock,"
			 "server=on,wait=off -device virtserialport,bus=vtrace0.0,chardev=vtrace-ctl,"
			 "name=vtrace.ctl -chardev file,id=vtrace-cpu0,path=/v/cpu0 -device "
			 "virtserialport,bus=vtrace0.0,chardev=vtrace-cpu0,name=vtrace.cpu0", NULL, &p);
	ktap_check(!ret && !strcmp(p.name, "g1") && !strcmp(p.ctl, "/v/a,b/ctl.sock") &&
		   p.nr_cpus == 1 && !strcmp(p.prefix, "vtrace"), "cmdline_qemu_args_agent",
		   "%s", ret ? vtrace_last_error() : p.ctl);
	vtrace_qemu_ports_free(&p);

	/* libvirt's: -name guest=, JSON -device, the socket passed as an fd */
	ret = parse_line("/usr/bin/qemu-system-x86_64 -name guest=lv1,debug-threads=on"
			 " -chardev socket,id=charchannel0,fd=33,server=on,wait=off"
			 " -device {\"driver\":\"virtserialport\",\"bus\":\"virtio-serial0.0\","
			 "\"nr\":1,\"chardev\":\"charchannel0\",\"id\":\"channel0\","
			 "\"name\":\"vt.ctl\"} -chardev file,id=charchannel1,path=/l/cpu0"
			 " -device {\"driver\":\"virtserialport\",\"bus\":\"virtio-serial0.0\","
			 "\"nr\":2,\"chardev\":\"charchannel1\",\"id\":\"channel1\","
			 "\"name\":\"vt.cpu0\"}", NULL, &p);
	ktap_check(!ret && !strcmp(p.name, "lv1") && !p.ctl && p.ctl_fd == 33 &&
		   !strcmp(p.prefix, "vt") && p.nr_cpus == 1 && !strcmp(p.cpu[0], "/l/cpu0"),
		   "cmdline_libvirt_json_fd", "%s", ret ? vtrace_last_error() : "fields differ");
	vtrace_qemu_ports_free(&p);

	ret = parse_line("qemu -chardev file,id=c,path=/x/ctl -device virtserialport,chardev=c,"
			 "name=vtrace.ctl", NULL, &p);
	ktap_check(!ret && !p.ctl && p.ctl_is_file, "cmdline_file_mode_ctl_no_socket",
		   "ret %d", ret);
	vtrace_qemu_ports_free(&p);

	ret = parse_line("qemu -enable-kvm -device virtio-serial-pci -device virtconsole", NULL, &p);
	ktap_check(ret && strstr(vtrace_last_error(), "no vtrace ports"), "cmdline_no_ports_refused",
		   "%s", vtrace_last_error());

	ret = parse_line("qemu -chardev socket,id=c,path=/s,server=on -device virtserialport,"
			 "chardev=c,name=vtrace.ctl -chardev socket,id=d,path=/d -device "
			 "virtserialport,chardev=d,name=vtrace.cpu0", NULL, &p);
	ktap_check(ret && strstr(vtrace_last_error(), "vtrace.cpu0: its host end is not a file"),
		   "cmdline_data_port_not_file_refused", "%s", vtrace_last_error());
}

int main(void)
{
	if (!mkdtemp(dir))
		return 2;
	printf("KTAP version 1\n1..24\n");
	test_roundtrip();
	test_refusals();
	test_cmdlines();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			return 2;
	}
	return ktap_finish();
}
