// SPDX-License-Identifier: GPL-2.0
/* loader.c: loads probe.bpf.c in the guest (static, from its skeleton),
 * makes it run once, and says what happened on one line that
 * tests/kbuild/boot.sh reads: "BPF-OK ..." or "BPF-FAIL why". */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "probe.skel.h"

static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stdout, fmt, ap);
}

int main(void)
{
	libbpf_set_print(print);
	struct probe *skel = probe__open_and_load();
	if (!skel) {
		printf("BPF-FAIL open_and_load: %s\n", strerror(errno));
		return 1;
	}
	int err = probe__attach(skel);
	if (err) {
		printf("BPF-FAIL attach: %s\n", strerror(-err));
		return 1;
	}
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	if (fd >= 0)
		close(fd);
	struct { __u32 hits, pid_field_exists; __u64 last_flags; } seen = { 0 };
	__u32 zero = 0;
	if (bpf_map__lookup_elem(skel->maps.seen_map, &zero, sizeof(zero), &seen, sizeof(seen), 0)) {
		printf("BPF-FAIL cannot read the program's map: %s\n", strerror(errno));
		return 1;
	}
	if (!seen.hits) {
		printf("BPF-FAIL the fentry program did not run\n");
		return 1;
	}
	if (!seen.pid_field_exists) {
		printf("BPF-FAIL CO-RE found no task_struct.pid in the kernel's BTF\n");
		return 1;
	}
	printf("BPF-OK fentry/do_sys_openat2 ran %u times, last flags 0x%llx, task_struct.pid relocated\n",
	       seen.hits, (unsigned long long)seen.last_flags);
	probe__destroy(skel);
	return 0;
}
