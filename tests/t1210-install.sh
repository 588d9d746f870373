#!/usr/bin/env bash
# t1210-install: `make install PREFIX=DIR` installs a pipeline that runs on
# its own, and man pages that render.
. "$(dirname "$0")/lib.sh"

p="$T_OUT/prefix"
# The variant's own binaries: bin-asan/ is installed with SANITIZE=1.
san=""
[ "${T_VARIANT:-bin}" = bin-asan ] && san="SANITIZE=1"
# shellcheck disable=SC2086
check "make install PREFIX=..." make -s -C "$T_TOP" $san install PREFIX="$p"
for f in dwarf-extract dedup-merge btf-emit btfpipe-pahole pipeline.sh btfpipe-archive; do
	[ -x "$p/bin/$f" ] && ok "installed: bin/$f" || not_ok "installed: bin/$f"
done
for m in dwarf-extract dedup-merge btf-emit btfpipe-pahole pipeline.sh btfpipe-archive; do
	if out=$(MANWIDTH=80 man -l "$p/share/man/man1/$m.1" 2>&1 >/dev/null) && [ -z "$out" ] &&
		MANWIDTH=80 man -l "$p/share/man/man1/$m.1" 2>/dev/null | grep -q '^NAME'; then
		ok "man -l renders $m.1"
	else
		not_ok "man -l renders $m.1" "$out"
	fi
done
build_fixture gcc -O2 5 "$T_OUT" sample || not_ok "build sample"
# Away from the checkout: the installed script finds the installed stages.
check "the installed pipeline runs" env -u BTFPIPE_BIN "$p/bin/pipeline.sh" -o "$T_OUT/s.btf" "$T_OUT/sample"
check "its BTF parses" "$T_BIN/tools/btfcheck" "$T_OUT/s.btf"
for f in dwarf-extract dedup-merge btf-emit; do
	check "$f --version" "$p/bin/$f" --version
done
# The diff tool, installed, on the installed pipeline's output.
env -u BTFPIPE_BIN "$p/bin/pipeline.sh" -o "$T_OUT/s2.btf" "$T_OUT/sample"
check "the installed btfpipe-diff: equal BTF is exit 0" env -u BTFPIPE_BIN "$p/bin/btfpipe-diff" "$T_OUT/s.btf" "$T_OUT/s2.btf"
# The archive front, installed, finds the installed pipeline.
check "the installed btfpipe-archive runs" env -u BTFPIPE_BIN "$p/bin/btfpipe-archive" --distro d --release r \
	-o "$T_OUT/arch" "$T_OUT/sample"
env -u BTFPIPE_BIN "$p/bin/pipeline.sh" --btf_gen_floats --skip_encoding_btf_inconsistent_proto \
	--btf_gen_optimized --btf_encode_detached="$T_OUT/arch.btf" "$T_OUT/sample"
check_same "... and writes the installed pipeline's BTF (BTFHub's flags)" "$T_OUT/arch/d/r/x86_64/sample.btf" "$T_OUT/arch.btf"
# The installed pahole front finds the installed stages beside it.
check "the installed btfpipe-pahole runs" env -u BTFPIPE_BIN "$p/bin/btfpipe-pahole" --btf_gen_floats \
	--skip_encoding_btf_inconsistent_proto --btf_gen_optimized --btf_encode_detached="$T_OUT/drv.btf" "$T_OUT/sample"
check_same "... and writes the installed pipeline's BTF" "$T_OUT/arch.btf" "$T_OUT/drv.btf"
test_done
