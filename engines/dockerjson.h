/* dockerjson.h: Docker's daemon.json, with one runtime of ours added or
 * taken out, and nothing else of it changed: every other key, value and
 * number (json.h keeps numbers' text) as it was. */
#ifndef OCIDEC_DOCKERJSON_H
#define OCIDEC_DOCKERJSON_H

#include "base/util.h"

#include <stdbool.h>

/* TEXT (NULL or empty: no file) with runtime NAME added as {"path": PATH},
 * or removed (PATH NULL; an emptied "runtimes" goes too). The new text
 * (pretty-printed, a newline at the end), or TEXT's copy when nothing
 * changes; NULL with ERR (EXIT_USAGE) when TEXT is not a JSON object or its
 * "runtimes" is not one. */
char *docker_json_merge(const char *text, const char *name, const char *path, struct oerr *err);

/* TEXT with "default-runtime": DEFAULT_RUNTIME (NULL: left as it is) and,
 * with CDI, "features": {"cdi": true}; every other key as it was. NULL with
 * ERR (EXIT_USAGE) when TEXT or its "features" is no object. */
char *docker_json_set(const char *text, const char *default_runtime, bool cdi, struct oerr *err);
/* TEXT without "default-runtime" when it is NAME, and with CDI without
 * "features"."cdi" (an emptied "features" goes too): what
 * docker_json_set added taken out. */
char *docker_json_unset(const char *text, const char *name, bool cdi, struct oerr *err);

#endif
