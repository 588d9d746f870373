#!/usr/bin/env bash
# t0125-btf-writer: btf-emit writes its BTF with its own writer
# (stages/btf-emit/btf_writer.c), which must give what libbpf's btf__add_*()
# give: the same return value for every call, valid or refused, and the same
# raw bytes (types, string offsets, header). bw-check makes 24 seeded runs of
# 300 to 3300 mixed calls on both, then meets libbpf's 2^31-1 type limit
# (the writer says -E2BIG there, libbpf -ENOMEM). The whole-program check, btf-emit's BTF
# before and after the writer, was made by hand on the cloud vmlinux and 542
# test graphs (see the commit).
. "$(dirname "$0")/lib.sh"

check_tool bw-check 25 'same ' DIFFERENT 'btf_writer == libbpf btf__add_*() on 24 seeded runs and the type limit (return values and raw bytes)'
test_done
