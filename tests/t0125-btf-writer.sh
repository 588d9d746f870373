#!/usr/bin/env bash
# t0125-btf-writer: btf-emit writes its BTF with its own writer
# (stages/btf-emit/btf_writer.c), which must give what libbpf's btf__add_*()
# give: the same return value for every call, valid or refused, and the same
# raw bytes (types, string offsets, header). bw-check makes 24 seeded runs of
# 300 to 3300 mixed calls on both. The whole-program check, btf-emit's BTF
# before and after the writer, was made by hand on the cloud vmlinux and 542
# test graphs (see the commit).
. "$(dirname "$0")/lib.sh"

CHECK="$T_BIN/tools/bw-check"
if [ ! -x "$CHECK" ]; then
	not_ok "bw-check is built" "$CHECK missing"
	exit 0
fi
out=$("$CHECK" 2>&1)
rc=$?
n=$(echo "$out" | grep -c '^same ')
if [ $rc -eq 0 ] && [ "$n" -eq 24 ] && ! echo "$out" | grep -q DIFFERENT; then
	ok "btf_writer == libbpf btf__add_*() on $n seeded runs (return values and raw bytes)"
else
	not_ok "btf_writer == libbpf btf__add_*()" "exit $rc: $(echo "$out" | grep -v '^same ' | head -5)"
fi
