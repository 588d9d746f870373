#!/usr/bin/env bash
# tests/kernel/kfuncs.sh (make check-kfuncs): the bpf_kfunc decl tags on
# Debian's 6.12 cloud vmlinux (linux-image-6.12.*-cloud-amd64-dbg, a 318 MB
# download kept in tests/out/kfuncs; only its vmlinux is unpacked, streamed),
# counted against the kfunc sets of its .BTF_ids read independently with
# binutils (tests/tools/kfunc_sets.py), and against Debian's shipped BTF.
#
# Encoded with 6.12's scripts/Makefile.btf flags (decl_tag_kfuncs) plus
# attributes: every kfunc of a set must carry one bpf_kfunc tag, one
# bpf_fastcall tag where its flags have KF_FASTCALL, and an address_space(1)
# attribute per KF_ARENA_* flag; a kfunc that a selection rule dropped is
# listed with btf-emit --explain's reason (and fails). No tag may sit on a
# function outside the sets. Also Debian's installed 6.1 cloud vmlinux,
# when there, and the newest 7.x of Debian unstable (tests/kernel/sid.sh),
# whose tags must also equal pahole 1.32's. BTFPIPE_VMLINUX_612=PATH and
# BTFPIPE_VMLINUX_7=PATH use other vmlinux files.
set -u
T_RESULTS=$(mktemp)
export T_RESULTS
. "$(dirname "$0")/../lib.sh"
KEEP=$T_TOP/tests/out/kfuncs-dl
mkdir -p "$KEEP"

v612=${BTFPIPE_VMLINUX_612:-}
if [ -z "$v612" ]; then
	v612=$(ls "$KEEP"/vmlinux-6.12.* 2>/dev/null | sort -V | tail -1)
fi
if [ -z "$v612" ]; then
	pkg=$(apt-cache pkgnames linux-image-6.12. 2>/dev/null | grep -E '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-dbg$' | sort -V | tail -1)
	if [ -z "$pkg" ]; then
		apt-get update -qq >/dev/null 2>&1
		pkg=$(apt-cache pkgnames linux-image-6.12. 2>/dev/null | grep -E '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-dbg$' | sort -V | tail -1)
	fi
	[ -n "$pkg" ] || { echo "btfpipe: check-kfuncs: error: no linux-image-6.12.*-cloud-amd64-dbg in apt's lists" >&2; exit 1; }
	ver=${pkg#linux-image-}
	ver=${ver%-dbg}
	echo "downloading $pkg (about 318 MB)..."
	(cd "$KEEP" && apt-get download "$pkg" >/dev/null 2>&1) || { echo "btfpipe: check-kfuncs: error: apt-get download $pkg failed" >&2; exit 1; }
	deb=$(ls "$KEEP"/"${pkg}"_*.deb | tail -1)
	# Only the vmlinux, streamed: tar stops at its one occurrence.
	dpkg-deb --fsys-tarfile "$deb" 2>/dev/null | tar -x -C "$KEEP" --occurrence "./usr/lib/debug/boot/vmlinux-$ver"
	mv "$KEEP/usr/lib/debug/boot/vmlinux-$ver" "$KEEP/vmlinux-$ver" && rm -rf "$KEEP/usr" ||
		{ echo "btfpipe: check-kfuncs: error: no vmlinux-$ver in $deb" >&2; exit 1; }
	v612=$KEEP/vmlinux-$ver
fi
O=$T_OUT
# 6.12's scripts/Makefile.btf list, plus attributes (7.x's).
FEATS=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs,attributes
printf '%-34s %6s %6s %6s %6s %8s %8s\n' vmlinux sets tagged fastc arena shipped dropped >"$O/table"

one() { # LABEL VMLINUX
	local label=$1 v=$2 d=$O/$1
	mkdir -p "$d"
	python3 "$T_TOP/tests/tools/kfunc_sets.py" "$v" >"$d/sets" || { not_ok "$label: read the kfunc sets"; return; }
	"$T_TOP/pipeline.sh" -j2 --keep "$d/keep" --features "$FEATS" -o "$d/ours.btf" "$v" 2>"$d/err" ||
		{ not_ok "$label: encode" "$(cat "$d/err")"; return; }
	bpftool btf dump file "$d/ours.btf" >"$d/ours.txt"
	# FUNC id -> name, then the names the tags are on.
	awk '/^\[[0-9]+\] FUNC /{ id = substr($1, 2, length($1) - 2); n = $3; gsub("\047", "", n); name[id] = n }
	     /DECL_TAG .bpf_kfunc./{ for (i = 1; i <= NF; i++) if ($i ~ /^type_id=/) { split($i, a, "="); k[a[2]] = 1 } }
	     /DECL_TAG .bpf_fastcall./{ for (i = 1; i <= NF; i++) if ($i ~ /^type_id=/) { split($i, a, "="); f[a[2]] = 1 } }
	     END { for (i in k) print name[i] > "/dev/stderr"; for (i in f) print name[i] }' "$d/ours.txt" \
		2> >(sort >"$d/tagged") | sort >"$d/fastcall"
	wait
	cut -d' ' -f1 "$d/sets" | sort >"$d/setnames"
	local nset ntag nfc want_fc narena want_arena shipped
	nset=$(wc -l <"$d/setnames")
	ntag=$(wc -l <"$d/tagged")
	nfc=$(wc -l <"$d/fastcall")
	# Flags by mask, in the shell: mawk (Debian's awk) has no and() or strtonum().
	flagged() { local fn fl n=0; while read -r fn fl; do [ $((fl & $1)) = 0 ] || n=$((n + 1)); done <"$d/sets"; echo $n; }
	want_fc=$(flagged 0x1000)
	narena=$(grep -c "TYPE_TAG 'address_space(1)'" "$d/ours.txt")
	want_arena=$(flagged 0xe000)
	comm -23 "$d/setnames" "$d/tagged" >"$d/dropped"
	comm -13 "$d/setnames" "$d/tagged" >"$d/extra"
	if [ -s "$d/dropped" ]; then
		local why=""
		while read -r f; do
			why="$why$f: $("$T_BIN/btf-emit" --elf "$v" --explain "$f" "$d/keep/"*.graph 2>&1 | tail -1)"$'\n'
		done <"$d/dropped"
		not_ok "$label: every kfunc of the sets has its bpf_kfunc tag" "$(wc -l <"$d/dropped") dropped by a rule:"$'\n'"$why"
	else
		ok "$label: every one of the $nset kfuncs of the sets has its bpf_kfunc tag"
	fi
	[ ! -s "$d/extra" ] && ok "$label: no tag on a function outside the sets" ||
		not_ok "$label: no tag on a function outside the sets" "$(cat "$d/extra")"
	[ "$nfc" = "$want_fc" ] && ok "$label: bpf_fastcall on the $want_fc kfuncs flagged KF_FASTCALL" ||
		not_ok "$label: bpf_fastcall where flagged" "tags $nfc, flagged $want_fc"
	# Each flagged kfunc gets at least one attribute chain (shared ones count once).
	if [ "$want_arena" -eq 0 ]; then
		[ "$narena" -eq 0 ] && ok "$label: no KF_ARENA kfunc, no address_space(1) attribute" ||
			not_ok "$label: no attribute without KF_ARENA" "$narena"
	else
		[ "$narena" -ge 1 ] && ok "$label: address_space(1) attributes for the $want_arena arena kfuncs" ||
			not_ok "$label: attributes for the arena kfuncs" "none"
	fi
	check "$label: libbpf's dedup removes nothing" "$T_BIN/tools/btfcheck" --dedup "$d/ours.btf"
	objcopy --dump-section .BTF="$d/shipped.btf" "$v" "$d/shipped.elf" 2>/dev/null
	shipped=$(bpftool btf dump file "$d/shipped.btf" 2>/dev/null | grep -c "DECL_TAG 'bpf_kfunc'")
	printf '%-34s %6s %6s %6s %6s %8s %8s\n' "$(basename "$v")" "$nset" "$ntag" "$nfc" "$narena" "$shipped" \
		"$(wc -l <"$d/dropped")" >>"$O/table"
}

one v612 "$v612"
# The newest 7.x from Debian unstable (tests/kernel/sid.sh; a 353 MB
# download kept in tests/out/sid), whose sched_ext kfuncs have "__" in
# their names; its tags are also compared with sid's pahole 1.32's.
v7=${BTFPIPE_VMLINUX_7:-}
if [ -z "$v7" ] && dbg7=$("$T_TOP/tests/kernel/sid.sh" dbg); then
	v7=$(ls "$dbg7"/boot/vmlinux-* | head -1)
fi
if [ -n "$v7" ]; then
	one v7 "$v7"
	if p132=$("$T_TOP/tests/kernel/sid.sh" pahole); then
		d=$O/v7
		"$p132" -J -j2 --btf_features="$FEATS" --lang_exclude=rust --btf_encode_detached="$d/p132.btf" "$v7" >"$d/p132.log" 2>&1
		# "TAG FUNC" per decl tag on a function, for both.
		tagpairs() {
			bpftool btf dump file "$1" | awk '/^\[[0-9]+\] FUNC /{ id = substr($1, 2, length($1) - 2); n = $3; gsub("\047", "", n); name[id] = n }
				/^\[[0-9]+\] DECL_TAG .* component_idx=-1/ { t = $3; gsub("\047", "", t)
					for (i = 1; i <= NF; i++) if ($i ~ /^type_id=/) { split($i, a, "="); tid[NR] = a[2]; tag[NR] = t } }
				END { for (r in tid) print tag[r], name[tid[r]] }' | sort
		}
		tagpairs "$d/ours.btf" >"$d/tags.ours"
		tagpairs "$d/p132.btf" >"$d/tags.p132"
		if [ -s "$d/tags.p132" ] && cmp -s "$d/tags.ours" "$d/tags.p132"; then
			ok "v7: the same $(wc -l <"$d/tags.ours") function decl tags as pahole 1.32 ($(grep -c '^bpf_kfunc' "$d/tags.ours") bpf_kfunc)"
		else
			not_ok "v7: the same function decl tags as pahole 1.32" "$(diff "$d/tags.p132" "$d/tags.ours" | head -20)"
		fi
	else
		skip "v7: tags against pahole 1.32" "tests/kernel/sid.sh pahole failed"
	fi
else
	skip "7.x vmlinux" "tests/kernel/sid.sh dbg failed (no Debian unstable?)"
fi
v61=$(ls /usr/lib/debug/boot/vmlinux-6.1.*-cloud-amd64 2>/dev/null | sort -V | tail -1)
if [ -n "$v61" ]; then one v61 "$v61"; else skip "6.1 vmlinux" "linux-image-cloud-amd64-dbg not installed"; fi
echo "== kfuncs: in the .BTF_ids sets, tagged by us, bpf_fastcall, address_space(1), tags in Debian's shipped BTF, dropped"
cat "$O/table"
p=$(grep -c '^pass' "$T_RESULTS"); f=$(grep -c '^fail' "$T_RESULTS"); s=$(grep -c '^skip' "$T_RESULTS")
rm -f "$T_RESULTS"
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
