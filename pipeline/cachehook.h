/* cachehook.h: the cache hook's command line, one codec.
 *
 * What a CDI spec, or the config.json the runtime shim rewrote, leaves to a
 * hook (`ocidec hook --cdi ARGS`, ocidec-cdi-hook(1)): the driver's links,
 * the mounted libraries' directories for the container's cache, the proc
 * views, CUDA's compat libraries, directories to chmod. struct cache_edits
 * holds them typed; cachehook_args writes it as arguments (edits.c, for a
 * spec's hook and the shim's), cachehook_option reads them back one option
 * at a time (applets/cdi_hook.c, which also turns NVIDIA's nvidia-cdi-hook
 * command lines into these options), and inject_cache (inject.c) applies
 * it. test/unit/cachehook.c: what is written reads back the same.
 */
#ifndef OCIDEC_CACHEHOOK_H
#define OCIDEC_CACHEHOOK_H

#include <getopt.h>
#include <stdbool.h>

#include "base/util.h"

/* A proc view: the directory DIR under /proc seen by the container with
 * only ENTRIES under it (its devices'), and SET ("FILE NAME: VALUE") the
 * one setting shown as VALUE (procview.h) */
struct cache_view {
	char *dir;
	char *set;            /* or NULL */
	struct strv entries;
};

struct cache_edits {
	struct strv libraries;      /* container paths the spec mounts libraries at */
	struct strv links;          /* PATH, TEXT, PATH, TEXT, ...: symlinks to make */
	struct cache_view *views;   /* the proc views, NVIEWS of them */
	size_t nviews;
	char *compat_dir;           /* CUDA's compat libraries in the image, used */
	char *compat_host;          /* when newer than this host driver (inject.c) */
	struct strv folders;        /* more directories for the cache */
	struct strv chmod;          /* directories in the container given chmod_mode */
	int chmod_mode;             /* -1: none given */
	char *app_profile;          /* NVIDIA's application profile file to write
				     * (appprofile.h), or NULL */
};
#define CACHE_EDITS_INIT { .chmod_mode = -1 }
void cache_edits_free(struct cache_edits *c);
#define _cleanup_cache_edits_ __attribute__((cleanup(cache_edits_free)))

/* The options, for getopt_long's table (values above any character, so
 * that they never meet an applet's own) */
enum {
	CACHEHOOK_LIBRARY = 0x100, CACHEHOOK_SYMLINK, CACHEHOOK_PROC_VIEW, CACHEHOOK_PROC_SET,
	CACHEHOOK_PROC_ENTRY, CACHEHOOK_CUDA_COMPAT, CACHEHOOK_HOST_DRIVER, CACHEHOOK_FOLDER,
	CACHEHOOK_CHMOD, CACHEHOOK_CHMOD_MODE, CACHEHOOK_APP_PROFILE,
};
#define CACHEHOOK_LONG_OPTS                                                           \
	{ "library", required_argument, NULL, CACHEHOOK_LIBRARY },                    \
	{ "symlink", required_argument, NULL, CACHEHOOK_SYMLINK },                    \
	{ "proc-view", required_argument, NULL, CACHEHOOK_PROC_VIEW },                \
	{ "proc-set", required_argument, NULL, CACHEHOOK_PROC_SET },                  \
	{ "proc-entry", required_argument, NULL, CACHEHOOK_PROC_ENTRY },              \
	{ "cuda-compat", required_argument, NULL, CACHEHOOK_CUDA_COMPAT },            \
	{ "host-driver-version", required_argument, NULL, CACHEHOOK_HOST_DRIVER },    \
	{ "folder", required_argument, NULL, CACHEHOOK_FOLDER },                      \
	{ "chmod", required_argument, NULL, CACHEHOOK_CHMOD },                        \
	{ "chmod-mode", required_argument, NULL, CACHEHOOK_CHMOD_MODE },              \
	{ "application-profile", required_argument, NULL, CACHEHOOK_APP_PROFILE }

/* Option O (one of CACHEHOOK_LONG_OPTS's) with ARG into C: 0; -1, what is
 * wrong in ERR ("--symlink X: not PATH::TEXT with an absolute PATH",
 * usage); 1 when O is none of them */
int cachehook_option(struct cache_edits *c, int o, const char *arg, struct oerr *err);
/* Is C whole (--chmod comes with --chmod-mode)? 0, or -1 and ERR */
int cachehook_check(const struct cache_edits *c, struct oerr *err);
/* C as the hook's options, pushed to ARGS (after "ocidec-hook --cdi") */
void cachehook_args(const struct cache_edits *c, struct strv *args);
/* Does C ask anything of the hook? */
bool cachehook_empty(const struct cache_edits *c);
/* A new proc view DIR (SET or NULL) at the end of C: its entries to fill */
struct cache_view *cachehook_view_add(struct cache_edits *c, const char *dir, const char *set);

#endif
