/* applet.h: what the dispatcher (ocidec.c) knows of each applet. */
#ifndef OCIDEC_APPLET_H
#define OCIDEC_APPLET_H

#include "base/out.h"
#include "base/util.h"

enum {
	APPLET_OWN_ENV = 1,   /* reads no environment: cleared before it runs */
	APPLET_OWN_ARGS = 2,  /* --help and --version are its own */
	APPLET_LATE_PROC = 4, /* opens the host's /proc itself (proc_open), when it needs it */
};

/* An applet's --help text, FN_usage in applets/FN.c. The static build
 * (OCIDEC_USAGEZ) has them packed (tools/usagez.c, build/gen/usagez.c):
 * there the table holds FN_usagez, the text's place in them. */
#ifdef OCIDEC_USAGEZ
typedef const unsigned *applet_usage_ref;
#define APPLET_USAGE(fn) &fn##_usagez
#else
typedef const char *applet_usage_ref;
#define APPLET_USAGE(fn) fn##_usage
#endif

struct applet {
	char name[16];  /* (in the table, not a pointer to a string elsewhere: the
			 * idle path's lookup reads one page of read-only data) */
	int (*main)(int argc, char **argv, struct oerr *err);
	applet_usage_ref usage;  /* printed by --help: applet_usage */
	unsigned flags;     /* APPLET_* */
	const char *summary; /* its line in ocidec --help */
};

/* The sorted table, in ocidec.c. */
extern const struct applet applets[];
extern const unsigned napplets;
extern const struct applet *current_applet;

/* Print "ocidec APPLET: MESSAGE" for E and return its exit code
 * (log_oerr). */
int applet_fail(const struct oerr *e);
/* A usage error: one line, then exit code 2. */
int applet_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* getopt_long returned ':' or '?' (with opterr = 0): say which option. */
int applet_bad_option(int o, int argc, char **argv);
/* A's --help text */
const char *applet_usage(const struct applet *a);
/* Flush stdout; a write error (full disk) is EXIT_FAIL, a closed pipe is not an error. */
int applet_finish_stdout(int status);

/* An applet's main returns its exit status, or APPLET_FAILED with *ERR
 * set: the dispatcher says that error once (applet_fail: one write per
 * line, to stderr and the logs) and exits with its code. A failure after
 * which the applet goes on (one vendor of several) it says itself with
 * applet_fail. */
#define APPLET_FAILED (-1)
#define APPLET_MAIN(name) int name##_main(int argc, char **argv, struct oerr *err)
#define APPLET(name, fn, flags, summary) APPLET_MAIN(fn); extern const char fn##_usage[]; \
	extern const unsigned fn##_usagez;
#define ALIAS(name, fn, argv_fn)
#define OPTION_ALIAS(name, option, fn)
#include "applets/applets.def"
#undef APPLET
#undef ALIAS
#undef OPTION_ALIAS

/* The hook under NVIDIA's hook names (nvidia-container-runtime-hook,
 * nvidia-container-toolkit), for Docker's --gpus: NVIDIA's command line
 * made the hook's. ARGV is rewritten in place to "ocidec-hook STAGE" (the
 * new argc, 2) for prestart and createRuntime; 0: any other stage or none,
 * nothing to do. (An ALIAS's ARGV_FN, applets.def.) */
int hook_nvidia_argv(int argc, char ***argv);
/* cdi-hook under NVIDIA's name: `nvidia-cdi-hook SUBCOMMAND FLAGS...`, as
 * nvidia-ctk's specs call it, made cdi-hook's options (create-symlinks,
 * update-ldcache, enable-cuda-compat, disable-device-node-modification,
 * chmod); *ARGV a new array. 0 for a hook it does not know (said, as
 * NVIDIA's own does: the container starts). */
int cdi_hook_nvidia_argv(int argc, char ***argv);

#endif
