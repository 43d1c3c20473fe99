/* applet.h: what the dispatcher (ocidec.c) knows of each applet. */
#ifndef OCIDEC_APPLET_H
#define OCIDEC_APPLET_H

#include "common/util.h"

struct applet {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *usage;  /* printed by --help */
};

/* The sorted table, in ocidec.c. */
extern const struct applet applets[];
extern const unsigned napplets;
extern const struct applet *current_applet;

/* Print "ocidec APPLET: MESSAGE" for E and return its exit code. */
int applet_fail(const struct oerr *e);
/* A usage error: one line, then exit code 2. */
int applet_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* getopt_long returned ':' or '?' (with opterr = 0): say which option. */
int applet_bad_option(int o, int argc, char **argv);
/* printf to stdout, keeping the errno of the first failed write (the
 * failure can come long before the exit, when stdio flushes a full buffer). */
int out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Flush stdout; a write error (full disk) is EXIT_FAIL, a closed pipe is not an error. */
int applet_finish_stdout(int status);

/* NVIDIA's hook names (nvidia-container-runtime-hook, nvidia-container-
 * toolkit), for Docker's --gpus: NVIDIA's command line made the hook's.
 * ARGV is rewritten in place to "ocidec-hook STAGE" (the new argc, 2) for
 * prestart and createRuntime; 0: any other stage or none, nothing to do. */
int hook_nvidia_argv(int argc, char **argv);

#define APPLET_MAIN(name) int name##_main(int argc, char **argv)
#define APPLET(name, fn) APPLET_MAIN(fn); extern const char fn##_usage[];
#include "applets/applets.def"
#undef APPLET

#endif
