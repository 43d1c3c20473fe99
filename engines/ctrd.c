/* ctrd.c: see ctrd.h. */
#include "engines/ctrd.h"

#include "base/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *p;
	size_t n, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* The table a header line names ("[a.b]" or "[[a.b]]", spaces around), into
 * OUT; false when LINE is no header */
static bool header(const char *line, size_t len, char *out, size_t outlen)
{
	const char *s = line, *e = line + len;
	size_t n;

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (e - s < 2 || *s != '[' || e[-1] != ']')
		return false;
	s++, e--;
	if (s < e && *s == '[' && e > s + 1 && e[-1] == ']')
		s++, e--;
	n = (size_t)(e - s);
	if (n + 1 > outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	/* containerd 2 (go-toml v2) quotes keys with '...': one spelling */
	for (char *q = out; (q = strchr(q, '\'')); q++)
		*q = '"';
	return true;
}

/* The length of the run of SET's characters at S, within N bytes (a
 * line of the dump is not NUL-terminated) */
static size_t span(const char *s, size_t n, const char *set)
{
	size_t i = 0;

	while (i < n && s[i] && strchr(set, s[i]))
		i++;
	return i;
}

/* Is TABLE the table PREFIX or one under it? */
static bool under(const char *table, const char *prefix)
{
	size_t l = strlen(prefix);

	return strncmp(table, prefix, l) == 0 && (!table[l] || table[l] == '.');
}

/* "key = value" in LINE: does the key equal KEY? then *VALUE (in LINE) */
static bool key_is(const char *line, size_t len, const char *key, const char **value, size_t *vlen)
{
	const char *s = line, *e = line + len;
	size_t kl = strlen(key);

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	if ((size_t)(e - s) <= kl || strncmp(s, key, kl) != 0 || (s[kl] != ' ' && s[kl] != '='))
		return false;
	s += kl;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	if (s == e || *s != '=')
		return false;
	s++;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*value = s;
	*vlen = (size_t)(e - s);
	return true;
}

/* A TOML string's content without its quotes ("basic" or 'literal'; no
 * escapes in the names and paths read here: a basic one with a backslash
 * is refused), or NULL */
static char *unquote(const char *v, size_t n)
{
	if (n < 2 || (v[0] != '"' && v[0] != '\'') || v[n - 1] != v[0] || memchr(v + 1, v[0], n - 2) ||
	    (v[0] == '"' && memchr(v + 1, '\\', n - 2)))
		return NULL;
	return xstrndup(v + 1, n - 2);
}

/* The header of runtime RT's table, in both spellings (bare and quoted) */
static bool runtime_table(const char *table, const char *rts, const char *rt, const char **rest)
{
	char *bare = xasprintf("%s%s", rts, rt), *quoted = xasprintf("%s\"%s\"", rts, rt);
	bool r = false;

	if (under(table, bare)) {
		*rest = table + strlen(bare);
		r = true;
	} else if (under(table, quoted)) {
		*rest = table + strlen(quoted);
		r = true;
	}
	free(bare);
	free(quoted);
	return r;
}

#define EACH_LINE(text, len, l, ll)                                                                 \
	for (const char *l = (text), *nl_ = NULL; l < (text) + (len);                               \
	     l = nl_ ? nl_ + 1 : (text) + (len))                                                    \
		for (size_t ll = (size_t)(((nl_ = memchr(l, '\n', (size_t)((text) + (len) - l))) ? nl_ \
									   : (text) + (len)) - l), \
			    once_ = 1; once_; once_ = 0)

char *ctrd_dropin(const char *dump, size_t len, int version, const char *name, const char *shim, char **binary)
{
	const char *plugin = version >= 3 ? "io.containerd.cri.v1.runtime" : "io.containerd.grpc.v1.cri";
	char *cri = xasprintf("plugins.\"%s\"", plugin), *ctr = xasprintf("%s.containerd", cri);
	char *rts = xasprintf("%s.runtimes.", ctr), *def = NULL, *runc_type = NULL;
	char table[1024] = "";
	struct buf out = { 0 }, rt = { 0 };
	bool have_cri = false, in_opts = false, bin_done = false, typed = false, dup = false;
	struct strv seen = { 0 };
	const char *v, *rest;
	size_t vl;

	*binary = NULL;
	if (memchr(dump, '\0', len)) {  /* no text containerd prints */
		free(cri), free(ctr), free(rts);
		return NULL;
	}
	/* the default runtime's name, and the type of its table */
	EACH_LINE(dump, len, l, ll) {
		if (header(l, ll, table, sizeof(table))) {
			have_cri |= under(table, cri);
			continue;
		}
		if (strcmp(table, ctr) == 0 && key_is(l, ll, "default_runtime_name", &v, &vl) && !def)
			def = unquote(v, vl);
	}
	if (!have_cri) {
		free(cri), free(ctr), free(rts), free(def);
		return NULL;
	}
	if (!def || !*def || strcmp(def, name) == 0) {  /* ours as the default: runc's options */
		free(def);
		def = xstrdup("runc");
	}
	/* a runtime that is not runc's kind (kata, gVisor as the default):
	 * runc's table instead */
	table[0] = '\0';
	EACH_LINE(dump, len, l, ll) {
		if (header(l, ll, table, sizeof(table)))
			continue;
		if (runtime_table(table, rts, def, &rest) && !*rest && key_is(l, ll, "runtime_type", &v, &vl) &&
		    !runc_type)
			runc_type = unquote(v, vl);
	}
	if (runc_type && *runc_type && strcmp(runc_type, "io.containerd.runc.v2") != 0) {
		free(def);
		def = xstrdup("runc");
	}
	free(runc_type);

	puts_(&out, "# ocidec install: the runtime shim as containerd's runtime \"");
	puts_(&out, name);
	puts_(&out, "\" (a RuntimeClass's handler),\n"
		    "# made from `containerd config dump` of this node");
	puts_(&out, version >= 3 ? ".\n" : ": containerd 1.x\n"
		    "# replaces a plugin's section with an imported file's whole, so this file\n"
		    "# carries the node's CRI section as it was. Change CRI settings, then run\n"
		    "# ocidec install again. --uninstall removes this file.\n");
	puts_(&out, version >= 3 ? "version = 3\n" : "version = 2\n");

	table[0] = '\0';
	EACH_LINE(dump, len, l, ll) {
		bool is_hdr = header(l, ll, table, sizeof(table));
		bool ours = runtime_table(table, rts, name, &rest);
		bool is_def = runtime_table(table, rts, def, &rest);

		if (span(l, ll, " \t\r") == ll)  /* blank */
			continue;
		if (is_hdr)
			in_opts = is_def && strcmp(rest, ".options") == 0;
		/* containerd 1.x: the whole CRI section, but an earlier ocidec's runtime */
		if (version < 3 && under(table, cri) && !ours) {
			if (is_hdr)
				put(&out, "\n", 1);
			put(&out, l + span(l, ll, " \t"), ll - span(l, ll, " \t"));
			put(&out, "\n", 1);
		}
		if (is_hdr && is_def) {  /* a table given twice (not TOML): its first only */
			dup = false;
			for (size_t i = 0; i < seen.n && !dup; i++)
				dup = strcmp(seen.v[i], rest) == 0;
			if (!dup)
				strv_push(&seen, rest);
		}
		if (!is_def || dup)
			continue;
		/* the default runtime's tables, renamed; its type runc's, its
		 * binary the shim */
		if (is_hdr) {
			if (!typed) {
				puts_(&rt, "\n[");
				puts_(&rt, rts);
				puts_(&rt, name);
				puts_(&rt, "]\n  runtime_type = \"io.containerd.runc.v2\"\n");
				typed = true;
			}
			if (!*rest)
				continue;
			puts_(&rt, "\n[");
			puts_(&rt, rts);
			puts_(&rt, name);
			puts_(&rt, rest);
			puts_(&rt, "]\n");
			if (in_opts) {
				puts_(&rt, "  BinaryName = \"");
				puts_(&rt, shim);
				puts_(&rt, "\"\n");
				bin_done = true;
			}
			continue;
		}
		if (in_opts && key_is(l, ll, "BinaryName", &v, &vl)) {
			char *b = unquote(v, vl);
			if (b && *b && !*binary)
				*binary = b;
			else
				free(b);
			continue;
		}
		if (!*rest && key_is(l, ll, "runtime_type", &v, &vl))
			continue;
		/* the vendors' annotations reach the runtime (activation by
		 * annotation, CDI's) */
		if (!*rest && key_is(l, ll, "container_annotations", &v, &vl) && vl >= 2 && v[0] == '[' &&
		    !mem_find(v, vl, "\"ocidec.io/*\"", 13) && !mem_find(v, vl, "'ocidec.io/*'", 13)) {
			puts_(&rt, "  container_annotations = [\"ocidec.io/*\"");
			puts_(&rt, 1 + span(v + 1, vl - 1, " ") < vl && v[1 + span(v + 1, vl - 1, " ")] == ']' ? "" : ", ");
			put(&rt, v + 1, vl - 1);
			put(&rt, "\n", 1);
			continue;
		}
		put(&rt, "  ", 2);
		put(&rt, l + span(l, ll, " \t"), ll - span(l, ll, " \t"));
		put(&rt, "\n", 1);
	}
	if (!typed) {  /* no table of the default runtime: runc's kind, no options */
		char *t = xasprintf("\n[%s%s]\n  runtime_type = \"io.containerd.runc.v2\"\n", rts, name);
		puts_(&rt, t);
		free(t);
	}
	if (!bin_done) {
		char *t = xasprintf("\n[%s%s.options]\n  BinaryName = \"%s\"\n", rts, name, shim);
		puts_(&rt, t);
		free(t);
	}
	put(&out, rt.p, rt.n);
	strv_free(&seen);
	free(rt.p);
	free(cri), free(ctr), free(rts), free(def);
	return out.p;
}

int ctrd_runtimes(const char *dump, size_t len, int version, char **default_name,
		  void (*fn)(void *arg, const char *name, const char *type, const char *binary), void *arg)
{
	const char *plugin = version >= 3 ? "io.containerd.cri.v1.runtime" : "io.containerd.grpc.v1.cri";
	char *cri = xasprintf("plugins.\"%s\"", plugin), *ctr = xasprintf("%s.containerd", cri);
	char *rts = xasprintf("%s.runtimes.", ctr), table[1024] = "";
	struct strv names = { 0 }, types = { 0 }, bins = { 0 };
	bool have_cri = false;
	const char *v;
	size_t vl;

	*default_name = NULL;
	if (memchr(dump, '\0', len)) {
		free(cri), free(ctr), free(rts);
		return -1;
	}
	EACH_LINE(dump, len, l, ll) {
		char *name, *dot;
		size_t i;

		if (header(l, ll, table, sizeof(table))) {
			have_cri |= under(table, cri);
			continue;
		}
		if (strcmp(table, ctr) == 0 && key_is(l, ll, "default_runtime_name", &v, &vl) && !*default_name)
			*default_name = unquote(v, vl);
		if (strncmp(table, rts, strlen(rts)) != 0)
			continue;
		/* runtimes.NAME or runtimes."NAME", then nothing or ".options" */
		name = xstrdup(table + strlen(rts));
		if (name[0] == '"' && (dot = strchr(name + 1, '"'))) {
			memmove(name, name + 1, strlen(name));
			dot = strchr(name, '"');
			*dot = '\0';
			dot = dot[1] == '.' ? dot + 1 : NULL;
		} else if ((dot = strchr(name, '.'))) {
			*dot = '\0';
			dot++;
		}
		for (i = 0; i < names.n && strcmp(names.v[i], name) != 0; i++)
			;
		if (i == names.n) {
			strv_push(&names, name);
			strv_push(&types, "");
			strv_push(&bins, "");
		}
		if (!dot && key_is(l, ll, "runtime_type", &v, &vl)) {
			char *t = unquote(v, vl);
			free(types.v[i]);
			types.v[i] = t ? t : xstrdup("");
		} else if (dot && strcmp(dot, "options") == 0 && key_is(l, ll, "BinaryName", &v, &vl)) {
			char *b = unquote(v, vl);
			free(bins.v[i]);
			bins.v[i] = b ? b : xstrdup("");
		}
		free(name);
	}
	for (size_t i = 0; i < names.n && have_cri; i++)
		fn(arg, names.v[i], *types.v[i] ? types.v[i] : NULL, *bins.v[i] ? bins.v[i] : NULL);
	strv_free(&names), strv_free(&types), strv_free(&bins);
	free(cri), free(ctr), free(rts);
	return have_cri ? 0 : -1;
}

const char *ctrd_version(const char *dump, size_t len)
{
	const char *v;
	size_t vl;
	char table[8];

	EACH_LINE(dump, len, l, ll) {
		if (header(l, ll, table, sizeof(table)))
			return NULL;
		if (key_is(l, ll, "version", &v, &vl) && vl && v[0] >= '0' && v[0] <= '9')
			return v;
	}
	return NULL;
}

const char *ctrd_top_key(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *s = p + strspn(p, " \t");
		if (*s == '[')
			return NULL;
		if (strncmp(s, key, kl) == 0 && strchr(" \t=", s[kl]))
			return s;
	}
	return NULL;
}

#define IMPORT_LINE "imports = [\"%s\"]  # ocidec install\n"

char *ctrd_add_import(const char *text, const char *dropin)
{
	_cleanup_free_ char *quoted = xasprintf("\"%s\"", dropin);
	const char *imp, *br, *end, *last;

	if (strstr(text, quoted))
		return xstrdup(text);
	imp = ctrd_top_key(text, "imports");
	br = imp ? strchr(imp, '[') : NULL;
	end = br ? strchr(br, ']') : NULL;
	if (!br || !end || (strchr(imp, '\n') && br > strchr(imp, '\n'))) {
		_cleanup_free_ char *line = xasprintf(IMPORT_LINE, dropin);
		return xconcat(line, text);
	}
	/* after the array's last element, whatever spacing and lines follow;
	 * after a trailing comma, with one of its own (what --uninstall takes
	 * out is ", STRING" in every case) */
	for (last = end - 1; last > br && strchr(" \t\r\n", *last); last--)
		;
	if (*last == ',')
		return xasprintf("%.*s %s,%s", (int)(last + 1 - text), text, quoted, last + 1);
	return xasprintf("%.*s%s%s%s", (int)(last + 1 - text), text, *last == '[' ? "" : ", ", quoted, last + 1);
}

char *ctrd_new_config(const char *dropin, int version)
{
	return xasprintf("version = %d\n" IMPORT_LINE, version >= 3 ? 3 : 2, dropin);
}

char *ctrd_remove_import(const char *text, const char *dropin)
{
	/* the line, or the string with the comma and space that came with it
	 * (after the last element; before the first, as installs before
	 * 0.1.1 put it), or the string alone */
	_cleanup_free_ char *line = xasprintf(IMPORT_LINE, dropin);
	_cleanup_free_ char *after = xasprintf(", \"%s\"", dropin);
	_cleanup_free_ char *before = xasprintf("\"%s\", ", dropin);
	_cleanup_free_ char *spaced = xasprintf(" \"%s\"", dropin);
	_cleanup_free_ char *alone = xasprintf("\"%s\"", dropin);
	const char *const forms[] = { line, after, before, spaced, alone, NULL };

	for (int i = 0; forms[i]; i++) {
		const char *at = strstr(text, forms[i]);

		if (at)
			return xasprintf("%.*s%s", (int)(at - text), text, at + strlen(forms[i]));
	}
	return xstrdup(text);
}

char *ctrd_set_key(const char *text, const char *table, const char *key, const char *value)
{
	struct buf out = { 0 };
	char cur[1024] = "";
	const char *v;
	size_t vl, len = strlen(text);
	bool in = false, done = false, seen = false;

	EACH_LINE(text, len, l, ll) {
		if (header(l, ll, cur, sizeof(cur))) {
			if (in && !done) {  /* the table ends without the key: it goes last in it */
				puts_(&out, "  "), puts_(&out, key), puts_(&out, " = "), puts_(&out, value), puts_(&out, "\n");
				done = true;
			}
			in = strcmp(cur, table) == 0;
			seen |= in;
		} else if (in && !done && key_is(l, ll, key, &v, &vl)) {
			put(&out, l, (size_t)(v - l));  /* its indentation and "key = " kept */
			puts_(&out, value);
			puts_(&out, "\n");
			done = true;
			continue;
		}
		put(&out, l, ll);
		puts_(&out, "\n");
	}
	if (in && !done) {
		puts_(&out, "  "), puts_(&out, key), puts_(&out, " = "), puts_(&out, value), puts_(&out, "\n");
		done = true;
	}
	if (!seen) {
		puts_(&out, "\n["), puts_(&out, table), puts_(&out, "]\n  ");
		puts_(&out, key), puts_(&out, " = "), puts_(&out, value), puts_(&out, "\n");
	}
	put(&out, "", 1);
	return out.p;
}

char *ctrd_get_key(const char *text, const char *table, const char *key)
{
	char cur[1024] = "";
	const char *v;
	size_t vl, len = strlen(text);
	bool in = false;

	EACH_LINE(text, len, l, ll) {
		if (header(l, ll, cur, sizeof(cur)))
			in = strcmp(cur, table) == 0;
		else if (in && key_is(l, ll, key, &v, &vl))
			return xstrndup(v, vl);
	}
	return NULL;
}

char *ctrd_carry(char *fresh, const char *old, int version, const char *name, const char *old_name)
{
	const char *cri = version >= 3 ? "plugins.\"io.containerd.cri.v1.runtime\"" : "plugins.\"io.containerd.grpc.v1.cri\"";
	char *ctr = xasprintf("%s.containerd", cri), *q = xasprintf("\"%s\"", name);
	char *oq = old_name ? xasprintf("\"%s\"", old_name) : NULL;
	char *d = old ? ctrd_get_key(old, ctr, "default_runtime_name") : NULL;
	char *c = old ? ctrd_get_key(old, cri, "enable_cdi") : NULL;

	if (d && (strcmp(d, q) == 0 || (oq && strcmp(d, oq) == 0))) {
		char *k = ctrd_set_key(fresh, ctr, "default_runtime_name", q);
		free(fresh);
		fresh = k;
	}
	if (c && strcmp(c, "true") == 0) {
		char *k = ctrd_set_key(fresh, cri, "enable_cdi", "true");
		free(fresh);
		fresh = k;
	}
	free(d), free(c), free(ctr), free(q), free(oq);
	return fresh;
}

char *ctrd_as_version2(const char *dropin)
{
	static const char v3[] = "[plugins.\"io.containerd.cri.v1.runtime\"", v2[] = "[plugins.\"io.containerd.grpc.v1.cri\"";
	struct buf out = { 0 };

	EACH_LINE(dropin, strlen(dropin), l, ll) {
		if (ll >= sizeof(v3) - 1 && memcmp(l, v3, sizeof(v3) - 1) == 0) {
			puts_(&out, v2);
			put(&out, l + sizeof(v3) - 1, ll - (sizeof(v3) - 1));
		} else if (ll == 11 && memcmp(l, "version = 3", 11) == 0) {
			puts_(&out, "version = 2");
		} else {
			put(&out, l, ll);
		}
		put(&out, "\n", 1);
	}
	if (!out.p)
		puts_(&out, "");
	return out.p;
}
