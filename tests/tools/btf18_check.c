/* btf18-check: what libbpf 1.8 (built from ../shared/anchors, never Debian's
 * 1.1) says of a BTF file: the oracle for the kind layout and the distilled
 * base, which libbpf 1.1 cannot read.
 *
 *   btf18-check [--base BASE] FILE
 *       libbpf 1.8 parses FILE (raw BTF, or an ELF's .BTF: then a .BTF.base
 *       beside it is the distilled base, and with BASE, btf__parse_elf_split()
 *       relocates the split BTF onto BASE). Prints "types N" (of FILE alone),
 *       "distilled N" when FILE carried a distilled base of N types, and
 *       "layout none" or "layout libbpf" when FILE's kind layout is the one
 *       libbpf 1.8 writes itself (btf__new_empty_opts(.add_layout)); a
 *       layout that differs fails.
 *   btf18-check --dump [--base BASE] FILE
 *       ... and then one line per named struct, union, enum, function,
 *       variable, section and decl tag of FILE's own types, its members
 *       spelled out by name down to named types, sorted: two encodings of
 *       the same types print the same lines whatever their ids and whatever
 *       moved between base and split.
 *
 *   btf18-check --raw-out OUT [--base BASE] FILE
 *       ... and FILE's own types as raw BTF to OUT: with a distilled base
 *       relocated onto BASE, plain split BTF over BASE that Debian's libbpf
 *       1.1 and bpftool read (what the kernel sees after relocating).
 *   btf18-check --distill BASE FILE OUT
 *       libbpf 1.8's btf__distill_base() of FILE (split BTF over BASE, not
 *       distilled): the distilled base to OUT.base, the split BTF over it to
 *       OUT.split, both raw.
 *
 * Exit: 0 all checks hold, 1 one failed, 2 usage.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

/* The header libbpf 1.8 writes: 24 bytes, then the kind layout's place. */
struct hdr32 {
	unsigned short magic;
	unsigned char version, flags;
	unsigned int hdr_len, type_off, type_len, str_off, str_len, layout_off, layout_len;
};

/* FILE's layout against the one libbpf 1.8 writes. Returns 0 when equal or
 * absent (printing which), 1 when it differs. */
static int check_layout(const struct btf *btf)
{
	unsigned int n, m;
	const struct hdr32 *h = btf__raw_data(btf, &n);
	if (!h || n < 24 || h->hdr_len < 32 || !h->layout_len) {
		printf("layout none\n");
		return 0;
	}
	LIBBPF_OPTS(btf_new_opts, o, .add_layout = true);
	struct btf *ref = btf__new_empty_opts(&o);
	const struct hdr32 *r = ref ? btf__raw_data(ref, &m) : NULL;
	int same = r && r->layout_len == h->layout_len &&
		   !memcmp((const char *)h + h->hdr_len + h->layout_off, (const char *)r + r->hdr_len + r->layout_off,
			   h->layout_len);
	printf("layout %s\n", same ? "libbpf" : "differs from libbpf 1.8's");
	btf__free(ref);
	return !same;
}

static void put(char **s, size_t *n, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(*s + *n, *cap - *n, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if ((size_t)k < *cap - *n) {
			*n += (size_t)k;
			return;
		}
		*cap = (*cap + (size_t)k) * 2;
		*s = realloc(*s, *cap);
		if (!*s)
			exit(3);
	}
}

/* A type spelled by name: named types by kind and name, the rest spelled
 * out (anonymous aggregates to a depth, which a cycle through them needs). */
static void spell(const struct btf *b, unsigned id, int depth, char **s, size_t *n, size_t *cap)
{
	const struct btf_type *t = id ? btf__type_by_id(b, id) : NULL;
	if (!id) {
		put(s, n, cap, "void");
		return;
	}
	if (!t) {
		put(s, n, cap, "?%u", id);
		return;
	}
	const char *name = btf__name_by_offset(b, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_INT: case BTF_KIND_FLOAT: put(s, n, cap, "%s/%u", name, t->size); return;
	case BTF_KIND_PTR: put(s, n, cap, "*"); spell(b, t->type, depth, s, n, cap); return;
	case BTF_KIND_CONST: put(s, n, cap, "const "); spell(b, t->type, depth, s, n, cap); return;
	case BTF_KIND_VOLATILE: put(s, n, cap, "volatile "); spell(b, t->type, depth, s, n, cap); return;
	case BTF_KIND_RESTRICT: put(s, n, cap, "restrict "); spell(b, t->type, depth, s, n, cap); return;
	case BTF_KIND_TYPE_TAG:
		put(s, n, cap, "tag%s(%s) ", btf_kflag(t) ? "/attr" : "", name);
		spell(b, t->type, depth, s, n, cap);
		return;
	case BTF_KIND_TYPEDEF: put(s, n, cap, "typedef %s", name); return;
	case BTF_KIND_FWD: put(s, n, cap, "fwd %s %s", btf_kflag(t) ? "union" : "struct", name); return;
	case BTF_KIND_ARRAY:
		spell(b, btf_array(t)->type, depth, s, n, cap);
		put(s, n, cap, "[%u]", btf_array(t)->nelems);
		return;
	case BTF_KIND_FUNC_PROTO: {
		const struct btf_param *p = btf_params(t);
		put(s, n, cap, "fn(");
		for (unsigned i = 0; i < btf_vlen(t); i++) {
			put(s, n, cap, "%s%s:", i ? ", " : "", btf__name_by_offset(b, p[i].name_off));
			spell(b, p[i].type, depth, s, n, cap);
		}
		put(s, n, cap, ") -> ");
		spell(b, t->type, depth, s, n, cap);
		return;
	}
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_ENUM: case BTF_KIND_ENUM64: {
		const char *k = btf_is_struct(t) ? "struct" : btf_is_union(t) ? "union" : "enum";
		if (*name || depth > 6) {
			put(s, n, cap, "%s %s/%u", k, name, t->size);
			return;
		}
		put(s, n, cap, "%s/%u{", k, t->size);
		for (unsigned i = 0; i < btf_vlen(t); i++) {
			if (btf_is_composite(t)) {
				const struct btf_member *m = btf_members(t) + i;
				put(s, n, cap, "%s%s@%u:", i ? "; " : "", btf__name_by_offset(b, m->name_off),
				    btf_member_bit_offset(t, i));
				spell(b, m->type, depth + 1, s, n, cap);
			} else if (btf_is_enum(t)) {
				put(s, n, cap, "%s%s=%d", i ? "; " : "", btf__name_by_offset(b, btf_enum(t)[i].name_off),
				    btf_enum(t)[i].val);
			} else {
				put(s, n, cap, "%s%s=%llu", i ? "; " : "", btf__name_by_offset(b, btf_enum64(t)[i].name_off),
				    (unsigned long long)btf_enum64_value(btf_enum64(t) + i));
			}
		}
		put(s, n, cap, "}");
		return;
	}
	default: put(s, n, cap, "kind%u %s", btf_kind(t), name); return;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines --dump prints, for FILE's own types (after its base's). */
static void dump(const struct btf *b, unsigned first)
{
	unsigned end = btf__type_cnt(b);
	char **lines = calloc(end, sizeof(*lines));
	size_t nl = 0;
	for (unsigned id = first; id < end; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		const char *name = btf__name_by_offset(b, t->name_off);
		int k = btf_kind(t);
		int named_agg = (btf_is_composite(t) || btf_is_any_enum(t)) && *name;
		if (!named_agg && k != BTF_KIND_FUNC && k != BTF_KIND_VAR && k != BTF_KIND_DATASEC &&
		    k != BTF_KIND_DECL_TAG)
			continue;
		char *s = NULL;
		size_t n = 0, cap = 0;
		put(&s, &n, &cap, "%s%s ", k == BTF_KIND_FUNC ? "func " : k == BTF_KIND_VAR ? "var " :
					   k == BTF_KIND_DATASEC ? "datasec " : "", name);
		if (k == BTF_KIND_DECL_TAG) {
			put(&s, &n, &cap, "decl_tag%s %d on ", btf_kflag(t) ? "/attr" : "", btf_decl_tag(t)->component_idx);
			const struct btf_type *on = btf__type_by_id(b, t->type);
			put(&s, &n, &cap, "%s", on ? btf__name_by_offset(b, on->name_off) : "?");
		} else if (named_agg) {
			/* spelled out at depth 0 although named */
			const char *kn = btf_is_struct(t) ? "struct" : btf_is_union(t) ? "union" : "enum";
			put(&s, &n, &cap, "%s/%u{", kn, t->size);
			for (unsigned i = 0; i < btf_vlen(t); i++) {
				if (btf_is_composite(t)) {
					const struct btf_member *m = btf_members(t) + i;
					put(&s, &n, &cap, "%s%s@%u/%u:", i ? "; " : "", btf__name_by_offset(b, m->name_off),
					    btf_member_bit_offset(t, i), btf_member_bitfield_size(t, i));
					spell(b, m->type, 1, &s, &n, &cap);
				} else if (btf_is_enum(t)) {
					put(&s, &n, &cap, "%s%s=%d", i ? "; " : "", btf__name_by_offset(b, btf_enum(t)[i].name_off),
					    btf_enum(t)[i].val);
				} else {
					put(&s, &n, &cap, "%s%s=%llu", i ? "; " : "",
					    btf__name_by_offset(b, btf_enum64(t)[i].name_off),
					    (unsigned long long)btf_enum64_value(btf_enum64(t) + i));
				}
			}
			put(&s, &n, &cap, "}");
		} else if (k == BTF_KIND_DATASEC) {
			const struct btf_var_secinfo *v = btf_var_secinfos(t);
			for (unsigned i = 0; i < btf_vlen(t); i++) {
				const struct btf_type *vt = btf__type_by_id(b, v[i].type);
				put(&s, &n, &cap, "%s%s@%u/%u", i ? "; " : "", vt ? btf__name_by_offset(b, vt->name_off) : "?",
				    v[i].offset, v[i].size);
			}
		} else {
			if (k == BTF_KIND_FUNC || k == BTF_KIND_VAR)
				put(&s, &n, &cap, "linkage %u ", k == BTF_KIND_FUNC ? btf_vlen(t) : btf_var(t)->linkage);
			spell(b, t->type, 0, &s, &n, &cap);
		}
		lines[nl++] = s;
	}
	qsort(lines, nl, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < nl; i++) {
		puts(lines[i]);
		free(lines[i]);
	}
	free(lines);
}

static int write_raw(const struct btf *b, const char *path)
{
	unsigned int n;
	const void *raw = btf__raw_data(b, &n);
	FILE *f = raw ? fopen(path, "wb") : NULL;
	int bad = !f || fwrite(raw, 1, n, f) != n;
	if (f && fclose(f))
		bad = 1;
	if (bad)
		fprintf(stderr, "btf18-check: cannot write %s\n", path);
	return bad;
}

static int distill(const char *base_path, const char *path, const char *out)
{
	struct btf *base = btf__parse(base_path, NULL), *split = base ? btf__parse_split(path, base) : NULL;
	struct btf *nb = NULL, *ns = NULL;
	char p[4096];
	int bad = 1;
	if (!split)
		fprintf(stderr, "btf18-check: cannot parse %s over %s: %s\n", path, base_path, strerror(errno));
	else if (btf__distill_base(split, &nb, &ns))
		fprintf(stderr, "btf18-check: btf__distill_base() of %s failed: %s\n", path, strerror(errno));
	else {
		snprintf(p, sizeof(p), "%s.base", out);
		bad = write_raw(nb, p);
		snprintf(p, sizeof(p), "%s.split", out);
		bad |= write_raw(ns, p);
	}
	btf__free(ns);
	btf__free(nb);
	btf__free(split);
	btf__free(base);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--distill")) {
		libbpf_set_print(quiet_print);
		return distill(argv[2], argv[3], argv[4]);
	}
	const char *base_path = NULL, *raw_out = NULL;
	int want_dump = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--dump"))
			want_dump = 1;
		else if (!strcmp(argv[i], "--raw-out") && i + 1 < argc)
			raw_out = argv[++i];
		else if (!strcmp(argv[i], "--base") && i + 1 < argc)
			base_path = argv[++i];
		else
			break;
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: btf18-check [--dump] [--raw-out OUT] [--base BASE] FILE\n");
		return 2;
	}
	const char *path = argv[i];
	libbpf_set_print(quiet_print);
	struct btf *base = NULL;
	if (base_path && !(base = btf__parse(base_path, NULL))) {
		fprintf(stderr, "btf18-check: %s: libbpf 1.8 cannot parse the base: %s\n", base_path, strerror(errno));
		return 1;
	}
	struct btf *btf = btf__parse_split(path, base);
	if (!btf) {
		fprintf(stderr, "btf18-check: %s: libbpf 1.8 cannot parse it%s%s: %s\n", path,
			base_path ? " over " : "", base_path ? base_path : "", strerror(errno));
		btf__free(base);
		return 1;
	}
	const struct btf *own_base = btf__base_btf(btf);
	unsigned first = own_base ? btf__type_cnt(own_base) : 1;
	printf("types %u\n", btf__type_cnt(btf) - first);
	if (own_base && own_base != base)
		printf("distilled %u\n", btf__type_cnt(own_base) - 1);
	int bad = check_layout(btf);
	if (raw_out)
		bad |= write_raw(btf, raw_out);
	if (want_dump)
		dump(btf, first);
	btf__free(btf);
	btf__free(base);
	return bad;
}
