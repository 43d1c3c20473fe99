/* The engine drivers' registry and what they share: see engine.h */
#include "engines/engine.h"
#include "base/out.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct engine_ops engine_hooksdir, engine_docker, engine_containerd;
const struct engine_ops *const engine_drivers[] = { &engine_hooksdir, &engine_docker, &engine_containerd, &engine_nri,
						    NULL };

_Static_assert(sizeof(engine_drivers) / sizeof(*engine_drivers) - 1 <= ENGINE_DRIVER_MAX, "engine_run slots");
_Static_assert(ENGINE_DRIVER_MAX * ENGINE_WORD_BITS <= 32, "--runtime's bits");

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

/* driver I's word W's bit among --runtime's */
#define RT(i, w) ((w)->bit << ((i) * ENGINE_WORD_BITS))

unsigned engine_driver_rts(const struct engine_ops *d)
{
	unsigned rts = 0;

	for (size_t i = 0; engine_drivers[i]; i++)
		for (const struct engine_word *w = engine_drivers[i]->words; engine_drivers[i] == d && w && w->word; w++)
			rts |= RT(i, w);
	return rts;
}

unsigned engine_driver_asked(unsigned rts, size_t i)
{
	return (rts >> (i * ENGINE_WORD_BITS)) & ((1u << ENGINE_WORD_BITS) - 1);
}

unsigned engine_runtime_word(const char *word)
{
	for (size_t i = 0; engine_drivers[i]; i++)
		for (const struct engine_word *w = engine_drivers[i]->words; w && w->word; w++)
			if (strcmp(word, w->word) == 0)
				return RT(i, w);
	return 0;
}

void engine_usage(void)
{
	out("ocidec install --runtime LIST: LIST, comma-separated, of these (default podman)\n");
	for (size_t i = 0; engine_drivers[i]; i++)
		out("%s", engine_drivers[i]->usage ? engine_drivers[i]->usage : "");
}

char *engine_words(const char *sep, int root)
{
	_cleanup_strv_ struct strv names = { 0 };
	unsigned seen = 0;

	for (size_t i = 0; engine_drivers[i]; i++)
		for (const struct engine_word *w = engine_drivers[i]->words; w && w->word; w++) {
			if (!(seen & RT(i, w)) && (root < 0 || (w->engine && engine_installed(root, w->engine))))
				strv_push(&names, w->word);
			seen |= RT(i, w);
		}
	return strv_join(&names, sep);
}

const struct engine_ops *engine_merge_of(const cJSON *e)
{
	const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(e, "merge"));
	const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(e, "path"));

	/* a record of an ocidec that kept no kind: the files the drivers merge */
	for (size_t i = 0; engine_drivers[i]; i++) {
		const struct engine_ops *d = engine_drivers[i];

		if (d->merge && (m ? strcmp(m, d->merge) == 0 : path && strcmp(path, d->merged) == 0))
			return d;
	}
	return NULL;
}

const char *engine_state_runtime_name(const cJSON *state)
{
	const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(state, "runtime_name"));

	return n && *n ? n : "ocidec";
}

void engine_plan_add(struct engine_plan *p, char *path, char *data, size_t len, mode_t mode,
		     const struct engine_ops *merge)
{
	p->a = xreallocarray(p->a, p->n + 1, sizeof(*p->a));
	p->a[p->n++] = (struct engine_action){ .path = path, .data = data, .len = len, .mode = mode, .merge = merge };
}

void engine_plan_link(struct engine_plan *p, char *path, const char *text)
{
	engine_plan_add(p, path, NULL, 0, 0777, NULL);
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

bool engine_pending(struct engine_plan *p, const cJSON *state)
{
	const cJSON *pending = cJSON_GetObjectItem(state, "pending");
	bool any = false;

	for (size_t i = 0; engine_drivers[i]; i++) {
		const char *d = !engine_drivers[i]->daemon ? NULL :
			cJSON_GetStringValue(cJSON_GetObjectItem(pending, engine_drivers[i]->daemon->name));

		p->run[i].pending = d != NULL;
		p->run[i].pending_restart = d && strcmp(d, "restart") == 0;
		/* this run's hint or --restart does it */
		p->run[i].changed |= d != NULL;
		any |= d != NULL;
	}
	return any;
}

void engine_record(const struct engine_plan *p, cJSON *state)
{
	/* what uninstall takes back of a merged file edited since: ours */
	for (size_t i = 0; engine_drivers[i]; i++)
		if (engine_drivers[i]->record)
			engine_drivers[i]->record(&p->run[i], state);
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
