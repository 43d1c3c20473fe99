/* edits.c: see edits.h. */
#include "common/edits.h"

#include "common/elf.h"
#include "common/rootpath.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static unsigned flags_for(enum item_kind k)
{
	switch (k) {
	case KIND_DEVICES:
		return EDIT_RDONLY | EDIT_NOSUID | EDIT_NOEXEC;
	case KIND_IPC:
		return EDIT_RDONLY | EDIT_NOSUID | EDIT_NODEV | EDIT_NOEXEC;
	default:
		return EDIT_RDONLY | EDIT_NOSUID | EDIT_NODEV;
	}
}

const char *edit_flags_text(unsigned f)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s%s%s%s", f & EDIT_RDONLY ? "ro" : "rw", f & EDIT_NOSUID ? ",nosuid" : "",
		 f & EDIT_NODEV ? ",nodev" : "", f & EDIT_NOEXEC ? ",noexec" : "");
	return buf;
}

/* The directory of container path PATH ("/" for a top-level name), new */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
}

void edits_build(const struct plan *p, struct edits *e)
{
	memset(e, 0, sizeof(*e));
	e->mounts = xcalloc(p->n ? p->n : 1, sizeof(*e->mounts));
	e->devices = xcalloc(p->n ? p->n : 1, sizeof(*e->devices));
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_item *it = &p->items[i];
		struct edit_mount *m = &e->mounts[e->nmounts];
		bool dup = false;

		m->it = it;
		m->destination = it->target ? it->target : it->path;
		m->source = it->target ? it->host_target : it->host;
		m->flags = flags_for(it->kind);
		for (size_t k = 0; k < e->nmounts && !dup; k++)
			dup = strcmp(e->mounts[k].destination, m->destination) == 0;
		if (dup)
			continue;
		if (it->link_dirfd >= 0) {
			char text[PATH_MAX];
			ssize_t l = readlinkat(it->link_dirfd, it->link_name, text, sizeof(text) - 1);

			if (l > 0) {
				text[l] = '\0';
				m->link_path = it->path;
				m->link_target = xstrdup(text);
			}
		}
		if (it->kind == KIND_LIBRARIES) {
			char *d = dir_of(m->destination);
			if (!strv_contains(&e->libdirs, d))
				strv_push(&e->libdirs, d);
			free(d);
		}
		if (S_ISCHR(it->st.st_mode) || S_ISBLK(it->st.st_mode))
			e->devices[e->ndevices++] = (struct edit_device){
				.path = m->destination, .host = m->source,
				.type = S_ISCHR(it->st.st_mode) ? 'c' : 'b',
				.major = major(it->st.st_rdev), .minor = minor(it->st.st_rdev),
				.mode = it->st.st_mode & 07777, .cgroup = it->vendor->cgroup_devices,
			};
		e->nmounts++;
	}
}

void edits_free(struct edits *e)
{
	for (size_t i = 0; i < e->nmounts; i++)
		free(e->mounts[i].link_target);
	free(e->mounts);
	free(e->devices);
	strv_free(&e->libdirs);
	memset(e, 0, sizeof(*e));
}

struct devcg_rule *edits_rules(const struct edits *e, size_t *n)
{
	struct devcg_rule *rules = xcalloc(e->ndevices ? e->ndevices : 1, sizeof(*rules));

	*n = 0;
	for (size_t i = 0; i < e->ndevices; i++)
		if (e->devices[i].cgroup)
			rules[(*n)++] = (struct devcg_rule){ e->devices[i].type, e->devices[i].major,
							     e->devices[i].minor };
	return rules;
}

/* The SONAME of library mount M and the link the cache points at (the
 * SONAME in the library's directory, as ldconfig makes it): 0, or -1 when
 * the file is no ELF library this build reads. */
static int cache_entry(const struct edit_mount *m, char **soname, char **path)
{
	struct stat st;
	_cleanup_close_ int fd = reopen_regular(AT_FDCWD, m->it->fd, &st);
	struct elf_source src = { .fd = fd, .size = (uint64_t)st.st_size };
	struct elf_info info;
	struct oerr err;
	const char *slash = strrchr(m->destination, '/');
	int r = -1;

	if (fd < 0)
		return -1;
	if (elf_read(&src, NULL, &info, &err) == ELF_OK) {
		*soname = xstrdup(info.soname ? info.soname : slash + 1);
		*path = xasprintf("%.*s/%s", (int)(slash - m->destination), m->destination, *soname);
		r = 0;
	}
	elf_info_free(&info);
	return r;
}

void edits_print_mounts(const struct edits *e)
{
	for (size_t i = 0; i < e->nmounts; i++) {
		const struct edit_mount *m = &e->mounts[i];

		printf("mount %s %s %s\n", m->source, m->destination, edit_flags_text(m->flags));
		if (m->link_target)
			printf("symlink %s %s\n", m->link_path, m->link_target);
	}
}

void edits_print_cache(const struct edits *e)
{
	for (size_t i = 0; i < e->libdirs.n; i++)
		printf("ldcache %s\n", e->libdirs.v[i]);
	for (size_t i = 0; i < e->nmounts; i++) {
		char *soname, *path;

		if (e->mounts[i].it->kind != KIND_LIBRARIES || cache_entry(&e->mounts[i], &soname, &path) < 0)
			continue;
		printf("ldcache-entry %s %s\n", soname, path);
		free(soname);
		free(path);
	}
}

static cJSON *add(cJSON *to, const char *key, cJSON *item)
{
	if (!item)
		oom();
	if (key)
		cJSON_AddItemToObject(to, key, item);
	else
		cJSON_AddItemToArray(to, item);
	return item;
}

static void add_str(cJSON *to, const char *key, const char *s)
{
	add(to, key, cJSON_CreateString(s));
}

static void add_num(cJSON *to, const char *key, double n)
{
	add(to, key, cJSON_CreateNumber(n));
}

int edits_print_json(const struct edits *e)
{
	cJSON *root = cJSON_CreateObject(), *a, *o, *opts;
	size_t nrules;
	struct devcg_rule *rules = edits_rules(e, &nrules);
	char *text;
	int r;

	if (!root)
		oom();
	a = add(root, "mounts", cJSON_CreateArray());
	for (size_t i = 0; i < e->nmounts; i++) {
		const struct edit_mount *m = &e->mounts[i];
		_cleanup_free_ char *flags = xstrdup(edit_flags_text(m->flags));
		char *save = NULL;

		o = add(a, NULL, cJSON_CreateObject());
		add_str(o, "source", m->source);
		add_str(o, "destination", m->destination);
		opts = add(o, "options", cJSON_CreateArray());
		add_str(opts, NULL, "bind");
		for (char *t = strtok_r(flags, ",", &save); t; t = strtok_r(NULL, ",", &save))
			add_str(opts, NULL, t);
	}
	a = add(root, "symlinks", cJSON_CreateArray());
	for (size_t i = 0; i < e->nmounts; i++) {
		if (!e->mounts[i].link_target)
			continue;
		o = add(a, NULL, cJSON_CreateObject());
		add_str(o, "path", e->mounts[i].link_path);
		add_str(o, "target", e->mounts[i].link_target);
	}
	a = add(root, "devices", cJSON_CreateArray());
	for (size_t i = 0; i < e->ndevices; i++) {
		const struct edit_device *d = &e->devices[i];
		char type[2] = { d->type, '\0' };

		o = add(a, NULL, cJSON_CreateObject());
		add_str(o, "path", d->path);
		add_str(o, "hostPath", d->host);
		add_str(o, "type", type);
		add_num(o, "major", d->major);
		add_num(o, "minor", d->minor);
		add_num(o, "fileMode", d->mode);
	}
	a = add(root, "deviceRules", cJSON_CreateArray());
	for (size_t i = 0; i < nrules; i++) {
		char type[2] = { rules[i].type, '\0' };

		o = add(a, NULL, cJSON_CreateObject());
		add(o, "allow", cJSON_CreateTrue());
		add_str(o, "type", type);
		add_num(o, "major", rules[i].major);
		add_num(o, "minor", rules[i].minor);
		add_str(o, "access", "rwm");
	}
	o = add(root, "ldcache", cJSON_CreateObject());
	a = add(o, "directories", cJSON_CreateArray());
	for (size_t i = 0; i < e->libdirs.n; i++)
		add_str(a, NULL, e->libdirs.v[i]);
	a = add(o, "entries", cJSON_CreateArray());
	for (size_t i = 0; i < e->nmounts; i++) {
		char *soname, *path;
		cJSON *x;

		if (e->mounts[i].it->kind != KIND_LIBRARIES || cache_entry(&e->mounts[i], &soname, &path) < 0)
			continue;
		x = add(a, NULL, cJSON_CreateObject());
		add_str(x, "soname", soname);
		add_str(x, "path", path);
		free(soname);
		free(path);
	}
	free(rules);
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		oom();
	r = printf("%s\n", text) < 0 ? -1 : 0;
	free(text);
	return r;
}
