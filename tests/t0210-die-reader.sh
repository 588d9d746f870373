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
#      compressed sections (gcc -gz: the reader reads what libdw decompressed);
#  (d) what it leaves to libdw per unit: DWARF 3: no reader unit, and still
#      the same .cus.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"

# reader_units FILE: the reader_units count of a --stats text on stderr.
reader_units() { sed -n 's/^dwarf-extract: reader_units *//p' "$1"; }

# same_both DESC ELF WANT: extract ELF both ways; the .cus must be the same
# bytes. WANT is "all" (every unit went through the reader) or "none".
same_both() {
	local desc=$1 elf=$2 want=$3 d
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
		same_both "$cxx refs.cpp (.o)" "$dir/refs.o" all
	else
		not_ok "$cxx refs.cpp: build" "$(cat "$dir/log")"
	fi
done

# (c) A relocatable object: libdwfl applied its relocations.
dir="$T_OUT/gcc-obj"
mkdir -p "$dir"
if (cd "$T_TOP" && gcc -O2 -g -c -fdebug-prefix-map="$T_TOP"=/btfpipe -o "$dir/shapes.o" \
	tests/fixtures/sample/shapes.c) >"$dir/log" 2>&1; then
	same_both "gcc -c shapes.o" "$dir/shapes.o" all
else
	not_ok "gcc -c shapes.o: build" "$(cat "$dir/log")"
fi

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
