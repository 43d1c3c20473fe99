/* instlock.h: one ocidec install or uninstall at a time on a host (a
 * DaemonSet's rolling update: the old pod uninstalling while the new one
 * installs).
 */
#ifndef OCIDEC_INSTLOCK_H
#define OCIDEC_INSTLOCK_H

#include <signal.h>

#include "base/util.h"

/* The host's install lock: HOST/run/ocidec-install.lock, a regular file
 * of root's that only root may open (made 0600, never through a link),
 * locked exclusive (flock; released when the descriptor closes, by exit or
 * death): every ocidec install on the host, from any container, takes the
 * same lock, and no unprivileged user can hold it (a lock on a directory
 * anyone may open could be). Tried every 100 ms for TIMEOUT seconds, then
 * a clear error; with SIGS (--wait: SIGTERM and SIGINT blocked), one of
 * them ends the wait at once (-1, *SIG the signal, nothing done). SAY
 * (install's out) says that it waits; *FD the lock's descriptor. */
int instlock_take(int root, const char *host, unsigned timeout, const sigset_t *sigs, int *sig, int *fd,
		  int (*say)(const char *fmt, ...), struct oerr *err);

/* --wait: SIGTERM and SIGINT (and SIGCHLD, the NRI plugin's child)
 * blocked from the start (a SIGTERM while we wait for the lock or plan, a
 * containerd dump, waits for us; a handler each: PID 1 of a container
 * drops signals it has none for), SIGS them; OWNER this install's token in
 * the record (random, hex) */
enum { INSTLOCK_OWNER = 33 };
int instlock_wait_prepare(sigset_t *sigs, char owner[INSTLOCK_OWNER], struct oerr *err);

#endif
