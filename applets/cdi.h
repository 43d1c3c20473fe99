/* cdi.h: the cdi applet's refresh, for the NRI plugin that keeps a node's
 * CDI specs true while it runs (a DaemonSet's pod). */
#ifndef OCIDEC_APPLETS_CDI_H
#define OCIDEC_APPLETS_CDI_H

/* ocidec cdi --refresh -c CONFIG_DIR -o OUT_DIR --hook-path HOOK_PATH, an
 * unchanged spec unsaid: EXIT_OK, or EXIT_FAIL (said) */
int cdi_refresh(const char *config_dir, const char *out_dir, const char *hook_path);

/* The specs cdi_refresh wrote for the vendors of CONFIG_DIR (of their kinds,
 * naming ocidec) removed from OUT_DIR, each said: EXIT_OK */
int cdi_unrefresh(const char *config_dir, const char *out_dir);

#endif
