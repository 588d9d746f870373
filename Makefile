# btfpipe: DWARF to BTF as a pipeline of three executables.
#
#   make            build bin/dwarf-extract, bin/dedup-merge, bin/btf-emit
#   make deps       install what is missing on Debian 12 (needs root)
#   make run        deps + build + the pipeline on the built-in sample
#   make test       every test; last line "N passed, N failed, N skipped"
#   make SANITIZE=1 ...   the same with AddressSanitizer + UBSan (build in build-asan/)
#   make SANITIZE=thread  ThreadSanitizer build in bin-tsan/ (t1330 runs -j4 on it)
#   make check-kernel     tests on Debian's cloud vmlinux (installs the dbg package)
#   make check-kfuncs     kfunc tags on Debian's 6.12 and sid's 7.x vmlinux against their .BTF_ids sets and pahole 1.32 (downloads)
#   make check-132        btfpipe vs pahole 1.32 (sid), 1.24, master on 7.x/6.12/6.1 (downloads; tests/kernel/vs132.sh)
#   make check-lto        t1105 at kernel size: a 400-file program, 2,000+ CUs under thin LTO
#   make check-kbuild     real kernels built with PAHOLE=pipeline.sh, booted (tests/kbuild/run.sh; an hour)
#   make check-deb        the Debian package from HEAD: lintian, installed, run, a kernel built with it, removed (tests/deb/run.sh)
#   make check-pahole-suite  pahole's own tests with btfpipe as the encoder (tests/pahole-suite/run.sh)
#   make bench-lto        btfpipe vs pahole -J on LTO inputs (bench/lto.sh)
#   make bench            btfpipe vs pahole -J: wall, CPU, RSS medians (bench/README.md)
#   make bench-loop       the edit-compile loop: a kept kbuild tree (LOOP_BUILD) made again after three edits, BTF steps vs pahole 1.32 (bench/loop.sh)
#   make bench-7x         btfpipe vs pahole 1.32 on Debian unstable's 7.x vmlinux and modules (downloads)
#   make bench-modules    per module, as kbuild runs pahole: medians over 120 modules (bench/modules.sh)
#   make bench-cache      the cache: warm vs cold vs pahole on modules, the vmlinux, relink (bench/cache.sh)
#   make bench-scale      cost against input size, 1x-8x a vmlinux, gcc and thin LTO (bench/scale.sh; first run > 1 h)
#   make bench-archive    btfpipe-archive vs pahole on 7 Debian kernels (bench/archive.sh; ~2.6 GB download)
#   make fuzz             each libFuzzer target for FUZZ_SECONDS (default 60), FUZZ_JOBS at once (tests/fuzz/run.sh)

CC ?= gcc
PKGS := libdw libelf libbpf libxxhash libzstd zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# -O3: on kvm.ko, callgrind counts 8% fewer instructions in dwarf-extract and
# 4% fewer in dedup-merge than at -O2, with the same output bytes.
CFLAGS ?= -O3 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -pthread

BUILD := build
BIN := bin
ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
BUILD := build-asan
BIN := bin-asan
endif
ifeq ($(SANITIZE),thread)
CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
BUILD := build-tsan
BIN := bin-tsan
endif
ifeq ($(COLLIDE),1)
CFLAGS += -DHASH_FORCE_COLLIDE
BUILD := build-collide
BIN := bin-collide
endif
# STATIC=0: the stages and the driver linked against the shared libraries
# (see STAGE_LINK below), in build/dyn/ and build/dyn/bin/, never mixed with
# the static programs of bin/.
STATIC ?= 1
ifeq ($(SANITIZE)$(COLLIDE)$(STATIC),0)
BUILD := build/dyn
BIN := build/dyn/bin
endif

COMMON := $(wildcard common/*.c)
FORMAT := $(wildcard format/*.c)
STAGES := dwarf-extract dedup-merge btf-emit

all: $(addprefix $(BIN)/,$(STAGES)) $(BIN)/btfpipe $(BIN)/btfpipe-pahole $(BIN)/btfpipe-archive $(BIN)/tools/btfcheck $(BIN)/tools/strsort-check $(BIN)/tools/pool-check $(BIN)/tools/bw-check $(BIN)/tools/diag-check $(BIN)/tools/measure

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

# The stages and btfpipe-pahole link static outside the sanitizer builds
# (which cannot): a kernel build starts them once per module each, and a
# static program starts without the dynamic loader's work, a good part of
# a small module's run (bench/README.md). (ld warns that libdw's debuginfod
# client calls dlopen: only a debuginfod lookup would, and none is made.)
# --wrap: libdw's fatal error() calls and failed assertions (out of memory)
# end in our words and exit code (common/fatal.h); linked dynamically (the
# sanitizer builds) only our own calls would, and there are none. Also
# libdw's abbreviation table init, whose failure libdw ignores (fatal.c).
WRAPS := -Wl,--wrap=error -Wl,--wrap=__assert_fail -Wl,--wrap=Dwarf_Abbrev_Hash_init
# STATIC=0 links them against the shared libraries, as the Debian package
# does (debian/rules): a security fix to libdw, libelf, libbpf, zlib, ...
# then reaches them without a rebuild, and lintian rejects static programs
# (statically-linked-binary, embedded-library: errors). The cost is the
# sanitizer builds': the wraps reach only our own calls, so under a memory
# limit libdw's dead ends end in libdw's words (or a fault), not exit 4;
# and each start pays the dynamic loader. (Built in build/dyn/, above.)
ifeq ($(SANITIZE)$(STATIC),1)
STAGE_LINK := -static $(WRAPS)
STAGE_LIBS := $(shell pkg-config --static --libs $(PKGS) 2>/dev/null)
else
STAGE_LINK := $(WRAPS)
STAGE_LIBS := $(LDLIBS)
endif
define stage_rule
$(BIN)/$(1): $(call obj,$(wildcard stages/$(1)/*.c) $(COMMON) $(FORMAT))
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) $(STAGE_LINK) -o $$@ $$^ $(STAGE_LIBS)
endef
$(foreach s,$(STAGES),$(eval $(call stage_rule,$(s))))

# The driver, btfpipe: both command lines (pahole's and ours) run as the
# stages (not a stage: it links none of them, it starts them). Run as
# btfpipe-pahole (a symlink) it answers --version as pahole.
$(eval $(call stage_rule,btfpipe))
$(BIN)/btfpipe-pahole: $(BIN)/btfpipe
	ln -sfn btfpipe $@

# The commit --version names: from git, else what the source tree was
# given (BTFPIPE_COMMIT=..., as debian/rules does), else "unknown". Only
# the one object that prints it is rebuilt when it changes.
BTFPIPE_COMMIT ?= $(shell git -C $(CURDIR) rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
$(BUILD)/commit.stamp: FORCE
	@mkdir -p $(BUILD)
	@echo '$(BTFPIPE_COMMIT)' | cmp -s - $@ || echo '$(BTFPIPE_COMMIT)' >$@
$(BUILD)/stages/btfpipe/version.o: $(BUILD)/commit.stamp
$(BUILD)/stages/btfpipe/version.o: CFLAGS += -DBTFPIPE_COMMIT='"$(BTFPIPE_COMMIT)"'
FORCE:

# t1345: the stages again, with tests/tools/failalloc.c under malloc,
# calloc and realloc, theirs and the static libraries', so that a test can
# make any allocation fail. Not in the sanitizer builds: ASan owns malloc.
FAILALLOC_WRAPS := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
define failalloc_rule
$(BIN)/tools/failalloc/$(1): $(call obj,$(wildcard stages/$(1)/*.c) $(COMMON) $(FORMAT) tests/tools/failalloc.c)
	@mkdir -p $(BIN)/tools/failalloc
	$(CC) $(LDFLAGS) $(STAGE_LINK) $(FAILALLOC_WRAPS) -o $$@ $$^ $(STAGE_LIBS)
endef
ifeq ($(SANITIZE),)
$(foreach s,$(STAGES),$(eval $(call failalloc_rule,$(s))))
all: $(addprefix $(BIN)/tools/failalloc/,$(STAGES))
endif


# The batch front for BTF archives (a script; beside the stages when installed).
$(BIN)/btfpipe-archive: tools/btfpipe-archive
	@mkdir -p $(BIN)
	install -m 755 $< $@

# Test helpers: programs the tests run, never part of a stage.
$(BIN)/tools/btfcheck: $(call obj,tests/tools/btfcheck.c)
	@mkdir -p $(BIN)/tools
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# bench/run.sh times every run with it (time(1) to the microsecond).
$(BIN)/tools/measure: $(call obj,bench/measure.c)
	@mkdir -p $(BIN)/tools
	$(CC) $(LDFLAGS) -o $@ $^

$(BIN)/tools/strsort-check: $(call obj,tests/tools/strsort_check.c common/strsort.c common/pool.c)
	@mkdir -p $(BIN)/tools
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BIN)/tools/pool-check: $(call obj,tests/tools/pool_check.c common/pool.c)
	@mkdir -p $(BIN)/tools
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# t0110: how common/diag.c reports a bug, and the exit codes.
$(BIN)/tools/diag-check: $(call obj,tests/tools/diag_check.c common/diag.c)
	@mkdir -p $(BIN)/tools
	$(CC) $(LDFLAGS) -o $@ $^

# t0125: btf-emit's BTF writer against libbpf's btf__add_*().
$(BIN)/tools/bw-check: $(call obj,tests/tools/bw_check.c stages/btf-emit/btf_writer.c common/strtab.c common/idmap.c common/buf.c)
	@mkdir -p $(BIN)/tools
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

deps:
	@./tests/deps.sh

run: deps
	@$(MAKE) --no-print-directory all
	@./tests/demo.sh

# Every test runs twice: on bin/ and on the ASan+UBSan build in bin-asan/.
# bin-collide/ (every hash colliding) is what t0450 compares against;
# bin-tsan/ (ThreadSanitizer) is what t1330 runs the threaded paths on.
test: all
	@$(MAKE) --no-print-directory SANITIZE=1 all
	@$(MAKE) --no-print-directory COLLIDE=1 all
	@$(MAKE) --no-print-directory SANITIZE=thread all
	@./tests/run.sh

# What make install installs, built without the test helpers of all: the
# stages, the driver and its btfpipe-pahole link (debian/rules builds this).
programs: $(addprefix $(BIN)/,$(STAGES)) $(BIN)/btfpipe $(BIN)/btfpipe-pahole

# make install PREFIX=DIR (DESTDIR is honoured for packaging; the Debian
# package is make install PREFIX=/usr DESTDIR=debian/btfpipe STATIC=0):
#   bin/               the stages, btfpipe, btfpipe-pahole -> btfpipe,
#                      btfpipe-diff, btfpipe-archive
#   lib/btfpipe/       pipeline.sh and btfpipe -> ../../bin/btfpipe, the
#                      driver pipeline.sh execs (it looks beside itself)
#   share/btfpipe/     btfcmp.py, which btfpipe-diff imports from there
#   share/man/man1/    man/*.1 (a symlink stays one)
#   share/doc/btfpipe/ docs/*.md and format/*.md, as docs/ and format/:
#                      the paths the man pages cite
# The driver finds the stages beside itself (its own /proc/self/exe),
# btfpipe-diff in PREFIX/bin. tests/t1210 checks this layout.
PREFIX ?= /usr/local
install: programs
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/btfpipe $(DESTDIR)$(PREFIX)/share/btfpipe \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/btfpipe/docs \
		$(DESTDIR)$(PREFIX)/share/doc/btfpipe/format
	install -m 755 $(addprefix $(BIN)/,$(STAGES) btfpipe) tools/btfpipe-diff tools/btfpipe-archive \
		$(DESTDIR)$(PREFIX)/bin/
	ln -sfn btfpipe $(DESTDIR)$(PREFIX)/bin/btfpipe-pahole
	install -m 755 pipeline.sh $(DESTDIR)$(PREFIX)/lib/btfpipe/
	ln -sfn ../../bin/btfpipe $(DESTDIR)$(PREFIX)/lib/btfpipe/btfpipe
	install -m 644 tools/btfcmp.py $(DESTDIR)$(PREFIX)/share/btfpipe/
	@for m in man/*.1; do \
		if [ -L "$$m" ]; then echo "ln -sfn $$(readlink "$$m") $(DESTDIR)$(PREFIX)/share/man/man1/$${m#man/}"; \
			ln -sfn "$$(readlink "$$m")" "$(DESTDIR)$(PREFIX)/share/man/man1/$${m#man/}" || exit 1; \
		else echo "install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man1/"; \
			install -m 644 "$$m" "$(DESTDIR)$(PREFIX)/share/man/man1/" || exit 1; fi; \
	done
	install -m 644 $(wildcard docs/*.md) $(DESTDIR)$(PREFIX)/share/doc/btfpipe/docs/
	install -m 644 $(wildcard format/*.md) $(DESTDIR)$(PREFIX)/share/doc/btfpipe/format/

# The Debian package, built from a clean clone of HEAD in tests/out/deb/,
# checked with lintian, installed, run (a kernel built with its
# btfpipe-pahole; CHECK_DEB_KERNEL=0 leaves that out) and removed again.
# Installs dpkg-dev, debhelper, lintian and the build's dependencies.
check-deb:
	@./tests/deb/run.sh

check-kernel: deps all
	@./tests/kernel/run.sh

# bpf_kfunc tags on Debian's 6.12 cloud vmlinux against its .BTF_ids sets
# (downloads linux-image-6.12.*-cloud-amd64-dbg; tests/kernel/kfuncs.sh).
check-kfuncs: deps all
	@./tests/kernel/kfuncs.sh

# btfpipe against pahole 1.32 (fetched from Debian unstable), 1.24 and
# master on Debian's 7.x, 6.12 and 6.1 vmlinux and modules: the README's table.
check-132: deps all
	@./tests/kernel/vs132.sh

# LTO at the size of a kernel: tests/t1105 on a 400-file, 400-struct program
# (its five builds take minutes; they are kept in tests/out/shared).
check-lto: deps all
	@LTO_FILES=400 LTO_STRUCTS=400 BTFPIPE_VARIANTS=bin ./tests/run.sh t1105

# Past one machine, on real engines (tests/engines/): a Slurm job array on a
# one-node cluster, GNU parallel over ssh to hosts made as network
# namespaces, one cache on a network filesystem shared by 8 writers. Root;
# each installs, starts and stops what it needs and purges what it
# installed. Five kernels' -dbg packages (about 1.4 GB, once, into
# tests/out/engines-dl).
check-slurm: deps all
	@./tests/engines/slurm.sh
check-hosts: deps all
	@./tests/engines/hosts.sh
check-netfs: deps all
	@./tests/engines/netfs.sh
check-engines: deps all
	@rc=0; for e in slurm hosts netfs; do ./tests/engines/$$e.sh || rc=1; done; exit $$rc

# Kernels from Debian's linux-source packages built with PAHOLE=pipeline.sh
# and checked against pahole (KBUILD_BUILDS selects; tests/kbuild/run.sh).
check-kbuild: deps all
	@./tests/kbuild/run.sh

check-pahole-suite: deps all
	@./tests/pahole-suite/run.sh

# What build hosts hit, at full count: out of memory (t1340), a full disk
# (t1350), 200 random kills per target (t1360), eight writers on one cache
# (t1370), 4.4 GB of names past BTF's 4 GiB (t1380: 9 GB of disk), on
# bin/. make test runs the same with 20 kills per target, and skips t1380.
ROBUST_TESTS := t1340 t1350 t1360 t1370 t1380
check-robust: all
	@KILL_RUNS=200 BIG_STRINGS=1 BTFPIPE_VARIANTS=bin ./tests/run.sh $(ROBUST_TESTS)

bench-lto: all
	@BENCH_BIN="$(CURDIR)/$(BIN)" ./bench/lto.sh

# Fuzzes each reader for FUZZ_SECONDS; new crash inputs land in tests/fuzz/crashes/.
# FUZZ_JOBS targets fuzz side by side, one core each.
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
fuzz: all
	@FUZZ_JOBS=$(FUZZ_JOBS) ./tests/fuzz/run.sh $(FUZZ_SECONDS)

# Benchmarks the stages it just built (BENCH_* knobs: bench/README.md).
# Its inputs are Debian's cloud vmlinux and modules: tests/kernel/dbg.sh
# installs linux-image-cloud-amd64-dbg (283 MB) when it is missing, unless
# BENCH_VMLINUX names another vmlinux. The first run also builds
# bench/scale.sh's programs (over an hour on 2 CPUs, some 15 GB in
# tests/out/bench-scale; later runs reuse them).
BENCH_INPUTS_READY = [ -n "$${BENCH_VMLINUX:-}" ] || ./tests/kernel/dbg.sh >/dev/null
bench: deps all
	@$(BENCH_INPUTS_READY)
	@BENCH_BIN="$(CURDIR)/$(BIN)" ./bench/run.sh
	@BENCH_BIN="$(CURDIR)/$(BIN)" ./bench/modules.sh
	@BENCH_BIN="$(CURDIR)/$(BIN)" ./bench/cache.sh
	@BENCH_BIN="$(CURDIR)/$(BIN)" ./bench/scale.sh

# How cost grows with the input: generated programs at 1, 2, 4 and 8 times
# the vmlinux's CUs and types, gcc and clang thin LTO (bench/README.md).
# The same against pahole 1.32 (Debian unstable's, run by its own loader) on
# Debian unstable's 7.x vmlinux and modules, with 7.x's Makefile.btf flags.
bench-7x: deps all
	@d=$$(./tests/kernel/sid.sh dbg) && p=$$(./tests/kernel/sid.sh pahole) && \
	BENCH_BIN="$(CURDIR)/$(BIN)" BENCH_PAHOLE="$$p" BENCH_INPUTS="vmlinux modules" \
	BENCH_PAHOLE_FLAGS="--btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs,attributes --lang_exclude=rust" \
	BENCH_MERGE_FLAGS="--lang-exclude rust" BENCH_EMIT_FLAGS="--features encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func,decl_tag_kfuncs,attributes" \
	BENCH_VMLINUX="$$(ls $$d/boot/vmlinux-*)" BENCH_MODDIR="$$(ls -d $$d/lib/modules/*/kernel)" \
	BENCH_MODULES="net/sched/sch_fq.ko drivers/net/virtio_net.ko fs/xfs/xfs.ko arch/x86/kvm/kvm.ko" ./bench/run.sh

# The edit-compile loop on a tree make check-kbuild built (LOOP_BUILD,
# default 7.2-gcc): three edits, each tree made again with the cache; the
# BTF steps kbuild ran against pahole 1.32 on the same files.
bench-loop: deps all
	@./bench/loop.sh

bench-scale: deps all
	@BENCH_BIN="$(CURDIR)/$(BIN)" ./bench/scale.sh

# One module at a time as a kernel build runs pahole, over 120 modules.
bench-modules: deps all
	@$(BENCH_INPUTS_READY)
	@BENCH_BIN="$(CURDIR)/$(BIN)" ./bench/modules.sh

bench-cache: deps all
	@$(BENCH_INPUTS_READY)
	@BENCH_BIN="$(CURDIR)/$(BIN)" ./bench/cache.sh

# A BTF archive's batch: real Debian kernels, downloaded once.
bench-archive: all
	@BENCH_BIN="$(CURDIR)/$(BIN)" ./bench/archive.sh

clean:
	rm -rf build build-asan build-collide build-tsan bin bin-asan bin-collide bin-tsan tests/out

.PHONY: check-robust all deps run test programs install check-deb check-slurm check-hosts check-netfs check-engines check-kernel check-kfuncs check-132 bench-7x bench-loop check-kbuild check-pahole-suite check-lto bench bench-modules bench-scale bench-cache bench-archive bench-lto fuzz clean
