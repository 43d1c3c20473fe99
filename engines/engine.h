/* engine.h: the engine drivers. Each engine ocidec registers with is one
 * driver, an ops table in its own file (engine_hooksdir.c: podman and
 * CRI-O, engine_docker.c, engine_containerd.c, engine_nri.c), as crun's
 * cgroup managers are: what `ocidec install` writes for it (through the
 * install's journal), what --uninstall takes out of a file it merged into,
 * what `ocidec check` finds, and how it is made to read its changed
 * configuration, and its engines' facts (engines.h's struct engine: paths,
 * units, daemons). install and check loop over engine_drivers and never
 * branch on an engine's name; --runtime's words and their bits, install's
 * "not one of" and check's list of installed engines come from the
 * drivers' words.
 */
#ifndef OCIDEC_ENGINE_H
#define OCIDEC_ENGINE_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cJSON.h"
#include "engines/engines.h"
#include "engines/journal.h"
#include "base/util.h"

/* Where an install keeps its record (install.json): a toolkit
 * container's under its --prefix, the host's own install in its state
 * directory */
#define PREFIX_DEFAULT "/usr/local/ocidec"
#define HOST_STATE_DIR "/var/lib/ocidec"

struct engine_ops;

/* One file to put on the host: its content, or a symlink's text */
struct engine_action {
	char *path;
	char *data;       /* content; NULL for a symlink */
	size_t len;
	char *link;       /* symlink text */
	mode_t mode;
	const struct engine_ops *merge; /* a file of the administrator's that this driver edits (NULL: ours) */
};

/* What one install or uninstall knows of one driver's engine */
struct engine_run {
	unsigned asked;        /* its --runtime words asked (their engine_word.bit) */
	bool planned;          /* its merged file is among the files to write */
	bool changed;          /* a file it reads changed: it must read it again */
	bool restart;          /* a reload does not do (what was written needs a restart) */
	bool pending, pending_restart;  /* an earlier --restart's, still to do */
};

/* A driver's words have bits of their own (engine_word.bit, below
 * 1 << ENGINE_WORD_BITS); --runtime's bits are those shifted by the
 * driver's place in engine_drivers */
enum { ENGINE_DRIVER_MAX = 8, ENGINE_WORD_BITS = 4 };

/* An install's plan: what it was asked, and the files to write */
struct engine_plan {
	int root;                  /* the host root */
	unsigned rts;              /* the --runtime words asked (engine_runtime_word's bits) */
	const char *prefix;
	const char *bin;           /* the directory of ocidec, ocidec-hook, ocidec-runtime */
	const char *cdir;          /* host mode: the config dir the registered binary reads */
	const char *hooks_dir;     /* --hooks-dir, or NULL */
	const char *runtime_name;  /* Docker's and containerd's name of the shim */
	const char *recorded_name; /* the last install's runtime name (its record), or NULL */
	const cJSON *recorded;     /* the last install's record, or NULL */
	bool host_mode, has_nvidia, set_default, enable_cdi;
	struct engine_action *a;
	size_t n;
	struct engine_run run[ENGINE_DRIVER_MAX];  /* engine_drivers' order */
};

/* What check found, one line each: SAY (check's report, a toolkit's fix
 * moved into words) puts the line; the rest is what check and the drivers
 * tell each other */
enum engine_status { ENGINE_OK, ENGINE_INFO, ENGINE_PROBLEM };  /* report.h's order */
struct engine_check {
	void (*say)(struct engine_check *c, enum engine_status st, const char *what, const char *fix, const char *todo,
		    const char *fmt, va_list ap);
	int root;              /* the host root */
	int proc;              /* the host's /proc */
	bool registered;       /* an engine runs ocidec: a hook, a runtime or a spec of ours */
	bool installed;        /* ocidec install has run here (its record is there) */
	bool nvidia;           /* a vendor named nvidia (Docker's --gpus) */
	struct strv kinds;     /* the CDI kinds of vendors with a driver here */
	struct strv kind_vendors;  /* and their vendors' names */
};

/* A --runtime word: the bit it asks of its driver (engine_run.asked), and
 * the engine it names (NULL: none to look for; a word whose bit an earlier
 * one has is another name of it) */
struct engine_word {
	const char *word;
	unsigned bit;
	const struct engine *engine;
};

struct engine_ops {
	const char *name;               /* the driver's name (its file's: engine_NAME.c) */
	const struct engine_word *words; /* the --runtime words it serves ({ NULL } last) */
	const struct engine *daemon;    /* the engine whose daemon reads what it writes; NULL: none to restart */
	const char *const *files;       /* what install may write for it (uninstall accepts them) */
	/* what its daemon reads again when it changes: the file it merges
	 * into, and these of its files (NULL-terminated; NULL: none) */
	const char *const *reads;
	const char *hint;               /* what its daemon reads, in install's hint (NULL: the runtime) */
	const char *restart_mark;       /* where an uninstall marks that its daemon has not read it yet */
	/* the administrator's file it merges into (NULL: none), and its kind
	 * as the install record names it ("merge") */
	const char *merged, *merge;
	const char *note;               /* what install says when asked for it (nothing to register) */
	/* its lines in `ocidec install --runtime help`: its words, what install
	 * registers for each */
	const char *usage;
	/* install: what to write for it, into P (R its run) */
	int (*plan)(struct engine_plan *p, struct engine_run *r, struct oerr *err);
	/* the install record's fields of it, from R */
	void (*record)(const struct engine_run *r, cJSON *state);
	/* uninstall: what the record STATE says it needs (R) */
	void (*undoing)(struct engine_run *r, const cJSON *state);
	/* uninstall: CUR, its merged file, without ocidec's part (NULL: ERR) */
	char *(*take_out)(const char *cur, const cJSON *state, struct oerr *err);
	/* uninstall: is TEXT, what take_out left of a merged file the install
	 * made, nothing (the file goes)? */
	bool (*empty)(const char *text);
	/* uninstall, done: a line to say (malloc'd), or NULL */
	char *(*uninstalled)(int root, const cJSON *state);
	/* check: its registration as it reads it */
	void (*check)(struct engine_check *c);
	/* check, after every driver's and the CDI specs': what it kept to say */
	void (*check_last)(struct engine_check *c);
};

/* every driver, in the order install plans and check checks them
 * (engine.c: a new driver is its line there); NULL-terminated */
extern const struct engine_ops *const engine_drivers[];

/* NRI's: install --wait serves its plugin */
extern const struct engine_ops engine_nri;

/* The --runtime bits D serves (its words') */
unsigned engine_driver_rts(const struct engine_ops *d);
/* Of --runtime's bits RTS, those of driver I, as its words' bits */
unsigned engine_driver_asked(unsigned rts, size_t i);
/* The bit of --runtime's WORD, or 0: none */
unsigned engine_runtime_word(const char *word);
/* --runtime's words, one for each bit (not another name of one), joined
 * by SEP (malloc'd); with ROOT (>= 0) only those whose engine is
 * installed in that host root */
char *engine_words(const char *sep, int root);
/* `ocidec install --runtime help`: every driver's usage lines, to stdout */
void engine_usage(void);
/* --runtime-name NAME: 0, or -1 with ERR (a usage error) where it is the
 * engines' own runtime's name or not lower-case letters, digits, - and _ */
int engine_runtime_name_check(const char *name, struct oerr *err);
/* An engine's file PATH in the host root ROOT, a regular file not reached
 * through a final link (64 MiB at most): 1 and its content, 0 when absent,
 * -1 with ERR (safety/rootpath.h's root_read_file) */
enum { ENGINE_FILE_MAX = 64 << 20 };
int engine_read_file(int root, const char *path, char **buf, size_t *len, struct stat *st, struct oerr *err);
/* What P holds freed (its files' contents, the record, the host root) */
void engine_plan_free(struct engine_plan *p);
/* --runtime's comma-separated LIST's bits into *RTS: NULL, or its first
 * word that names no engine (malloc'd) */
char *engine_runtime_words(const char *list, unsigned *rts);

/* The driver that merged into the file of the install record's entry E
 * (its "merge" the driver's; a record that kept none: by its path), or
 * NULL: a file of ours, written whole */
const struct engine_ops *engine_merge_of(const cJSON *e);

/* The runtime name the install record STATE names ("ocidec" by default) */
const char *engine_state_runtime_name(const cJSON *state);

/* Install: what an earlier --restart left undone (STATE's "pending"),
 * each engine's to do now (P->run); true: something was pending */
bool engine_pending(struct engine_plan *p, const cJSON *state);
/* Install: each driver's fields of the record STATE (what uninstall
 * takes back of a merged file edited since) */
void engine_record(const struct engine_plan *p, cJSON *state);
/* Uninstall, done: each driver's line on what it leaves (SAY) */
void engine_uninstalled(const struct engine_plan *p, const cJSON *state, int (*say)(const char *fmt, ...));

/* --restart: the daemon of G made to read what install wrote: systemctl
 * restart where systemd is PID 1 (its start limit reset first); else,
 * where a reload does (RELOAD: Docker's runtimes and default runtime),
 * SIGHUP to the process its pidfile names; else its init script's
 * restart. SAY (install's out) says what was done; -1 with ERR: not done */
int engine_restart(const struct engine *g, bool reload, int (*say)(const char *fmt, ...), struct oerr *err);
/* G's daemon answering on its socket in ROOT again, within TIMEOUT
 * seconds; -1 with ERR: not */
int engine_wait_answers(int root, const struct engine *g, unsigned timeout, struct oerr *err);

/* What makes driver I's daemon read what changed in P: a restart (else a
 * reload) */
bool engine_needs_restart(const struct engine_plan *p, size_t i);
/* What each engine whose files changed in P needs to read them, and the
 * command that does it on this host, said (SAY: install's out); WHAT: what
 * it then runs (NULL: the runtime); RESTART_ASKED: --restart does it next */
void engine_hints(const struct engine_plan *p, bool restart_asked, const char *what,
		  int (*say)(const char *fmt, ...));
/* --restart: each engine whose files changed in P made to read them and,
 * restarted, waited for (TIMEOUT s); what could not be done, for the next
 * run, into *PENDING ({"docker": "reload"}, made here); what failed
 * (malloc'd), or NULL */
char *engine_restart_changed(struct engine_plan *p, unsigned timeout, int (*say)(const char *fmt, ...), cJSON **pending);

/* Is P a clean absolute path (no "..", ".", "//", nor a character a
 * TOML or shell line would read otherwise)? */
bool engine_clean_path(const char *p);
/* Every entry of the install record J (at STATE_PATH) one an install (P's
 * prefix, binary and config dir) makes, or ERR (exit 2) and nothing done;
 * FILES gets the files' paths. The record is a file on the host like any
 * other, and --uninstall acts only on what an install writes, whatever the
 * record says. */
int engine_check_record(const struct engine_plan *p, const struct journal *j, const char *state_path,
			struct strv *files, struct oerr *err);

/* Uninstall without --restart: an engine that runs ocidec's runtime still
 * until it restarts, where nothing it answers says so, gets its mark in
 * /run (gone with a reboot), for ocidec check and the package's removal:
 * check compares its time with the daemon's start */
void engine_mark_unread(const struct engine_plan *p);

/* ---- for the drivers: install ---- */

/* PATH to be written; MERGE: the driver whose administrator's file it is
 * (NULL: ours, whole) */
void engine_plan_add(struct engine_plan *p, char *path, char *data, size_t len, mode_t mode,
		     const struct engine_ops *merge);
void engine_plan_link(struct engine_plan *p, char *path, const char *text);
/* the symlink text of PATH in ROOT: 1, 0 when absent, 2 when PATH is something else */
int engine_read_link(int root, const char *path, char *text, size_t size);

/* ---- for the drivers: check (engine_check.c) ---- */

void engine_say(struct engine_check *c, enum engine_status st, const char *what, const char *fix,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void engine_advise(struct engine_check *c, enum engine_status st, const char *what, const char *todo,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void engine_say2(struct engine_check *c, enum engine_status st, const char *what, const char *fix,
		 const char *todo, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* A problem ENGINE's daemon has until it reads its configuration again
 * (RESTART: a restart; else a reload), with FIRST (a command, NULL: none)
 * to run before: the command this host takes, or, without one, words */
void engine_say_apply(struct engine_check *c, const struct engine *e, bool restart, const char *first,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* What a runtime's binary PATH (in the host root) is: no shim's name at
 * all, ocidec's (ocidec-runtime, or NVIDIA's name linked to ocidec), or
 * NVIDIA's own nvidia-container-runtime; and whether it is there */
enum engine_shim { NOT_SHIM, OURS, OURS_GONE, NVIDIAS, NVIDIAS_GONE };
enum engine_shim engine_shim_kind(int root, const char *path);
/* The install command that registers ENGINE's runtime NAME again */
char *engine_install_fix(const char *eng, const char *name);
/* The start of the oldest host process named G's daemon (PROC the host's
 * /proc), in nanoseconds since the epoch, one that runs one of G's
 * binaries before any other; 0: none runs */
int64_t engine_started(int proc, const struct engine *g);
/* The same, and that process's id into PID ("" where none runs) */
int64_t engine_started_pid(int proc, const struct engine *g, char pid[16]);
/* Whether ST was modified after a daemon that started at SINCE */
bool engine_changed_after(const struct stat *st, int64_t since);
/* An engine installed here whose daemon does not run (SINCE 0): its
 * systemd unit's state, a failed one a problem */
void engine_check_unit(struct engine_check *c, const struct engine *e, int64_t since);
/* The CDI specs the engines read: stale, clashing, unreadable */
void engine_check_cdi(struct engine_check *c);
bool engine_host_stat(int root, const char *path, struct stat *st, bool follow);
/* PATH's content in ROOT (16 MiB at most), malloc'd, or NULL */
char *engine_host_read(int root, const char *path);

/* install --wait from a container: what the NRI plugin is served as, in a
 * child entered into the host root HOST (everything it reads and names is
 * the node's) */
struct engine_serve {
	const char *host;    /* the host's root directory */
	const char *prefix;  /* the install's prefix on the host */
	const char *bin;     /* where ocidec is there */
	const char *name;    /* the plugin's name (the runtime name) */
};
/* A signal of SIGS (blocked) other than SIGCHLD: it. With S, the NRI
 * plugin runs meanwhile: started again when it fails, not when it handed
 * its connection over to a newer pod's plugin (until that one is gone),
 * and stopped at the end. */
int engine_wait(const sigset_t *sigs, const struct engine_serve *s);
/* The CDI specs S's plugin kept true, removed from the host */
void engine_nri_specs_off(const struct engine_serve *s);

#endif
