/* libbpf_base.h: a base BTF through libbpf, and libbpf's dedup over it
 * (libbpf_base.c). */
#ifndef BTFPIPE_EMIT_LIBBPF_BASE_H
#define BTFPIPE_EMIT_LIBBPF_BASE_H

struct btf;
struct diag;

/* libbpf's parse of path (raw BTF or an ELF with .BTF) into *base, the
 * caller's to btf__free(); or -EINVAL with the reason, naming path, in d. */
int libbpf_base__read(const char *path, struct btf **base, struct diag *d);
/* Does base flatten multi-dimensional arrays (btf_raw__flattens())? */
int libbpf_base__flattens(const struct btf *base);
/* libbpf's btf__dedup() of btf, repeated until nothing changes, on a
 * thread with room on its stack: 0 or libbpf's negative errno; *started is
 * 0 when the thread could not be started (then nothing was done). */
int libbpf_base__dedup(struct btf *btf, int *started);

#endif
