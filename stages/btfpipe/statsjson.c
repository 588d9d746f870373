/* statsjson.c: each stage prints its --stats=json as one line on stderr,
 * {"tool":"NAME",...}; a run of the three is one object keyed by the
 * stage, {"dwarf-extract":{...},"dedup-merge":{...},"btf-emit":{...}}, so
 * that a script reads one value. The stage's other lines (warnings) are
 * passed on as they were.
 */
#include "statsjson.h"
#include "../../common/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int append(struct statsjson *s, const char *p, size_t n)
{
	if (vec_grow(&s->text, &s->cap, s->len + n + 1))
		return -ENOMEM;
	memcpy(s->text + s->len, p, n);
	s->len += n;
	s->text[s->len] = 0;
	return 0;
}

int statsjson_take(struct statsjson *s, const char *path, FILE *err)
{
	static const char head[] = "{\"tool\":\"";
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	while (!rc && (n = getline(&line, &cap, f)) > 0) {
		const char *name = line + sizeof(head) - 1, *q;
		if (strncmp(line, head, sizeof(head) - 1) || !(q = strchr(name, '"')) || q[1] != ',') {
			fwrite(line, 1, (size_t)n, err);
			continue;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		/* {"tool":"NAME",REST} -> "NAME":{REST} */
		rc = append(s, s->len ? "," : "{", 1);
		if (!rc)
			rc = append(s, name - 1, (size_t)(q + 1 - (name - 1)));
		if (!rc)
			rc = append(s, ":{", 2);
		if (!rc)
			rc = append(s, q + 2, (size_t)(line + n - (q + 2)));
	}
	free(line);
	fclose(f);
	unlink(path);
	return rc;
}

int statsjson_print(struct statsjson *s, FILE *out)
{
	int rc = 0;
	if (s->text && (fputs(s->text, out) == EOF || fputs("}\n", out) == EOF || fflush(out)))
		rc = -errno;
	free(s->text);
	s->text = NULL;
	s->len = s->cap = 0;
	return rc;
}
