/* type_encode.h: the planned types written as BTF (type_encode.c). */
#ifndef BTFPIPE_EMIT_TYPE_ENCODE_H
#define BTFPIPE_EMIT_TYPE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "type_map.h"

struct bw;
struct diag;
struct emit_opts;
struct graph;

/* Pass 5 (encode), in this order (encode.c): nodes [a, b) as BTF, into a BTF or a
 * piece whose ids start after type_encode__base(a, b) (planned ids, checked);
 * the extra types and the index type, after type_encode__extras_base(); and the
 * btf_decl_tag annotations of the structs, unions, their members and the
 * typedefs among nodes [a, b) (functions, parameters and variables get
 * theirs where they are added). */
uint32_t type_encode__base(const struct graph *g, const struct type_map *map, size_t a, size_t b);
int type_encode__nodes(struct bw *btf, const struct graph *g, const struct type_map *map,
		 const struct emit_opts *o, size_t a, size_t b, struct diag *d);
uint32_t type_encode__extras_base(const struct type_map *map);
int type_encode__extras(struct bw *btf, const struct graph *g, const struct type_map *map,
			struct diag *d);
int type_encode__tags(struct bw *btf, const struct graph *g, const struct type_map *map,
		      size_t a, size_t b, struct diag *d);

#endif
