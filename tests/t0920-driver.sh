#!/usr/bin/env bash
# t0920-driver: the one front door, bin/btfpipe (and pipeline.sh and
# btfpipe-pahole, the same program): each check is a defect users met when
# two drivers did one job (pipeline.sh in bash, btfpipe-pahole in C). "Ours"
# is pipeline.sh's native command line, so that every check also ran on the
# code before the driver was one (c603fe5): there, those marked [old: fails]
# fail; the others guard what the old drivers already did right.
#   - both command lines take --keep, --from, --stats[=json], --cache-stats
#     and answer from the run memo, with the same defaults and -j limits;
#   - a native rerun of a kernel's step, given its flags, gives its bytes;
#   - every command line pahole refuses is refused, and so is one that
#     would silently drop an input;
#   - nothing is left behind (a failed option, --from into a missing dir);
#   - a symlinked pipeline.sh works; --help is whole; --version says whose.
. "$(dirname "$0")/lib.sh"

P="$T_TOP/pipeline.sh"
export BTFPIPE_BIN="$T_BIN"
build_fixture gcc -O2 5 "$T_OUT" sample || not_ok "build sample"
elf="$T_OUT/sample"
(cd "$T_TOP" && gcc -O2 -g -c -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$T_OUT/e.o" tests/fixtures/sample/shapes.c &&
	gcc -O2 -g -c -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$T_OUT/f.o" tests/fixtures/sample/util.c) ||
	not_ok "build two objects"
same() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', wanted '$3'"; fi; }
# btf_sections FILE: how many .BTF sections FILE has.
btf_sections() { readelf -SW "$1" 2>/dev/null | grep -c ' \.BTF ' ; }

# --- the same defaults in both: a kernel's flags give the kernel's bytes -----
# [old: fails] pipeline.sh's native mode encoded btf-emit's "default" set
# while pahole's command line starts from pahole's own four.
KFLAGS=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs
check "pahole's line, the kernel's flags" "$P" --btf_features=$KFLAGS --btf_encode_detached="$T_OUT/k.pahole.btf" "$elf"
check "ours, the same flags" "$P" --features $KFLAGS -o "$T_OUT/k.native.btf" "$elf"
check_same "native rerun with the kernel's --btf_features = the kernel's bytes" "$T_OUT/k.pahole.btf" "$T_OUT/k.native.btf"
check "pahole's line, 6.1's legacy flags" "$P" -J --btf_gen_floats --skip_encoding_btf_inconsistent_proto \
	--btf_gen_optimized --btf_encode_detached="$T_OUT/l.pahole.btf" "$elf"
check "ours, the same legacy flags" "$P" --btf_gen_floats --skip_encoding_btf_inconsistent_proto \
	--btf_gen_optimized -o "$T_OUT/l.native.btf" "$elf"
check_same "native rerun with 6.1's legacy flags = the kernel's bytes" "$T_OUT/l.pahole.btf" "$T_OUT/l.native.btf"
check "pahole's line, no features" "$P" --btf_encode_detached="$T_OUT/d.pahole.btf" "$elf"
check "ours, no features" "$P" -o "$T_OUT/d.native.btf" "$elf"
check_same "no features: the same default in both (pahole -J's own)" "$T_OUT/d.pahole.btf" "$T_OUT/d.native.btf"
check "the stages by hand with pahole's four" sh -c "'$T_BIN/dwarf-extract' -o '$T_OUT/h.cus' '$elf' &&
	'$T_BIN/dedup-merge' -o '$T_OUT/h.graph' '$T_OUT/h.cus' &&
	'$T_BIN/btf-emit' --elf '$elf' --features var,decl_tag,type_tag,enum64 -o '$T_OUT/h.btf' '$T_OUT/h.graph'"
check_same "no features = var,decl_tag,type_tag,enum64" "$T_OUT/h.btf" "$T_OUT/d.native.btf"

# --- the options of both, in both --------------------------------------------
# [old: fails] pahole's line refused --keep, --stats and --cache-stats.
rm -rf "$T_OUT/keepJ"
cp "$elf" "$T_OUT/kj.elf"
check "pahole's line with --keep" "$P" -J --keep "$T_OUT/keepJ" "$T_OUT/kj.elf"
[ -s "$T_OUT/keepJ/kj.elf.cus" ] && [ -s "$T_OUT/keepJ/kj.elf.graph" ] && ok "pahole's line: --keep kept both checkpoints" ||
	not_ok "pahole's line: --keep kept both checkpoints" "$(ls -A "$T_OUT/keepJ" 2>&1)"
check "pahole's line with --from graph" "$P" --btf_encode_detached="$T_OUT/kjg.btf" --keep "$T_OUT/keepJ" --from graph "$T_OUT/kj.elf"
check_same "pahole's line: --from graph gives the same BTF" "$T_OUT/d.pahole.btf" "$T_OUT/kjg.btf"
check_exit "pahole's line with --stats=json" 0 "$P" -J --stats=json "$T_OUT/kj.elf"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if sorted(d) == ["btf-emit", "dedup-merge", "dwarf-extract"] else 1)' "$T_OUT/last.out" 2>/dev/null; then
	ok "pahole's line: --stats=json is one object with each stage's"
else
	not_ok "pahole's line: --stats=json is one object with each stage's" "$(head -c 600 "$T_OUT/last.out")"
fi
check_exit "ours with --stats (text)" 0 "$P" --stats -o "$T_OUT/st.btf" "$elf"
check_grep "ours: --stats text names each stage on stderr" '^btf-emit: wall' "$T_OUT/last.err"
[ -s "$T_OUT/last.out" ] && not_ok "ours: --stats text keeps stdout empty" "$(head -c 300 "$T_OUT/last.out")" ||
	ok "ours: --stats text keeps stdout empty"

# [old: fails] the native line had no whole-run memo: a warm rerun started
# the three stages. Now a hit answers with no stage: the driver's counters
# say so, and no stage's cache is even opened.
C="$T_OUT/cache"
rm -rf "$C"
check "ours, --cache, cold" "$P" --cache "$C" -o "$T_OUT/c1.btf" "$elf"
check_exit "ours, --cache, warm, --cache-stats" 0 "$P" --cache "$C" --cache-stats -o "$T_OUT/c2.btf" "$elf"
check_grep "ours: the warm run is one whole-run hit" '\(whole runs\): this run: 1 hits, 0 misses' "$T_OUT/last.err"
if grep -q 'stage outputs\|CUs' "$T_OUT/last.err"; then
	not_ok "ours: no stage ran on the hit" "$(cat "$T_OUT/last.err")"
else
	ok "ours: no stage ran on the hit"
fi
check_same "ours: the memo's BTF is the run's" "$T_OUT/c1.btf" "$T_OUT/c2.btf"
check_same "ours: the memo's BTF is the uncached run's" "$T_OUT/d.native.btf" "$T_OUT/c2.btf"
cp "$elf" "$T_OUT/cj.elf"
check_exit "pahole's line, --cache-stats, the same cache" 0 env BTFPIPE_CACHE_DIR="$C" "$P" -J --cache-stats "$T_OUT/cj.elf"
check_grep "pahole's line: --cache-stats reports the run memo" '\(whole runs\): this run: 0 hits, 1 misses' "$T_OUT/last.err"

# [old: fails] -j: pipeline.sh took 1-999, the stages 1-1024.
check "ours: -j 1024" "$P" -j 1024 -o "$T_OUT/j.btf" "$elf"
check_same "ours: -j 1024 gives the same BTF" "$T_OUT/d.native.btf" "$T_OUT/j.btf"
cp "$elf" "$T_OUT/j.elf"
check "pahole's line: -j1024" "$P" -J -j1024 "$T_OUT/j.elf"
check_exit "ours: -j 1025 refused" 2 "$P" -j 1025 -o "$T_OUT/j2.btf" "$elf"
check_exit "pahole's line: -j1025 refused" 2 "$P" -J -j1025 "$T_OUT/j.elf"

# --- command lines that would drop an input or a value: refused --------------
# [old: fails] -J e.o f.o encoded only f.o and exited 0. pahole (1.24, 1.32,
# master) encodes each: so do we.
cp "$T_OUT/e.o" "$T_OUT/e1.o"
cp "$T_OUT/f.o" "$T_OUT/f1.o"
check "pahole's line: -J with two inputs" "$P" -J "$T_OUT/e1.o" "$T_OUT/f1.o"
same "-J e.o f.o: both get a .BTF" "$(btf_sections "$T_OUT/e1.o") $(btf_sections "$T_OUT/f1.o")" "1 1"
check "e.o alone" "$P" --btf_encode_detached="$T_OUT/e.btf" "$T_OUT/e.o"
check "btf of e1.o's section" objcopy --dump-section .BTF="$T_OUT/e1.btf" "$T_OUT/e1.o" "$T_OUT/e1.dump.o"
check_same "-J e.o f.o: e.o's BTF is its own" "$T_OUT/e.btf" "$T_OUT/e1.btf"
# [old: fails] -J -j abc x.o ignored abc and exited 0. pahole's -j takes
# its number attached: abc is an input, and there is none.
cp "$T_OUT/e.o" "$T_OUT/e2.o"
check_exit "pahole's line: -J -j abc x.o refused (abc is an input that is not there)" 3 "$P" -J -j abc "$T_OUT/e2.o"
check_grep "-j abc: the message names abc and says why" '^btfpipe: abc: error: cannot open: No such file or directory \(pahole.s -j takes its number attached' "$T_OUT/last.err"
same "-j abc: nothing written (e2.o has no .BTF)" "$(btf_sections "$T_OUT/e2.o")" 0
check_exit "pahole's line: -J missing.o is exit 3 (pahole 1.32 exits 0 having done nothing)" 3 "$P" -J "$T_OUT/missing.o"
check_exit "two inputs into one detached file refused" 2 "$P" --btf_encode_detached="$T_OUT/two.btf" "$T_OUT/e.o" "$T_OUT/f.o"
check_grep "two inputs: says which is the second" "'.*f\.o' is a second" "$T_OUT/last.err"
check_exit "ours: two inputs refused" 2 "$P" -o "$T_OUT/two.btf" "$T_OUT/e.o" "$T_OUT/f.o"
check_exit "-jabc refused" 2 "$P" -jabc -o "$T_OUT/x.btf" "$elf"
check_exit "two outputs refused" 2 "$P" -J -o "$T_OUT/x.btf" "$elf"
check_exit "an unknown pahole option refused" 2 "$P" -J --btf_bogus "$elf"
[ ! -e "$T_OUT/two.btf" ] && [ ! -e "$T_OUT/x.btf" ] && ok "refused lines wrote nothing" || not_ok "refused lines wrote nothing"

# --- nothing left behind ---------------------------------------------------
# [old: fails] --from graph --keep MISSING made an empty MISSING.
check_exit "--from graph --keep MISSING fails" 3 "$P" --from graph --keep "$T_OUT/missing-dir" -o "$T_OUT/m.btf" "$elf"
[ ! -e "$T_OUT/missing-dir" ] && ok "--from graph --keep MISSING: no directory made" ||
	not_ok "--from graph --keep MISSING: no directory made" "$(ls -la "$T_OUT/missing-dir")"
check_exit "a bad option after --keep fails" 2 "$P" --keep "$T_OUT/kept-bad" --bogus -o "$T_OUT/m.btf" "$elf"
[ ! -e "$T_OUT/kept-bad" ] && ok "a failed option: no --keep directory made" || not_ok "a failed option: no --keep directory made"
# [old: fails] -o - | head: the old pipeline.sh wrote a file named "-",
# and a reader that left before the end left the temp directory.
mkdir -p "$T_OUT/pipe.tmp"
( cd "$T_OUT" && TMPDIR="$T_OUT/pipe.tmp" "$P" -o - "$elf" | head -c 100 >"$T_OUT/head.out" )
same "-o -: the first 100 bytes on stdout" "$(wc -c <"$T_OUT/head.out")" 100
same "-o -: BTF's magic first" "$(od -An -tx1 -N2 "$T_OUT/head.out" | tr -d ' ')" 9feb
[ ! -e "$T_OUT/-" ] && ok "-o -: no file named -" || not_ok "-o -: no file named -"
left=$(ls -A "$T_OUT/pipe.tmp")
[ -z "$left" ] && ok "-o - | head: no temp directory left" || not_ok "-o - | head: no temp directory left" "$left"

# --- the ways in -----------------------------------------------------------
# [old: fails] a symlinked pipeline.sh looked for bin/ beside the link.
mkdir -p "$T_OUT/usr/local/bin"
ln -sf "$P" "$T_OUT/usr/local/bin/pipeline.sh"
check "a symlinked pipeline.sh runs" env -u BTFPIPE_BIN "$T_OUT/usr/local/bin/pipeline.sh" -o "$T_OUT/ln.btf" "$elf"
check_same "a symlinked pipeline.sh: the same BTF" "$T_OUT/d.native.btf" "$T_OUT/ln.btf"
same "a symlinked pipeline.sh answers --version as pahole" "$(env -u BTFPIPE_BIN "$T_OUT/usr/local/bin/pipeline.sh" --version)" v1.32
# [old: fails] --help stopped mid-sentence.
"$P" --help >"$T_OUT/help.txt" 2>&1
check_grep "--help: whole (ends with the exit codes and the man page)" 'See man btfpipe\.$' "$T_OUT/help.txt"
for o in --keep --from --stats --cache-stats -J --btf_encode_detached --btf_features --features --lang-exclude --btf-base -o --elf-out; do
	grep -q -- "$o" "$T_OUT/help.txt" || { not_ok "--help names $o"; continue; }
	ok "--help names $o"
done
# [old: fails] --version said only v1.32, never which btfpipe.
v=$("$T_BIN/btfpipe" --version)
case "$v" in "btfpipe "[0-9]*" (commit "[0-9a-f]*")"*) ok "btfpipe --version names its version and commit ($v)" ;;
*) not_ok "btfpipe --version names its version and commit" "$v" ;; esac
same "btfpipe-pahole --version: exactly v1.32" "$("$T_BIN/btfpipe-pahole" --version)" v1.32
same "pipeline.sh --version: exactly v1.32" "$("$P" --version)" v1.32
# The kernel's scripts/pahole-version.sh, as 7.x has it.
same "scripts/pahole-version.sh reads 132" "$("$P" --version 2>/dev/null | sed -E 's/v([0-9]+)\.([0-9]+)/\1\2/')" 132
test_done
