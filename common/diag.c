/* diag.c: error detail recording and the one place messages are printed. */
#include "diag.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

int diag_fail(struct diag *d, int err, const char *fmt, ...)
{
	if (d && !d->set) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
		va_end(ap);
		d->set = 1;
	}
	return -err;
}

void diag_prefix(struct diag *d, const char *fmt, ...)
{
	if (!d || !d->set)
		return;
	char pre[256], old[sizeof(d->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	memcpy(old, d->msg, sizeof(old));
	size_t n = strnlen(pre, sizeof(pre));
	memcpy(d->msg, pre, n);
	snprintf(d->msg + n, sizeof(d->msg) - n, "%.*s", (int)(sizeof(d->msg) - 1 - n), old);
}

int diag_bug_at(struct diag *d, const char *file, int line, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return diag_fail(d, ENOTRECOVERABLE, "bug at %s:%d: %s", file, line, what);
}

int diag_exit_code(int err)
{
	switch (-err) {
	case 0:
		return EXIT_OK;
	case EINVAL: case EBADMSG: case EPROTO: case ENODATA: case EOVERFLOW:
	case ENOEXEC: case E2BIG: case ERANGE: case ENOTSUP:
		return EXIT_BAD_INPUT;
	case ENOSYS:
		return EXIT_NOT_IMPL;
	case ENOMEM: case ENOTRECOVERABLE:
		return EXIT_INTERNAL;
	default:
		return EXIT_IO;
	}
}

static void vmsg(const char *where, const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "btfpipe: %s: %s: ", where, level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void diag_error(const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(where, "error", fmt, ap);
	va_end(ap);
}

void diag_warn(const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(where, "warning", fmt, ap);
	va_end(ap);
}

int diag_lib_errno(const char *msg, int fallback)
{
	int e = errno;
	if (msg && !strcmp(msg, "out of memory"))
		return ENOMEM;
	/* libdw reports an allocation that failed inside its tsearch() trees
	 * as "invalid DWARF"; errno then says ENOMEM. Trusted under a memory
	 * limit only: there a failed sbrk() that malloc recovered from with
	 * mmap() can also leave ENOMEM behind, but without a limit neither
	 * fails, and bad DWARF must not read as a full memory. */
	struct rlimit as, data;
	if (e == ENOMEM && !getrlimit(RLIMIT_AS, &as) && !getrlimit(RLIMIT_DATA, &data) &&
	    (as.rlim_cur != RLIM_INFINITY || data.rlim_cur != RLIM_INFINITY))
		return ENOMEM;
	return fallback;
}

int diag_report(const struct diag *d, const char *where, int err)
{
	/* Details usually begin with the file they are about; print that file
	 * once, in the "btfpipe: FILE: error: WHAT" position. */
	const char *detail = d && d->set ? d->msg : NULL;
	if (d && d->file)
		where = d->file;
	size_t n = strlen(where);
	if (detail && !strncmp(detail, where, n) && detail[n] == ':' && detail[n + 1] == ' ')
		detail += n + 2;
	if (err == -ENOMEM)
		diag_error(where, "out of memory%s%s%s%s", d && d->phase ? " in phase " : "",
			   d && d->phase ? d->phase : "", detail ? ": " : "", detail ? detail : "");
	else if (err == -E2BIG && !detail) /* strerror: "Argument list too long" */
		diag_error(where, "too big: past a 32-bit count or 4 GiB size of the format%s%s",
			   d && d->phase ? " in phase " : "", d && d->phase ? d->phase : "");
	else
		diag_error(where, "%s", detail ? detail : strerror(-err));
	return diag_exit_code(err);
}
