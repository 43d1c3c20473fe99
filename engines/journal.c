/* journal.c: see journal.h. */
#include "engines/journal.h"

#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOURNAL_MAX (64u << 20)

/* Every entry's original where journal_record keeps it, PATH.ocidec-orig
 * beside PATH: an undo renames the backup over PATH (or removes it), so a
 * record naming another file (an edited install.json) would put that file
 * in PATH's place. Refused whole, before any undo. */
static int check_backups(const struct journal *j, struct oerr *err)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, j->files) {
		const cJSON *b = cJSON_GetObjectItem(e, "backup");
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(e, "path"));
		_cleanup_free_ char *orig = NULL;

		if (!b || !path)  /* (an entry without a path: the installer refuses it) */
			continue;
		orig = xconcat(path, JOURNAL_ORIG);
		if (!cJSON_IsString(b) || strcmp(b->valuestring, orig) != 0)
			return oerr_usage(err, "%s: the entry of %s names %s%s%s as its original, not %s: nothing changed",
					  j->path, path, cJSON_IsString(b) ? "\"" : "", cJSON_IsString(b) ? b->valuestring :
					  "a value that is not a path", cJSON_IsString(b) ? "\"" : "", orig);
	}
	return 0;
}

int journal_load(struct journal *j, int root, const char *path, struct oerr *err)
{
	_cleanup_free_ char *text = NULL;
	struct stat st;
	size_t len;
	int have = root_read_file(root, path, JOURNAL_MAX, &text, &len, &st, err);

	*j = (struct journal){ .root = root, .path = path };
	if (have < 0)
		return -1;
	j->state = have ? cJSON_Parse(text) : cJSON_CreateObject();
	if (!cJSON_IsObject(j->state))
		return oerr_usage(err, "%s: not a JSON object", path);
	j->files = cJSON_GetObjectItem(j->state, "files");
	j->dirs = cJSON_GetObjectItem(j->state, "dirs");
	if (!j->files)
		j->files = cJSON_AddArrayToObject(j->state, "files");
	if (!j->dirs)
		j->dirs = cJSON_AddArrayToObject(j->state, "dirs");
	if (!cJSON_IsArray(j->files) || !cJSON_IsArray(j->dirs))
		return oerr_usage(err, "%s: \"files\" and \"dirs\" must be arrays", path);
	if (check_backups(j, err) < 0)
		return -1;
	return have;
}

int journal_save(struct journal *j, struct oerr *err)
{
	_cleanup_free_ char *text = cJSON_Print(j->state);
	_cleanup_free_ char *line = text ? xconcat(text, "\n") : oom();

	/* 0600: it holds what was written into config.toml and daemon.json */
	return root_write_atomic(j->root, j->path, line, strlen(line), 0600, true, err);
}

void journal_free(struct journal *j)
{
	cJSON_Delete(j->state);
	j->state = j->files = j->dirs = NULL;
}

cJSON *journal_entry(const struct journal *j, const char *path)
{
	cJSON *e;

	cJSON_ArrayForEach(e, j->files) {
		const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(e, "path"));
		if (p && strcmp(p, path) == 0)
			return e;
	}
	return NULL;
}

int journal_record(struct journal *j, const char *path, bool exists, struct oerr *err)
{
	_cleanup_free_ char *orig = xconcat(path, JOURNAL_ORIG), *dir = path_dir(path);
	_cleanup_close_ int dfd = -1;
	cJSON *e = journal_entry(j, path);
	struct stat st;
	const char *backup = e ? cJSON_GetStringValue(cJSON_GetObjectItem(e, "backup")) : NULL;
	bool kept;

	if (e && (!backup || !exists))
		return 0;
	dfd = root_open(j->root, dir, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return oerr_set(err, errno, "%s", dir);
	kept = fstatat(dfd, strrchr(orig, '/') + 1, &st, AT_SYMLINK_NOFOLLOW) == 0;  /* (faccessat's F_OK) */
	if (e) {  /* changed before: the original must still be kept */
		if (kept)
			return 0;
	} else {
		if (kept)
			return oerr_set(err, 0, "%s exists and install.json does not name it: move it away first",
					orig);
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "path", path);
		if (exists)
			cJSON_AddStringToObject(e, "backup", orig);
		cJSON_AddItemToArray(j->files, e);
		if (journal_save(j, err) < 0)
			return -1;
	}
	if (exists && linkat(dfd, strrchr(path, '/') + 1, dfd, strrchr(orig, '/') + 1, 0) < 0)
		return oerr_set(err, errno, "%s: keeping the original", orig);
	return 0;
}

void journal_wrote(struct journal *j, const char *path, const char *merge, const char *data)
{
	cJSON *e = journal_entry(j, path);

	if (!e || !merge)
		return;
	cJSON_DeleteItemFromObject(e, "wrote");
	cJSON_AddItemToObject(e, "wrote", cJSON_CreateString(data));
	cJSON_DeleteItemFromObject(e, "merge");
	cJSON_AddItemToObject(e, "merge", cJSON_CreateString(merge));
}

int journal_note_dir(const char *path, void *arg, struct oerr *err)
{
	struct journal *j = arg;

	(void)err;
	cJSON_AddItemToArray(j->dirs, cJSON_CreateString(path));
	return 0;
}

int journal_record_dir(const char *path, void *arg, struct oerr *err)
{
	journal_note_dir(path, arg, err);
	return journal_save(arg, err);
}

int journal_undo(struct journal *j, cJSON *e, bool merged,
		 char *(*take_out)(const char *current, void *arg, struct oerr *err),
		 bool (*empty)(const char *text, void *arg), void *arg, enum journal_undone *done, struct oerr *err)
{
	const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(e, "path"));
	const char *backup = cJSON_GetStringValue(cJSON_GetObjectItem(e, "backup"));
	const char *wrote = cJSON_GetStringValue(cJSON_GetObjectItem(e, "wrote"));
	_cleanup_free_ char *dir = path_dir(path), *cur = NULL, *edited = NULL;
	_cleanup_close_ int dfd = -1;
	struct stat st;
	size_t len;
	int have;

	/* (BACKUP is PATH.ocidec-orig: journal_load refused any other) */
	*done = JOURNAL_NOTHING;
	dfd = root_open(j->root, dir, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return errno == ENOENT ? 0 : oerr_set(err, errno, "%s", dir);
	if (merged && (wrote || !backup)) {
		/* the administrator's file, edited since: take out only ours; one
		 * the install made goes when nothing but ours is in it (whatever
		 * the record says it wrote) */
		have = root_read_file(j->root, path, JOURNAL_MAX, &cur, &len, &st, err);
		if (have < 0)
			return -1;
		if (have && (!backup || strcmp(cur, wrote) != 0)) {
			if (!(edited = take_out(cur, arg, err)))
				return -1;
			if (!backup && empty(edited, arg)) {
				if (unlinkat(dfd, strrchr(path, '/') + 1, 0) < 0 && errno != ENOENT)
					return oerr_set(err, errno, "%s: unlink", path);
				*done = JOURNAL_REMOVED;
				return 0;
			}
			if (strcmp(edited, cur) != 0 &&
			    root_write_atomic(j->root, path, edited, strlen(edited), st.st_mode & 07777, true, err) < 0)
				return -1;
			if (backup)
				unlinkat(dfd, strrchr(backup, '/') + 1, 0);
			*done = JOURNAL_EDITED;
			return 0;
		}
	}
	if (backup) {
		if (renameat(dfd, strrchr(backup, '/') + 1, dfd, strrchr(path, '/') + 1) < 0) {
			if (errno != ENOENT)
				return oerr_set(err, errno, "%s: restoring", path);
		} else {
			*done = JOURNAL_RESTORED;
		}
	} else if (unlinkat(dfd, strrchr(path, '/') + 1, 0) == 0) {
		*done = JOURNAL_REMOVED;
	} else if (errno != ENOENT) {
		return oerr_set(err, errno, "%s: unlink", path);
	}
	return 0;
}

bool journal_remove_dir(struct journal *j, int i)
{
	const char *d = cJSON_GetStringValue(cJSON_GetArrayItem(j->dirs, i));
	_cleanup_free_ char *parent = NULL;
	_cleanup_close_ int pfd = -1;

	if (!d || d[0] != '/' || strcmp(d, "/") == 0 || has_dot_component(d))
		return false;
	parent = path_dir(d);
	pfd = root_open(j->root, parent, O_PATH | O_DIRECTORY);
	return pfd >= 0 && unlinkat(pfd, strrchr(d, '/') + 1, AT_REMOVEDIR) == 0;
}
