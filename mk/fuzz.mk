# `make fuzz`: bounded libFuzzer runs that load AND render (both pipelines, 16x16, one
# worker; tests/fuzz/fuzz_load.c) OBJ, PLY, glTF and .scene inputs, in an
# AddressSanitizer + UBSan build. FUZZ_SECONDS per target (default 30). Seeds are in
# tests/fuzz/corpus/<kind>/; what a run finds new goes to build/fuzz/corpus-<kind>/;
# crashes are written to tests/fuzz/regress/, which tests/render/test_fuzz_corpus.c
# replays on every `make test` (commit them with the fix). Long runs: docs/scenes.md, "Fuzzing".
FUZZ_SECONDS ?= 30
FUZZ_KINDS := scene obj ply gltf
FUZZ_DIR := build/fuzz
FUZZ_SRC := $(wildcard accel/*.c compose/*.c scenes/*.c rasterizer/*.c raytracer/*.c shaders/*.c pipelines/*.c pipelines/*/*.c gramps/*.c)
FUZZ_ASM := $(wildcard gramps/*.S)
FUZZ_OBJ := $(patsubst %,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SRC) $(FUZZ_ASM) $(CL_SRC))
.SECONDARY: $(FUZZ_OBJ)
FUZZ_CFLAGS := -std=c11 -g -O1 -I. -I$(BUILD)/gen -D_GNU_SOURCE -pthread $(ARCHFLAGS) \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# Objects only: the compiler lists each object's headers in a .d file beside it, which the
# Makefile's include of build/**/*.d reads, so a header change rebuilds what includes it.
# Not on the link lines: their build/fuzz/fuzz_K.d would be an included makefile that the
# fuzz_K rule below could "remake" by linking a program into it (make then stops at the
# binary's NUL bytes); their headers are listed as prerequisites instead.
FUZZ_DEPFLAGS := -MMD -MP

$(FUZZ_DIR)/obj/pipelines/stages.c.o: $(GRAPH_INCS)
$(FUZZ_DIR)/obj/%.c.o: %.c | fuzz-deps
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(FUZZ_DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/obj/%.cl.o: %.cl mk/cl_embed.sh | fuzz-deps
	@mkdir -p $(dir $@)
	sh mk/cl_embed.sh $< > $(@:.o=.c)
	clang $(FUZZ_CFLAGS) $(FUZZ_DEPFLAGS) -c $(@:.o=.c) -o $@

$(FUZZ_DIR)/obj/%.S.o: %.S | fuzz-deps
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -c $< -o $@

$(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_KINDS)): $(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_load.c tests/fuzz/fuzz_render.h $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -DFUZZ_SUFFIX='".$*"' $< $(FUZZ_OBJ) -o $@ \
	    -lassimp -linih -lz -ljpeg -lOpenEXRCore-3_1 -lmetis -lglpk -lOpenCL -ldl -lm

# Graph files (tests/fuzz/fuzz_graph.c): parsed, instantiated and run on the teapot;
# hostile plugin stages (tests/fuzz/fuzz_plugin.c): packets corrupted between two
# built-in stages of a rendering graph.
$(FUZZ_DIR)/fuzz_graph $(FUZZ_DIR)/fuzz_plugin: $(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_%.h \
    tests/fuzz/fuzz_graph.h $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJ) -o $@ -lassimp -linih -lz -ljpeg -lOpenEXRCore-3_1 -lmetis -lglpk -lOpenCL -ldl -lm

fuzz-deps:
	@command -v clang >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y -qq clang libclang-rt-14-dev >/dev/null; } \
	    || { echo "fuzz: run: sudo apt-get install -y clang libclang-rt-14-dev"; exit 1; }

# -fork=1: a timeout or out-of-memory input is saved and the run goes on (libFuzzer
# stops at the first otherwise); -rss_limit_mb bounds the in-process loaders and renders.
fuzz: fuzz-deps $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_KINDS) graph plugin)
	@mkdir -p tests/fuzz/regress
	@for k in $(FUZZ_KINDS) graph plugin; do mkdir -p $(FUZZ_DIR)/corpus-$$k tests/fuzz/corpus/$$k; \
	    echo "== fuzz $$k ($(FUZZ_SECONDS) s)"; \
	    ASAN_OPTIONS=detect_leaks=1 $(FUZZ_DIR)/fuzz_$$k -max_total_time=$(FUZZ_SECONDS) \
	        -timeout=20 -rss_limit_mb=3072 -max_len=65536 -artifact_prefix=tests/fuzz/regress/ \
	        $(FUZZ_DIR)/corpus-$$k tests/fuzz/corpus/$$k || exit 1; done

# The hostile-input soak: every fuzz target (mesh and scene files, graph files, hostile
# plugin stages) for SOAK_MINUTES in all (default 60), split evenly between them.
SOAK_MINUTES ?= 60
soak:
	$(MAKE) fuzz FUZZ_SECONDS=$$(( $(SOAK_MINUTES) * 60 / 6 ))
.PHONY: fuzz fuzz-deps soak
