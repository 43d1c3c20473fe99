/* journal.h: an install's record on a host root (install.json), and its
 * undo.
 *
 * Before anything on the host changes, the journal says so and is saved:
 * a file or link made, a file changed (its original kept beside it as
 * PATH.ocidec-orig, a hard link to the same inode), a directory made. An
 * install cut short at any step is undone whole by the next --uninstall.
 * A file ocidec edits rather than owns (Docker's daemon.json, containerd's
 * config.toml) is recorded with its merge kind (a name the engine's driver
 * gives) and what was written, so that an undo after the administrator
 * edited it again takes out only ocidec's part. The journal records and
 * undoes; what goes where, and what "ocidec's part" is, is the engine
 * drivers' (engines/engine.h). It prints
 * nothing: each undo says what it did.
 */
#ifndef OCIDEC_JOURNAL_H
#define OCIDEC_JOURNAL_H

#include <stdbool.h>

#include "cJSON.h"
#include "base/util.h"

#define JOURNAL_ORIG ".ocidec-orig"

struct journal {
	int root;          /* the host root */
	const char *path;  /* the record's path there */
	cJSON *state;      /* the whole record: files, dirs and what the installer keeps */
	cJSON *files, *dirs;
};

/* The record at PATH under ROOT: 1 read, 0 none there (an empty one), -1
 * with ERR (EXIT_USAGE: not a record, or one whose entry names an
 * original other than its PATH.ocidec-orig) */
int journal_load(struct journal *j, int root, const char *path, struct oerr *err);
int journal_save(struct journal *j, struct oerr *err);
void journal_free(struct journal *j);

/* The entry of PATH, or NULL */
cJSON *journal_entry(const struct journal *j, const char *path);
/* PATH, recorded (and saved) before it changes: made (EXISTS false), or
 * changed with the original kept as PATH.ocidec-orig */
int journal_record(struct journal *j, const char *path, bool exists, struct oerr *err);
/* What was written into PATH, a file of the administrator's merged as
 * MERGE (its kind's name; NULL: ocidec's own, nothing to keep); saved by
 * the caller */
void journal_wrote(struct journal *j, const char *path, const char *merge, const char *data);
/* A directory about to be made: into the record (journal_note_dir), and
 * saved too (journal_record_dir: root_mkdirs's callback, ARG the journal) */
int journal_note_dir(const char *path, void *arg, struct oerr *err);
int journal_record_dir(const char *path, void *arg, struct oerr *err);

/* What undoing an entry did */
enum journal_undone {
	JOURNAL_NOTHING,   /* not there any more */
	JOURNAL_RESTORED,  /* the original put back */
	JOURNAL_REMOVED,   /* made by the install: removed */
	JOURNAL_EDITED,    /* edited since: only ocidec's part taken out */
};

/* Undo entry E (its "path" checked clean by the caller): a merged file
 * (MERGED) the administrator changed since keeps their changes,
 * TAKE_OUT(CURRENT, ARG, ERR) giving its text without ocidec's part (NULL:
 * ERR); one the install made goes when nothing else is left (EMPTY(TEXT,
 * ARG) true). */
int journal_undo(struct journal *j, cJSON *e, bool merged,
		 char *(*take_out)(const char *current, void *arg, struct oerr *err),
		 bool (*empty)(const char *text, void *arg), void *arg, enum journal_undone *done, struct oerr *err);
/* Remove the recorded directory I (the last first), when empty: true when
 * it was removed */
bool journal_remove_dir(struct journal *j, int i);

#endif
