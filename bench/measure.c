/* measure: run a command as `/usr/bin/time -f '%e %U %S %M'` would, to the
 * microsecond.
 *
 *   measure OUT CMD [ARG...]
 *
 * writes one line "WALL USER SYS MAXRSS_KIB" (seconds, seconds, seconds,
 * KiB) to OUT. CMD keeps stdin, stdout and stderr; the exit status is
 * CMD's (127 when it cannot start, 128 + N when signal N killed it).
 *
 * Why not time(1): it prints hundredths of a second, and a small module's
 * stages take a few milliseconds, so the bench's module ratios were at its
 * rounding. Why C: a child's peak RSS starts at its parent's (Linux records
 * the old address space's high-water mark at exec), so the parent must be
 * as small as time(1) is; an interpreter put 13 MiB under every process.
 * The clock runs from just before fork() to wait4()'s return, whose
 * resource usage covers every descendant the child waited for, as time(1)
 * reports it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: measure OUT CMD [ARG...]\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "measure: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "measure: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "measure: wait4: %s\n", strerror(errno));
			return 127;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	FILE *f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%.6f %.6f %.6f %ld\n", wall, tv_s(ru.ru_utime), tv_s(ru.ru_stime), ru.ru_maxrss) < 0 ||
	    fclose(f) != 0) {
		fprintf(stderr, "measure: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
