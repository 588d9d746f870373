#!/usr/bin/env bash
# tests/tools/samebytes.sh OLD_BIN NEW_BIN [OUTDIR]: the proof a refactoring
# keeps behaviour: both builds of the stages run on the same inputs and every
# file they write must be the same bytes.
#
# Inputs: the fixtures (sample with gcc -O0/-O2 and clang-19, funcsel, merge,
# lto, tags, hard's C part), Debian's cloud vmlinux and 25 of its modules
# (split over that vmlinux's BTF), when the -dbg package is installed
# (BTFPIPE_VMLINUX and BTFPIPE_MODDIR choose others). Per input, per build:
# the .cus, the .graph, the raw BTF with the default features and with every
# feature, the --skip-report, a copy of the ELF with .BTF (fixtures and
# modules), and for modules the BTF with --arrays flat and --libbpf-dedup.
# --stats output holds times and is not compared.
#
# Not part of `make test`: it compares two builds, and the vmlinux and its
# modules take about a minute per build. Prints one line per differing file
# and "same bytes: N files" at the end; exits 1 on any difference.
set -u
old=$(cd "${1:?OLD_BIN}" && pwd) new=$(cd "${2:?NEW_BIN}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${3:-$top/tests/out/samebytes}
rm -rf "$out" && mkdir -p "$out/in" "$out/old" "$out/new"
export BTFPIPE_JOBS_EXACT=1
unset BTFPIPE_CACHE_DIR
vmlinux=${BTFPIPE_VMLINUX:-$(ls /usr/lib/debug/boot/vmlinux-* 2>/dev/null | sort -V | tail -1)}
moddir=${BTFPIPE_MODDIR:-}
if [ -z "$moddir" ] && [ -n "$vmlinux" ]; then
	moddir=/usr/lib/debug/lib/modules/${vmlinux##*/vmlinux-}
fi
all=$("$new/btf-emit" --supported-features | tr -s ' \n' ',' | sed 's/,$//')

# fixture NAME CC OPT DWARF [EXTRA...]: compile tests/fixtures/NAME/*.c.
fixture() {
	local name=$1 cc=$2 opt=$3 dw=$4
	shift 4
	command -v "$cc" >/dev/null || return 0
	(cd "$top" && "$cc" "$opt" "-gdwarf-$dw" -fno-omit-frame-pointer "$@" \
		-o "$out/in/$name-$cc$opt" tests/fixtures/"$name"/*.c) ||
		{ echo "cannot build fixture $name with $cc" >&2; exit 2; }
	inputs+=("$out/in/$name-$cc$opt")
}

# run BIN DIR ELF [BASE]: every output of the three stages for ELF.
run() {
	local bin=$1 d=$2 elf=$3 base=${4:-} n
	n=$(basename "$elf")
	local b=(${base:+--btf-base "$base"})
	"$bin/dwarf-extract" -j2 -q -o "$d/$n.cus" "$elf" &&
		"$bin/dedup-merge" -j2 -q -o "$d/$n.graph" "$d/$n.cus" &&
		"$bin/btf-emit" -j2 -q --elf "$elf" "${b[@]}" --skip-report "$d/$n.skips" \
			-o "$d/$n.btf" "$d/$n.graph" &&
		"$bin/btf-emit" -j2 -q --elf "$elf" "${b[@]}" --features "$all" \
			-o "$d/$n.all.btf" "$d/$n.graph" || return 1
	[ "$elf" = "$vmlinux" ] && return 0
	"$bin/btf-emit" -j2 -q --elf "$elf" "${b[@]}" --elf-out "$d/$n.elf" "$d/$n.graph" || return 1
	[ -n "$base" ] || return 0
	"$bin/btf-emit" -j2 -q --elf "$elf" "${b[@]}" --arrays flat -o "$d/$n.flat.btf" "$d/$n.graph" &&
		"$bin/btf-emit" -j2 -q --elf "$elf" "${b[@]}" --libbpf-dedup -o "$d/$n.libbpf.btf" "$d/$n.graph"
}

inputs=()
fixture sample gcc -O0 5
fixture sample gcc -O2 4
fixture sample clang-19 -O0 5
# funcsel as t1000 builds it: one program, and two objects (kfunc, percpu).
fs=()
for f in main weak strong inl_a inl_b static_a static_b clone unnamed kfunc stack7 packed; do
	(cd "$top" && gcc -O2 -gdwarf-5 -std=gnu2x -c -o "$out/in/fs-$f.o" tests/fixtures/funcsel/$f.c) &&
		fs+=("$out/in/fs-$f.o") || exit 2
done
gcc -o "$out/in/funcsel" "${fs[@]}" && inputs+=("$out/in/funcsel" "$out/in/fs-kfunc.o") || exit 2
(cd "$top" && gcc -O2 -gdwarf-5 -c -o "$out/in/fs-percpu.o" tests/fixtures/funcsel/percpu.c) &&
	inputs+=("$out/in/fs-percpu.o") || exit 2
fixture merge gcc -O2 5
fixture lto gcc -O2 5 -flto
fixture lto clang-19 -O2 5 -flto=thin -fuse-ld=lld-19
fixture tags clang-19 -O2 5
(cd "$top" && gcc -O2 -gdwarf-5 -o "$out/in/hard-oddbase" tests/fixtures/hard/oddbase.c 2>/dev/null) &&
	inputs+=("$out/in/hard-oddbase")

fail=0
for bin in old new; do
	for elf in "${inputs[@]}"; do
		run "${!bin}" "$out/$bin" "$elf" || { echo "$bin: $elf: a stage failed"; fail=1; }
	done
done
if [ -n "$vmlinux" ] && [ -f "$vmlinux" ]; then
	mods=$(cd "$moddir" && find . -name '*.ko' | sort | awk 'NR % 40 == 1' | head -25)
	for bin in old new; do
		run "${!bin}" "$out/$bin" "$vmlinux" || { echo "$bin: $vmlinux: a stage failed"; fail=1; }
		for m in $mods; do
			run "${!bin}" "$out/$bin" "$moddir/$m" "$out/$bin/$(basename "$vmlinux").btf" ||
				{ echo "$bin: $m: a stage failed"; fail=1; }
		done
	done
else
	echo "note: no vmlinux with DWARF (install linux-image-cloud-amd64-dbg): fixtures only"
fi

n=0
for f in "$out/old"/*; do
	g=$out/new/${f##*/}
	n=$((n + 1))
	cmp -s "$f" "$g" || { echo "differs: ${f##*/}"; fail=1; }
done
[ "$(ls "$out/old" | wc -l)" = "$(ls "$out/new" | wc -l)" ] || { echo "not the same files"; fail=1; }
echo "same bytes: $n files$([ $fail = 0 ] || echo ', BUT SOME DIFFER')"
exit $fail
