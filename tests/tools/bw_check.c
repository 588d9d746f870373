/* bw-check: btf-emit's writer (stages/btf-emit/btf_writer.c) against
 * libbpf's btf__add_*(). Per seed, a pseudo-random run of calls, valid and
 * invalid (empty names, bad sizes and linkages, bitfields out of range,
 * members after the wrong kind, negative and too-wide enum values), made on
 * both with the same arguments. Every call must return the same value, and
 * the raw BTF at the end must be the same bytes.
 *
 * Then the type limit, where the writer says -E2BIG and libbpf -ENOMEM.
 *
 * Prints "same seed S: N calls, M types, B bytes" per seed; on the first
 * difference, "DIFFERENT seed S call N: ..." and exits 1.
 */
#include "../../stages/btf-emit/btf_writer.h"
#include "../../common/buf.h"

#include <bpf/btf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;

static uint32_t next(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33);
}

static uint32_t pick(uint32_t n)
{
	return next() % n;
}

/* Repeats, "" and NULL, so that the strings' dedup and "no name" are met. */
static const char *const names[] = {
	NULL, "", "int", "long unsigned int", "task_struct", "x", "y", "__u32", "list_head",
	"next", "prev", "a_rather_long_member_name_to_shift_offsets", "int", "x", "ops", "flags",
};

static const char *name(void)
{
	return names[pick(sizeof(names) / sizeof(names[0]))];
}

/* Mostly valid ids, sometimes negative (libbpf: -EINVAL). */
static int id(uint32_t cnt)
{
	uint32_t r = pick(40);
	return r == 0 ? -1 : r == 1 ? INT_MIN : (int)pick(cnt + 3);
}

static const uint32_t sizes[] = { 0, 1, 2, 3, 4, 8, 12, 16, 32, 5 };

static uint32_t size(void)
{
	return sizes[pick(sizeof(sizes) / sizeof(sizes[0]))];
}

int main(void)
{
	int bad = 0;
	for (uint64_t seed = 1; seed <= 24 && !bad; seed++) {
		rng = seed;
		struct btf *lb = btf__new_empty();
		struct bw *w = bw__new();
		if (!lb || !w) {
			fprintf(stderr, "out of memory\n");
			return 2;
		}
		unsigned calls = 300 + pick(3000);
		for (unsigned c = 0; c < calls && !bad; c++) {
			uint32_t cnt = btf__type_cnt(lb);
			int a, b;
			const char *n = name();
			int r1 = id(cnt), r2 = id(cnt);
			uint32_t s = size();
			unsigned op = pick(26);
			switch (op) {
			case 0: {
				int enc = (int)pick(6) == 5 ? 8 : (int)pick(6);
				a = btf__add_int(lb, n, s, enc), b = bw__add_int(w, n, s, enc);
				break;
			}
			case 1: a = btf__add_float(lb, n, s), b = bw__add_float(w, n, s); break;
			case 2: a = btf__add_ptr(lb, r1), b = bw__add_ptr(w, r1); break;
			case 3: a = btf__add_const(lb, r1), b = bw__add_const(w, r1); break;
			case 4: a = btf__add_volatile(lb, r1), b = bw__add_volatile(w, r1); break;
			case 5: a = btf__add_restrict(lb, r1), b = bw__add_restrict(w, r1); break;
			case 6: a = btf__add_typedef(lb, n, r1), b = bw__add_typedef(w, n, r1); break;
			case 7: a = btf__add_type_tag(lb, n, r1), b = bw__add_type_tag(w, n, r1); break;
			case 8: {
				int k = (int)pick(4); /* 3 is no kind */
				a = btf__add_fwd(lb, n, k), b = bw__add_fwd(w, n, k);
				break;
			}
			case 9: {
				uint32_t ne = pick(3) ? pick(100) : UINT32_MAX;
				a = btf__add_array(lb, r1, r2, ne), b = bw__add_array(w, r1, r2, ne);
				break;
			}
			case 10: a = btf__add_struct(lb, n, s * 8), b = bw__add_struct(w, n, s * 8); break;
			case 11: a = btf__add_union(lb, n, s), b = bw__add_union(w, n, s); break;
			case 12: case 13: case 14: {
				/* fields, bitfields among them, some out of range */
				uint32_t off = pick(4) ? pick(512) : (pick(2) ? 0x1000000 : 8 * pick(64));
				uint32_t bits = pick(3) ? 0 : (pick(5) ? 1 + pick(31) : 256);
				a = btf__add_field(lb, n, r1, off, bits), b = bw__add_field(w, n, r1, off, bits);
				break;
			}
			case 15: a = btf__add_enum(lb, n, s), b = bw__add_enum(w, n, s); break;
			case 16: case 17: {
				static const int64_t vals[] = { 0, 1, -1, INT_MIN, (int64_t)INT_MIN - 1, UINT_MAX,
								(int64_t)UINT_MAX + 1, 42, -7 };
				int64_t v = vals[pick(sizeof(vals) / sizeof(vals[0]))];
				a = btf__add_enum_value(lb, n, v), b = bw__add_enum_value(w, n, v);
				break;
			}
			case 18: {
				int sg = (int)pick(2);
				a = btf__add_enum64(lb, n, s, sg), b = bw__add_enum64(w, n, s, sg);
				break;
			}
			case 19: {
				uint64_t v = ((uint64_t)next() << 32) | next();
				a = btf__add_enum64_value(lb, n, v), b = bw__add_enum64_value(w, n, v);
				break;
			}
			case 20: a = btf__add_func_proto(lb, r1), b = bw__add_func_proto(w, r1); break;
			case 21: a = btf__add_func_param(lb, n, r1), b = bw__add_func_param(w, n, r1); break;
			case 22: {
				int l = (int)pick(4);
				a = btf__add_func(lb, n, l, r1), b = bw__add_func(w, n, l, r1);
				break;
			}
			case 23: {
				int l = (int)pick(4);
				a = btf__add_var(lb, n, l, r1), b = bw__add_var(w, n, l, r1);
				break;
			}
			case 24:
				if (pick(2)) {
					a = btf__add_datasec(lb, n, s * 100), b = bw__add_datasec(w, n, s * 100);
				} else {
					uint32_t off = pick(1000);
					a = btf__add_datasec_var_info(lb, r1, off, s);
					b = bw__add_datasec_var_info(w, r1, off, s);
				}
				break;
			default: {
				int comp = (int)pick(5) - 2;
				a = btf__add_decl_tag(lb, n, r1, comp), b = bw__add_decl_tag(w, n, r1, comp);
				break;
			}
			}
			if (a != b) {
				printf("DIFFERENT seed %" PRIu64 " call %u: op %u (name \"%s\") libbpf %d, ours %d\n",
				       seed, c, op, n ? n : "(null)", a, b);
				bad = 1;
			}
		}
		uint32_t lsize = 0;
		const void *lraw = btf__raw_data(lb, &lsize);
		struct buf ours = { 0 };
		int err = bw__raw(w, &ours);
		if (!bad && (err || !lraw || lsize != ours.len || memcmp(lraw, ours.data, lsize))) {
			printf("DIFFERENT seed %" PRIu64 ": raw BTF %u bytes from libbpf, %zu ours (err %d)\n", seed,
			       lsize, ours.len, err);
			bad = 1;
		}
		if (!bad)
			printf("same seed %" PRIu64 ": %u calls, %u types, %u bytes\n", seed, calls,
			       btf__type_cnt(lb) - 1, lsize);
		buf_free(&ours);
		bw__free(w);
		btf__free(lb);
	}
	/* libbpf's type limit (2^31-1), met by a piece whose ids start just
	 * under it: the type past the limit is refused with -E2BIG, "a limit
	 * of BTF's", where libbpf says -ENOMEM (btf-emit names the type). */
	if (!bad) {
		struct bw *w = bw__new_piece((uint32_t)INT_MAX - 4, 0);
		int r[4];
		for (int k = 0; k < 4; k++)
			r[k] = w ? bw__add_int(w, "int", 4, 1) : -ENOMEM;
		if (r[0] == INT_MAX - 3 && r[1] == INT_MAX - 2 && r[2] == INT_MAX - 1 && r[3] == -E2BIG)
			printf("same limit: ids up to %d, then %d (%s)\n", r[2], r[3], bw__strerror(r[3]));
		else {
			printf("DIFFERENT limit: ids %d %d %d, then %d (want %d %d %d, then -E2BIG)\n", r[0], r[1],
			       r[2], r[3], INT_MAX - 3, INT_MAX - 2, INT_MAX - 1);
			bad = 1;
		}
		bw__free(w);
	}
	return bad;
}
