// SPDX-License-Identifier: GPL-2.0
/* vtrace_guest: the metadata sent on vtrace.ctl when a session starts. */
/*
 * META_INFO: who the guest is (SMBIOS UUID, release, hostname), how to read
 * its pages (page size: the sub-buffer size, clock, TSC kHz) and each
 * CPU's initial APIC id,
 * which KVM uses as the vCPU id on the host.
 *
 * META_FILE, in this order, each the file's bytes exactly as the guest
 * kernel reads them:
 *   header_page                        (the instance's events/header_page
 *                                       since v6.8: it says the sub-buffer
 *                                       size; the top-level one before)
 *   header_event                       (events/header_event)
 *   ftrace/print, ftrace/bprint, ...   (events/ftrace/EVENT/format)
 *   SYSTEM/EVENT                       (format of every enabled event,
 *                                       from the instance's set_event)
 *   printk_formats, saved_cmdlines, kallsyms (/proc/kallsyms, optional)
 *
 * Kernel addresses (printk_formats, kallsyms) leave the guest only as an
 * unprivileged reader of the guest would see them: /proc/kallsyms is
 * opened with the credentials of a reader without capabilities, so the
 * kernel's own rule (kallsyms_show_value(): kptr_restrict 0 and
 * perf_event_paranoid at most 1) decides whether it prints the addresses
 * or zeros; printk_formats, which tracefs prints with addresses to root
 * alone, is sent only when that rule shows them.  A confidential guest
 * sends neither file unless trust_host is set.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
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
		.page_size = vtg.subbuf_size,
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
		if (ci[cpu].apic_id == VTG_NO_APIC_ID)
			pr_warn_once("cpu%u has no APIC id: META_INFO says 0x%x\n",
				     cpu, VTG_NO_APIC_ID);
		ci[cpu].flags = (vtg_port_present(&vtg.cpus[cpu].port) ? VTRACE_CPU_HAS_PORT : 0) |
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

/* An integer sysctl of /proc/sys/kernel, or @fallback when it cannot be read */
static int vtg_sysctl(const char *name, int fallback)
{
	char path[64], buf[16];
	int v;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	if (vtg_read_text(path, buf, sizeof(buf)) || kstrtoint(strim(buf), 10, &v))
		return fallback;
	return v;
}

/*
 * The address policy of the guest for what it sends: true when an
 * unprivileged reader of /proc/kallsyms sees the addresses, as
 * kallsyms_show_value() decides for a reader without CAP_SYSLOG
 * (kptr_restrict 0 and perf_event_paranoid 1 or less).  Unreadable:
 * hidden.
 */
static bool vtg_addresses_shown(void)
{
	return vtg_sysctl("kptr_restrict", 2) == 0 && vtg_sysctl("perf_event_paranoid", 3) <= 1;
}

/*
 * Open @path as a reader without capabilities would: /proc/kallsyms looks
 * at the opener's credentials (CAP_SYSLOG), and the control thread has
 * all of them, which would bypass the guest's kptr_restrict.
 */
static struct file *vtg_open_unprivileged(const char *path)
{
	const struct cred *old;
	struct cred *cred = prepare_creds();
	struct file *f;

	if (!cred)
		return ERR_PTR(-ENOMEM);
	cap_clear(cred->cap_effective);
	cap_clear(cred->cap_permitted);
	cap_clear(cred->cap_inheritable);
	cap_clear(cred->cap_ambient);
	old = override_creds(cred);
	f = vtg_open_path(path, O_RDONLY);
	revert_creds(old);
	put_cred(cred);
	return f;
}

/* Open a file of the metadata: a tracefs path, an absolute path, or kallsyms */
static struct file *vtg_meta_open(u32 kind, const char *path)
{
	if (kind == VTRACE_META_KALLSYMS)
		return vtg_open_unprivileged(path);
	if (path[0] == '/')
		return vtg_open_path(path, O_RDONLY);
	return vtg_open_tracefs(path, O_RDONLY);
}

/*
 * Read a file and send it.  Only -ENOMEM and a host too slow to take it
 * (-ETIMEDOUT, the host end connected) are returned: a file that cannot
 * be read or a host that is not there costs that file only.
 */
static int vtg_meta_path(u32 kind, const char *name, const char *path)
{
	struct file *f;
	size_t len;
	void *buf;
	int ret;

	f = vtg_meta_open(kind, path);
	if (IS_ERR(f)) {
		pr_warn_ratelimited("metadata %s: %ld\n", path, PTR_ERR(f));
		return 0;
	}
	buf = vtg_read_whole(f, &len);
	vtg_close(f);
	if (IS_ERR(buf)) {
		pr_warn_ratelimited("metadata %s: %ld\n", path, PTR_ERR(buf));
		return 0;
	}
	ret = vtg_meta_file_send(kind, name, buf, len);
	kvfree(buf);
	if (vtg.ctl_slow)
		return -ETIMEDOUT;
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

/*
 * header_page describes the sub-buffer (its data field is the sub-buffer
 * size less the header): per instance since v6.8, where the top-level file
 * describes the top-level buffer's sub-buffers instead.
 */
static int vtg_meta_header_page(void)
{
	struct file *f = vtg_open_instance("events/header_page", O_RDONLY);

	if (IS_ERR(f))
		return vtg_meta_path(VTRACE_META_HEADER_PAGE, "header_page", "events/header_page");
	vtg_close(f);
	return vtg_meta_path(VTRACE_META_HEADER_PAGE, "header_page",
			     "instances/" VTG_INSTANCE "/events/header_page");
}

static int vtg_meta_files(void)
{
	char path[64], name[32];
	unsigned int i;
	int ret;

	ret = vtg_meta_header_page();
	if (!ret)
		ret = vtg_meta_path(VTRACE_META_HEADER_EVENT, "header_event", "events/header_event");
	for (i = 0; !ret && i < ARRAY_SIZE(vtg_ftrace_events); i++) {
		snprintf(name, sizeof(name), "ftrace/%s", vtg_ftrace_events[i]);
		snprintf(path, sizeof(path), "events/%s/format", name);
		ret = vtg_meta_path(VTRACE_META_FTRACE_FORMAT, name, path);
	}
	if (!ret)
		ret = vtg_meta_events();
	/*
	 * kernel addresses: not for a host a confidential guest does not
	 * trust, nor when the guest hides them from unprivileged readers
	 */
	if (!ret && !vtg.host_untrusted && vtg_addresses_shown())
		ret = vtg_meta_path(VTRACE_META_PRINTK_FORMATS, "printk_formats", "printk_formats");
	else if (!ret && !vtg.host_untrusted)
		pr_info_once("printk_formats not sent: the guest hides kernel addresses from unprivileged readers (kptr_restrict, perf_event_paranoid)\n");
	if (!ret)
		ret = vtg_meta_path(VTRACE_META_CMDLINES, "saved_cmdlines", "saved_cmdlines");
	if (!ret && vtg_send_kallsyms && !vtg.host_untrusted)
		ret = vtg_meta_path(VTRACE_META_KALLSYMS, "kallsyms", "/proc/kallsyms");
	return ret;
}

/**
 * vtg_meta_send() - send a start's metadata on vtrace.ctl, in order
 *
 * All of it within VTG_META_TIMEOUTS * port_timeout_ms: a host that is
 * connected but reads too slowly fails the start with -ETIMEDOUT (the
 * session would be useless to it), instead of holding the control thread
 * for as long as it pleases.  A host end that is not connected only loses
 * the messages.  Control thread.
 *
 * Return: 0, -ENOMEM or -ETIMEDOUT.
 */
int vtg_meta_send(void)
{
	int ret;

	vtg.meta_files = 0;
	if (!vtg_port_present(&vtg.ctl))
		return 0;
	/* a start gives a host that stalled the port before a new chance */
	vtg_port_unstall(&vtg.ctl);
	vtg.ctl_slow = false;
	vtg.ctl_deadline = jiffies + msecs_to_jiffies(READ_ONCE(vtg_port_timeout_ms)) *
				     VTG_META_TIMEOUTS;
	vtg.ctl_deadline_set = true;
	ret = vtg_meta_info();
	if (ret != -ENOMEM && !vtg.ctl_slow)
		ret = vtg_meta_files();
	vtg.ctl_deadline_set = false;
	if (vtg.ctl_slow) {
		pr_warn("the host does not take the metadata within %u ms: start refused\n",
			VTG_META_TIMEOUTS * vtg_port_timeout_ms);
		return -ETIMEDOUT;
	}
	return ret == -ENOMEM ? ret : 0;
}
