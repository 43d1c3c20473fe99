/* config: print a vendor file, one of its keys, or the file with keys set,
 * as `nvidia-ctk config` does NVIDIA's config.toml.
 *
 * See: ocidec-config(1). No INI code here: inih, built as the loader has
 * it, says where a key is (its section, its line and continuation lines,
 * where its value starts in that line), and the text is changed only
 * there: the value replaced (the key's spelling, indentation and inline
 * comment kept), its continuation lines dropped; or a line added after
 * the section's last key; or the section added at the end. Every other
 * byte is kept. The result is loaded by the loader itself (config_load of
 * a private directory that holds it alone, under the name it will have)
 * before it is printed or written: what the loader refuses is its one
 * line, exit 2, nothing written.
 */
#include "applets/applet.h"
#include "devices/config.h"
#include "base/log.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE (1024 * 1024)  /* the loader's limit (config.c) */

const char config_cmd_usage[] =
	"usage: ocidec config [-c DIR] [--set KEY=VALUE]... [-i | -o FILE] [VENDOR|FILE]\n"
	"       ocidec config [-c DIR] --get KEY... [VENDOR|FILE]\n"
	"\n"
	"Print a vendor file (default: nvidia's, what nvidia-ctk config's\n"
	"config.toml becomes), or, as nvidia-ctk config --set does, the file with\n"
	"KEYs set: to stdout, over the file (--in-place) or to FILE. KEY: KEY or\n"
	"vendor.KEY in [vendor], feature.NAME.KEY in [feature.NAME]. The result is\n"
	"loaded as the hook loads it before it is printed or written: a value the\n"
	"loader refuses is one line, exit 2, nothing written.\n"
	"\n"
	"  -c, --config-dir DIR    vendor configs (default " CONFIG_DIR_DEFAULT ");\n"
	"                          a file: that file (nvidia-ctk's -c FILE)\n"
	"      --config-file FILE  the vendor file (also --config FILE, nvidia-ctk's)\n"
	"      --set KEY=VALUE     set KEY (repeatable; a key's last wins); NVIDIA's\n"
	"                          nvidia-container-cli.root and .no-cgroups and\n"
	"                          nvidia-container-runtime.log-level too\n"
	"      --get KEY           print KEY's value, its lines joined (repeatable)\n"
	"  -i, --in-place          write the result over the file: atomically, its\n"
	"                          mode and owner kept, only when it changed\n"
	"  -o, --output FILE       write the result to FILE (its directory made)\n";

/* NVIDIA's config.toml keys, from docs/migrating-from-nvidia.md's table
 * (the truth): the three with a key of the same meaning in nvidia.ini are
 * set there by --set; the others are said, with what does their work. */
static const struct nvidia_key {
	const char *name;
	const char *ocidec;  /* the key --set sets, or NULL */
	bool invert;         /* a switch of the opposite sense */
	const char *what;    /* (ocidec NULL) the rest of the line that says it */
} nvidia_keys[] = {
	{ "nvidia-container-cli.root", "vendor.driver_root", false, NULL },
	{ "nvidia-container-cli.no-cgroups", "vendor.cgroup_devices", true, NULL },
	{ "nvidia-container-runtime.log-level", "vendor.log_level", false, NULL },
	{ "nvidia-container-cli.ldconfig", NULL, false,
	  "has none in nvidia.ini: ocidec writes the container's ld.so.cache itself and runs nothing from the image" },
	{ "nvidia-container-runtime.mode", NULL, false,
	  "has none in nvidia.ini: the hook, the shim and CDI specs decide alike; register one (ocidec install)" },
	{ "accept-nvidia-visible-devices-as-volume-mounts", NULL, false,
	  "is ocidec's vendor.selection (with mounts) and vendor.device_list_dir in nvidia.ini" },
	{ "accept-nvidia-visible-devices-envvar-when-unprivileged", NULL, false,
	  "is ocidec's vendor.unprivileged_selection in nvidia.ini (false: mounts annotation)" },
};

static const struct nvidia_key *nvidia_key(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(nvidia_keys); i++)
		if (strcmp(nvidia_keys[i].name, name) == 0)
			return &nvidia_keys[i];
	return NULL;
}

/* One --set or --get: ARG as given, the section and key it names, the value */
struct setting {
	const char *arg;
	char *section, *key, *value;
};

static void setting_free(struct setting *k)
{
	free(k->section);
	free(k->key);
	free(k->value);
}

/* NAME ("[SECTION.]KEY") into K's section and key: KEY alone is [vendor]'s;
 * the section is what comes before the last dot (feature.NAME). The
 * loader's schema says which are keys; here only what a key, a section
 * header and a line may hold. */
static int setting_name(struct setting *k, const char *name, struct oerr *err)
{
	const char *dot;
	const struct nvidia_key *nk = nvidia_key(name);

	/* (--get: NVIDIA's name read as ocidec's key where the value means
	 * the same; a switch of the opposite sense is said instead) */
	if (nk && nk->ocidec && !nk->invert) {
		log_warn("NVIDIA's key %s is ocidec's %s in nvidia.ini", name, nk->ocidec);
		name = nk->ocidec;
		nk = NULL;
	} else if (nk && nk->ocidec)
		return oerr_usage(err, "NVIDIA's key %s is ocidec's %s in nvidia.ini (of the opposite sense)", name,
				  nk->ocidec);
	dot = strrchr(name, '.');
	if (nk)
		return oerr_usage(err, "NVIDIA's key %s %s", name, nk->what);
	if (!*name || name[0] == '.' || (dot && !dot[1]) ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != strlen(name))
		return oerr_usage(err, "'%s' is no KEY (KEY, vendor.KEY or feature.NAME.KEY)", name);
	k->key = xstrdup(dot ? dot + 1 : name);
	k->section = dot ? xstrndup(name, (size_t)(dot - name)) : xstrdup("vendor");
	return 0;
}

/* --set ARG into K; NVIDIA's keys that have an ocidec key translated (said) */
static int setting_parse(struct setting *k, const char *arg, struct oerr *err)
{
	const char *eq = strchr(arg, '=');
	_cleanup_free_ char *name = eq ? xstrndup(arg, (size_t)(eq - arg)) : xstrdup(arg);
	const struct nvidia_key *nk = nvidia_key(name);
	const char *value = eq ? eq + 1 : NULL;

	k->arg = arg;
	if (nk && nk->ocidec) {
		if (nk->invert && (!value || strcmp(value, "true") == 0))
			value = "false";  /* NVIDIA's switch given alone is true */
		else if (nk->invert && strcmp(value, "false") == 0)
			value = "true";
		else if (nk->invert)
			return oerr_usage(err, "--set %s: %s must be true or false", arg, name);
		log_warn("NVIDIA's key %s is ocidec's %s%s in nvidia.ini: --set %s=%s", name, nk->ocidec,
			 nk->invert ? " (the opposite)" : "", nk->ocidec, value ? value : "");
		free(name);
		name = xstrdup(nk->ocidec);
	}
	if (setting_name(k, name, err) < 0)
		return oerr_prefix(err, "--set %s", arg);
	if (!value)
		return oerr_usage(err, "--set %s: give KEY=VALUE (a switch: KEY=true)", arg);
	for (const char *c = value; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return oerr_usage(err, "--set %s: a value is one line of printable characters", arg);
	k->value = xstrdup(value);
	return 0;
}

/* A text and where each of its lines starts, as inih counts them: line K
 * (1 to N) is off[K] to off[K + 1] */
struct doc {
	char *text;
	size_t *off;
	int n;
};

static void doc_set(struct doc *d, char *text)
{
	size_t len = strlen(text), lines = 1;
	int k = 1;

	for (const char *p = text; (p = strchr(p, '\n')); p++)
		lines++;
	free(d->text);
	free(d->off);
	d->text = text;
	d->off = xcalloc(lines + 2, sizeof(*d->off));
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n' && i + 1 < len)
			d->off[++k] = i + 1;
	d->n = len ? k : 0;
	d->off[d->n + 1] = len;
}

static void doc_free(struct doc *d)
{
	free(d->text);
	free(d->off);
}

/* Where KEY of [SECTION] is in a doc, as inih reads it */
struct spot {
	const struct doc *d;
	const char *section, *key;
	int sec_line, sec_last;        /* [SECTION] (its first header), its last key or
					* continuation line; 0: no such section */
	int first, last;               /* KEY's line and its last continuation line; 0: none */
	size_t value_off, value_len;   /* its value in line FIRST */
	struct strv values;            /* the value of each of its lines */
	bool keyed;                    /* a key line since the last header (inih's prev_name) */
	bool in_sec, in_key;           /* in [SECTION]'s first header's lines; in KEY's lines */
};

static int spot_line(void *user, const char *section, const char *name, const char *value, int lineno)
{
	struct spot *s = user;
	const char *raw = s->d->text + s->d->off[lineno];
	/* inih's continuation line: indented, after a key line of the same section */
	bool cont = s->keyed && isspace((unsigned char)*raw);

	if (!name) {
		s->in_sec = !s->sec_line && strcmp(section, s->section) == 0;
		if (s->in_sec)
			s->sec_line = s->sec_last = lineno;
		s->keyed = s->in_key = false;
		return 1;
	}
	if (!cont)
		s->keyed = true, s->in_key = false;
	if (!s->in_sec)
		return 1;
	s->sec_last = lineno;
	if (!cont && !s->first && strcmp(name, s->key) == 0) {
		/* name and value point into inih's copy of the line, which
		 * starts with the line's blanks left out */
		s->first = lineno;
		s->value_off = (size_t)(value - name);
		while (isspace((unsigned char)raw[0]))
			raw++, s->value_off++;
		s->value_len = strlen(value);
		s->in_key = true;
	}
	if (s->in_key) {
		s->last = lineno;
		strv_push(&s->values, value);
	}
	return 1;
}

/* K's key in D (into *S, whose values the caller frees): 0, or -1 (ERR: a
 * line inih cannot read, as the loader says it) */
static int spot_find(struct spot *s, const struct doc *d, const struct setting *k, const char *path,
		     struct oerr *err)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->d = d;
	s->section = k->section;
	s->key = k->key;
	r = ini_parse_string(d->text, spot_line, s);
	if (r > 0)
		return oerr_usage(err, "%s:%d: malformed line (expected [section] or key = value)", path, r);
	if (r < 0)
		return oerr_set(err, ENOMEM, "%s: parse", path);
	return 0;
}

/* TEXT with its bytes A to B replaced by INS (freed) */
static char *text_splice(const char *text, size_t a, size_t b, char *ins)
{
	char *s = xasprintf("%.*s%s%s", (int)a, text, ins, text + b);

	free(ins);
	return s;
}

/* D with K set (see the top) */
static int doc_set_key(struct doc *d, const struct setting *k, const char *path, struct oerr *err)
{
	const char *t = d->text, *eol1 = strchr(t, '\n');
	const char *nl = eol1 && eol1 > t && eol1[-1] == '\r' ? "\r\n" : "\n";  /* the file's line ends */
	struct spot s;
	size_t a, b;
	char *ins;

	if (spot_find(&s, d, k, path, err) < 0) {
		strv_free(&s.values);
		return -1;
	}
	strv_free(&s.values);
	if (s.first) {
		const char *line = t + d->off[s.first], *v = line + s.value_off, *rest = v + s.value_len;
		const char *eol = t + d->off[s.first + 1];

		a = d->off[s.first];
		b = d->off[s.last + 1];
		if (eol > rest && eol[-1] == '\n')
			eol--;
		/* "key =" gets its blank; an inline comment keeps the blank before it */
		ins = xasprintf("%.*s%s%s%s%.*s%s", (int)(v - line), line,
				!s.value_len && v > line && (v[-1] == '=' || v[-1] == ':') ? " " : "", k->value,
				*rest == ';' || *rest == '#' ? " " : "", (int)(eol - rest), rest,
				b > a && t[b - 1] == '\n' ? "\n" : "");
	} else if (s.sec_line) {
		a = b = d->off[s.sec_last + 1];
		ins = xasprintf("%s%s = %s%s", a && t[a - 1] != '\n' ? nl : "", k->key, k->value, nl);
	} else {
		a = b = strlen(t);
		ins = xasprintf("%s%s[%s]%s%s = %s%s", a && t[a - 1] != '\n' ? nl : "", a ? nl : "", k->section, nl,
				k->key, k->value, nl);
	}
	doc_set(d, text_splice(t, a, b, ins));
	return 0;
}

/* Does every key of SETS (N; of one key, its last) read back from D as it
 * was given, one line? (A value inih cuts, at an inline comment, or whose
 * blanks at either end it drops, does not.) */
static int doc_check_sets(const struct doc *d, const struct setting *sets, size_t n, const char *path,
			  struct oerr *err)
{
	for (size_t i = 0; i < n; i++) {
		struct spot s;
		bool later = false, ok;

		for (size_t j = i + 1; j < n && !later; j++)
			later = strcmp(sets[j].section, sets[i].section) == 0 && strcmp(sets[j].key, sets[i].key) == 0;
		if (later)
			continue;
		if (spot_find(&s, d, &sets[i], path, err) < 0) {
			strv_free(&s.values);
			return -1;
		}
		ok = s.first && s.values.n == 1 && strcmp(s.values.v[0], sets[i].value) == 0;
		strv_free(&s.values);
		if (!ok)
			return oerr_usage(err, "--set %s: the value would not read back as given (a ';' or '#' after a "
					  "blank starts a comment; blanks at either end are dropped)", sets[i].arg);
	}
	return 0;
}

/* The line of the loader's message ERR about PATH ("PATH:LINE: ..."), 0 if none */
static int err_line(const struct oerr *err, const char *path)
{
	size_t n = strlen(path);
	const char *q = err->msg + n;
	unsigned long line;

	if (strncmp(err->msg, path, n) == 0 && scan_lit(&q, ":") && scan_num(&q, &line, 10))
		return (int)line;
	return 0;
}

/* ERR, the loader's line about PATH, said with the --set of SETS (N)
 * that wrote the line it names, and that nothing was written: -1 */
static int refused(const struct doc *d, const struct setting *sets, size_t n, const char *path, struct oerr *err)
{
	size_t l = strlen(err->msg);
	int line = err_line(err, path);
	const char *arg = NULL;

	for (size_t i = n; i-- > 0 && line && !arg;) {
		struct oerr scratch;
		struct spot sp;

		if (spot_find(&sp, d, &sets[i], path, &scratch) == 0 && line >= sp.first && line <= sp.last)
			arg = sets[i].arg;
		strv_free(&sp.values);
	}
	if (arg)
		snprintf(err->msg + l, sizeof(err->msg) - l, " (--set %s: nothing written)", arg);
	else
		snprintf(err->msg + l, sizeof(err->msg) - l, " (nothing written)");
	return -1;
}

/* Is NAME one the loader reads (not hidden, *.ini)? */
static bool ini_name(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && name[0] != '.' && strcmp(name + n - 4, ".ini") == 0;
}

/* The *.ini names of a directory but one (SKIP), into NAMES */
struct others {
	const char *skip;
	struct strv names;
};

static void push_other(const char *name, void *arg)
{
	struct others *o = arg;

	if (ini_name(name) && strcmp(name, o->skip) != 0)
		strv_push(&o->names, name);
}

/* Is a vendor of DIR's other files (links to them in TMP, loaded as the
 * hook loads them: each on its own) named VNAME? -1 (ERR) */
static int name_check(const char *dir, const char *tmp, const char *name, const char *vname, const char *path,
		      struct oerr *err)
{
	_cleanup_free_ char *real = realpath(dir, NULL);
	_cleanup_close_ int dfd = real ? open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	struct others o = { .skip = name };
	struct config cfg;
	int r = 0;

	if (dfd < 0 || dir_each(dfd, push_other, &o) < 0) {
		strv_free(&o.names);
		return 0;  /* a new directory (-o): no other file */
	}
	for (size_t i = 0; i < o.names.n; i++) {
		_cleanup_free_ char *target = xasprintf("%s/%s", real, o.names.v[i]);
		_cleanup_free_ char *link = xasprintf("%s/%s", tmp, o.names.v[i]);

		if (symlink(target, link) < 0)
			r = oerr_set(err, errno, "%s", link);
	}
	config_load_each(&cfg, tmp);
	for (size_t i = 0; i < cfg.n && r == 0; i++)
		if (strcmp(cfg.vendors[i].name, vname) == 0)
			r = oerr_usage(err, "%s: vendor '%s' is already defined in %s/%s", path, vname, dir,
				       strrchr(cfg.vendors[i].file, '/') + 1);
	config_free(&cfg);
	for (size_t i = 0; i < o.names.n; i++) {
		_cleanup_free_ char *link = xasprintf("%s/%s", tmp, o.names.v[i]);

		unlink(link);
	}
	strv_free(&o.names);
	return r;
}

/* Does TEXT load, as the file NAME (a *.ini name) that PATH is or will
 * be, in the directory DIR? The loader's own loads, of a private
 * directory: holding it alone (config_load, its every check), then beside
 * DIR's other files (name_check: no two vendors of one name). -1: ERR,
 * the loader's line, about PATH. */
static int load_check(const char *path, const char *dir, const char *name, const char *text, struct oerr *err)
{
	const char *tmp = getenv("TMPDIR");
	_cleanup_free_ char *tdir = xasprintf("%s/ocidec-config.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	_cleanup_free_ char *file = NULL;
	_cleanup_close_ int fd = -1;
	struct config cfg;
	size_t n;
	int r;

	if (!mkdtemp(tdir))
		return oerr_set(err, errno, "%s: for a copy to load", tdir);
	file = xasprintf("%s/%s", tdir, name);
	n = strlen(file);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0) {
		r = oerr_set(err, errno, "%s", file);
	} else if ((r = config_load(&cfg, tdir, err)) < 0 && strncmp(err->msg, file, n) == 0) {
		_cleanup_free_ char *m = xconcat(path, err->msg + n);

		snprintf(err->msg, sizeof(err->msg), "%s", m);
	}
	unlink(file);
	if (r == 0) {
		r = name_check(dir, tdir, name, cfg.vendors[0].name, path, err);
		config_free(&cfg);
	}
	rmdir(tdir);
	return r;
}

/* The file VENDOR: DIR/VENDOR.ini, else the file of the vendor so named */
static char *vendor_file(const char *dir, const char *vendor, struct oerr *err)
{
	char *path = xasprintf("%s/%s.ini", dir, vendor);
	struct config cfg;
	struct stat st;

	if (lstat(path, &st) == 0 || errno != ENOENT)
		return path;
	free(path);
	if (stat(dir, &st) < 0)
		return oerr_usage(err, "config directory %s: %s", dir, strerror(errno)), NULL;
	config_load_each(&cfg, dir);
	path = config_vendor(&cfg, vendor) ? xstrdup(config_vendor(&cfg, vendor)->file) : NULL;
	if (!path && cfg.nbroken)  /* it may be among them */
		oerr_usage(err, "%s: no vendor '%s' in the files the loader takes; %s", dir, vendor,
			   cfg.broken[0].err.msg);
	else if (!path)
		oerr_usage(err, "%s: no vendor '%s'", dir, vendor);
	config_free(&cfg);
	return path;
}

/* The vendor file being read: its directory (open), its name there, its stat */
struct source {
	const char *path;
	char *dir;
	const char *name;
	int dirfd;
	struct stat st;
};

/* S's text into D. STRICT (a new config is made of it): as the loader
 * takes a file, and no symlink. */
static int source_read(struct source *s, bool strict, struct doc *d, struct oerr *err)
{
	_cleanup_close_ int fd = -1;
	struct stat ds;
	char *text;
	size_t len;

	s->dir = path_dir(s->path);
	if (!strchr(s->path, '/')) {
		free(s->dir);
		s->dir = xstrdup(".");
	}
	s->name = strrchr(s->path, '/') ? strrchr(s->path, '/') + 1 : s->path;
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0)
		return oerr_usage(err, "%s: %s", s->dir, strerror(errno));
	fd = openat(s->dirfd, s->name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (strict ? O_NOFOLLOW : 0));
	if (fd < 0 && errno == ELOOP && strict)
		return oerr_usage(err, "%s: refused: a symbolic link (name the file itself)", s->path);
	if (fd < 0)
		return oerr_usage(err, "%s: %s", s->path, strerror(errno));
	if (fstat(fd, &s->st) < 0 || fstat(s->dirfd, &ds) < 0)
		return oerr_set(err, errno, "%s: stat", s->path);
	if (!S_ISREG(s->st.st_mode))
		return oerr_usage(err, "%s: not a regular file", s->path);
	if (strict && config_check_owner(s->path, &s->st, &ds, err) < 0)
		return -1;
	if (read_fd_all(fd, MAX_FILE, &text, &len, err) < 0)
		return oerr_prefix(err, "%s", s->path);
	if (strlen(text) != len) {
		free(text);
		return oerr_usage(err, "%s: contains a NUL byte", s->path);
	}
	doc_set(d, text);
	return 0;
}

static void source_free(struct source *s)
{
	free(s->dir);
	if (s->dirfd >= 0)
		close(s->dirfd);
}

/* --get: each key's value, a line each; 1 when one is not set (said) */
static int print_gets(const struct doc *d, char *const *gets, size_t n, const char *path, struct oerr *err)
{
	int status = EXIT_OK;

	for (size_t i = 0; i < n; i++) {
		struct setting k = { .arg = gets[i] };
		struct spot s = { 0 };
		int r = setting_name(&k, gets[i], err) < 0 || spot_find(&s, d, &k, path, err) < 0 ? -1 : 0;

		if (r == 0 && s.first) {
			_cleanup_free_ char *v = strv_join(&s.values, " ");
			out("%s\n", v);
		} else if (r == 0) {
			struct oerr e;

			oerr_set(&e, 0, "%s: %s is not set (in [%s])", path, gets[i], k.section);
			status = applet_fail(&e);
		}
		strv_free(&s.values);
		setting_free(&k);
		if (r < 0)
			return APPLET_FAILED;
	}
	return applet_finish_stdout(status);
}

/* TEXT written to OUTPUT (-o): its directory made (0755, as nvidia-ctk
 * does), with MODE; what was there replaced, never written through */
static int write_output(const char *output, const char *text, mode_t mode, struct oerr *err)
{
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), dfd = -1;
	_cleanup_free_ char *path = NULL, *dir = NULL;
	char cwd[PATH_MAX];

	if (output[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return oerr_set(err, errno, "getcwd");
	path = path_clean_join(output[0] == '/' ? "/" : cwd, output);
	dir = path_dir(path);
	if (root < 0)
		return oerr_set(err, errno, "/");
	dfd = root_mkdirs(root, dir, 0, NULL, NULL, err);
	if (dfd < 0)
		return -1;
	return root_write_atomic(root, path, text, strlen(text), mode, true, err);
}

/* TEXT over S's file: atomically (root_write_atomic: a temporary file in
 * its directory renamed over it), its mode and owner kept */
static int write_in_place(const struct source *s, const char *text, struct oerr *err)
{
	if (root_write_atomic(s->dirfd, s->name, text, strlen(text), s->st.st_mode & 07777, true, err) < 0)
		return -1;
	if ((s->st.st_uid != geteuid() || s->st.st_gid != getegid()) &&
	    fchownat(s->dirfd, s->name, s->st.st_uid, s->st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return oerr_set(err, errno, "%s: written, its owner not kept", s->path);
	return 0;
}

/* The SETS (N) applied to D, read from S; what they make loaded as the
 * file it will be (OUTPUT, or S's, in its directory), then printed or
 * written; an OUTPUT that is there and no regular file is refused */
static int set_and_write(struct source *s, struct doc *d, const struct setting *sets, size_t n, const char *output,
			 bool in_place, struct oerr *err)
{
	const char *oname = output ? (strrchr(output, '/') ? strrchr(output, '/') + 1 : output) : NULL;
	const char *name = oname && ini_name(oname) ? oname : s->name, *path = output ? output : s->path;
	_cleanup_free_ char *original = xstrdup(d->text);
	_cleanup_free_ char *odir = !output ? xstrdup(s->dir) : strchr(output, '/') ? path_dir(output) : xstrdup(".");
	struct stat st;

	for (size_t i = 0; i < n; i++)
		if (doc_set_key(d, &sets[i], s->path, err) < 0)
			return -1;
	if (doc_check_sets(d, sets, n, s->path, err) < 0)
		return -1;
	if (!ini_name(name))
		return oerr_usage(err, "%s: not a vendor file (the loader reads only *.ini)", path);
	if (output && lstat(output, &st) == 0 && !S_ISREG(st.st_mode))
		return oerr_usage(err, "%s: refused: %s", output,
				  S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
	if (load_check(path, odir, name, d->text, err) < 0)
		return refused(d, sets, n, path, err);
	if (output)
		return write_output(output, d->text, s->st.st_mode & 0777, err);
	if (in_place)
		return strcmp(original, d->text) == 0 ? 0 : write_in_place(s, d->text, err);
	out("%s", d->text);
	return applet_finish_stdout(EXIT_OK);
}

APPLET_MAIN(config_cmd)
{
	static const struct option opts[] = {
		{ "config-dir", required_argument, NULL, 'c' },
		{ "config-file", required_argument, NULL, 'F' },
		{ "config", required_argument, NULL, 'F' },
		{ "set", required_argument, NULL, 'S' },
		{ "get", required_argument, NULL, 'G' },
		{ "in-place", no_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	const char *dir = config_dir_default(), *file = NULL, *output = NULL;
	_cleanup_strv_ struct strv set_args = { 0 }, gets = { 0 };
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ struct setting *sets = NULL;
	struct source src = { .dirfd = -1 };
	struct doc d = { 0 };
	bool in_place = false;
	struct stat st;
	int o, r;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:io:", opts, NULL)) != -1) {
		switch (o) {
		case 'c':
			if (stat(optarg, &st) == 0 && S_ISREG(st.st_mode))
				file = optarg;  /* nvidia-ctk's -c FILE */
			else
				dir = optarg;
			break;
		case 'F': file = optarg; break;
		case 'S': strv_push(&set_args, optarg); break;
		case 'G': strv_push(&gets, optarg); break;
		case 'i': in_place = true; break;
		case 'o': output = optarg; break;
		default: return applet_bad_option(o, argc, argv);
		}
	}
	if (in_place && output)
		return applet_usage_error("--in-place and --output exclude each other");
	if (gets.n && (set_args.n || in_place || output))
		return applet_usage_error("--get goes alone: not with --set, --in-place or --output");
	if (argc - optind > 1 || (file && argc - optind == 1))
		return applet_usage_error("one VENDOR or FILE");
	if (optind < argc)
		file = argv[optind];
	/* a VENDOR's name has no '/' and no dot */
	if (file && (strchr(file, '/') || strchr(file, '.')))
		path = xstrdup(file);
	else if (!(path = vendor_file(dir, file ? file : "nvidia", err)))
		return APPLET_FAILED;

	sets = xcalloc(set_args.n + 1, sizeof(*sets));
	src.path = path;
	r = source_read(&src, set_args.n || in_place || output, &d, err);
	for (size_t i = 0; r == 0 && i < set_args.n; i++)
		r = setting_parse(&sets[i], set_args.v[i], err);
	if (r == 0 && gets.n)
		r = print_gets(&d, gets.v, gets.n, path, err);
	else if (r == 0 && !set_args.n && !output && !in_place)
		out("%s", d.text), r = applet_finish_stdout(EXIT_OK);
	else if (r == 0 && (set_args.n || output))
		r = set_and_write(&src, &d, sets, set_args.n, output, in_place, err);
	for (size_t i = 0; i < set_args.n; i++)
		setting_free(&sets[i]);
	source_free(&src);
	doc_free(&d);
	return r < 0 ? APPLET_FAILED : r;
}
