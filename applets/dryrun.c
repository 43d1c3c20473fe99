/* dryrun.c: see dryrun.h. */
#include "applets/dryrun.h"

#include "applets/applet.h"
#include "common/devcg.h"

#include <cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int dry_run_format(const char *format, bool *json)
{
	if (strcmp(format, "json") != 0 && strcmp(format, "text") != 0)
		return -1;
	*json = strcmp(format, "json") == 0;
	return 0;
}

static void print_lines(struct strv *lines)
{
	for (size_t i = 0; i < lines->n; i++)
		out("%s\n", lines->v[i]);
	strv_free(lines);
}

int dry_run_print(const struct edits *e, const struct inject_opts *o, bool json, struct oerr *err)
{
	struct strv lines = { 0 };
	struct devcg_target t;
	struct devcg_rule *rules;
	size_t n;

	if (json) {
		cJSON *j = edits_json(e);
		char *text = cJSON_Print(j);

		cJSON_Delete(j);
		if (!text)
			oom();
		out("%s\n", text);
		free(text);
		return 0;
	}
	edits_text_mounts(e, &lines);
	print_lines(&lines);
	if (devcg_target(o->pid, o->cgroups_path, &t, err) < 0)
		return -1;
	rules = edits_rules(e, &n);
	devcg_describe(&t, rules, n, &lines);
	free(rules);
	devcg_target_free(&t);
	print_lines(&lines);
	edits_text_cache(e, &lines);
	print_lines(&lines);
	return 0;
}

void dry_run_print_cache(const struct cache_edits *c)
{
	static char a[PATH_MAX * 4 + 1], b[PATH_MAX * 4 + 1];
	struct strv dirs = { 0 };

	for (size_t i = 0; i + 1 < c->links.n; i += 2)
		out("symlink %s %s\n", escape_bytes(c->links.v[i], a, sizeof(a)),
		    escape_bytes(c->links.v[i + 1], b, sizeof(b)));
	for (size_t i = 0; i < c->libraries.n; i++)
		edits_libdir_add(&dirs, c->libraries.v[i]);
	for (size_t i = 0; i < dirs.n; i++)
		out("ldcache %s\n", escape_bytes(dirs.v[i], a, sizeof(a)));
	strv_free(&dirs);
	for (size_t i = 0; i < c->proc.n; i++) {
		escape_bytes(c->proc.v[i] + 1, a, sizeof(a));
		if (c->proc.v[i][0] == 'v')
			out("%sprocview %s", i ? "\n" : "", a);
		else if (c->proc.v[i][0] == 'e')
			out(" %s", a);
	}
	if (c->proc.n)
		out("\n");
}
