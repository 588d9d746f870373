/* memtune.h: the stages run glibc's malloc in huge pages.
 *
 * Why: where a page fault is dear (a virtual machine with page-table
 * isolation), most of a stage's page faults are in malloc's heaps, and a
 * small module's stages spend a large part of their time on them. glibc
 * can grow its heaps 64 MiB at a time and ask for transparent huge pages
 * over them (its glibc.malloc.hugetlb and glibc.malloc.top_pad tunables).
 * A fixed mmap_threshold of 64 MiB keeps the arrays below it in those
 * heaps, where freed memory is used again, instead of a fresh mapping,
 * zeroed anew, per allocation while glibc's own threshold adapts. A glibc
 * that caps the threshold lower ignores ours and keeps its adaptive one,
 * which costs speed only. What each of these saved, and the sizes tried:
 * bench/README.md, "malloc in huge pages".
 *
 * The tunables are read only when a process starts. pipeline.sh exports
 * them, so its stages start with them; a stage started without them starts
 * itself again, once, with them (a few ms).
 * The output bytes cannot depend on it: only where malloc's memory comes
 * from changes.
 *
 * Not under a memory limit (a finite RLIMIT_AS or RLIMIT_DATA, `ulimit -v`
 * or `-d`): a 64 MiB top pad asks for more address space at once than a
 * small limit has, and glibc's start-up of a static program, whose first
 * malloc then fails, faults before main() can say anything. A limited
 * process wants its address space for data anyway.
 */
#ifndef BTFPIPE_MEMTUNE_H
#define BTFPIPE_MEMTUNE_H

/* What is put in front of $GLIBC_TUNABLES (pipeline.sh has the same). */
#define MEMTUNE_TUNABLES "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864:glibc.malloc.mmap_threshold=67108864"

/* Called first in main(), before anything is printed, any thread started
 * or any file opened: execs /proc/self/exe with argv and MEMTUNE_TUNABLES put
 * in front of $GLIBC_TUNABLES. Returns (doing nothing) when they are there
 * already, when $BTFPIPE_MEMTUNE is "0", when this process is the second
 * start (whatever glibc made of the tunables), under a memory limit
 * (memtune__limited()), in a sanitizer build (its
 * allocator is not glibc's), when started through the loader ("ld.so
 * ./stage": /proc/self/exe is then the loader), or when the exec fails: the
 * stage then runs as it is, only slower. */
void memtune__reexec(char **argv);

/* 1 when RLIMIT_AS or RLIMIT_DATA is finite: then neither a stage nor a
 * driver puts MEMTUNE_TUNABLES in an environment. */
int memtune__limited(void);

/* 1 when this process started with MEMTUNE_TUNABLES (for --stats:
 * "memtune 1"), else 0; always 0 in a sanitizer build. */
int memtune__active(void);

#endif
