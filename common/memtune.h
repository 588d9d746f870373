/* memtune.h: the stages run glibc's malloc in huge pages.
 *
 * Why: on the hosts we run on (a paravirtualized guest with page-table
 * isolation) a fresh 4 KiB page costs about 8 us to fault in. On the cloud
 * vmlinux the three stages faulted in some 110,000 of them, most in
 * malloc's heaps; a small module's stages about 5,000, which was a third
 * of their time. glibc can grow its heaps 64 MiB at a time and ask for
 * transparent huge pages over them (its glibc.malloc.hugetlb and
 * glibc.malloc.top_pad tunables). Measured 2026-12-01: the vmlinux's three
 * stages at -j2 went from 3.5 to 2.5 s, sch_fq.ko's from 62 to 36 ms.
 * A fixed mmap_threshold of 64 MiB keeps the arrays below it in those
 * heaps, where freed memory is used again, instead of a fresh mapping,
 * zeroed anew, per allocation while glibc's own threshold adapts: the
 * vmlinux's merge at -j2 0.89 -> 0.74 s with 16 MiB, peak RSS unchanged;
 * 0.555 -> 0.531 s more with 64 MiB (14 alternating runs; 32 MiB gave
 * nothing), peak RSS +4 MB at -j2 and the same at -j1. 256 MiB was no
 * faster at -j2 and slower at -j1. Checked on Debian 12's glibc 2.36 (a
 * 40 MiB malloc comes from the heap); a glibc that caps the threshold
 * lower ignores ours and keeps its adaptive one, which costs speed only.
 *
 * The tunables are read only when a process starts. pipeline.sh exports
 * them, so its stages start with them; a stage started without them starts
 * itself again, once, with them (3 ms: less than it saved on every module
 * measured, about even on a 1.6 MB program of 120 small units).
 * The output bytes cannot depend on it: only where malloc's memory comes
 * from changes.
 */
#ifndef BTFPIPE_MEMTUNE_H
#define BTFPIPE_MEMTUNE_H

/* What is put in front of $GLIBC_TUNABLES (pipeline.sh has the same). */
#define MEMTUNE_TUNABLES "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864:glibc.malloc.mmap_threshold=67108864"

/* Called first in main(), before anything is printed, any thread started
 * or any file opened: execs /proc/self/exe with argv and MEMTUNE_TUNABLES put
 * in front of $GLIBC_TUNABLES. Returns (doing nothing) when they are there
 * already, when $BTFPIPE_MEMTUNE is "0", when this process is the second
 * start (whatever glibc made of the tunables), in a sanitizer build (its
 * allocator is not glibc's), when started through the loader ("ld.so
 * ./stage": /proc/self/exe is then the loader), or when the exec fails: the
 * stage then runs as it is, only slower. */
void memtune__reexec(char **argv);

/* 1 when this process started with MEMTUNE_TUNABLES (for --stats:
 * "memtune 1"), else 0; always 0 in a sanitizer build. */
int memtune__active(void);

#endif
