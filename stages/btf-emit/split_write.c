/* split_write.c: the raw bytes of split BTF over a base, for the types that
 * base_dedup() kept.
 *
 * Why not libbpf's btf__add_type() into btf__new_empty_split(): every string
 * it adds is first looked up in the base, and the first lookup turns the
 * whole base into an editable copy with a hash of its ~100,000 strings
 * (20-25 ms per module, most of a small module's time). Here the base's
 * strings come from str_match.c, which base_dedup() made.
 *
 * The bytes are what libbpf would write: the types in order, each reference
 * renumbered, each string the base's offset when the base has it, else
 * appended to our own section in order of first use (name, then members,
 * values or parameters). libbpf parses the result before anything is written
 * (main.c), so a mistake here is refused, not written.
 */
#include "emit.h"
#include "../../common/buf.h"
#include "../../common/diag.h"
#include "../../common/strtab.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct sw {
	const struct btf *ours;
	const uint32_t *newid;	/* per id of ours: its id in the split BTF */
	uint32_t nids;
	const struct str_match *sm;
	struct strtab *own;	/* our section; its leading "" is not written */
	int err;
};

static void put_str(struct sw *w, uint32_t *off)
{
	const char *s = btf__name_by_offset(w->ours, *off);
	if (!s || !*s) {
		*off = 0;
		return;
	}
	int64_t b = str_match_base_off(w->sm, str_match_ours(w->sm, *off));
	if (b >= 0) {
		*off = (uint32_t)b;
		return;
	}
	int64_t o = strtab__add(w->own, s);
	if (o < 0) {
		w->err = (int)o;
		return;
	}
	*off = w->sm->blen + (uint32_t)o - 1;
}

/* The bytes a type takes, header included. */
static size_t type_size(const struct btf_type *t)
{
	size_t n = btf_vlen(t);
	switch (btf_kind(t)) {
	case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
		return sizeof(*t) + 4;
	case BTF_KIND_ARRAY:
		return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		return sizeof(*t) + n * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return sizeof(*t) + n * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return sizeof(*t) + n * 12;
	case BTF_KIND_FUNC_PROTO:
		return sizeof(*t) + n * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return sizeof(*t) + n * sizeof(struct btf_var_secinfo);
	}
	return sizeof(*t);
}

/* newid has an entry per type of ours; ours never refers past them, but a
 * reference that did stays as it is, and libbpf's parse of the result
 * refuses it. */
static uint32_t re(const struct sw *w, uint32_t id)
{
	return id && id < w->nids ? w->newid[id] : id;
}

/* Copy our type t, renumbered, its strings rewritten, to the end of types. */
static void put_type(struct sw *w, struct buf *types, const struct btf_type *src)
{
	size_t at = types->len, sz = type_size(src);
	buf_put(types, src, sz);
	if (types->err)
		return;
	struct btf_type *t = (struct btf_type *)(types->data + at);
	put_str(w, &t->name_off);
	uint32_t n = btf_vlen(t);
	switch (btf_kind(t)) {
	case BTF_KIND_PTR: case BTF_KIND_CONST: case BTF_KIND_VOLATILE: case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPEDEF: case BTF_KIND_TYPE_TAG: case BTF_KIND_FUNC: case BTF_KIND_DECL_TAG:
	case BTF_KIND_VAR:
		t->type = re(w, t->type);
		break;
	case BTF_KIND_ARRAY:
		btf_array(t)->type = re(w, btf_array(t)->type);
		btf_array(t)->index_type = re(w, btf_array(t)->index_type);
		break;
	case BTF_KIND_STRUCT: case BTF_KIND_UNION:
		for (uint32_t i = 0; i < n; i++) {
			put_str(w, &btf_members(t)[i].name_off);
			btf_members(t)[i].type = re(w, btf_members(t)[i].type);
		}
		break;
	case BTF_KIND_ENUM:
		for (uint32_t i = 0; i < n; i++)
			put_str(w, &btf_enum(t)[i].name_off);
		break;
	case BTF_KIND_ENUM64:
		for (uint32_t i = 0; i < n; i++)
			put_str(w, (uint32_t *)(t + 1) + 3 * i);
		break;
	case BTF_KIND_FUNC_PROTO:
		t->type = re(w, t->type);
		for (uint32_t i = 0; i < n; i++) {
			put_str(w, &btf_params(t)[i].name_off);
			btf_params(t)[i].type = re(w, btf_params(t)[i].type);
		}
		break;
	case BTF_KIND_DATASEC:
		for (uint32_t i = 0; i < n; i++)
			btf_var_secinfos(t)[i].type = re(w, btf_var_secinfos(t)[i].type);
		break;
	}
}

/* libbpf's parse of split BTF bytes. The libbpf this builds against (1.1)
 * declares btf__new_split() but does not export it, so the bytes go through
 * an anonymous memory file and btf__parse_raw_split(). */
static int parse_split(const void *data, size_t len, const struct btf *base, struct btf **out, struct diag *d)
{
	int fd = memfd_create("btfpipe-split", MFD_CLOEXEC);
	if (fd < 0)
		return diag_fail(d, errno, "memfd_create: %s", strerror(errno));
	int err = 0;
	for (size_t done = 0; done < len && !err;) {
		ssize_t w = write(fd, (const char *)data + done, len - done);
		if (w < 0 && errno != EINTR)
			err = diag_fail(d, errno, "writing to a memory file: %s", strerror(errno));
		else if (w > 0)
			done += (size_t)w;
	}
	if (!err) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		*out = btf__parse_raw_split(path, (struct btf *)base);
		if (!*out)
			err = diag_fail(d, EPROTO, "libbpf refuses the split BTF we made (a bug): %s",
					strerror(errno));
	}
	close(fd);
	return err;
}

int split_write(const struct btf *ours, const struct btf *base, const struct str_match *sm,
		const uint32_t *newid, const uint8_t *keep, struct btf **out, struct diag *d)
{
	struct sw w = { .ours = ours, .newid = newid, .nids = btf__type_cnt(ours), .sm = sm };
	struct buf types = { 0 }, raw = { 0 };
	int err = 0;
	if (!(w.own = strtab__new()))
		err = -ENOMEM;
	for (uint32_t id = 1; !err && id < btf__type_cnt(ours); id++) {
		if (keep[id])
			put_type(&w, &types, btf__type_by_id(ours, id));
		err = types.err ? types.err : w.err;
	}
	if (!err) {
		size_t own_len = strtab__size(w.own) - 1; /* without the leading "" */
		struct btf_header h = {
			.magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h),
			.type_off = 0, .type_len = (uint32_t)types.len,
			.str_off = (uint32_t)types.len, .str_len = (uint32_t)own_len,
		};
		buf_put(&raw, &h, sizeof(h));
		buf_put(&raw, types.data, types.len);
		buf_put(&raw, strtab__data(w.own) + 1, own_len);
		err = raw.err;
	}
	if (!err)
		err = parse_split(raw.data, raw.len, base, out, d);
	strtab__free(w.own);
	buf_free(&types);
	buf_free(&raw);
	return err;
}
