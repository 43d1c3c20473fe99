/* hook.h: what the two hooks share, the vendor hook (hook.c) and the CDI
 * spec's (cdi_hook.c): their stages and their input. */
#ifndef OCIDEC_HOOK_H
#define OCIDEC_HOOK_H

#include <stdbool.h>

#include "common/oci.h"

/* The STAGE operand (argv[optind], prestart without one, one at most): 1
 * when the hook works at it (prestart, createRuntime; createContainer,
 * where the vendor hook refuses to work in the container's namespaces),
 * 0 when there is nothing to do (poststart, poststop, startContainer),
 * -1 after a usage error was said. */
int hook_stage(int argc, char **argv);
/* The options both hooks take: -l FILE, -n, -t SEC, --resolver,
 * --mount-api, --syslog (getopt_long's O for them, with optarg). EXIT_OK
 * when O was one (DRY_RUN set by -n); else a usage error's status, said:
 * a wrong argument, or an option neither hook knows. */
#define HOOK_SHORT_OPTS "l:nt:"
#define HOOK_LONG_OPTS                                                  \
	{ "log", required_argument, NULL, 'l' },                        \
	{ "dry-run", no_argument, NULL, 'n' },                          \
	{ "timeout", required_argument, NULL, 't' },                    \
	{ "resolver", required_argument, NULL, 'R' },                   \
	{ "mount-api", required_argument, NULL, 'M' },                  \
	{ "syslog", required_argument, NULL, 'S' }
int hook_option(int o, bool *dry_run, int argc, char **argv);

/* The container state on stdin, then the bundle's config.json (*BUF NULL
 * when the bundle may not be read, oci_bundle_read). */
int hook_input(struct oci_state *st, char **buf, size_t *len, struct oerr *err);

#endif
