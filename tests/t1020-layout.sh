#!/usr/bin/env bash
# t1020-layout: the feature layout (pahole 1.31's) adds the BTF kind layout
# section: a 32-byte header, then types, layout, strings.
#  (a) libbpf 1.8 (../shared/anchors) parses it, and the layout is the one
#      libbpf 1.8 writes itself (btf18-check); the types are the same as
#      without it, both through btf-emit and through pipeline.sh's pahole
#      front (-J into the ELF, --btf_encode_detached);
#  (b) Debian's libbpf 1.1 still parses it (a gap before the strings);
#  (c) only when asked: without it the header is 24 bytes and the running
#      kernel loads the BTF; a kernel older than the layout refuses the
#      longer header ("Unsupported btf_header"), which is why;
#  (d) never in split BTF: over a base the feature is ignored, as pahole
#      ignores it (it adds a layout only when there is no base);
#  (e) a base with a layout is read as a base (modules of a kernel built
#      with layout), and gives the same split BTF as the base without.
. "$(dirname "$0")/lib.sh"

BTFCHECK="$T_BIN/tools/btfcheck"
[ -x "$BTFCHECK" ] || BTFCHECK="$T_TOP/bin/tools/btfcheck"
D=$T_OUT
build_sample gcc -O2 5 "$D" gcc "layout" || test_done
elf=$D/sample
hdr_len() { od -An -tu4 -j4 -N4 "$1" | tr -d ' '; }

check "btf-emit: --features default,layout" "$T_TOP/pipeline.sh" --features default,layout -o "$D/l.btf" "$elf"
check "btf-emit: default (no layout)" "$T_TOP/pipeline.sh" -o "$D/n.btf" "$elf"
[ "$(hdr_len "$D/l.btf")" = 32 ] && ok "layout: header of 32 bytes" || not_ok "layout: header of 32 bytes" "$(hdr_len "$D/l.btf")"
[ "$(hdr_len "$D/n.btf")" = 24 ] && ok "no layout: header of 24 bytes" || not_ok "no layout: header of 24 bytes" "$(hdr_len "$D/n.btf")"
cp "$elf" "$D/j.elf"
check "pahole front: -J --btf_features=default,layout" "$T_TOP/pipeline.sh" -J --btf_features=default,layout "$D/j.elf"
check "pahole front: --btf_encode_detached, layout" "$T_TOP/pipeline.sh" --btf_features=default,layout \
	--btf_encode_detached="$D/d.btf" "$elf"

# (b), (c)
check "libbpf 1.1 parses it" "$BTFCHECK" "$D/l.btf"
if "$BTFCHECK" --load "$D/n.btf" >"$D/load-n.txt" 2>&1; then
	ok "without layout: the kernel loads it"
	if "$BTFCHECK" --load "$D/l.btf" >"$D/load-l.txt" 2>&1; then
		ok "with layout: this kernel knows the layout and loads it"
	else
		check_grep "with layout: this kernel (older) refuses the longer header" "Unsupported btf_header" "$D/load-l.txt"
	fi
else
	[ $? -eq 77 ] && skip "kernel load" "no bpf() here" || not_ok "without layout: the kernel loads it" "$(cat "$D/load-n.txt")"
fi

# (d), (e): a module over a base, the base with and without a layout.
mkdir -p "$D/m"
cat >"$D/m/base.c" <<'C'
struct point { int x, y; };
struct shape { struct point at; const char *name; struct shape *next; };
int base_fn(struct shape *s) { return s->at.x; }
C
cat >"$D/m/mod.c" <<'C'
struct point { int x, y; };
struct shape { struct point at; const char *name; struct shape *next; };
struct mod_only { struct shape *s; long n; };
int mod_fn(struct mod_only *m) { return m->s->at.y + (int)m->n; }
C
for f in base mod; do gcc -O2 -g -c -o "$D/m/$f.o" "$D/m/$f.c" || not_ok "build $f.o"; done
check "base with layout" "$T_TOP/pipeline.sh" --features default,layout -o "$D/m/base-l.btf" "$D/m/base.o"
check "base without" "$T_TOP/pipeline.sh" -o "$D/m/base-n.btf" "$D/m/base.o"
check "module over the layout base, layout asked" "$T_TOP/pipeline.sh" --features default,layout \
	--btf-base "$D/m/base-l.btf" -o "$D/m/mod-l.btf" "$D/m/mod.o"
check "module over the plain base" "$T_TOP/pipeline.sh" --btf-base "$D/m/base-n.btf" -o "$D/m/mod-n.btf" "$D/m/mod.o"
[ "$(hdr_len "$D/m/mod-l.btf")" = 24 ] && ok "split BTF: no layout though asked" ||
	not_ok "split BTF: no layout though asked" "hdr_len $(hdr_len "$D/m/mod-l.btf")"
check_same "split BTF over a layout base = over the plain base" "$D/m/mod-l.btf" "$D/m/mod-n.btf"
check "libbpf 1.1 parses the module over the layout base" "$BTFCHECK" --base "$D/m/base-l.btf" "$D/m/mod-l.btf"

# (a)
libbpf18 "layout: libbpf 1.8 oracle" || test_done
for f in l.btf j.elf d.btf m/base-l.btf; do
	if "$T_BTF18" --dump "$D/$f" >"$D/$f.18" 2>"$D/$f.18err"; then ok "libbpf 1.8 parses $f"
	else not_ok "libbpf 1.8 parses $f" "$(cat "$D/$f.18err")"; continue; fi
	check_grep "$f: the layout is libbpf 1.8's" "^layout libbpf$" "$D/$f.18"
done
"$T_BTF18" --dump "$D/n.btf" >"$D/n.btf.18"
check_same "the types with layout = without" <(grep -v '^layout' "$D/l.btf.18") <(grep -v '^layout' "$D/n.btf.18")
check_same "pahole front -J: the same types" <(grep -v '^layout' "$D/j.elf.18") <(grep -v '^layout' "$D/n.btf.18")
test_done
