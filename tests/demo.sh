#!/usr/bin/env bash
# tests/demo.sh (make run): the main job on the built-in sample. Builds
# tests/fixtures/sample with gcc -g, runs the whole pipeline keeping the
# checkpoints, and shows what each stage produced.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/build/sample"
mkdir -p "$out"
echo "== building the sample program (tests/fixtures/sample, gcc -O2 -g)"
gcc -O2 -g -o "$out/sample" "$top"/tests/fixtures/sample/*.c
echo "== running: ./pipeline.sh --keep build/sample -o build/sample/sample.btf build/sample/sample"
"$top/pipeline.sh" --keep "$out" -o "$out/sample.btf" "$out/sample"
echo
echo "checkpoints:"
ls -l "$out/sample.cus" "$out/sample.graph" "$out/sample.btf" | awk '{print "  " $5 " bytes  " $9}'
echo
echo "== stage 1 (dwarf-extract --dump build/sample/sample.cus), first lines:"
"$top/bin/dwarf-extract" --dump "$out/sample.cus" | sed -n '1,2p;/struct "flags"/,/tail/p' | cut -c1-150
echo
echo "== stage 2 (dedup-merge --dump build/sample/sample.graph), header and one node:"
"$top/bin/dedup-merge" --dump "$out/sample.graph" | sed -n '1p;/struct "flags"/,/from:/p' | cut -c1-150
echo
echo "== stage 3: build/sample/sample.btf, checked by libbpf:"
"$top/bin/tools/btfcheck" "$out/sample.btf" | sed 's/^/  /'
if command -v bpftool >/dev/null; then
	echo
	echo "== bpftool btf dump file build/sample/sample.btf format c (struct flags):"
	bpftool btf dump file "$out/sample.btf" format c | sed -n '/^struct flags {/,/^};/p'
fi
