/* cdispec.h: the vendors as Container Device Interface specs (ocidec
 * cdi, ocidec-cdi(1)): each vendor's spec built, as JSON or YAML, printed
 * or written (atomically); and the refresh that keeps a directory of them
 * true (cdi --refresh, the NRI plugin's tick, install's DaemonSet). What
 * the refresh writes or removes it says on stdout, a line each (out);
 * what fails, on stderr (log_oerr). */
#ifndef OCIDEC_CDISPEC_H
#define OCIDEC_CDISPEC_H

#include <limits.h>
#include <stdbool.h>

#include "devices/config.h"
#include "pipeline/edits.h"
#include "devices/devices.h"

/* A run of ocidec cdi: its command line, read */
struct cdi_run {
	const char *dir, *output, *format;  /* -c, -o (NULL: stdout), --format */
	char self[PATH_MAX];          /* this binary: the specs' hook by default */
	char cwd[PATH_MAX];           /* --refresh's relative -o, made absolute */
	bool to_dir;                  /* -o names a directory */
	const char *features;
	const char *claim, *devices;  /* --claim NAME --devices SEL */
	bool yaml;
	bool list;                    /* --list: the device names, KIND=NAME */
	bool refresh;                 /* --refresh: DIR's specs made true, written only on change */
	bool management;              /* --management: the management spec (management.KIND=all) */
	bool version_given;           /* --cdi-version: that version, whatever the spec has */
	struct cdi_opts co;
};

/* --refresh: every vendor of run->dir that NAMES names (N; none: all), each
 * config loaded on its own: one that does not load, or whose spec cannot
 * be written, is said, and the others are refreshed all the same. DIR
 * (run->output) must be the caller's and written by no one else. EXIT_OK,
 * or EXIT_FAIL when something failed */
int cdi_refresh_all(const struct cdi_run *run, char *const *names, int n);
/* The spec of each vendor of CFG NAMES names (N; none: all) to OUTPUT (a
 * directory when TO_DIR: one file for each; NULL: stdout); the number
 * written, or -1 (ERR) */
int cdi_write_specs(const struct config *cfg, char *const *names, int n, const struct cdi_run *run,
		    const char *output, bool to_dir, struct oerr *err);

/* ocidec cdi --refresh -c CONFIG_DIR -o OUT_DIR --hook-path HOOK_PATH, an
 * unchanged spec unsaid: EXIT_OK, or EXIT_FAIL (said) */
int cdi_refresh(const char *config_dir, const char *out_dir, const char *hook_path);
/* The specs cdi_refresh wrote for the vendors of CONFIG_DIR (of their kinds,
 * naming ocidec) removed from OUT_DIR, each said: EXIT_OK */
int cdi_unrefresh(const char *config_dir, const char *out_dir);

/* The NRI plugin's CDI devices (nri.c). Is vendor V's spec in DIR (its
 * JSON file) the one cdi_refresh (HOOK_PATH its hook) would write now,
 * root's alone? 1; 0 (WHY says why not); -1 (WHY: the spec cannot be
 * built). */
int cdi_spec_current(const struct vendor *v, const char *dir, const char *hook_path, struct oerr *why);
/* The CDI names (KIND=NAME: an index, a MIG device's UUID, all) of the
 * devices SEL selects of vendor V, as its spec names them, pushed to
 * NAMES: 0, or -1 (WHY): a selection the spec does not name (none). */
int cdi_device_names(const struct vendor *v, const struct selection *sel, struct strv *names, struct oerr *why);

/* Does S end with SUFFIX (_nocase: in any case)? What tells a spec file
 * (.json, .yaml, .yml) from a directory */
bool cdi_ends_with(const char *s, const char *suffix);
bool cdi_ends_with_nocase(const char *s, const char *suffix);

#endif
