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

#include <stddef.h>

/* The drop-in for config VERSION (2 or 3) from DUMP: malloc'd text, or NULL
 * when DUMP has no CRI section (not containerd's dump, or no CRI plugin).
 * *BINARY gets the BinaryName the default runtime had (malloc'd; NULL: none,
 * runc from PATH), which the shim must run instead of runc. */
char *ctrd_dropin(const char *dump, size_t len, int version, const char *name, const char *shim, char **binary);

#endif
