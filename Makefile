# Outlive — build, test, install. `make` builds build/liboutlive.so;
# `make test` runs every suite and ends with "N passed, N failed".

SWIFT        ?= swift
CC           ?= cc
PYTHON       ?= python3
PREFIX       ?= /usr/local
VERSION      := $(shell cat VERSION)
OUT          := build
LIB          := $(OUT)/liboutlive.so
TESTBIN      := $(OUT)/tests
SWIFT_FLAGS  := -c release -Xswiftc -static-stdlib

CFLAGS_TEST  := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 -Iinclude -ITests/c
LDFLAGS_TEST := -L$(OUT) -loutlive -Wl,-rpath,$(abspath $(OUT)) -rdynamic -lsqlite3 -lpthread -ldl

C_TESTS      := $(patsubst Tests/c/%.c,$(TESTBIN)/%,$(wildcard Tests/c/test_*.c))
C_PROGRAMS   := $(patsubst Tests/c/programs/%.c,$(TESTBIN)/%,$(wildcard Tests/c/programs/*.c))
C_CRASH      := $(patsubst Tests/crash/%.c,$(TESTBIN)/%,$(wildcard Tests/crash/*.c))
FUZZERS      := $(patsubst fuzz/%.c,$(OUT)/fuzz/%,$(wildcard fuzz/fuzz_*.c))
FUZZ_CC      ?= clang
C_LIBRARIES  := $(patsubst Tests/c/libraries/%.c,$(TESTBIN)/lib%.so,$(wildcard Tests/c/libraries/*.c))

.PHONY: deps all lib cli python-speedups soak fuzz fuzzers wheel demo test test-c test-swift test-python c-tests demo bench install uninstall completions man fuzz clean

all: lib cli python-speedups

# SwiftPM decides what is out of date; this rule always asks it.
lib: deps
	$(SWIFT) build $(SWIFT_FLAGS) --product outlive
	@mkdir -p $(OUT)
	@cp -p .build/release/liboutlive.so $(LIB).tmp && mv $(LIB).tmp $(LIB)
	@ln -sf liboutlive.so $(OUT)/liboutlive.so.0

$(LIB): lib

# The Python package's optional compiled calls (bindings/python/outlive/_speedups.c:
# a handler call and a task add without ctypes), for $(PYTHON), in the stable ABI
# of Python 3.10 (any later Python loads it). Without Python's headers it is not
# built and the package uses ctypes alone, as it does without this file.
PY_SPEEDUPS  := bindings/python/outlive/_speedups.abi3.so

python-speedups: $(PY_SPEEDUPS)

$(PY_SPEEDUPS): bindings/python/outlive/_speedups.c include/outlive.h
	@headers=$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])'); \
	if [ -f "$$headers/Python.h" ]; then \
	  echo "$(CC) ... -o $@ bindings/python/outlive/_speedups.c"; \
	  $(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -shared -I"$$headers" -Iinclude -o $@.tmp $< && mv $@.tmp $@; \
	else echo "outlive._speedups not built: $(PYTHON) has no Python.h (the package uses ctypes alone)"; fi

# The `outlive` command (the SwiftPM product is outlive-cli: one name per product).
cli: deps
	$(SWIFT) build $(SWIFT_FLAGS) --product outlive-cli
	@mkdir -p $(OUT)
	@cp -p .build/release/outlive-cli $(OUT)/outlive.tmp && mv $(OUT)/outlive.tmp $(OUT)/outlive

$(TESTBIN)/test_%: Tests/c/test_%.c Tests/c/harness.c Tests/c/harness.h include/outlive.h $(LIB)
	@mkdir -p $(TESTBIN)
	$(CC) $(CFLAGS_TEST) -o $@ $< Tests/c/harness.c $(LDFLAGS_TEST)

$(TESTBIN)/%: Tests/c/programs/%.c Tests/c/harness.h include/outlive.h $(LIB)
	@mkdir -p $(TESTBIN)
	$(CC) $(CFLAGS_TEST) -o $@ $< $(LDFLAGS_TEST)

$(TESTBIN)/lib%.so: Tests/c/libraries/%.c include/outlive.h
	@mkdir -p $(TESTBIN)
	$(CC) $(CFLAGS_TEST) -fPIC -shared -o $@ $<

$(TESTBIN)/%: Tests/crash/%.c include/outlive.h $(LIB)
	@mkdir -p $(TESTBIN)
	$(CC) $(CFLAGS_TEST) -o $@ $< $(LDFLAGS_TEST)

$(OUT)/fuzz/%: fuzz/%.c include/outlive.h $(LIB)
	@mkdir -p $(OUT)/fuzz
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address -Iinclude -o $@ $< -L$(OUT) -loutlive -Wl,-rpath,$(abspath $(OUT)) 2>&1 | grep -v "Cannot export local symbol" || true

fuzzers: lib $(FUZZERS)

# Each libFuzzer target for FUZZ_SECONDS (default 60), growing its corpus in fuzz/corpus/NAME.
FUZZ_SECONDS ?= 60
fuzz: fuzzers
	@for target in $(FUZZERS); do name=$$(basename $$target); mkdir -p fuzz/corpus/$$name; \
	  echo "fuzzing $$name for $(FUZZ_SECONDS) s"; \
	  $$target -max_total_time=$(FUZZ_SECONDS) -max_len=4096 fuzz/corpus/$$name || exit 1; done

c-tests: lib $(C_TESTS) $(C_PROGRAMS) $(C_CRASH) $(C_LIBRARIES) $(FUZZERS)

# The crash harness with many more kills than `make test` runs.
soak: c-tests
	OUTLIVE_CRASH_KILLS=2000 OUTLIVE_CRASH_POWER_LOSSES=600 $(TESTBIN)/test_crash

test: deps lib cli python-speedups c-tests
	$(PYTHON) scripts/run_tests.py

# What a fresh machine may lack (Debian packages, pytest); quick when present.
deps:
	@bash scripts/install-deps.sh

test-c: lib c-tests
	$(PYTHON) scripts/run_tests.py --only c

test-swift:
	$(PYTHON) scripts/run_tests.py --only swift

test-python: lib python-speedups
	$(PYTHON) scripts/run_tests.py --only python

# Where `make install` puts things: PREFIX (default /usr/local) inside DESTDIR (a
# staging root for packagers; paths written into installed files name PREFIX only).
ROOT_PREFIX  = $(DESTDIR)$(PREFIX)
COMPLETIONS_BASH := share/bash-completion/completions/outlive
COMPLETIONS_ZSH  := share/zsh/site-functions/_outlive
COMPLETIONS_FISH := share/fish/vendor_completions.d/outlive.fish
UNIT         := lib/systemd/system/outlive-worker@.service
MAN_DATE      = $(shell git log -1 --format=%cs 2>/dev/null || date +%F)

# Shell completions and man pages come from the command's own argument definitions
# (swift-argument-parser), so they cannot disagree with it. Cheap: regenerated each time.
completions: cli
	@rm -rf $(OUT)/completions && mkdir -p $(OUT)/completions
	$(OUT)/outlive --generate-completion-script bash > $(OUT)/completions/outlive.bash
	$(OUT)/outlive --generate-completion-script zsh > $(OUT)/completions/_outlive
	$(OUT)/outlive --generate-completion-script fish > $(OUT)/completions/outlive.fish

# The argument parser's generate-manual tool (what its SwiftPM plugin runs), built with
# the same flags as the rest so that SwiftPM does not relink the others afterwards.
man: cli
	$(SWIFT) build $(SWIFT_FLAGS) --product generate-manual
	@rm -rf $(OUT)/man && mkdir -p $(OUT)/man
	.build/release/generate-manual $(OUT)/outlive --multi-page --date $(MAN_DATE) --output-directory $(OUT)/man

install: lib cli completions man
	install -d $(ROOT_PREFIX)/lib/pkgconfig $(ROOT_PREFIX)/include $(ROOT_PREFIX)/bin \
	  $(ROOT_PREFIX)/lib/systemd/system $(ROOT_PREFIX)/share/man/man1 $(dir $(addprefix $(ROOT_PREFIX)/,\
	  $(COMPLETIONS_BASH) $(COMPLETIONS_ZSH) $(COMPLETIONS_FISH)))
	install -m 0755 $(LIB) $(ROOT_PREFIX)/lib/liboutlive.so.$(VERSION)
	ln -sf liboutlive.so.$(VERSION) $(ROOT_PREFIX)/lib/liboutlive.so.0
	ln -sf liboutlive.so.0 $(ROOT_PREFIX)/lib/liboutlive.so
	install -m 0644 include/outlive.h $(ROOT_PREFIX)/include/outlive.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' outlive.pc.in > $(ROOT_PREFIX)/lib/pkgconfig/outlive.pc
	install -m 0755 $(OUT)/outlive $(ROOT_PREFIX)/bin/outlive
	sed -e 's|/usr/local/bin/outlive|$(PREFIX)/bin/outlive|g' Examples/systemd/outlive-worker@.service \
	  > $(ROOT_PREFIX)/$(UNIT)
	install -m 0644 $(OUT)/completions/outlive.bash $(ROOT_PREFIX)/$(COMPLETIONS_BASH)
	install -m 0644 $(OUT)/completions/_outlive $(ROOT_PREFIX)/$(COMPLETIONS_ZSH)
	install -m 0644 $(OUT)/completions/outlive.fish $(ROOT_PREFIX)/$(COMPLETIONS_FISH)
	install -m 0644 $(OUT)/man/*.1 $(ROOT_PREFIX)/share/man/man1/
	$(LDCONFIG)

# Removes the files install put there (not the directories: they may be shared).
uninstall:
	rm -f $(ROOT_PREFIX)/lib/liboutlive.so.$(VERSION) $(ROOT_PREFIX)/lib/liboutlive.so.0 \
	  $(ROOT_PREFIX)/lib/liboutlive.so $(ROOT_PREFIX)/include/outlive.h $(ROOT_PREFIX)/lib/pkgconfig/outlive.pc \
	  $(ROOT_PREFIX)/bin/outlive $(ROOT_PREFIX)/$(UNIT) $(ROOT_PREFIX)/$(COMPLETIONS_BASH) \
	  $(ROOT_PREFIX)/$(COMPLETIONS_ZSH) $(ROOT_PREFIX)/$(COMPLETIONS_FISH) \
	  $(ROOT_PREFIX)/share/man/man1/outlive.1 $(ROOT_PREFIX)/share/man/man1/outlive.*.1
	$(LDCONFIG)

# The dynamic linker finds a library in /usr/local/lib through its cache: refresh it
# when installing into the running system (no DESTDIR) as root.
LDCONFIG = @if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

# The Python wheel, needing nothing from the system beyond the manylinux policy:
# hatchling packs the package with build/liboutlive.so and build/outlive
# (bindings/python/hatch_build.py), then auditwheel copies libsqlite3 and libffi into
# outlive.libs/, points NEEDED and RPATH at those copies and tags it manylinux.
wheel: deps lib cli python-speedups
	rm -rf $(OUT)/wheel $(OUT)/wheel-linux
	OUTLIVE_BUILD_DIR=$(abspath $(OUT)) $(PYTHON) -m pip wheel -q --no-deps -w $(OUT)/wheel-linux ./bindings/python
	PATH="$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$$PATH" \
	  $(PYTHON) -m auditwheel repair -w $(OUT)/wheel $(OUT)/wheel-linux/outlive-*.whl
	@ls $(OUT)/wheel/*.whl

# The multi-process demo, narrated (scripts/demo.sh).
demo: lib cli python-speedups
	@bash scripts/demo.sh

clean:
	rm -rf $(OUT) .build $(PY_SPEEDUPS)

BENCHES := $(patsubst bench/%.c,$(OUT)/bench/%,$(wildcard bench/*.c))

$(OUT)/bench/%: bench/%.c bench/bench_util.h include/outlive.h $(LIB)
	@mkdir -p $(OUT)/bench
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Iinclude -Ibench -o $@ $< -L$(OUT) -loutlive -Wl,-rpath,$(abspath $(OUT)) -rdynamic -lsqlite3 -lffi -lpthread -ldl -lm

# The C side of a Python benchmark, loaded by it with ctypes (bench/helpers/NAME.c
# → build/bench/libNAME.so; no -loutlive: it binds to the library Python loaded).
BENCH_HELPERS := $(patsubst bench/helpers/%.c,$(OUT)/bench/lib%.so,$(wildcard bench/helpers/*.c))

$(OUT)/bench/lib%.so: bench/helpers/%.c include/outlive.h
	@mkdir -p $(OUT)/bench
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -Iinclude -fPIC -shared -o $@ $<

# Every benchmark with its peers in one run; rewrites BENCHMARKS.md.
bench: lib python-speedups $(BENCHES) $(BENCH_HELPERS)
	$(PYTHON) scripts/bench.py $(BENCHES)
