// SPDX-License-Identifier: GPL-2.0
/* print-fmt.c: the print fmt of a host trace.dat's events, checked before libtraceevent prints one. */
/*
 * libtraceevent divides as it prints an event (tep_print_event(): a print
 * fmt's "REC->a / REC->b") without looking at the divisor: a record whose
 * divisor field is 0 is a SIGFPE, in the tool.  A guest's formats are
 * checked as text before libtraceevent parses them (dump.c,
 * check_divisors()); a host trace.dat's are parsed by libtracecmd, so their
 * parsed print arguments are checked here, before any event is printed:
 * every "/" and "%" divides by a non-zero constant, as the kernel's formats
 * do (their divisors are numbers, or sizeof()s that libtraceevent turns into
 * numbers).
 *
 * An event ftrace:bprint (trace_printk()) is printed from its fields, not
 * its print fmt: libtraceevent reads the format's address from its field
 * "fmt" without looking whether the format has one: without, a SEGV.  That
 * field is checked too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "lib-local.h"
#include "vtrace-util.h"

/* Deeper print arguments are refused (the kernel's nest a few levels) */
#define PRINT_ARG_MAX_DEPTH	64

/* A number other than 0, or a cast of one */
static bool nonzero_constant(const struct tep_print_arg *a)
{
	char *end;

	if (a && a->type == TEP_PRINT_TYPE)
		return nonzero_constant(a->typecast.item);
	if (!a || a->type != TEP_PRINT_ATOM || !a->atom.atom)
		return false;
	return strtoull(a->atom.atom, &end, 0) != 0 && end != a->atom.atom;
}

/* The first division by something else than a non-zero constant in @a and its siblings */
static const struct tep_print_arg *bad_divisor(const struct tep_print_arg *a, int depth)
{
	for (; a; a = a->next) {
		const struct tep_print_arg *sub[3] = { NULL };

		if (depth > PRINT_ARG_MAX_DEPTH)
			return a;
		switch (a->type) {
		case TEP_PRINT_OP:
			if (a->op.op && (!strcmp(a->op.op, "/") || !strcmp(a->op.op, "%")) &&
			    !nonzero_constant(a->op.right))
				return a;
			sub[0] = a->op.left;
			sub[1] = a->op.right;
			break;
		case TEP_PRINT_TYPE:
			sub[0] = a->typecast.item;
			break;
		case TEP_PRINT_FLAGS:
			sub[0] = a->flags.field;
			break;
		case TEP_PRINT_SYMBOL:
			sub[0] = a->symbol.field;
			break;
		case TEP_PRINT_HEX:
		case TEP_PRINT_HEX_STR:
			sub[0] = a->hex.field;
			sub[1] = a->hex.size;
			break;
		case TEP_PRINT_INT_ARRAY:
			sub[0] = a->int_array.field;
			sub[1] = a->int_array.count;
			sub[2] = a->int_array.el_size;
			break;
		case TEP_PRINT_DYNAMIC_ARRAY:
			sub[0] = a->dynarray.index;
			break;
		case TEP_PRINT_FUNC:
			sub[0] = a->func.args;
			break;
		default:
			break;
		}
		for (int i = 0; i < 3; i++) {
			const struct tep_print_arg *bad = bad_divisor(sub[i], depth + 1);

			if (bad)
				return bad;
		}
	}
	return NULL;
}

/*
 * An ftrace:bprint event without the field "fmt" (its format's address),
 * which libtraceevent reads without looking for it.  Without "ip" or "buf"
 * it prints "[FAILED TO PARSE]".
 */
bool print_bprint_without_fmt(struct tep_event *ev)
{
	return ev->system && !strcmp(ev->system, "ftrace") && ev->name &&
	       !strcmp(ev->name, "bprint") && !tep_find_field(ev, "fmt");
}

/**
 * dat_check_print_fmts - every event of @tep divides by a non-zero constant,
 * ftrace:bprint has the field it is printed from
 * @tep:	the handle libtracecmd filled with a trace.dat's formats
 * @path:	the file, for the message
 *
 * Return: 0, or -1 with the error set, naming the event.
 */
int dat_check_print_fmts(struct tep_handle *tep, const char *path)
{
	int nr = tep ? tep_get_events_count(tep) : 0;

	for (int i = 0; i < nr; i++) {
		struct tep_event *ev = tep_get_event(tep, i);
		const struct tep_print_arg *bad, *r;
		char what[80];

		if (!ev)
			continue;
		if (print_bprint_without_fmt(ev)) {
			vtrace_set_error("%s: event ftrace:bprint (id %d): no field fmt, the address of its"
					 " format: libtraceevent would crash printing it (damaged?)",
					 path, ev->id);
			return -1;
		}
		bad = bad_divisor(ev->print_fmt.args, 0);
		if (!bad)
			continue;
		if (bad->type != TEP_PRINT_OP) {
			vtrace_set_error("%s: event %s:%s (id %d): print fmt nested more than %d"
					 " levels deep (damaged?)", path, ev->system ? ev->system : "?",
					 ev->name ? ev->name : "?", ev->id, PRINT_ARG_MAX_DEPTH);
			return -1;
		}
		r = bad->op.right;
		if (r && r->type == TEP_PRINT_FIELD && r->field.name)
			snprintf(what, sizeof(what), "the field %.64s", r->field.name);
		else if (r && r->type == TEP_PRINT_ATOM && r->atom.atom)
			snprintf(what, sizeof(what), "%.64s", r->atom.atom);
		else
			snprintf(what, sizeof(what), "an expression");
		vtrace_set_error("%s: event %s:%s (id %d): print fmt divides by %s, expected a"
				 " non-zero number: libtraceevent would divide by zero printing"
				 " it (damaged?)", path, ev->system ? ev->system : "?",
				 ev->name ? ev->name : "?", ev->id, what);
		return -1;
	}
	return 0;
}
