# `make fuzz`: bounded libFuzzer runs of the scene loaders (.scene parser, OBJ reader)
# with AddressSanitizer. FUZZ_SECONDS per target (default 30). Crashes are written to
# tests/fuzz/regress/, which tests/render/test_fuzz_corpus.c replays on every `make test`.
FUZZ_SECONDS ?= 30
FUZZ_DIR := build/fuzz
FUZZ_SRC := $(wildcard scenes/*.c)
FUZZ_FLAGS := -std=c11 -g -O1 -I. -D_GNU_SOURCE -fsanitize=fuzzer,address

$(FUZZ_DIR)/fuzz_scene: tests/fuzz/fuzz_load.c $(FUZZ_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -DFUZZ_SUFFIX='".scene"' $^ -o $@ -lassimp -linih -lm

$(FUZZ_DIR)/fuzz_obj: tests/fuzz/fuzz_load.c $(FUZZ_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -DFUZZ_SUFFIX='".obj"' $^ -o $@ -lassimp -linih -lm

fuzz-deps:
	@command -v clang >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y -qq clang libclang-rt-14-dev >/dev/null; } \
	    || { echo "fuzz: run: sudo apt-get install -y clang libclang-rt-14-dev"; exit 1; }

fuzz: fuzz-deps $(FUZZ_DIR)/fuzz_scene $(FUZZ_DIR)/fuzz_obj
	@mkdir -p $(FUZZ_DIR)/corpus-scene $(FUZZ_DIR)/corpus-obj tests/fuzz/regress
	$(FUZZ_DIR)/fuzz_scene -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=tests/fuzz/regress/ \
	    $(FUZZ_DIR)/corpus-scene tests/fuzz/corpus/scene
	$(FUZZ_DIR)/fuzz_obj -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=tests/fuzz/regress/ \
	    $(FUZZ_DIR)/corpus-obj tests/fuzz/corpus/obj
.PHONY: fuzz fuzz-deps
