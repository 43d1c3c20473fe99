/* instcopy.h: what `ocidec install --host-root` copies onto the host
 * under its prefix (P/bin/ocidec and its links, P/etc/ocidec.d), added to
 * the install's plan (engine.h) beside what the engine drivers write; the
 * host-mode install copies nothing.
 */
#ifndef OCIDEC_INSTCOPY_H
#define OCIDEC_INSTCOPY_H

#include <stdbool.h>

#include "common/engine.h"

struct instcopy {
	const char *cdir;          /* -c: the configs to copy */
	char *const *names;        /* --vendor (NNAMES of them; none: all) */
	int nnames;
	const char *driver_root;   /* --driver-root: a path, auto, container, or NULL */
	bool tenant_kubernetes;    /* --tenant-policy kubernetes */
	unsigned waited;           /* --driver-root auto: seconds waited for a driver container */
	int (*say)(const char *fmt, ...);  /* what it waits for, and which root it takes (install's out) */
};

/* This binary as P->prefix/bin/ocidec, ocidec-hook and ocidec-runtime
 * links to it */
int instcopy_binary(struct engine_plan *p, struct oerr *err);
/* The configs of C->cdir that C names (and their siblings), each with its
 * driver root and the tenant policy, into P->prefix/etc/ocidec.d */
int instcopy_configs(struct engine_plan *p, struct instcopy *c, struct oerr *err);

#endif
