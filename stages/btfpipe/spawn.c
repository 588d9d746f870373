/* spawn.c: the stages as child processes, and their temp directory.
 *
 * posix_spawn() (glibc's is a vfork-like clone) rather than fork(): the
 * child starts without copying this process's page tables, which on this
 * project's VMs is the cheaper start. The children inherit the
 * environment, so each stage finds $BTFPIPE_CACHE_DIR and the malloc
 * tunables main() put there.
 */
#include "spawn.h"
#include "../../common/diag.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t pending;	/* the first signal caught, or 0 */
static volatile pid_t child;		/* the stage running, or 0 */

/* SIGPIPE is this process's own (its stdout closed: -o -, --stats=json,
 * --verbose's lines); a stage writes only files, so it is not passed on. */
static void on_signal(int sig)
{
	if (!pending)
		pending = sig;
	if (child > 0 && sig != SIGPIPE)
		kill(child, sig);
}

int spawn_pending_signal(void)
{
	return pending;
}

/* From workdir_make(), before the directory exists: installed at the first
 * spawn, a SIGTERM between mkdtemp() and the spawn found the default
 * action and left the directory behind (t1360's kills found it). */
void spawn_catch_signals(void)
{
	static int installed;
	if (installed)
		return;
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	installed = 1;
}

int spawn_wait(char *const argv[], const char *err_path, struct diag *d)
{
	spawn_catch_signals();
	if (pending)
		return 128 + pending;
	/* Block the signals over the spawn, so that a signal arriving in
	 * between finds the child's pid set; the child starts with them
	 * unblocked and default. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGPIPE);
	sigprocmask(SIG_BLOCK, &block, &old);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &old);
	posix_spawnattr_setsigdefault(&at, &block);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (err_path)
		posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pid_t pid;
	int err = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (!err)
		child = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (err)
		return diag_fail(d, err, "%s: cannot start: %s", argv[0], strerror(err));
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			child = 0;
			return diag_fail(d, errno, "%s: wait: %s", argv[0], strerror(errno));
		}
	}
	child = 0;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int path_join(char *out, size_t n, const char *dir, const char *name, const char *ext)
{
	int w = snprintf(out, n, "%s/%s%s", dir, name, ext);
	return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

int workdir_make(struct workdir *w, struct diag *d)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	spawn_catch_signals();
	int n = snprintf(w->path, sizeof(w->path), "%s/btfpipe.XXXXXX", tmp);
	if (n < 0 || (size_t)n >= sizeof(w->path) || !mkdtemp(w->path)) {
		int err = n < 0 || (size_t)n >= sizeof(w->path) ? ENAMETOOLONG : errno;
		w->path[0] = 0;
		return diag_fail(d, err, "cannot make a temp directory in %s: %s", tmp, strerror(err));
	}
	return 0;
}

void workdir_remove(struct workdir *w)
{
	if (!w->path[0])
		return;
	/* Flat: the stages write only files here. */
	DIR *dir = opendir(w->path);
	if (dir) {
		struct dirent *e;
		while ((e = readdir(dir)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(dir), e->d_name, 0);
		closedir(dir);
	}
	rmdir(w->path);
	w->path[0] = 0;
}

int mkdir_parents(const char *path)
{
	char buf[PATH_MAX];
	int n = snprintf(buf, sizeof(buf), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0777) && errno != EEXIST)
		return -errno;
	return 0;
}
