// SPDX-License-Identifier: GPL-2.0
/* qemu-ports.c: a running QEMU's vtrace ports (from its command line) and vCPU threads. */
/*
 * The ports are virtio-serial ports named PREFIX.ctl and PREFIX.cpuK
 * (vtrace qemu-args, or libvirt's <channel> elements); each names a
 * chardev, whose backend says where its host end is:
 *
 *   -chardev socket,id=vtctl,path=/run/g1.sock,server=on,wait=off
 *   -device virtserialport,bus=vser0.0,chardev=vtctl,name=vtrace.ctl
 *   -chardev file,id=vtc0,path=g1/cpu0
 *   -device virtserialport,bus=vser0.0,chardev=vtc0,name=vtrace.cpu0
 *
 * libvirt writes -device as JSON ({"driver":"virtserialport",...,
 * "chardev":"charchannel1",...,"name":"vtrace.cpu0"}).  QEMU escapes a
 * comma in a value as ",,"; relative paths are QEMU's, from its working
 * folder (/proc/PID/cwd).  libvirt opens the files and the socket itself
 * and passes them: -add-fd set=N,fd=FD with path=/dev/fdset/N, and
 * -chardev socket,fd=FD.  The socket stays QEMU's fd FD: its path is in
 * /proc/net/unix.  The files do not: QEMU copies an -add-fd's fd to
 * another number and closes FD (which a later file may get), so a
 * /dev/fdset/N path is left as it is, for the domain's status XML to
 * name (lib/libvirt.c).
 *
 * A vCPU thread of a running VM sits in ioctl(fd, KVM_RUN) most of the
 * time (while the guest runs, or halts): /proc/PID/task/TID/syscall names
 * the fd, and /proc/PID/fd/FD links to "anon_inode:kvm-vcpu:ID", ID the
 * vCPU's vcpu_id.  QEMU names the threads "CPU N/KVM" only with -name
 * ...,debug-threads=on; that name gives N, the vCPU's index.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vtrace-capture.h"
#include "vtrace-util.h"
#include "vtrace-vcpu.h"

#define QEMU_MAX_PORTS	1024
#define SYS_ioctl_x86_64	16
#define PF_USER_WORKER		0x00004000	/* include/linux/sched.h */
#define PF_KTHREAD		0x00200000
#define KVM_RUN_IOCTL		0xae80

/* chardevs: id -> backend and path */
struct chardev {
	char	*id;
	char	*backend;
	char	*path;
	char	*fd;
};

struct port {
	char	*chardev;
	char	*name;
};

struct parse {
	struct chardev	*cd;
	int		nr_cd;
	struct port	*pt;
	int		nr_pt;
};

void vtrace_qemu_ports_free(struct vtrace_qemu_ports *p)
{
	for (int i = 0; i < p->nr_cpus; i++)
		free(p->cpu[i]);
	free(p->cpu);
	free(p->name);
	free(p->prefix);
	free(p->ctl);
	free(p->home);
	memset(p, 0, sizeof(*p));
}

static void parse_free(struct parse *ps)
{
	for (int i = 0; i < ps->nr_cd; i++) {
		free(ps->cd[i].id);
		free(ps->cd[i].backend);
		free(ps->cd[i].path);
		free(ps->cd[i].fd);
	}
	for (int i = 0; i < ps->nr_pt; i++) {
		free(ps->pt[i].chardev);
		free(ps->pt[i].name);
	}
	free(ps->cd);
	free(ps->pt);
}

/*
 * The value of KEY= in a QEMU option string "first,key=value,..." (",,"
 * a comma), malloc'ed; with @key NULL the first item.  NULL when absent.
 */
static char *opt_get(const char *opts, const char *key)
{
	size_t klen = key ? strlen(key) : 0;
	const char *p = opts;
	int first = 1;

	while (*p) {
		const char *q = p;
		char *val, *v;

		while (*q && !(*q == ',' && q[1] != ',')) {
			if (*q == ',')
				q++;
			q++;
		}
		if ((first && !key) ||
		    (key && !strncmp(p, key, klen) && p[klen] == '=')) {
			const char *s = key ? p + klen + 1 : p;

			val = v = malloc(q - s + 1);
			if (!val)
				return NULL;
			for (; s < q; s++) {
				*v++ = *s;
				if (*s == ',')
					s++;
			}
			*v = '\0';
			return val;
		}
		first = 0;
		p = *q ? q + 1 : q;
	}
	return NULL;
}

/* The string value of "key" in a flat JSON object (libvirt's -device), malloc'ed */
static char *json_get(const char *json, const char *key)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p != '"')
		return NULL;
	e = strchr(++p, '"');
	return e ? strndup(p, e - p) : NULL;
}

static int add_chardev(struct parse *ps, const char *val)
{
	struct chardev *n = realloc(ps->cd, (ps->nr_cd + 1) * sizeof(*n));

	if (!n)
		return -1;
	ps->cd = n;
	n[ps->nr_cd] = (struct chardev){
		.id = opt_get(val, "id"),
		.backend = opt_get(val, NULL),
		.path = opt_get(val, "path"),
		.fd = opt_get(val, "fd"),
	};
	ps->nr_cd++;
	return 0;
}

static int add_device(struct parse *ps, const char *val)
{
	char *driver = val[0] == '{' ? json_get(val, "driver") : opt_get(val, NULL);
	struct port *n;
	int is_port = driver && !strcmp(driver, "virtserialport");

	free(driver);
	if (!is_port)
		return 0;
	n = realloc(ps->pt, (ps->nr_pt + 1) * sizeof(*n));
	if (!n)
		return -1;
	ps->pt = n;
	if (val[0] == '{')
		n[ps->nr_pt] = (struct port){ json_get(val, "chardev"), json_get(val, "name") };
	else
		n[ps->nr_pt] = (struct port){ opt_get(val, "chardev"), opt_get(val, "name") };
	ps->nr_pt++;
	return 0;
}

static const struct chardev *find_chardev(const struct parse *ps, const char *id)
{
	for (int i = 0; id && i < ps->nr_cd; i++)
		if (ps->cd[i].id && !strcmp(ps->cd[i].id, id))
			return &ps->cd[i];
	return NULL;
}

/* @path as QEMU opened it: relative to its working folder @cwd; an fd set's file */
static char *qemu_path(const char *path, const char *cwd)
{
	char *p;

	if (!strncmp(path, "/dev/fdset/", 11))
		return strdup(path);
	if (path[0] == '/' || !cwd)
		return strdup(path);
	return asprintf(&p, "%s/%s", cwd, path) < 0 ? NULL : p;
}

/* -name guest=NAME,debug-threads=on or -name NAME,... */
static char *guest_name(const char *val)
{
	char *n = opt_get(val, "guest");

	if (n)
		return n;
	n = opt_get(val, NULL);
	if (n && strchr(n, '=')) {
		free(n);
		return NULL;
	}
	return n;
}

/* Port PREFIX.cpuK: its file at p->cpu[K] */
static int add_cpu_port(struct vtrace_qemu_ports *p, const char *name,
			const struct chardev *cd, const char *cwd)
{
	const char *k = name + strlen(p->prefix) + 4;
	char *end;
	long cpu = strtol(k, &end, 10);

	if (end == k || *end || cpu < 0 || cpu >= QEMU_MAX_PORTS)
		return 0;
	if (!cd || !cd->backend || strcmp(cd->backend, "file") || !cd->path) {
		vtrace_set_error("port %s: its host end is not a file (-chardev file,path=...)",
				 name);
		return -1;
	}
	if (cpu >= p->nr_cpus) {
		char **n = realloc(p->cpu, (cpu + 1) * sizeof(*n));

		if (!n)
			return -1;
		memset(n + p->nr_cpus, 0, (cpu + 1 - p->nr_cpus) * sizeof(*n));
		p->cpu = n;
		p->nr_cpus = cpu + 1;
	}
	free(p->cpu[cpu]);
	p->cpu[cpu] = qemu_path(cd->path, cwd);
	return p->cpu[cpu] ? 0 : -1;
}

/* The ctl port (PREFIX.ctl) and its data ports, from the parsed options */
static int find_ports(const struct parse *ps, const char *cwd, struct vtrace_qemu_ports *p)
{
	const struct chardev *cd;
	size_t len;

	for (int i = 0; i < ps->nr_pt && !p->prefix; i++) {
		const char *n = ps->pt[i].name;

		len = n ? strlen(n) : 0;
		if (len > 4 && !strcmp(n + len - 4, ".ctl")) {
			p->prefix = strndup(n, len - 4);
			cd = find_chardev(ps, ps->pt[i].chardev);
			if (cd && cd->backend && !strcmp(cd->backend, "socket") && cd->path)
				p->ctl = qemu_path(cd->path, cwd);
			else if (cd && cd->backend && !strcmp(cd->backend, "socket") && cd->fd)
				p->ctl_fd = atoi(cd->fd);
			p->ctl_is_file = cd && cd->backend && !strcmp(cd->backend, "file");
		}
	}
	if (!p->prefix) {
		vtrace_set_error("no vtrace ports (no virtserialport named PREFIX.ctl)");
		return -1;
	}
	len = strlen(p->prefix);
	for (int i = 0; i < ps->nr_pt; i++) {
		const char *n = ps->pt[i].name;

		if (n && !strncmp(n, p->prefix, len) && !strncmp(n + len, ".cpu", 4) &&
		    add_cpu_port(p, n, find_chardev(ps, ps->pt[i].chardev), cwd))
			return -1;
	}
	return 0;
}

static int parse_ports(char *const *argv, int argc, const char *cwd,
		       struct vtrace_qemu_ports *p)
{
	struct parse ps = { 0 };
	int ret = 0;

	memset(p, 0, sizeof(*p));
	p->ctl_fd = -1;
	for (int i = 0; i + 1 < argc && !ret; i++) {
		const char *o = argv[i];

		if (o[0] == '-' && o[1] == '-')
			o++;
		if (!strcmp(o, "-chardev"))
			ret = add_chardev(&ps, argv[++i]);
		else if (!strcmp(o, "-device"))
			ret = add_device(&ps, argv[++i]);
		else if (!strcmp(o, "-name") && !p->name)
			p->name = guest_name(argv[++i]);
	}
	if (!ret)
		ret = find_ports(&ps, cwd, p);
	parse_free(&ps);
	if (ret)
		vtrace_qemu_ports_free(p);
	return ret;
}

/**
 * vtrace_qemu_ports_parse - the vtrace ports of QEMU command line @argv
 * @argv:	its words (/proc/PID/cmdline)
 * @argc:	how many
 * @cwd:	QEMU's working folder, for relative paths (NULL: leave them)
 * @p:		filled; free with vtrace_qemu_ports_free()
 *
 * Returns 0, or -1 with the error set (no PREFIX.ctl port; a data port
 * whose host end is not a file).  A ctl port that is not a unix socket
 * leaves @p->ctl NULL (@p->ctl_is_file for a file).
 */
int vtrace_qemu_ports_parse(char *const *argv, int argc, const char *cwd,
			    struct vtrace_qemu_ports *p)
{
	return parse_ports(argv, argc, cwd, p);
}

/* A /proc file read whole (st_size says 0 there), NUL-terminated; *len its bytes */
static char *read_proc(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1), *nb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0 || !buf)
		goto error;
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += r;
		if (n == cap) {
			nb = realloc(buf, cap * 2 + 1);
			if (!nb)
				goto error;
			buf = nb;
			cap *= 2;
		}
	}
	if (r < 0)
		goto error;
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
error:
	vtrace_set_error("%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* $HOME in process @pid's environment, malloc'ed, or NULL */
static char *env_home(int pid)
{
	char path[64], *env, *home = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	env = read_proc(path, &len);
	for (size_t i = 0; env && i < len; i += strlen(env + i) + 1)
		if (!strncmp(env + i, "HOME=", 5)) {
			home = strdup(env + i + 5);
			break;
		}
	free(env);
	return home;
}

/*
 * The path of the unix socket QEMU @pid listens on as its fd @fd (libvirt
 * opens a channel's socket itself and passes it: -chardev socket,fd=N):
 * /proc/PID/fd/N is "socket:[INODE]", /proc/net/unix names INODE's path.
 */
static char *socket_path(int pid, int fd)
{
	char path[64], link[64], line[PATH_MAX + 128], *found = NULL;
	unsigned long ino, i;
	ssize_t l;
	FILE *f;
	int off;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	l = readlink(path, link, sizeof(link) - 1);
	if (l < 0)
		return NULL;
	link[l] = '\0';
	if (sscanf(link, "socket:[%lu]", &ino) != 1)
		return NULL;
	f = fopen("/proc/net/unix", "r");
	while (f && !found && fgets(line, sizeof(line), f)) {
		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %n", &i, &off) == 1 && i == ino &&
		    line[off] == '/') {
			line[strcspn(line, "\n")] = '\0';
			found = strdup(line + off);
		}
	}
	if (f)
		fclose(f);
	return found;
}

/**
 * vtrace_qemu_ports_of_pid - the vtrace ports of running QEMU @pid
 * @pid:	QEMU's pid
 * @p:		filled, as vtrace_qemu_ports_parse()
 *
 * Returns 0, or -1 with the error set.
 */
int vtrace_qemu_ports_of_pid(int pid, struct vtrace_qemu_ports *p)
{
	char path[64], cwd[PATH_MAX], **argv = NULL, *text;
	size_t len;
	ssize_t cl;
	int argc = 0, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	text = read_proc(path, &len);
	if (!text)
		return -1;
	for (size_t i = 0; i < len; i += strlen(text + i) + 1) {
		char **n = realloc(argv, (argc + 1) * sizeof(*n));

		if (!n)
			goto out;
		argv = n;
		argv[argc++] = text + i;
	}
	snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
	cl = readlink(path, cwd, sizeof(cwd) - 1);
	if (cl >= 0)
		cwd[cl] = '\0';
	ret = parse_ports(argv, argc, cl >= 0 ? cwd : NULL, p);
	if (!ret && !p->ctl && p->ctl_fd >= 0)
		p->ctl = socket_path(pid, p->ctl_fd);
	if (!ret)
		p->home = env_home(pid);
out:
	free(argv);
	free(text);
	return ret;
}

/* Whether process @pid is a QEMU with vtrace ports whose ctl is a socket */
int vtrace_qemu_has_ports(int pid)
{
	struct vtrace_qemu_ports p;
	int ret;

	if (vtrace_qemu_ports_of_pid(pid, &p))
		return 0;
	ret = p.ctl != NULL;
	vtrace_qemu_ports_free(&p);
	return ret;
}

/* Thread @tid's vcpu_id from its KVM_RUN ioctl, -1 when not in one now */
static long vcpu_of_syscall(int pid, int tid)
{
	char path[96], link[128], *text;
	unsigned long nr, fd, req;
	size_t len;
	ssize_t l;
	long id = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	text = read_proc(path, &len);
	if (!text)
		return -1;
	if (sscanf(text, "%lu 0x%lx 0x%lx", &nr, &fd, &req) == 3 && nr == SYS_ioctl_x86_64 &&
	    req == KVM_RUN_IOCTL) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%lu", pid, fd);
		l = readlink(path, link, sizeof(link) - 1);
		if (l > 0) {
			link[l] = '\0';
			if (!strncmp(link, "anon_inode:kvm-vcpu:", 20))
				id = strtol(link + 20, NULL, 10);
		}
	}
	free(text);
	return id;
}

/* Thread @tid's N of its name "CPU N/KVM", -1 when not so named */
static int vcpu_of_comm(int pid, int tid)
{
	char path[96], *text;
	size_t len;
	int idx;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	text = read_proc(path, &len);
	if (!text)
		return -1;
	len = strcspn(text, "\n");
	idx = vtrace_vcpu_idx_of(text, len);
	free(text);
	return idx;
}

static int add_vcpu(struct vtrace_capture_vcpu **v, int *nr, long id, int idx, int tid)
{
	struct vtrace_capture_vcpu *n;

	for (int i = 0; i < *nr; i++)
		if ((*v)[i].tid == tid) {
			if (id >= 0)
				(*v)[i].id = id;
			return 0;
		}
	n = realloc(*v, (*nr + 1) * sizeof(*n));
	if (!n)
		return -1;
	*v = n;
	n[(*nr)++] = (struct vtrace_capture_vcpu){ .id = id >= 0 ? id : (uint32_t)idx,
						   .idx = idx, .tid = tid };
	return 0;
}

/* Whether thread @tid is a kernel worker in QEMU's thread group (kvm-nx-lpage-recovery) */
static bool kernel_worker(int pid, int tid)
{
	char path[96], *text, *p;
	unsigned long flags = 0;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	text = read_proc(path, &len);
	if (!text)
		return true;
	p = strrchr(text, ')');		/* after the comm, which may hold blanks */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		flags = PF_KTHREAD;
	free(text);
	return flags & (PF_KTHREAD | PF_USER_WORKER);
}

/* One look at every thread of @pid; *left: vCPU ids not yet seen in KVM_RUN */
static int scan_threads(int pid, struct vtrace_capture_vcpu **v, int *nr, bool *seen,
			int nr_seen)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d) {
		vtrace_set_error("%s: %s", path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name), idx;
		long id;

		if (tid <= 0 || kernel_worker(pid, tid))
			continue;
		id = vcpu_of_syscall(pid, tid);
		idx = vcpu_of_comm(pid, tid);
		if ((id >= 0 || idx >= 0) && add_vcpu(v, nr, id, idx, tid)) {
			closedir(d);
			return -1;
		}
		if (id >= 0 && id < nr_seen)
			seen[id] = true;
	}
	closedir(d);
	return 0;
}

/* The vcpu_ids of @pid's kvm-vcpu fds: *max is the largest + 1, 0 for none */
static int vcpu_fds(int pid, bool **seen, int *max)
{
	char path[64], fdp[320], link[128];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	*max = 0;
	*seen = NULL;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		ssize_t l;
		long id;

		snprintf(fdp, sizeof(fdp), "%s/%s", path, de->d_name);
		l = readlink(fdp, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (strncmp(link, "anon_inode:kvm-vcpu:", 20))
			continue;
		id = strtol(link + 20, NULL, 10);
		if (id >= 0 && id < 65536 && id + 1 > *max)
			*max = id + 1;
		n++;
	}
	closedir(d);
	*seen = calloc(*max + 1, sizeof(**seen));
	return n;
}

/*
 * KVM's debugfs: a VM of process PID is the folder PID-FD, each vCPU a
 * folder vcpuID in it whose file "pid" holds the thread that runs it.
 * Returns 0 (none found: *nr 0), or -1.
 */
static int vcpus_debugfs(int pid, struct vtrace_capture_vcpu **v, int *nr)
{
	const char *kvm = getenv("VTRACE_KVM_DEBUGFS") ?: "/sys/kernel/debug/kvm";
	char pat[PATH_MAX], *text;
	glob_t gl;
	size_t len;
	int ret = 0;

	snprintf(pat, sizeof(pat), "%s/%d-*/vcpu*/pid", kvm, pid);
	if (glob(pat, 0, NULL, &gl))
		return 0;
	for (size_t i = 0; i < gl.gl_pathc && !ret; i++) {
		const char *vd = strstr(gl.gl_pathv[i], "/vcpu");
		int tid, idx;

		text = read_proc(gl.gl_pathv[i], &len);
		tid = text ? atoi(text) : 0;
		free(text);
		if (tid <= 0 || !vd)
			continue;
		idx = vcpu_of_comm(pid, tid);
		ret = add_vcpu(v, nr, strtol(vd + 5, NULL, 10), idx, tid);
	}
	globfree(&gl);
	return ret;
}

/**
 * vtrace_qemu_vcpus - the vCPU threads of running QEMU @pid
 * @pid:	QEMU's pid
 * @vcpus:	filled with one entry per vCPU thread found, malloc'ed
 * @nr:		how many
 *
 * KVM's debugfs names each vCPU's thread (vcpuID/pid).  Without it (not
 * mounted), a thread is a vCPU's when it is in KVM_RUN on a kvm-vcpu fd
 * (its id from that fd) or is named "CPU N/KVM".  A thread is seen in KVM_RUN only when
 * it is not on a CPU at that moment (a busy guest's rarely is): the threads
 * are looked at every 10 ms until each of the VM's kvm-vcpu fds was seen
 * (at most 3 s).  A vCPU thread never seen so is known by its name only,
 * its id taken as N.  Returns 0, or -1 with the error set.
 */
int vtrace_qemu_vcpus(int pid, struct vtrace_capture_vcpu **vcpus, int *nr)
{
	bool *seen = NULL;
	int max, want, look, ret = 0;

	*vcpus = NULL;
	*nr = 0;
	if (vcpus_debugfs(pid, vcpus, nr) == 0 && *nr)
		return 0;
	free(*vcpus);
	*vcpus = NULL;
	*nr = 0;
	want = vcpu_fds(pid, &seen, &max);
	for (look = 0; look < 300 && !ret; look++) {
		int got = 0;

		ret = scan_threads(pid, vcpus, nr, seen, max);
		for (int i = 0; i < max; i++)
			got += seen[i];
		if (got >= want && look >= 2)
			break;
		usleep(10000);
	}
	free(seen);
	return ret;
}
