/* report.c: see report.h. */
#include "base/report.h"

#include "base/out.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = { "ok", "info", "problem" };

/* S with escape_bytes' escapes, whole (freed by the caller) */
static char *escaped(const char *s)
{
	size_t n = 4 * strlen(s) + 1;

	return (char *)escape_bytes(s, xmalloc(n), n);
}

void report_json_str(cJSON *o, const char *key, const char *value)
{
	/* a name in no encoding: as the text shows it */
	_cleanup_free_ char *esc = value && !utf8_valid(value) ? escaped(value) : NULL;

	if (!cJSON_AddStringToObject(o, key, esc ? esc : value))
		oom();
}

void report_init(struct report *r, bool json)
{
	*r = (struct report){ .root = cJSON_CreateObject(), .checks = cJSON_CreateArray(), .json = json };
	if (!r->root || !r->checks)
		oom();
}

/* "PREFIX" and S escaped, on a line of its own */
static void line(const char *prefix, const char *s)
{
	_cleanup_free_ char *esc = escaped(s);

	out("%s%s\n", prefix, esc);
}

void report_vadd(struct report *r, enum report_status st, const char *check, const char *fix, const char *todo,
		 const char *fmt, va_list ap)
{
	cJSON *c = cJSON_CreateObject();
	char *detail;

	if (!c || vasprintf(&detail, fmt, ap) < 0)
		oom();
	cJSON_AddStringToObject(c, "check", check);
	cJSON_AddStringToObject(c, "status", status_names[st]);
	report_json_str(c, "detail", detail);
	if (fix)
		report_json_str(c, "fix", fix);
	if (todo)
		report_json_str(c, "do", todo);
	cJSON_AddItemToArray(r->checks, c);
	r->problems += st == REPORT_PROBLEM;
	if (!r->json) {
		char head[64];

		snprintf(head, sizeof(head), "%-8s %s: ", st == REPORT_PROBLEM ? "PROBLEM" : status_names[st], check);
		line(head, detail);
		if (fix)
			line("         fix: ", fix);
		if (todo)
			line("         do: ", todo);
	}
	free(detail);
}

void report_add(struct report *r, enum report_status st, const char *check, const char *fix, const char *todo,
		const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_vadd(r, st, check, fix, todo, fmt, ap);
	va_end(ap);
}

int report_finish(struct report *r, int status, const char *ok_words, const char *not_ok_words)
{
	if (status == 0 && r->problems)
		status = EXIT_FAIL;
	if (r->json) {
		char *t;

		cJSON_AddBoolToObject(r->root, "ok", status == 0);
		cJSON_AddNumberToObject(r->root, "problems", r->problems);
		cJSON_AddItemToObject(r->root, "checks", r->checks);
		r->checks = NULL;
		if (!(t = cJSON_Print(r->root)))
			oom();
		out("%s\n", t);
		free(t);
	} else if (r->problems) {
		out("%d problem%s: %s\n", r->problems, r->problems == 1 ? "" : "s", not_ok_words);
	} else {
		out("0 problems: %s\n", status == 0 ? ok_words : "not all checked (the error above)");
	}
	report_free(r);
	return status;
}

void report_free(struct report *r)
{
	cJSON_Delete(r->checks);
	cJSON_Delete(r->root);
	memset(r, 0, sizeof(*r));
}
