/* The CDI specs every engine reads (/etc/cdi, /var/run/cdi), as check
 * finds them: gone stale, clashing, unreadable. See engine.h */
#include "engines/engine.h"
#include "engines/engines.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct spec_paths {
	int root;
	size_t n, gone;
	char *first;   /* the first path gone */
	struct timespec written;  /* the spec's mtime */
	struct strv moved;  /* device nodes whose numbers are no longer the spec's */
	char *moved_first;  /* the first: "PATH is c M:m here, made again at ..." */
};

static void spec_path(struct spec_paths *sp, const cJSON *o, const char *key, const char *fallback)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, key);
	struct stat st;

	if (!cJSON_IsString(p) && fallback)
		p = cJSON_GetObjectItemCaseSensitive(o, fallback);
	if (!cJSON_IsString(p) || p->valuestring[0] != '/' || sp->n >= 4096)
		return;
	sp->n++;
	if (!engine_host_stat(sp->root, p->valuestring, &st, true) && sp->gone++ == 0)
		sp->first = xstrdup(p->valuestring);
}

/* A device node the spec gives with its numbers (ocidec's specs, and
 * nvidia-ctk's, have them; the engines make the container's node and its
 * cgroup rule with them, not with the host node's): the node there now of
 * other numbers or another type is one made again after the spec was
 * written, as a driver module's reload or a partition switch makes them
 * (a dynamic major, a minor in another order): the spec is older than the
 * vendor's devices, and a container given it gets another device or none */
static void spec_node(struct spec_paths *sp, const cJSON *o)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "hostPath"),
		    *ma = cJSON_GetObjectItemCaseSensitive(o, "major"),
		    *mi = cJSON_GetObjectItemCaseSensitive(o, "minor"),
		    *ty = cJSON_GetObjectItemCaseSensitive(o, "type");
	struct stat st;
	char t;

	if (!cJSON_IsString(p))
		p = cJSON_GetObjectItemCaseSensitive(o, "path");
	if (!cJSON_IsString(p) || p->valuestring[0] != '/' || !cJSON_IsNumber(ma) || !cJSON_IsNumber(mi) ||
	    !engine_host_stat(sp->root, p->valuestring, &st, true) || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		return;
	t = S_ISCHR(st.st_mode) ? 'c' : 'b';
	if (major(st.st_rdev) == (unsigned)ma->valuedouble && minor(st.st_rdev) == (unsigned)mi->valuedouble &&
	    (!cJSON_IsString(ty) || ty->valuestring[0] == t || (ty->valuestring[0] == 'u' && t == 'c')))
		return;
	if (strv_contains(&sp->moved, p->valuestring))  /* a node of a device and of "all" */
		return;
	strv_push(&sp->moved, p->valuestring);
	if (sp->moved.n == 1) {
		bool newer = st.st_ctim.tv_sec > sp->written.tv_sec ||
			     (st.st_ctim.tv_sec == sp->written.tv_sec && st.st_ctim.tv_nsec > sp->written.tv_nsec);

		sp->moved_first = xasprintf("%s is %c %u:%u here, the spec's %s %d:%d%s", p->valuestring, t,
					    major(st.st_rdev), minor(st.st_rdev), cJSON_IsString(ty) ? ty->valuestring : "c",
					    (int)ma->valuedouble, (int)mi->valuedouble,
					    newer ? ": made again after the spec was written" : "");
	}
}

/* the host paths of one containerEdits: device nodes, mounts, hooks */
static void edits_paths(struct spec_paths *sp, const cJSON *edits)
{
	const cJSON *i;

	cJSON_ArrayForEach(i, cJSON_GetObjectItemCaseSensitive(edits, "deviceNodes")) {
		spec_path(sp, i, "hostPath", "path");
		spec_node(sp, i);
	}
	cJSON_ArrayForEach(i, cJSON_GetObjectItemCaseSensitive(edits, "mounts"))
		spec_path(sp, i, "hostPath", NULL);
	cJSON_ArrayForEach(i, cJSON_GetObjectItemCaseSensitive(edits, "hooks"))
		spec_path(sp, i, "path", NULL);
}

/* Specs gone stale: every host path a spec in /etc/cdi or /var/run/cdi
 * names (a driver upgrade takes libcuda.so.535.x away, and each container
 * given a device of the spec fails to start) must be there. JSON specs
 * (ocidec's, and any other vendor's); a YAML one is not read. */
/* The devices of SPEC (of kind KIND, at PATH) into SEEN ("KIND=NAME", the
 * spec's path, ...): one another spec gave already is said once a pair of
 * specs. The CDI library (every engine's) drops a device two specs of one
 * directory define, and every container asking for it fails: a problem;
 * across directories the later one (/var/run/cdi) wins, the other's is
 * shadowed: information, with the command that removes the /etc/cdi
 * copy (stale after the next driver upgrade, whatever it alone names). */
static void cdi_clashes(struct engine_check *c, const cJSON *spec, const char *kind, const char *path,
			struct strv *seen)
{
	const cJSON *dev;
	const char *said = NULL;

	cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(spec, "devices")) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(dev, "name"));
		_cleanup_free_ char *id = name ? xasprintf("%s=%s", kind, name) : NULL;
		size_t i;

		if (!id)
			continue;
		for (i = 0; i + 1 < seen->n && strcmp(seen->v[i], id) != 0; i += 2)
			;
		if (i + 1 >= seen->n) {
			if (seen->n < 2 * 4096)
				strv_push(seen, id), strv_push(seen, path);
		} else if (!said || strcmp(said, seen->v[i + 1]) != 0) {
			const char *other = seen->v[i + 1], *s1 = strrchr(other, '/'), *s2 = strrchr(path, '/');
			bool one_dir = s1 && s2 && s1 - other == s2 - path && strncmp(other, path, (size_t)(s1 - other)) == 0;
			/* the fix removes the /etc/cdi copy (the refresh keeps /var/run/cdi) */
			_cleanup_free_ char *q = shell_word(strncmp(path, "/etc/", 5) == 0 ? path : other);
			_cleanup_free_ char *fix = q ? xasprintf("rm %s", q) : NULL;

			said = other;
			if (one_dir)
				engine_say(c, ENGINE_PROBLEM, "cdi", fix, "%s and %s both give %s (and maybe more): engines drop a "
				    "device two specs of one directory define, and every container asking for it "
				    "fails; keep one", other, path, id);
			else
				engine_say(c, ENGINE_INFO, "cdi", fix, "%s and %s both give %s (and maybe more): the engines take "
				    "%s's, the other's is shadowed (and goes stale at the next driver upgrade); keep "
				    "one (ocidec's refresh keeps /var/run/cdi)", other, path, id, "/var/run/cdi");
		}
	}
}

/* A YAML spec (SPECS: path, kind pairs, in the engines' order) of the kind
 * of another spec: in one directory the engines drop every device both
 * name (NVIDIA's spec and ocidec's name theirs alike: 0, all, the UUIDs);
 * across directories /var/run/cdi's shadows /etc/cdi's. The YAML one is
 * the one to remove (nvidia-ctk's, ocidec's own are JSON). */
static void yaml_clashes(struct engine_check *c, const struct strv *specs)
{
	for (size_t i = 0; i + 1 < specs->n; i += 2) {
		const char *p = specs->v[i], *e = strrchr(p, '.');

		if (!e || strcmp(e, ".json") == 0)
			continue;
		for (size_t j = 0; j + 1 < specs->n; j += 2) {
			const char *o = specs->v[j], *s1 = strrchr(o, '/'), *s2 = strrchr(p, '/');
			bool one_dir = s1 - o == s2 - p && strncmp(o, p, (size_t)(s1 - o)) == 0;
			_cleanup_free_ char *q = NULL, *fix = NULL;

			if (j == i || strcmp(specs->v[j + 1], specs->v[i + 1]) != 0 || (j < i && strrchr(o, '.') &&
			    strcmp(strrchr(o, '.'), ".json") != 0))
				continue;
			q = shell_word(p);
			fix = q ? xasprintf("rm %s", q) : NULL;
			if (one_dir)
				engine_say(c, ENGINE_PROBLEM, "cdi", fix, "%s and %s are both specs of %s in one directory: the engines "
				    "drop every device both name (0, all, the UUIDs: likely all), and every container "
				    "asking for one fails; keep one", p, o, specs->v[i + 1]);
			else
				engine_say(c, ENGINE_INFO, "cdi", fix, "%s and %s are both specs of %s: where both name a device the "
				    "engines take /var/run/cdi's, the other's is shadowed (and goes stale at the next "
				    "driver upgrade); keep one (ocidec's refresh keeps /var/run/cdi)", p, o,
				    specs->v[i + 1]);
			break;
		}
	}
}

void engine_check_cdi(struct engine_check *c)
{
	int root = c->root;
	static const char *const dirs[] = { "/etc/cdi", "/var/run/cdi" };
	_cleanup_strv_ struct strv seen = { 0 }, specs = { 0 };  /* specs: path, kind */

	for (size_t d = 0; d < 2; d++) {
		_cleanup_close_ int fd = root_open(root, dirs[d], O_RDONLY | O_DIRECTORY);
		struct strv names = { 0 };
		DIR *dir;
		struct dirent *de;

		if (fd < 0 || !(dir = fdopendir(fd)))
			continue;
		fd = -1;
		while ((de = readdir(dir)) && names.n < 256)
			if (de->d_name[0] != '.')
				strv_push(&names, de->d_name);
		closedir(dir);
		strv_sort(&names);
		for (size_t k = 0; k < names.n; k++) {
			_cleanup_free_ char *path = xasprintf("%s/%s", dirs[d], names.v[k]), *text = NULL;
			struct spec_paths sp = { .root = root };
			const char *ext = strrchr(names.v[k], '.');
			const cJSON *dev, *kind;
			cJSON *spec;

			if (!ext || (strcmp(ext, ".json") != 0 && strcmp(ext, ".yaml") != 0 && strcmp(ext, ".yml") != 0))
				continue;
			{
				/* as the engines read it: through a link (in the host
				 * root), a regular file; at most 4 MiB here */
				_cleanup_close_ int pfd = root_open(root, path, O_PATH), sfd = -1;
				struct stat st;
				struct oerr e;
				size_t tl;
				const char *why = NULL;

				/* looked at before it is opened: a device node is never opened */
				if (pfd < 0 || fstat(pfd, &st) < 0)
					why = strerror(errno);
				else if (!S_ISREG(st.st_mode))
					why = "not a regular file";
				else if ((sfd = reopen_regular(root, pfd, &st)) < 0) {
					why = sfd == -2 ? "not a regular file" : strerror(errno);
					sfd = -1;
				}
				else if (st.st_size > (4 << 20))
					why = "larger than 4 MiB: not read";
				else if (read_fd_all(sfd, 4 << 20, &text, &tl, &e) < 0)
					why = "cannot be read";
				sp.written = st.st_mtim;
				/* a YAML spec (nvidia-ctk's): only its kind, from its
				 * top-level kind: line, for the clash below */
				if (!why && strcmp(ext, ".json") != 0) {
					_cleanup_free_ char *yk = yaml_top_scalar(text, "kind");

					engine_say(c, ENGINE_INFO, "cdi", NULL, "%s (%s): a YAML spec, not read: its paths are not checked",
					    path, yk ? yk : "no kind: line");
					if (yk)
						strv_push(&specs, path), strv_push(&specs, yk);
					continue;
				}
				spec = why ? NULL : cJSON_Parse(text);
				if (!spec) {
					engine_advise(c, ENGINE_PROBLEM, "cdi", "correct it, or remove it: engines refuse a spec they "
					       "cannot read (podman drops it, containerd fails the container)", "%s: %s",
					       path, why ? why : "not a JSON spec");
					continue;
				}
			}
			kind = cJSON_GetObjectItemCaseSensitive(spec, "kind");
			if (cJSON_IsString(kind)) {
				cdi_clashes(c, spec, kind->valuestring, path, &seen);
				strv_push(&specs, path), strv_push(&specs, kind->valuestring);
			}
			edits_paths(&sp, cJSON_GetObjectItemCaseSensitive(spec, "containerEdits"));
			cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(spec, "devices"))
				edits_paths(&sp, cJSON_GetObjectItemCaseSensitive(dev, "containerEdits"));
			if (sp.gone || sp.moved.n) {
				/* one of a vendor's with a driver here: ocidec makes it
				 * anew (ocidec's refresh, its own directory); another
				 * tool's, that tool */
				_cleanup_free_ char *fix = NULL;
				bool refreshed = false;

				for (size_t i = 0; i < c->kinds.n && !fix && cJSON_IsString(kind); i++) {
					/* its spec, or its management spec (management.KIND) */
					const char *sk = kind->valuestring;
					bool mgmt = strncmp(sk, "management.", 11) == 0 && strcmp(sk + 11, c->kinds.v[i]) == 0;

					if (strcmp(c->kinds.v[i], sk) == 0 || mgmt) {
						_cleanup_free_ char *qp = shell_word(path),
								    *qv = shell_word(c->kind_vendors.v[i]);
						if ((refreshed = d == 1 && !sp.gone))
							fix = xstrdup(host_has_systemd(root) ?
								      "systemctl start ocidec-cdi-refresh.service" :
								      "ocidec cdi --refresh");
						else if (qp && qv)
							fix = xasprintf("ocidec cdi%s -o %s %s", mgmt ? " --management" : "", qp, qv);
					}
				}
				if (sp.gone)
					engine_say2(c, ENGINE_PROBLEM, "cdi", fix, fix ? NULL : "make it again with the tool that "
					     "wrote it (NVIDIA's: nvidia-ctk cdi generate --output FILE), or remove it",
					     "%s (%s): stale: %zu of the %zu host paths it names are gone (%s first): every "
					     "container given a device of it fails to start", path,
					     cJSON_IsString(kind) ? kind->valuestring : "no kind", sp.gone, sp.n, sp.first);
				else
					engine_say2(c, ENGINE_PROBLEM, "cdi", fix, fix ? NULL : "make it again with the tool that "
					     "wrote it (NVIDIA's: nvidia-ctk cdi generate --output FILE), or remove it",
					     "%s (%s): older than the vendor's devices: %zu device node%s it names made again "
					     "with other numbers since (%s; a driver module's reload, a partition switch): every "
					     "container given a device of it gets the spec's numbers, another device or none%s",
					     path, cJSON_IsString(kind) ? kind->valuestring : "no kind", sp.moved.n,
					     sp.moved.n == 1 ? "" : "s", sp.moved_first,
					     refreshed ? " (ocidec's udev rule, 60-ocidec-cdi-refresh.rules, refreshes it on the "
					     "driver's next event where the refresh units are installed)" : "");
			}
			else if ((c->registered = true))
				engine_say(c, ENGINE_OK, "cdi", NULL, "%s (%s): the %zu host paths it names are there", path,
				    cJSON_IsString(kind) ? kind->valuestring : "no kind", sp.n);
			free(sp.first);
			free(sp.moved_first);
			strv_free(&sp.moved);
			cJSON_Delete(spec);
		}
		strv_free(&names);
	}
	yaml_clashes(c, &specs);
}
