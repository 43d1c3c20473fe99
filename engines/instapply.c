/* An install's plan put on the host through its journal: see
 * instapply.h */
#include "engines/instapply.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Make DIR and its missing parents, each recorded (record_dir) */
static int make_dirs(int root, struct journal *j, const char *dir, struct oerr *err)
{
	int fd = root_mkdirs(root, dir, 0, journal_record_dir, j, err);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}

/* PREFIX, where the record lives: its missing parents made (recorded once
 * the record exists), then PREFIX itself made as PREFIX.ocidec-new with the
 * record in it and renamed into place, so that it never exists without
 * the record that names it. */
int instapply_prefix(const struct engine_plan *p, struct journal *j, struct oerr *err)
{
	_cleanup_free_ char *parent = path_dir(p->prefix), *tmp = xconcat(p->prefix, ".ocidec-new");
	_cleanup_free_ char *tmp_state = xasprintf("%s/install.json", tmp);
	_cleanup_free_ char *text = NULL, *line = NULL;
	_cleanup_close_ int fd = root_open(p->root, p->prefix, O_PATH | O_DIRECTORY), pfd = -1;

	if (fd >= 0)
		return 0;
	if (errno != ENOENT)
		return oerr_set(err, errno, "%s", p->prefix);
	/* parents (rare: /usr/local/ocidec's /usr/local exists everywhere),
	 * into the record that is about to be written */
	pfd = root_mkdirs(p->root, parent, 0, journal_note_dir, j, err);
	if (pfd < 0)
		return -1;
	cJSON_AddItemToArray(j->dirs, cJSON_CreateString(p->prefix));
	/* a leftover of an install killed at this step */
	{
		_cleanup_close_ int t = root_open(p->root, tmp, O_PATH | O_DIRECTORY);
		if (t >= 0)
			unlinkat(t, "install.json", 0);
		unlinkat(pfd, strrchr(tmp, '/') + 1, AT_REMOVEDIR);
	}
	if (mkdirat(pfd, strrchr(tmp, '/') + 1, 0755) < 0)
		return oerr_set(err, errno, "%s: mkdir", tmp);
	text = cJSON_Print(j->state);
	line = xconcat(text ? text : oom(), "\n");
	if (root_write_atomic(p->root, tmp_state, line, strlen(line), 0600, true, err) < 0)
		return -1;
	if (renameat(pfd, strrchr(tmp, '/') + 1, pfd, strrchr(p->prefix, '/') + 1) < 0)
		return oerr_set(err, errno, "%s", p->prefix);
	return 0;
}

/* The drivers whose daemon reads PATH (MERGE: the driver that merged
 * into it) marked changed in P */
static void mark_readers(struct engine_plan *p, const char *path, const struct engine_ops *merge)
{
	for (size_t i = 0; engine_drivers[i]; i++) {
		bool reads = engine_drivers[i] == merge;

		for (size_t k = 0; engine_drivers[i]->reads && engine_drivers[i]->reads[k]; k++)
			reads |= strcmp(path, engine_drivers[i]->reads[k]) == 0;
		p->run[i].changed |= reads;
	}
}

int instapply_action(struct engine_plan *p, struct journal *j, const struct engine_action *a,
		     int (*say)(const char *fmt, ...), struct oerr *err)
{
	_cleanup_free_ char *dir = path_dir(a->path), *cur = NULL;
	struct stat st;
	size_t len = 0;
	int have;

	if (make_dirs(p->root, j, dir, err) < 0)
		return -1;
	if (a->link) {
		char text[PATH_MAX];
		int l = engine_read_link(p->root, a->path, text, sizeof(text));
		_cleanup_close_ int dfd = -1;

		if (l == 1 && strcmp(text, a->link) == 0)
			return 0;
		if (journal_record(j, a->path, l != 0, err) < 0)
			return -1;
		dfd = root_open(p->root, dir, O_PATH | O_DIRECTORY);
		if (dfd < 0 || root_symlink_atomic(dfd, strrchr(a->path, '/') + 1, a->link) < 0)
			return oerr_set(err, errno, "%s: symlink", a->path);
		say("linked %s -> %s\n", a->path, a->link);
		return 1;
	}
	have = root_read_file(p->root, a->path, 64u << 20, &cur, &len, &st, err);
	if (have < 0)
		return -1;
	if (have && len == a->len && memcmp(cur, a->data, len) == 0 && (st.st_mode & 07777) == a->mode)
		return 0;
	if (journal_record(j, a->path, have, err) < 0)
		return -1;
	journal_wrote(j, a->path, a->merge ? a->merge->merge : NULL, a->data);
	if (a->merge && journal_save(j, err) < 0)
		return -1;
	if (root_write_atomic(p->root, a->path, a->data, a->len, a->mode, true, err) < 0)
		return -1;
	mark_readers(p, a->path, a->merge);
	say("wrote %s%s%s%s\n", a->path,
	    cJSON_GetObjectItem(journal_entry(j, a->path), "backup") ? " (the original kept as " : "",
	    cJSON_GetObjectItem(journal_entry(j, a->path), "backup") ? a->path : "",
	    cJSON_GetObjectItem(journal_entry(j, a->path), "backup") ? JOURNAL_ORIG ")" : "");
	return 1;
}

/* A merged file's text without ocidec's part (journal_undo's take_out):
 * its driver's (ARG: the driver, the record) */
struct merged {
	const struct engine_ops *d;
	const cJSON *state;
};

static char *take_out(const char *cur, void *arg, struct oerr *err)
{
	const struct merged *m = arg;

	return m->d->take_out(cur, m->state, err);
}

/* A merged file the install made, with nothing but ocidec's part: gone
 * (its driver's word) */
static bool nothing_left(const char *text, void *arg)
{
	const struct merged *m = arg;

	return m->d->empty(text);
}

int instapply_undo(struct engine_plan *p, struct journal *j, cJSON *e, const char *state_path,
		   int (*say)(const char *fmt, ...), struct oerr *err)
{
	const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(e, "path"));
	struct merged m = { engine_merge_of(e), j->state };
	enum journal_undone done;

	if (!path || !engine_clean_path(path))
		return oerr_usage(err, "%s: an entry without a clean \"path\"", state_path);
	mark_readers(p, path, m.d);
	if (journal_undo(j, e, m.d != NULL, take_out, nothing_left, &m, &done, err) < 0)
		return -1;
	switch (done) {
	case JOURNAL_RESTORED: say("restored %s\n", path); break;
	case JOURNAL_REMOVED: say("removed %s\n", path); break;
	case JOURNAL_EDITED: say("edited %s: changed since the install, only ocidec's part taken out\n", path); break;
	case JOURNAL_NOTHING: break;
	}
	return 0;
}
