/* What the drivers' checks share: one line of check's report, the
 * shims a runtime may name, when a daemon started. See engine.h */
#include "engines/engine.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

bool engine_host_stat(int root, const char *path, struct stat *st, bool follow)
{
	_cleanup_close_ int fd = follow ? root_open(root, path, O_PATH) : root_open(root, path, O_PATH | O_NOFOLLOW);

	return fd >= 0 && fstat(fd, st) == 0;
}

char *engine_host_read(int root, const char *path)
{
	struct oerr e;
	char *buf = NULL;
	size_t len;

	return root_read_file(root, path, 16u << 20, &buf, &len, NULL, &e) == 1 ? buf : NULL;
}

void engine_say(struct engine_check *c, enum engine_status st, const char *what, const char *fix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	c->say(c, st, what, fix, NULL, fmt, ap);
	va_end(ap);
}

void engine_advise(struct engine_check *c, enum engine_status st, const char *what, const char *todo,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	c->say(c, st, what, NULL, todo, fmt, ap);
	va_end(ap);
}

void engine_say2(struct engine_check *c, enum engine_status st, const char *what, const char *fix, const char *todo,
		 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	c->say(c, st, what, fix, todo, fmt, ap);
	va_end(ap);
}

void engine_say_apply(struct engine_check *c, const struct engine *e, bool restart, const char *first,
		      const char *fmt, ...)
{
	_cleanup_free_ char *cmd = engine_apply_command(c->root, e, restart), *fix = NULL, *todo = NULL;
	va_list ap;

	if (cmd)
		fix = first ? xasprintf("%s && %s", first, cmd) : xstrdup(cmd);
	else {
		fix = first ? xstrdup(first) : NULL;
		todo = xasprintf("%s%s %s the way this host starts it (no systemd, no init script of its own here)",
				 first ? "then " : "", restart ? "restart" : "reload (or restart)", e->daemon);
	}
	va_start(ap, fmt);
	c->say(c, ENGINE_PROBLEM, e->name, fix, todo, fmt, ap);
	va_end(ap);
}

/* The install command that registers ENGINE's runtime NAME again */
char *engine_install_fix(const char *eng, const char *name)
{
	_cleanup_free_ char *q = name ? shell_word(name) : NULL;

	if (!name || strcmp(name, "ocidec") == 0 || !q)
		return xasprintf("ocidec install --runtime %s", eng);
	return xasprintf("ocidec install --runtime %s --runtime-name %s", eng, q);
}


enum engine_shim engine_shim_kind(int root, const char *path)
{
	const char *base;
	bool ours_name;
	struct stat st;

	/* a bare name (NVIDIA's documents write "nvidia-container-runtime"):
	 * the first on dockerd's PATH, as dockerd finds it; none there: gone */
	if (path && !strchr(path, '/') && (strcmp(path, "ocidec-runtime") == 0 ||
					  strcmp(path, "nvidia-container-runtime") == 0)) {
		static const char *const dirs[] = { "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
						    "/sbin", "/bin" };

		for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
			_cleanup_free_ char *full = xasprintf("%s/%s", dirs[i], path);

			if (engine_host_stat(root, full, &st, true))
				return engine_shim_kind(root, full);
		}
		return path[0] == 'o' ? OURS_GONE : NVIDIAS_GONE;
	}
	base = path ? strrchr(path, '/') : NULL;
	ours_name = base && strcmp(base, "/ocidec-runtime") == 0;

	if (!base || (!ours_name && strcmp(base, "/nvidia-container-runtime") != 0))
		return NOT_SHIM;
	if (!engine_host_stat(root, path, &st, false))
		return ours_name ? OURS_GONE : NVIDIAS_GONE;
	if (S_ISLNK(st.st_mode)) {
		_cleanup_free_ char *dir = xstrndup(path, (size_t)(base - path));
		_cleanup_close_ int dfd = root_open(root, *dir ? dir : "/", O_PATH | O_DIRECTORY);
		char text[PATH_MAX];
		ssize_t l = dfd >= 0 ? readlinkat(dfd, base + 1, text, sizeof(text) - 1) : -1;
		const char *tb;

		if (l < 0)
			return ours_name ? OURS_GONE : NVIDIAS_GONE;
		text[l] = '\0';
		tb = strrchr(text, '/') ? strrchr(text, '/') + 1 : text;
		ours_name |= strcmp(tb, "ocidec") == 0 || strcmp(tb, "ocidec-runtime") == 0;
		if (!engine_host_stat(root, path, &st, true))
			return ours_name ? OURS_GONE : NVIDIAS_GONE;
	}
	return ours_name ? OURS : NVIDIAS;
}

/* PID's FILE under PROC into BUF (SIZE, NUL-terminated); false: none */
static bool proc_read(int proc, const char *pid, const char *file, char *buf, size_t size)
{
	char path[300];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", pid, file);
	fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, size - 1) : -1;
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* The start of the oldest process named COMM (its /proc/PID/comm), in
 * nanoseconds since the epoch; 0: none runs.  The start is in clock
 * ticks since boot (/proc/PID/stat field 22); the boot clock read next to
 * the wall clock turns it into wall time to the tick (/proc/stat's btime
 * is whole seconds and would put the start up to two seconds early). */
int64_t engine_started_pid(int proc, const struct engine *g, char pid[16])
{
	const char *comm = g->daemon;
	DIR *d = fdopendir(dup(proc));
	struct dirent *e;
	struct timespec now, boot;
	int64_t best = 0, best_ours = 0, base;
	char best_pid[16] = "", ours_pid[16] = "";
	bool ours;
	long hz = (long)getauxval(AT_CLKTCK);  /* (sysconf's answer, without its 1 KB) */
	char buf[4096];

	if (!d)
		return 0;
	if (clock_gettime(CLOCK_REALTIME, &now) < 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0) {
		closedir(d);
		return 0;
	}
	base = (now.tv_sec - boot.tv_sec) * INT64_C(1000000000) + (now.tv_nsec - boot.tv_nsec);
	if (hz <= 0)
		hz = 100;
	rewinddir(d);  /* the descriptor's offset is shared with PROC's */
	while ((e = readdir(d))) {
		char name[64];
		unsigned long long start;
		char *end;
		char *p;

		if (e->d_name[0] < '1' || e->d_name[0] > '9' || !proc_read(proc, e->d_name, "comm", name, sizeof(name)))
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, comm) != 0 || !proc_read(proc, e->d_name, "stat", buf, sizeof(buf)))
			continue;
		/* the engine's own binary, where the kernel says which it runs:
		 * of two engines' daemons of one name (k3s' containerd beside
		 * the node's), one that runs a binary of the engine's is its
		 * (one that runs from elsewhere counts only where none does) */
		ours = false;
		if (g->bins) {
			char lp[300], exe[PATH_MAX];
			ssize_t n;

			snprintf(lp, sizeof(lp), "%s/exe", e->d_name);
			if ((n = readlinkat(proc, lp, exe, sizeof(exe) - 1)) > 0) {
				exe[n] = '\0';
				if (n > 10 && strcmp(exe + n - 10, " (deleted)") == 0)
					exe[n - 10] = '\0';  /* (upgraded under it) */
				for (const char *const *b = g->bins; *b && !ours; b++)
					ours = strcmp(exe, *b) == 0;
			}
		}
		/* the host's daemon: root's, in PID 1's namespace (not a user's
		 * program of that name, nor a kind node's containerd) */
		{
			struct stat ps;
			char lp[300], mine[64] = "", init[64] = "";
			ssize_t a, b;

			snprintf(lp, sizeof(lp), "%s/ns/pid", e->d_name);
			a = readlinkat(proc, lp, mine, sizeof(mine) - 1);
			b = readlinkat(proc, "1/ns/pid", init, sizeof(init) - 1);
			if (fstatat(proc, e->d_name, &ps, 0) < 0 || ps.st_uid != 0 ||
			    (a > 0 && b > 0 && (a != b || memcmp(mine, init, (size_t)a) != 0)))
				continue;
		}
		/* a containerd dockerd runs for itself reads dockerd's
		 * configuration, not the node's: not the node's containerd */
		p = strrchr(buf, ')');
		if (p && strcmp(comm, "containerd") == 0) {
			char ppid[24], parent[64];
			const char *q = p + 2;  /* (the state, then the parent) */

			if (p[1] && *q++ && scan_word(&q, ppid, sizeof(ppid)) &&
			    proc_read(proc, ppid, "comm", parent, sizeof(parent)) &&
			    strncmp(parent, "dockerd\n", 8) == 0)
				continue;
		}
		/* field 22, after the command's closing parenthesis */
		for (int f = 2; p && f < 22; f++)
			p = strchr(p + 1, ' ');
		if (!p || (start = strtoull(p + 1, &end, 10), end == p + 1))
			continue;
		{
			int64_t t = base + (int64_t)(start / (unsigned long long)hz) * INT64_C(1000000000) +
				    (int64_t)(start % (unsigned long long)hz) * (INT64_C(1000000000) / hz);
			if (ours && (!best_ours || t < best_ours)) {
				best_ours = t;
				snprintf(ours_pid, sizeof(ours_pid), "%.15s", e->d_name);
			}
			if (!best || t < best) {
				best = t;
				snprintf(best_pid, sizeof(best_pid), "%.15s", e->d_name);
			}
		}
	}
	closedir(d);
	if (pid)
		memcpy(pid, best_ours ? ours_pid : best_pid, 16);
	return best_ours ? best_ours : best;
}

int64_t engine_started(int proc, const struct engine *g)
{
	return engine_started_pid(proc, g, NULL);
}

/* Whether ST was modified after a daemon that started at SINCE (from
 * started()).  The start is known to a clock tick; a change within 50 ms
 * of it counts as before, the daemon had not read its files yet. */
bool engine_changed_after(const struct stat *st, int64_t since)
{
	return since && (int64_t)st->st_mtim.tv_sec * INT64_C(1000000000) + st->st_mtim.tv_nsec > since + INT64_C(50000000);
}

/* An engine installed here whose daemon does not run (SINCE 0), where
 * systemd runs the host: its unit's state. A failed unit (its start limit
 * hit by restarts, a configuration the daemon refused) starts nothing
 * until it is reset, its socket's first use included: a problem, with the
 * commands that start it again. One merely stopped is the operator's
 * choice: nothing said. */
void engine_check_unit(struct engine_check *c, const struct engine *e, int64_t since)
{
	int root = c->root;
	char st[64] = "", sock[64] = "", dep[64] = "";
	_cleanup_free_ char *fix = NULL;
	bool sock_failed, dep_failed;

	if (since > 0 || !engine_installed(root, e) || engine_unit_state(root, e, "service", st, sizeof(st)) < 0)
		return;
	if (strcmp(st, "failed") != 0) {
		if (strcmp(st, "inactive") != 0)
			engine_say(c, ENGINE_INFO, e->name, NULL, "%s does not run: %s.service is %s (systemd)", e->daemon, e->unit, st);
		return;
	}
	sock_failed = engine_unit_state(root, e, "socket", sock, sizeof(sock)) == 0 && strcmp(sock, "failed") == 0;
	/* dockerd needs containerd, which its unit wants started: one failed
	 * too is reset with it, or dockerd's start fails again */
	dep_failed = e->needs && engine_unit_state(root, e->needs, "service", dep, sizeof(dep)) == 0 &&
		     strcmp(dep, "failed") == 0;
	fix = xasprintf("systemctl reset-failed %s%s%s.service%s%s%s && systemctl start %s.service",
			dep_failed ? e->needs->unit : "", dep_failed ? ".service " : "", e->unit, sock_failed ? " " : "",
			sock_failed ? e->unit : "", sock_failed ? ".socket" : "", e->unit);
	engine_say(c, ENGINE_PROBLEM, e->name, fix, "%s.service failed (systemd; journalctl -u %s.service says why): "
		   "%s does not run, and systemd starts it for no one until the unit is reset", e->unit, e->unit, e->daemon);
}
