/* btfcheck: the oracles a test asks of a BTF file, through libbpf.
 *
 *   btfcheck FILE             libbpf parses it (raw BTF or an ELF's .BTF); prints
 *                             "types N" and one "kind NAME COUNT" line per kind
 *   btfcheck --load FILE      ... and the running kernel's BTF checker accepts it
 *                             (btf__load_into_kernel); exit 77 when the kernel
 *                             refuses bpf() itself (EPERM/ENOSYS), so a test can skip
 *   btfcheck --base BASE ...  FILE is split BTF over BASE (raw BTF or an ELF)
 *   btfcheck --dedup FILE     ... and btf__dedup() removes nothing: prints
 *                             "dedup N -> M" and fails when M < N
 *
 * Exit: 0 all asked checks hold, 1 one failed, 2 usage, 77 kernel unavailable.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int verbose_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static const char *kind_name(int kind)
{
	static const char *const n[] = {
		"UNKN", "INT", "PTR", "ARRAY", "STRUCT", "UNION", "ENUM", "FWD", "TYPEDEF",
		"VOLATILE", "CONST", "RESTRICT", "FUNC", "FUNC_PROTO", "VAR", "DATASEC",
		"FLOAT", "DECL_TAG", "TYPE_TAG", "ENUM64",
	};
	return kind >= 0 && kind < (int)(sizeof(n) / sizeof(n[0])) ? n[kind] : "?";
}

int main(int argc, char **argv)
{
	int load = 0, dedup = 0, i = 1;
	const char *base_path = NULL;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--base") && i + 1 < argc)
			base_path = argv[++i];
		else if (!strcmp(argv[i], "--load"))
			load = 1;
		else if (!strcmp(argv[i], "--dedup"))
			dedup = 1;
		else {
			fprintf(stderr, "btfcheck: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (i + 1 != argc) {
		fprintf(stderr, "usage: btfcheck [--base BASE] [--load] [--dedup] FILE\n");
		return 2;
	}
	libbpf_set_print(verbose_print);
	struct btf *base = NULL;
	if (base_path && !(base = btf__parse(base_path, NULL))) {
		fprintf(stderr, "btfcheck: libbpf cannot parse base %s: %s\n", base_path, strerror(errno));
		return 1;
	}
	struct btf *btf = base ? btf__parse_split(argv[i], base) : btf__parse(argv[i], NULL);
	if (!btf) {
		fprintf(stderr, "btfcheck: libbpf cannot parse %s: %s\n", argv[i], strerror(errno));
		return 1;
	}
	unsigned n = btf__type_cnt(btf), first = base ? btf__type_cnt(base) : 1;
	unsigned counts[32] = { 0 };
	for (unsigned id = first; id < n; id++)
		counts[btf_kind(btf__type_by_id(btf, id)) & 31]++;
	printf("types %u\n", n - first);
	for (int k = 0; k < 32; k++)
		if (counts[k])
			printf("kind %s %u\n", kind_name(k), counts[k]);
	int rc = 0;
	if (load) {
		int err = btf__load_into_kernel(btf);
		if (err) {
			err = errno ? errno : -err;
			if (err == EPERM || err == ENOSYS) {
				printf("load unavailable: %s\n", strerror(err));
				btf__free(btf);
				return 77;
			}
			printf("load refused: %s\n", strerror(err));
			rc = 1;
		} else {
			printf("load ok\n");
		}
	}
	if (dedup && !rc) {
		int err = btf__dedup(btf, NULL);
		unsigned m = btf__type_cnt(btf);
		if (err) {
			printf("dedup failed: %s\n", strerror(-err));
			rc = 1;
		} else {
			printf("dedup %u -> %u\n", n - first, m - first);
			if (m < n)
				rc = 1;
		}
	}
	btf__free(btf);
	btf__free(base);
	return rc;
}
