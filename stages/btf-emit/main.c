/* btf-emit: not implemented yet (see the project's issues). It says so and
 * fails, rather than pretending to work. */
#include "../../common/diag.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("btf-emit: not implemented yet\n");
		return EXIT_OK;
	}
	diag_error("btf-emit", "not implemented yet");
	return EXIT_NOT_IMPL;
}
