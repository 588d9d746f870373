/* diag_check.c (t0110): common/diag.c's reporting of bugs and the exit code
 * of every errno class. Prints "ok WHAT" or "FAIL WHAT: detail" per check. */
#include "../../common/diag.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int fails;

static void expect(int cond, const char *what, const char *detail)
{
	printf("%s %s%s%s\n", cond ? "ok" : "FAIL", what, cond ? "" : ": ", cond ? "" : detail);
	fails += !cond;
}

/* One VERIFY(); the message must name its line. */
static const int verify_line = __LINE__ + 1;
static int broken(struct diag *d, int x) { return VERIFY(d, x == 1, "x is %d, planned 1", x); }

int main(void)
{
	struct diag d = { 0 };
	char want[128];
	expect(broken(&d, 1) == 0 && !d.set, "VERIFY of a true condition is 0 and records nothing", d.msg);
	int err = broken(&d, 2);
	snprintf(want, sizeof(want), "bug at tests/tools/diag_check.c:%d: x is 2, planned 1", verify_line);
	expect(err == -ENOTRECOVERABLE, "VERIFY of a false condition is -ENOTRECOVERABLE", strerror(-err));
	expect(d.set && !strcmp(d.msg, want), "its detail names the file and line", d.msg);
	expect(diag_exit_code(err) == EXIT_INTERNAL, "a bug exits 4", "");
	expect(diag_exit_code(-ENOMEM) == EXIT_INTERNAL, "out of memory exits 4", "");
	expect(diag_exit_code(-EPROTO) == EXIT_BAD_INPUT, "a foreign file (EPROTO) exits 1", "");
	expect(diag_exit_code(-EBADMSG) == EXIT_BAD_INPUT, "a malformed file (EBADMSG) exits 1", "");
	expect(diag_exit_code(-ENOSPC) == EXIT_IO, "a full disk exits 3", "");
	struct diag first = { 0 };
	diag_fail(&first, EINVAL, "the first error");
	DIAG_BUG(&first, "a later bug");
	expect(!strcmp(first.msg, "the first error"), "the first detail recorded stays", first.msg);
	return fails ? 1 : 0;
}
