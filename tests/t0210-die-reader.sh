#!/usr/bin/env bash
# t0210-die-reader: dwarf-extract's own DIE reader (stages/dwarf-extract/
# die_reader.c) against libdw. The reader reads tags, children, siblings and
# the common attribute forms from .debug_info's bytes; --libdw-only reads
# every DIE through libdw instead. The two must give byte-identical .cus:
#  (a) gcc and clang-19, DWARF 4 and 5, -O0 and -O2, on the sample, merge
#      and lto fixtures (not LTO-linked), and the tags fixture (clang: its
#      btf_decl_tag/btf_type_tag annotation DIEs);
#  (b) the reader really ran: --stats counts every unit as a reader unit by
#      default and none with --libdw-only (or (a) would compare libdw with
#      itself);
#  (c) what the reader leaves to libdw, per DIE or per value: LTO (gcc -flto,
#      clang -flto=thin: DW_FORM_ref_addr into other units), C++ (g++ and
#      clang++-19), a relocatable .o (libdwfl's relocated sections), and
#      compressed sections (gcc -gz: the reader reads inflate.c's plain copy);
#  (d) what it leaves to libdw per unit: DWARF 3: no reader unit, and still
#      the same .cus;
#  (e) relocatable objects are relocated by reloc.c (x86-64 RELA), by
#      libdwfl with --libdw-only, to the same .cus (compressed sections, gcc
#      -gz -c, too: inflate.c uncompresses them first); one with a TLS
#      relocation is left to libdwfl
#      either way.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"

# reader_units FILE: the reader_units count of a --stats text on stderr.
reader_units() { sed -n 's/^dwarf-extract: reader_units *//p' "$1"; }

# reloc_own FILE: the reloc_own count of a --stats text ("" for no ET_REL).
reloc_own() { sed -n 's/^dwarf-extract: reloc_own *//p' "$1"; }

# same_both DESC ELF WANT [RELOC]: extract ELF both ways; the .cus must be the
# same bytes. WANT is "all" (every unit went through the reader) or "none".
# RELOC, for a relocatable ELF: "own" (reloc.c relocated it, libdwfl did with
# --libdw-only) or "libdwfl" (libdwfl did both times).
same_both() {
	local desc=$1 elf=$2 want=$3 reloc=${4:-} d
	d="$T_OUT/$(echo "$desc" | tr -c 'A-Za-z0-9\n' '_')"
	mkdir -p "$d"
	if ! "$EXTRACT" -q -j2 --stats -o "$d/reader.cus" "$elf" 2>"$d/reader.err" ||
	   ! "$EXTRACT" -q -j2 --stats --libdw-only -o "$d/libdw.cus" "$elf" 2>"$d/libdw.err"; then
		not_ok "$desc: extract" "$(cat "$d/reader.err" "$d/libdw.err" 2>/dev/null)"
		return
	fi
	check_same "$desc: reader and libdw give the same .cus" "$d/reader.cus" "$d/libdw.cus"
	local units r l
	units=$(sed -n 's/^dwarf-extract: units *//p' "$d/reader.err")
	r=$(reader_units "$d/reader.err")
	l=$(reader_units "$d/libdw.err")
	if [ "$want" = all ]; then
		if [ -n "$units" ] && [ "$units" -gt 0 ] && [ "$r" = "$units" ] && [ "$l" = 0 ]; then
			ok "$desc: the reader read all $units units (none with --libdw-only)"
		else
			not_ok "$desc: the reader read all units" "units=$units reader=$r libdw-only=$l"
		fi
	else
		if [ -n "$units" ] && [ "$units" -gt 0 ] && [ "$r" = 0 ] && [ "$l" = 0 ]; then
			ok "$desc: the reader left all $units units to libdw"
		else
			not_ok "$desc: the reader left every unit to libdw" "units=$units reader=$r libdw-only=$l"
		fi
	fi
	[ -n "$reloc" ] || return 0
	r=$(reloc_own "$d/reader.err")
	l=$(reloc_own "$d/libdw.err")
	if [ "$reloc" = own ] && [ "$r" = 1 ] && [ "$l" = 0 ]; then
		ok "$desc: reloc.c relocated it (libdwfl with --libdw-only)"
	elif [ "$reloc" = libdwfl ] && [ "$r" = 0 ] && [ "$l" = 0 ]; then
		ok "$desc: left to libdwfl to relocate"
	else
		not_ok "$desc: relocated by $reloc" "reloc_own: default '$r', --libdw-only '$l'"
	fi
}

# build DIR NAME CC FLAGS...: tests/fixtures/NAME/*.c into DIR/NAME.
build() {
	local dir=$1 name=$2 cc=$3; shift 3
	mkdir -p "$dir"
	(cd "$T_TOP" && "$cc" "$@" -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$dir/$name" \
		tests/fixtures/"$name"/*.c) >"$dir/$name.log" 2>&1
}

# (a), (b)
for cc in gcc clang-19; do
	if ! have "$cc"; then
		skip "$cc fixtures" "$cc not installed"
		continue
	fi
	for dw in 4 5; do
		for opt in -O0 -O2; do
			for name in sample merge lto tags; do
				[ "$name" = tags ] && [ "$cc" = gcc ] && continue # clang's annotations
				dir="$T_OUT/$cc-dwarf$dw$opt"
				if ! build "$dir" "$name" "$cc" "$opt" "-gdwarf-$dw"; then
					not_ok "$cc $opt dwarf$dw $name: build" "$(cat "$dir/$name.log")"
					continue
				fi
				same_both "$cc $opt dwarf$dw $name" "$dir/$name" all
			done
		done
	done
done

# (c) LTO: cross-unit references.
if build "$T_OUT/gcc-lto" lto gcc -O2 -g -flto -flto-partition=one; then
	same_both "gcc -flto lto" "$T_OUT/gcc-lto/lto" all
else
	not_ok "gcc -flto: build" "$(cat "$T_OUT/gcc-lto/lto.log")"
fi
if have clang-19 && have ld.lld-19; then
	if build "$T_OUT/clang-lto" lto clang-19 -O2 -g -flto=thin -fuse-ld=lld-19; then
		same_both "clang-19 -flto=thin lto" "$T_OUT/clang-lto/lto" all
	else
		not_ok "clang-19 -flto=thin: build" "$(cat "$T_OUT/clang-lto/lto.log")"
	fi
else
	skip "clang-19 -flto=thin" "clang-19 or ld.lld-19 not installed"
fi

# (c) C++.
for cxx in g++ clang++-19; do
	if ! have "$cxx"; then
		skip "$cxx refs.cpp" "$cxx not installed"
		continue
	fi
	dir="$T_OUT/$cxx-cpp"
	mkdir -p "$dir"
	if (cd "$T_TOP" && "$cxx" -O1 -g -c -fdebug-prefix-map="$T_TOP"=/btfpipe \
		-o "$dir/refs.o" tests/fixtures/hard/refs.cpp) >"$dir/log" 2>&1; then
		same_both "$cxx refs.cpp (.o)" "$dir/refs.o" all own
	else
		not_ok "$cxx refs.cpp: build" "$(cat "$dir/log")"
	fi
done

# (c), (e) Relocatable objects: relocated by reloc.c, or by libdwfl.
obj() { # obj DESC SRC CC FLAGS...: tests/fixtures/SRC compiled with -c, into $OBJ
	local desc=$1 src=$2 cc=$3; shift 3
	local dir="$T_OUT/obj-$(echo "$desc" | tr -c 'A-Za-z0-9\n' '_')"
	mkdir -p "$dir"
	OBJ="$dir/$(basename "$src" .c).o"
	if ! (cd "$T_TOP" && "$cc" "$@" -c -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$OBJ" \
		tests/fixtures/"$src") >"$dir/log" 2>&1; then
		not_ok "$desc: build" "$(cat "$dir/log")"
		return 1
	fi
}
obj "gcc -c tree.o" lto/tree.c gcc -O2 -g && same_both "gcc -c tree.o" "$OBJ" all own
if have clang-19; then
	obj "clang-19 -c tree.o" lto/tree.c clang-19 -O2 -g &&
		same_both "clang-19 -c tree.o" "$OBJ" all own
else
	skip "clang-19 -c tree.o" "clang-19 not installed"
fi
# shapes.c has a thread-local variable: an R_X86_64_DTPOFF32 relocation.
obj "gcc -c shapes.o" sample/shapes.c gcc -O2 -g && same_both "gcc -c shapes.o (TLS)" "$OBJ" all libdwfl
# Compressed: inflate.c stores the sections plainly first, so reloc.c relocates it.
obj "gcc -gz -c tree.o" lto/tree.c gcc -O2 -g -gz && same_both "gcc -gz -c tree.o" "$OBJ" all own

# (c) Compressed sections, decompressed by libelf before anyone reads them.
if build "$T_OUT/gcc-gz" sample gcc -O2 -g -gz; then
	same_both "gcc -gz sample" "$T_OUT/gcc-gz/sample" all
else
	not_ok "gcc -gz: build" "$(cat "$T_OUT/gcc-gz/sample.log")"
fi

# (d) Units the reader does not take.
if build "$T_OUT/gcc-dwarf3" sample gcc -O2 -gdwarf-3; then
	same_both "gcc -gdwarf-3 sample" "$T_OUT/gcc-dwarf3/sample" none
else
	not_ok "gcc -gdwarf-3: build" "$(cat "$T_OUT/gcc-dwarf3/sample.log")"
fi
test_done
