/* The engines' facts: see engines.h */
#include "engines/engines.h"
#include "safety/rootfile.h"
#include "pipeline/sdbus.h"
#include "safety/rootpath.h"
#include "base/util.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_exec(int root, const char *path)
{
	_cleanup_close_ int fd = root_open(root, path, O_PATH);
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

bool engine_installed(int root, const struct engine *e)
{
	for (int i = 0; e->bins[i]; i++)
		if (is_exec(root, e->bins[i]))
			return true;
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* E's configuration files, in the order it reads them */
static void conf_files(int root, const struct engine *e, struct strv *out)
{
	for (int i = 0; e->confs && e->confs[i]; i++) {
		DIR *dd = root_opendir(root, e->confs[i]);
		struct dirent *d;
		size_t from = out->n;

		if (!dd) {
			strv_push(out, e->confs[i]);
			continue;
		}
		while ((d = readdir(dd))) {
			size_t l = strlen(d->d_name);
			if (d->d_name[0] != '.' && l > 5 && strcmp(d->d_name + l - 5, ".conf") == 0)
				strv_push_owned(out, xasprintf("%s/%s", e->confs[i], d->d_name));
		}
		closedir(dd);
		qsort(out->v + from, out->n - from, sizeof(*out->v), by_name);
	}
}

/* Over E's files (but SKIP): *SET when one sets hooks_dir; the answer of
 * the last that does for DIR */
static bool hooks_dir_scan(int root, const struct engine *e, const char *dir, const char *skip, bool *set)
{
	struct strv files = { 0 };
	bool named = false;

	*set = false;
	conf_files(root, e, &files);
	for (size_t i = 0; i < files.n; i++) {
		struct oerr err;
		char *text = NULL;
		size_t len;
		bool here = false;

		if ((skip && strcmp(files.v[i], skip) == 0) ||
		    root_read_file(root, files.v[i], 16u << 20, &text, &len, NULL, &err) != 1)
			continue;
		{
			bool n = conf_hooks_dir_names(text, dir, &here);
			if (here) {
				*set = true;
				named = n;
			}
		}
		free(text);
	}
	strv_free(&files);
	return named;
}

bool engine_reads_hooks_dir(int root, const struct engine *e, const char *dir, const char *skip)
{
	bool set, named = hooks_dir_scan(root, e, dir, skip, &set);

	return set ? named : strcmp(dir, HOOKS_DIR_USR) == 0;
}

bool engine_sets_hooks_dir(int root, const struct engine *e, const char *skip)
{
	bool set;

	hooks_dir_scan(root, e, "", skip, &set);
	return set;
}

bool host_has_systemd(int root)
{
	_cleanup_close_ int fd = root_open(root, "/run/systemd/system", O_PATH | O_DIRECTORY);

	return fd >= 0;
}

char *engine_apply_command(int root, const struct engine *e, bool restart)
{
	if (!e->unit)
		return NULL;
	if (host_has_systemd(root))
		return xasprintf("systemctl %s %s", restart ? "restart" : "reload", e->unit);
	/* (Debian's init script for Docker has no reload: the signal) */
	if (!restart && e->pidfile)
		return xasprintf("kill -HUP \"$(cat %s)\"", e->pidfile);
	{
		_cleanup_free_ char *script = xasprintf("/etc/init.d/%s", e->unit);
		if (restart && is_exec(root, script))
			return xasprintf("service %s restart", e->unit);
	}
	return NULL;
}

bool conf_hooks_dir_names(const char *text, const char *dir, bool *set)
{
	char *dq = xasprintf("\"%s\"", dir), *sq = xasprintf("'%s'", dir);
	bool named = false;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *s = l + strspn(l, " \t"), *p;
		char quote = 0, *val, *v;
		int depth = 0;

		if (strncmp(s, "hooks_dir", 9) != 0 || !strchr(" \t=", s[9]))
			continue;
		*set = true;
		/* the value without comments: to the end of the line, or of the
		 * array it opens (strings kept whole; '#' outside one starts a
		 * comment to the end of its line) */
		v = val = xmalloc(strlen(s) + 1);
		for (p = s + 9; *p; p++) {
			if (quote) {
				*v++ = *p;
				if (*p == quote)
					quote = 0;
				else if (*p == '\n')  /* no string spans lines */
					quote = 0;
				continue;
			}
			if (*p == '#') {
				p += strcspn(p, "\n");
				if (!*p)
					break;
			}
			if (*p == '\n' && depth <= 0)
				break;
			if (*p == '"' || *p == '\'')
				quote = *p;
			else if (*p == '[')
				depth++;
			else if (*p == ']' && --depth <= 0) {
				*v++ = *p;
				break;
			}
			*v++ = *p;
		}
		*v = '\0';
		named = strstr(val, dq) || strstr(val, sq);
		free(val);
		/* on after what the value took */
		l = *p ? p : p - 1;
	}
	free(dq);
	free(sq);
	return named;
}

int engine_connect(int root, const char *const socks[])
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = -1;

	for (int i = 0; socks[i] && s < 0; i++) {
		_cleanup_close_ int fd = root_open(root, socks[i], O_PATH);
		struct stat st;

		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != 0)
			continue;
		snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", fd);
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s >= 0 && connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			close(s);
			s = -1;
		}
	}
	return s;
}

bool engine_answers(int root, const struct engine *e)
{
	return e->answers && e->answers(root);
}

int engine_unit_state(int root, const struct engine *e, const char *suffix, char *state, size_t cap)
{
	static const char *const sd[] = { SDBUS_SOCKET, NULL };
	_cleanup_close_ int s = -1;
	char unit[64];
	struct oerr err;

	if (!e->unit || !host_has_systemd(root) || (s = engine_connect(root, sd)) < 0)
		return -1;
	snprintf(unit, sizeof(unit), "%s.%s", e->unit, suffix);
	return sdbus_unit_state(s, unit, state, cap, &err);
}

/* dockerd's /info, asked on its socket in the host root */
cJSON *engine_docker_info(int root)
{
	static const char *const socks[] = { "/run/docker.sock", "/var/run/docker.sock", NULL };
	static const char req[] = "GET /info HTTP/1.0\r\nHost: docker\r\n\r\n";
	char *buf = NULL, *body;
	size_t n = 0, cap = 0;
	cJSON *j = NULL;
	int s = -1;

	s = engine_connect(root, socks);
	if (s < 0 || write(s, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1)
		goto out;
	for (;;) {  /* the answer, in 3 s and 4 MiB at most */
		struct pollfd pf = { s, POLLIN, 0 };
		ssize_t k;

		if (poll(&pf, 1, 3000) <= 0 || n + 65536 > (4u << 20))
			goto out;
		if (n + 65537 > cap)
			buf = xrealloc(buf, cap = (n + 65537) * 2);
		k = read(s, buf + n, 65536);
		if (k < 0)
			goto out;
		if (k == 0)
			break;
		n += (size_t)k;
	}
	if (!buf)
		goto out;
	buf[n] = '\0';
	body = strstr(buf, "\r\n\r\n");
	if (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 8, " 200", 4) != 0 || !body)
		goto out;
	j = cJSON_Parse(body + 4);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = NULL;
	}
out:
	if (s >= 0)
		close(s);
	free(buf);
	return j;
}

int engine_version(int root, const struct engine *e)
{
	const char *bin = NULL;
	char out[4096] = "";
	int p[2], status = 0, major = -1;
	size_t n = 0;
	pid_t pid;

	/* the first on PATH, as the daemon's start finds it; run as root:
	 * only root's, and writable by no one else (else no version) */
	for (int i = 0; e->bins[i] && !bin; i++)
		if (is_exec(root, e->bins[i]))
			bin = e->bins[i];
	{
		_cleanup_close_ int fd = bin ? root_open(root, bin, O_PATH) : -1;
		struct stat st;

		if (fd < 0 || fstat(fd, &st) < 0 || !root_owned(&st))
			return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]), close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char *const argv[] = { (char *)bin, (char *)"--version", NULL };
		char *const envp[] = { (char *)"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", NULL };
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fchdir(root) < 0 || chroot(".") < 0 || chdir("/") < 0 || null < 0 || dup2(null, 0) < 0 ||
		    dup2(p[1], 1) < 0 || dup2(null, 2) < 0)
			_exit(126);
		alarm(10);
		execve(bin, argv, envp);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf = { p[0], POLLIN, 0 };
		ssize_t k;

		if (n + 1 >= sizeof(out) || poll(&pf, 1, 10000) <= 0 || (k = read(p[0], out + n, sizeof(out) - 1 - n)) <= 0)
			break;
		n += (size_t)k;
	}
	close(p[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[n] = '\0';
	/* "Docker version 20.10.24+dfsg1, build ...", "containerd ... 1.7.24 ...",
	 * "podman version 5.4.2": the first "N." after "version" or a space */
	{
		const char *v = strstr(out, "version ");

		for (const char *q = v ? v + 8 : out; *q && major < 0; q++)
			if ((q == out || q[-1] == ' ' || q[-1] == 'v') && *q >= '0' && *q <= '9' && strchr(q, '.') &&
			    (size_t)(strchr(q, '.') - q) == strspn(q, "0123456789"))
				major = atoi(q);
	}
	return major;
}

char *yaml_top_scalar(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *v = l + kl + 1;
		size_t n;

		if (strncmp(l, key, kl) != 0 || l[kl] != ':')
			continue;
		v += strspn(v, " \t");
		n = strcspn(v, " \t\r\n#");
		if (n >= 2 && (*v == '"' || *v == '\'') && v[n - 1] == *v)
			v++, n -= 2;
		return n && n < 256 && !memchr(v, '"', n) && !memchr(v, '\'', n) ? xstrndup(v, n) : NULL;
	}
	return NULL;
}
