/* ctrdump.c: see ctrd.h (the host's containerd, asked). */
#include "engines/ctrd.h"
#include "engines/engines.h"

#include "formats/ldconfig.h"
#include "safety/rootpath.h"
#include "safety/rootfile.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DUMP (64u << 20)

/* The host's containerd binary (a path inside the host root), or NULL:
 * the first of its facts' (E->bins, in systemd's and a login shell's PATH
 * order, so an upstream release in /usr/local/bin, its documented place,
 * wins over the distribution's package, as it does when the node starts
 * containerd) */
const char *ctrd_binary(int root, const struct engine *e)
{
	const char *const *paths = e->bins;

	for (int i = 0; paths[i]; i++) {
		_cleanup_close_ int fd = root_open(root, paths[i], O_PATH);
		struct stat st;

		/* run as root: only root's, and writable by no one else */
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) && root_owned(&st))
			return paths[i];
	}
	return NULL;
}

/* What the host's containerd makes of config.toml's text TEXT (without
 * ocidec's import; NULL: there is no config.toml): `containerd --config
 * FILE config dump`, run in the host root (the host's own binary and
 * libraries), FILE a copy of TEXT beside config.toml (its relative imports
 * resolve the same), removed after. The engine reads its TOML; ocidec
 * reads only the dump's lines. */
int ctrd_dump(int root, const struct engine *g, const char *text, char **dump, size_t *len, struct oerr *err)
{
	return ctrd_dump_as(root, g, text, false, dump, len, err);
}

/* Where a file that stands for G's config.toml is written: beside it, or
 * (none there) wherever the host has a directory for it (ANY: the first of
 * those; else beside it only), into DIR (64 bytes); false: nowhere */
static bool dump_dir(int root, const struct engine *g, bool any, char dir[64])
{
	const char *const dirs[] = { NULL, "/tmp", "/etc", NULL };

	snprintf(dir, 64, "%.*s", (int)(strrchr(g->config, '/') - g->config), g->config);
	for (int i = 0; i == 0 || dirs[i]; i++) {
		_cleanup_close_ int d = root_open(root, i ? dirs[i] : dir, O_PATH | O_DIRECTORY);

		if (d >= 0 && (any || i > 0)) {
			if (i)
				snprintf(dir, 64, "%s", dirs[i]);
			return true;
		}
	}
	return false;
}

int ctrd_dump_as(int root, const struct engine *g, const char *text, bool as_is, char **dump, size_t *len,
		 struct oerr *err)
{
	/* beside config.toml; without one (containerd 1.x then refuses its
	 * default path) an empty configuration wherever the host has a
	 * directory for it */
	const char *bin = ctrd_binary(root, g), *dir = NULL;
	char where[64];
	struct buf { char *p; size_t n, cap; } o = { 0 }, e = { 0 };
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 }, status = 0, r = -1;
	time_t until = time(NULL) + 60;
	char tmp[128];
	pid_t pid;

	if (!bin) {
		_cleanup_free_ char *where_bins = NULL;

		for (const char *const *b = g->bins; b && *b; b++) {
			char *w = xasprintf("%s%s%s", where_bins ? where_bins : "", where_bins ? ", " : "", *b);

			free(where_bins);
			where_bins = w;
		}
		return oerr_usage(err, "%s: no %s binary on the host (%s): install %s first, or leave it out of "
				  "--runtime", g->name, g->daemon, where_bins ? where_bins : "none known", g->name);
	}
	if (dump_dir(root, g, text != NULL, where))
		dir = where;
	if (as_is) {  /* config.toml itself, nothing written */
		dir = NULL;
		snprintf(tmp, sizeof(tmp), "%s", g->config);
	} else if (!dir) {
		return oerr_usage(err, "containerd: the host has no %s, /tmp or /etc", where);
	} else {
		/* (no .toml: an imports glob must never read a leftover). TEXT
		 * stands for config.toml: an import of config.toml itself (what
		 * containerd 1.x's config dump writes, and an operator pasted as
		 * the converted file) would read the file on disk instead, with
		 * what TEXT leaves out */
		_cleanup_free_ char *own = text ? ctrd_remove_import(text, g->config) : NULL;

		snprintf(tmp, sizeof(tmp), "%s/.ocidec-dump-%d", dir, (int)getpid());
		if (root_write_atomic(root, tmp, own ? own : "", own ? strlen(own) : 0, 0600, false, err) < 0)
			return -1;
	}
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		oerr_set(err, errno, "pipe");
		goto done;
	}
	pid = fork();
	if (pid < 0) {
		oerr_set(err, errno, "fork");
		goto done;
	}
	if (pid == 0) {
		char *const argv[] = { (char *)"containerd", (char *)"--config", (char *)tmp, (char *)"config",
				       (char *)"dump", NULL };
		char *const envp[] = { (char *)"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				       NULL };
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fchdir(root) < 0 || chroot(".") < 0 || chdir("/") < 0 || null < 0 ||
		    dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(errp[1], 2) < 0)
			_exit(126);
		char *const plain[] = { (char *)"containerd", (char *)"config", (char *)"dump", NULL };

		execve(bin, as_is && !text ? plain : argv, envp);
		_exit(127);
	}
	close(out[1]), out[1] = -1;
	close(errp[1]), errp[1] = -1;
	for (int open_ = 2; open_ > 0;) {
		struct pollfd pf[2] = { { out[0], POLLIN, 0 }, { errp[0], POLLIN, 0 } };
		int left = (int)(until - time(NULL));

		if (left <= 0 || poll(pf, 2, left * 1000) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		for (int k = 0; k < 2; k++) {
			struct buf *b = k ? &e : &o;
			char chunk[65536];
			ssize_t n;

			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)) || pf[k].fd < 0)
				continue;
			n = read(pf[k].fd, chunk, sizeof(chunk));
			if (n <= 0) {
				close(k ? errp[0] : out[0]);
				if (k) errp[0] = -1; else out[0] = -1;
				open_--;
				continue;
			}
			if (b->n + (size_t)n + 1 > MAX_DUMP) {
				kill(pid, SIGKILL);
				open_ = 0;
				break;
			}
			if (b->n + (size_t)n + 1 > b->cap) {
				b->cap = (b->n + (size_t)n + 1) * 2;
				b->p = xrealloc(b->p, b->cap);
			}
			memcpy(b->p + b->n, chunk, (size_t)n);
			b->n += (size_t)n;
			b->p[b->n] = '\0';
		}
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 126) {
		oerr_usage(err, "containerd: cannot enter the host root to run %s (chroot needs root)", bin);
		goto done;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		oerr_usage(err, "containerd: `%s config dump` took over 60 s or printed over 64 MiB: stopped", bin);
		goto done;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !o.n) {
		char *nl = e.p ? strchr(e.p, '\n') : NULL;
		if (nl)
			*nl = '\0';
		oerr_usage(err, "%s: `%s --config %s config dump` failed (%s %d)%s%s", g->config, bin, tmp,
			   WIFEXITED(status) ? "exit" : "signal",
			   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), e.p ? ": " : "", e.p ? e.p : "");
		goto done;
	}
	*dump = o.p;
	*len = o.n;
	o.p = NULL;
	r = 0;
done:
	for (int k = 0; k < 2; k++) {
		if (out[k] >= 0) close(out[k]);
		if (errp[k] >= 0) close(errp[k]);
	}
	if (dir) {
		_cleanup_close_ int dfd = root_open(root, dir, O_PATH | O_DIRECTORY);
		if (dfd >= 0)
			unlinkat(dfd, strrchr(tmp, '/') + 1, 0);
	}
	free(o.p);
	free(e.p);
	return r;
}

struct verify_seen {
	const char *name, *shim;
	bool found, runs_shim;
};

static void on_verify_runtime(void *arg, const char *name, const char *type, const char *binary)
{
	struct verify_seen *s = arg;

	(void)type;
	if (strcmp(name, s->name) == 0) {
		s->found = true;
		s->runs_shim = binary && strcmp(binary, s->shim) == 0;
	}
}

int ctrd_verify(int root, const struct engine *g, const char *conf, int conf_version, const char *dropin,
		const char *name, const char *shim, bool as_default, struct oerr *err)
{
	char dir[64];
	_cleanup_free_ char *tmp = NULL, *text = NULL, *dump = NULL, *def = NULL;
	struct verify_seen s = { .name = name, .shim = shim };
	const char *v;
	size_t len;
	int r, version = 2;

	if (!dump_dir(root, g, true, dir))
		return oerr_usage(err, "containerd: the host has no %s, /tmp or /etc", dir);
	/* (no .toml: an imports glob must never read a leftover) */
	tmp = xasprintf("%s/.ocidec-dropin-%d", dir, (int)getpid());
	if (root_write_atomic(root, tmp, dropin, strlen(dropin), 0600, false, err) < 0)
		return -1;
	text = conf ? ctrd_add_import(conf, tmp) : ctrd_new_config(tmp, conf_version);
	r = ctrd_dump(root, g, text, &dump, &len, err);
	{
		_cleanup_close_ int dfd = root_open(root, dir, O_PATH | O_DIRECTORY);
		if (dfd >= 0)
			unlinkat(dfd, strrchr(tmp, '/') + 1, 0);
	}
	if (r < 0) {
		if (conf_version < 2)
			return oerr_prefix(err, "containerd would not load config.toml with ocidec's drop-in: "
				"config.toml is configuration version 1 (no \"version = 2\" line), which containerd "
				"1.x imports no version 2 file into; convert it with containerd's own dump ("
				CTRD_V1_CONVERT "), then run ocidec install again. Nothing written");
		return oerr_prefix(err, "containerd would not load config.toml with ocidec's drop-in; nothing written");
	}
	if ((v = ctrd_version(dump, len)))
		version = atoi(v);
	if (ctrd_runtimes(dump, len, version, &def, on_verify_runtime, &s) < 0 || !s.found || !s.runs_shim ||
	    (as_default && (!def || strcmp(def, name) != 0)))
		return oerr_usage(err, "%s: with ocidec's drop-in, `containerd config dump` %s runtime \"%s\" "
			       "(report this, with config.toml): nothing written", g->config,
			       !s.found ? "has no" : !s.runs_shim ? "runs another binary for" : "has another default than",
			       name);
	return 0;
}
