/* config.c: load and check vendor INI files with inih (ocidec(1), VENDOR CONFIGS).
 *
 * inih hands us one call per "key = value" line, one per continuation line
 * (an indented line after a key) and one per section header. Everything is
 * checked here: a config decides what gets mounted into every container, so
 * an unknown key or a malformed list is an error, never ignored.
 */
#include "devices/config.h"
#include "base/log.h"
#include "safety/rootpath.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_MAX_SIZE (1024 * 1024)
#define ANNOTATION_PREFIX "ocidec.io/"              /* + the vendor's name */
#define DEVICE_LIST_DIR_PREFIX "/var/run/ocidec-devices/"

const char *const item_kind_key[KIND_COUNT] = {
	[KIND_DEVICES] = "devices",
	[KIND_BINARIES] = "binaries",
	[KIND_LIBRARIES] = "libraries",
	[KIND_DIRECTORIES] = "directories",
	[KIND_MISC] = "miscellaneous",
	[KIND_IPC] = "ipc",
	[KIND_IPC_WRITABLE] = "ipc_writable",
};

enum section { SEC_NONE, SEC_VENDOR, SEC_FEATURE };

struct parse {
	const char *file;
	const char *buf;
	struct vendor *v;
	enum section sec;
	struct feature *feat;       /* current [feature.X] */
	struct strv seen;           /* keys seen in the current section */
	struct strv *list;          /* the list being read, over continuation lines */
	char list_key[64];
	int list_line;              /* its last line so far */
	bool need_item;             /* at its start, or after a comma */
	struct oerr *err;
	bool failed;
	int at_line;                /* line_is_continuation's cursor: at_ptr starts line at_line */
	const char *at_ptr;
};

static int perr(struct parse *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct parse *p, int line, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		oerr_usage(p->err, "%s:%d: %s", p->file, line, msg);
	else
		oerr_usage(p->err, "%s: %s", p->file, msg);
	p->failed = true;
	return 0;  /* tells inih to stop */
}

static bool valid_name(const char *s)
{
	if (!*s || !(islower((unsigned char)*s) || isdigit((unsigned char)*s)))
		return false;
	for (; *s; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_' || *s == '-'))
			return false;
	return true;
}

/* A CDI name part: a letter first, a letter or digit last, letters,
 * digits and the characters of MIDDLE between. */
static bool valid_cdi_part(const char *s, size_t n, const char *middle)
{
	if (!n || !isalpha((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(middle, s[i]))
			return false;
	return true;
}

bool cdi_kind_valid(const char *kind)
{
	const char *slash = strchr(kind, '/');

	return slash && valid_cdi_part(kind, (size_t)(slash - kind), "_-.") &&
	       valid_cdi_part(slash + 1, strlen(slash + 1), "_-");
}

static bool valid_env_name(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

/* user:role:type[:level[:categories]] with the characters policies use. */
static bool valid_context(const char *s)
{
	int colons = 0;

	if (!*s || strlen(s) > 255)
		return false;
	for (; *s; s++) {
		if (*s == ':')
			colons++;
		else if (!isalnum((unsigned char)*s) && !strchr("_.,-", *s))
			return false;
	}
	return colons >= 2;
}

static bool line_is_continuation(struct parse *p, int lineno)
{
	/* inih reports lines in order: walk on from the last one asked about
	 * (the hook loads every config for every container) */
	if (!p->at_ptr || lineno < p->at_line) {
		p->at_line = 1;
		p->at_ptr = p->buf;
	}
	for (; p->at_line < lineno && p->at_ptr; p->at_line++) {
		p->at_ptr = strchr(p->at_ptr, '\n');
		if (p->at_ptr)
			p->at_ptr++;
	}
	return p->at_ptr && (*p->at_ptr == ' ' || *p->at_ptr == '\t');
}

/* The selection sources by name, one table for the config keys and the
 * messages. */
static const struct {
	unsigned bit;
	const char *name;
} sources[] = { { SRC_ENV, "env" }, { SRC_ANNOTATION, "annotation" }, { SRC_MOUNTS, "mounts" } };

static unsigned source_of(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(sources); i++)
		if (strcmp(sources[i].name, name) == 0)
			return sources[i].bit;
	return 0;
}

const char *source_name(unsigned src)
{
	for (size_t i = 0; i < ARRAY_SIZE(sources); i++)
		if (sources[i].bit == src)
			return sources[i].name;
	return "?";
}

/* Are S's N bytes all letters, digits or bytes of MORE (none: false)? */
static bool word_of(const char *s, size_t n, const char *more)
{
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && (!s[i] || !strchr(more, s[i])))
			return false;
	return n > 0;
}

bool device_number_parse(const char *entry, struct device_number *out)
{
	const char *c1 = strchr(entry, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	_cleanup_free_ char *name = NULL;
	size_t dl, ml;
	char *pct;

	if (!c2 || strchr(c2 + 1, ':'))
		return false;
	/* NODE: a name in /dev, "%u" once in a device's (checked as "0") */
	name = xstrndup(entry, (size_t)(c1 - entry));
	if ((pct = strstr(name, "%u"))) {
		memmove(pct, pct + 1, strlen(pct));
		*pct = '0';
	}
	if (!word_of(name, strlen(name), "_.+-") || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	/* DRIVER: /proc/devices names, '|' between them */
	dl = (size_t)(c2 - c1 - 1);
	if (!word_of(c1 + 1, dl, "_.+-|") || c1[1] == '|' || c2[-1] == '|' || mem_find(c1 + 1, dl, "||", 2))
		return false;
	/* MINOR: at most 20 bits, the kernel's; "%u" for a device's own */
	ml = strlen(c2 + 1);
	if (pct ? strcmp(c2 + 1, "%u") != 0
		: !ml || ml > 7 || strspn(c2 + 1, "0123456789") != ml || strtoul(c2 + 1, NULL, 10) > 0xfffff)
		return false;
	if (out)
		*out = (struct device_number){ xstrndup(entry, (size_t)(c1 - entry)), xstrndup(c1 + 1, dl),
					       pct ? -1 : (long)strtoul(c2 + 1, NULL, 10) };
	return true;
}

void device_number_free(struct device_number *d)
{
	free(d->node);
	free(d->drivers);
}

/* Check one list item for KEY; return an error text or NULL. */
static const char *item_problem(const char *key, const char *item)
{
	for (const unsigned char *c = (const unsigned char *)item; *c; c++)
		if (*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\'' || *c == '=' || *c == '\\' ||
		    *c == ';' || *c == '#')
			return "has a character that is not allowed in a path or name";
	if (has_dot_component(item))
		return "has a '.' or '..' component";
	if (strcmp(key, "include") == 0 || strcmp(key, "driver_feature") == 0)
		return valid_name(item) ? NULL : "is not a feature name";
	if (strcmp(key, "activation_aliases") == 0)
		return valid_env_name(item) ? NULL : "is not an environment variable name";
	if (strcmp(key, "selection") == 0 || strcmp(key, "unprivileged_selection") == 0)
		return strcmp(item, "none") == 0 || source_of(item)
			       ? NULL : "is not a selection source (env, annotation, mounts, none)";
	if (strcmp(key, "only_with") == 0)
		return valid_name(item) ? NULL : "is not a vendor name";
	if (strcmp(key, "pci_classes") == 0)
		return valid_name(item) ? NULL : "is not a device class's name (drm, accel)";
	if (strcmp(key, "unprivileged_features") == 0)
		return strcmp(item, "all") == 0 || valid_name(item) ? NULL : "is not a feature name";
	if (strcmp(key, "per_device_nodes") == 0) {
		const char *pct = strchr(item, '%');
		if (!pct || pct[1] != 'u' || strchr(pct + 1, '%'))
			return "needs exactly one %u";
		if (strchr(pct, '/'))
			return "must have %u in its last component";
		return NULL;
	}
	if (strcmp(key, "bus_devices") == 0) {
		const char *pct = strchr(item, '%');
		if (item[0] != '/' || !pct || pct[1] != 's' || strchr(pct + 1, '%'))
			return "needs an absolute path with exactly one %s (the device's PCI address)";
		return NULL;
	}
	if (strcmp(key, "device_numbers") == 0)
		return device_number_parse(item, NULL) ? NULL : "is not NODE:DRIVER:MINOR (a name in /dev, its driver's "
								 "name in /proc/devices, a minor or %u)";
	if (strchr(item, '%'))
		return "has a '%'";
	if (strcmp(key, "devices") == 0)
		return NULL;  /* bare names, "dri/card0" or absolute paths */
	if (strcmp(key, "binaries") == 0 || strcmp(key, "libraries") == 0)
		return item[0] == '/' || !strchr(item, '/') ? NULL
			: "must be a bare name or an absolute path";
	return item[0] == '/' ? NULL : "must be an absolute path";
}

/* Split one line of a list (VALUE) on spaces and commas into the list being
 * read. Its lines read as one: "a," then "  b" is fine; empty items (",,",
 * a comma first or last in the whole list) make it malformed. */
static int parse_list(struct parse *p, int line, const char *value)
{
	const char *s = value, *key = p->list_key;
	struct strv *out = p->list;
	bool need_item = p->need_item;

	p->list_line = line;
	while (*s) {
		size_t n;
		char *item;
		const char *problem;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == ',') {
			if (need_item)
				return perr(p, line, "malformed list for '%s': empty item", key);
			need_item = true;
			s++;
			continue;
		}
		if (!*s)
			break;
		n = strcspn(s, " \t,");
		item = xstrndup(s, n);
		problem = item_problem(key, item);
		if (problem) {
			perr(p, line, "malformed list for '%s': '%s' %s", key, item, problem);
			free(item);
			return 0;
		}
		if (!strv_contains(out, item))
			strv_push_owned(out, item);
		else
			free(item);
		need_item = false;
		s += n;
	}
	p->need_item = need_item;
	return 1;
}

static int start_list(struct parse *p, struct strv *list, const char *key, int line,
		      const char *value)
{
	if (!*value)
		return perr(p, line, "key '%s' has an empty list", key);
	p->list = list;
	snprintf(p->list_key, sizeof(p->list_key), "%s", key);
	p->need_item = true;
	return parse_list(p, line, value);
}

/* The list read so far ends here: a comma may not be its last word. */
static int end_list(struct parse *p)
{
	if (p->list && p->need_item)
		perr(p, p->list_line, "malformed list for '%s': empty item", p->list_key);
	p->list = NULL;
	return p->failed ? 0 : 1;
}

void vendor_log_level(const struct vendor *v)
{
	if (v->log_level > log_threshold)
		log_threshold = v->log_level;
}

bool proc_view_valid(const char *dir)
{
	return strncmp(dir, "/proc/", 6) == 0 && dir[6] && dir[6] != '/' && !has_dot_component(dir) &&
	       strcspn(dir, "*?[") == strlen(dir);
}

bool proc_set_valid(const char *set)
{
	const char *sp = strchr(set, ' '), *colon = sp ? strchr(sp, ':') : NULL;

	return sp && sp != set && !memchr(set, '/', (size_t)(sp - set)) && colon && colon > sp + 1;
}

/* ---- the vendor schema: every key, its section, its storage and its check ---- */

/* Where a key's value lives: a string, a list, a bool, or what its check
 * stores itself (ST_OWN) */
enum store { ST_STR, ST_STRV, ST_BOOL, ST_OWN };
enum {
	KEY_ACTIVATION = 1,  /* holds activation strings: the idle scan reads it */
	KEY_GLOB = 2,        /* an absolute path that may be a glob */
	KEY_DIR = 4,         /* trailing slashes dropped */
};
#define NO_LINE UINT16_MAX
struct key_def;
typedef int key_check(struct parse *p, const struct key_def *k, const char *value, int line);
/* A row: KEY in section SEC, its value at OFF in struct vendor ([vendor])
 * or struct feature ([feature.NAME]), the line it was given on at LINE_OFF
 * (or NO_LINE), checked by CHECK (1, or perr's 0) before it is stored */
struct key_def {
	const char *name;
	key_check *check;
	uint16_t off, line_off;
	uint8_t len, sec, flags, store;  /* (enum section, KEY_*, enum store: a row in 24 bytes) */
};

/* The field at OFF of the struct K's section fills */
static void *key_field(const struct parse *p, const struct key_def *k, size_t off)
{
	return (char *)(k->sec == SEC_VENDOR ? (void *)p->v : (void *)p->feat) + off;
}

static int c_name(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	return valid_name(value) ? 1 : perr(p, line, "invalid vendor name '%s' (use a-z, 0-9, '_', '-')", value);
}

static int c_version(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	if (!*value || strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != strlen(value))
		return perr(p, line, "invalid version '%s'", value);
	return 1;
}

/* version_file, device_uuids (a glob), cuda_compat_dir, mig_minors,
 * mig_caps, mig_map: an absolute path */
static int c_abs_path(struct parse *p, const struct key_def *k, const char *value, int line)
{
	bool glob = k->flags & KEY_GLOB;

	if (value[0] != '/' || has_dot_component(value) || (!glob && strpbrk(value, "*?[")))
		return perr(p, line, "%s must be an absolute path%s", k->name, glob ? " (glob)" : "");
	return 1;
}

/* pci_uuid, pci_module, pci_net: a file's name in a device's sysfs directory */
static int c_pci_uuid(struct parse *p, const struct key_def *k, const char *value, int line)
{
	return valid_name(value) ? 1 :
		perr(p, line, "%s must be a file name in the device's directory (a-z, 0-9, '_', '-')", k->name);
}

/* cuda_version_library: a bare library name, as the cache has it */
static int c_library_name(struct parse *p, const struct key_def *k, const char *value, int line)
{
	if (!*value || strchr(value, '/') || item_problem("libraries", value))
		return perr(p, line, "%s must be a library's name (libcuda.so.1)", k->name);
	return 1;
}

/* activation_flag, feature_env, requirements_env and its kin: an
 * environment variable's name */
static int c_env_name(struct parse *p, const struct key_def *k, const char *value, int line)
{
	if (!*value && strcmp(k->name, "activation_flag") == 0)
		return perr(p, line, "activation_flag is empty");
	if (!valid_env_name(value))
		return perr(p, line, "%s '%s' is not an environment variable name", k->name, value);
	return 1;
}

/* activation_value: one word, as a variable's value gives it ("enabled");
 * never a value that says something already (void, all, none) */
static int c_activation_value(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	if (!valid_name(value) || strcmp(value, "void") == 0 || strcmp(value, "all") == 0 || strcmp(value, "none") == 0)
		return perr(p, line, "activation_value must be one word (a-z, 0-9, '_', '-'), not void, all or none");
	return 1;
}

/* mig_nodes: a node's path below /dev with one %u (the cap's minor) */
static int c_mig_nodes(struct parse *p, const struct key_def *k, const char *value, int line)
{
	const char *pc = strchr(value, '%');

	(void)k;
	if (value[0] == '/' || has_dot_component(value) || !pc || pc[1] != 'u' || strchr(pc + 1, '%') ||
	    strpbrk(value, "*?["))
		return perr(p, line, "mig_nodes must be a path below /dev with one %%u");
	return 1;
}

static int c_driver_root(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	if (value[0] != '/' || has_dot_component(value))
		return perr(p, line, "driver_root must be an absolute path");
	return 1;
}

/* where the vendor's driver container puts its root on the host: not / */
static int c_driver_container_root(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	if (value[0] != '/' || !value[1] || has_dot_component(value))
		return perr(p, line, "driver_container_root must be an absolute path, not /");
	return 1;
}

static int c_annotation(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	if (!*value || strpbrk(value, " \t"))
		return perr(p, line, "annotation must be one key without spaces");
	return 1;
}

/* selinux_device_context, selinux_file_context */
static int c_context(struct parse *p, const struct key_def *k, const char *value, int line)
{
	if (!valid_context(value))
		return perr(p, line, "%s '%s' is not an SELinux context (user:role:type:level)", k->name, value);
	return 1;
}

static int c_device_list_dir(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	if (value[0] != '/' || has_dot_component(value) || strspn(value, "/") == strlen(value))
		return perr(p, line, "device_list_dir must be an absolute path below /");
	return 1;
}

static int c_cdi_kind(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	if (!cdi_kind_valid(value))
		return perr(p, line, "cdi_kind '%s' is not a CDI kind (VENDOR/CLASS, such as nvidia.com/gpu)", value);
	return 1;
}

static int c_proc_view(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	return proc_view_valid(value) ? 1 : perr(p, line, "proc_view must be a directory under /proc (no glob)");
}

static int c_proc_view_set(struct parse *p, const struct key_def *k, const char *value, int line)
{
	(void)k;
	return proc_set_valid(value) ? 1 :
		perr(p, line, "proc_view_set must be FILE NAME: VALUE (a file directly in proc_view)");
}

/* The ST_OWN keys: a word stored as what it means */
static int c_device_index(struct parse *p, const struct key_def *k, const char *value, int line)
{
	if (strcmp(value, "minor") != 0 && strcmp(value, "bus") != 0)
		return perr(p, line, "device_index must be minor or bus");
	*(bool *)key_field(p, k, k->off) = strcmp(value, "bus") == 0;
	return 1;
}

static int c_missing_driver(struct parse *p, const struct key_def *k, const char *value, int line)
{
	if (strcmp(value, "fail") != 0 && strcmp(value, "start") != 0)
		return perr(p, line, "missing_driver must be fail or start");
	*(bool *)key_field(p, k, k->off) = strcmp(value, "start") == 0;
	return 1;
}

static int c_log_level(struct parse *p, const struct key_def *k, const char *value, int line)
{
	int l = log_level_parse(value);

	if (l < 0)
		return perr(p, line, "log_level must be error, warn, info or debug");
	*(int *)key_field(p, k, k->off) = l;
	return 1;
}

/* The schema: the loader reads each key into its field, the idle scan
 * reads the KEY_ACTIVATION ones ("name" gives the defaults), vendor_free
 * frees what the rows hold, and test/docs.bats finds each in the man page. */
#define ROW(sec, type, name, flags, store, field, line, check)                                        \
	{ name, check, offsetof(struct type, field), line, sizeof(name) - 1, sec, flags, store }
#define V(name, flags, store, field, check) ROW(SEC_VENDOR, vendor, name, flags, store, field, NO_LINE, check)
#define VL(name, flags, store, field, line, check)                                                    \
	ROW(SEC_VENDOR, vendor, name, flags, store, field, offsetof(struct vendor, line), check)
#define F(name, store, field) ROW(SEC_FEATURE, feature, name, 0, store, field, NO_LINE, NULL)
#define FL(name, store, field, line) ROW(SEC_FEATURE, feature, name, 0, store, field, offsetof(struct feature, line), NULL)
_Static_assert(sizeof(struct vendor) < NO_LINE && sizeof(struct feature) < NO_LINE, "a field's offset in 16 bits");
static const struct key_def schema[] = {
	VL("name", KEY_ACTIVATION, ST_STR, name, name_line, c_name),
	V("version", 0, ST_STR, version, c_version),
	V("version_file", 0, ST_STR, version_file, c_abs_path),
	V("activation_flag", KEY_ACTIVATION, ST_STR, activation_flag, c_env_name),
	V("activation_aliases", KEY_ACTIVATION, ST_STRV, activation_aliases, NULL),
	VL("activation_value", 0, ST_STR, activation_value, activation_value_line, c_activation_value),
	VL("only_with", 0, ST_STRV, only_with, only_with_line, NULL),
	V("annotation", KEY_ACTIVATION, ST_STR, annotation, c_annotation),
	V("device_list_dir", KEY_ACTIVATION | KEY_DIR, ST_STR, device_list_dir, c_device_list_dir),
	VL("selection", 0, ST_STRV, selection_list, selection_line, NULL),
	VL("unprivileged_selection", 0, ST_STRV, unprivileged_list, unprivileged_line, NULL),
	VL("unprivileged_features", 0, ST_STRV, unprivileged_features, unprivileged_features_line, NULL),
	V("env_needs_cap_sys_admin", 0, ST_BOOL, env_needs_cap_sys_admin, NULL),
	V("env_all", 0, ST_BOOL, env_all, NULL),
	V("feature_env", 0, ST_STR, feature_env, c_env_name),
	V("requirements_env", 0, ST_STR, requirements_env, c_env_name),
	V("requirements_disable_env", 0, ST_STR, requirements_disable_env, c_env_name),
	V("requirements_legacy_env", 0, ST_STR, requirements_legacy_env, c_env_name),
	V("cuda_version_library", 0, ST_STR, cuda_version_library, c_library_name),
	V("cuda_compat_dir", 0, ST_STR, cuda_compat_dir, c_abs_path),
	V("application_profile", 0, ST_STR, application_profile, c_abs_path),
	VL("driver_feature", 0, ST_STRV, driver_feature, driver_feature_line, NULL),
	V("driver_root", KEY_DIR, ST_STR, driver_root, c_driver_root),
	V("driver_container_root", KEY_DIR, ST_STR, driver_container_root, c_driver_container_root),
	V("only_where", 0, ST_STRV, only_where, NULL),
	V("not_where", 0, ST_STRV, not_where, NULL),
	V("per_device_nodes", 0, ST_STRV, per_device_nodes, NULL),
	VL("device_numbers", 0, ST_STRV, device_numbers, device_numbers_line, NULL),
	VL("binary_dirs", 0, ST_STRV, binary_dirs, binary_dirs_line, NULL),
	VL("device_index", 0, ST_OWN, device_index_bus, device_index_line, c_device_index),
	V("device_uuids", KEY_GLOB, ST_STR, device_uuids, c_abs_path),
	VL("pci_devices", 0, ST_STRV, pci_devices, pci_devices_line, NULL),
	VL("pci_uuid", 0, ST_STR, pci_uuid, pci_uuid_line, c_pci_uuid),
	V("pci_classes", 0, ST_STRV, pci_classes, NULL),
	V("mig_minors", 0, ST_STR, mig_minors, c_abs_path),
	V("mig_caps", 0, ST_STR, mig_caps, c_abs_path),
	V("mig_map", 0, ST_STR, mig_map, c_abs_path),
	V("mig_nodes", 0, ST_STR, mig_nodes, c_mig_nodes),
	V("mig_config_env", 0, ST_STR, mig_config_env, c_env_name),
	V("mig_monitor_env", 0, ST_STR, mig_monitor_env, c_env_name),
	V("cgroup_devices", 0, ST_BOOL, cgroup_devices, NULL),
	V("missing_driver", 0, ST_OWN, missing_driver_start, c_missing_driver),
	V("unprivileged_ipc_writable", 0, ST_BOOL, unprivileged_ipc_writable, NULL),
	VL("proc_view", KEY_DIR, ST_STR, proc_view, proc_view_line, c_proc_view),
	V("proc_view_set", 0, ST_STR, proc_view_set, c_proc_view_set),
	V("cdi_kind", 0, ST_STR, cdi_kind, c_cdi_kind),
	/* issue 37: partitions, module IDs, network interfaces */
	VL("partition_devices", 0, ST_STRV, partition_devices, partition_devices_line, NULL),
	V("partition_topology", 0, ST_STR, partition_topology, c_abs_path),
	V("module_env", KEY_ACTIVATION, ST_STR, module_env, c_env_name),
	VL("pci_module", 0, ST_STR, pci_module, module_line, c_pci_uuid),
	VL("pci_net", 0, ST_STR, pci_net, pci_net_line, c_pci_uuid),
	V("selinux_device_context", 0, ST_STR, selinux_device_context, c_context),
	V("selinux_file_context", 0, ST_STR, selinux_file_context, c_context),
	V("log_level", 0, ST_OWN, log_level, c_log_level),
	F("devices", ST_STRV, items[KIND_DEVICES]),
	F("binaries", ST_STRV, items[KIND_BINARIES]),
	F("libraries", ST_STRV, items[KIND_LIBRARIES]),
	F("directories", ST_STRV, items[KIND_DIRECTORIES]),
	F("miscellaneous", ST_STRV, items[KIND_MISC]),
	F("ipc", ST_STRV, items[KIND_IPC]),
	F("ipc_writable", ST_STRV, items[KIND_IPC_WRITABLE]),
	FL("include", ST_STRV, include, include_line),
	FL("bus_devices", ST_STRV, bus_devices, bus_devices_line),
	F("csv_files", ST_STRV, csv_files),
	F("libraries32", ST_BOOL, libraries32),
};
#undef ROW
#undef V
#undef VL
#undef F
#undef FL

/* The row K's value VALUE (given on LINE) checked and stored: 1, or
 * perr's 0 (a list's first line: its items follow) */
static int key_set(struct parse *p, const struct key_def *k, const char *value, int line)
{
	void *field = key_field(p, k, k->off);

	if (k->line_off != NO_LINE)
		*(int *)key_field(p, k, k->line_off) = line;
	if (k->store == ST_STRV)
		return start_list(p, field, k->name, line, value);
	if (k->store == ST_BOOL) {
		if (strcmp(value, "true") == 0 || strcmp(value, "yes") == 0)
			*(bool *)field = true;
		else if (strcmp(value, "false") == 0 || strcmp(value, "no") == 0)
			*(bool *)field = false;
		else
			return perr(p, line, "%s must be true or false", k->name);
		return 1;
	}
	if (!k->check(p, k, value, line))
		return 0;
	if (k->store == ST_STR) {
		size_t n = strlen(value);

		while ((k->flags & KEY_DIR) && n > 1 && value[n - 1] == '/')
			n--;
		free(*(char **)field);
		*(char **)field = xstrndup(value, n);
	}
	return 1;
}

/* What the rows of section SEC hold in BASE (a struct vendor or feature), freed */
static void fields_free(void *base, enum section sec)
{
	for (size_t i = 0; i < ARRAY_SIZE(schema); i++) {
		void *field = (char *)base + schema[i].off;

		if (schema[i].sec != sec)
			continue;
		if (schema[i].store == ST_STR)
			free(*(char **)field);
		else if (schema[i].store == ST_STRV)
			strv_free(field);
	}
}

/* KEY (its first N bytes) of section SEC in the schema, or NULL */
static const struct key_def *key_find(enum section sec, const char *key, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(schema); i++)
		if (schema[i].len == n && schema[i].sec == sec && memcmp(schema[i].name, key, n) == 0)
			return &schema[i];
	return NULL;
}

static int on_section(struct parse *p, const char *section, int line)
{
	struct vendor *v = p->v;

	if (!end_list(p))
		return 0;
	strv_free(&p->seen);
	if (strcmp(section, "vendor") == 0) {
		if (v->line)
			return perr(p, line, "duplicate section [vendor]");
		v->line = line;
		p->sec = SEC_VENDOR;
		return 1;
	}
	if (strncmp(section, "feature.", 8) == 0) {
		const char *name = section + 8;
		if (!valid_name(name))
			return perr(p, line, "invalid feature name in [%s] (use a-z, 0-9, '_', '-')", section);
		if (vendor_feature(v, name))
			return perr(p, line, "duplicate section [%s]", section);
		v->features = xreallocarray(v->features, v->nfeatures + 1, sizeof(*v->features));
		p->feat = &v->features[v->nfeatures++];
		memset(p->feat, 0, sizeof(*p->feat));
		p->feat->name = xstrdup(name);
		p->feat->line = line;
		p->sec = SEC_FEATURE;
		return 1;
	}
	return perr(p, line, "unknown section [%s]", section);
}

static int on_line(void *user, const char *section, const char *key, const char *value,
		   int line)
{
	struct parse *p = user;
	const struct key_def *k;

	if (!key)
		return on_section(p, section, line);
	if (p->sec == SEC_NONE)
		return perr(p, line, "key '%s' outside a section", key);
	if (line_is_continuation(p, line)) {
		if (!p->list)
			return perr(p, line, "key '%s' takes one value; only lists continue on indented lines", key);
		return parse_list(p, line, value);
	}
	if (!end_list(p))
		return 0;
	if (strv_contains(&p->seen, key))
		return perr(p, line, "duplicate key '%s'", key);
	strv_push(&p->seen, key);
	k = key_find(p->sec, key, strlen(key));
	if (k)
		return key_set(p, k, value, line);
	if (p->sec == SEC_VENDOR)
		return perr(p, line, "unknown key '%s' in [vendor]", key);
	return perr(p, line, "unknown key '%s' in [feature.%s]", key, p->feat->name);
}

static void vendor_free(struct vendor *v)
{
	free(v->file);
	fields_free(v, SEC_VENDOR);
	for (size_t i = 0; i < v->nfeatures; i++) {
		free(v->features[i].name);
		fields_free(&v->features[i], SEC_FEATURE);
	}
	free(v->features);
	memset(v, 0, sizeof(*v));
}

int config_load_named(struct config *cfg, const char *dir, char *const *names, int n,
		      struct oerr *err)
{
	if (config_load(cfg, dir, err) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!config_vendor(cfg, names[i])) {
			config_free(cfg);
			return oerr_usage(err, "no vendor '%s' in %s (see %s --help)", names[i], dir, log_prog);
		}
	}
	return 0;
}

bool vendor_named(const struct vendor *v, char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], v->name) == 0)
			return true;
	return n == 0;
}

struct feature *vendor_feature(const struct vendor *v, const char *name)
{
	for (size_t i = 0; i < v->nfeatures; i++)
		if (strcmp(v->features[i].name, name) == 0)
			return &v->features[i];
	return NULL;
}

static unsigned sources_of(const struct strv *l)
{
	unsigned m = 0;

	for (size_t i = 0; i < l->n; i++)
		m |= source_of(l->v[i]);
	return m;
}

/* Whole-file checks, once inih is through. */
/* The keys of devices beyond PCI functions (issue 37), checked together:
 * each needs pci_devices, partitions their topology, a module variable its
 * file; 1, or perr's 0 */
static int check_beyond_pci(struct parse *p, struct vendor *v)
{
	if ((v->partition_devices.n || v->partition_topology || v->pci_module || v->pci_net) && !v->pci_devices.n)
		return perr(p, v->partition_devices.n ? v->partition_devices_line : v->pci_module ? v->module_line
			    : v->pci_net ? v->pci_net_line : v->line,
			    "partition_devices, partition_topology, pci_module and pci_net need pci_devices "
			    "(the GPUs they belong to)");
	if (v->partition_devices.n && !v->partition_topology)
		return perr(p, v->partition_devices_line, "partition_devices needs partition_topology (what says "
			    "which GPU a partition is of)");
	for (size_t i = 0; i < v->partition_devices.n; i++)
		if (v->partition_devices.v[i][0] != '/')
			return perr(p, v->partition_devices_line, "partition_devices: '%s' is not an absolute path (glob)",
				    v->partition_devices.v[i]);
	if (!v->module_env != !v->pci_module)
		return perr(p, v->module_line ? v->module_line : v->line, "module_env and pci_module go together "
			    "(the variable and the file of each device holding the ID it names)");
	if (v->module_env && (strcmp(v->module_env, v->activation_flag) == 0 ||
			      strv_contains(&v->activation_aliases, v->module_env)))
		return perr(p, v->module_line, "module_env %s is also an activation variable: it names modules, "
			    "not indices", v->module_env);
	return 1;
}

static int vendor_check(struct parse *p)
{
	struct vendor *v = p->v;

	if (!v->line)
		return perr(p, 1, "no [vendor] section");
	if (!v->activation_flag)
		return perr(p, v->line, "[vendor] has no activation_flag");
	for (size_t i = 0; i < v->driver_feature.n; i++)
		if (!vendor_feature(v, v->driver_feature.v[i]))
			return perr(p, v->driver_feature_line, "driver_feature names unknown feature '%s'",
				    v->driver_feature.v[i]);
	for (size_t f = 0; f < v->nfeatures; f++)
		for (size_t i = 0; i < v->features[f].include.n; i++)
			if (!vendor_feature(v, v->features[f].include.v[i]))
				return perr(p, v->features[f].include_line,
					    "include names unknown feature '%s'", v->features[f].include.v[i]);
	for (size_t i = 0; i < v->unprivileged_features.n; i++)
		if (strcmp(v->unprivileged_features.v[i], "all") != 0 &&
		    !vendor_feature(v, v->unprivileged_features.v[i]))
			return perr(p, v->unprivileged_features_line,
				    "unprivileged_features names unknown feature '%s'", v->unprivileged_features.v[i]);
	if (v->device_index_bus && !v->device_uuids)
		return perr(p, v->device_index_line, "device_index = bus needs device_uuids (the files in "
			    "bus order that give each device's minor)");
	if ((v->mig_minors || v->mig_caps || v->mig_nodes || v->mig_map || v->mig_config_env || v->mig_monitor_env) &&
	    !(v->mig_minors && v->mig_caps && v->mig_nodes && v->device_uuids && v->per_device_nodes.n))
		return perr(p, v->line, "MIG needs mig_minors, mig_caps and mig_nodes together, with device_uuids "
			    "and per_device_nodes (the GPUs)");
	for (size_t i = 0; i < v->device_numbers.n; i++) {
		struct device_number d;
		bool ok;

		device_number_parse(v->device_numbers.v[i], &d);
		ok = d.minor >= 0 || (v->device_uuids && strv_contains(&v->per_device_nodes, d.node));
		device_number_free(&d);
		if (!ok)
			return perr(p, v->device_numbers_line, "device_numbers: %s: a node with %%u must be one of "
				    "per_device_nodes, with device_uuids (what gives each device's minor)",
				    v->device_numbers.v[i]);
	}
	if (v->pci_devices.n && (v->device_uuids || v->per_device_nodes.n))
		return perr(p, v->pci_devices_line, "pci_devices finds the devices and their nodes itself: "
			    "not with device_uuids or per_device_nodes");
	if (v->pci_devices.n && !v->pci_classes.n) {
		strv_push(&v->pci_classes, "drm");
		strv_push(&v->pci_classes, "accel");
	}
	if (v->activation_value && (v->per_device_nodes.n || v->device_uuids || v->pci_devices.n))
		return perr(p, v->activation_value_line, "activation_value selects no device: not with "
			    "per_device_nodes, device_uuids or pci_devices (its features give everything)");
	if (v->pci_uuid && !v->pci_devices.n)
		return perr(p, v->pci_uuid_line, "pci_uuid needs pci_devices (the directories it is in)");
	if (!check_beyond_pci(p, v))
		return 0;
	for (size_t f = 0; f < v->nfeatures; f++)
		if (v->features[f].bus_devices.n && !v->device_uuids && !v->pci_devices.n)
			return perr(p, v->features[f].bus_devices_line, "bus_devices needs device_uuids or "
				    "pci_devices (what gives the devices' PCI addresses)");
	for (size_t i = 0; i < v->binary_dirs.n; i++)
		if (has_dot_component(v->binary_dirs.v[i]))  /* (the list's parser wants them absolute) */
			return perr(p, v->binary_dirs_line, "binary_dirs: %s has a . or .. component", v->binary_dirs.v[i]);
	if (!v->driver_root)
		v->driver_root = xstrdup("/");
	if (config_root_override.root && vendor_answers(v, config_root_override.var)) {
		free(v->driver_root);
		v->driver_root = xstrdup(config_root_override.root);
	}
	/* the tenant policy: by default every source, for everyone (a device
	 * plugin's /dev/null mounts need a hostPath: no pod makes them) */
	v->selection = v->selection_line ? sources_of(&v->selection_list) : SRC_MOUNTS | SRC_ANNOTATION | SRC_ENV;
	v->unprivileged_selection = v->unprivileged_line ? sources_of(&v->unprivileged_list) : v->selection;
	if (v->env_needs_cap_sys_admin)
		v->unprivileged_selection &= ~(unsigned)SRC_ENV;
	if (v->unprivileged_selection & ~v->selection)
		return perr(p, v->unprivileged_line,
			    "unprivileged_selection names a source that selection does not");
	return 1;
}

/* (config.h) In a user namespace other than the initial one (rootless
 * podman runs its hooks as uid 0 of one), the host's root shows as the
 * overflow uid, which is any unmapped user: owned_by_root decides. */
int config_check_owner(const char *what, const struct stat *st, const struct stat *parent, struct oerr *err)
{
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return oerr_usage(err, "%s: refused: writable by group or others (mode %04o)", what,
				  (unsigned)(st->st_mode & 07777));
	if (geteuid() == 0 && !owned_by_root(st, parent))
		return oerr_usage(err, "%s: refused: owned by uid %u, not root%s", what, (unsigned)st->st_uid,
				  st->st_uid == overflow_uid() && !in_initial_userns()
					  ? " (the overflow uid, any user here, in a directory others may write)" : "");
	return 0;
}

static int load_file(struct config *cfg, int dirfd, const char *name, struct oerr *err)
{
	_cleanup_free_ char *path = path_join_root(cfg->dir, name);
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	struct parse p = { .file = path, .err = err };
	struct vendor v = { .log_level = LOG_WARN, .cgroup_devices = true, .env_all = true,
			    .unprivileged_ipc_writable = true };
	struct stat st, ds;
	size_t len;
	int r;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {  /* a config that cannot be read is a config error, exit 2 */
		oerr_set(err, errno, "%s: open", path);
		err->code = EXIT_USAGE;
		return -1;
	}
	if (fstat(fd, &st) < 0)
		return oerr_set(err, errno, "%s: stat", path);
	if (!S_ISREG(st.st_mode))
		return oerr_usage(err, "%s: not a regular file", path);
	if (fstat(dirfd, &ds) < 0)
		return oerr_set(err, errno, "%s: stat", cfg->dir);
	if (config_check_owner(path, &st, &ds, err) < 0)
		return -1;
	if (read_fd_all(fd, CONFIG_MAX_SIZE, &buf, &len, err) < 0)
		return oerr_prefix(err, "%s", path);
	if (strlen(buf) != len)
		return oerr_usage(err, "%s: contains a NUL byte", path);

	p.buf = buf;
	p.v = &v;
	r = ini_parse_string(buf, on_line, &p);
	if (!p.failed && r > 0)
		perr(&p, r, "malformed line (expected [section] or key = value)");
	else if (!p.failed && r < 0)
		oerr_set(err, ENOMEM, "%s: parse", path), p.failed = true;
	if (!p.failed && end_list(&p))
		vendor_check(&p);
	strv_free(&p.seen);
	if (p.failed) {
		vendor_free(&v);
		return -1;
	}
	v.file = xstrdup(path);
	if (!v.name) {
		v.name = xstrndup(name, strlen(name) - 4);
		v.name_line = v.line;
		if (!valid_name(v.name)) {
			oerr_usage(err, "%s:%d: file name gives invalid vendor name '%s'; set name =",
				   path, v.line, v.name);
			vendor_free(&v);
			return -1;
		}
	}
	if (!v.annotation)
		v.annotation = xconcat(ANNOTATION_PREFIX, v.name);
	if (!v.cdi_kind)
		v.cdi_kind = xconcat(ANNOTATION_PREFIX, v.name);
	if (!v.device_list_dir)
		v.device_list_dir = xconcat(DEVICE_LIST_DIR_PREFIX, v.name);
	for (size_t i = 0; i < cfg->n; i++) {
		if (strcmp(cfg->vendors[i].name, v.name) == 0) {
			oerr_usage(err, "%s:%d: vendor '%s' is already defined in %s", path,
				   v.name_line, v.name, cfg->vendors[i].file);
			vendor_free(&v);
			return -1;
		}
	}
	static unsigned serial;

	v.serial = ++serial;
	cfg->vendors = xreallocarray(cfg->vendors, cfg->n + 1, sizeof(*cfg->vendors));
	cfg->vendors[cfg->n++] = v;
	return 0;
}

/* The *.ini names in DIRFD (no dot files), sorted: the files a config
 * directory holds, for the strict load and the idle path's scan alike. */
static void push_ini(const char *name, void *arg)
{
	size_t n = strlen(name);

	if (name[0] != '.' && n > 4 && strcmp(name + n - 4, ".ini") == 0)
		strv_push(arg, name);
}

static int ini_names(int dirfd, struct strv *names)
{
	if (dir_each(dirfd, push_ini, names) < 0)
		return -1;
	strv_sort(names);
	return 0;
}

static int file_activation_keys(int dirfd, const char *name, struct strv *keys, char **buf, size_t *cap,
				struct stat *st);

/* A file config_load_each could not load: ERR, and the keys that name it */
static void push_broken(struct config *cfg, int dirfd, const char *name, const struct oerr *err,
			char **buf, size_t *cap)
{
	struct broken_vendor *b;

	cfg->broken = xrealloc(cfg->broken, (cfg->nbroken + 1) * sizeof(*cfg->broken));
	b = &cfg->broken[cfg->nbroken++];
	memset(b, 0, sizeof(*b));
	b->err = *err;
	if (name)
		file_activation_keys(dirfd, name, &b->keys, buf, cap, NULL);
}

/* EACH: a file that fails goes to cfg->broken (a directory that fails
 * takes every file with it) and the load goes on; a missing DIR has no
 * vendors. Otherwise the first failure fails the load. */
static int load_dir(struct config *cfg, const char *dir, bool each, struct oerr *err)
{
	_cleanup_close_ int dirfd = -1;
	struct strv names = { 0 };
	struct stat st, ps;
	char *buf = NULL;
	size_t cap = 0;

	memset(cfg, 0, sizeof(*cfg));
	cfg->dir = xstrdup(dir);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		if (each && errno == ENOENT)
			return 0;
		oerr_set(err, errno, "config directory %s", dir);
		err->code = EXIT_USAGE;
		goto bad_dir;
	}
	if (fstat(dirfd, &st) < 0 || config_check_owner(dir, &st, fstatat(dirfd, "..", &ps, 0) == 0 ? &ps : NULL, err) < 0) {
		if (err->code != EXIT_USAGE)
			oerr_set(err, errno, "%s: stat", dir);
		goto bad_dir;
	}
	if (ini_names(dirfd, &names) < 0) {
		oerr_set(err, errno, "config directory %s", dir);
		goto bad_dir;
	}
	for (size_t i = 0; i < names.n; i++) {
		if (load_file(cfg, dirfd, names.v[i], err) == 0)
			continue;
		if (!each)
			goto bad;
		push_broken(cfg, dirfd, names.v[i], err, &buf, &cap);
	}
	free(buf);
	strv_free(&names);
	return 0;
bad_dir:
	if (each) {
		if (dirfd >= 0)
			ini_names(dirfd, &names);
		for (size_t i = 0; i < names.n; i++)
			push_broken(cfg, dirfd, names.v[i], err, &buf, &cap);
		if (!names.n)
			push_broken(cfg, dirfd, NULL, err, &buf, &cap);
		free(buf);
		strv_free(&names);
		return 0;
	}
bad:
	free(buf);
	strv_free(&names);
	config_free(cfg);
	return -1;
}

int config_load(struct config *cfg, const char *dir, struct oerr *err)
{
	return load_dir(cfg, dir, false, err);
}

void config_load_each(struct config *cfg, const char *dir)
{
	struct oerr err;

	load_dir(cfg, dir, true, &err);
}

void config_free(struct config *cfg)
{
	for (size_t i = 0; i < cfg->n; i++)
		vendor_free(&cfg->vendors[i]);
	for (size_t i = 0; i < cfg->nbroken; i++)
		strv_free(&cfg->broken[i].keys);
	free(cfg->broken);
	free(cfg->vendors);
	free(cfg->dir);
	memset(cfg, 0, sizeof(*cfg));
}

struct vendor *config_vendor(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n; i++)
		if (strcmp(cfg->vendors[i].name, name) == 0)
			return &cfg->vendors[i];
	return NULL;
}

static void select_feature(const struct vendor *v, size_t idx, bool *selected)
{
	if (selected[idx])
		return;
	selected[idx] = true;  /* set first: include cycles end here */
	for (size_t i = 0; i < v->features[idx].include.n; i++)
		select_feature(v, vendor_feature(v, v->features[idx].include.v[i]) - v->features,
			       selected);
}

int vendor_select_features(const struct vendor *v, const char *list, bool *selected,
			   struct oerr *err)
{
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;

	memset(selected, 0, v->nfeatures * sizeof(*selected));
	if (!list) {
		for (size_t i = 0; i < v->nfeatures; i++)
			if (!v->driver_feature.n || strv_contains(&v->driver_feature, v->features[i].name))
				select_feature(v, i, selected);
		return 0;
	}
	copy = xstrdup(list);
	for (char *tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		const struct feature *f;
		if (strcmp(tok, "all") == 0) {
			for (size_t i = 0; i < v->nfeatures; i++)
				selected[i] = true;
			continue;
		}
		f = vendor_feature(v, tok);
		if (!f)
			return oerr_usage(err, "vendor %s has no feature '%s'", v->name, tok);
		select_feature(v, f - v->features, selected);
	}
	return 0;
}

/* ---- the idle path's key scan ---- */

struct keyscan {
	struct strv *keys;
	bool vendor;       /* in [vendor] */
	bool named;
};

/* A vendor's default annotation and device list directory, named NAME. */
static void push_default_keys(struct strv *keys, const char *name)
{
	strv_push_owned(keys, xconcat(ANNOTATION_PREFIX, name));
	strv_push_owned(keys, xconcat(DEVICE_LIST_DIR_PREFIX, name));
}

/* Is the N bytes at KEY one of the [vendor] keys that hold activation
 * strings (the schema's KEY_ACTIVATION)? */
static bool is_activation_key(const char *key, size_t n)
{
	const struct key_def *k = key_find(SEC_VENDOR, key, n);

	return k && (k->flags & KEY_ACTIVATION);
}

static int scan_line(void *user, const char *section, const char *key, const char *value, int line)
{
	struct keyscan *k = user;
	char *copy, *save = NULL;

	(void)line;
	if (!key) {
		k->vendor = strcmp(section, "vendor") == 0;
		return 1;
	}
	if (!k->vendor)
		return 1;
	if (strcmp(key, "name") == 0) {
		push_default_keys(k->keys, value);
		k->named = true;
	} else if (is_activation_key(key, strlen(key))) {
		copy = xstrdup(value);
		for (char *t = strtok_r(copy, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save))
			strv_push(k->keys, t);
		free(copy);
	}
	return 1;
}

/* Does line P start with one of them (followed by a blank, '=' or ':')? */
static bool activation_key_line(const char *p)
{
	size_t n = 0;

	while (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '=' && p[n] != ':' && p[n] != '\n')
		n++;  /* (strcspn builds a table per call: this runs for every line) */
	return p[n] && p[n] != '\n' && is_activation_key(p, n);
}

/* Of BUF's [vendor] section, the lines inih must see for the activation
 * keys, moved to the front of the section in place: the header, the lines
 * of the keys scan_line reads, each with its continuation lines. inih passes
 * over comment and blank lines without a change of state, and a
 * continuation line belongs to the key line before it, so leaving out the
 * other keys with theirs changes no value it reports for these. (A
 * malformed line among them no longer ends the scan: more keys, never
 * fewer.) The section ends where a line's first non-blank is '['. NULL
 * without one. */
static char *vendor_key_lines(char *buf)
{
	static const char blank[] = " \t\r\v\f";
	enum { NONE, KEPT, DROPPED } prev = NONE;
	char *line, *next, *out = NULL, *o = NULL;

	/* a UTF-8 byte order mark first, as inih skips it */
	if (strncmp(buf, "\xEF\xBB\xBF", 3) == 0)
		buf += 3;
	for (line = buf; line && *line; line = next) {
		char *p = line + strspn(line, blank);
		size_t len;

		next = strchr(line, '\n');
		len = next ? (size_t)(++next - line) : strlen(line);
		if (!out) {
			if (strncmp(p, "[vendor]", 8) == 0) {
				out = o = line;
				o += len;
			}
			continue;
		}
		if (*p == '[')
			break;
		if (*p == ';' || *p == '#' || *p == '\n' || *p == '\0')
			continue;  /* a comment or a blank line */
		if (prev == NONE || p == line)
			prev = activation_key_line(p) ? KEPT : DROPPED;
		if (prev == KEPT) {
			memmove(o, line, len);
			o += len;
		}
	}
	if (o)
		*o = '\0';
	return out;
}

/* The activation keys of DIRFD/NAME, into KEYS (the read buffer *BUF of
 * *CAP bytes kept for the next file), with the file's fstat into *ST when
 * ST is not NULL. A line inih cannot read ends the scan with the keys found
 * before it; a file without a name gives its file name's defaults. -1 when
 * the file cannot be read. */
static int file_activation_keys(int dirfd, const char *name, struct strv *keys, char **buf, size_t *cap,
				struct stat *st)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct keyscan k = { .keys = keys };
	struct oerr err;
	size_t len;
	char *sec;
	int r = 0;

	if (fd < 0 || (st && fstat(fd, st) < 0) || read_fd_reuse(fd, CONFIG_MAX_SIZE, buf, cap, &len, &err) < 0 ||
	    strlen(*buf) != len || ((sec = vendor_key_lines(*buf)) && ini_parse_string(sec, scan_line, &k) < 0))
		r = -1;
	if (!k.named) {
		_cleanup_free_ char *vname = xstrndup(name, strlen(name) - 4);
		push_default_keys(keys, vname);
	}
	return r;
}

int config_activation_keys_at(int dirfd, struct strv *names, struct stat **stats, struct strv *keys)
{
	char *buf = NULL;
	size_t cap = 0;
	int r = 0;

	if (stats)
		*stats = NULL;
	if (ini_names(dirfd, names) < 0)
		return -1;
	if (stats)
		*stats = xcalloc(names->n + 1, sizeof(**stats));
	for (size_t i = 0; i < names->n && r == 0; i++)
		r = file_activation_keys(dirfd, names->v[i], keys, &buf, &cap, stats ? &(*stats)[i] : NULL);
	free(buf);
	return r;
}

int config_activation_keys(const char *dir, struct strv *keys)
{
	_cleanup_close_ int dirfd = openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct strv names = { 0 };
	int r;

	if (dirfd < 0 && errno == ENOENT)
		return 0;  /* no configuration directory: no vendor, nothing activates */
	if (dirfd < 0)
		return -1;
	r = config_activation_keys_at(dirfd, &names, NULL, keys);
	strv_free(&names);
	return r;
}

/* DIR/runtime.conf: the [runtime] section, its one key */
struct runtime_parse {
	const char *file;
	char *path;
	struct oerr *err;
	bool failed;
};

static int on_runtime_line(void *user, const char *section, const char *key, const char *value, int line)
{
	struct runtime_parse *p = user;

	if (!key)  /* a new section */
		return strcmp(section, "runtime") == 0 ? 1 :
		       (oerr_usage(p->err, "%s:%d: unknown section [%s] (only [runtime])", p->file, line, section),
			p->failed = true, 0);
	if (strcmp(section, "runtime") != 0 || strcmp(key, "path") != 0) {
		oerr_usage(p->err, "%s:%d: unknown key '%s'%s", p->file, line, key,
			   strcmp(section, "runtime") ? " outside [runtime]" : " in [runtime]");
		p->failed = true;
		return 0;
	}
	if (value[0] != '/' || has_dot_component(value)) {
		oerr_usage(p->err, "%s:%d: path must be an absolute path", p->file, line);
		p->failed = true;
		return 0;
	}
	free(p->path);
	p->path = xstrdup(value);
	return 1;
}

int config_runtime(const char *dir, char **path, struct oerr *err)
{
	_cleanup_free_ char *file = xasprintf("%s/runtime.conf", dir), *buf = NULL;
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	struct runtime_parse p = { .file = file, .err = err };
	struct stat st, ds;
	size_t len;
	int r;

	*path = NULL;
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : oerr_set(err, errno, "%s", file);
	if (fstat(fd, &st) < 0)
		return oerr_set(err, errno, "%s: stat", file);
	if (!S_ISREG(st.st_mode))
		return oerr_usage(err, "%s: not a regular file", file);
	if (stat(dir, &ds) < 0)
		return oerr_set(err, errno, "%s", dir);
	if (config_check_owner(file, &st, &ds, err) < 0 || read_fd_all(fd, CONFIG_MAX_SIZE, &buf, &len, err) < 0)
		return -1;
	r = ini_parse_string(buf, on_runtime_line, &p);
	if (!p.failed && r != 0) {
		oerr_usage(err, "%s:%d: malformed line (expected [runtime] or path = ...)", file, r);
		p.failed = true;
	}
	if (p.failed) {
		free(p.path);
		return -1;
	}
	*path = p.path;
	return 0;
}

const char *config_dir_default(void)
{
	static char dir[PATH_MAX];
	struct stat st;
	ssize_t l = proc_fd >= 0 ? readlinkat(proc_fd, "self/exe", dir, sizeof(dir) - 16)
				 : readlinkat(AT_FDCWD, "/proc/self/exe", dir, sizeof(dir) - 16);
	char *slash;

	if (l <= 0)
		return CONFIG_DIR_DEFAULT;
	dir[l] = '\0';
	slash = strrchr(dir, '/');
	if (!slash || slash - dir < 4 || memcmp(slash - 4, "/bin", 4) != 0)
		return CONFIG_DIR_DEFAULT;
	strcpy(slash - 4, "/etc/ocidec.d");  /* "/bin/NAME" -> "/etc/ocidec.d": 16 bytes kept free */
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return dir;
	return CONFIG_DIR_DEFAULT;
}

/* Where a key's lines are in the vendor file's [vendor], for rewriting */
struct key_lines {
	const char *key;
	int vendor_line;       /* [vendor] */
	int first, last;       /* KEY = ... (with continuation lines), 0: none */
	bool in_vendor;
};

static int key_lines_handler(void *user, const char *section, const char *name, const char *value, int lineno)
{
	struct key_lines *r = user;

	(void)value;
	if (!name) {
		r->in_vendor = strcmp(section, "vendor") == 0;
		if (r->in_vendor && !r->vendor_line)
			r->vendor_line = lineno;
		return 1;
	}
	if (r->in_vendor && strcmp(name, r->key) == 0) {
		if (!r->first)
			r->first = lineno;
		r->last = lineno;
	}
	return 1;
}

/* see config.h; inih finds the lines */
char *config_set_vendor_key(char *text, const char *key, const char *value)
{
	struct key_lines r = { .key = key };
	size_t cap = strlen(text) + strlen(key) + strlen(value) + 32, n = 0;
	char *outp = xmalloc(cap);
	const char *p = text;
	int line = 1;

	ini_parse_string(text, key_lines_handler, &r);
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t l = eol ? (size_t)(eol - p + 1) : strlen(p);

		if (r.first && line == r.first) {
			n += (size_t)snprintf(outp + n, cap - n, "%s = %s\n", key, value);
		} else if (!r.first || line < r.first || line > r.last) {
			memcpy(outp + n, p, l);
			n += l;
			if (!eol)
				outp[n++] = '\n';
		}
		if (!r.first && line == r.vendor_line)
			n += (size_t)snprintf(outp + n, cap - n, "%s = %s\n", key, value);
		p += l;
		line++;
	}
	outp[n] = '\0';
	free(text);
	return outp;
}

/* one of the paths LIST (globs) in the driver root ROOTFD: its pattern,
 * or NULL. A literal path is looked up as is (a symlink counts); a glob
 * walks up to 64 * 64 directory entries (/dev has a few hundred). */
static const char *any_there(int rootfd, const struct strv *list)
{
	for (size_t i = 0; i < list->n; i++) {
		struct strv found = { 0 };
		bool there;

		if (!path_has_glob(list->v[i])) {
			int fd = root_open(rootfd, list->v[i], O_PATH | O_NOFOLLOW);

			there = fd >= 0;
			if (fd >= 0)
				close(fd);
		} else {
			root_glob(rootfd, list->v[i], &found, 64);
			there = found.n > 0;
			strv_free(&found);
		}
		if (there)
			return list->v[i];
	}
	return NULL;
}

bool vendor_here(const struct vendor *v)
{
	int rootfd;
	const char *not = NULL;
	bool here = true;

	if (!v->only_where.n && !v->not_where.n)
		return true;
	rootfd = open(v->driver_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		/* no driver root: a platform's own file (only_where) is not
		 * this one's; the general one fails as missing (plan_vendor) */
		if (v->only_where.n)
			log_debug("%s: not this platform's: no driver_root %s", v->name, v->driver_root);
		return !v->only_where.n;
	}
	if (v->only_where.n && !any_there(rootfd, &v->only_where)) {
		log_debug("%s: not this platform's: none of only_where (%s ...) under driver_root %s", v->name,
			  v->only_where.v[0], v->driver_root);
		here = false;
	} else if ((not = any_there(rootfd, &v->not_where))) {
		log_debug("%s: not this platform's: %s (not_where) is under driver_root %s", v->name, not,
			  v->driver_root);
		here = false;
	}
	close(rootfd);
	return here;
}

const struct vendor *config_kind_here(const struct config *cfg, const struct vendor *v, bool *siblings)
{
	const struct vendor *here = NULL;

	if (siblings)
		*siblings = false;
	for (size_t i = 0; i < cfg->n && !here; i++) {
		const struct vendor *w = &cfg->vendors[i];

		if (w == v || strcmp(w->cdi_kind, v->cdi_kind) != 0)
			continue;
		if (siblings)
			*siblings = true;
		if (vendor_here(w))
			here = w;
	}
	return here;
}

struct config_root_override config_root_override;

bool vendor_answers(const struct vendor *v, const char *name)
{
	return strcmp(v->activation_flag, name) == 0 || strv_contains(&v->activation_aliases, name);
}
