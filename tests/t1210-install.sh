#!/usr/bin/env bash
# t1210-install: `make install DESTDIR=D PREFIX=/usr` lays out exactly what
# the Debian package ships (the Makefile's install target), and it runs from
# D as it is: the driver finds the stages beside itself, pipeline.sh the
# driver beside itself (directly and through a link elsewhere), btfpipe-diff
# the stages and btfcmp.py, btfpipe-archive the driver; and no installed
# file names a file that was not installed (tests/deb/cites.sh: links, man
# pages, each program's --help). tests/deb/run.sh (make check-deb) does the
# same on the package itself.
. "$(dirname "$0")/lib.sh"
. "$T_TOP/tests/deb/cites.sh"

D="$T_OUT/dest"
P="$D/usr"
# The variant's own binaries: bin-asan/ is installed with SANITIZE=1.
san=""
[ "${T_VARIANT:-bin}" = bin-asan ] && san="SANITIZE=1"
# shellcheck disable=SC2086
check "make install DESTDIR=... PREFIX=/usr" make -s -C "$T_TOP" $san install DESTDIR="$D" PREFIX=/usr

# Exactly the layout: nothing missing, nothing more (no test helper).
(cd "$D" && find . ! -type d | sed 's/^\.//' | LC_ALL=C sort) >"$T_OUT/files"
install_layout "$T_TOP" "" | LC_ALL=C sort >"$T_OUT/files.want"
if cmp -s "$T_OUT/files" "$T_OUT/files.want"; then ok "exactly the install layout ($(wc -l <"$T_OUT/files") files)"; else
	not_ok "exactly the install layout" "$(diff "$T_OUT/files.want" "$T_OUT/files" | grep '^[<>]' | sed 's/^</missing:/; s/^>/extra:/')"; fi
for l in "bin/btfpipe-pahole btfpipe" "lib/btfpipe/btfpipe ../../bin/btfpipe"; do
	t=$(readlink "$P/${l%% *}")
	[ "$t" = "${l#* }" ] && ok "usr/${l%% *} is a link to ${l#* }" || not_ok "usr/${l%% *} is a link to ${l#* }" "it is '$t'"
done
for f in dwarf-extract dedup-merge btf-emit btfpipe btfpipe-diff btfpipe-archive; do
	[ -x "$P/bin/$f" ] && [ ! -L "$P/bin/$f" ] && ok "usr/bin/$f: a program" || not_ok "usr/bin/$f: a program"
done
[ -x "$P/lib/btfpipe/pipeline.sh" ] && ok "usr/lib/btfpipe/pipeline.sh: executable" || not_ok "usr/lib/btfpipe/pipeline.sh: executable"

# What is installed names only what is installed.
check_cites "$D" /usr "$T_OUT/files"

# Away from the checkout (no BTFPIPE_BIN): each finds what it needs in D.
build_fixture gcc -O2 5 "$T_OUT" sample || not_ok "build sample"
E=(env -u BTFPIPE_BIN -u BTFPIPE_CACHE_DIR)
check "the installed btfpipe runs (the stages beside it)" "${E[@]}" "$P/bin/btfpipe" -o "$T_OUT/s.btf" "$T_OUT/sample"
check "its BTF parses" "$T_BIN/tools/btfcheck" "$T_OUT/s.btf"
for f in dwarf-extract dedup-merge btf-emit; do
	check "$f --version" "$P/bin/$f" --version
done
ln -sfn "$P/lib/btfpipe/pipeline.sh" "$T_OUT/pahole-link"
hub=(--btf_gen_floats --skip_encoding_btf_inconsistent_proto --btf_gen_optimized)
check "the installed btfpipe-pahole runs" "${E[@]}" "$P/bin/btfpipe-pahole" "${hub[@]}" \
	--btf_encode_detached="$T_OUT/drv.btf" "$T_OUT/sample"
check "usr/lib/btfpipe/pipeline.sh runs (the driver beside it)" "${E[@]}" "$P/lib/btfpipe/pipeline.sh" "${hub[@]}" \
	--btf_encode_detached="$T_OUT/pl.btf" "$T_OUT/sample"
check_same "... the same BTF as btfpipe-pahole" "$T_OUT/drv.btf" "$T_OUT/pl.btf"
check "a link to pipeline.sh elsewhere runs" "${E[@]}" "$T_OUT/pahole-link" "${hub[@]}" \
	--btf_encode_detached="$T_OUT/link.btf" "$T_OUT/sample"
check_same "... the same BTF" "$T_OUT/drv.btf" "$T_OUT/link.btf"
for p in "$P/bin/btfpipe-pahole" "$P/lib/btfpipe/pipeline.sh" "$T_OUT/pahole-link"; do
	v=$("${E[@]}" "$p" --version 2>&1)
	if [[ $v =~ ^v1\.[0-9]+$ ]]; then ok "${p#"$T_OUT"/} --version: $v"; else not_ok "${p#"$T_OUT"/} --version prints v1.NN" "$v"; fi
done
v=$("${E[@]}" "$P/bin/btfpipe" --version 2>&1)
[[ $v == "btfpipe "*"(commit "* ]] && ok "usr/bin/btfpipe --version: $v" || not_ok "usr/bin/btfpipe --version names btfpipe and a commit" "$v"

# The diff tool, installed: BTF (btfcmp.py from usr/share/btfpipe) and the
# stages' checkpoints (their dumps, from usr/bin).
"${E[@]}" "$P/bin/btfpipe" --keep "$T_OUT/keep" -o "$T_OUT/s2.btf" "$T_OUT/sample" >/dev/null 2>&1
check "the installed btfpipe-diff: equal BTF is exit 0" "${E[@]}" "$P/bin/btfpipe-diff" "$T_OUT/s.btf" "$T_OUT/s2.btf"
check "... equal .cus (the installed dwarf-extract's dump)" "${E[@]}" "$P/bin/btfpipe-diff" \
	"$T_OUT/keep/sample.cus" "$T_OUT/keep/sample.cus"
check "... equal .graph (the installed dedup-merge's dump)" "${E[@]}" "$P/bin/btfpipe-diff" \
	"$T_OUT/keep/sample.graph" "$T_OUT/keep/sample.graph"
# The archive front, installed, finds the installed driver.
check "the installed btfpipe-archive runs" "${E[@]}" "$P/bin/btfpipe-archive" --distro d --release r \
	-o "$T_OUT/arch" "$T_OUT/sample"
check_same "... and writes the installed btfpipe-pahole's BTF (BTFHub's flags)" "$T_OUT/arch/d/r/x86_64/sample.btf" "$T_OUT/drv.btf"
test_done
