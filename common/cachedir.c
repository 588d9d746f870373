/* cachedir.c: the cache directory's store (see cachedir.h, format/CU-CACHE.md). */
#include "cachedir.h"
#include "buf.h"
#include "cli.h"
#include "diag.h"
#include "vec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ENTRY_MAGIC "BTFPCCE"	/* 8 bytes with its NUL */
#define ENTRY_VERSION 1
#define ENTRY_HEAD 48
#define MAX_PAYLOAD (1ull << 32)
/* Every kind of entry there is: eviction keeps the whole directory under
 * its limit, so it looks in each. */
static const char *const kinds[] = { "cu-v1", "out-v1", "base-v1" };
#define TOUCH_AFTER 3600	/* seconds: refresh a hit's mtime (its LRU age) at most hourly */
#define STALE_TEMP 3600		/* seconds: a temp this old was left by a killed writer */

static const char *const counter_names[CD_N] = {
	[CD_HITS] = "hits", [CD_MISSES] = "misses", [CD_CORRUPT] = "corrupt_repaired",
	[CD_UNCACHEABLE] = "uncacheable", [CD_STORED] = "stored",
	[CD_STORE_FAILED] = "store_failed", [CD_BYTES_READ] = "bytes_read",
	[CD_BYTES_WRITTEN] = "bytes_written", [CD_EVICTED] = "evicted",
};

struct cachedir {
	struct cachedir_opts o;
	char *root;		/* DIR/KIND */
	uint64_t n[CD_N];	/* this run, atomic */
	mode_t umask;		/* read once at open: umask() is process-wide, not per thread */
	int warn_err;		/* the first store failure's errno */
	char warning[4400];
	uint64_t entries, bytes; /* from the last scan */
	int scanned;
};

int cachedir_parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	double mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
	}
	if (*end == 'i' || *end == 'B')
		end += *end == 'i' ? (end[1] == 'B' ? 2 : 1) : 1;
	if (*end || v * mul > 1.8e19)
		return -EINVAL;
	*out = (uint64_t)(v * mul);
	return 0;
}

void cachedir__count(struct cachedir *c, enum cachedir_counter what, uint64_t n)
{
	__atomic_fetch_add(&c->n[what], n, __ATOMIC_RELAXED);
}

const char *cachedir__warning(const struct cachedir *c)
{
	return c->warn_err ? c->warning : NULL;
}

static int mkdir_p(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		if (*s == '/' || !*s) {
			char keep = *s;
			*s = 0;
			if (mkdir(p, 0777) && errno != EEXIST) {
				int err = errno;
				free(p);
				return -err;
			}
			*s = keep;
			if (!keep)
				break;
		}
	}
	free(p);
	return 0;
}

int cachedir__open(struct cachedir **out, const struct cachedir_opts *o, const char *kind,
		   struct diag *d)
{
	struct cachedir *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->o = *o;
	c->umask = umask(022);
	umask(c->umask);
	if (asprintf(&c->root, "%s/%s", o->dir, kind) < 0) {
		free(c);
		return -ENOMEM;
	}
	int err = o->readonly ? 0 : mkdir_p(c->root);
	struct stat st;
	if (!err && stat(o->dir, &st))
		err = -errno;
	else if (!err && !S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	if (o->readonly && err == -ENOENT)
		err = 0; /* nothing cached yet: every lookup misses */
	if (err) {
		free(c->root);
		free(c);
		return diag_fail(d, -err, "cache directory %s: %s", o->dir, strerror(-err));
	}
	*out = c;
	return 0;
}

void cachedir__close(struct cachedir *c)
{
	if (!c)
		return;
	free(c->root);
	free(c);
}

static void entry_path(const struct cachedir *c, struct key128 k, char *out, size_t n)
{
	snprintf(out, n, "%s/%02x/%016" PRIx64 "%016" PRIx64, c->root, (unsigned)(k.hi >> 56), k.hi, k.lo);
}

static int read_all(int fd, uint8_t *p, size_t n, off_t off)
{
	for (size_t at = 0; at < n;) {
		ssize_t got = pread(fd, p + at, n - at, off + (off_t)at);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -EIO;
		at += (size_t)got;
	}
	return 0;
}

static uint64_t entry_check(const uint8_t *head, const uint8_t *payload, size_t n)
{
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, head, 40);
	XXH3_64bits_update(&st, payload, n);
	return XXH3_64bits_digest(&st);
}

/* Open key's entry and check its header against the spec and the file's
 * size: 0 with *fd (the caller closes it), *st and the header, or -errno
 * (absent, or a header that fails a check: -EBADMSG). */
static int entry_open(struct cachedir *c, struct key128 key, int *fd, struct stat *st,
		      uint8_t head[ENTRY_HEAD])
{
	char path[4096];
	entry_path(c, key, path, sizeof(path));
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (*fd < 0)
		return -errno;
	if (!fstat(*fd, st) && S_ISREG(st->st_mode) && st->st_size >= ENTRY_HEAD &&
	    (uint64_t)st->st_size - ENTRY_HEAD < MAX_PAYLOAD && !read_all(*fd, head, ENTRY_HEAD, 0) &&
	    !memcmp(head, ENTRY_MAGIC, 8) && le32_get(head + 8) == ENTRY_VERSION && !le32_get(head + 12) &&
	    le64_get(head + 16) == (uint64_t)st->st_size - ENTRY_HEAD && le64_get(head + 24) == key.lo &&
	    le64_get(head + 32) == key.hi)
		return 0;
	close(*fd);
	*fd = -1;
	return -EBADMSG;
}

/* After a lookup (fd -1: its header was refused): its age, and the
 * counters. 1 for a hit, 0 for a miss. */
static int entry_done(struct cachedir *c, int fd, const struct stat *st, int err)
{
	if (!err && !c->o.readonly && time(NULL) - st->st_mtime > TOUCH_AFTER)
		futimens(fd, NULL); /* its age for eviction: used now */
	if (fd >= 0)
		close(fd);
	if (err) {
		if (err != -ENOMEM)
			cachedir__count(c, CD_CORRUPT, 1); /* unreadable is damaged too */
		return 0;
	}
	cachedir__count(c, CD_BYTES_READ, (uint64_t)st->st_size);
	return 1;
}

int cachedir__get(struct cachedir *c, struct key128 key, uint8_t **payload, size_t *size)
{
	*payload = NULL;
	*size = 0;
	int fd;
	struct stat st;
	uint8_t head[ENTRY_HEAD], *p = NULL;
	/* Every check of the spec: an entry that fails one is a miss. */
	int err = entry_open(c, key, &fd, &st, head);
	if (err)
		return err == -EBADMSG ? entry_done(c, -1, &st, err) : 0;
	size_t n = (size_t)st.st_size - ENTRY_HEAD;
	p = malloc(n ? n : 1);
	err = !p ? -ENOMEM : read_all(fd, p, n, ENTRY_HEAD);
	if (!err && entry_check(head, p, n) != le64_get(head + 40))
		err = -EBADMSG;
	if (!entry_done(c, fd, &st, err)) {
		free(p);
		return 0;
	}
	*payload = p;
	*size = n;
	return 1;
}

int cachedir__map(struct cachedir *c, struct key128 key, const uint8_t **payload, size_t *size)
{
	*payload = NULL;
	*size = 0;
	int fd;
	struct stat st;
	uint8_t head[ENTRY_HEAD];
	int err = entry_open(c, key, &fd, &st, head);
	if (err)
		return err == -EBADMSG ? entry_done(c, -1, &st, err) : 0;
	size_t n = (size_t)st.st_size - ENTRY_HEAD;
	uint8_t *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		err = -errno;
	else if (entry_check(head, m + ENTRY_HEAD, n) != le64_get(head + 40))
		err = -EBADMSG;
	if (!entry_done(c, fd, &st, err)) {
		if (m != MAP_FAILED)
			munmap(m, (size_t)st.st_size);
		return 0;
	}
	*payload = m + ENTRY_HEAD;
	*size = n;
	return 1;
}

void cachedir__unmap(const uint8_t *payload, size_t size)
{
	if (payload)
		munmap((void *)(payload - ENTRY_HEAD), size + ENTRY_HEAD);
}

static void store_failed(struct cachedir *c, const char *path, int err)
{
	cachedir__count(c, CD_STORE_FAILED, 1);
	int none = 0;
	if (__atomic_compare_exchange_n(&c->warn_err, &none, err, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		snprintf(c->warning, sizeof(c->warning), "cannot store %s: %s", path, strerror(err));
}

int cachedir__put(struct cachedir *c, struct key128 key, const void *a, size_t na,
		  const void *b, size_t nb)
{
	if (c->o.readonly)
		return 0;
	if (na + nb >= MAX_PAYLOAD)
		return -EFBIG;
	struct buf bb = { 0 }, *bp = &bb;
	buf_put(bp, ENTRY_MAGIC, 8);
	buf_le32(bp, ENTRY_VERSION);
	buf_le32(bp, 0);
	buf_le64(bp, na + nb);
	buf_le64(bp, key.lo);
	buf_le64(bp, key.hi);
	buf_le64(bp, 0); /* the check, below */
	buf_put(bp, a, na);
	if (nb)
		buf_put(bp, b, nb);
	if (bp->err) {
		buf_free(bp);
		return -ENOMEM;
	}
	le64_put(bp->data + 40, entry_check(bp->data, bp->data + ENTRY_HEAD, bp->len - ENTRY_HEAD));
	char path[4096], tmp[4200];
	entry_path(c, key, path, sizeof(path));
	char *slash = strrchr(path, '/');
	*slash = 0;
	int err = mkdir(path, 0777) && errno != EEXIST ? -errno : 0;
	*slash = '/';
	snprintf(tmp, sizeof(tmp), "%.*s/.tmp.%d.XXXXXX", (int)(slash - path), path, (int)getpid());
	int fd = err ? -1 : mkostemp(tmp, O_CLOEXEC);
	if (!err && fd < 0)
		err = -errno;
	for (size_t at = 0; !err && at < bb.len;) {
		ssize_t w = write(fd, bb.data + at, bb.len - at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			err = w < 0 ? -errno : -EIO;
		else
			at += (size_t)w;
	}
	/* mkostemp makes 0600; the cache is shared like any build output. */
	if (!err && fchmod(fd, 0666 & ~c->umask))
		err = -errno;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		if (fd >= 0)
			unlink(tmp);
		store_failed(c, path, -err);
	} else {
		cachedir__count(c, CD_STORED, 1);
		cachedir__count(c, CD_BYTES_WRITTEN, bb.len);
	}
	buf_free(&bb);
	return err;
}

/* ---- size, eviction, totals ---- */

struct aged {
	struct timespec mtime;
	uint64_t size;
	char name[64];	/* KIND/XX/KEYHEX */
};

static int cmp_aged(const void *a, const void *b)
{
	const struct aged *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int is_entry_name(const char *s)
{
	for (int i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return !s[32];
}

/* Lists every entry of every kind in the directory (and removes temps left
 * by killed writers). */
static int scan(struct cachedir *c, struct aged **out, size_t *count)
{
	struct aged *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (unsigned sub = 0; sub < 256; sub++) {
			char dir[4200];
			snprintf(dir, sizeof(dir), "%s/%s/%02x", c->o.dir, kinds[k], sub);
			DIR *dh = opendir(dir);
			if (!dh)
				continue;
			for (struct dirent *de; (de = readdir(dh));) {
				struct stat st;
				int tmp = !strncmp(de->d_name, ".tmp.", 5);
				if ((!tmp && !is_entry_name(de->d_name)) ||
				    fstatat(dirfd(dh), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
					continue;
				if (tmp) {
					if (!c->o.readonly && now - st.st_mtime > STALE_TEMP)
						unlinkat(dirfd(dh), de->d_name, 0);
					continue;
				}
				if (out) {
					if (vec_grow(&v, &cap, n + 1)) {
						closedir(dh);
						free(v);
						return -ENOMEM;
					}
					v[n].mtime = st.st_mtim;
					v[n].size = (uint64_t)st.st_size;
					snprintf(v[n].name, sizeof(v[n].name), "%s/%02x/%.32s", kinds[k], sub,
						 de->d_name);
				}
				n++;
				total += (uint64_t)st.st_size;
			}
			closedir(dh);
		}
	c->entries = n;
	c->bytes = total;
	c->scanned = 1;
	if (out)
		*out = v;
	if (count)
		*count = n;
	return 0;
}

/* Oldest first, down to 80% of the limit, so that the next runs do not
 * each evict a little. Several processes may evict at once: an entry
 * already gone is simply skipped. */
static void evict(struct cachedir *c)
{
	struct aged *v = NULL;
	size_t n = 0;
	if (scan(c, &v, &n) || c->bytes <= c->o.max_size) {
		free(v);
		return;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_aged);
	uint64_t goal = c->o.max_size / 10 * 8;
	for (size_t i = 0; i < n && c->bytes > goal; i++) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", c->o.dir, v[i].name);
		if (unlink(path) == 0) {
			cachedir__count(c, CD_EVICTED, 1);
			c->bytes -= v[i].size;
			c->entries--;
		}
	}
	free(v);
}

/* DIR/KIND/stats: "name value" lines, this run's counters added under an
 * flock held only for the read-modify-write. Advisory: a damaged file
 * restarts from zero. */
static void add_totals(struct cachedir *c, uint64_t *totals, int add)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/stats", c->root);
	memset(totals, 0, CD_N * sizeof(*totals));
	add = add && !c->o.readonly;
	int fd = open(path, (add ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC, 0666 & ~c->umask);
	if (fd < 0)
		return;
	if (add)
		flock(fd, LOCK_EX);
	char text[2048];
	ssize_t got = pread(fd, text, sizeof(text) - 1, 0);
	text[got > 0 ? got : 0] = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		uint64_t v;
		if (sscanf(line, "%63s %" SCNu64, name, &v) != 2)
			continue;
		for (int i = 0; i < CD_N; i++)
			if (!strcmp(name, counter_names[i]))
				totals[i] = v;
	}
	if (add) {
		int len = 0;
		for (int i = 0; i < CD_N; i++) {
			totals[i] += c->n[i];
			len += snprintf(text + len, sizeof(text) - (size_t)len, "%s %" PRIu64 "\n",
					counter_names[i], totals[i]);
		}
		if (pwrite(fd, text, (size_t)len, 0) == len)
			(void)!ftruncate(fd, len);
	}
	close(fd);
}

/* DIR/size: an estimate of the whole directory's bytes (what runs stored,
 * less what they evicted), so that a run need not list every entry to learn
 * whether the directory is over its limit; each real scan sets it exactly.
 * A replaced entry counts twice until then: the estimate errs high, which
 * only brings the next scan sooner. Under an flock held for the update only.
 * Returns the new estimate. */
static uint64_t size_estimate(const struct cachedir *c, uint64_t add, int set, uint64_t value)
{
	char path[4200], text[64];
	snprintf(path, sizeof(path), "%s/size", c->o.dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666 & ~c->umask);
	if (fd < 0)
		return UINT64_MAX; /* unknown: scan */
	flock(fd, LOCK_EX);
	ssize_t got = pread(fd, text, sizeof(text) - 1, 0);
	text[got > 0 ? got : 0] = 0;
	uint64_t v = set ? value : strtoull(text, NULL, 10) + add;
	int len = snprintf(text, sizeof(text), "%" PRIu64 "\n", v);
	if (pwrite(fd, text, (size_t)len, 0) == len)
		(void)!ftruncate(fd, len);
	close(fd);
	return v;
}

void cachedir__finish(struct cachedir *c)
{
	uint64_t totals[CD_N];
	if (!c->o.readonly && c->n[CD_STORED] &&
	    size_estimate(c, c->n[CD_BYTES_WRITTEN], 0, 0) > c->o.max_size && c->o.max_size) {
		evict(c);
		size_estimate(c, 0, 1, c->bytes);
	}
	add_totals(c, totals, 1);
}

static void human(char *out, size_t n, uint64_t b)
{
	if (b >= 1ull << 30)
		snprintf(out, n, "%.1f GiB", b / 1073741824.0);
	else if (b >= 1ull << 20)
		snprintf(out, n, "%.1f MiB", b / 1048576.0);
	else
		snprintf(out, n, "%.1f KiB", b / 1024.0);
}

void cachedir__print_stats(struct cachedir *c, FILE *f, int this_run, const char *what)
{
	uint64_t totals[CD_N];
	add_totals(c, totals, 0); /* cachedir__finish already added this run's */
	if (!c->scanned && !scan(c, NULL, NULL) && !c->o.readonly)
		size_estimate(c, 0, 1, c->bytes); /* a scan knows: correct the estimate */
	char rd[32], wr[32], sz[32], lim[32];
	if (this_run) {
		human(rd, sizeof(rd), c->n[CD_BYTES_READ]);
		human(wr, sizeof(wr), c->n[CD_BYTES_WRITTEN]);
		fprintf(f, "cache %s (%s): this run: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
			" uncacheable, %" PRIu64 " corrupt (repaired), %" PRIu64 " stored, %" PRIu64
			" store failures, %" PRIu64 " evicted; read %s, wrote %s\n", c->o.dir, what,
			c->n[CD_HITS], c->n[CD_MISSES], c->n[CD_UNCACHEABLE], c->n[CD_CORRUPT],
			c->n[CD_STORED], c->n[CD_STORE_FAILED], c->n[CD_EVICTED], rd, wr);
	}
	human(rd, sizeof(rd), totals[CD_BYTES_READ]);
	human(wr, sizeof(wr), totals[CD_BYTES_WRITTEN]);
	human(sz, sizeof(sz), c->bytes);
	if (c->o.max_size)
		human(lim, sizeof(lim), c->o.max_size);
	else
		snprintf(lim, sizeof(lim), "no limit");
	fprintf(f, "cache %s (%s): all runs: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
		" uncacheable, %" PRIu64 " corrupt (repaired), %" PRIu64 " evicted; read %s, wrote %s\n",
		c->o.dir, what, totals[CD_HITS], totals[CD_MISSES], totals[CD_UNCACHEABLE],
		totals[CD_CORRUPT], totals[CD_EVICTED], rd, wr);
	fprintf(f, "cache %s: holds %" PRIu64 " entries, %s (limit %s)\n", c->o.dir, c->entries, sz, lim);
}

struct cachedir *cachedir_cli_open(const struct cachedir_cli *cli, const char *kind, const char *tool)
{
	struct cachedir *c = NULL;
	struct diag d = { 0 };
	int err = cli->dir ? cachedir__open(&c, &cli->opts, kind, &d) : 0;
	if (err && d.set)
		diag_warn(tool, "%s; going on without the cache", d.msg);
	else if (err) /* a failed allocation has no detail */
		diag_warn(tool, "cache directory %s: %s; going on without the cache", cli->dir, strerror(-err));
	return c;
}

void cachedir_cli_report(struct cachedir *c, const struct cachedir_cli *cli, const char *tool, int ok,
			 const char *what)
{
	if (c && cachedir__warning(c))
		diag_warn(tool, "cache %s: %s (the output is not affected)", cli->dir, cachedir__warning(c));
	if (c && ok && cli->stats)
		cachedir__print_stats(c, stderr, 1, what);
}

int cachedir_cli_opt(struct cachedir_cli *cli, int c, const char *arg)
{
	switch (c) {
	case CACHEDIR_OPT_DIR: cli->dir = arg; return 1;
	case CACHEDIR_OPT_NONE: cli->no_cache = 1; return 1;
	case CACHEDIR_OPT_SIZE: cli->size = arg; return 1;
	case CACHEDIR_OPT_RO: cli->readonly = 1; return 1;
	case CACHEDIR_OPT_STATS: cli->stats = 1; return 1;
	}
	return 0;
}

int cachedir_cli_finish(struct cachedir_cli *cli, const char *tool)
{
	/* The environment is how a Makefile that only calls pipeline.sh (or
	 * pipeline.sh as PAHOLE) turns the cache on. */
	const char *env;
	if (!cli->dir && (env = getenv("BTFPIPE_CACHE_DIR")) && *env)
		cli->dir = env;
	if (cli->no_cache)
		cli->dir = NULL;
	if (!cli->size && (env = getenv("BTFPIPE_CACHE_MAX_SIZE")) && *env)
		cli->size = env;
	uint64_t max = 2ull << 30;
	if (cli->size && cachedir_parse_size(cli->size, &max)) {
		diag_error(tool, "cache size '%s' is not a size (like 500M, 2G, or 0 for no limit)", cli->size);
		return EXIT_USAGE;
	}
	if (cli_env_flag("BTFPIPE_CACHE_READONLY"))
		cli->readonly = 1;
	/* From the environment, the counters are wanted only where a cache
	 * is in use: btfpipe-archive reads each kernel's hits this way. */
	if (cli->dir && cli_env_flag("BTFPIPE_CACHE_STATS"))
		cli->stats = 1;
	if (cli->stats && !cli->dir) {
		diag_error(tool, "--cache-stats needs --cache DIR (or $BTFPIPE_CACHE_DIR)");
		return EXIT_USAGE;
	}
	cli->opts = (struct cachedir_opts){ .dir = cli->dir, .max_size = max, .readonly = cli->readonly };
	return 0;
}
