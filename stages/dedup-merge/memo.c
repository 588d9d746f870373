/* memo.c: the merge's memo: a graph made again from what it was made of,
 * whatever moved in the address space.
 *
 * A relink after an edit moves code and data: in the .cus every CU's
 * function pcs, variable addresses and unit offset change, while almost
 * every CU's records stay what they were. The merge's output depends on
 * the records, the inputs' identities, and, passed through untouched, the
 * addresses and unit offsets. So the memo's key is what the records are
 * (each CU's content, the normal form's hash of format/CU-RECORDS.md,
 * "Content and addresses", read from the index without reading a blob),
 * and its value is the graph with those pass-through fields cut out: the
 * *template* (format/CU-CACHE.md, "The merge's memo"):
 *  - each function candidate with HAS_PC holds, in pc, which of its CU's
 *    address pairs it came from (its addr_ord), and shndx 0; each variable
 *    the same in addr;
 *  - each CU's cu_offset is 0; each input's DWARF hash and build id are
 *    zero and empty.
 * A hit puts the current file's values back and writes the graph: the
 * bytes a full merge of the same inputs writes (--cache-verify checks it).
 *
 * What the key holds, and why that is enough: the merge reads a CU's
 * records (its content), its language, unit type and version (in the key),
 * and its unit offset only to resolve references across CUs (DW_FORM_ref_addr,
 * dwz): when any CU of an input has an extern, every CU's unit offset is in
 * the key too, so references resolve as they did. The inputs' names,
 * machine, class, byte order and flags go into the graph's inputs section,
 * and are in the key; the options that change the graph (--lang-exclude)
 * too; and the running binary's identity, as in every memo (memo.h).
 *
 * The template is passed through a memfd, so no file of the output's
 * directory is made and none is left behind by a kill.
 */
#include "merge.h"
#include "../../common/cachedir.h"
#include "../../common/diag.h"
#include "../../common/memo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int merge_memo__key(const struct merge_opts *o, const struct cus_file *files, struct key128 *out)
{
	struct memo_key k;
	memo_key_begin(&k, "dedup-merge: a .graph from its CUs' contents");
	memo_key_u64(&k, o->nexclude);
	for (size_t i = 0; i < o->nexclude; i++)
		memo_key_u64(&k, o->exclude_langs[i]);
	memo_key_u64(&k, o->ninputs);
	for (size_t i = 0; i < o->ninputs; i++) {
		const struct cus_file *f = &files[i];
		int xrefs = 0;
		for (size_t c = 0; c < f->count; c++)
			xrefs |= f->index[c].nexterns != 0;
		memo_key_str(&k, f->ident.name);
		memo_key_u64(&k, f->ident.e_machine);
		memo_key_u64(&k, f->ident.ei_class);
		memo_key_u64(&k, f->ident.ei_data);
		memo_key_u64(&k, f->ident.flags);
		memo_key_u64(&k, f->count);
		memo_key_u64(&k, (uint64_t)xrefs);
		for (size_t c = 0; c < f->count; c++) {
			const struct cus_index_entry *e = &f->index[c];
			uint64_t v[7] = { e->content.lo, e->content.hi, e->language, e->unit_type,
					  e->dwarf_version, e->addr_count,
					  xrefs ? e->cu_offset : (e->cu_offset & CUS_ALT_BIT) };
			memo_key_bytes(&k, v, sizeof(v));
		}
	}
	return memo_key_end(&k, out);
}

/* A memfd holding size bytes of data, as a path graph__read() maps. */
static int memfd_of(const void *data, size_t size, char path[64])
{
	int fd = memfd_create("btfpipe-merge-memo", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (size_t at = 0; at < size;) {
		ssize_t n = write(fd, (const uint8_t *)data + at, size - at);
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;
			close(fd);
			return err;
		}
		at += (size_t)n;
	}
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

/* The template's ordinals into this run's addresses, and the other
 * pass-through fields from the files. 0, or -EBADMSG when the template
 * does not fit the files (an entry of another shape under this key: a
 * corrupt one), which the caller counts as a miss. */
static int fill(struct graph *g, const struct cus_file *files, size_t nfiles)
{
	size_t ncus = 0;
	for (size_t i = 0; i < nfiles; i++)
		ncus += files[i].count;
	if (g->ninputs != nfiles || g->ncus != ncus)
		return -EBADMSG;
	for (size_t i = 0; i < nfiles; i++) {
		struct graph_input *in = &g->inputs[i];
		const struct cus_ident *id = &files[i].ident;
		if (in->ncus != files[i].count || id->build_id_len > sizeof(in->build_id))
			return -EBADMSG;
		in->dwarf_hash = id->dwarf_hash;
		memcpy(in->build_id, id->build_id, id->build_id_len);
		in->build_id_len = id->build_id_len;
	}
	/* CU c of the graph is CU k of input cus[c].input, in order. */
	const struct cus_index_entry **ent = malloc((ncus + 1) * sizeof(*ent));
	const struct cus_addr **addrs = malloc((ncus + 1) * sizeof(*addrs));
	int err = ent && addrs ? 0 : -ENOMEM;
	for (size_t i = 0, c = 0; !err && i < nfiles; i++)
		for (size_t k = 0; k < files[i].count; k++, c++) {
			if (g->cus[c].input != i) {
				err = -EBADMSG;
				break;
			}
			ent[c] = &files[i].index[k];
			addrs[c] = files[i].addrs + ent[c]->addr_first;
			g->cus[c].cu_offset = ent[c]->cu_offset;
		}
	for (size_t i = 0; !err && i < g->nfuncs; i++) {
		struct graph_func *f = &g->funcs[i];
		if (!(f->flags & G_F_HAS_PC))
			continue;
		if (f->cu >= ncus || f->pc >= ent[f->cu]->addr_count) {
			err = -EBADMSG;
			break;
		}
		const struct cus_addr *a = &addrs[f->cu][f->pc];
		f->pc = a->addr;
		f->shndx = a->shndx;
	}
	for (size_t i = 0; !err && i < g->nvars; i++) {
		struct graph_var *v = &g->vars[i];
		if (v->cu >= ncus || v->addr >= ent[v->cu]->addr_count) {
			err = -EBADMSG;
			break;
		}
		const struct cus_addr *a = &addrs[v->cu][v->addr];
		v->addr = a->addr;
		v->shndx = a->shndx;
	}
	free(ent);
	free(addrs);
	return err;
}

int merge_memo__fetch(struct cachedir *c, struct key128 key, const struct cus_file *files, size_t nfiles,
		      const char *out, unsigned jobs, struct diag *d)
{
	uint8_t *data;
	size_t size;
	if (!memo_fetch(c, key, &data, &size))
		return 0;
	char path[64];
	int fd = memfd_of(data, size, path);
	free(data);
	if (fd < 0)
		return 0; /* the merge then runs: a memfd is only a shortcut */
	struct graph g;
	struct diag quiet = { 0 };
	int err = graph__read_flags(&g, path, 0, jobs, &quiet);
	close(fd);
	if (!err) {
		err = fill(&g, files, nfiles);
		if (!err)
			err = graph__write(&g, out, jobs, d);
		graph__free(&g);
		if (!err)
			return 1;
		if (err != -EBADMSG)
			return err; /* the output could not be written: d says why */
	}
	cachedir__count(c, CD_CORRUPT, 1);
	return 0;
}

void merge_memo__store(struct cachedir *c, struct key128 key, struct merge *m, unsigned jobs)
{
	struct graph *g = &m->g;
	for (size_t i = 0; i < g->nfuncs; i++)
		if (g->funcs[i].flags & G_F_HAS_PC) {
			g->funcs[i].pc = m->func_ord[i];
			g->funcs[i].shndx = 0;
		}
	for (size_t i = 0; i < g->nvars; i++) {
		g->vars[i].addr = m->var_ord[i];
		g->vars[i].shndx = 0;
	}
	for (size_t i = 0; i < g->ncus; i++)
		g->cus[i].cu_offset = 0;
	for (size_t i = 0; i < g->ninputs; i++) {
		g->inputs[i].dwarf_hash = (struct key128){ 0, 0 };
		g->inputs[i].build_id_len = 0;
	}
	char path[64];
	int fd = memfd_of("", 0, path);
	if (fd < 0)
		return;
	/* A template that cannot be made is not stored: the memo only saves
	 * time, and its failures are never the run's. */
	struct diag quiet = { 0 };
	if (!graph__write_fd(g, fd, "the merge memo's template", jobs, &quiet))
		memo_store_file(c, key, path);
	close(fd);
}
