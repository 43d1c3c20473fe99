/* config.h: vendor configs, ocidec(1), VENDOR CONFIGS. One INI file per vendor in a
 * directory; loaded whole and checked before anything acts on it. */
#ifndef OCIDEC_CONFIG_H
#define OCIDEC_CONFIG_H

#include <stdbool.h>

#include "base/util.h"

#define CONFIG_DIR_DEFAULT "/etc/ocidec/ocidec.d"

/* The vendor configs an applet reads without -c: P/etc/ocidec.d when this
 * binary is P/bin/NAME and that directory exists (a relocated install,
 * `ocidec install --prefix P`, which containerd's runtime entry cannot give
 * arguments to), else CONFIG_DIR_DEFAULT. Read through the host's /proc
 * (proc_fd, or /proc/self/exe before proc_open) at the applet's start,
 * before any setns. */
const char *config_dir_default(void);

/* What a feature lists, in the order `list` prints them. */
enum item_kind {
	KIND_DEVICES,
	KIND_BINARIES,
	KIND_LIBRARIES,
	KIND_DIRECTORIES,
	KIND_MISC,       /* key "miscellaneous": single files */
	KIND_IPC,        /* key "ipc": sockets, FIFOs and directories, mounted read-only */
	KIND_IPC_WRITABLE, /* key "ipc_writable": directories mounted read-write where
			    * safe (plan.c: the host's own mount nosuid,nodev), else
			    * as KIND_IPC */
	KIND_COUNT
};
extern const char *const item_kind_key[KIND_COUNT];

/* Selection sources (the keys selection and unprivileged_selection). */
enum { SRC_ENV = 1, SRC_ANNOTATION = 2, SRC_MOUNTS = 4 };
/* "env", "annotation" or "mounts" for one SRC_* bit */
const char *source_name(unsigned src);

struct feature {
	char *name;
	int line;
	struct strv items[KIND_COUNT];
	struct strv include;        /* features this one pulls in */
	int include_line;
	bool libraries32;           /* selected: every selected feature's bare library
				     * names give their 32-bit entries too (compat32) */
	struct strv csv_files;      /* globs of NVIDIA's CSV lists of host files (the .csv
				     * files of Jetson's host-files-for-container.d), read in the
				     * driver root when planned: their items join this
				     * feature's (hostfiles.h) */
	struct strv bus_devices;    /* device paths with "%s" for each selected device's
				     * PCI address (the directory of its device_uuids
				     * file): /dev/dri/by-path/pci-%s-render */
	int bus_devices_line;
};

struct vendor {
	unsigned serial;            /* this load's, unique in the run: what a snapshot
				     * of its devices is kept by (devices.c) */
	char *file;                 /* path of the INI file */
	int line;                   /* line of [vendor] */
	char *name;
	int name_line;
	char *version;              /* NULL: read from version_file, else unknown */
	char *version_file;
	char *activation_flag;
	struct strv driver_feature; /* empty: every feature */
	int driver_feature_line;
	char *driver_root;          /* "/" unless set; no trailing slash except "/" */
	char *driver_container_root; /* where its driver container's root is on the
				     * host (ocidec install --driver-root auto,
				     * container); NULL: none */
	struct strv only_where;     /* the vendor is this platform's only where one of
				     * these paths is in the driver root (WSL2's /dev/dxg) */
	struct strv not_where;      /* ... and none of these (nvidia.ini steps aside
				     * on WSL2 and on a Jetson in CSV mode) */
	int log_level;
	struct strv per_device_nodes; /* patterns with one %u, e.g. "nvidia%u" */
	struct strv device_numbers; /* the nodes `ocidec system` makes, by number:
				     * "NODE:DRIVER:MINOR" (device_number_parse) */
	int device_numbers_line;
	struct strv activation_aliases; /* more env vars that activate, after activation_flag */
	char *activation_value;     /* NULL: the value selects devices; else the one value
				     * (of any source) that activates, giving everything
				     * (NVIDIA's gated features: "enabled") */
	int activation_value_line;
	struct strv only_with;      /* active only beside one of these vendors in the same
				     * container (NVIDIA's gated features: beside a GPU
				     * request); empty: alone too */
	int only_with_line;
	struct strv binary_dirs;    /* directories searched for binaries first (a
				     * driver in /usr/local/nvidia/bin) */
	int binary_dirs_line;
	char *annotation;           /* activates and selects, wins over env; default ocidec.io/NAME */
	char *feature_env;          /* env var naming the features ("all" allowed) */
	char *requirements_env;     /* prefix of the env vars holding the image's
				     * requirements (NVIDIA_REQUIRE_, require.h) */
	char *requirements_disable_env; /* true: no check (NVIDIA_DISABLE_REQUIRE) */
	char *requirements_legacy_env;  /* VERSION: cuda>=MAJOR.MINOR when PREFIX"CUDA"
					 * is unset (CUDA_VERSION) */
	char *cuda_version_library; /* the library whose text gives "cuda" (libcuda.so.1) */
	char *cuda_compat_dir;      /* in the image: CUDA's forward-compatible libcuda
				     * (/usr/local/cuda/compat), preferred when newer */
	char *application_profile;  /* NVIDIA's driver application profile the
				     * container gets (appprofile.h), or NULL */
	bool env_needs_cap_sys_admin; /* env requests only from containers with CAP_SYS_ADMIN */
	bool env_all;               /* "all" in the environment selects every device
				     * (default true; IMEX: false, as NVIDIA's) */
	bool cgroup_devices;        /* allow the devices in the device cgroup (default true) */
	bool missing_driver_start;  /* missing_driver = start: a container asking for the
				     * vendor starts without a driver root, or without
				     * any of its files, warned (default: fails) */
	bool unprivileged_ipc_writable; /* ipc_writable read-write for a container without
					 * CAP_SYS_ADMIN too (default true; install
					 * --tenant-policy kubernetes: false) */
	char *device_uuids;         /* glob of NVIDIA-style information files: UUIDs -> minors */
	struct strv pci_devices;    /* globs of the devices' sysfs directories (PCI addresses):
				     * each one a device, indexed in PCI order, its nodes
				     * the DEVNAMEs of its drm and accel class devices */
	int pci_devices_line;
	struct strv pci_classes;    /* the classes whose devices are its nodes (drm accel) */
	char *pci_uuid;             /* a file in such a directory holding its UUID */
	int pci_uuid_line;
	char *cdi_kind;             /* the CDI spec's kind; default ocidec.io/NAME */
	/* Accelerators beyond PCI functions (issue 37): AMD's compute partitions,
	 * Habana's module IDs, the devices' network interfaces. */
	struct strv partition_devices; /* globs of partitions' directories that are no PCI
				     * function (amdgpu's xcp platform devices), each a
				     * device with the nodes of its pci_classes */
	int partition_devices_line;
	char *partition_topology;   /* KFD's topology nodes directory: its nodes' render
				     * minors group and order the devices as AMD's toolkit */
	char *module_env;           /* a variable naming devices by their pci_module IDs */
	char *pci_module;           /* a file in a device's directory holding its module ID */
	int module_line;
	char *pci_net;              /* a directory in a device's directory whose entries
				     * are its network interfaces (CDI netDevices) */
	int pci_net_line;
	char *proc_view;            /* the driver's proc directory (/proc/driver/nvidia): a
				     * container sees its files and its own devices' entries
				     * (the directories of the device_uuids files below it) */
	char *proc_view_set;        /* "FILE NAME: VALUE": that line of FILE changed there */
	int proc_view_line;
	bool device_index_bus;      /* device_index = bus: index N is the Nth device_uuids
				     * file (PCI bus order, NVML's), its node that file's minor */
	int device_index_line;
	/* Tenant policy: which sources may select devices (SRC_* bits), for a
	 * container with CAP_SYS_ADMIN in its bounding set and for one without;
	 * the features the latter may ask for (NULL: all); where a device plugin
	 * mounts its device list (mounts source). */
	unsigned selection, unprivileged_selection;
	struct strv selection_list, unprivileged_list;
	int selection_line, unprivileged_line;
	struct strv unprivileged_features;   /* empty: all */
	int unprivileged_features_line;
	char *device_list_dir;
	/* NVIDIA MIG (mig.h): the driver's minors file, its capabilities' proc
	 * directory, the map of MIG names, the cap nodes below /dev ("%u": the
	 * minor), the variables asking for the config and monitor caps */
	char *mig_minors, *mig_caps, *mig_map, *mig_nodes;
	char *mig_config_env, *mig_monitor_env;
	char *selinux_device_context; /* relabel: for device nodes (NULL: leave them) */
	char *selinux_file_context;   /* relabel: for everything else (NULL: leave it) */
	struct feature *features;
	size_t nfeatures;
};

/* A vendor file config_load_each could not load (or every file of a
 * directory it could not use): why, and the strings that would activate
 * it, from the lenient scan of config_activation_keys. */
struct broken_vendor {
	struct oerr err;
	struct strv keys;
};

struct config {
	char *dir;
	struct vendor *vendors;
	size_t n;
	struct broken_vendor *broken;  /* config_load_each only */
	size_t nbroken;
};

/* Load DIR/\*.ini in lexical order. On error nothing is kept; err->code is
 * EXIT_USAGE for an invalid file ("FILE:LINE: what"). */
int config_load(struct config *cfg, const char *dir, struct oerr *err);
/* The hook's load: each file on its own. One that cannot be loaded (or
 * all of them, when DIR itself is refused) goes to cfg->broken with its
 * error, so that it fails only the containers that name it; a missing DIR
 * has no vendors. Never fails. */
void config_load_each(struct config *cfg, const char *dir);
void config_free(struct config *cfg);
#define _cleanup_config_ __attribute__((cleanup(config_free)))  /* (on { 0 } or a loaded one) */

/* The hook's idle path: every string whose presence in a container's
 * config.json could activate a vendor of DIR (activation_flag and aliases,
 * the annotation, the device list directory, with their defaults), read
 * leniently with no check at all (a missing DIR: none); -1 when a file
 * cannot be scanned (the strict load then says why). Cheap: no validation,
 * no feature lists. */
int config_activation_keys(const char *dir, struct strv *keys);
/* The same for the directory open at DIRFD: its *.ini names, sorted, into
 * NAMES and, with STATS, each file's fstat as it was read into *STATS
 * (malloc'd, one per name); -1 also when the directory cannot be read. */
struct stat;
int config_activation_keys_at(int dirfd, struct strv *names, struct stat **stats, struct strv *keys);

struct vendor *config_vendor(const struct config *cfg, const char *name);
/* V's log_level raises the logger's threshold (a vendor at work says as
 * much as its config asks for). */
void vendor_log_level(const struct vendor *v);

/* Load DIR, then check that every one of the N vendor NAMES exists (an
 * unknown one is a usage error). The applets' common first step. */
int config_load_named(struct config *cfg, const char *dir, char *const *names, int n,
		      struct oerr *err);
/* Is V among the N NAMES? No names: every vendor is. */
bool vendor_named(const struct vendor *v, char *const *names, int n);
/* DIR/runtime.conf ([runtime] path = /usr/bin/runc): the runtime `ocidec
 * runtime` runs, in *PATH (NULL: no file, the default); -1 (ERR, the file
 * and line) when the file is refused or wrong. */
int config_runtime(const char *dir, char **path, struct oerr *err);
/* The vendor files' rule, for any file a vendor's config makes ocidec
 * trust (its INI files and their directory, runtime.conf, NVIDIA's CSV
 * lists): -1 (ERR, EXIT_USAGE: "WHAT: refused: why") for a file ST that
 * someone other than root could change: group or others may write it, or
 * it is not root's. PARENT: the stat of the directory holding it (NULL:
 * unknown). Checking a file's directory too is the caller's. */
int config_check_owner(const char *what, const struct stat *st, const struct stat *parent, struct oerr *err);
/* One device_numbers entry, "NODE:DRIVER[|DRIVER...]:MINOR": the node
 * NODE in /dev (a name; "%u" once in a per-device one, a per_device_nodes
 * pattern) is the character device of the major /proc/devices gives the
 * first DRIVER the kernel has, minor MINOR (a number; "%u": each device's
 * minor, from device_uuids). */
struct device_number {
	char *node;
	char *drivers;   /* "nvidia|nvidia-frontend" (char_major's NAMES) */
	long minor;      /* -1: "%u" */
};
/* ENTRY split into *OUT (when not NULL; device_number_free): false when
 * it is no such entry */
bool device_number_parse(const char *entry, struct device_number *out);
void device_number_free(struct device_number *d);
/* KIND is a CDI kind, VENDOR/CLASS (nvidia.com/gpu, ocidec.io/demo). */
bool cdi_kind_valid(const char *kind);
struct feature *vendor_feature(const struct vendor *v, const char *name);
/* Is V this platform's: one of its only_where paths (globs) in its driver
 * root, if it has any, and none of its not_where? A vendor without either
 * is; one whose driver root is not there is when it has no only_where
 * (plan_vendor then says the driver is missing). */
bool vendor_here(const struct vendor *v);
/* Another vendor of CFG than V with V's CDI kind that is this platform's
 * (vendor_here), or NULL; *SIBLINGS (when not NULL): whether there is any
 * other of that kind, here or not */
const struct vendor *config_kind_here(const struct config *cfg, const struct vendor *v, bool *siblings);
/* Does V answer the environment variable NAME (its activation_flag or an
 * alias)? */
bool vendor_answers(const struct vendor *v, const char *name);
/* (nvidia-container-cli --root) the driver root of every vendor loaded
 * after it is set that answers VAR (vendor_answers), whatever its file says */
extern struct config_root_override {
	const char *var, *root;
} config_root_override;

/* Mark the features LIST names ("all", or names separated by commas or
 * spaces; NULL: the vendor's driver_feature) and what they include, in
 * SELECTED[nfeatures]. An unknown name is a usage error. */
int vendor_select_features(const struct vendor *v, const char *list, bool *selected,
			   struct oerr *err);

/* Is SET a proc_view_set, "FILE NAME: VALUE" (FILE a name directly in
 * the directory, NAME not empty)? */
bool proc_set_valid(const char *set);
/* Is DIR a proc_view: a directory under /proc/, no glob, no "." or ".."? */
bool proc_view_valid(const char *dir);

/* The vendor file's TEXT (freed) with KEY set to VALUE in its [vendor]
 * section: the key's lines (with their continuation lines) replaced, or
 * one line added after [vendor]; every other byte kept. (install:
 * --driver-root, --tenant-policy) */
char *config_set_vendor_key(char *text, const char *key, const char *value);

#endif
