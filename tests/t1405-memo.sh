#!/usr/bin/env bash
# t1405-memo: each stage reuses its whole output from the cache when nothing
# it reads changed (format/CU-CACHE.md, "Stage outputs"): the same bytes as
# an uncached run; any changed input byte or output-changing option is a
# miss; side outputs (--skip-report) are never served from the cache.
. "$(dirname "$0")/lib.sh"

export BTFPIPE_BIN="$T_BIN"
X="$T_BIN/dwarf-extract" M="$T_BIN/dedup-merge" E="$T_BIN/btf-emit"
unset BTFPIPE_CACHE_DIR BTFPIPE_CACHE_READONLY BTFPIPE_CACHE_MAX_SIZE BTFPIPE_CACHE_VERIFY
C="$T_OUT/cache"

# outputs_hit ERRFILE: the "stage outputs" hits of the run that wrote ERRFILE.
outputs_hit() { sed -n 's/.*(stage outputs): this run: \([0-9]*\) hits.*/\1/p' "$1" | head -1; }
# expect_hit DESC WANT ERRFILE
expect_hit() {
	local h
	h=$(outputs_hit "$3")
	[ "$h" = "$2" ] && ok "$1" || not_ok "$1 (wanted $2 stage-output hits, got '${h}')" "$(cat "$3")"
}

# cold_then_warm ID DESC REF EXT CMD...: run the stage CMD with the cache
# twice, into $T_OUT/ID.{cold,warm}.EXT: both are REF's bytes, the first
# run misses and the second hits.
cold_then_warm() {
	local id=$1 desc=$2 ref=$3 ext=$4 run; shift 4
	for run in cold warm; do
		"$@" --cache "$C" --cache-stats -o "$T_OUT/$id.$run.$ext" 2>"$T_OUT/$id.$run.err"
		check_same "$desc ($run) = uncached" "$ref" "$T_OUT/$id.$run.$ext"
	done
	expect_hit "$desc: the cold run misses" 0 "$T_OUT/$id.cold.err"
	expect_hit "$desc: the warm run hits" 1 "$T_OUT/$id.warm.err"
}

build_fixture "$GCC" -O2 5 "$T_OUT" sample || not_ok "build sample"
vm="$T_OUT/sample"
# A "module": a relocatable object that shares a header with the sample.
cat >"$T_OUT/mod.c" <<'EOF'
struct mod_state { int refs; long flags; struct mod_state *next; };
struct mod_state mod_head;
int mod_count(struct mod_state *s) { int n = 0; for (; s; s = s->next) n++; return n; }
EOF
"$GCC" -O2 -g -c -o "$T_OUT/mod.o" "$T_OUT/mod.c" || not_ok "build mod.o"

# References, no cache.
"$X" -q -o "$T_OUT/vm.cus" "$vm" && "$M" -q -o "$T_OUT/vm.graph" "$T_OUT/vm.cus" &&
	"$E" --elf "$vm" -o "$T_OUT/vm.btf" "$T_OUT/vm.graph" || not_ok "uncached vmlinux-like pipeline"
"$X" -q -o "$T_OUT/mod.cus" "$T_OUT/mod.o" && "$M" -q -o "$T_OUT/mod.graph" "$T_OUT/mod.cus" &&
	"$E" --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm.btf" -o "$T_OUT/mod.btf" "$T_OUT/mod.graph" ||
	not_ok "uncached module pipeline"

# ---- dwarf-extract: the whole .cus of an unchanged relocatable file ----
cold_then_warm x "extract .o (the whole .cus)" "$T_OUT/mod.cus" cus "$X" -q "$T_OUT/mod.o"
BTFPIPE_CACHE_VERIFY=1 "$X" -q --cache "$C" -o "$T_OUT/mod.verify.cus" "$T_OUT/mod.o" 2>"$T_OUT/x.verify.err"
check_same "extract .o: --cache-verify re-extracts a hit and agrees" "$T_OUT/mod.cus" "$T_OUT/mod.verify.cus"
# The .cus names its input: the same bytes under another name are another .cus.
cp "$T_OUT/mod.o" "$T_OUT/other.o"
"$X" -q -o "$T_OUT/other.plain.cus" "$T_OUT/other.o"
"$X" -q --cache "$C" --cache-stats -o "$T_OUT/other.cus" "$T_OUT/other.o" 2>"$T_OUT/x.other.err"
check_same "extract .o: a copy under another name gets its own .cus" "$T_OUT/other.plain.cus" "$T_OUT/other.cus"
expect_hit "extract .o: ... which is not the first name's entry" 0 "$T_OUT/x.other.err"
cmp -s "$T_OUT/mod.cus" "$T_OUT/other.cus" && not_ok "the two names' .cus differ (else the check above proves nothing)" ||
	ok "the two names' .cus differ (else the check above proves nothing)"
# A linked file is cached per CU, never as a whole (the CU cache covers it).
"$X" -q --cache "$C" --cache-stats -o "$T_OUT/vm.c1.cus" "$vm" 2>"$T_OUT/x.vm1.err"
"$X" -q --cache "$C" --cache-stats -o "$T_OUT/vm.c2.cus" "$vm" 2>"$T_OUT/x.vm2.err"
check_same "extract executable through the cache = uncached" "$T_OUT/vm.cus" "$T_OUT/vm.c2.cus"
if grep -q 'stage outputs' "$T_OUT/x.vm2.err"; then not_ok "an executable has no whole-.cus entry" "$(cat "$T_OUT/x.vm2.err")"
else ok "an executable has no whole-.cus entry"; fi

# ---- dedup-merge ----
cold_then_warm m merge "$T_OUT/vm.graph" graph "$M" -q "$T_OUT/vm.cus"
"$M" -q --lang-exclude rust --cache "$C" --cache-stats -o "$T_OUT/vm.lx.graph" "$T_OUT/vm.cus" 2>"$T_OUT/m.lx.err"
expect_hit "merge: another --lang-exclude is another key" 0 "$T_OUT/m.lx.err"
"$M" -q --cache "$C" --cache-stats -o "$T_OUT/two.graph" "$T_OUT/vm.cus" "$T_OUT/mod.cus" 2>"$T_OUT/m.two.err"
"$M" -q -o "$T_OUT/two.plain.graph" "$T_OUT/vm.cus" "$T_OUT/mod.cus"
expect_hit "merge: another input list is another key" 0 "$T_OUT/m.two.err"
check_same "merge of two inputs through the cache = uncached" "$T_OUT/two.plain.graph" "$T_OUT/two.graph"
# One changed byte in the input (a string in the .cus is not checked by the
# key, only hashed): a different .cus is a miss, and the merge reads it.
"$GCC" -O2 -g -c -o "$T_OUT/mod2.o" -Dmod_head=mod_tail "$T_OUT/mod.c"
"$X" -q -o "$T_OUT/mod2.cus" "$T_OUT/mod2.o"
"$M" -q --cache "$C" --cache-stats -o "$T_OUT/mod2.graph" "$T_OUT/mod2.cus" 2>"$T_OUT/m.c.err"
"$M" -q -o "$T_OUT/mod2.plain.graph" "$T_OUT/mod2.cus"
expect_hit "merge: a changed input is a miss" 0 "$T_OUT/m.c.err"
check_same "merge: ... and gives the changed input's graph" "$T_OUT/mod2.plain.graph" "$T_OUT/mod2.graph"

# ---- btf-emit ----
cold_then_warm e "emit split BTF" "$T_OUT/mod.btf" btf "$E" --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm.btf" "$T_OUT/mod.graph"
# --elf-out from a hit: the same ELF as an uncached --elf-out.
cp "$T_OUT/mod.o" "$T_OUT/mod.elfout.o"
"$E" --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm.btf" --elf-out "$T_OUT/plain.elfout.o" "$T_OUT/mod.graph"
"$E" --cache "$C" --cache-stats --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm.btf" \
	--elf-out "$T_OUT/cached.elfout.o" "$T_OUT/mod.graph" 2>"$T_OUT/e.elfout.err"
expect_hit "emit --elf-out: served from the BTF entry" 1 "$T_OUT/e.elfout.err"
check_same "emit --elf-out from a hit = uncached" "$T_OUT/plain.elfout.o" "$T_OUT/cached.elfout.o"
# Each input and option of the key.
"$E" --cache "$C" --cache-stats --no-floats --features var --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm.btf" \
	-o "$T_OUT/f.btf" "$T_OUT/mod.graph" 2>"$T_OUT/e.f.err"
expect_hit "emit: other --features are another key" 0 "$T_OUT/e.f.err"
"$E" --no-floats --features var --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm.btf" -o "$T_OUT/f.plain.btf" "$T_OUT/mod.graph"
check_same "emit: ... and give their own BTF" "$T_OUT/f.plain.btf" "$T_OUT/f.btf"
"$E" --cache "$C" --cache-stats --elf "$T_OUT/mod.o" -o "$T_OUT/nobase.btf" "$T_OUT/mod.graph" 2>"$T_OUT/e.nb.err"
expect_hit "emit: no base is another key" 0 "$T_OUT/e.nb.err"
# A changed base (another program's BTF) is a miss.
build_fixture "$GCC" -O2 5 "$T_OUT" merge || not_ok "build merge"
"$T_TOP/pipeline.sh" -o "$T_OUT/vm2.btf" "$T_OUT/merge"
cmp -s "$T_OUT/vm.btf" "$T_OUT/vm2.btf" && not_ok "the second base differs from the first"
"$E" --cache "$C" --cache-stats --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm2.btf" -o "$T_OUT/b2.btf" "$T_OUT/mod.graph" 2>"$T_OUT/e.b2.err"
"$E" --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm2.btf" -o "$T_OUT/b2.plain.btf" "$T_OUT/mod.graph"
expect_hit "emit: a changed base is a miss" 0 "$T_OUT/e.b2.err"
check_same "emit: ... and gives the BTF over the new base" "$T_OUT/b2.plain.btf" "$T_OUT/b2.btf"
# The ELF is read too (its symbols pick functions): another ELF, another key.
"$E" --cache "$C" --cache-stats --elf "$T_OUT/other.o" --btf-base "$T_OUT/vm.btf" -o "$T_OUT/o.btf" "$T_OUT/mod.graph" 2>"$T_OUT/e.o.err"
cmp -s "$T_OUT/mod.o" "$T_OUT/other.o" && expect_hit "emit: the same ELF bytes under another name hit" 1 "$T_OUT/e.o.err"
"$E" --cache "$C" --cache-stats --elf "$T_OUT/mod2.o" --btf-base "$T_OUT/vm.btf" -o "$T_OUT/o2.btf" "$T_OUT/mod.graph" 2>"$T_OUT/e.o2.err"
expect_hit "emit: another ELF is another key" 0 "$T_OUT/e.o2.err"
# Side outputs are never served from the cache.
rm -f "$T_OUT/skips.txt"
"$E" --cache "$C" --cache-stats --skip-report "$T_OUT/skips.txt" --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm.btf" \
	-o "$T_OUT/sr.btf" "$T_OUT/mod.graph" 2>"$T_OUT/e.sr.err"
[ -e "$T_OUT/skips.txt" ] && ok "emit --skip-report: the report is written (not skipped by a hit)" ||
	not_ok "emit --skip-report: the report is written (not skipped by a hit)" "$(cat "$T_OUT/e.sr.err")"
check_same "emit --skip-report: the same BTF" "$T_OUT/mod.btf" "$T_OUT/sr.btf"

# The base is keyed on its BTF only (format/CU-CACHE.md, "The base digest"):
# a base ELF with that BTF as its .BTF is the same key as the raw file, so a
# module's emit over a vmlinux never hashes the vmlinux's DWARF.
"$T_TOP/pipeline.sh" -q --features default --elf-out "$T_OUT/vm.withbtf" "$vm" || not_ok "write the sample with .BTF"
rm -rf "$T_OUT/dcache"
"$E" --cache "$T_OUT/dcache" --cache-stats --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm.withbtf" \
	-o "$T_OUT/d.elf.btf" "$T_OUT/mod.graph" 2>"$T_OUT/e.d1.err"
"$E" --cache "$T_OUT/dcache" --cache-stats --elf "$T_OUT/mod.o" --btf-base "$T_OUT/vm.btf" \
	-o "$T_OUT/d.raw.btf" "$T_OUT/mod.graph" 2>"$T_OUT/e.d2.err"
check_same "emit over the base as an ELF with .BTF = over the raw base" "$T_OUT/mod.btf" "$T_OUT/d.elf.btf"
expect_hit "emit: the raw base hits the entry its ELF made (keyed on .BTF, not the file)" 1 "$T_OUT/e.d2.err"
check_same "emit: ... with the same bytes" "$T_OUT/mod.btf" "$T_OUT/d.raw.btf"

# The base index (kind base-v1): a damaged entry is refused, made again and
# replaced; the BTF is the same throughout. --skip-report keeps the memo out.
bi_counts() { sed -n 's/.*(base indexes): this run: \([0-9]*\) hits, \([0-9]*\) misses, [0-9]* uncacheable, \([0-9]*\) corrupt.*/\1 \2 \3/p' "$1"; }
bi_run() { # bi_run TAG: emit through dcache's base index, output d.TAG.btf, counts in e.TAG.err
	"$E" --cache "$T_OUT/dcache" --cache-stats --skip-report "$T_OUT/d.skips" --elf "$T_OUT/mod.o" \
		--btf-base "$T_OUT/vm.btf" -o "$T_OUT/d.$1.btf" "$T_OUT/mod.graph" 2>"$T_OUT/e.$1.err"
	check_same "emit through the base index ($1) = uncached" "$T_OUT/mod.btf" "$T_OUT/d.$1.btf"
}
entry=$(find "$T_OUT/dcache/base-v1" -type f -name '[0-9a-f]*' | head -1)
bi_run bihit
[ "$(bi_counts "$T_OUT/e.bihit.err")" = "1 0 0" ] && [ -n "$entry" ] && ok "emit: the base index made by the first emit is read" ||
	not_ok "emit: the base index made by the first emit is read" "entry '$entry': $(cat "$T_OUT/e.bihit.err")"
size=$(stat -c %s "$entry")
printf '\377' | dd of="$entry" bs=1 seek=$((size - 3)) conv=notrunc status=none
bi_run bibad
[ "$(bi_counts "$T_OUT/e.bibad.err")" = "0 1 1" ] && ok "emit: a damaged base index is refused (corrupt, a miss)" ||
	not_ok "emit: a damaged base index is refused (corrupt, a miss)" "$(cat "$T_OUT/e.bibad.err")"
bi_run bifixed
[ "$(bi_counts "$T_OUT/e.bifixed.err")" = "1 0 0" ] && ok "emit: ... and replaced by a sound one" ||
	not_ok "emit: ... and replaced by a sound one" "$(cat "$T_OUT/e.bifixed.err")"

# ---- pipeline.sh through the environment, the way a kernel build runs it ----
for run in cold warm; do
	BTFPIPE_CACHE_DIR="$T_OUT/pcache" "$T_TOP/pipeline.sh" -q --features default --btf-base "$T_OUT/vm.btf" \
		-o "$T_OUT/p.$run.btf" "$T_OUT/mod.o" || not_ok "pipeline.sh $run"
	check_same "pipeline.sh with BTFPIPE_CACHE_DIR ($run) = uncached" "$T_OUT/mod.btf" "$T_OUT/p.$run.btf"
done
"$X" --cache "$T_OUT/pcache" --cache-stats >"$T_OUT/ptot.txt"
n=$(find "$T_OUT/pcache/out-v1" -type f | grep -cE '/[0-9a-f]{32}$')
# (the cold run stores each stage's output and the whole run's; the warm one
# is the whole run's hit)
[ "$n" -eq 4 ] && ok "pipeline.sh: one output entry per stage and one for the run ($n)" ||
	not_ok "pipeline.sh: one output entry per stage and one for the run ($n)"
test_done
