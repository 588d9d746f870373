/* abi.h: the calling convention's facts about parameters (abi.c), shared by
 * the FUNC rules and the true signature. */
#ifndef BTFPIPE_EMIT_ABI_H
#define BTFPIPE_EMIT_ABI_H

#include <stddef.h>
#include <stdint.h>

struct graph;
struct graph_func;

/* t through const, volatile and _Atomic; then through typedefs too
 * (bounded: it runs before types__plan() refuses a loop of typedefs). */
uint32_t abi__strip_cv(const struct graph *g, uint32_t t);
uint32_t abi__strip_typedefs(const struct graph *g, uint32_t t);
/* How many integer argument registers (pahole's arch__nr_register_params()),
 * and their DWARF numbers in order (x86_64 and arm64 only; NULL else). */
unsigned abi__arg_reg_count(uint16_t machine);
const uint8_t *abi__regs(uint16_t machine, size_t *n);
/* A parameter's byte size through typedefs and qualifiers (pointers: 8);
 * whether it is a struct or union by value; whether it is floating point. */
uint64_t abi__param_size(const struct graph *g, uint32_t t);
int abi__is_struct_by_value(const struct graph *g, uint32_t t);
int abi__is_float(const struct graph *g, uint32_t t);

/* A true signature's parameters (f's prototype's k-th in keep[k], member[k]):
 * keep[k] 1 when still passed; member[k] the index in g->items of the one
 * field an aggregate is reduced to (written `param__field` with the field's
 * type), else UINT32_MAX. The arrays hold the prototype's item_count. */
void abi__true_sig_params(const struct graph *g, const struct graph_func *f, uint8_t *keep, uint32_t *member);

#endif
