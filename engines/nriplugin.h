/* nriplugin.h: the NRI plugin (the socket, the loop, the calls), for
 * ocidec nri and for ocidec install --runtime nri --wait (a DaemonSet's
 * main process). What it does it logs (log.h); a container it cannot
 * decide is refused with the error said (log_oerr). NRI's messages and
 * ocidec's edits as them are nri.h's; the bytes under them, ttrpc.h's. */
#ifndef OCIDEC_NRIPLUGIN_H
#define OCIDEC_NRIPLUGIN_H

#include "base/util.h"

#define NRI_SOCKET "/var/run/nri/nri.sock"
/* ocidec install --runtime nri --wait: its plugin child's exit status once
 * a newer plugin took the connection over */
#define NRI_HANDED_OVER 3
#define NRI_CDI_TICK 5
/* where ocidec's refresh (the ocidec-cdi-refresh unit) keeps the specs */
#define NRI_CDI_SPECS "/var/run/cdi"

struct nri_opts {
	const char *dir;        /* the vendor configs */
	const char *socket;     /* the runtime's NRI socket */
	const char *hook;       /* the host's path of ocidec (the cache hook) */
	const char *name, *index;
	const char *host_root;  /* (the applet's --host-root: chroot first) */
	const char *cdi_dir;    /* the CDI specs kept true there (cdi --refresh,
				 * every NRI_CDI_TICK s), or NULL; where a runtime
				 * that takes CDI devices from a plugin
				 * (nri_takes_cdi) finds them (NULL: NRI_CDI_SPECS,
				 * the refresh unit's) */
	bool no_cdi;            /* the OCI edits always, never CDI devices */
};

/* The plugin, in this process's root: until SIGTERM or SIGINT (0), or
 * until a newer plugin of the same name took the connection over (1);
 * -1 (ERR) on bad usage. It connects again whenever the runtime goes. */
int nri_plugin(const struct nri_opts *o, struct oerr *err);

#endif
