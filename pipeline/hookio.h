/* hookio.h: what the two hooks share, the vendor hook (ocidec hook) and
 * the CDI spec's (ocidec cdi-hook): their stages, the options both take,
 * and their input. Usage errors come back in the error object, said by
 * the applet (applet_usage_error). */
#ifndef OCIDEC_HOOKIO_H
#define OCIDEC_HOOKIO_H

#include <stdbool.h>

#include "pipeline/oci.h"

/* The STAGE operand (argv[optind], prestart without one, one at most): 1
 * when the hook works at it (prestart, createRuntime; createContainer,
 * where the vendor hook refuses to work in the container's namespaces),
 * 0 when there is nothing to do (poststart, poststop, startContainer),
 * -1 (ERR, a usage error) for another or for two. */
int hookio_stage(int argc, char **argv, struct oerr *err);
/* The options both hooks take: -l FILE, -n, -t SEC, --resolver,
 * --mount-api, --syslog (getopt_long's O for them, with ARG its optarg).
 * 0 when O was one (DRY_RUN set by -n); 1 when it is none of them (the
 * caller's, or an unknown option); -1 (ERR, a usage error) for a wrong
 * argument. */
#define HOOKIO_SHORT_OPTS "l:nt:"
#define HOOKIO_LONG_OPTS                                                \
	{ "log", required_argument, NULL, 'l' },                        \
	{ "dry-run", no_argument, NULL, 'n' },                          \
	{ "timeout", required_argument, NULL, 't' },                    \
	{ "resolver", required_argument, NULL, 'R' },                   \
	{ "mount-api", required_argument, NULL, 'M' },                  \
	{ "syslog", required_argument, NULL, 'S' }
int hookio_option(int o, const char *arg, bool *dry_run, struct oerr *err);

/* The container state on stdin, then the bundle's config.json (*BUF NULL
 * when the bundle may not be read, oci_bundle_read). */
int hookio_input(struct oci_state *st, char **buf, size_t *len, struct oerr *err);

#endif
