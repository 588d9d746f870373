// SPDX-License-Identifier: GPL-2.0
/* probe.bpf.c: a BPF program that needs the guest kernel's vmlinux BTF, as
 * btfpipe wrote it (tests/kbuild/boot.sh). vmlinux.h is bpftool's C dump of
 * that BTF, so clang compiling this already reads our types back. At load:
 *  - fentry: the kernel verifier types the arguments of do_sys_openat2()
 *    from the vmlinux BTF, and checks the dereference of how->flags against
 *    our struct open_how;
 *  - CO-RE: libbpf relocates the field accesses (vmlinux.h marks every
 *    struct preserve_access_index) against /sys/kernel/btf/vmlinux. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

/* What the program saw, for the loader. An explicit map, not global
 * variables: libbpf decides whether the kernel has global data with a
 * socket filter probe, and the test kernels are built without networking. */
struct seen {
	__u32 hits;
	__u32 pid_field_exists;
	__u64 last_flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct seen);
} seen_map SEC(".maps");

SEC("fentry/do_sys_openat2")
int BPF_PROG(on_openat2, int dfd, const char *filename, struct open_how *how)
{
	__u32 zero = 0;
	struct seen *s = bpf_map_lookup_elem(&seen_map, &zero);
	if (!s)
		return 0;
	s->hits++;
	s->last_flags = how->flags;
	s->pid_field_exists = bpf_core_field_exists(struct task_struct, pid);
	return 0;
}
