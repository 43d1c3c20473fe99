/* How the drivers' daemons are made to read what install wrote
 * (--restart), and waited for: see engine.h */
#include "engines/engine.h"
#include "safety/rootfile.h"
#include "safety/rootpath.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ARGV run (found on PATH), waited for: its exit status (128 + N for a
 * signal), or -1 with ERR. QUIET: its output to /dev/null. */
static int run_wait_out(char *const argv[], bool quiet, struct oerr *err)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return oerr_set(err, errno, "fork");
	if (pid == 0) {
		int null = quiet ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;

		if (null >= 0)
			dup2(null, 1), dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_wait(char *const argv[], struct oerr *err)
{
	return run_wait_out(argv, false, err);
}

/* ARGV ("CMD restart UNIT" or "SCRIPT restart") restarts ENGINE: said, or
 * its failure in ERR */
static int restart_by(char *const argv[], const char *engine, int (*say)(const char *fmt, ...), struct oerr *err)
{
	int code = run_wait(argv, err);
	const char *cmd = strrchr(argv[0], '/') && argv[2] ? strrchr(argv[0], '/') + 1 : argv[0];

	if (code < 0)
		return -1;
	if (code)
		return oerr_set(err, 0, "--restart: %s %s%s%s failed (exit %d): restart %s yourself", cmd, argv[1],
				argv[2] ? " " : "", argv[2] ? argv[2] : "", code, engine);
	say("ocidec install: %s %s (%s %s%s%s)\n", strstr(argv[1], "reload") ? "reloaded" : "restarted", engine, cmd,
	    argv[1], argv[2] ? " " : "", argv[2] ? argv[2] : "");
	return 0;
}

int engine_restart(const struct engine *g, bool reload, int (*say)(const char *fmt, ...), struct oerr *err)
{
	const char *engine = g->daemon, *comm = g->daemon, *pidfile = g->pidfile;
	char unit[64];
	struct stat st;

	snprintf(unit, sizeof(unit), "%s.service", g->unit);

	if (stat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode)) {
		_cleanup_free_ char *sock = xasprintf("%.*s.socket", (int)strcspn(unit, "."), unit);
		char *const reset[] = { (char *)"systemctl", (char *)"reset-failed", unit, sock, NULL };
		char *const argv[] = { (char *)"systemctl", (char *)"restart", unit, NULL };
		char *const rl[] = { (char *)"systemctl", (char *)"try-reload-or-restart", unit, NULL };
		struct oerr ignored;

		/* a reload where it is enough (Docker's runtimes and default
		 * runtime): no container stops */
		if (reload)
			return restart_by(rl, engine, say, err);

		/* the unit's start limit cleared first: restarts of earlier
		 * runs (or the engine's own failures) would have systemd refuse
		 * this one, and leave the engine down ("start of the service was
		 * attempted too often"); a unit without a socket is no error */
		run_wait_out(reset, true, &ignored);
		return restart_by(argv, engine, say, err);
	}
	if (reload && pidfile) {
		_cleanup_close_ int fd = open(pidfile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		char buf[32] = "", path[64], name[64] = "";
		long pid = 0;
		ssize_t n;

		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
		    (n = read(fd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			pid = strtol(buf, NULL, 10);
		}
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		{
			_cleanup_close_ int c = pid > 1 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
			if (c >= 0 && (n = read(c, name, sizeof(name) - 1)) > 0)
				name[strcspn(name, "\n")] = '\0';
		}
		if (pid > 1 && strcmp(name, comm) == 0 && kill((pid_t)pid, SIGHUP) == 0) {
			say("ocidec install: reloaded %s (SIGHUP to pid %ld from %s)\n", engine, pid, pidfile);
			return 0;
		}
	}
	/* the engine's init script (Debian's docker.io has one): its restart */
	{
		char script[64];

		snprintf(script, sizeof(script), "/etc/init.d/%.*s", (int)strcspn(unit, "."), unit);
		if (stat(script, &st) == 0 && S_ISREG(st.st_mode) && root_owned(&st) &&
		    (st.st_mode & 0100)) {
			char *const argv[] = { script, (char *)"restart", NULL };

			return restart_by(argv, engine, say, err);
		}
	}
	return oerr_set(err, 0, "--restart: %s: no systemd here (PID 1)%s, no init script: restart %s yourself", engine,
			reload ? ", no running one named by its pid file" : ", a reload does not do", engine);
}

/* systemd's restart returns once the daemon said it is ready (Docker's
 * and containerd's units are Type=notify); a reload by signal or an init
 * script's restart returns sooner. */
int engine_wait_answers(int root, const struct engine *g, unsigned timeout, struct oerr *err)
{
	struct timespec now, end, tick = { 0, 200 * 1000 * 1000 };

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout;
	for (;;) {
		if (engine_answers(root, g))
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
		nanosleep(&tick, NULL);
	}
	return oerr_set(err, 0, "--restart: %s does not answer on its socket %u s after: no container starts there; "
			"see why in its log (journalctl -u %s.service), then start it", g->daemon, timeout,
			g->unit);
}

/* What makes driver I's daemon read what changed: a restart (a reload
 * does where it loads new runtimes, and nothing needs more) */
bool engine_needs_restart(const struct engine_plan *p, size_t i)
{
	const struct engine_run *r = &p->run[i];

	return r->restart || r->pending_restart || !engine_drivers[i]->daemon->reload_loads_runtimes;
}

/* What each engine whose files changed needs to read them, and the command
 * that does it on this host (engines.h); WHAT: what it then runs (NULL:
 * the runtime) */
void engine_hints(const struct engine_plan *p, bool restart_asked, const char *what, int (*say)(const char *fmt, ...))
{
	_cleanup_free_ char *rt = what ? NULL : xasprintf("runtime \"%s\"", p->runtime_name);

	for (size_t i = 0; engine_drivers[i]; i++) {
		const struct engine *e = engine_drivers[i]->daemon;
		bool restart = e && engine_needs_restart(p, i);
		_cleanup_free_ char *cmd = NULL;

		if (!e || !p->run[i].changed)
			continue;
		cmd = engine_apply_command(p->root, e, restart);
		say("ocidec install: %s %s %s once it %s: %s%s\n", e->daemon, engine_drivers[i]->hint ? "reads" : "runs",
		    engine_drivers[i]->hint ? engine_drivers[i]->hint : what ? what : rt,
		    restart ? "restarts" : "reloads", cmd ? cmd : restart ? "restart it" : "reload it",
		    cmd ? (restart_asked ? "" : " (or --restart)") : " the way this host starts it (no systemd or init "
		    "script of its own here)");
	}
}

/* --restart after the engines' files changed: each of them (what could not
 * be done yet into *PENDING, by engine); what failed, malloc'd, or NULL */
char *engine_restart_changed(struct engine_plan *p, unsigned timeout, int (*say)(const char *fmt, ...), cJSON **pending)
{
	char *failed = NULL;

	for (size_t i = 0; engine_drivers[i]; i++) {
		const struct engine_ops *d = engine_drivers[i];
		const struct engine *g = d->daemon;
		struct oerr one;
		bool done, reload, restart;

		if (!g || !p->run[i].changed)
			continue;
		restart = engine_needs_restart(p, i);
		reload = !restart && g->reload_loads_runtimes;
		done = engine_restart(g, reload, say, &one) == 0;
		/* (a reload leaves the daemon answering: only a restart waited for) */
		if (done && (reload || engine_wait_answers(p->root, g, timeout, &one) == 0)) {
			if (d->restart_mark) {
				_cleanup_free_ char *dir = path_dir(d->restart_mark);
				_cleanup_close_ int dfd = root_open(p->root, dir, O_PATH | O_DIRECTORY);

				if (dfd >= 0)
					(void)unlinkat(dfd, strrchr(d->restart_mark, '/') + 1, 0);
			}
			continue;
		}
		{
			char *f = failed ? xasprintf("%s; %s", failed, one.msg) : xstrdup(one.msg);
			free(failed);
			failed = f;
		}
		/* (restarted, not answering: said, nothing pending) */
		if (done)
			continue;
		/* what is still to do, for the next run (its --restart, its hint) */
		if (!*pending)
			*pending = cJSON_CreateObject();
		cJSON_AddStringToObject(*pending, g->name, restart ? "restart" : "reload");
	}
	return failed;
}

void engine_mark_unread(const struct engine_plan *p)
{
	for (size_t i = 0; engine_drivers[i]; i++) {
		const struct engine_ops *d = engine_drivers[i];
		struct oerr ignored;

		if (d->restart_mark && p->run[i].changed && engine_answers(p->root, d->daemon)) {
			_cleanup_free_ char *dir = path_dir(d->restart_mark);
			_cleanup_close_ int run = root_mkdirs(p->root, dir, 0, NULL, NULL, &ignored);

			if (run >= 0)
				(void)root_write_atomic(p->root, d->restart_mark, "", 0, 0644, false, &ignored);
		}
	}
}
