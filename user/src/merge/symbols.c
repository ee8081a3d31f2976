// SPDX-License-Identifier: GPL-2.0
/* symbols.c: resolve kernel addresses through a vmlinux with elfutils (libdwfl). */
/*
 * By default libtraceevent resolves the addresses of function-tracer and
 * stack-trace events ("%ps") through the machine's kallsyms.  With
 * --vmlinux, a function resolver registered on the machine's tep handle
 * asks elfutils instead, which adds the source file and line when the
 * vmlinux has debug info:
 *
 *	schedule (kernel/sched/core.c:6634)
 *
 * KASLR: the running kernel's addresses are the vmlinux's plus a bias,
 * taken from "_text" in the machine's kallsyms and in the vmlinux.
 * Addresses the vmlinux does not cover (modules) fall back to kallsyms,
 * kept in a second tep handle since the resolver replaces the first one's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>
#include <event-parse.h>

#include "merge-local.h"
#include "vtrace-util.h"

/*
 * libtraceevent may look up several addresses before printing any (the
 * function plugin: ip, then parent_ip), so each name must outlive the next
 * lookup: names are kept per address, as many as distinct addresses seen.
 */
struct sym_cache {
	uint64_t	addr;
	uint64_t	start;
	char		*name;
};

struct symbols {
	Dwfl			*dwfl;
	Dwfl_Module		*mod;
	struct tep_handle	*kallsyms;	/* fallback */
	uint64_t		bias;		/* running address - vmlinux address */
	struct sym_cache	*cache;		/* addresses resolved so far */
	size_t			cache_size;
	size_t			cache_used;
	char			name[512];
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo		= dwfl_standard_find_debuginfo,
	.section_address	= dwfl_offline_section_address,
};

/* Address of "_text" in a kallsyms text, 0 if absent */
static uint64_t kallsyms_text(const char *text)
{
	const char *p = text;

	while (p && *p) {
		unsigned long long addr;
		char type, name[64];

		if (sscanf(p, "%llx %c %63s", &addr, &type, name) == 3 && !strcmp(name, "_text"))
			return addr;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

static uint64_t vmlinux_text(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 0; i < n; i++) {
		GElf_Addr addr;
		GElf_Sym sym;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (name && !strcmp(name, "_text"))
			return addr;
	}
	return 0;
}

static struct sym_cache *cache_slot(struct symbols *sy, uint64_t addr)
{
	size_t i = (addr * 0x9e3779b97f4a7c15ULL) >> 40;

	for (;; i++) {
		struct sym_cache *c = &sy->cache[i & (sy->cache_size - 1)];

		if (!c->name || c->addr == addr)
			return c;
	}
}

static int cache_grow(struct symbols *sy)
{
	struct sym_cache *old = sy->cache;
	size_t old_size = sy->cache_size;

	sy->cache_size = old_size ? old_size * 2 : 1024;
	sy->cache = calloc(sy->cache_size, sizeof(*sy->cache));
	if (!sy->cache) {
		sy->cache = old;
		sy->cache_size = old_size;
		return -1;
	}
	for (size_t i = 0; i < old_size; i++)
		if (old[i].name)
			*cache_slot(sy, old[i].addr) = old[i];
	free(old);
	return 0;
}

static char *resolve_uncached(struct symbols *sy, unsigned long long *addrp, char **modp);

/* tep_func_resolver_t: *addrp in, function start out */
static char *resolve(void *priv, unsigned long long *addrp, char **modp)
{
	struct symbols *sy = priv;
	struct sym_cache *c;
	uint64_t addr = *addrp;
	char *name;

	*modp = NULL;
	if ((sy->cache_used + 1) * 2 > sy->cache_size && cache_grow(sy))
		return resolve_uncached(sy, addrp, modp);
	c = cache_slot(sy, addr);
	if (c->name) {
		*addrp = c->start;
		return c->name;
	}
	name = resolve_uncached(sy, addrp, modp);
	if (!name)
		return NULL;
	c->name = strdup(name);
	if (!c->name)
		return name;
	c->addr = addr;
	c->start = *addrp;
	sy->cache_used++;
	return c->name;
}

static char *resolve_uncached(struct symbols *sy, unsigned long long *addrp, char **modp)
{
	GElf_Addr addr = *addrp - sy->bias, off;
	const char *name, *file;
	GElf_Sym sym;
	Dwfl_Line *line;
	int lineno;

	*modp = NULL;
	name = dwfl_module_addrinfo(sy->mod, addr, &off, &sym, NULL, NULL, NULL);
	/* the nearest symbol below is not enough: the address must be inside it */
	if (name && (sym.st_size ? off >= sym.st_size : off != 0))
		name = NULL;
	if (!name) {
		struct tep_handle *k = sy->kallsyms;
		const char *kname = k ? tep_find_function(k, *addrp) : NULL;

		if (!kname)
			return NULL;
		*addrp = tep_find_function_address(k, *addrp);
		snprintf(sy->name, sizeof(sy->name), "%s", kname);
		return sy->name;
	}
	line = dwfl_module_getsrc(sy->mod, addr);
	file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (file)
		snprintf(sy->name, sizeof(sy->name), "%s (%s:%d)", name, file, lineno);
	else
		snprintf(sy->name, sizeof(sy->name), "%s", name);
	*addrp = addr - off + sy->bias;
	return sy->name;
}

static int open_vmlinux(struct symbols *sy, const char *path)
{
	sy->dwfl = dwfl_begin(&offline_callbacks);
	if (!sy->dwfl)
		goto error;
	sy->mod = dwfl_report_offline(sy->dwfl, "vmlinux", path, -1);
	if (!sy->mod)
		goto error;
	dwfl_report_end(sy->dwfl, NULL, NULL);
	if (dwfl_module_getsymtab(sy->mod) <= 0) {
		vtrace_set_error("--vmlinux %s: no symbol table", path);
		return -1;
	}
	return 0;
error:
	vtrace_set_error("--vmlinux %s: %s", path, dwfl_errmsg(-1));
	return -1;
}

int symbols_attach(struct machine *m, const char *vmlinux)
{
	const char *text = m->dump ? vtrace_dump_kallsyms(m->dump) : NULL;
	struct symbols *sy;
	uint64_t ktext, vtext;

	if (m->symbols) {
		vtrace_set_error("--vmlinux %s: %s has one already", vmlinux, m->name);
		return -1;
	}
	sy = calloc(1, sizeof(*sy));
	if (!sy)
		return -1;
	m->symbols = sy;
	if (open_vmlinux(sy, vmlinux))
		return -1;
	ktext = text ? kallsyms_text(text) : 0;
	vtext = vmlinux_text(sy->mod);
	if (ktext && vtext)
		sy->bias = ktext - vtext;
	else
		vtrace_warn("--vmlinux %s: no _text in %s's kallsyms or in the vmlinux: assuming"
			    " no KASLR offset", vmlinux, m->name);
	if (text) {
		sy->kallsyms = tep_alloc();
		if (sy->kallsyms)
			tep_parse_kallsyms(sy->kallsyms, text);
	}
	return tep_set_function_resolver(m->tep, resolve, sy);
}

void symbols_detach(struct machine *m)
{
	struct symbols *sy = m->symbols;

	if (!sy)
		return;
	if (m->tep)
		tep_reset_function_resolver(m->tep);
	if (sy->dwfl)
		dwfl_end(sy->dwfl);
	if (sy->kallsyms)
		tep_free(sy->kallsyms);
	for (size_t i = 0; i < sy->cache_size; i++)
		free(sy->cache[i].name);
	free(sy->cache);
	free(sy);
	m->symbols = NULL;
}
