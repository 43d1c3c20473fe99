/* engines.h: what ocidec knows of each container engine, in one place:
 * where its binary and configuration are, which hooks dirs it reads, and
 * what makes it read a changed configuration on a host (the command an
 * operator types). `ocidec install` writes by these facts and
 * `ocidec check` reads by them, so the two never disagree.
 */
#ifndef OCIDEC_ENGINES_H
#define OCIDEC_ENGINES_H

#include <stdbool.h>
#include <stddef.h>

#define HOOKS_DIR_USR "/usr/share/containers/oci/hooks.d"  /* podman's and CRI-O's default */
#define HOOKS_DIR_ETC "/etc/containers/oci/hooks.d"
#define DOCKER_JSON "/etc/docker/daemon.json"
#define CONTAINERD_TOML "/etc/containerd/config.toml"
#define CONTAINERD_DROPIN "/etc/containerd/conf.d/ocidec.toml"
#define PODMAN_DROPIN "/etc/containers/containers.conf.d/ocidec.conf"   /* hooks_dir, for podman */
#define CRIO_DROPIN "/etc/crio/crio.conf.d/99-ocidec.conf"            /* hooks_dir, for CRI-O */
/* an uninstall changed containerd's configuration, which the running
 * containerd has not read (until it restarts): a mark in /run */
#define CTRD_RESTART_MARK "/run/ocidec/containerd-restart"
/* Docker's --gpus runs this name from dockerd's PATH */
#define NVIDIA_HOOK_LINK "/usr/local/bin/nvidia-container-runtime-hook"

/* One engine's facts: a row in its driver's file (engine.h), which
 * gives it to its --runtime words and, with a daemon, as its daemon */
struct engine {
	const char *name;            /* as --runtime names it */
	const char *daemon;          /* its process's name (NULL: podman, no daemon) */
	const char *unit;            /* its systemd unit, its init script's name */
	const char *pidfile;         /* where the daemon records its pid, or NULL */
	const char *const *bins;     /* where its binary may be, in PATH's order */
	/* files and drop-in directories (their *.conf, sorted) that may set
	 * hooks_dir, in the order the engine reads them (a later hooks_dir
	 * replaces an earlier one); NULL: no hooks */
	const char *const *confs;
	const char *hooks_table;     /* the table hooks_dir is in ("engine", "crio.runtime") */
	bool reload_loads_runtimes;  /* SIGHUP makes it read a new runtime (dockerd) */
	/* does its daemon answer on the host root ROOT (NULL: no daemon to ask) */
	bool (*answers)(int root);
	const char *config;          /* its configuration file, where a driver reads it whole (NULL) */
	const struct engine *needs;  /* an engine its unit needs started (dockerd: containerd's), or NULL */
};

/* A stream connected to the first of SOCKS (paths in the host root ROOT,
 * never through a link) that is root's socket and takes the connection (a
 * user's file named so is no daemon), or -1: a driver's answers */
int engine_connect(int root, const char *const socks[]);

/* Is the engine's binary on the host root ROOT (a regular executable)? */
bool engine_installed(int root, const struct engine *e);

/* Does E read the hooks dir DIR on the host root ROOT: where its
 * configuration files (but SKIP, a path, NULL: none) set hooks_dir, does
 * the last that does name DIR; where none does, is DIR its default? */
bool engine_reads_hooks_dir(int root, const struct engine *e, const char *dir, const char *skip);

/* Does any of E's configuration files (but SKIP) set hooks_dir? */
bool engine_sets_hooks_dir(int root, const struct engine *e, const char *skip);

/* The command that makes E on the host root ROOT read its changed
 * configuration (RESTART: a restart; else a reload), as the operator types
 * it there: systemctl where systemd runs the host; else, for a reload,
 * `kill -HUP "$(cat PIDFILE)"`, for a restart `service NAME restart`
 * where the engine has an init script. NULL: no command to give (malloc'd
 * otherwise). */
char *engine_apply_command(int root, const struct engine *e, bool restart);

/* What the running dockerd of the host root ROOT says of itself (its API's
 * /info on root's docker.sock there: Runtimes, DefaultRuntime, CDISpecDirs),
 * or NULL: none answers within 3 s. */
struct cJSON;
struct cJSON *engine_docker_info(int root);

/* The major version of E's binary on the host root ROOT (its --version,
 * run there: the host's own binary and libraries; 10 s at most; the first
 * on PATH, and only one of root's that no one else may write), or -1 */
int engine_version(int root, const struct engine *e);

/* Does E's daemon in the host root ROOT answer on its socket (dockerd's
 * /info; containerd's socket takes a connection)? */
bool engine_answers(int root, const struct engine *e);

/* The ActiveState of E's systemd unit E->unit.SUFFIX ("service",
 * "socket") in STATE (CAP bytes), asked of the host root ROOT's systemd on
 * its private socket (root's); -1: no systemd there, or no answer. */
int engine_unit_state(int root, const struct engine *e, const char *suffix, char *state, size_t cap);

/* Is systemd the host root ROOT's init (/run/systemd/system there)? */
bool host_has_systemd(int root);

/* TEXT (a TOML file) sets hooks_dir (*SET; left alone otherwise): does it
 * name DIR there as a whole quoted string ("DIR" or 'DIR'), the array on
 * one line or continued on the lines after? */
bool conf_hooks_dir_names(const char *text, const char *dir, bool *set);

/* A YAML file's top-level KEY (a line "KEY: VALUE" at column 0, the first
 * one): VALUE, quotes taken off, malloc'd; NULL where there is none, or it
 * is empty, longer than 255 or quoted other than whole. No YAML is parsed:
 * CDI's YAML specs (nvidia-ctk cdi generate's) carry their kind so, and
 * check reads no more of them. */
char *yaml_top_scalar(const char *text, const char *key);

#endif
