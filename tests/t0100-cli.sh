#!/usr/bin/env bash
# t0100-cli: the command line of the three executables.
#
# Every stage must answer --help (exit 0, text on stdout) so a user can always
# find out how to call it. dwarf-extract's usage errors must exit 2 (not 1,
# which means bad input, nor 3, I/O) with a compiler-style message, so that
# scripts and make can tell "you called me wrong" from "your file is bad".
# dedup-merge and btf-emit are being written: only --help is checked for them.
. "$(dirname "$0")/lib.sh"

EXTRACT="$T_BIN/dwarf-extract"

# --help: exit 0 and non-empty stdout, for every stage.
for stage in dwarf-extract dedup-merge btf-emit; do
	exe="$T_BIN/$stage"
	if [ ! -x "$exe" ]; then
		not_ok "$stage --help" "$exe is not built"
		continue
	fi
	check_exit "$stage --help exits 0" 0 "$exe" --help
	if [ -s "$T_OUT/last.out" ]; then ok "$stage --help prints text on stdout"; else
		not_ok "$stage --help prints text on stdout" "stdout empty; stderr: $(cat "$T_OUT/last.err")"; fi
done

# dwarf-extract --help describes both modes (extract and --dump).
"$EXTRACT" --help >"$T_OUT/help.out" 2>&1
check_grep "dwarf-extract --help shows the usage line" '^usage: dwarf-extract .*-o OUT\.cus ELF' "$T_OUT/help.out"
check_grep "dwarf-extract --help mentions --dump" '--dump' "$T_OUT/help.out"

# --version: exit 0 and "dwarf-extract (btfpipe) X.Y.Z" on stdout.
check_exit "dwarf-extract --version exits 0" 0 "$EXTRACT" --version
check_grep "dwarf-extract --version prints a version" \
	'^dwarf-extract \(btfpipe\) [0-9]+\.[0-9]+\.[0-9]+$' "$T_OUT/last.out"

# usage_error DESC ARGS...: exit 2, nothing on stdout, and a first stderr
# line in the compiler style "btfpipe: dwarf-extract: error: ...".
usage_error() {
	local desc=$1; shift
	check_exit "$desc: exit 2" 2 "$EXTRACT" "$@"
	if [ -s "$T_OUT/last.out" ]; then
		not_ok "$desc: nothing on stdout" "$(cat "$T_OUT/last.out")"
	else
		ok "$desc: nothing on stdout"
	fi
	if head -n 1 "$T_OUT/last.err" | grep -q '^btfpipe: dwarf-extract: error: '; then
		ok "$desc: stderr begins 'btfpipe: dwarf-extract: error:'"
	else
		not_ok "$desc: stderr begins 'btfpipe: dwarf-extract: error:'" "$(cat "$T_OUT/last.err")"
	fi
}

usage_error "no arguments"
usage_error "-o without an input" -o "$T_OUT/x.cus"
usage_error "an input without -o" "$EXTRACT"
usage_error "-j 0" -j 0 -o "$T_OUT/x.cus" "$EXTRACT"
check_grep "-j 0: the message names the bad value" "'0'" "$T_OUT/last.err"
usage_error "-j abc" -j abc -o "$T_OUT/x.cus" "$EXTRACT"
check_grep "-j abc: the message names the bad value" "'abc'" "$T_OUT/last.err"
usage_error "-j 1025 (above the limit)" -j 1025 -o "$T_OUT/x.cus" "$EXTRACT"
usage_error "--dump with -o" --dump "$T_OUT/x.cus" -o "$T_OUT/y.cus"
usage_error "two inputs" -o "$T_OUT/x.cus" "$EXTRACT" "$EXTRACT"

# A usage error must not create the output file.
if [ -e "$T_OUT/x.cus" ] || [ -e "$T_OUT/y.cus" ]; then
	not_ok "usage errors create no output" "$(ls -la "$T_OUT")"
else
	ok "usage errors create no output"
fi

# Unknown options: getopt prints its own message, then the usage; what
# matters is exit 2 and that the option is named on stderr.
check_exit "unknown long option: exit 2" 2 "$EXTRACT" --no-such-option
check_grep "unknown long option: stderr names it" 'no-such-option' "$T_OUT/last.err"
check_exit "unknown short option: exit 2" 2 "$EXTRACT" -Z
check_grep "unknown short option: stderr names it" "'Z'|-Z" "$T_OUT/last.err"
check_exit "option missing its argument (-j): exit 2" 2 "$EXTRACT" -o "$T_OUT/x.cus" -j

# btf-emit's -j (it overlaps reading --elf with the graph) is checked as
# dwarf-extract's: a bad count is a usage error that names it.
check_exit "btf-emit -j 0: exit 2" 2 "$T_BIN/btf-emit" -j 0 -o "$T_OUT/x.btf" "$T_OUT/x.graph"
check_grep "btf-emit -j 0: the message names the bad value" "'0'" "$T_OUT/last.err"
check_exit "btf-emit -j 1025: exit 2" 2 "$T_BIN/btf-emit" -j 1025 -o "$T_OUT/x.btf" "$T_OUT/x.graph"
"$T_BIN/btf-emit" --help >"$T_OUT/help-emit.out" 2>&1
check_grep "btf-emit --help lists -j" '^  -j, --jobs N' "$T_OUT/help-emit.out"

test_done
