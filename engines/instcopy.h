/* instcopy.h: what `ocidec install --host-root` copies onto the host
 * under its prefix (P/bin/ocidec and its links, P/etc/ocidec.d), added to
 * the install's plan (engine.h) beside what the engine drivers write; the
 * host-mode install copies nothing.
 */
#ifndef OCIDEC_INSTCOPY_H
#define OCIDEC_INSTCOPY_H

#include <stdbool.h>

#include "engines/engine.h"

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

/* Host mode (nothing copied): this binary, where it is installed (the
 * package's, make install's): *BIN its directory (malloc'd), where
 * ocidec-hook and ocidec-runtime must be this binary too (the names the
 * engines run it by), root's and writable by no one else (the engines run
 * it as root); -1 (ERR, a usage error) otherwise */
int instcopy_host_binary(char **bin, struct oerr *err);
/* Host mode: does the config dir CDIR hold a vendor of NVIDIA's (Docker's
 * --gpus hook name then)? */
bool instcopy_host_nvidia(const char *cdir);

#endif
