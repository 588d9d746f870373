#!/usr/bin/env bash
# t0500-bad-input: dwarf-extract refuses bad inputs cleanly.
#
# "Cleanly" means, for every bad input:
#   - the exact exit code of common/diag.h (1 bad input, 3 I/O), so a build
#     system can tell a broken file from a missing one;
#   - exactly one line on stderr, "btfpipe: ...", that names the file (no
#     usage text, no second message, no sanitizer report);
#   - no output file and no leftover temp file (.NAME.tmp.*) in the output
#     directory: outputs are atomic, so make reruns the step;
#   - an output left by an earlier good run is kept byte for byte: a failed
#     run must never destroy the previous result.
# Then `--dump` of damaged .cus files: truncated, bit-flipped, wrong magic or
# version, and (with the checksums recomputed, so the decoder itself is
# tested and not only the checksums) damaged blobs. None may crash.
#
# Every run has a timeout: a reader that blocks (a FIFO) must fail, not hang.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"
IN="$T_OUT/inputs"
mkdir -p "$IN"

# describe_rc RC: what an unexpected exit code means, for failure messages.
describe_rc() {
	case $1 in
	124) echo "exit 124: hung, killed by timeout" ;;
	86 | 87) echo "exit $1: sanitizer report (ASan/UBSan exit code)" ;;
	*) if [ "$1" -ge 128 ]; then echo "exit $1: killed by signal $(($1 - 128))"; else echo "exit $1"; fi ;;
	esac
}

# check_one_line DESC ERRFILE NAME [ERE]: ERRFILE is exactly one line,
# starting "btfpipe: ", containing NAME (fixed string), and matching ERE
# (case-insensitive) when given.
check_one_line() {
	local desc=$1 err=$2 name=$3 ere=${4:-}
	local lines
	lines=$(wc -l <"$err")
	if [ "$lines" -ne 1 ]; then
		not_ok "$desc: stderr is one line" "$lines lines: $(head -c 1500 "$err")"
	elif ! grep -q '^btfpipe: ' "$err"; then
		not_ok "$desc: stderr starts 'btfpipe: '" "$(cat "$err")"
	elif ! grep -qF -- "$name" "$err"; then
		not_ok "$desc: stderr names $name" "$(cat "$err")"
	elif [ -n "$ere" ] && ! grep -qiE -- "$ere" "$err"; then
		not_ok "$desc: stderr says /$ere/" "$(cat "$err")"
	else
		ok "$desc: one 'btfpipe:' line naming the file${ere:+ (/$ere/)}"
	fi
}

# run_rc WANT DESC CMD...: run CMD under a timeout; check its exact exit code.
# Leaves stderr in $T_OUT/run.err.
run_rc() {
	local want=$1 desc=$2; shift 2
	timeout 10 "$@" >"$T_OUT/run.out" 2>"$T_OUT/run.err"
	local rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$desc: exit $want"; else
		not_ok "$desc: exit $want" "$(describe_rc "$rc"); stderr: $(head -c 1500 "$T_OUT/run.err")"; fi
}

# --- inputs ----------------------------------------------------------------
build_fixture "$GCC" -O0 5 "$IN" sample >"$T_OUT/build.log" 2>&1 || {
	not_ok "build the sample fixture" "$(cat "$T_OUT/build.log")"
	test_done
}
GOOD_ELF="$IN/sample"
mkdir -p "$T_OUT/good"
run_rc 0 "good input extracts" "$EXTRACT" -o "$T_OUT/good/sample.cus" "$GOOD_ELF"
GOOD_CUS="$T_OUT/good/sample.cus"
# Atomic output: after success, the directory holds the output and nothing else.
if [ "$(ls -A "$T_OUT/good")" = sample.cus ]; then ok "good run leaves only its output"; else
	not_ok "good run leaves only its output" "$(ls -A "$T_OUT/good")"; fi
if [ ! -s "$GOOD_CUS" ]; then
	not_ok "good .cus exists" "nothing to compare with: stopping"
	test_done
fi

echo "this is not an ELF file" >"$IN/text"
: >"$IN/empty"
mkdir -p "$IN/a-directory"
rm -f "$IN/fifo" && mkfifo "$IN/fifo"
"$GCC" -s -O0 -o "$IN/stripped" "$T_TOP"/tests/fixtures/sample/*.c 2>>"$T_OUT/build.log"
cp "$GOOD_ELF" "$IN/half" && truncate -s $(($(stat -c %s "$GOOD_ELF") / 2)) "$IN/half"
# Built inside $IN so the .dwo files land there, never in the checkout.
(cd "$IN" && "$GCC" -O0 -gdwarf-5 -gsplit-dwarf -o split "$T_TOP"/tests/fixtures/sample/*.c) \
	2>>"$T_OUT/build.log"
(cd "$IN" && "$GCC" -O0 -gdwarf-4 -fdebug-types-section -o debug-types \
	"$T_TOP"/tests/fixtures/sample/*.c) 2>>"$T_OUT/build.log"

# bad_extract DESC WANT INPUT [ERE [once]]: extract INPUT into an empty
# directory (exit WANT, one line, nothing left behind), then again over an
# existing good OUT.cus (kept byte-identical, nothing else left behind).
# "once" runs only the second form, for inputs whose failure costs the full
# timeout (the FIFO): the kept file and the directory listing still prove
# that nothing was written.
n=0
bad_extract() {
	local desc=$1 want=$2 input=$3 ere=${4:-} once=${5:-}
	n=$((n + 1))
	local fresh="$T_OUT/case$n/fresh" kept="$T_OUT/case$n/kept"
	mkdir -p "$fresh" "$kept"
	if [ "$once" != once ]; then
		run_rc "$want" "$desc" "$EXTRACT" -o "$fresh/out.cus" "$input"
		check_one_line "$desc" "$T_OUT/run.err" "$input" "$ere"
		if [ -z "$(ls -A "$fresh")" ]; then ok "$desc: no output and no temp file left"; else
			not_ok "$desc: no output and no temp file left" "$(ls -lA "$fresh")"; fi
	fi
	cp "$GOOD_CUS" "$kept/out.cus"
	run_rc "$want" "$desc, over an existing output" "$EXTRACT" -o "$kept/out.cus" "$input"
	[ "$once" = once ] && check_one_line "$desc" "$T_OUT/run.err" "$input" "$ere"
	check_same "$desc: the existing output is left byte-identical" "$GOOD_CUS" "$kept/out.cus"
	if [ "$(ls -A "$kept")" = out.cus ]; then ok "$desc: no temp file left next to the existing output"; else
		not_ok "$desc: no temp file left next to the existing output" "$(ls -lA "$kept")"; fi
}

bad_extract "text file" 1 "$IN/text" 'not an ELF'
bad_extract "empty file" 1 "$IN/empty"
bad_extract "directory" 1 "$IN/a-directory"
# `--dump FIFO` runs in the background meanwhile: while the bug that makes
# both block in open() stands, each costs the full timeout, so they overlap.
timeout 10 "$EXTRACT" --dump "$IN/fifo" >"$T_OUT/fifo-dump.out" 2>"$T_OUT/fifo-dump.err" &
fifo_dump=$!
bad_extract "FIFO" 1 "$IN/fifo" '' once
wait "$fifo_dump"
rc=$?
if [ "$rc" -eq 1 ]; then ok "--dump of a FIFO: exit 1"; else
	not_ok "--dump of a FIFO: exit 1" "$(describe_rc "$rc"); stderr: $(head -c 1500 "$T_OUT/fifo-dump.err")"; fi
check_one_line "--dump of a FIFO" "$T_OUT/fifo-dump.err" "$IN/fifo"
bad_extract "missing file" 3 "$IN/no-such-file"
if [ -s "$IN/stripped" ]; then
	bad_extract "stripped ELF (gcc -s)" 1 "$IN/stripped" 'DWARF|debug'
else
	not_ok "build the stripped ELF" "$(tail -n 20 "$T_OUT/build.log")"
fi
bad_extract "ELF truncated to half its size" 1 "$IN/half"
if [ -s "$IN/split" ]; then
	bad_extract "-gsplit-dwarf build" 1 "$IN/split" 'split'
else
	not_ok "build the -gsplit-dwarf sample" "$(tail -n 20 "$T_OUT/build.log")"
fi
if [ -s "$IN/debug-types" ]; then
	bad_extract "-fdebug-types-section -gdwarf-4 build" 1 "$IN/debug-types" 'type unit'
else
	not_ok "build the -fdebug-types-section sample" "$(tail -n 20 "$T_OUT/build.log")"
fi

# --- bad output paths (the input is good) -------------------------------------
mkdir -p "$T_OUT/outdir/is-a-dir"
run_rc 3 "output path is a directory" "$EXTRACT" -o "$T_OUT/outdir/is-a-dir" "$GOOD_ELF"
check_one_line "output path is a directory" "$T_OUT/run.err" "$T_OUT/outdir/is-a-dir"
if [ -z "$(ls -A "$T_OUT/outdir/is-a-dir")" ] && [ "$(ls -A "$T_OUT/outdir")" = is-a-dir ]; then
	ok "output path is a directory: nothing written in or next to it"
else
	not_ok "output path is a directory: nothing written in or next to it" "$(ls -lAR "$T_OUT/outdir")"
fi
run_rc 3 "output in a nonexistent directory" "$EXTRACT" -o "$T_OUT/no-such-dir/x.cus" "$GOOD_ELF"
check_one_line "output in a nonexistent directory" "$T_OUT/run.err" "$T_OUT/no-such-dir/x.cus"
if [ ! -e "$T_OUT/no-such-dir" ]; then ok "output in a nonexistent directory: the directory is not created"; else
	not_ok "output in a nonexistent directory: the directory is not created" "$(ls -lAR "$T_OUT/no-such-dir")"; fi

# --- damaged .cus files for --dump ---------------------------------------------
# The python writes the damaged copies into $CUS and prints a manifest, one
# "file<TAB>want<TAB>ere<TAB>what" line each ("-" for no ere); want "0|1"
# means either is fine (a resealed random byte can still decode) but nothing
# else is.
CUS="$T_OUT/cus"
mkdir -p "$CUS"
python3 - "$GOOD_CUS" "$CUS" "$T_TOP/tests/tools" >"$T_OUT/manifest" 2>"$T_OUT/manifest.err" <<'PY'
import os, struct, sys

src, out = sys.argv[1:3]
sys.path.insert(0, sys.argv[3])
import cusfile  # tests/tools/cusfile.py: the layout and its checksums
b = open(src, "rb").read()
rows = []

def w(name, data, want, ere, what):
    open(os.path.join(out, name + ".cus"), "wb").write(data)
    rows.append((name + ".cus", want, ere, what))

# Header fields, from the file itself (format/CU-RECORDS.md, "File layout").
count, = struct.unpack_from("<I", b, 20)
ident_off, = struct.unpack_from("<Q", b, 32)
ident_size, = struct.unpack_from("<I", b, 40)
index_off, = struct.unpack_from("<Q", b, 48)
blob0_off, blob0_size = struct.unpack_from("<QI", b, index_off)
assert blob0_off == ident_off + ident_size, "first blob does not follow the identity block"
assert count >= 2 and len(b) == index_off + 64 * count, "unexpected layout"
# The address table lies just before the index: 16 bytes per pair.
naddrs = sum(struct.unpack_from("<I", b, index_off + 64 * i + 56)[0] for i in range(count))
table_off = index_off - 16 * naddrs
assert naddrs >= 1, "the sample has no address pair"

def flip(off, bit=0):
    x = bytearray(b)
    x[off] ^= 1 << bit
    return bytes(x)

# Truncations: inside the header, the identity block, a blob, the index.
for name, size, what in [
        ("trunc-header-1", 1, "1 byte"),
        ("trunc-header-32", 32, "inside the 64-byte header"),
        ("trunc-header-63", 63, "one byte short of the header"),
        ("trunc-ident", ident_off + ident_size // 2, "inside the identity block"),
        ("trunc-blob", blob0_off + blob0_size // 2, "inside the first blob"),
        ("trunc-table", table_off + 7, "inside the address table"),
        ("trunc-index", index_off + 64 + 17, "inside the index"),
        ("trunc-last-byte", len(b) - 1, "the last byte missing")]:
    w(name, b[:size], 1, "", "truncated: " + what)
w("appended", b + b"\0", 1, "", "one byte appended")

# Single bit flips: the header (cu_count, file_size, producer_version), the
# identity block, the first blob (its magic and its middle), the index.
w("flip-header-count", flip(20), 1, "", "bit flipped: header cu_count")
w("flip-header-size", flip(24, 4), 1, "", "bit flipped: header file_size")
w("flip-header-producer", flip(13), 1, "", "bit flipped: header producer_version")
w("flip-header-check", flip(60), 1, "", "bit flipped: header checksum")
w("flip-ident", flip(ident_off + ident_size - 3), 1, "", "bit flipped: identity block")
w("flip-blob-magic", flip(blob0_off), 1, "", "bit flipped: first blob's magic")
w("flip-blob", flip(blob0_off + blob0_size // 2, 3), 1, "", "bit flipped: middle of the first blob")
w("flip-index-off", flip(index_off), 1, "", "bit flipped: index blob_off")
w("flip-index-lang", flip(index_off + 12), 1, "", "bit flipped: index language")
w("flip-index-key", flip(index_off + 64 + 30), 1, "", "bit flipped: index key of CU 1")
w("flip-index-content", flip(index_off + 64 + 44), 1, "", "bit flipped: index content of CU 1")
w("flip-index-addrs", flip(index_off + 56, 1), 1, "", "bit flipped: index address count of CU 0")
w("flip-table", flip(table_off + 2), 1, "", "bit flipped: the address table")

w("bad-magic", b"BTFPCUX\0" + b[8:], 1, "", "magic changed")
# The next version with the checksum left stale: the version check comes
# first, so the message must be about the version, not the checksum.
x = bytearray(b)
struct.pack_into("<I", x, 8, struct.unpack_from("<I", b, 8)[0] + 1)
w("version-next", bytes(x), 1, "version", "the next format version")
w("empty", b"", 1, "", "empty file")

# Resealed: damage under valid checksums (xxh3 from libxxhash), so that the
# decoder's own bounds checks are what must refuse the file.
try:
    xx = cusfile.xxhash()
except OSError as e:
    print("SKIP\tresealed damage\tlibxxhash.so.0 not loadable: %s" % e)
    xx = None
if xx:
    parse = cusfile.parse
    def build(f):
        return cusfile.build(f, xx)

    if build(parse(b)) != b:
        print("FAIL\tresealing reproduces the good file\ttests/tools/cusfile.py disagrees with the writer")
    else:
        def sealed(name, change, want, ere, what):
            f = parse(b)
            change(f)
            w(name, build(f), want, ere, "resealed: " + what)
        def blob0(f, v): f["ents"][0]["blob"] = v
        b0 = parse(b)["ents"][0]["blob"]
        sealed("sealed-blob-trailing", lambda f: blob0(f, b0 + b"\0"), 1, "", "a trailing byte after the last record")
        sealed("sealed-blob-short", lambda f: blob0(f, b0[:-1]), 1, "", "first blob one byte short")
        sealed("sealed-blob-half", lambda f: blob0(f, b0[:len(b0) // 2]), 1, "", "first blob cut in half")
        sealed("sealed-blob-empty", lambda f: blob0(f, b""), 1, "", "first blob empty")
        sealed("sealed-blob-magic", lambda f: blob0(f, b"CU2\0" + b0[4:]), 1, "", "blob magic CU2")
        sealed("sealed-flags", lambda f: struct.pack_into("<I", f["head"], 16, 6), 1, "",
               "unknown header flags")
        # The index's content, extern count and the address table must be
        # the blob's (what the merge's memo reads without the blob).
        def first_with_addrs(f):
            return next(e for e in f["ents"] if e["naddr"])
        def addr_plus1(f):
            t = bytearray(f["addrs"]); t[0] ^= 1; f["addrs"] = bytes(t)
        sealed("sealed-table-addr", addr_plus1, 1, "address table",
               "an address pair that is not the blob's")
        sealed("sealed-content", lambda f: first_with_addrs(f).update(content=(1, 2)), 1, "content key",
               "a content key that is not the blob's")
        sealed("sealed-nexterns", lambda f: f["ents"][0].update(nx=5), 1, "extern count",
               "an extern count that is not the blob's")
        sealed("sealed-ident-name", lambda f: f.update(ident=b"\x7f" + f["ident"][1:]), 1, "",
               "identity name length past the block")
        sealed("sealed-ident-trailing", lambda f: f.update(ident=f["ident"] + b"\0"), 1, "",
               "a trailing byte in the identity block")
        # Hand-made records after the first blob's own head (format/CU-RECORDS.md,
        # "Blob layout"): every type ref must name a record or an extern of the
        # blob, whether it is a record's own or a member's.
        def head_len(blob):
            p = 4
            def uleb_at(p):
                v = s = 0
                while True:
                    c = blob[p]; p += 1
                    v |= (c & 0x7f) << s; s += 7
                    if not c & 0x80:
                        return v, p
            for _ in range(8):  # cu_offset, 4 unit fields, 3 string refs
                _, p = uleb_at(p)
            n, p = uleb_at(p)
            p += n  # the string table
            n, p = uleb_at(p)
            for _ in range(n):
                _, p = uleb_at(p)
            return p, n
        hl, nexterns = head_len(b0)
        u = cusfile.uleb
        base_rec = bytes([1]) + u(2) + u(0) + u(0) + u(5) + u(4) + u(0) + u(0)  # base, die +2
        const = lambda ref: bytes([3]) + u(16) + u(0) + u(ref) + base_rec
        struct1 = lambda ref: (bytes([8]) + u(16) + u(0) + u(0) + u(4) + u(0) + u(1) +
                               u(0) + u(0) + u(ref) + u(0) + u(0) + base_rec)
        # Each made twice: with the ref in range it decodes (the records are
        # well-formed), out of range it is refused for that reason.
        for name, make, good, bad, what in [
                ("ref-past-records", const, 2 * (1 + 1), 2 * (2 + 1), "a const record's type: record %s of 2"),
                ("ref-past-externs", const, 0, 2 * nexterns + 1, "a const record's type: extern %s"),
                ("ref-member", struct1, 2 * (1 + 1), 2 * (7 + 1), "a struct member's type: record %s of 2")]:
            for tag, ref, want, ere in [("ok", good, 0, ""), ("bad", bad, 1, "reference out of range")]:
                idx = ref >> 1 if ref & 1 else (ref >> 1) - 1
                sealed("sealed-%s-%s" % (name, tag), lambda f, nb=b0[:hl] + u(2) + make(ref): blob0(f, nb),
                       want, ere, what % idx)
        # Byte smashing across the first blob: 0xff, 0x00 or 0x80 at every
        # 53rd byte. The result may still decode (a changed name), so exit 0
        # or 1 are both right; a crash, a hang or a sanitizer report is not.
        for i, pos in enumerate(range(4, len(b0), 53)):
            val = (0xff, 0x00, 0x80)[i % 3]
            if b0[pos] == val:
                continue
            nb = bytearray(b0)
            nb[pos] = val
            sealed("sealed-smash-%04d" % pos, lambda f, nb=bytes(nb): blob0(f, nb), "0|1", "",
                   "first blob byte %d set to 0x%02x" % (pos, val))

for r in rows:
    # "-" for an empty field: bash's read would merge two adjacent tabs.
    print("\t".join(str(c) or "-" for c in r))
PY
py_rc=$?
if [ "$py_rc" -ne 0 ] || [ ! -s "$T_OUT/manifest" ]; then
	not_ok "make the damaged .cus files" "$(cat "$T_OUT/manifest.err")"
	test_done
fi

while IFS=$'\t' read -r file want ere what; do
	case $file in
	SKIP) skip "$want" "$ere"; continue ;;
	FAIL) not_ok "$want" "$ere"; continue ;;
	esac
	[ "$ere" = - ] && ere=
	path="$CUS/$file"
	timeout 10 "$EXTRACT" --dump "$path" >"$T_OUT/run.out" 2>"$T_OUT/run.err"
	rc=$?
	case "|$want|" in
	*"|$rc|"*) ok "--dump $what: exit $want" ;;
	*) not_ok "--dump $what: exit $want" "$(describe_rc "$rc"); stderr: $(head -c 1500 "$T_OUT/run.err")" ;;
	esac
	if [ "$rc" -ne 0 ]; then
		check_one_line "--dump $what" "$T_OUT/run.err" "$path" "$ere"
	elif [ -s "$T_OUT/run.err" ]; then
		not_ok "--dump $what: exit 0 with nothing on stderr" "$(head -c 1500 "$T_OUT/run.err")"
	fi
done <"$T_OUT/manifest"

# Not files: a directory (bad input), a missing file (I/O).
run_rc 1 "--dump of a directory" "$EXTRACT" --dump "$IN/a-directory"
check_one_line "--dump of a directory" "$T_OUT/run.err" "$IN/a-directory"
run_rc 3 "--dump of a missing file" "$EXTRACT" --dump "$CUS/no-such.cus"
check_one_line "--dump of a missing file" "$T_OUT/run.err" "$CUS/no-such.cus"
# The good file still dumps: the failures above are about the damage.
run_rc 0 "--dump of the undamaged file" "$EXTRACT" --dump "$GOOD_CUS"
test_done
