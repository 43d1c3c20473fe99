/* ctrd.h: containerd's configuration, narrowly: the drop-in that registers
 * a runtime, made from what containerd itself prints of its configuration
 * (`containerd config dump`, go-toml's layout: a [table] header per line,
 * "key = value" lines, each value on its line).
 *
 * containerd 1.x (config version 2) merges an imported file by replacing
 * each plugin's section whole: a drop-in with only its runtime would take
 * away every other CRI setting of the node (the default runtime, sandbox
 * image, registries, CDI, runc's SystemdCgroup) and the CRI plugin would
 * not load. So for version 2 the drop-in carries the node's whole CRI
 * section as containerd printed it, plus the runtime. containerd 2.x
 * (version 3) merges deeply: the runtime's tables alone.
 *
 * The runtime NAME is the default runtime's tables (runc's options:
 * SystemdCgroup and the rest) under a new name, its BinaryName the shim.
 */
#ifndef OCIDEC_CTRD_H
#define OCIDEC_CTRD_H

#include <stdbool.h>
#include <stddef.h>

struct oerr;
struct engine;

/* The drop-in for config VERSION (2 or 3) from DUMP: malloc'd text, or NULL
 * when DUMP has no CRI section (not containerd's dump, or no CRI plugin).
 * *BINARY gets the BinaryName the default runtime had (malloc'd; NULL: none,
 * runc from PATH), which the shim must run instead of runc. */
char *ctrd_dropin(const char *dump, size_t len, int version, const char *name, const char *shim, char **binary);

/* The containerd of the facts G (engines.h: its bins, its config.toml as
 * G->config) is what the functions below ask. */

/* The host's containerd binary, a path inside the host root ROOT (the
 * first of G->bins that is root's), or NULL */
const char *ctrd_binary(int root, const struct engine *g);

/* What the host's containerd makes of config.toml's text TEXT (NULL: there
 * is none): `containerd --config FILE config dump`, run in the host root
 * ROOT (chroot: the host's own binary and libraries), FILE a copy of TEXT
 * beside config.toml (its relative imports resolve the same), removed
 * after. The engine reads its TOML; ocidec reads only the dump's lines.
 * *DUMP malloc'd; -1 with ERR (EXIT_USAGE: no containerd, or it refused). */
int ctrd_dump(int root, const struct engine *g, const char *text, char **dump, size_t *len, struct oerr *err);
/* AS_IS: config.toml itself (TEXT non-NULL: it exists), nothing written */
int ctrd_dump_as(int root, const struct engine *g, const char *text, bool as_is, char **dump, size_t *len,
		 struct oerr *err);

/* TEXT (a drop-in in the dump's layout) with KEY = VALUE (VALUE as TOML
 * writes it: "\"runc\"", "true") in the table TABLE (as its header names
 * it, without the brackets): the key's line replaced where the table has
 * it, else added at the table's end, else the table added at the end; every
 * other line as it was. malloc'd. (install --set-as-default, --enable-cdi) */
char *ctrd_set_key(const char *text, const char *table, const char *key, const char *value);

/* The value of KEY in TABLE of TEXT (as written: "\"runc\"", "true"),
 * malloc'd, or NULL */
char *ctrd_get_key(const char *text, const char *table, const char *key);
/* FRESH (a drop-in ctrd_dropin made, freed) with what the earlier drop-in
 * OLD of runtime NAME set on top of the node's CRI section: NAME as the
 * default runtime, enable_cdi = true (install --set-as-default,
 * --enable-cdi): an install run again keeps them, and check compares like
 * with like. OLD_NAME (NULL: none): the earlier install's runtime name,
 * the default runtime there too: the default follows the rename. */
char *ctrd_carry(char *fresh, const char *old, int version, const char *name, const char *old_name);

/* DROPIN, a version 3 drop-in (containerd 2.x's names), in version 2's
 * names: for a node whose config.toml is still version 2, which containerd
 * 2.x converts whole, with its imports, only when they are of its version
 * (an import of version 3 there leaves the node's CRI settings unread).
 * The runtime's tables and keys are the same under both names. malloc'd. */
char *ctrd_as_version2(const char *dropin);

/* Asks the host's containerd whether config.toml's text CONF (without
 * ocidec's import; NULL: none) importing DROPIN loads, and runs runtime
 * NAME with the binary SHIM (and, DEFAULT, as its default runtime): DROPIN
 * written beside config.toml under a name no imports glob reads, the dump
 * made, both removed. -1 with ERR (EXIT_USAGE) naming what containerd said
 * or what it would not run. CONF_VERSION: config.toml's version (1: its
 * conversion is named in the fix). */
int ctrd_verify(int root, const struct engine *g, const char *conf, int conf_version, const char *dropin,
		const char *name, const char *shim, bool as_default, struct oerr *err);

/* The command that converts a config.toml of version 1 to version 2 with
 * containerd 1.x's own dump, the file's mode kept and its content never
 * readable by others on the way (check's fix, install's refusal) */
#define CTRD_V1_CONVERT                                                                            \
	"(umask 077 && containerd config dump >/etc/containerd/config.toml.new) && "               \
	"chmod --reference=/etc/containerd/config.toml /etc/containerd/config.toml.new && "        \
	"mv /etc/containerd/config.toml.new /etc/containerd/config.toml"

/* The top-level "version = N" of DUMP: a pointer to N in DUMP, or NULL */
const char *ctrd_version(const char *dump, size_t len);

/* The runtimes of DUMP's CRI section (config VERSION): for each, FN(ARG,
 * name, runtime_type, BinaryName) (NULL: not set); *DEFAULT_NAME the
 * default runtime's name (malloc'd, NULL when unset). -1 when DUMP has no
 * CRI section. */
int ctrd_runtimes(const char *dump, size_t len, int version, char **default_name,
		  void (*fn)(void *arg, const char *name, const char *type, const char *binary), void *arg);

/* config.toml's import of the drop-in DROPIN (a path), as text edits
 * that leave every other byte alone: added as one line on top or, where a
 * top-level imports array exists, as its last string (containerd
 * 1.x merges imports in order, a later one replacing a plugin's section:
 * ours must come last); taken out again, the text is as it was. Text with
 * the quoted path already: unchanged. malloc'd. */
char *ctrd_add_import(const char *text, const char *dropin);
char *ctrd_remove_import(const char *text, const char *dropin);
/* A config.toml for a host that has none: VERSION (containerd's own, 2 or
 * 3), the import (taken out again: "version = N\n", which --uninstall
 * removes) */
char *ctrd_new_config(const char *dropin, int version);
/* The top-level line of TEXT whose key is KEY (before the first table), or NULL */
const char *ctrd_top_key(const char *text, const char *key);

#endif
