#!/usr/bin/env bash
# t1370-cache-writers: eight builds sharing one cache directory at once, the
# archive case (many kernels converted side by side into one cache).
#
# Inputs: eight different programs linked from one set of objects (40
# units and main, tests/gen/many-cus.sh, gcc -O2 -g): program k links the
# units in an order rotated by k plus one small object of its own. The
# cache's key of a CU does not depend on where it sits, so the eight share
# 41 of their 42 CUs' entries: the writers race on the same entries, and
# each also stores its own.
#
# Rounds, each with all eight started together:
#   cold      dwarf-extract --cache into an empty directory (four times)
#   pipeline  pipeline.sh --cache: extraction hits, the merge and emit
#             memos (stage outputs) are written by eight at once
#   evicting  dwarf-extract --cache-max-size small enough that every store
#             evicts while the others read and write
# After each: every process exited 0 with its uncached bytes (a cache never
# changes an output), met no corrupt entry (--cache-stats: an entry another
# writer has half written must never be visible), no temp file is left. After the cold and pipeline
# rounds: each program's rerun hits every CU, 0 misses, 0 corrupt, and
# --cache-verify (each hit extracted again and compared) passes; after the
# evicting round, --cache-verify over what is left passes.
#
# Mutants this fails on: a cache store that writes its entry in place
# (cachedir.c without the temp file and rename: a reader meets a torn entry,
# counted corrupt, or a verify fails); a lookup that trusts an entry's
# length field (the corrupt count).
. "$(dirname "$0")/lib.sh"

X="$T_BIN/dwarf-extract"
export BTFPIPE_BIN="$T_BIN"
unset BTFPIPE_CACHE_DIR BTFPIPE_CACHE_READONLY BTFPIPE_CACHE_MAX_SIZE BTFPIPE_CACHE_VERIFY

IN="$T_OUT/in"
if ! out=$(bash "$T_TOP/tests/gen/many-cus.sh" "$IN" 40 - 2>&1); then
	not_ok "generate the 40-unit sources" "$out"
	test_done
fi
OBJ="$IN/obj"
mkdir -p "$OBJ"
bad=""
(cd "$IN/src" && for f in u[0-9]*.c main.c; do
	"$GCC" -O2 -g -fdebug-prefix-map="$IN/src"=/many -c -o "$OBJ/${f%.c}.o" "$f" || exit 1
done) 2>"$OBJ/build.err" || bad="$(head -c 500 "$OBJ/build.err")"
units=("$OBJ"/u[0-9]*.o)
progs=()
for k in 0 1 2 3 4 5 6 7; do
	printf 'struct own%d { int a[%d]; long b; };\nstruct own%d own%d_var;\n' "$k" $((k + 1)) "$k" "$k" >"$IN/own$k.c"
	"$GCC" -O2 -g -c -o "$OBJ/own$k.o" "$IN/own$k.c" 2>>"$OBJ/build.err" || bad+="own$k.c did not build"$'\n'
	rot=("${units[@]:k*5}" "${units[@]:0:k*5}")
	p="$IN/prog$k"
	"$GCC" -o "$p" "$OBJ/main.o" "${rot[@]}" "$OBJ/own$k.o" 2>>"$OBJ/build.err" || bad+="prog$k did not link"$'\n'
	progs+=("$p")
done
if [ -n "$bad" ]; then
	not_ok "build the eight programs" "$bad"
	test_done
fi
REF="$T_OUT/ref"
mkdir -p "$REF"
for p in "${progs[@]}"; do
	n=${p##*/}
	{ "$X" -j1 -q -o "$REF/$n.cus" "$p" && "$T_TOP/pipeline.sh" -j1 -q -o "$REF/$n.btf" "$p"; } ||
		bad+="$n: the uncached run failed"$'\n'
done
if [ -n "$bad" ]; then
	not_ok "uncached reference runs" "$bad"
	test_done
fi
# the programs differ (else the race would be over one input)
[ "$(for p in "${progs[@]}"; do cksum <"$REF/${p##*/}.cus"; done | sort -u | wc -l)" = 8 ] &&
	ok "eight programs with eight different .cus" ||
	not_ok "eight programs with eight different .cus" "some extractions are equal"

C="$T_OUT/cache"
rm -rf "$C"

# count WORD FILE: the number before WORD on --cache-stats' "this run" line
# for extracted CUs.
count() { sed -n "s/.*(extracted CUs): this run:.* \([0-9]*\) $1.*/\1/p" "$2" | head -1; }

# round NAME CMD-KIND [ENV...]: the eight at once; checks exits and bytes.
round() {
	local name=$1 kind=$2 i pids=() fails="" p n
	shift 2
	for i in "${!progs[@]}"; do
		p=${progs[i]} n=${p##*/}
		case $kind in
		extract) env "$@" "$X" -j1 -q --cache "$C" --cache-stats -o "$T_OUT/$name.$n.out" "$p" 2>"$T_OUT/$name.$n.err" & ;;
		pipeline) env "$@" "$T_TOP/pipeline.sh" -j1 -q --cache "$C" -o "$T_OUT/$name.$n.out" "$p" 2>"$T_OUT/$name.$n.err" & ;;
		esac
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		p=${progs[i]} n=${p##*/}
		if ! wait "${pids[i]}"; then
			fails+="$n: exit non-zero: $(head -c 300 "$T_OUT/$name.$n.err")"$'\n'
		elif ! cmp -s "$T_OUT/$name.$n.out" "$REF/$n.$([ "$kind" = extract ] && echo cus || echo btf)"; then
			fails+="$n: not its uncached bytes"$'\n'
		elif [ "$kind" = extract ] && ! grep -q 'this run:.* 0 corrupt' "$T_OUT/$name.$n.err"; then
			# a torn entry met while another process wrote it
			fails+="$n: met corrupt entries: $(grep 'this run' "$T_OUT/$name.$n.err")"$'\n'
		fi
	done
	local left
	left=$(find "$C" -name '.tmp.*' -o -name '*.tmp.*' | head -5)
	[ -n "$left" ] && fails+="temp files left in the cache: $left"$'\n'
	if [ -z "$fails" ]; then
		ok "$name: eight writers at once on one cache: all exit 0 with their uncached bytes, no temp file left"
	else
		not_ok "$name: eight writers at once on one cache: exit 0, uncached bytes, no temp file" "$fails"
	fi
}

# after NAME: each program's rerun hits every CU, nothing corrupt, and its
# hits verify.
after() {
	local p n h m bad=""
	for p in "${progs[@]}"; do
		n=${p##*/}
		"$X" -j1 -q --cache "$C" --cache-readonly --cache-stats -o "$T_OUT/after.cus" "$p" 2>"$T_OUT/after.err"
		h=$(count hits "$T_OUT/after.err") m=$(count misses "$T_OUT/after.err")
		[ "$m" = 0 ] && [ "${h:-0}" -gt 0 ] || bad+="$n: $h hits, $m misses"$'\n'
		grep -q ' 0 corrupt' "$T_OUT/after.err" || bad+="$n: corrupt entries: $(grep corrupt "$T_OUT/after.err")"$'\n'
		"$X" -j1 -q --cache "$C" --cache-readonly --cache-verify -o "$T_OUT/after.cus" "$p" 2>"$T_OUT/after.err" ||
			bad+="$n: --cache-verify: $(head -c 300 "$T_OUT/after.err")"$'\n'
	done
	if [ -z "$bad" ]; then
		ok "$1: each of the eight reruns hits every CU (0 misses, 0 corrupt) and its hits verify"
	else
		not_ok "$1: every rerun hits every CU, nothing corrupt, hits verify" "$bad"
	fi
}

# Four cold rounds, each from an empty directory: the race on a new entry
# is over in milliseconds, so it is run more than once.
for r in 1 2 3 4; do
	rm -rf "$C"
	round "cold $r" extract
done
after cold
round pipeline pipeline
after pipeline
# A limit far below what eight programs need: every store evicts.
size=$(du -sk "$C" | cut -f1)
round evicting extract BTFPIPE_CACHE_MAX_SIZE=$((size / 8))K
bad=""
for p in "${progs[@]}"; do
	"$X" -j1 -q --cache "$C" --cache-readonly --cache-verify -o "$T_OUT/after.cus" "$p" 2>"$T_OUT/after.err" ||
		bad+="${p##*/}: $(head -c 300 "$T_OUT/after.err")"$'\n'
done
[ -z "$bad" ] && ok "evicting: what the eight left verifies (--cache-verify)" ||
	not_ok "evicting: what the eight left verifies" "$bad"
test_done
