/* The engine drivers' registry and what they share: see engine.h */
#include "engines/engine.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct engine_ops *const engine_drivers[] = { &engine_hooksdir, &engine_docker, &engine_containerd, &engine_nri,
						    NULL };

_Static_assert(sizeof(engine_drivers) / sizeof(*engine_drivers) - 1 <= ENGINE_DRIVER_MAX, "engine_run slots");

char *engine_runtime_words(const char *list, unsigned *rts)
{
	_cleanup_free_ char *copy = xstrdup(list);
	char *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned rt = engine_runtime_word(t);

		if (!rt)
			return xstrdup(t);
		*rts |= rt;
	}
	return NULL;
}

unsigned engine_driver_rts(const struct engine_ops *d)
{
	unsigned rts = 0;

	for (const struct engine_word *w = d->words; w && w->word; w++)
		rts |= w->rt;
	return rts;
}

unsigned engine_runtime_word(const char *word)
{
	for (size_t i = 0; engine_drivers[i]; i++)
		for (const struct engine_word *w = engine_drivers[i]->words; w && w->word; w++)
			if (strcmp(word, w->word) == 0)
				return w->rt;
	return 0;
}

const struct engine_ops *engine_merging(enum journal_merge m)
{
	for (size_t i = 0; m != JOURNAL_WHOLE && engine_drivers[i]; i++)
		if (engine_drivers[i]->merge == m)
			return engine_drivers[i];
	return NULL;
}

enum journal_merge engine_merge_of(const cJSON *e)
{
	/* a record of an ocidec that kept no kind: the two files it merged */
	return journal_merge_of(e, DOCKER_JSON, CONTAINERD_TOML);
}

const char *engine_state_runtime_name(const cJSON *state)
{
	const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(state, "runtime_name"));

	return n && *n ? n : "ocidec";
}

void engine_plan_add(struct engine_plan *p, char *path, char *data, size_t len, mode_t mode, enum journal_merge m)
{
	p->a = xreallocarray(p->a, p->n + 1, sizeof(*p->a));
	p->a[p->n++] = (struct engine_action){ .path = path, .data = data, .len = len, .mode = mode, .merge = m };
}

void engine_plan_link(struct engine_plan *p, char *path, const char *text)
{
	engine_plan_add(p, path, NULL, 0, 0777, JOURNAL_WHOLE);
	p->a[p->n - 1].link = xstrdup(text);
}

int engine_read_link(int root, const char *path, char *text, size_t size)
{
	_cleanup_free_ char *dir = path_dir(path);
	_cleanup_close_ int dfd = root_open(root, dir, O_PATH | O_DIRECTORY);
	const char *base = strrchr(path, '/') + 1;
	ssize_t l;

	if (dfd < 0)
		return 0;
	l = readlinkat(dfd, base, text, size - 1);
	if (l >= 0) {
		text[l] = '\0';
		return 1;
	}
	return errno == ENOENT ? 0 : 2;
}

bool engine_record(struct engine_plan *p, cJSON *state)
{
	const cJSON *pending = cJSON_GetObjectItem(state, "pending");
	bool any = false;

	for (size_t i = 0; engine_drivers[i]; i++) {
		const char *d = engine_drivers[i]->facts < 0 ? NULL :
			cJSON_GetStringValue(cJSON_GetObjectItem(pending, engine(engine_drivers[i]->facts)->name));

		p->run[i].pending = d != NULL;
		p->run[i].pending_restart = d && strcmp(d, "restart") == 0;
		/* this run's hint or --restart does it */
		p->run[i].changed |= d != NULL;
		any |= d != NULL;
		/* what uninstall takes back of a merged file edited since: ours */
		if (engine_drivers[i]->record)
			engine_drivers[i]->record(&p->run[i], state);
	}
	return any;
}

void engine_uninstalled(const struct engine_plan *p, const cJSON *state, int (*say)(const char *fmt, ...))
{
	for (size_t i = 0; engine_drivers[i]; i++) {
		_cleanup_free_ char *note = p->run[i].changed && engine_drivers[i]->uninstalled ?
					    engine_drivers[i]->uninstalled(p->root, state) : NULL;

		if (note)
			say("%s\n", note);
	}
}

int engine_runtime_name_check(const char *name, struct oerr *err)
{
	if (strcmp(name, "runc") == 0 || strcmp(name, "crun") == 0 || strcmp(name, "io.containerd.runc.v2") == 0)
		return oerr_usage(err, "--runtime-name %s: the engines' own runtime's name (Docker reserves runc; "
				  "containerd's runc is the node's): choose another (ocidec, nvidia)", name);
	if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(name))
		return oerr_usage(err, "--runtime-name %s: lower-case letters, digits, - and _ only", name);
	return 0;
}

void engine_plan_free(struct engine_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->a[i].path);
		free(p->a[i].data);
		free(p->a[i].link);
	}
	free(p->a);
	cJSON_Delete((cJSON *)p->recorded);
	if (p->root >= 0)
		close(p->root);
	memset(p, 0, sizeof(*p));
	p->root = -1;
}

int engine_read_file(int root, const char *path, char **buf, size_t *len, struct stat *st, struct oerr *err)
{
	return root_read_file(root, path, ENGINE_FILE_MAX, buf, len, st, err);
}
