/* diag.h: how btfpipe reports errors, and its exit codes.
 *
 * Inside the stages, functions return a negative errno. Where the caller
 * cannot tell the user *where* things went wrong from the errno alone, the
 * failing function first records the detail in a struct diag (the file, the
 * CU, the offset, what is wrong); the stage's main() prints it once, in the
 * compiler style "btfpipe: FILE: error: WHAT", and maps the errno to an exit
 * code. Nothing below main() prints an error by itself.
 *
 * A broken invariant of btfpipe's own making (an id that is not where the
 * plan put it, BTF we wrote that does not read back) is not bad input: it is
 * reported through VERIFY()/DIAG_BUG() below, with the source file and line,
 * as -ENOTRECOVERABLE, which every stage exits with 4. It still returns like
 * any error, so outputs are dropped and threads joined on the way out.
 */
#ifndef BTFPIPE_DIAG_H
#define BTFPIPE_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

/* Exit codes, shared by every stage and the btfpipe driver (documented in
 * docs/debugging.md, "Messages and exit codes", and each man page). */
enum {
	EXIT_OK = 0,
	EXIT_BAD_INPUT = 1,	/* input is malformed, unsupported or refused */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_IO = 3,		/* cannot read or write a file */
	EXIT_INTERNAL = 4,	/* out of memory, or a bug */
	EXIT_NOT_IMPL = 5,	/* the requested stage or feature does not exist yet */
};

/* The first error's detail; later ones are dropped so the root cause shows.
 * phase: the pass the stage is in (diag_phase()), named when memory runs
 * out, where the detail of one allocation would say nothing useful. */
struct diag {
	char msg[1024];
	int set;
	const char *phase;
	/* The file the stage is working on (diag_file()): an error's message
	 * names it, as does a fatal exit (fatal.h), before the default the
	 * caller of diag_report() gives. A string that outlives d. */
	const char *file;
};

/* Record the detail of an error (printf format) unless one is recorded. Returns
 * -err, so a caller can write `return diag_fail(d, EINVAL, "...")`. d may be NULL. */
int diag_fail(struct diag *d, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A bug: record "bug at FILE:LINE: WHAT" in d (printf format) and return
 * -ENOTRECOVERABLE (exit 4). Use through the macros. */
int diag_bug_at(struct diag *d, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define DIAG_BUG(d, ...) diag_bug_at((d), __FILE__, __LINE__, __VA_ARGS__)
/* VERIFY(d, COND, fmt, ...): 0 when COND holds, else DIAG_BUG()'s result.
 * `if ((err = VERIFY(d, id == want, "node %zu got id %d", i, id))) return err;` */
#define VERIFY(d, cond, ...) \
	(__builtin_expect(!!(cond), 1) ? 0 : diag_bug_at((d), __FILE__, __LINE__, __VA_ARGS__))

/* A name from the input inside a message: at most DIAG_CLIP_MAX bytes of it,
 * then "..." when cut. Format "%.*s%s", arguments DIAG_CLIP(name). A message
 * holds 1024 bytes, and one hostile name (16 MiB) would leave no room for
 * what is wrong with it. */
#define DIAG_CLIP_MAX 160
#define DIAG_CLIP(s) (int)strnlen((s), DIAG_CLIP_MAX), (s), (strnlen((s), DIAG_CLIP_MAX + 1) > DIAG_CLIP_MAX ? "..." : "")

/* Put context in front of a recorded detail ("CU 0x1234: " + detail). */
void diag_prefix(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The stage enters pass `name` (a string that outlives d): diag_report()
 * names it when memory runs out. Set from the thread that runs main(). */
static inline void diag_phase(struct diag *d, const char *name)
{
	d->phase = name;
}

/* The stage works on file path now (a string that outlives d). Set from
 * the thread that runs main(). */
static inline void diag_file(struct diag *d, const char *path)
{
	d->file = path;
}

/* Take from's detail into to (a worker's diag into the stage's), keeping
 * to's phase, and its file unless from names one. */
static inline void diag_take(struct diag *to, const struct diag *from)
{
	const char *phase = to->phase, *file = from->file ? from->file : to->file;
	*to = *from;
	to->file = file;
	to->phase = phase;
}

/* The errno for a failure of libelf, libdw or libdwfl whose message is msg,
 * called right after the failing call: ENOMEM when the library ran out of
 * memory (all three say "out of memory"; libdw sometimes says "invalid
 * DWARF" and leaves errno ENOMEM, trusted under a memory limit), else
 * fallback (the input is bad, or a write failed). */
int diag_lib_errno(const char *msg, int fallback);

/* Print "btfpipe: WHERE: error: detail" (or the errno text when no detail was
 * recorded) and return the exit code for -err. WHERE is d's file when it
 * names one (diag_file()), else where. -ENOMEM reads "out of memory
 * in phase P: detail", so that a build host's log says which pass needed
 * more than the limit allowed. */
int diag_report(const struct diag *d, const char *where, int err);

/* Compiler-style messages that do not go through a struct diag (usage, warnings). */
void diag_error(const char *where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_warn(const char *where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The exit code for a negative errno. */
int diag_exit_code(int err);

#endif
