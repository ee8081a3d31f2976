// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: the metadata sent on vtrace.ctl when a session starts. */
/*
 * META_INFO: who the guest is (SMBIOS UUID, release, hostname), how to read
 * its pages (page size, clock, TSC kHz) and each CPU's initial APIC id,
 * which KVM uses as the vCPU id on the host.
 *
 * META_FILE, in this order, each the file's bytes exactly as the guest
 * kernel reads them:
 *   header_page, header_event          (events/header_*)
 *   ftrace/print, ftrace/bprint, ...   (events/ftrace/EVENT/format)
 *   SYSTEM/EVENT                       (format of every enabled event,
 *                                       from the instance's set_event)
 *   printk_formats, saved_cmdlines, kallsyms (/proc/kallsyms, optional)
 */
#include <linux/dmi.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include <linux/vmalloc.h>
#include <asm/msr.h>
#include <asm/processor.h>
#include <asm/tsc.h>

#include "compat.h"
#include "vtg.h"

static const char * const vtg_ftrace_events[] = { "print", "bprint", "bputs", "function" };

static int vtg_meta_info(void)
{
	struct vtrace_meta_info mi = {
		.tsc_khz = tsc_khz,
		.session = vtg.session,
		.nr_cpus = nr_cpu_ids,
		.page_size = PAGE_SIZE,
		.long_size = sizeof(long),
	};
	struct vtrace_cpu_info *ci;
	const char *uuid = dmi_get_system_info(DMI_PRODUCT_UUID);
	unsigned int cpu;
	int ret;

	ci = kvcalloc(nr_cpu_ids, sizeof(*ci), GFP_KERNEL);
	if (!ci)
		return -ENOMEM;
	strscpy(mi.uuid, uuid ? uuid : "", sizeof(mi.uuid));
	strscpy(mi.release, init_utsname()->release, sizeof(mi.release));
	strscpy(mi.hostname, init_utsname()->nodename, sizeof(mi.hostname));
	strscpy(mi.clock, "x86-tsc", sizeof(mi.clock));
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		ci[cpu].cpu = cpu;
		ci[cpu].apic_id = vtg_cpu_apic_id(cpu);
		ci[cpu].flags = (vtg.cpus[cpu].port ? VTRACE_CPU_HAS_PORT : 0) |
				(cpu_online(cpu) ? VTRACE_CPU_ONLINE : 0);
	}
	mi.start_tsc = rdtsc_ordered();
	ret = vtg_send(VTRACE_MSG_META_INFO, &mi, sizeof(mi), ci, nr_cpu_ids * sizeof(*ci),
		       NULL, 0);
	kvfree(ci);
	return ret;
}

/* One META_FILE: struct vtrace_meta_file, the name padded to 8, the data */
static int vtg_meta_file_send(u32 kind, const char *name, const void *data, size_t len)
{
	size_t nlen = ALIGN(strlen(name) + 1, 8);
	struct vtrace_meta_file mf = {
		.kind = kind,
		.name_len = nlen,
		.data_len = len,
	};
	char *pname = kzalloc(nlen, GFP_KERNEL);
	int ret;

	if (!pname)
		return -ENOMEM;
	strcpy(pname, name);
	ret = vtg_send(VTRACE_MSG_META_FILE, &mf, sizeof(mf), pname, nlen, data, len);
	kfree(pname);
	if (!ret)
		vtg.meta_files++;
	return ret;
}

/* Read a file (a tracefs path, or an absolute path) and send it */
static int vtg_meta_path(u32 kind, const char *name, const char *path)
{
	struct file *f;
	size_t len;
	void *buf;
	int ret;

	f = path[0] == '/' ? vtg_open_path(path, O_RDONLY) : vtg_open_tracefs(path, O_RDONLY);
	if (IS_ERR(f)) {
		pr_warn_ratelimited("vtrace_guest: metadata %s: %ld\n", path, PTR_ERR(f));
		return 0;
	}
	buf = vtg_read_whole(f, &len);
	vtg_close(f);
	if (IS_ERR(buf)) {
		pr_warn_ratelimited("vtrace_guest: metadata %s: %ld\n", path, PTR_ERR(buf));
		return 0;
	}
	ret = vtg_meta_file_send(kind, name, buf, len);
	kvfree(buf);
	return ret == -ENOMEM ? ret : 0;
}

/* "system:event" -> META_FILE of instances/vtrace/events/system/event/format */
static int vtg_meta_event(char *line)
{
	char *colon = strchr(line, ':');
	char path[160], name[128];

	if (!colon || strchr(line, '/') || strlen(line) >= sizeof(name))
		return 0;
	*colon = '\0';
	snprintf(name, sizeof(name), "%s/%s", line, colon + 1);
	snprintf(path, sizeof(path), "instances/%s/events/%s/format", VTG_INSTANCE, name);
	return vtg_meta_path(VTRACE_META_EVENT_FORMAT, name, path);
}

static int vtg_meta_events(void)
{
	char *buf, *p, *line;
	size_t len;
	int ret = 0;

	buf = vtg_read_instance("set_event", &len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	p = buf;
	while (!ret && (line = strsep(&p, "\n")))
		if (*line)
			ret = vtg_meta_event(line);
	kvfree(buf);
	return ret;
}

/* Everything, in order; only local failures (-ENOMEM) are returned */
int vtg_meta_send(void)
{
	char path[64], name[32];
	unsigned int i;
	int ret;

	vtg.meta_files = 0;
	if (!vtg.ctl)
		return 0;
	ret = vtg_meta_info();
	if (ret == -ENOMEM)
		return ret;
	ret = vtg_meta_path(VTRACE_META_HEADER_PAGE, "header_page", "events/header_page");
	if (!ret)
		ret = vtg_meta_path(VTRACE_META_HEADER_EVENT, "header_event", "events/header_event");
	for (i = 0; !ret && i < ARRAY_SIZE(vtg_ftrace_events); i++) {
		snprintf(name, sizeof(name), "ftrace/%s", vtg_ftrace_events[i]);
		snprintf(path, sizeof(path), "events/%s/format", name);
		ret = vtg_meta_path(VTRACE_META_FTRACE_FORMAT, name, path);
	}
	if (!ret)
		ret = vtg_meta_events();
	if (!ret)
		ret = vtg_meta_path(VTRACE_META_PRINTK_FORMATS, "printk_formats", "printk_formats");
	if (!ret)
		ret = vtg_meta_path(VTRACE_META_CMDLINES, "saved_cmdlines", "saved_cmdlines");
	if (!ret && vtg_send_kallsyms)
		ret = vtg_meta_path(VTRACE_META_KALLSYMS, "kallsyms", "/proc/kallsyms");
	return ret;
}
