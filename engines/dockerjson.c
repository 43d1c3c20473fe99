/* dockerjson.c: see dockerjson.h. */
#include "engines/dockerjson.h"

#include "formats/json.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#define DAEMON_JSON "/etc/docker/daemon.json"

/* How many members of OBJ are named NAME (a hand-edited file may repeat
 * one; Docker, reading it with Go's encoding/json, takes the last) */
static int members_named(const cJSON *obj, const char *name)
{
	int n = 0;

	for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next)
		n += c->string && strcmp(c->string, name) == 0;
	return n;
}

/* Every member of OBJ named NAME gone */
static void delete_all(cJSON *obj, const char *name)
{
	while (cJSON_GetObjectItemCaseSensitive(obj, name))
		cJSON_DeleteItemFromObjectCaseSensitive(obj, name);
}

/* daemon.json's TEXT (NULL or empty: none, an empty object when EMPTY_OK),
 * read keeping numbers' text; NULL with ERR (EXIT_USAGE) when it is no
 * JSON object */
static cJSON *parse_daemon(const char *text, bool empty_ok, struct oerr *err)
{
	const char *end = NULL;
	cJSON *j = text && *text ? json_parse_exact(text, strlen(text), &end) : empty_ok ? cJSON_CreateObject() : NULL;

	if (!cJSON_IsObject(j)) {
		_cleanup_free_ char *where = !j && text && *text ? json_where(text, end) : NULL;

		cJSON_Delete(j);
		if (where)
			oerr_usage(err, DAEMON_JSON ": no JSON: it stops at %s (dockerd refuses it too): left alone", where);
		else
			oerr_usage(err, DAEMON_JSON ": not a JSON object: left alone");
		return NULL;
	}
	return j;
}

/* The indentation of TEXT's first indented line (spaces or tabs, up to 8),
 * or four spaces (nvidia-ctk's) */
static void indent_of(const char *text, char out[9])
{
	strcpy(out, "    ");
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strspn(l, " \t");

		if (n && n <= 8 && l[n] == '"') {
			memcpy(out, l, n);
			out[n] = '\0';
			return;
		}
	}
}

/* J (freed) as daemon.json's text: pretty-printed in the indentation of
 * the file it was read from (TEXT), numbers as read, a newline at the end.
 * cJSON's layout has a tab per level and one after each key's colon, and
 * no other raw tab (one in a string is escaped): each becomes the file's */
static char *print_daemon(cJSON *j, const char *text)
{
	char *outp = json_print_exact(j, 1), ind[9];
	size_t n = 2, il;
	char *line, *o;

	cJSON_Delete(j);
	indent_of(text, ind);
	il = strlen(ind);
	for (const char *p = outp; *p; p++)
		n += *p == '\t' ? il : 1;
	o = line = xmalloc(n);
	for (const char *p = outp; *p; p++) {
		if (*p != '\t')
			*o++ = *p;
		else if (p == outp || p[-1] == '\n' || p[-1] == '\t')
			o = stpcpy(o, ind);
		else
			*o++ = ' ';
	}
	strcpy(o, "\n");
	free(outp);
	return line;
}

char *docker_json_merge(const char *text, const char *name, const char *path, struct oerr *err)
{
	cJSON *j = parse_daemon(text, true, err), *rt, *want;

	if (!j)
		return NULL;
	rt = cJSON_GetObjectItemCaseSensitive(j, "runtimes");
	if (rt && !cJSON_IsObject(rt)) {
		cJSON_Delete(j);
		oerr_usage(err, DAEMON_JSON ": \"runtimes\" is not an object: left alone");
		return NULL;
	}
	if (path) {
		want = cJSON_CreateObject();
		cJSON_AddStringToObject(want, "path", path);
		if (rt && members_named(rt, name) == 1 &&
		    cJSON_Compare(cJSON_GetObjectItemCaseSensitive(rt, name), want, true)) {
			cJSON_Delete(want);
			cJSON_Delete(j);
			return xstrdup(text);
		}
		if (!rt)
			rt = cJSON_AddObjectToObject(j, "runtimes");
		delete_all(rt, name);
		cJSON_AddItemToObject(rt, name, want);
	} else {
		if (!rt || !cJSON_GetObjectItemCaseSensitive(rt, name)) {
			cJSON_Delete(j);
			return xstrdup(text ? text : "");
		}
		delete_all(rt, name);
		if (!rt->child)
			cJSON_DeleteItemFromObjectCaseSensitive(j, "runtimes");
	}
	return print_daemon(j, text);
}

char *docker_json_set(const char *text, const char *default_runtime, bool cdi, struct oerr *err)
{
	cJSON *j = parse_daemon(text, true, err), *f;

	if (!j)
		return NULL;
	f = cJSON_GetObjectItemCaseSensitive(j, "features");
	if (cdi && f && !cJSON_IsObject(f)) {
		cJSON_Delete(j);
		oerr_usage(err, DAEMON_JSON ": \"features\" is not an object: left alone");
		return NULL;
	}
	{
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "default-runtime");
		const cJSON *c = f ? cJSON_GetObjectItemCaseSensitive(f, "cdi") : NULL;
		bool same_d = !default_runtime || (members_named(j, "default-runtime") == 1 && cJSON_IsString(d) &&
						   strcmp(d->valuestring, default_runtime) == 0);
		bool same_c = !cdi || (members_named(f, "cdi") == 1 && cJSON_IsTrue(c));

		if (same_d && same_c) {  /* as it is: a second install changes nothing */
			cJSON_Delete(j);
			return xstrdup(text ? text : "");
		}
	}
	if (default_runtime) {
		delete_all(j, "default-runtime");
		cJSON_AddStringToObject(j, "default-runtime", default_runtime);
	}
	if (cdi) {
		if (!f)
			f = cJSON_AddObjectToObject(j, "features");
		delete_all(f, "cdi");
		cJSON_AddTrueToObject(f, "cdi");
	}
	return print_daemon(j, text);
}

char *docker_json_unset(const char *text, const char *name, bool cdi, struct oerr *err)
{
	cJSON *j = parse_daemon(text, false, err), *d, *f;

	if (!j)
		return NULL;
	d = cJSON_GetObjectItemCaseSensitive(j, "default-runtime");
	if (cJSON_IsString(d) && strcmp(d->valuestring, name) == 0)
		delete_all(j, "default-runtime");
	f = cJSON_GetObjectItemCaseSensitive(j, "features");
	if (cdi && cJSON_IsObject(f)) {
		delete_all(f, "cdi");
		if (!f->child)
			cJSON_DeleteItemFromObjectCaseSensitive(j, "features");
	}
	return print_daemon(j, text);
}
