/* dryrun.h: the dry run of the hook and of the inject applet: the
 * container edits printed instead of applied (ocidec-hook(1), --dry-run).
 * Text: the edits' lines (edits_text_mounts), the device rules
 * where they would go (devcg_describe), the cache's lines
 * (edits_text_cache); or the edits as one JSON object (edits_json). */
#ifndef OCIDEC_DRYRUN_H
#define OCIDEC_DRYRUN_H

#include <stdbool.h>

#include "pipeline/edits.h"
#include "pipeline/inject.h"

/* --format FORMAT: "text" (false) or "json" (true) into *JSON; -1 for
 * anything else. */
int dry_run_format(const char *format, bool *json);
/* E as the container O names would get it, to stdout. */
int dry_run_print(const struct edits *e, const struct inject_opts *o, bool json, struct oerr *err);
/* hook --cdi's: the links, cache directories and proc views of C. */
void dry_run_print_cache(const struct cache_edits *c);

#endif
