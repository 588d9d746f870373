/* spawn.h: the stages run as child processes, one after another, with the
 * checkpoints in a private temp directory (spawn.c). */
#ifndef BTFPIPE_SPAWN_H
#define BTFPIPE_SPAWN_H

#include <limits.h>
#include <stddef.h>

struct diag;

struct workdir {
	char path[PATH_MAX];	/* empty until made */
};

/* A fresh directory under $TMPDIR (else /tmp). 0 or -errno (d). From here
 * on SIGINT, SIGTERM, SIGHUP and SIGPIPE are caught (spawn_pending_signal()), so the
 * caller always reaches workdir_remove(). */
int workdir_make(struct workdir *w, struct diag *d);
/* Catch SIGINT, SIGTERM, SIGHUP and SIGPIPE from now on (workdir_make()
 * and spawn_wait() do it too): main() calls it before it makes anything a
 * signal could leave behind. */
void spawn_catch_signals(void);
/* Remove it and everything in it (a killed stage's temp files too). */
void workdir_remove(struct workdir *w);

/* DIR/NAME + EXT into out (n bytes): 0 or -ENAMETOOLONG. */
int path_join(char *out, size_t n, const char *dir, const char *name, const char *ext);

/* Run argv (argv[0] a path) and wait for it; its stderr goes to err_path
 * when that is not NULL. Returns its exit code, 128 + the signal that
 * ended it, or -errno when it could not be started (d). SIGINT, SIGTERM
 * and SIGHUP that reach this process meanwhile are passed on to the
 * child; spawn_pending_signal() then names the first (SIGPIPE included),
 * which the caller raises again once it has cleaned up. */
int spawn_wait(char *const argv[], const char *err_path, struct diag *d);

/* mkdir -p path: 0 or -errno. */
int mkdir_parents(const char *path);
int spawn_pending_signal(void);

#endif
