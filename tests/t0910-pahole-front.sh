#!/usr/bin/env bash
# t0910-pahole-front: pipeline.sh standing in for pahole in a kernel build.
# The command lines are the kernel's (scripts/link-vmlinux.sh,
# scripts/Makefile.modfinal, scripts/pahole-version.sh); the outcomes are
# checked with libbpf and readelf, not with our own code.
. "$(dirname "$0")/lib.sh"

P="$T_TOP/pipeline.sh"
same() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', wanted '$3'"; fi; }
export BTFPIPE_BIN="$T_BIN"
build_fixture gcc -O2 5 "$T_OUT" sample || not_ok "build sample"
elf="$T_OUT/sample"

out=$("$P" --version)
[ "$out" = "v1.32" ] && ok "--version answers v1.32" || not_ok "--version answers v1.32" "$out"
v=$(echo "$out" | sed -E 's/v([0-9]+)\.([0-9]+)/\1\2/')
[ "$v" = "132" ] && ok "scripts/pahole-version.sh reads it as 132" || not_ok "pahole-version.sh form" "$v"
# pipeline.sh is POSIX sh, not bash (a bash start was a good part of a
# cached module's step): sh's exec cannot set argv[0], so it names the
# program in BTFPIPE_AS, which the driver takes out of its environment:
# no stage it starts may inherit it.
same "pipeline.sh is a /bin/sh script" "$(head -1 "$P")" "#!/bin/sh"
same "BTFPIPE_AS=pipeline.sh: the driver answers --version as pahole" "$(BTFPIPE_AS=pipeline.sh "$T_BIN/btfpipe" --version)" v1.32
case $(BTFPIPE_AS=btfpipe "$T_BIN/btfpipe" --version) in
v1.32) not_ok "BTFPIPE_AS=btfpipe: the driver answers as itself" ;;
*) ok "BTFPIPE_AS=btfpipe: the driver answers as itself" ;;
esac
mkdir -p "$T_OUT/as"
for s in btfpipe dedup-merge btf-emit; do ln -sf "$T_BIN/$s" "$T_OUT/as/$s"; done
cat >"$T_OUT/as/dwarf-extract" <<EOF
#!/bin/sh
echo "\${BTFPIPE_AS-unset}" >"$T_OUT/as.env"
exit 1
EOF
chmod +x "$T_OUT/as/dwarf-extract"
rm -f "$T_OUT/as.env"
BTFPIPE_BIN="$T_OUT/as" "$P" -J --btf_encode_detached="$T_OUT/as.btf" "$elf" 2>/dev/null
same "pipeline.sh: a stage the driver starts does not inherit BTFPIPE_AS" "$(cat "$T_OUT/as.env" 2>&1)" unset
"$P" --supported_btf_features >"$T_OUT/feats"
for f in encode_force var float decl_tag type_tag enum64 optimized_func consistent_func decl_tag_kfuncs; do
	check_grep "--supported_btf_features lists $f (kernel Makefile.btf asks for it)" "(^|,)$f(,|$)" "$T_OUT/feats"
done
# Every feature pahole 1.32 lists, in its order (its btf_features[] with a
# libbpf that has them all): our writer needs no newer libbpf for any.
# Debian's 1.32, over libbpf 1.7, leaves out layout, which needs libbpf 1.8.
want=encode_force,var,float,decl_tag,type_tag,enum64,optimized_func,consistent_func,decl_tag_kfuncs,reproducible_build,distilled_base,global_var,attributes,true_signature,layout,force_cu_merging
[ "$(cat "$T_OUT/feats")" = "$want" ] && ok "--supported_btf_features: every pahole 1.32 feature, in its order" ||
	not_ok "--supported_btf_features: every pahole 1.32 feature, in its order" "$(cat "$T_OUT/feats")"

# vmlinux style: -J writes .BTF into the file itself.
cp "$elf" "$T_OUT/j"
chmod 755 "$T_OUT/j"
check "-J -j --btf_gen_floats --lang_exclude=rust FILE" "$P" -J -j --btf_gen_floats --lang_exclude=rust "$T_OUT/j"
readelf -SW "$T_OUT/j" >"$T_OUT/j.sections"
check_grep "-J: the file has a .BTF section" ' \.BTF +PROGBITS' "$T_OUT/j.sections"
check "-J: libbpf reads the .BTF from the ELF" "$T_BIN/tools/btfcheck" "$T_OUT/j"
check "-J: the program still runs" "$T_OUT/j"
[ "$(stat -c %a "$T_OUT/j")" = 755 ] && ok "-J: the file keeps its mode" || not_ok "-J: the file keeps its mode" "$(stat -c %a "$T_OUT/j")"
check "detached, value as a separate word" "$P" -j2 --btf_gen_floats --btf_encode_detached "$T_OUT/d.btf" "$elf"
objcopy --dump-section .BTF="$T_OUT/j.btf" "$T_OUT/j" "$T_OUT/j.copy"
check_same "-J's .BTF is the detached BTF" "$T_OUT/d.btf" "$T_OUT/j.btf"
check "-J again on a file that has .BTF replaces it" "$P" -J --btf_features=default "$T_OUT/j"
n=$(readelf -SW "$T_OUT/j" | grep -c ' \.BTF ')
[ "$n" = 1 ] && ok "-J again: still one .BTF section" || not_ok "-J again: one .BTF section" "$n"

# Module style: split BTF over the vmlinux-like base, -J --btf_base.
(cd "$T_TOP" && gcc -O2 -g -c -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$T_OUT/mod.o" tests/fixtures/sample/shapes.c) ||
	not_ok "build the module-like object"
check "-J --btf_base BASE module" "$P" -J --btf_features=encode_force,var,float,enum64,decl_tag,type_tag \
	--btf_base "$T_OUT/d.btf" "$T_OUT/mod.o"
objcopy --dump-section .BTF="$T_OUT/mod.btf" "$T_OUT/mod.o" "$T_OUT/mod.copy"
check "split: libbpf reads it over the base" "$T_BIN/tools/btfcheck" --base "$T_OUT/d.btf" --dedup "$T_OUT/mod.btf"
nb=$(bpftool btf dump file "$T_OUT/d.btf" | grep -c '^\[')
first=$(bpftool -B "$T_OUT/d.btf" btf dump file "$T_OUT/mod.btf" | grep -m1 -o '^\[[0-9]*\]' | tr -d '[]')
[ "$first" = $((nb + 1)) ] && ok "split: ids continue the base's ($first)" || not_ok "split: ids continue the base's" "first $first, base $nb"
if bpftool -B "$T_OUT/d.btf" btf dump file "$T_OUT/mod.btf" | grep -q "STRUCT 'point' "; then
	not_ok "split: struct point is the base's, not repeated"
else ok "split: struct point is the base's, not repeated"; fi
check_grep "split: the per-CPU variable is a VAR" "VAR 'g_percpu_hits'" <(bpftool -B "$T_OUT/d.btf" btf dump file "$T_OUT/mod.btf")

# Failures: pahole's way of saying no is ours too.
printf 'text\n' >"$T_OUT/notelf"
cp "$T_OUT/notelf" "$T_OUT/notelf.orig"
check_exit "-J on a non-ELF: exit 1" 1 "$P" -J "$T_OUT/notelf"
check_same "-J on a non-ELF: the file is untouched" "$T_OUT/notelf" "$T_OUT/notelf.orig"
check_exit "an unknown pahole option: exit 2" 2 "$P" -J --no_such_option "$T_OUT/j"
check_exit "--btf_features_strict with an unknown feature: exit 2" 2 "$P" --btf_features_strict=var,nonsense \
	--btf_encode_detached="$T_OUT/x.btf" "$elf"

# Several --btf_features add up, as pahole's do (Debian's 6.12
# scripts/Makefile.btf, an out-of-tree module): the second list must not
# turn the first one's float off. The sample has a double, so FLOAT shows.
(cd "$T_TOP" && gcc -O2 -g -c -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$T_OUT/util.o" tests/fixtures/sample/util.c &&
	ld -r -o "$T_OUT/acc.o" "$T_OUT/mod.o" "$T_OUT/util.o") || not_ok "link a module-like object with a double"
check "two --btf_features lists (6.12's out-of-tree module line)" env LLVM_OBJCOPY=objcopy "$P" -J -j \
	--btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs \
	--btf_features=distilled_base --btf_base "$T_OUT/d.btf" "$T_OUT/acc.o"
objcopy --dump-section .BTF="$T_OUT/acc.btf" "$T_OUT/acc.o" "$T_OUT/acc.copy"
# (With float off, the module would write its own INT 'double' beside the
# base's FLOAT; with var off, no VAR.)
nflt_base=$(bpftool btf dump file "$T_OUT/d.btf" | grep -c "FLOAT 'double'")
nint=$(bpftool -B "$T_OUT/d.btf" btf dump file "$T_OUT/acc.btf" | grep -c "^\[[0-9]*\] INT 'double'")
nvar=$(bpftool -B "$T_OUT/d.btf" btf dump file "$T_OUT/acc.btf" | grep -c "^\[[0-9]*\] VAR ")
if [ "$nflt_base" -ge 1 ] && [ "$nint" -eq 0 ] && [ "$nvar" -ge 1 ]; then
	ok "two lists: the module uses the base's FLOAT double and keeps its VARs ($nvar)"
else
	not_ok "two lists: the first list's features stay on" "base FLOAT doubles $nflt_base, module INT doubles $nint, VARs $nvar"
fi
# One list alone is all pahole writes: no var, no float.
check "--btf_features=distilled_base alone" "$P" --btf_features=distilled_base --btf_encode_detached="$T_OUT/only.btf" "$elf"
if bpftool btf dump file "$T_OUT/only.btf" | grep -Eq "^\[[0-9]+\] (FLOAT|VAR|DATASEC) "; then
	not_ok "one list alone: its features only (no FLOAT, VAR or DATASEC)" "$(bpftool btf dump file "$T_OUT/only.btf" | grep -E 'FLOAT|VAR|DATASEC')"
else ok "one list alone: its features only (no FLOAT, VAR or DATASEC)"; fi
check "--btf_features=default --btf_features=+reproducible_build (reproducible 6.12 builds)" \
	"$P" --btf_features=default --btf_features=+reproducible_build --btf_encode_detached="$T_OUT/repro.btf" "$elf"
check_same "... the same BTF as default alone" "$T_OUT/d.btf" "$T_OUT/repro.btf"
# pahole 1.32's other spellings: --features= is --btf_features=, and
# force_cu_merging is a feature (strictly too) that changes nothing here.
check "--features=default (pahole 1.32's alias)" "$P" --features=default --btf_encode_detached="$T_OUT/feat.btf" "$elf"
check_same "... the same BTF as --btf_features=default" "$T_OUT/d.btf" "$T_OUT/feat.btf"
check "--btf_features_strict=default,force_cu_merging" "$P" --btf_features_strict=default,force_cu_merging \
	--btf_encode_detached="$T_OUT/fcm.btf" "$elf"
check_same "... the same BTF as default alone" "$T_OUT/d.btf" "$T_OUT/fcm.btf"
# 7.2's scripts/Makefile.btf with pahole 1.32 and KBUILD_BUILD_TIMESTAMP set
# (Debian's packages): three lists, layout among them, -j twice and the
# '+' form. Every word must be taken; the types are default's.
check "7.2's flags: -j2 --btf_features=LIST --btf_features=attributes --btf_features=layout -j2 --btf_features=+reproducible_build --lang_exclude=rust" \
	"$P" -J -j2 --btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs \
	--btf_features=attributes --btf_features=layout -j2 --btf_features=+reproducible_build --lang_exclude=rust \
	--btf_encode_detached="$T_OUT/72.btf" "$elf"
if out=$(python3 "$T_TOP/tools/btfcmp.py" "$T_OUT/d.btf" "$T_OUT/72.btf" 2>&1); then
	ok "... the types are default's"
else
	not_ok "... the types are default's" "$out"
fi

# Detached split BTF (7.x's scripts/gen-btf.sh): --btf_encode_detached with --btf_base.
check "--btf_encode_detached with --btf_base" "$P" -j --btf_features=default --btf_base "$T_OUT/d.btf" \
	--btf_encode_detached="$T_OUT/split-detached.btf" "$T_OUT/mod.o"
check "... libbpf reads it as split BTF over the base" "$T_BIN/tools/btfcheck" --base "$T_OUT/d.btf" --dedup "$T_OUT/split-detached.btf"

# --verbose: pahole's lines for the functions it skips (pahole's own tests grep them).
cat >"$T_OUT/opt.c" <<'CEOF'
__attribute__((noinline)) int bar(int a, int b) { return a + 1; }
__attribute__((noinline)) static int foo(int a, int b, int c) { return a * b - a - b; }
int a, b, c;
int main(void) { return bar(a, c) + foo(a, b, c); }
CEOF
if gcc -g -O2 -o "$T_OUT/opt" "$T_OUT/opt.c" 2>"$T_OUT/opt.err"; then
	"$P" -J --btf_features=default --btf_encode_detached="$T_OUT/opt.btf" --verbose "$T_OUT/opt" >"$T_OUT/opt.log" 2>&1
	check_grep "--verbose: pahole's message for a function skipped for optimized parameters" \
		"^foo : skipping BTF encoding of function due to optimized parameters$" "$T_OUT/opt.log"
else
	not_ok "build the optimized-parameters program" "$(cat "$T_OUT/opt.err")"
fi
"$P" --help >"$T_OUT/help" 2>&1
if head -1 "$T_OUT/help" | grep -q '^Usage: '; then ok "--help starts with a Usage: line"
else not_ok "--help starts with a Usage: line" "$(head -3 "$T_OUT/help")"; fi
test_done
