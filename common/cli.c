/* cli.c: see cli.h. */
#include "cli.h"
#include "diag.h"

#include <stdlib.h>

int cli_parse_jobs(const char *tool, const char *arg, unsigned *jobs)
{
	char *end;
	long n = strtol(arg, &end, 10);
	if (*arg == 0 || *end || n < 1 || n > 1024) {
		diag_error(tool, "-j wants a number from 1 to 1024, not '%s'", arg);
		return -1;
	}
	*jobs = (unsigned)n;
	return 0;
}
