/* fatal.c: see fatal.h. */
#include "fatal.h"
#include "diag.h"
#include "memtune.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Set once by fatal__init() from main(), read by the wrappers below: the
 * one place they can learn where the stage was. */
static const char *const *fatal_where;
static const struct diag *fatal_diag;

void fatal__init(const char *const *where, const struct diag *d)
{
	fatal_where = where;
	fatal_diag = d;
}

/* Only the first thread to fail speaks: two workers whose allocations fail
 * at once (libdw's hash tables at -j8) wrote their lines into each other.
 * The others wait here for its _exit(). */
static void one_speaker(void)
{
	static atomic_flag taken = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&taken))
		for (;;)
			pause();
}

/* The file the stage is working on: its diag's, else *where, else none. */
static const char *fatal_file(void)
{
	if (fatal_diag && fatal_diag->file)
		return fatal_diag->file;
	return fatal_where && *fatal_where ? *fatal_where : "btfpipe";
}

/* "btfpipe: WHERE: error: out of memory in phase P: " + the parts of what,
 * in one write(2) (no stdio: there may be no memory for it), then exit 4. */
static __attribute__((noreturn)) void oom_exit(const char *const *what, size_t n)
{
	one_speaker();
	const char *head[] = { "btfpipe: ", fatal_file(),
			       ": error: out of memory", fatal_diag && fatal_diag->phase ? " in phase " : "",
			       fatal_diag && fatal_diag->phase ? fatal_diag->phase : "", ": " };
	char line[1024];
	size_t len = 0;
	const size_t nh = sizeof(head) / sizeof(head[0]);
	for (size_t i = 0; i < nh + n; i++) {
		const char *s = i < nh ? head[i] : what[i - nh];
		if (!s)
			continue;
		size_t k = strnlen(s, sizeof(line) - 1 - len);
		memcpy(line + len, s, k);
		len += k;
	}
	line[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
	_exit(EXIT_INTERNAL);
}

/* --wrap=__assert_fail: a library's failed assert() comes here. Under a
 * memory limit it is libdw failing an allocation it has no error path for
 * (its hash tables): said as out of memory. glibc's own assert message
 * needs malloc and prints "Unexpected error." without it. Without a limit
 * it is the library's bug, reported in glibc's words: message, abort, core.
 * (Said here rather than through __real___assert_fail, so that a program
 * linked without the wrap, as the fuzz targets are, still links.) */
void __wrap___assert_fail(const char *expr, const char *file, unsigned line, const char *func)
	__attribute__((noreturn));
void __wrap___assert_fail(const char *expr, const char *file, unsigned line, const char *func)
{
	if (memtune__limited()) {
		const char *what[] = { "a library's assertion failed (", func, ": ", expr,
				       "), as libdw's do when an allocation fails" };
		oom_exit(what, sizeof(what) / sizeof(what[0]));
	}
	one_speaker();
	fprintf(stderr, "%s: %s:%u: %s: Assertion `%s' failed.\n", program_invocation_short_name, file, line, func,
		expr);
	abort();
}

/* --wrap=error: libdw's and libelf's calls of error() come here. A fatal
 * one with ENOMEM is libdw giving up on an allocation (__libdw_oom()); any
 * other fatal one is still not a message of ours: said in our form, exit 4
 * (internal), never exit(1), which would read as bad input. A non-fatal one
 * is a warning. */
void __wrap_error(int status, int errnum, const char *fmt, ...);
void __wrap_error(int status, int errnum, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	const char *where = fatal_file();
	if (status && errnum == ENOMEM) {
		const char *what[] = { msg, " gave up on an allocation" };
		oom_exit(what, 2);
	}
	if (status)
		one_speaker();
	fprintf(stderr, "btfpipe: %s: %s: %s%s%s%s\n", where, status ? "error" : "warning",
		status ? "a library gave up: " : "", msg, errnum ? ": " : "", errnum ? strerror(errnum) : "");
	if (status) {
		fflush(stderr);
		_exit(EXIT_INTERNAL);
	}
}

/* --wrap=Dwarf_Abbrev_Hash_init: libdw (elfutils 0.188) makes each CU's
 * abbreviation table with it when it first meets the CU and ignores the
 * result. When its malloc fails and the next allocations do not (as under
 * ulimit -v, where a small block can still be had), the CU lives on with no
 * table, and the first DIE read through it dereferences NULL: SIGSEGV in
 * Dwarf_Abbrev_Hash_find(), or the assert in its resize. The only way out
 * that libdw leaves is this one: out of memory, here. (Weak: a program
 * linked without the wrap, as the fuzz targets and the sanitizer builds
 * against the shared libdw are, has no such reference to resolve.) */
int __real_Dwarf_Abbrev_Hash_init(void *htab, size_t init_size) __attribute__((weak));
int __wrap_Dwarf_Abbrev_Hash_init(void *htab, size_t init_size);
int __wrap_Dwarf_Abbrev_Hash_init(void *htab, size_t init_size)
{
	if (__real_Dwarf_Abbrev_Hash_init && !__real_Dwarf_Abbrev_Hash_init(htab, init_size))
		return 0;
	const char *what[] = { "libdw could not make a CU's abbreviation table" };
	oom_exit(what, 1);
}
