# shellcheck shell=bash
# tests/deb/cites.sh: sourced after tests/lib.sh by tests/deb/run.sh (the
# installed package) and tests/t1210-install.sh (make install DESTDIR=...):
# an installed btfpipe names only files that were installed with it.
#
# check_cites ROOT PREFIX LIST: LIST is a file of the installed paths as the
# system sees them (/usr/bin/btfpipe, ...), one a line, directories left
# out; ROOT is where they are (/ for the package, DESTDIR for make install).
#  - every symbolic link among them resolves to one of them
#  - every program in PREFIX/bin has a man page
#  - each man page renders with no message; every page of ours it refers to,
#    NAME(1), is installed
#  - each man page and each program's --help: every path of ours it cites
#    (under PREFIX, with btfpipe in it, or one of our programs in PREFIX/bin)
#    is installed, and it cites no file by its path in the source tree
#    (format/X.md, docs/X.md, README, tests/..., tools/btfcmp.py, a bare
#    X.md), which an installed system does not have: such a citation
#    names /usr/share/doc/btfpipe/... instead. (Not debian/: a BTF
#    archive's OUTDIR/debian/12/... is a path btfpipe-archive writes.)

# install_layout SRC MANEXT: the files an install of the source tree SRC
# holds, as the system sees them, one a line, unsorted; MANEXT is what the
# man pages' names end in (.gz in the package). The one list both the
# package's check and make install's (t1210) hold the install to.
install_layout() {
	local src=$1 manext=$2 f
	for f in btfpipe btfpipe-pahole dwarf-extract dedup-merge btf-emit btfpipe-diff btfpipe-archive; do echo "/usr/bin/$f"; done
	echo /usr/lib/btfpipe/pipeline.sh
	echo /usr/lib/btfpipe/btfpipe
	echo /usr/share/btfpipe/btfcmp.py
	for f in "$src"/man/*.1; do echo "/usr/share/man/man1/${f##*/}$manext"; done
	for f in "$src"/docs/*.md "$src"/format/*.md; do echo "/usr/share/doc/btfpipe/${f#"$src"/}"; done
}

# Our programs, by name.
CITES_PROGS='btfpipe|btfpipe-pahole|btfpipe-diff|btfpipe-archive|pipeline\.sh|dwarf-extract|dedup-merge|btf-emit'

# cites_bad TEXTFILE PREFIX LIST: one line per citation in TEXTFILE that
# fails (empty when all are good).
cites_bad() {
	local text=$1 prefix=$2 list=$3 c p found
	# Source-tree paths: not preceded by a path character, a slash or $.
	grep -o -E '(^|[^/A-Za-z0-9_.$-])((docs|format|tests|bench|stages|common)/[A-Za-z0-9_./-]*[A-Za-z0-9_]|tools/(btfcmp\.py|btfpipe-diff|btfpipe-archive)|README(\.md)?|[A-Za-z0-9_-]+\.md)' "$text" |
		sed -E 's/^[^A-Za-z0-9_]//' | sort -u | sed 's/^/cites a source-tree path, not installed: /'
	# Absolute paths of ours: installed, as a file, a glob or a directory/.
	grep -o -E "$prefix/[A-Za-z0-9_./*+-]*" "$text" | sed -E 's/[.,:;]+$//' | sort -u |
		while IFS= read -r p; do
			case $p in
			*btfpipe*) ;;
			"$prefix"/bin/*) grep -Eqx "$prefix/bin/($CITES_PROGS)" <<<"$p" || continue ;;
			*) continue ;;
			esac
			found=""
			while IFS= read -r c; do
				# shellcheck disable=SC2053 # p may be a glob
				if [[ $c == $p || $c == "${p%/}"/* ]]; then found=1; break; fi
			done <"$list"
			[ -n "$found" ] || echo "cites $p, which is not installed"
		done
}

check_cites() {
	local root=${1%/} prefix=$2 list=$3 f t n m out bad page name
	local tmp
	tmp=$(mktemp -d)
	# Symbolic links.
	n=0 bad=""
	while IFS= read -r f; do
		[ -L "$root$f" ] || continue
		n=$((n + 1))
		t=$(readlink "$root$f")
		case $t in /*) ;; *) t=${f%/*}/$t ;; esac
		t=$(realpath -m -s -- "$t")
		[ -e "$root$t" ] && grep -qxF -- "$t" "$list" ||
			bad+="${bad:+$'\n'}$f -> $(readlink "$root$f"): $t is not installed"
	done <"$list"
	if [ -z "$bad" ] && [ $n -gt 0 ]; then ok "every symbolic link installed resolves to an installed file ($n)"; else
		not_ok "every symbolic link installed resolves to an installed file ($n)" "$bad"; fi
	# A man page for every program.
	bad=""
	while IFS= read -r f; do
		case $f in "$prefix"/bin/*) ;; *) continue ;; esac
		grep -Eqx "$prefix/share/man/man1/${f##*/}\.1(\.gz)?" "$list" || bad+=" ${f##*/}"
	done <"$list"
	if [ -z "$bad" ]; then ok "every program in $prefix/bin has a man page"; else
		not_ok "every program in $prefix/bin has a man page" "none for:$bad"; fi
	# Man pages: render, refer to pages that are there, cite installed files.
	while IFS= read -r page; do
		case $page in "$prefix"/share/man/man1/*.1|"$prefix"/share/man/man1/*.1.gz) ;; *) continue ;; esac
		name=${page##*/}
		name=${name%.gz}
		# (.so requests are read from man/'s parent, as man does)
		if out=$(cd "$root$prefix/share/man" && LC_ALL=C MANWIDTH=80 man -l "$root$page" 2>&1 >/dev/null) &&
			[ -z "$out" ] && (cd "$root$prefix/share/man" && LC_ALL=C MANWIDTH=80 man -l "$root$page" 2>/dev/null) | grep -q '^NAME'; then
			ok "man -l renders $name"
		else
			not_ok "man -l renders $name" "$out"
		fi
		(cd "$root$prefix/share/man" && LC_ALL=C MANWIDTH=1000 man -l "$root$page" 2>/dev/null) >"$tmp/page"
		bad=""
		for m in $(grep -o -E "(^|[^A-Za-z0-9_.-])(btfpipe[a-z.-]*|pipeline\.sh|dwarf-extract|dedup-merge|btf-emit)\(1\)" "$tmp/page" | sed -E 's/^[^a-z]//; s/\(1\)$//' | sort -u); do
			grep -Eqx "$prefix/share/man/man1/$m\.1(\.gz)?" "$list" || bad+="refers to $m(1), which is not installed"$'\n'
		done
		bad+=$(cites_bad "$tmp/page" "$prefix" "$list")
		bad=${bad%$'\n'}
		if [ -z "$bad" ]; then ok "$name cites only installed files and pages"; else
			not_ok "$name cites only installed files and pages" "$bad"; fi
	done <"$list"
	# Each program's --help.
	while IFS= read -r f; do
		case $f in "$prefix"/bin/*) ;; *) continue ;; esac
		env -u BTFPIPE_BIN "$root$f" --help >"$tmp/help" 2>&1 </dev/null
		bad=$(cites_bad "$tmp/help" "$prefix" "$list")
		if [ -z "$bad" ]; then ok "${f##*/} --help cites only installed files"; else
			not_ok "${f##*/} --help cites only installed files" "$bad"; fi
	done <"$list"
	rm -rf "$tmp"
}
