/* cache.c: the extracted-CU cache's store (see cache.h, format/CU-CACHE.md). */
#include "cache.h"
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../common/vec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ENTRY_MAGIC "BTFPCCE"	/* 8 bytes with its NUL */
#define ENTRY_VERSION 1
#define ENTRY_HEAD 56
#define PATCH_SIZE 16
#define SUBDIR "cu-v1"
#define TOUCH_AFTER 3600	/* seconds: refresh a hit's mtime (its LRU age) at most hourly */
#define STALE_TEMP 3600		/* seconds: a temp this old was left by a killed writer */

static const char *const counter_names[CC_N] = {
	[CC_HITS] = "hits", [CC_MISSES] = "misses", [CC_CORRUPT] = "corrupt_repaired",
	[CC_UNCACHEABLE] = "uncacheable", [CC_STORED] = "stored",
	[CC_STORE_FAILED] = "store_failed", [CC_BYTES_READ] = "bytes_read",
	[CC_BYTES_WRITTEN] = "bytes_written", [CC_EVICTED] = "evicted",
};

struct cache {
	struct cache_opts o;
	char *root;		/* DIR/cu-v1 */
	uint64_t n[CC_N];	/* this run, atomic */
	int warn_err;		/* the first store failure's errno */
	char warning[4400];
	uint64_t entries, bytes; /* from the last scan */
	int scanned;
};

int cache_parse_size(const char *s, uint64_t *out)
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

void cache__count(struct cache *c, enum cache_counter what, uint64_t n)
{
	__atomic_fetch_add(&c->n[what], n, __ATOMIC_RELAXED);
}

const char *cache__warning(const struct cache *c)
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

int cache__open(struct cache **out, const struct cache_opts *o, struct diag *d)
{
	struct cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->o = *o;
	if (asprintf(&c->root, "%s/" SUBDIR, o->dir) < 0) {
		free(c);
		return -ENOMEM;
	}
	int err = o->readonly ? 0 : mkdir_p(c->root);
	struct stat st;
	if (!err && (stat(o->dir, &st) || !S_ISDIR(st.st_mode)))
		err = o->readonly && errno == ENOENT ? 0 : -(errno ? errno : ENOTDIR);
	if (err) {
		free(c->root);
		free(c);
		return diag_fail(d, -err, "cache directory %s: %s", o->dir, strerror(-err));
	}
	*out = c;
	return 0;
}

void cache__close(struct cache *c)
{
	if (!c)
		return;
	free(c->root);
	free(c);
}

static void entry_path(const struct cache *c, struct key128 k, char *out, size_t n)
{
	snprintf(out, n, "%s/%02x/%016" PRIx64 "%016" PRIx64 ".cu", c->root, (unsigned)(k.hi >> 56),
		 k.hi, k.lo);
}

void cache_entry__free(struct cache_entry *e)
{
	free(e->mem);
	free(e->patches);
	memset(e, 0, sizeof(*e));
}

static int read_all(int fd, uint8_t *p, size_t n)
{
	for (size_t at = 0; at < n;) {
		ssize_t got = pread(fd, p + at, n - at, (off_t)at);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -EIO;
		at += (size_t)got;
	}
	return 0;
}

/* Every check of the spec: an entry that fails one is a miss. */
static int parse_entry(struct cache_entry *e, size_t size, struct key128 key)
{
	const uint8_t *m = e->mem;
	if (size < ENTRY_HEAD || memcmp(m, ENTRY_MAGIC, 8) || le32_get(m + 8) != ENTRY_VERSION)
		return -EBADMSG;
	uint32_t blob_size = le32_get(m + 12), np = le32_get(m + 16);
	if ((uint64_t)ENTRY_HEAD + (uint64_t)np * PATCH_SIZE + blob_size != size ||
	    le64_get(m + 32) != key.lo || le64_get(m + 40) != key.hi)
		return -EBADMSG;
	XXH64_hash_t want = le64_get(m + 48);
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, m, 48);
	XXH3_64bits_update(&st, m + ENTRY_HEAD, size - ENTRY_HEAD);
	if (XXH3_64bits_digest(&st) != want)
		return -EBADMSG;
	e->language = le16_get(m + 20);
	e->nrecs = le32_get(m + 24);
	e->npatches = np;
	e->blob = m + ENTRY_HEAD + (size_t)np * PATCH_SIZE;
	e->blob_size = blob_size;
	/* The normal form: "CU1\0", then cu_offset 0 as one byte. */
	if (blob_size < 5 || memcmp(e->blob, "CU1", 4) || e->blob[4] != 0)
		return -EBADMSG;
	e->patches = np ? calloc(np, sizeof(*e->patches)) : NULL;
	if (np && !e->patches)
		return -ENOMEM;
	uint32_t prev = 4;
	for (uint32_t i = 0; i < np; i++) {
		const uint8_t *p = m + ENTRY_HEAD + (size_t)i * PATCH_SIZE;
		struct cache_patch *t = &e->patches[i];
		t->pos = le32_get(p);
		t->kind = p[4];
		t->hole = p[5];
		t->die = le64_get(p + 8);
		if (t->hole > 1 || p[6] || p[7])
			return -EBADMSG;
		/* Holes ascend, lie inside the blob and are zero byte pairs. */
		if (t->hole && (t->pos <= prev || t->pos + 2 > blob_size || e->blob[t->pos] ||
				e->blob[t->pos + 1]))
			return -EBADMSG;
		if (t->hole)
			prev = t->pos + 1;
	}
	return 0;
}

int cache__get(struct cache *c, struct key128 key, struct cache_entry *e)
{
	char path[4096];
	memset(e, 0, sizeof(*e));
	entry_path(c, key, path, sizeof(path));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	int err = -EBADMSG;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= ENTRY_HEAD &&
	    st.st_size < (1ll << 32)) {
		e->mem = malloc((size_t)st.st_size);
		err = !e->mem ? -ENOMEM : read_all(fd, e->mem, (size_t)st.st_size);
		if (!err)
			err = parse_entry(e, (size_t)st.st_size, key);
	}
	if (!err && !c->o.readonly && time(NULL) - st.st_mtime > TOUCH_AFTER)
		futimens(fd, NULL); /* its age for eviction: used now */
	close(fd);
	if (err) {
		cache_entry__free(e);
		if (err == -EBADMSG)
			cache__count(c, CC_CORRUPT, 1);
		return 0;
	}
	cache__count(c, CC_BYTES_READ, (uint64_t)st.st_size);
	return 1;
}

static void store_failed(struct cache *c, const char *path, int err)
{
	cache__count(c, CC_STORE_FAILED, 1);
	if (!__atomic_exchange_n(&c->warn_err, err, __ATOMIC_ACQ_REL))
		snprintf(c->warning, sizeof(c->warning), "cannot store %s: %s", path, strerror(err));
}

int cache__put(struct cache *c, struct key128 key, const uint8_t *blob, size_t blob_size,
	       const struct cache_patch *p, uint32_t np, uint16_t language, uint32_t nrecs)
{
	if (c->o.readonly)
		return 0;
	if (blob_size > UINT32_MAX || np > (UINT32_MAX - ENTRY_HEAD - blob_size) / PATCH_SIZE)
		return -EFBIG;
	struct buf b = { 0 };
	buf_put(&b, ENTRY_MAGIC, 8);
	buf_le32(&b, ENTRY_VERSION);
	buf_le32(&b, (uint32_t)blob_size);
	buf_le32(&b, np);
	buf_le16(&b, language);
	buf_le16(&b, 0);
	buf_le32(&b, nrecs);
	buf_le32(&b, 0);
	buf_le64(&b, key.lo);
	buf_le64(&b, key.hi);
	buf_le64(&b, 0); /* the check, below */
	for (uint32_t i = 0; i < np; i++) {
		buf_le32(&b, p[i].pos);
		buf_u8(&b, p[i].kind);
		buf_u8(&b, p[i].hole);
		buf_le16(&b, 0);
		buf_le64(&b, p[i].die);
	}
	buf_put(&b, blob, blob_size);
	if (b.err) {
		buf_free(&b);
		return -ENOMEM;
	}
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, b.data, 48);
	XXH3_64bits_update(&st, b.data + ENTRY_HEAD, b.len - ENTRY_HEAD);
	le64_put(b.data + 48, XXH3_64bits_digest(&st));

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
	for (size_t at = 0; !err && at < b.len;) {
		ssize_t w = write(fd, b.data + at, b.len - at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			err = w < 0 ? -errno : -EIO;
		else
			at += (size_t)w;
	}
	/* mkostemp makes 0600; the cache is shared like any build output. */
	mode_t um = umask(0);
	umask(um);
	if (!err && fchmod(fd, 0666 & ~um))
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
		cache__count(c, CC_STORED, 1);
		cache__count(c, CC_BYTES_WRITTEN, b.len);
	}
	buf_free(&b);
	return err;
}

/* ---- size, eviction, totals ---- */

struct aged {
	struct timespec mtime;
	uint64_t size;
	char name[64];	/* XX/KEY.cu */
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

/* Lists every entry (and removes temps left by killed writers). */
static int scan(struct cache *c, struct aged **out, size_t *count)
{
	struct aged *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	for (unsigned sub = 0; sub < 256; sub++) {
		char dir[4200];
		snprintf(dir, sizeof(dir), "%s/%02x", c->root, sub);
		DIR *dh = opendir(dir);
		if (!dh)
			continue;
		for (struct dirent *de; (de = readdir(dh));) {
			struct stat st;
			if (de->d_name[0] == '.' && strncmp(de->d_name, ".tmp.", 5))
				continue;
			if (fstatat(dirfd(dh), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
				continue;
			if (!strncmp(de->d_name, ".tmp.", 5)) {
				if (!c->o.readonly && now - st.st_mtime > STALE_TEMP)
					unlinkat(dirfd(dh), de->d_name, 0);
				continue;
			}
			size_t len = strlen(de->d_name);
			if (len != 35 || strcmp(de->d_name + 32, ".cu"))
				continue;
			if (out) {
				if (vec_grow(&v, &cap, n + 1)) {
					closedir(dh);
					free(v);
					return -ENOMEM;
				}
				v[n].mtime = st.st_mtim;
				v[n].size = (uint64_t)st.st_size;
				snprintf(v[n].name, sizeof(v[n].name), "%02x/%s", sub, de->d_name);
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
static void evict(struct cache *c)
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
		snprintf(path, sizeof(path), "%s/%s", c->root, v[i].name);
		if (unlink(path) == 0) {
			cache__count(c, CC_EVICTED, 1);
			c->bytes -= v[i].size;
			c->entries--;
		}
	}
	free(v);
}

/* DIR/cu-v1/stats: "name value" lines, this run's counters added under an
 * flock held only for the read-modify-write. Advisory: a damaged file
 * restarts from zero. */
static void add_totals(struct cache *c, uint64_t *totals, int add)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/stats", c->root);
	memset(totals, 0, CC_N * sizeof(*totals));
	add = add && !c->o.readonly;
	int fd = open(path, (add ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	if (add)
		flock(fd, LOCK_EX);
	char text[2048];
	ssize_t got = pread(fd, text, sizeof(text) - 1, 0);
	text[got > 0 ? got : 0] = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char name[64];
		uint64_t v;
		if (sscanf(line, "%63s %" SCNu64, name, &v) != 2)
			continue;
		for (int i = 0; i < CC_N; i++)
			if (!strcmp(name, counter_names[i]))
				totals[i] = v;
	}
	if (add) {
		int len = 0;
		for (int i = 0; i < CC_N; i++) {
			totals[i] += c->n[i];
			len += snprintf(text + len, sizeof(text) - (size_t)len, "%s %" PRIu64 "\n",
					counter_names[i], totals[i]);
		}
		if (pwrite(fd, text, (size_t)len, 0) == len)
			(void)!ftruncate(fd, len);
	}
	close(fd);
}

void cache__finish(struct cache *c)
{
	uint64_t totals[CC_N];
	if (!c->o.readonly && c->o.max_size && c->n[CC_STORED])
		evict(c);
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

void cache__print_stats(struct cache *c, FILE *f, int this_run)
{
	uint64_t totals[CC_N];
	add_totals(c, totals, 0); /* cache__finish already added this run's */
	if (!c->scanned)
		scan(c, NULL, NULL);
	char rd[32], wr[32], sz[32], lim[32];
	if (this_run) {
		human(rd, sizeof(rd), c->n[CC_BYTES_READ]);
		human(wr, sizeof(wr), c->n[CC_BYTES_WRITTEN]);
		fprintf(f, "cache %s: this run: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
			" uncacheable, %" PRIu64 " corrupt (repaired), %" PRIu64 " stored, %" PRIu64
			" store failures, %" PRIu64 " evicted; read %s, wrote %s\n", c->o.dir,
			c->n[CC_HITS], c->n[CC_MISSES], c->n[CC_UNCACHEABLE], c->n[CC_CORRUPT],
			c->n[CC_STORED], c->n[CC_STORE_FAILED], c->n[CC_EVICTED], rd, wr);
	}
	human(rd, sizeof(rd), totals[CC_BYTES_READ]);
	human(wr, sizeof(wr), totals[CC_BYTES_WRITTEN]);
	human(sz, sizeof(sz), c->bytes);
	if (c->o.max_size)
		human(lim, sizeof(lim), c->o.max_size);
	else
		snprintf(lim, sizeof(lim), "no limit");
	fprintf(f, "cache %s: all runs: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
		" uncacheable, %" PRIu64 " corrupt (repaired), %" PRIu64 " evicted; read %s, wrote %s\n",
		c->o.dir, totals[CC_HITS], totals[CC_MISSES], totals[CC_UNCACHEABLE], totals[CC_CORRUPT],
		totals[CC_EVICTED], rd, wr);
	fprintf(f, "cache %s: holds %" PRIu64 " entries, %s (limit %s)\n", c->o.dir, c->entries, sz, lim);
}
