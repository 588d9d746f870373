#!/usr/bin/env bash
# t1005-kfunc-names: kfunc names with "__" inside them get their tags.
#
# Linux 7.x's sched_ext and BPF kfuncs include __bpf_trap,
# __scx_bpf_select_cpu_and and scx_bpf_dsq_insert___v2. Their .BTF_ids
# symbols are __BTF_ID__func__NAME__N, and a reader that cuts NAME at the
# first "__" loses those seven tags on Debian's 7.2 vmlinux (what btf-emit
# did before this test, and pahole 1.30): resolve_btfids then leaves those
# kfuncs unresolved and a sched_ext scheduler that calls them fails to
# load. tests/fixtures/kfuncnames has such names (a leading "__", a
# "___v2" suffix, a "__" in the middle, and a set at the section's end),
# plus functions named as the wrong cut would name them, so a wrong cut
# tags a wrong FUNC and is seen.
#
# Built as an executable and as a relocatable object (what a .ko is); each
# through the three stages. The bpf_kfunc and bpf_fastcall tags must be on
# exactly the kfuncs that tests/tools/kfunc_sets.py (binutils, not our
# reader) lists, and pahole master (when ../shared/anchors is there) must
# tag the same functions.
. "$(dirname "$0")/lib.sh"

FIX=tests/fixtures/kfuncnames
if ! have bpftool; then
	skip "kfunc names" "bpftool not found: nothing can read the BTF"
	test_done
fi

# tags DUMP: "TAG FUNC" per decl tag on a whole function, sorted.
tags() {
	awk '/^\[[0-9]+\] FUNC /{ id = substr($1, 2, length($1) - 2); n = $3; gsub("\047", "", n); name[id] = n }
	     /^\[[0-9]+\] DECL_TAG .* component_idx=-1/ {
		t = $3; gsub("\047", "", t)
		for (i = 1; i <= NF; i++) if ($i ~ /^type_id=/) { split($i, a, "="); tid[NR] = a[2]; tag[NR] = t }
	     }
	     END { for (r in tid) print tag[r], (tid[r] in name ? name[tid[r]] : "id" tid[r]) }' "$1" | sort
}

want="bpf_fastcall __kn_lead
bpf_fastcall __kn_tail___v3
bpf_kfunc __kn_lead
bpf_kfunc __kn_tail___v3
bpf_kfunc kn_insert___v2
bpf_kfunc kn_mid__dunder
bpf_kfunc kn_plain"

d=$T_OUT
if ! out=$(cd "$T_TOP" && "$GCC" -O2 -gdwarf-5 "-fdebug-prefix-map=$T_TOP=/btfpipe" -c "$FIX/kfuncnames.c" -o "$d/kobj" 2>&1 &&
	"$GCC" -o "$d/exe" "$d/kobj" 2>&1); then
	not_ok "build the fixture" "$out"
	test_done
fi

for b in exe kobj; do
	e=$d/$b
	# The oracle: the sets as binutils reads them, with each kfunc's flags.
	python3 "$T_TOP/tests/tools/kfunc_sets.py" "$e" >"$e.sets" 2>&1
	oracle=$(while read -r fn fl; do
		echo "bpf_kfunc $fn"
		[ $((fl & 0x1000)) = 0 ] || echo "bpf_fastcall $fn"
	done <"$e.sets" | sort)
	if [ "$oracle" = "$want" ]; then
		ok "$b: construction: kfunc_sets.py reads the five kfuncs and their flags"
	else
		not_ok "$b: construction: kfunc_sets.py reads the five kfuncs and their flags" "$(cat "$e.sets")"
		continue
	fi
	if ! out=$("$T_BIN/dwarf-extract" -o "$e.cus" "$e" 2>&1 &&
		"$T_BIN/dedup-merge" -o "$e.graph" "$e.cus" 2>&1 &&
		"$T_BIN/btf-emit" --elf "$e" -o "$e.btf" "$e.graph" 2>&1 &&
		bpftool btf dump file "$e.btf" >"$e.dump" 2>&1); then
		not_ok "$b: the three stages run" "$out"
		continue
	fi
	got=$(tags "$e.dump")
	if [ "$got" = "$want" ]; then
		ok "$b: bpf_kfunc on the five kfuncs, bpf_fastcall on the two flagged, none elsewhere"
	else
		not_ok "$b: bpf_kfunc on the five kfuncs, bpf_fastcall on the two flagged, none elsewhere" \
			"$(diff <(echo "$want") <(echo "$got"))"
	fi
	# The names a first-"__" cut gives are real functions here: encoded, untagged.
	for f in kn_insert kn_mid __kn_outside; do
		if grep -q "^\[[0-9]*\] FUNC '$f' " "$e.dump" && ! grep -q " $f\$" <<<"$got"; then
			ok "$b: $f is encoded and carries no tag"
		else
			not_ok "$b: $f is encoded and carries no tag" "FUNC: $(grep "FUNC '$f'" "$e.dump"); tags: $got"
		fi
	done
done

if pahole_master "pahole master tags the same kfuncs"; then
	for b in exe kobj; do
		e=$d/$b
		if "$T_PAHOLE_MASTER" -J --btf_features=default --btf_encode_detached="$e.master.btf" "$e" >"$e.master.out" 2>&1 &&
			bpftool btf dump file "$e.master.btf" >"$e.master.dump" 2>&1; then
			got=$(tags "$e.master.dump")
			if [ "$got" = "$want" ]; then ok "$b: pahole master tags the same kfuncs"
			else not_ok "$b: pahole master tags the same kfuncs" "$(diff <(echo "$want") <(echo "$got"))"; fi
		else
			not_ok "$b: pahole master encodes the fixture" "$(tail -5 "$e.master.out")"
		fi
	done
fi
test_done
