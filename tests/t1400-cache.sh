#!/usr/bin/env bash
# t1400-cache: dwarf-extract's extracted-CU cache (format/CU-CACHE.md).
# A hit gives exactly a miss's bytes (gcc, clang, DWARF 4 and 5, LTO, .o);
# a relinked program with one changed file hits on every other CU; several
# extractors racing on one directory lose and corrupt nothing; a damaged
# entry is a miss and is repaired; the size limit evicts oldest first;
# read-only mode stores nothing; a store that fails warns and changes nothing.
. "$(dirname "$0")/lib.sh"

X="$T_BIN/dwarf-extract"
# Every hit below is also extracted and compared by dwarf-extract itself.
export BTFPIPE_CACHE_VERIFY=1
unset BTFPIPE_CACHE_DIR BTFPIPE_CACHE_READONLY BTFPIPE_CACHE_MAX_SIZE

# count WORD FILE [WHAT]: the number before WORD on the "this run" line of
# --cache-stats for WHAT ("extracted CUs", or "stage outputs").
count() { sed -n "s/.*(${3:-extracted CUs}): this run:.* \([0-9]*\) $1.*/\1/p" "$2" | head -1; }
# entries DIR: the cache's entry files (32 hex digits), sorted.
entries() { find "$1" -type f | grep -E '/[0-9a-f]{32}$' | sort; }
# cus_units FILE.cus: how many CUs the file holds.
cus_units() { "$X" --dump "$1" | sed -n 's/.* cus=\([0-9]*\).*/\1/p'; }

# expect_counts DESC ERRFILE HITS MISSES
expect_counts() {
	local h m
	h=$(count hits "$2") m=$(count misses "$2")
	if [ "$h" = "$3" ] && [ "$m" = "$4" ]; then ok "$1: $h hits, $m misses"; else
		not_ok "$1: wanted $3 hits, $4 misses" "$(cat "$2")"; fi
}

# roundtrip NAME ELF: uncached, cold and warm extractions give the same bytes,
# and the warm one hits every cacheable CU.
roundtrip() {
	local name=$1 elf=$2 c="$T_OUT/cache-$1"
	rm -rf "$c"
	"$X" -q -j2 -o "$T_OUT/$name.plain.cus" "$elf" || { not_ok "$name: uncached extract"; return; }
	"$X" -q -j2 --cache "$c" --cache-stats -o "$T_OUT/$name.cold.cus" "$elf" 2>"$T_OUT/$name.cold.err" ||
		{ not_ok "$name: cold extract" "$(cat "$T_OUT/$name.cold.err")"; return; }
	"$X" -q -j2 --cache "$c" --cache-stats -o "$T_OUT/$name.warm.cus" "$elf" 2>"$T_OUT/$name.warm.err" ||
		{ not_ok "$name: warm extract" "$(cat "$T_OUT/$name.warm.err")"; return; }
	check_same "$name: cold cache = no cache" "$T_OUT/$name.plain.cus" "$T_OUT/$name.cold.cus"
	check_same "$name: warm cache = no cache" "$T_OUT/$name.plain.cus" "$T_OUT/$name.warm.cus"
	local n u h
	n=$(cus_units "$T_OUT/$name.plain.cus")
	if [ "$(od -An -tx1 -j16 -N1 "$elf" | tr -d ' ')" = 01 ]; then
		# A relocatable file: the whole .cus is reused, nothing is opened.
		h=$(count hits "$T_OUT/$name.warm.err" "stage outputs")
		[ "$h" = 1 ] && ok "$name: warm run reuses the whole .cus of the unchanged .o" ||
			not_ok "$name: warm run reuses the whole .cus of the unchanged .o" "$(cat "$T_OUT/$name.warm.err")"
		return
	fi
	u=$(count uncacheable "$T_OUT/$name.warm.err")
	h=$(count hits "$T_OUT/$name.warm.err")
	if [ -n "$h" ] && [ "$h" -gt 0 ] && [ $((h + u)) -eq "$n" ]; then
		ok "$name: warm run hits every cacheable CU ($h of $n, $u uncacheable)"
	else
		not_ok "$name: warm run hits every cacheable CU ($n CUs)" "$(cat "$T_OUT/$name.warm.err")"
	fi
}

build_fixture "$GCC" -O2 5 "$T_OUT/gcc5" sample && roundtrip gcc-dwarf5 "$T_OUT/gcc5/sample"
build_fixture "$GCC" -O2 4 "$T_OUT/gcc4" sample && roundtrip gcc-dwarf4 "$T_OUT/gcc4/sample"
build_fixture "$GCC" -O2 5 "$T_OUT/gcc5" merge && roundtrip gcc-merge "$T_OUT/gcc5/merge"
(cd "$T_TOP" && g++ -O2 -g -o "$T_OUT/refs" tests/fixtures/hard/refs.cpp) && roundtrip gxx "$T_OUT/refs"
build_fixture "$GCC" -O0 5 "$T_OUT/gcc0" sample && roundtrip gcc-O0 "$T_OUT/gcc0/sample"
if have "$CLANG"; then
	build_fixture "$CLANG" -O2 5 "$T_OUT/clang5" sample && roundtrip clang-dwarf5 "$T_OUT/clang5/sample"
	build_fixture "$CLANG" -O2 4 "$T_OUT/clang4" sample && roundtrip clang-dwarf4 "$T_OUT/clang4/sample"
	build_fixture "$CLANG" -O2 5 "$T_OUT/clang5" tags && roundtrip clang-tags "$T_OUT/clang5/tags"
	(cd "$T_TOP" && "$CLANG" -O2 -g -flto=thin -fuse-ld=lld-19 -o "$T_OUT/lto-clang" tests/fixtures/lto/*.c) &&
		roundtrip clang-thin-lto "$T_OUT/lto-clang"
else
	skip "clang fixtures" "$CLANG not installed"
fi
(cd "$T_TOP" && "$GCC" -O2 -g -flto -o "$T_OUT/lto-gcc" tests/fixtures/lto/*.c) && roundtrip gcc-lto "$T_OUT/lto-gcc"

# Relocatable objects: the key reads libdwfl's relocated DWARF. Two objects
# whose only difference is a string must not share a key (with unrelocated
# .debug_info every strp offset would read 0 and they would).
printf 'struct probe { int alpha; long beta; };\nstruct probe g_probe;\n' >"$T_OUT/o1.c"
printf 'struct probe { int alpha; long gamma; };\nstruct probe g_probe;\n' >"$T_OUT/o2.c"
"$GCC" -O2 -g -c -o "$T_OUT/o1.o" "$T_OUT/o1.c" && "$GCC" -O2 -g -c -o "$T_OUT/o2.o" "$T_OUT/o2.c"
roundtrip object "$T_OUT/o1.o"
check "a .o differing only in a member name is a miss, not o1's entry" \
	"$X" -q --cache "$T_OUT/cache-object" -o "$T_OUT/o2.cached.cus" "$T_OUT/o2.o"
"$X" -q -o "$T_OUT/o2.plain.cus" "$T_OUT/o2.o"
check_same "o2 through o1's cache = o2 uncached" "$T_OUT/o2.plain.cus" "$T_OUT/o2.cached.cus"

# ---- relink: one changed file, every other CU hits ----
gen="$T_OUT/relink"
"$T_TOP/tests/gen/many-cus.sh" "$gen" 40 - >/dev/null
relink_build() { # CC: compile every unit to .o (as a build would), link prog
	local cc=$1 d="$gen/$1"
	mkdir -p "$d"
	for f in "$gen"/src/*.c; do
		local o="$d/$(basename "$f" .c).o"
		[ "$o" -nt "$f" ] || "$cc" -O2 -g -c -o "$o" "$f" || return 1
	done
	"$cc" -o "$d/prog" "$d"/*.o
}
relink_case() {
	local cc=$1 c="$gen/cache-$1"
	rm -rf "$gen/src" "$gen/$cc" "$c"
	"$T_TOP/tests/gen/many-cus.sh" "$gen" 40 - >/dev/null
	relink_build "$cc" || { not_ok "relink $cc: build"; return; }
	"$X" -q --cache "$c" -o "$gen/$cc.0.cus" "$gen/$cc/prog" || { not_ok "relink $cc: first extract"; return; }
	# A statement in one unit's first function: its code, its line table
	# and everything after it in the linked file move.
	sed -i '0,/^{/s//{\n\tvolatile int relink_probe = 7; (void)relink_probe;/' "$gen/src/u017.c"
	touch -d '+1 sec' "$gen/src/u017.c"
	relink_build "$cc" || { not_ok "relink $cc: rebuild"; return; }
	"$X" -q -o "$gen/$cc.plain.cus" "$gen/$cc/prog"
	"$X" -q -j2 --cache "$c" --cache-stats -o "$gen/$cc.warm.cus" "$gen/$cc/prog" 2>"$gen/$cc.err"
	check_same "relink $cc: warm cache = no cache" "$gen/$cc.plain.cus" "$gen/$cc.warm.cus"
	local n
	n=$(cus_units "$gen/$cc.plain.cus")
	expect_counts "relink $cc: all but the changed CU hit" "$gen/$cc.err" $((n - 1)) 1
	if cmp -s "$gen/$cc.0.cus" "$gen/$cc.plain.cus"; then
		not_ok "relink $cc: the relinked program's .cus differs from the first (else the test proves nothing)"
	else
		ok "relink $cc: the relinked program's .cus differs from the first (else the test proves nothing)"
	fi
}
relink_case "$GCC"
if have "$CLANG"; then relink_case "$CLANG"; else skip "relink clang" "$CLANG not installed"; fi

# ---- -j does not change the bytes, with or without hits ----
c="$T_OUT/cache-j"
"$X" -q -j1 --cache "$c" -o "$T_OUT/j1.cus" "$gen/$GCC/prog"
"$X" -q -j4 --cache "$c" -o "$T_OUT/j4.cus" "$gen/$GCC/prog"
check_same "cold -j1 = warm -j4" "$T_OUT/j1.cus" "$T_OUT/j4.cus"
check_same "cache at any -j = no cache" "$gen/$GCC.plain.cus" "$T_OUT/j4.cus"

# ---- racing extractors on one directory ----
c="$T_OUT/cache-race"
rm -rf "$c"
pids=()
for i in 1 2 3 4 5 6; do
	case $((i % 3)) in
	0) elf="$gen/$GCC/prog" ;; 1) elf="$T_OUT/gcc5/sample" ;; 2) elf="$T_OUT/gcc5/merge" ;;
	esac
	"$X" -q -j2 --cache "$c" -o "$T_OUT/race$i.cus" "$elf" 2>"$T_OUT/race$i.err" &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
[ $fails -eq 0 ] && ok "6 racing extractors all succeed" || not_ok "6 racing extractors all succeed" "$(cat "$T_OUT"/race*.err)"
bad=0
for i in 1 2 3 4 5 6; do
	case $((i % 3)) in
	0) want="$gen/$GCC.plain.cus" ;; 1) want="$T_OUT/gcc-dwarf5.plain.cus" ;; 2) want="$T_OUT/gcc-merge.plain.cus" ;;
	esac
	cmp -s "$want" "$T_OUT/race$i.cus" || bad=$((bad + 1))
done
[ $bad -eq 0 ] && ok "racing extractors: every output is the uncached one" || not_ok "racing extractors: $bad outputs differ"
for elf in "$gen/$GCC/prog" "$T_OUT/gcc5/sample" "$T_OUT/gcc5/merge"; do
	"$X" -q --cache "$c" --cache-stats -o "$T_OUT/after-race.cus" "$elf" 2>"$T_OUT/after-race.err"
	n=$(cus_units "$T_OUT/after-race.cus")
	expect_counts "after the race, $(basename "$elf") hits on every CU (no entry lost or torn)" \
		"$T_OUT/after-race.err" "$n" 0
	check_grep "after the race, no corrupt entry" ' 0 corrupt' "$T_OUT/after-race.err"
done
left=$(find "$c" -name '.tmp.*')
[ -z "$left" ] && ok "racing extractors leave no temp file" || not_ok "racing extractors leave no temp file" "$left"

# ---- damaged entries are misses, and are repaired ----
c="$T_OUT/cache-damage"
rm -rf "$c"
elf="$T_OUT/gcc5/sample"
"$X" -q --cache "$c" -o "$T_OUT/d0.cus" "$elf"
mapfile -t entries < <(entries "$c")
[ ${#entries[@]} -ge 3 ] && ok "damage: the sample stored ${#entries[@]} entries" ||
	not_ok "damage: the sample stored at least 3 entries" "${entries[*]}"
printf '\xff' | dd of="${entries[0]}" bs=1 seek=200 conv=notrunc status=none  # a flipped blob byte
truncate -s 40 "${entries[1]}"                                               # torn
cp "${entries[0]}" "${entries[2]}.other"; mv "${entries[2]}.other" "${entries[2]}" # another key's bytes
"$X" -q --cache "$c" --cache-stats -o "$T_OUT/d1.cus" "$elf" 2>"$T_OUT/d1.err"
check_same "damage: the output is still the uncached one" "$T_OUT/gcc-dwarf5.plain.cus" "$T_OUT/d1.cus"
check_grep "damage: 3 entries refused as corrupt" 'this run: .* 3 corrupt \(repaired\)' "$T_OUT/d1.err"
"$X" -q --cache "$c" --cache-stats -o "$T_OUT/d2.cus" "$elf" 2>"$T_OUT/d2.err"
n=$(cus_units "$T_OUT/d2.cus")
expect_counts "damage: the next run hits everything (repaired)" "$T_OUT/d2.err" "$n" 0
check_grep "damage: the next run finds nothing corrupt" 'this run: .* 0 corrupt' "$T_OUT/d2.err"

# ---- eviction: oldest first, down under the limit ----
c="$T_OUT/cache-evict"
rm -rf "$c"
"$X" -q --cache "$c" --cache-max-size 0 -o "$T_OUT/e0.cus" "$gen/$GCC/prog"
total=$(entries "$c" | xargs stat -c %s | awk '{s += $1} END {print s}')
old=$(entries "$c" | head -5)
for f in $old; do touch -d '2 days ago' "$f"; done
limit=$((total * 6 / 10))
"$X" -q --cache "$c" --cache-max-size "$limit" --cache-stats -o "$T_OUT/e1.cus" "$T_OUT/gcc5/merge" 2>"$T_OUT/e1.err"
after=$(entries "$c" | xargs stat -c %s | awk '{s += $1} END {print s}')
[ "$after" -le "$limit" ] && ok "eviction: the cache shrank under its limit ($after <= $limit bytes)" ||
	not_ok "eviction: the cache shrank under its limit ($after > $limit bytes)" "$(cat "$T_OUT/e1.err")"
gone=0
for f in $old; do [ -e "$f" ] || gone=$((gone + 1)); done
[ $gone -eq 5 ] && ok "eviction: the 5 oldest entries went first" || not_ok "eviction: the 5 oldest entries went first ($gone gone)"
check_grep "eviction: counted" 'this run: .* [1-9][0-9]* evicted' "$T_OUT/e1.err"
"$X" -q --cache "$c" -o "$T_OUT/e2.cus" "$gen/$GCC/prog"
check_same "eviction: a run after eviction still gives the uncached bytes" "$gen/$GCC.plain.cus" "$T_OUT/e2.cus"

# ---- read-only, environment, and failures ----
c="$T_OUT/cache-ro"
rm -rf "$c"
mkdir -p "$c"
BTFPIPE_CACHE_READONLY=1 "$X" -q --cache "$c" -o "$T_OUT/ro.cus" "$elf"
check_same "read-only: output as uncached" "$T_OUT/gcc-dwarf5.plain.cus" "$T_OUT/ro.cus"
[ -z "$(entries "$c")" ] && ok "read-only: nothing stored" || not_ok "read-only: nothing stored"

c="$T_OUT/cache-env"
rm -rf "$c"
BTFPIPE_CACHE_DIR="$c" "$X" -q -o "$T_OUT/env.cus" "$elf"
[ -n "$(entries "$c" 2>/dev/null)" ] && ok "BTFPIPE_CACHE_DIR turns the cache on" || not_ok "BTFPIPE_CACHE_DIR turns the cache on"
rm -rf "$c"
BTFPIPE_CACHE_DIR="$c" "$X" -q --no-cache -o "$T_OUT/env.cus" "$elf"
[ ! -e "$c" ] && ok "--no-cache overrides BTFPIPE_CACHE_DIR" || not_ok "--no-cache overrides BTFPIPE_CACHE_DIR"

# A store that cannot happen (a file where an entry's directory should be;
# root ignores permission bits, so that is how to make it fail here).
c="$T_OUT/cache-full"
rm -rf "$c"
mkdir -p "$c/cu-v1"
for i in $(seq 0 255); do printf x >"$c/cu-v1/$(printf %02x "$i")"; done
check_exit "a failing store: still exit 0" 0 "$X" -q --cache "$c" -o "$T_OUT/full.cus" "$elf"
check_grep "a failing store: one warning naming the cache" "warning: cache .*cache-full: cannot store" "$T_OUT/last.err"
check_same "a failing store: output as uncached" "$T_OUT/gcc-dwarf5.plain.cus" "$T_OUT/full.cus"

# A big-endian input (s390x, clang's cross target, no libc; the program of
# tests/fixtures/relink): cached as a
# little-endian one is, its numbers read in its own byte order; a relink
# with one file's code changed hits on the other files' CUs.
if have "$CLANG" && have ld.lld-19; then
	be="$T_OUT/be"
	mkdir -p "$be/v1" "$be/v2"
	for v in 1 2; do
		k=3
		[ $v = 2 ] && k='(p->a > 7 ? p->b / 13 + 99 : p->a * 77 - 5)'
		(cd "$be" && "$CLANG" --target=s390x-linux-gnu -g -O2 "-DK=$k" -c "$T_TOP"/tests/fixtures/relink/*.c &&
			ld.lld-19 -e main -o "v$v/prog" a.o b.o main.o) || not_ok "build the s390x program v$v"
	done
	roundtrip s390x "$be/v1/prog"
	expect_counts "s390x: every CU is cacheable (none uncacheable)" "$T_OUT/s390x.warm.err" 3 0
	"$X" -q -o "$T_OUT/s390x-v2.plain.cus" "$be/v2/prog"
	"$X" -q --cache "$T_OUT/cache-s390x" --cache-stats -o "$T_OUT/s390x-v2.cus" "$be/v2/prog" 2>"$T_OUT/s390x-v2.err"
	check_same "s390x relinked: = uncached" "$T_OUT/s390x-v2.plain.cus" "$T_OUT/s390x-v2.cus"
	h=$(count hits "$T_OUT/s390x-v2.err")
	[ -n "$h" ] && [ "$h" -ge 2 ] && ok "s390x relinked: the unchanged files' CUs hit ($h of 3)" ||
		not_ok "s390x relinked: the unchanged files' CUs hit" "$(cat "$T_OUT/s390x-v2.err")"
else
	skip "s390x (big-endian) inputs" "no $CLANG or ld.lld-19"
fi

# A cache is an optimization: one that cannot be used is a warning, and the
# stage goes on as without one (BTFPIPE_CACHE_DIR may point anywhere).
printf x >"$T_OUT/notadir"
check_exit "a cache that is a file: still exit 0" 0 "$X" -q --cache "$T_OUT/notadir" -o "$T_OUT/nd.cus" "$elf"
check_grep "a cache that is a file: a warning names it" "warning: cache directory .*notadir.*Not a directory; going on without the cache" "$T_OUT/last.err"
check_same "a cache that is a file: output as uncached" "$T_OUT/gcc-dwarf5.plain.cus" "$T_OUT/nd.cus"
for stage in merge emit; do
	case $stage in
	merge) cmd=("$T_BIN/dedup-merge" -q --cache "$T_OUT/notadir" -o "$T_OUT/nd.graph" "$T_OUT/nd.cus") ;;
	emit) cmd=("$T_BIN/btf-emit" --cache "$T_OUT/notadir" --elf "$elf" -o "$T_OUT/nd.btf" "$T_OUT/nd.graph") ;;
	esac
	check_exit "a cache that is a file: $stage still exits 0" 0 "${cmd[@]}"
	check_grep "a cache that is a file: $stage warns" "going on without the cache" "$T_OUT/last.err"
done
check_exit "--cache-stats without a cache: usage" 2 "$X" --cache-stats -o "$T_OUT/x.cus" "$elf"
check_exit "a size that is not one: usage" 2 "$X" --cache "$c" --cache-max-size 12Q -o "$T_OUT/x.cus" "$elf"
check_exit "--cache-stats alone prints the totals" 0 "$X" --cache "$T_OUT/cache-damage" --cache-stats
check_grep "--cache-stats alone: all runs' hits" 'all runs: [0-9]+ hits' "$T_OUT/last.out"
check_grep "--cache-stats alone: the size" 'holds [0-9]+ entries' "$T_OUT/last.out"
test_done
