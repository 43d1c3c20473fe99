/* devices.h: a vendor's devices as the host has them (the device layer).
 *
 * What activation, the planner, MIG, CDI and the proc views ask of the
 * host's devices: PCI enumeration of pci_devices vendors (sysfs), the
 * information files of device_uuids vendors (NVIDIA's
 * /proc/driver/nvidia/gpus/BUS/information), the nodes of per_device_nodes
 * patterns, index to minor, PCI addresses, as one value a device
 * (struct device: vendor_devices, which the planner loops over once); and
 * the ID syntax a container
 * names devices in (devices_select: indices, ranges, UUIDs, PCI addresses,
 * modules; a MIG device's name through the resolver its caller passes,
 * activate.c mig.c's: the device layer stays below MIG). It reads the host only;
 * it knows nothing of containers: activate.c decides which value of a
 * container's to read, and reads it through devices_select.
 *
 * One snapshot a run: a vendor's devices are read the first time they are
 * asked for, and every answer after comes from that reading (one
 * container's plan sees one picture of the host, whatever comes or goes
 * meanwhile); a process that serves many containers lets it go between
 * them (devices_forget).
 */
#ifndef OCIDEC_DEVICES_H
#define OCIDEC_DEVICES_H

#include "devices/config.h"

#include <sys/stat.h>

/* What a vendor's devices are, as its keys say (config.h checks that they
 * go together): named here once (vendor_device_kind), asked only in
 * devices.c. A new kind is a new key in the config's schema and a new case
 * here, read into the inventory and given as device values
 * (vendor_devices, device_absent). */
enum device_kind {
	DEVICES_WHOLE,   /* none of the keys below: the features' nodes, all or none */
	DEVICES_NODES,   /* per_device_nodes: a device is the number its nodes' names end in */
	DEVICES_INFO,    /* device_uuids: information files give each device's UUID, PCI address
			  * and minor (NVIDIA's; per_device_nodes its nodes; MIG, device_index = bus) */
	DEVICES_PCI,     /* pci_devices: sysfs's PCI devices, their nodes those of the pci_classes
			  * (AMD's partitions, Gaudi's modules, network interfaces) */
};
enum device_kind vendor_device_kind(const struct vendor *v);
/* Has V MIG devices (mig_minors, with mig_caps and mig_nodes)? */
bool vendor_has_mig(const struct vendor *v);

/* A device by its number, as a device rule names it (the cgroup's, a
 * systemd unit's DeviceAllow=): devcg.h and sdbus.h pass these */
struct devcg_rule {
	char type;       /* 'c' or 'b' */
	unsigned major, minor;
};

/* A selection of a vendor's devices: what a container asks for (activate.c
 * makes it from the value it gives: indices, ranges, UUIDs, PCI addresses,
 * MIG names), what list, inject and cdi are told (selection_parse). Typed
 * once, where it is read: the planner, CDI and the proc views never parse. */
enum sel_kind { SEL_ALL, SEL_NONE, SEL_SOME };
struct mig_instance {
	unsigned long gpu;    /* the GPU's index */
	unsigned gi, ci;      /* its GPU instance and compute instance */
};
struct selection {
	enum sel_kind kind;
	unsigned long *idx;   /* SEL_SOME: the devices' indices, each once */
	size_t n;
	struct mig_instance *mig;  /* MIG devices (with any kind: "none" and a
				    * MIG device gives that device alone) */
	size_t nmig;
};
/* The highest index a selection holds (4096: AMD's and NVIDIA's range) */
enum { SELECT_MAX_INDEX = 4096 };

/* TEXT ("all", "none", or indices "0,2", separated by commas or blanks) as
 * *S: -1 with ERR (EXIT_USAGE) "invalid device selection" for anything
 * else. The indices in the order given, each once. */
int selection_parse(const char *text, struct selection *s, struct oerr *err);
/* S as text ("all", "none", "0,2"; MIG devices "0/1/0"), for the logs */
char *selection_text(const struct selection *s);
/* Is device INDEX in S (SEL_ALL: every one)? */
bool selection_has(const struct selection *s, unsigned long index);
void selection_add(struct selection *s, unsigned long index);
/* The indices set in BITS (N of them), ascending, as S's devices: SEL_SOME,
 * or SEL_NONE when there is none (its MIG devices kept) */
void selection_set(struct selection *s, const bool *bits, size_t n);
static inline bool mig_instance_eq(const struct mig_instance *a, const struct mig_instance *b)
{
	return a->gpu == b->gpu && a->gi == b->gi && a->ci == b->ci;
}
void selection_add_mig(struct selection *s, const struct mig_instance *m);
void selection_free(struct selection *s);
#define _cleanup_selection_ __attribute__((cleanup(selection_free)))

/* Every vendor's snapshot let go: the next question reads the host anew.
 * Every answer given before (vendor_mig_access' list, the devices'
 * UUIDs and network interfaces) is freed with it. */
void devices_forget(void);

/* What one node of AMD KFD's topology says (nodes/N/properties, lines
 * "NAME VALUE" in decimal): the render minor of its DRM render node (0 for
 * a CPU), the GPU's PCI location (bus << 8 | devfn) and domain, its unique
 * ID. */
struct kfd_node {
	unsigned long long render_minor, location_id, domain, unique_id;
	bool has_unique_id;
};
/* TEXT (LEN bytes, any bytes) as a KFD node into *OUT: true when it has
 * drm_render_minor, location_id and domain, each the first line naming it,
 * its value all decimal digits in range; unique_id where it has one. */
bool kfd_properties_parse(const char *text, size_t len, struct kfd_node *out);

/* For each device vendor V's device_uuids files describe ("GPU UUID: U" and
 * "Device Minor: M", NVIDIA's /proc/driver/nvidia/gpus/BUS/information), in
 * the glob's order, which is PCI bus order: FN(U, M, INDEX, ARG), INDEX the
 * device's index (device_index: its minor, or its position among the files
 * with a minor), until FN returns nonzero, which is returned; 0 at the end.
 * U is NULL for a file without one; FILE is the file's path. With
 * pci_devices: each of vendor_pci_devices, FILE "DIR/uevent", MINOR and
 * INDEX its index. */
/* Each "KEY: value" line of the information file FILE (NVIDIA's
 * /proc/driver/nvidia/gpus/BUS/information; 64 KiB read at most) to
 * FN(KEY, VALUE, ARG), VALUE's leading blanks left out: 0, or -1 when it
 * cannot be read */
int info_file_each(const char *file, void (*fn)(const char *key, const char *value, void *arg), void *arg);
int vendor_uuid_each(const struct vendor *v,
		     int (*fn)(const char *file, const char *uuid, int minor, int index, void *arg),
		     void *arg);
/* The directories of V's device_uuids files (NVIDIA's
 * /proc/driver/nvidia/gpus/0000:3b:00.0) of the devices SEL selects (NULL:
 * all; its MIG devices not), added to OUT. */
void vendor_device_dirs(const struct vendor *v, const struct selection *sel, struct strv *out);
/* The PCI addresses (the names of the directories of V's device_uuids
 * files, "0000:3b:00.0") of the devices SEL selects (NULL: all), added to
 * OUT. */
void vendor_device_buses(const struct vendor *v, const struct selection *sel, struct strv *out);
/* The minor of vendor V's device INDEX: INDEX itself, or with device_index
 * = bus the minor of the INDEXth device; -1 when there is none. */
long vendor_index_minor(const struct vendor *v, unsigned long index);
/* The major the kernel gave the character device driver NAMES names
 * ("nvidia|nvidia-frontend": the first of them it has), as /proc/devices
 * lists them, read through the host's /proc (proc_fd); -1 when no loaded
 * driver has any of them. (ocidec system: nodes made by number) */
long char_major(const char *names);
/* The access files of V's MIG instances (mig_caps's
 * gpuN/mig/giG/ciC/access), as the glob gives them; empty without MIG */
const struct strv *vendor_mig_access(const struct vendor *v);
/* The index of the device with UUID (or PCI address) UUID, or -1 */
long vendor_uuid_index(const struct vendor *v, const char *uuid);

/* The indices of vendor V's devices whose nodes exist in its driver root,
 * sorted, each once (*N of them; NULL when none): pci_devices' every
 * device, per_device_nodes' every index (device_index = bus: of the
 * devices those minors are) */
unsigned long *vendor_node_indices(const struct vendor *v, size_t *n);

/* ---- the inventory: a vendor's devices as values ----
 *
 * Whatever a vendor's devices are (nodes by pattern, PCI class devices,
 * information files, AMD's partitions, Gaudi's modules; MIG instances,
 * mig.c's), the planner gets them as one kind of value: a device, its
 * nodes, what names it. It loops over them once and never asks which
 * kind they are. */

/* One node of a device: its path in the driver root ("/dev/nvidia0"), the
 * number the kernel gave it where the device layer knows it (uevent's;
 * mig_minors' minor, MAJOR -1: any), which the driver root's node must then
 * be itself (a character device of that number, no link), and the /proc
 * file that goes with it (a MIG cap's; NULL: none). ABSENT set: the node is
 * required, and a plan without it fails with that text. */
struct device_node {
	char *path;
	long major, minor;   /* MINOR -1: any node there */
	char *label;         /* what the warning about a wrong node names it by
			      * ("MIG cap gpu0/gi1/access"; NULL: its path) */
	char *proc;
	char *absent;
};
/* One device: what a container named (its index), what it is on the host,
 * its nodes. STRICT: none of its nodes (those without ABSENT) there fails
 * the plan (device_absent says why); ERROR: the plan fails with it as soon
 * as the planner reaches the device (a MIG device whose GPU has no minor). */
struct device {
	long index;                 /* -1: unknown (every node "all" finds) */
	long minor;                 /* its nodes' number (-1: none) */
	char *dir;                  /* its information file's or sysfs directory (NULL: none) */
	const char *uuid;           /* (NULL: none) */
	long long bus;              /* its PCI address (-1: none) */
	struct device_node *nodes;
	size_t nnodes;
	const struct strv *netdevs; /* its network interfaces (pci_net; NULL: none) */
	bool strict;
	char *error;
};
struct devices {
	struct device *v;
	size_t n;
};
/* Vendor V's devices that SEL selects (NULL or all: every device whose nodes
 * its driver root, ROOTFD, has; none: none), added to OUT, each with the
 * nodes the driver root should have for it; MIG devices are mig.c's
 * (mig_devices). CONTAINER: a container asks (a device named that is not
 * there fails it: STRICT; a vendor that finds none is said). */
void vendor_devices(const struct vendor *v, int rootfd, const struct selection *sel, bool container,
		    struct devices *out);
/* What the inventory knows of the device whose nodes' number is D's minor
 * (device_uuids vendors: its information file's directory, UUID, PCI
 * address; its index, when D has none) into D */
void device_info(const struct vendor *v, struct device *d);
/* A new device at the end of OUT, its index INDEX (zeroed, minor -1) */
struct device *devices_add(struct devices *out, long index);
/* A node PATH (malloc'd, taken) of MAJOR:MINOR added to D */
struct device_node *device_add_node(struct device *d, char *path, long major, long minor);
void devices_free(struct devices *ds);
#define _cleanup_devices_ __attribute__((cleanup(devices_free)))
/* Does the node the driver root has for N (ST its stat; LINK: it is a
 * symlink) fit what the kernel gave it? Said (V's warning) when not. */
bool device_node_fits(const struct vendor *v, const struct device_node *n, const struct stat *st, bool link);
/* -1 with ERR: why a container that asked for D finds none of its nodes */
int device_absent(const struct vendor *v, const struct device *d, struct oerr *err);

/* The devices VALUE names as vendor V's selection *SEL (SEL_SOME, or
 * SEL_NONE with MIG devices alone): "0,GPU-xxxx,2-3" is 0,1,2,3. Tokens
 * separated by commas or blanks: an index, a range of indices ("0-3",
 * AMD's syntax), a UUID or PCI address (every partition of that GPU; a
 * hex ID of more than 8 digits is a UUID first, as AMD's toolkit takes
 * it), a MIG device's name (MIG(V, TOK, NULL, NULL): 1 when TOK is one,
 * else 0; MIG(V, TOK, &M, ERR) resolves it, 0, or -1 with ERR; MIG NULL:
 * no token is); with MODULE each token a
 * module ID (module_env: the device whose pci_module file says it). Each
 * index once, in order (a bitmap: a value of any length costs what its text
 * does); at most 64 lookups by ID. -1 (ERR): a device V does not have, a
 * range backwards or beyond SELECT_MAX_INDEX, the deadline passed. */
typedef int devices_mig_fn(const struct vendor *v, const char *tok, struct mig_instance *m, struct oerr *err);
int devices_select(const struct vendor *v, const char *value, bool module, devices_mig_fn *mig,
		   struct selection *sel, struct oerr *err);

#endif
