#!/usr/bin/env bash
# t1040-distilled-base: the feature distilled_base (pahole 1.26's) makes a
# module's split BTF relocatable: .BTF.base beside .BTF (-J), or OUT.base
# beside -o OUT (beyond pahole, which writes it only into the ELF), on a
# generated kernel and module of 3,000 structs (tests/gen/kmod-pair.py).
#  (a) libbpf 1.8 (../shared/anchors): its own btf__distill_base() of our
#      plain split BTF gives the same types and strings, byte for byte;
#  (b) libbpf 1.8's btf__parse_elf_split() relocates the -J module onto
#      another build of the base (other ids, extra types, a grown struct)
#      and onto the base itself: the types it describes are those of the
#      plain split BTF over the base (btf18-check --dump);
#  (c) Debian's libbpf 1.1 parses the distilled base and the split BTF over
#      it, and its dedup removes nothing; the distilled base holds only
#      named INT/FLOAT/FWD and empty named STRUCT/UNION/ENUM;
#  (d) the ELF's .BTF and .BTF.base are the bytes of -o OUT and OUT.base;
#      -j1 and -j2 write the same bytes; a cache hit writes both again;
#  (e) without a base there is nothing to distill: plain BTF, no OUT.base
#      (pahole master fails there);
#  (f) pahole master's -J distilled module, relocated the same way,
#      describes the same types;
#  (g) with BTFPIPE_DEBUG_MODULES (a directory of a distribution's debug
#      modules, its vmlinux beside as ../../../boot/vmlinux-VERSION, as
#      Debian's linux-image-*-dbg installs them), (a) on 20 of them.
. "$(dirname "$0")/lib.sh"

BTFCHECK="$T_BIN/tools/btfcheck"
[ -x "$BTFCHECK" ] || BTFCHECK="$T_TOP/bin/tools/btfcheck"
P=$T_TOP/pipeline.sh
D=$T_OUT
python3 "$T_TOP/tests/gen/kmod-pair.py" "$D" 3000 || { not_ok "generate the kernel and module"; test_done; }
for f in base base2 mod; do
	gcc -O2 -gdwarf-5 -c -o "$D/$f.o" "$D/$f.c" 2>"$D/$f.cc" || { not_ok "build $f.o" "$(tail -3 "$D/$f.cc")"; test_done; }
done
export BTFPIPE_BIN=$T_BIN
check "base BTF" "$P" -o "$D/base.btf" "$D/base.o"
check "another build of the base" "$P" -o "$D/base2.btf" "$D/base2.o"
check "the module, plain split BTF" "$P" --btf-base "$D/base.btf" -o "$D/mod.btf" "$D/mod.o"
check "the module, distilled (-o)" "$P" --features default,distilled_base --btf-base "$D/base.btf" -o "$D/modd.btf" "$D/mod.o"
check "the module, distilled, -j2" "$P" -j2 --features default,distilled_base --btf-base "$D/base.btf" -o "$D/modd2.btf" "$D/mod.o"
cp "$D/mod.o" "$D/modj.o"
check "the module, distilled (pahole front -J)" "$P" -J --btf_features=default,distilled_base --btf_base "$D/base.btf" "$D/modj.o"

# (d)
check_same "-j1 and -j2: the same split BTF" "$D/modd.btf" "$D/modd2.btf"
check_same "-j1 and -j2: the same distilled base" "$D/modd.btf.base" "$D/modd2.btf.base"
objcopy --dump-section .BTF="$D/j.btf" --dump-section .BTF.base="$D/j.base" "$D/modj.o" "$D/modj.copy" ||
	not_ok "-J: the ELF has .BTF and .BTF.base"
check_same "-J: .BTF = -o OUT" "$D/j.btf" "$D/modd.btf"
check_same "-J: .BTF.base = OUT.base" "$D/j.base" "$D/modd.btf.base"
for run in store hit; do
	rm -f "$D/c.btf" "$D/c.btf.base"
	check "cache: $run" "$P" --cache "$D/cache" --features default,distilled_base --btf-base "$D/base.btf" \
		-o "$D/c.btf" "$D/mod.o"
	check_same "cache $run: the split BTF" "$D/c.btf" "$D/modd.btf"
	check_same "cache $run: the distilled base" "$D/c.btf.base" "$D/modd.btf.base"
done

# (c)
check "libbpf 1.1 parses the distilled base" "$BTFCHECK" "$D/modd.btf.base"
check "libbpf 1.1: the split BTF over it, dedup removes nothing" "$BTFCHECK" --dedup --base "$D/modd.btf.base" "$D/modd.btf"
if have bpftool; then
	bpftool btf dump file "$D/modd.btf.base" >"$D/dbase.txt"
	odd=$(grep '^\[' "$D/dbase.txt" | grep -Ev "^\[[0-9]+\] (INT|FLOAT|FWD) '[^(]|^\[[0-9]+\] (STRUCT|UNION|ENUM) '[^(][^']*' .*vlen=0$")
	n=$(grep -c '^\[' "$D/dbase.txt")
	[ -z "$odd" ] && [ "$n" -gt 100 ] && ok "the distilled base: $n named INT/FLOAT/FWD and empty STRUCT/UNION/ENUM" ||
		not_ok "the distilled base: named INT/FLOAT/FWD and empty STRUCT/UNION/ENUM only" "$n types; $odd"
fi

# (e)
rm -f "$D/nb.btf.base"
check "no base: distilled_base writes plain BTF" "$P" --features default,distilled_base -o "$D/nb.btf" "$D/mod.o"
[ ! -e "$D/nb.btf.base" ] && ok "no base: no OUT.base" || not_ok "no base: no OUT.base"

# (a), (b)
libbpf18 "distilled base: libbpf 1.8 oracle" || test_done
same_as_libbpf() { # LABEL BASE PLAIN OURS: our sections = libbpf 1.8's btf__distill_base()
	"$T_BTF18" --distill "$2" "$3" "$D/lib" || { not_ok "$1: libbpf 1.8 distills it"; return; }
	if tail -c +33 "$D/lib.base" | cmp -s - <(tail -c +25 "$4.base") &&
		tail -c +33 "$D/lib.split" | cmp -s - <(tail -c +25 "$4"); then
		ok "$1: byte for byte libbpf 1.8's btf__distill_base()"
	else
		not_ok "$1: byte for byte libbpf 1.8's btf__distill_base()" \
			"$(tail -c +33 "$D/lib.base" | cmp - <(tail -c +25 "$4.base")) $(tail -c +33 "$D/lib.split" | cmp - <(tail -c +25 "$4"))"
	fi
}
same_as_libbpf "(a) generated module" "$D/base.btf" "$D/mod.btf" "$D/modd.btf"
"$T_BTF18" --dump --base "$D/base.btf" "$D/mod.btf" | grep -v '^types' >"$D/plain.dump"
for b in base base2; do
	if "$T_BTF18" --dump --base "$D/$b.btf" "$D/modj.o" >"$D/reloc-$b.dump" 2>"$D/reloc-$b.err"; then
		ok "(b) libbpf 1.8 relocates the module onto $b"
		check_same "(b) relocated onto $b: the types of the plain split BTF" "$D/plain.dump" <(grep -v '^types' "$D/reloc-$b.dump")
	else
		not_ok "(b) libbpf 1.8 relocates the module onto $b" "$(cat "$D/reloc-$b.err")"
	fi
done
[ "$(wc -l <"$D/plain.dump")" -gt 1000 ] && ok "(b) the module has $(wc -l <"$D/plain.dump") named types" ||
	not_ok "(b) the module has its named types" "$(wc -l <"$D/plain.dump")"

# (g)
mods=${BTFPIPE_DEBUG_MODULES:-}
if [ -n "$mods" ] && [ -d "$mods" ]; then
	ver=$(basename "$mods")
	vml=$(cd "$mods/../../.." && pwd)/boot/vmlinux-$ver
	n=0
	for m in $(find "$mods" -name '*.ko' | sort | awk 'NR % 97 == 1' | head -20); do
		b=$(basename "$m" .ko)
		"$P" --btf-base "$vml" -o "$D/$b.btf" "$m" 2>/dev/null &&
			"$P" --features default,distilled_base --btf-base "$vml" -o "$D/$b.d.btf" "$m" ||
			{ not_ok "(g) $b: encode"; continue; }
		same_as_libbpf "(g) $b" "$vml" "$D/$b.btf" "$D/$b.d.btf"
		n=$((n + 1))
	done
else
	skip "(g) distribution modules" "BTFPIPE_DEBUG_MODULES not set"
fi

# (f)
pahole_master "distilled base: pahole master" || test_done
# Over pahole master's own base: it writes multi-dimensional arrays flat
# and ours nested, so over our base its module would repeat every struct
# with an array (ours follows a flat base's arrays).
check "pahole master: the base" "$T_PAHOLE_MASTER" --btf_features=default --btf_encode_detached="$D/pm-base.btf" "$D/base.o"
cp "$D/mod.o" "$D/modp.o"
cp "$D/mod.o" "$D/modq.o"
check "pahole master: -J distilled_base" "$T_PAHOLE_MASTER" -J --btf_features=default,distilled_base \
	--btf_base "$D/pm-base.btf" "$D/modp.o"
check "ours: -J distilled_base over pahole master's base" "$P" -J --btf_features=default,distilled_base \
	--btf_base "$D/pm-base.btf" "$D/modq.o"
if "$T_BTF18" --dump --base "$D/pm-base.btf" "$D/modp.o" >"$D/pm.dump" 2>"$D/pm.err" &&
	"$T_BTF18" --dump --base "$D/pm-base.btf" "$D/modq.o" >"$D/pq.dump" 2>>"$D/pm.err"; then
	check_same "(f) pahole master's and ours, relocated: the same types" <(grep -v '^types' "$D/pm.dump") \
		<(grep -v '^types' "$D/pq.dump")
else
	not_ok "(f) libbpf 1.8 relocates pahole master's module and ours" "$(cat "$D/pm.err")"
fi
test_done
