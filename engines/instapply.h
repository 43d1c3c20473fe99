/* instapply.h: an install's plan (engine.h's actions) put on the host
 * root, each file recorded in the install's journal before it changes and
 * written atomically; a file that has the content already is not touched.
 */
#ifndef OCIDEC_INSTAPPLY_H
#define OCIDEC_INSTAPPLY_H

#include "engines/engine.h"
#include "engines/journal.h"

/* P->prefix, where the record J lives: its missing parents made (recorded
 * once the record exists), then the prefix itself made as
 * PREFIX.ocidec-new with the record in it and renamed into place, so that
 * it never exists without the record that names it. */
int instapply_prefix(const struct engine_plan *p, struct journal *j, struct oerr *err);
/* A, made so on P->root (its directories made, each recorded), the drivers
 * whose files changed marked in P->run; SAY (install's out) says what it
 * did: 1 written, 0 as it was already, -1 with ERR */
int instapply_action(struct engine_plan *p, struct journal *j, const struct engine_action *a,
		     int (*say)(const char *fmt, ...), struct oerr *err);
/* Undo the record J's entry E (at STATE_PATH): the original put back, or
 * what the install made removed, or (a merged file changed since) only
 * ocidec's part taken out (its driver's take_out); the drivers whose files
 * changed marked in P->run; said (SAY) */
int instapply_undo(struct engine_plan *p, struct journal *j, cJSON *e, const char *state_path,
		   int (*say)(const char *fmt, ...), struct oerr *err);

#endif
