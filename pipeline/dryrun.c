/* dryrun.c: see dryrun.h. */
#include "pipeline/dryrun.h"

#include "pipeline/devcg.h"
#include "base/out.h"

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
	rules = edits_rules(e, &n);
	if (n && devcg_target(o->pid, o->cgroups_path, &t, err) < 0) {
		free(rules);
		return -1;
	}
	if (n) {
		devcg_describe(&t, rules, n, &lines);
		devcg_target_free(&t);
	}
	free(rules);
	print_lines(&lines);
	edits_text_cache(e, &lines);
	print_lines(&lines);
	return 0;
}

void dry_run_print_cache(const struct cache_edits *c)
{
	struct strv dirs = { 0 }, lines = { 0 };

	for (size_t i = 0; i + 1 < c->links.n; i += 2)
		edits_line(&lines, "symlink", c->links.v[i], c->links.v[i + 1]);
	inject_cache_dirs(c, &dirs);
	for (size_t i = 0; i < dirs.n; i++)
		edits_line(&lines, "ldcache", dirs.v[i], NULL);
	strv_free(&dirs);
	for (size_t i = 0; i < c->nviews; i++)
		edits_line_procview(&lines, c->views[i].dir, &c->views[i].entries);
	print_lines(&lines);
}
