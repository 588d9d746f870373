/* outfile.c: atomic output (see outfile.h). */
#include "outfile.h"
#include "diag.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Named temp files to remove if a signal ends the process: the fallback's
 * temp file, and the hidden name commit gives the finished file before its
 * rename. A process has at most a few outputs open. */
#define MAX_PENDING 8
static char *volatile pending[MAX_PENDING];
static const int handled[] = { SIGINT, SIGTERM, SIGHUP };
/* The handlers there were before ours (btfpipe-pahole has its own): called
 * after the unlinks, so both clean up. */
static struct sigaction before[sizeof(handled) / sizeof(handled[0])];

static void on_signal(int sig)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (pending[i])
			unlink(pending[i]);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++) {
		if (handled[i] != sig)
			continue;
		if (!(before[i].sa_flags & SA_SIGINFO) && before[i].sa_handler != SIG_DFL &&
		    before[i].sa_handler != SIG_IGN) {
			before[i].sa_handler(sig);
			return;
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* From the first outfile__open(), before any named file of ours can exist:
 * installed later (at the first name), a signal between the link and the
 * install found the default action and left the name behind. */
static void handlers_install(void)
{
	static int installed;
	if (installed)
		return;
	installed = 1;
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++) {
		sigaction(handled[i], NULL, &before[i]);
		if (before[i].sa_handler != SIG_IGN) /* nohup's SIG_IGN stays */
			sigaction(handled[i], &sa, NULL);
	}
}

static void pending_add(char *p)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (!pending[i]) {
			pending[i] = p;
			return;
		}
}

static void pending_del(char *p)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (pending[i] == p)
			pending[i] = NULL;
}

static char *dir_of(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return NULL;
	char *d = strdup(dirname(copy));
	free(copy);
	return d;
}

/* The hidden temp name of a target: .NAME.tmp.PID.XXXXXX in its directory.
 * The pid says whose it is, so a later run can tell a leftover from a file
 * another process is still writing (sweep_stale). */
static char *temp_name(const char *path)
{
	char *copy = strdup(path), *dir = dir_of(path), *res = NULL;
	if (copy && dir && asprintf(&res, "%s/.%s.tmp.%d.XXXXXX", dir, basename(copy), (int)getpid()) < 0)
		res = NULL;
	free(copy);
	free(dir);
	return res;
}

/* Whether process pid is gone: no such process, or a zombie (killed, not
 * yet reaped: its parent killed with it, it waits for an init that may
 * never reap it, as on this project's VMs, and kill(pid, 0) still finds
 * it). A zombie writes nothing more. */
static int writer_gone(long pid)
{
	if (kill((pid_t)pid, 0) < 0)
		return errno == ESRCH;
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* "PID (COMM) STATE ...": COMM may hold ") ", the last one ends it. */
	const char *close = strrchr(buf, ')');
	return close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

/* A SIGKILL between naming the finished file and renaming it over the
 * target (commit) leaves its temp name behind: nothing runs after SIGKILL.
 * The next write of the same target removes such leftovers, those whose
 * writer no longer exists. Names not of our exact form are never touched. */
static void sweep_stale(const char *path)
{
	char *copy = strdup(path), *dir = dir_of(path);
	DIR *dh = dir ? opendir(dir) : NULL;
	if (copy && dh) {
		char prefix[512];
		int plen = snprintf(prefix, sizeof(prefix), ".%s.tmp.", basename(copy));
		for (struct dirent *e; plen > 0 && (size_t)plen < sizeof(prefix) && (e = readdir(dh));) {
			if (strncmp(e->d_name, prefix, (size_t)plen))
				continue;
			char *end;
			long pid = strtol(e->d_name + plen, &end, 10);
			if (pid <= 0 || end == e->d_name + plen || *end != '.' || strlen(end + 1) != 6)
				continue;
			if (pid != getpid() && writer_gone(pid))
				unlinkat(dirfd(dh), e->d_name, 0);
		}
	}
	if (dh)
		closedir(dh);
	free(copy);
	free(dir);
}

/* A target that is not a regular file (/dev/null, a FIFO, a terminal) is
 * not replaced: renaming over it would put a file where the device was
 * (as root, /dev/null itself). Its bytes are made in an unnamed file in
 * $TMPDIR and copied into it at publish, so a failed run still writes
 * nothing to it. */
static int open_for_copy(struct outfile *o, struct diag *d)
{
	const char *tmpdir = getenv("TMPDIR");
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	o->copy = 1;
	o->fd = open(tmpdir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (o->fd >= 0)
		return 0;
	char *t = NULL;
	if (asprintf(&t, "%s/btfpipe-out.XXXXXX", tmpdir) < 0)
		return -ENOMEM;
	o->fd = mkostemp(t, O_CLOEXEC);
	int err = errno;
	if (o->fd >= 0)
		unlink(t); /* unnamed from here on, as with O_TMPFILE */
	free(t);
	if (o->fd < 0)
		return diag_fail(d, err, "%s: cannot make its bytes in %s: %s", o->path, tmpdir, strerror(err));
	return 0;
}

int outfile__open(struct outfile *o, const char *path, struct diag *d)
{
	handlers_install();
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = strdup(path);
	char *dir = dir_of(path);
	if (!o->path || !dir) {
		free(dir);
		outfile__abort(o);
		return -ENOMEM;
	}
	struct stat st;
	int exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		free(dir);
		outfile__abort(o);
		return diag_fail(d, EISDIR, "%s: output is a directory", path);
	}
	if (exists && !S_ISREG(st.st_mode)) {
		free(dir);
		int err = open_for_copy(o, d);
		if (err)
			outfile__abort(o);
		return err;
	}
	sweep_stale(path);
	o->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	int err = errno;
	free(dir);
	if (o->fd >= 0)
		return 0;
	if (err != EOPNOTSUPP && err != EISDIR && err != EINVAL) {
		outfile__abort(o);
		return diag_fail(d, err, "%s: cannot create output: %s", path, strerror(err));
	}
	o->tmp = temp_name(path);
	if (!o->tmp) {
		outfile__abort(o);
		return -ENOMEM;
	}
	pending_add(o->tmp); /* before the file exists: mkostemp names it in place */
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		err = errno;
		pending_del(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		outfile__abort(o);
		return diag_fail(d, err, "%s: cannot create temp output: %s", path, strerror(err));
	}
	return 0;
}

int outfile__pwrite(struct outfile *o, const void *buf, size_t n, uint64_t off, struct diag *d)
{
	const char *p = buf;
	while (n) {
		ssize_t w = pwrite(o->fd, p, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			return diag_fail(d, err, "%s: write failed: %s", o->path, strerror(err));
		}
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* outfile__copy_head()'s way where copy_file_range() has none: pread and
 * pwrite, from at on. */
static int copy_by_hand(struct outfile *o, int fd, uint64_t at, uint64_t n, struct diag *d)
{
	char buf[1 << 16];
	while (at < n) {
		size_t want = n - at < sizeof(buf) ? (size_t)(n - at) : sizeof(buf);
		ssize_t k = pread(fd, buf, want, (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int err = k < 0 ? errno : EIO; /* 0: the input ended before n: it changed under us */
			return diag_fail(d, err, "%s: reading what it copies failed: %s", o->path, strerror(err));
		}
		int err = outfile__pwrite(o, buf, (size_t)k, at, d);
		if (err)
			return err;
		at += (uint64_t)k;
	}
	return 0;
}

int outfile__copy_head(struct outfile *o, int fd, uint64_t n, struct diag *d)
{
	loff_t in = 0, out = 0;
	while ((uint64_t)in < n) {
		ssize_t k = copy_file_range(fd, &in, o->fd, &out, (size_t)(n - (uint64_t)in), 0);
		if (k > 0)
			continue;
		if (k < 0 && errno == EINTR)
			continue;
		int err = k < 0 ? errno : EIO; /* 0: the input ended before n: it changed under us */
		if (k < 0 && (err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == EBADF))
			return copy_by_hand(o, fd, (uint64_t)in, n, d);
		return diag_fail(d, err, "%s: write failed: %s", o->path, strerror(err));
	}
	return 0;
}

int outfile__write(struct outfile *o, const void *buf, size_t n, struct diag *d)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			return diag_fail(d, err, "%s: write failed: %s", o->path, strerror(err));
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* prepare's or publish's failure: said, and the output dropped. */
static int commit_failed(struct outfile *o, int err, struct diag *d)
{
	diag_fail(d, err, "%s: cannot commit output: %s", o->path, strerror(err));
	outfile__abort(o);
	return -err;
}

int outfile__prepare(struct outfile *o, struct diag *d)
{
	if (o->copy)
		return 0; /* no name to give: publish copies the bytes */
	mode_t um = umask(0);
	umask(um);
	int err = 0;
	if (fchmod(o->fd, (o->mode ? o->mode : 0644) & ~um) < 0)
		err = errno;
	if (!err && !o->tmp) {
		/* Give the unnamed file a temporary name, to be renamed over the
		 * target: linkat cannot replace an existing file. */
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
		for (int tries = 0; tries < 100 && !o->tmp; tries++) {
			char *t = temp_name(o->path);
			if (!t) {
				err = ENOMEM;
				break;
			}
			/* temp_name ends in XXXXXX: fill it from the pid and a counter. */
			snprintf(t + strlen(t) - 6, 7, "%06x", (unsigned)((getpid() * 131 + tries) & 0xffffff));
			/* Pending before the name exists: a signal right after the
			 * link must find it listed. (The name has our pid: no other
			 * live process's file can bear it.) */
			pending_add(t);
			if (linkat(AT_FDCWD, proc, AT_FDCWD, t, AT_SYMLINK_FOLLOW) == 0) {
				o->tmp = t;
			} else {
				err = errno;
				pending_del(t);
				free(t);
				if (err != EEXIST)
					break;
				err = 0;
			}
		}
		if (!err && !o->tmp)
			err = EEXIST;
	}
	if (!err && close(o->fd) < 0)
		err = errno;
	o->fd = -1;
	return err ? commit_failed(o, err, d) : 0;
}

/* A copy target's bytes, from the unnamed file to the target, in order
 * (a FIFO or a terminal has no offsets). */
static int copy_out(struct outfile *o, struct diag *d)
{
	int to = open(o->path, O_WRONLY | O_CLOEXEC);
	if (to < 0)
		return commit_failed(o, errno, d);
	char buf[1 << 16];
	off_t at = 0;
	int err = 0;
	for (;;) {
		ssize_t n = pread(o->fd, buf, sizeof(buf), at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : 0;
			break;
		}
		at += n;
		for (ssize_t w = 0; w < n && !err;) {
			ssize_t k = write(to, buf + w, (size_t)(n - w));
			if (k < 0 && errno != EINTR)
				err = errno;
			else if (k > 0)
				w += k;
		}
		if (err)
			break;
	}
	if (close(to) < 0 && !err)
		err = errno;
	if (err)
		return commit_failed(o, err, d);
	outfile__abort(o);
	return 0;
}

int outfile__publish(struct outfile *o, struct diag *d)
{
	if (o->copy)
		return copy_out(o, d);
	if (rename(o->tmp, o->path) < 0)
		return commit_failed(o, errno, d);
	pending_del(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	outfile__abort(o); /* frees the path; nothing left to remove */
	return 0;
}

int outfile__commit(struct outfile *o, struct diag *d)
{
	int err = outfile__prepare(o, d);
	return err ? err : outfile__publish(o, d);
}

void outfile__abort(struct outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp) {
		unlink(o->tmp);
		pending_del(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	free(o->path);
	o->path = NULL;
}

int outfile__write_all(const char *path, const void *buf, size_t n, struct diag *d)
{
	struct outfile o;
	int err = outfile__open(&o, path, d);
	if (!err)
		err = outfile__write(&o, buf, n, d);
	if (!err)
		err = outfile__commit(&o, d);
	outfile__abort(&o);
	return err;
}
