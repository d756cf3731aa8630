# GRAMPS rendering-pipeline framework: GNU make build.
#
#   make                 build library, tools, tests, benchmarks into build/
#   make test            run every test; last line is "N passed, N failed"
#   make bench           run the benchmark programs (prints "name value unit")
#   make bench-scaling [THREADS=1,2,4,8,16]   both renderers against llvmpipe and Embree
#                        at each thread count, as tables with speedups
#   make bench-simulate [PARTS="here 16core papers speedup"]   the virtual-time simulator
#                        against real runs, the papers' tables at 24 and 32 virtual workers
#   make programs        every program (gramps-render, -run, -footprint, -demo, and
#                        gramps-view / gramps-render-mpi where SDL2 / Open MPI are) and
#                        the example plugins
#   make run             make programs, then render the default scene
#   make install PREFIX=/usr/local [DESTDIR=...]   the programs, example plugins and
#                        graph files, runtime and renderer libraries, headers,
#                        pkg-config files (gramps, gramps-render)
#
# Builds run in parallel by default, one job per CPU; -jN on the command line wins.
#   make SAN=thread|address|undefined test     sanitizer builds (own build dir)
#
# Sources are found by wildcard: a new .c file in a module folder joins its library;
# tests/runtime/*.c and tests/render/*.c each become one test program; tools/*.c and
# bench/*.c each become one program.

# In GNU make 4.3 a -j on the command line overrides this; sub-makes share the top's
# job server, so only the top level sets it; `make clean all` stays serial (clean must
# finish before anything builds).
ifeq ($(MAKELEVEL)$(filter clean,$(MAKECMDGOALS)),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

CC      ?= cc
PREFIX  ?= /usr/local
SAN     ?=
OPT     ?= -O2

ifeq ($(SAN),)
BUILD   := build
SANFLAGS :=
else
BUILD   := build/san-$(SAN)
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer
ifeq ($(SAN),undefined)
SANFLAGS += -fno-sanitize-recover=all   # undefined behaviour fails the test program
# GCC 12 warns of out-of-bounds subscripts on paths its inlined UBSan checks create
# (rasterizer/samples.h's per-sample loops: "subscript 32", "subscript -1" on arrays of 8);
# the plain build keeps -Warray-bounds, and UBSan checks those bounds at run time
SANFLAGS += -Wno-array-bounds
endif
endif

ARCH := $(shell uname -m)
ifeq ($(ARCH),x86_64)
ARCHFLAGS := -msse2
else
ARCHFLAGS :=
endif

CPPFLAGS += -I. -D_GNU_SOURCE
CFLAGS   += -std=c11 $(OPT) -g -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes -pthread $(ARCHFLAGS) $(SANFLAGS) -MMD -MP
LDFLAGS  += -pthread $(SANFLAGS)
# libgramps needs METIS and GLPK for the Static scheduler's partition (README "Dependencies").
LDLIBS   := -lmetis -lglpk -lm

# System libraries used by the renderer modules (see README "Dependencies").
RENDER_LDLIBS := -lassimp -linih -lz -ljpeg -lOpenEXRCore-3_1 -lmetis -lglpk -lOpenCL -ldl -lm

GRAMPS_SRC := $(wildcard gramps/*.c) $(wildcard gramps/*.S)
RENDER_SRC := $(wildcard accel/*.c apps/*.c compose/*.c scenes/*.c rasterizer/*.c raytracer/*.c shaders/*.c pipelines/*.c pipelines/*/*.c output/*.c)
# Code the programs share (option parsing, footprint study, plots): not installed.
TOOLS_SRC  := $(wildcard tools/common/*.c)
# OpenCL C kernel sources (*.cl beside the C code that launches them) are compiled in
# as strings: each becomes a C file defining `const char cl_<path>[]` (mk/cl_embed.sh).
CL_SRC     := $(wildcard */opencl/*.cl */*/opencl/*.cl)
GRAMPS_OBJ := $(patsubst %,$(BUILD)/obj/%.o,$(GRAMPS_SRC))
RENDER_OBJ := $(patsubst %,$(BUILD)/obj/%.o,$(RENDER_SRC)) $(patsubst %,$(BUILD)/obj/%.o,$(CL_SRC))
TOOLS_OBJ  := $(patsubst %,$(BUILD)/obj/%.o,$(TOOLS_SRC))

# The libraries export what their installed headers declare and mark GR_API
# (gramps/api.h), nothing else: objects are compiled hidden by default, and position
# independent, so the same objects make the static archives and the shared libraries.
OBJFLAGS := -fPIC -fvisibility=hidden

# Packet kernels written as loops across a packet for the vectorizer: -O3 vectorizes
# loops of unknown length (-O2's cost model does not), -fno-math-errno lets sqrtf
# become one instruction and -fno-trapping-math lets a loop with a select on a float
# comparison (normalize's `l > 0 ? l : 1`) be vectorized: with trapping math GCC keeps
# such a loop scalar. None changes a result (the same IEEE operations per lane; only
# the floating-point exception flags, which nothing reads, may differ). The ray
# tracer's Shade kernel gains too (unrolled per-channel loops, inline sqrtf): -18%
# instructions per hit.
VECTOR_KERNELS := shaders/raster_shading.c shaders/ray_shading.c raytracer/tri_each.c \
    rasterizer/weights.c pipelines/raster/ztile.c
VECTOR_OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(VECTOR_KERNELS))
$(VECTOR_OBJS): CFLAGS += -O3 -fno-math-errno -fno-trapping-math
$(VECTOR_OBJS): Makefile               # these flags are not in the flags stamp

LIBGRAMPS := $(BUILD)/lib/libgramps.a
LIBRENDER := $(BUILD)/lib/librender.a
LIBTOOLS  := $(BUILD)/lib/libtools.a
SHARED_LIBS := $(BUILD)/lib/libgramps.so $(BUILD)/lib/librender.so

TOOLS        := $(patsubst tools/%.c,$(BUILD)/bin/%,$(wildcard tools/*.c))
RUNTIME_TESTS := $(patsubst tests/runtime/%.c,$(BUILD)/tests/runtime/%,$(wildcard tests/runtime/test_*.c))
RENDER_TESTS := $(patsubst tests/render/%.c,$(BUILD)/tests/render/%,$(wildcard tests/render/test_*.c))
BENCHES      := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
DEPS_STAMP   := build/.deps-ok

.PHONY: FORCE all deps test test-runtime bench bench-scaling bench-simulate bench-hybrid programs run install install-files clean check-all fuzz gallery
all: $(DEPS_STAMP) $(LIBGRAMPS) $(LIBRENDER) $(SHARED_LIBS) $(TOOLS) $(RUNTIME_TESTS) $(RENDER_TESTS) $(BENCHES)

# Checks for the Debian packages the build needs; installs them when run as root.
$(DEPS_STAMP): mk/deps.sh
	@sh mk/deps.sh build
	@mkdir -p build && touch $@
deps: $(DEPS_STAMP)

# Objects depend on the flags they were compiled with, so a change of flags (such as
# OBJFLAGS') rebuilds them instead of linking stale ones.
FLAGS_STAMP := $(BUILD)/obj/flags
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CPPFLAGS) $(CFLAGS) $(OBJFLAGS)' | cmp -s - $@ || \
	    echo '$(CC) $(CPPFLAGS) $(CFLAGS) $(OBJFLAGS)' > $@
FORCE:

$(BUILD)/obj/%.c.o: %.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(OBJFLAGS) -c $< -o $@

$(BUILD)/obj/%.cl.o: %.cl mk/cl_embed.sh $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	sh mk/cl_embed.sh $< > $(@:.o=.c)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(OBJFLAGS) -c $(@:.o=.c) -o $@

$(BUILD)/obj/%.S.o: %.S $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SANFLAGS) -c $< -o $@

$(LIBGRAMPS): $(GRAMPS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBRENDER): $(RENDER_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBTOOLS): $(TOOLS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Shared builds of the two libraries (not installed: the programs and pkg-config use the
# archives); tests/render/test_exports checks what they export against the headers.
$(BUILD)/lib/libgramps.so: $(GRAMPS_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared $^ -o $@ $(LDFLAGS) $(LDLIBS)
$(BUILD)/lib/librender.so: $(RENDER_OBJ) $(BUILD)/lib/libgramps.so
	@mkdir -p $(dir $@)
	$(CC) -shared $(RENDER_OBJ) -o $@ $(LDFLAGS) -L$(BUILD)/lib -lgramps $(RENDER_LDLIBS)

$(BUILD)/tests/runtime/%: tests/runtime/%.c tests/check.h $(LIBGRAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(LIBGRAMPS) $(LDLIBS)

# Programs that load plugin stages export the whole runtime and renderer libraries, so
# that a plugin finds every gr_/cp_/pl_ function it calls in the program.
PLUGIN_HOST_LIBS = -rdynamic $(LIBTOOLS) -Wl,--whole-archive $(LIBRENDER) $(LIBGRAMPS) -Wl,--no-whole-archive

$(BUILD)/tests/render/%: tests/render/%.c tests/check.h $(LIBTOOLS) $(LIBRENDER) $(LIBGRAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(PLUGIN_HOST_LIBS) $(RENDER_LDLIBS)

# test_bench_pairs runs the bench that bench/hybrid.sh times with.
$(BUILD)/tests/render/test_bench_pairs: | $(BUILD)/bench/bench_pipeline_pairs

# test_install builds the installed example with this build's compiler and sanitizer
# (private: the libraries it depends on are not compiled with these defines).
$(BUILD)/tests/render/test_install: private CPPFLAGS += -DTEST_CC='"$(CC)"' \
    -DTEST_SANFLAGS='"$(strip $(SANFLAGS))"'

$(BUILD)/bin/%: tools/%.c $(LIBTOOLS) $(LIBRENDER) $(LIBGRAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(PLUGIN_HOST_LIBS) $(RENDER_LDLIBS)

$(BUILD)/bench/%: bench/%.c $(LIBTOOLS) $(LIBRENDER) $(LIBGRAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(LIBTOOLS) $(LIBRENDER) $(LIBGRAMPS) $(RENDER_LDLIBS) -ldl

test: $(DEPS_STAMP) $(LIBGRAMPS) $(LIBRENDER) $(SHARED_LIBS) $(TOOLS) $(RUNTIME_TESTS) $(RENDER_TESTS)
	@sh tests/run_tests.sh $(BUILD) $(RUNTIME_TESTS) $(RENDER_TESTS)

# The runtime alone: gramps/ builds and tests without the renderer modules. Under a
# GRAMPS_SCHEDULER other than the default, the tests that run every scheduler themselves
# (and ignore the variable) are left out: they already ran in the default pass.
RUNTIME_TESTS_EVERY_SCHEDULER := $(BUILD)/tests/runtime/test_simulate
test-runtime: $(LIBGRAMPS) $(RUNTIME_TESTS)
	@sh tests/run_tests.sh $(BUILD) $(if $(GRAMPS_SCHEDULER),$(filter-out $(RUNTIME_TESTS_EVERY_SCHEDULER),$(RUNTIME_TESTS)),$(RUNTIME_TESTS))

bench: all
	@sh bench/run_bench.sh $(BUILD)

# The README's gallery: the showcase and Debian's textured test models, every pipeline.
gallery: all
	@sh tools/gallery.sh $(BUILD) docs/gallery

# The many-core figures against llvmpipe and Embree: THREADS=1,2,4,8,16 by default.
bench-scaling: all
	@sh bench/scaling.sh $(BUILD) $(THREADS)

# The hybrid against the ray tracer (bench/hybrid.sh): SIZE, ROUNDS, FRAMES, WORKERS,
# SCENES, PIPELINES choose the runs.
bench-hybrid: all
	@sh bench/hybrid.sh $(BUILD)

# The simulator's checks and tables (bench/simulate.sh): every part unless PARTS says.
bench-simulate: all
	@sh bench/simulate.sh $(BUILD) $(PARTS)

# Every program the README describes; mk/viewer.mk, mk/mpi.mk and mk/plugins.mk add
# gramps-view, gramps-render-mpi and the example plugins where they can be built.
programs: $(DEPS_STAMP) $(TOOLS)

run: programs
	@sh mk/run_default.sh $(BUILD)

# Torture and sanitizer runs of everything (slow; not part of CI's budget).
check-all:
	$(MAKE) test
	$(MAKE) SAN=thread test
	GRAMPS_TORTURE=1 $(MAKE) SAN=thread test
	$(MAKE) SAN=address test

# The headers a program needs to build and run renderer graphs: these, and every header
# they include from the project (found by the compiler, so the set follows the sources),
# installed under include/gramps/ in the source layout, so that one -I (gramps-render.pc
# gives it) resolves "pipelines/stages.h" and gramps.pc's resolves "gramps/gramps.h".
RENDER_API_HEADERS := compose/compose.h accel/opencl.h output/image_out.h raytracer/trace.h \
    pipelines/stages.h pipelines/kept_graph.h pipelines/frame.h pipelines/surface.h pipelines/raster/raster.h \
    pipelines/raytrace/raytrace.h pipelines/raster/packets.h pipelines/raytrace/packets.h \
    shaders/texture_sample.h shaders/texture_sample_packet.h

# install builds what it installs; install-files only copies from $(BUILD), so a test can
# install an already built tree without starting a rebuild. The programs go to bin/, the
# example plugins to lib/gramps/plugins (where the installed programs look for a plugin
# named without a directory: tools/common/plugin_path.h), the built-in graphs to
# share/gramps/graphs and the example graphs to share/gramps/examples/graphs.
install: $(LIBGRAMPS) $(LIBRENDER) programs
	@$(MAKE) --no-print-directory install-files
install-files:
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/gramps \
	    $(DESTDIR)$(PREFIX)/share/gramps/graphs $(DESTDIR)$(PREFIX)/bin \
	    $(DESTDIR)$(PREFIX)/lib/gramps/plugins $(DESTDIR)$(PREFIX)/share/gramps/examples/graphs
	for p in $(BUILD)/bin/gramps-*; do case $$p in *.d) ;; *) \
	    install -m 755 $$p $(DESTDIR)$(PREFIX)/bin/ || exit 1;; esac; done
	for p in $(wildcard $(BUILD)/plugins/*.so); do \
	    install -m 755 $$p $(DESTDIR)$(PREFIX)/lib/gramps/plugins/ || exit 1; done
	install -m 644 examples/graphs/*.graph $(DESTDIR)$(PREFIX)/share/gramps/examples/graphs/
	install -m 644 $(LIBGRAMPS) $(LIBRENDER) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 gramps/gramps.h gramps/api.h $(DESTDIR)$(PREFIX)/include/gramps/
	for h in $$($(CC) $(CPPFLAGS) -MM $(RENDER_API_HEADERS) | tr ' \\' '\n\n' | \
	            grep '\.h$$' | grep -v '^gramps/' | sort -u); do \
	    install -D -m 644 $$h $(DESTDIR)$(PREFIX)/include/gramps/$$h || exit 1; done
	install -m 644 pipelines/graphs/*.graph $(DESTDIR)$(PREFIX)/share/gramps/graphs/
	sed -e 's|@PREFIX@|$(PREFIX)|' mk/gramps.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gramps.pc
	sed -e 's|@PREFIX@|$(PREFIX)|' mk/gramps-render.pc.in > \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig/gramps-render.pc

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)

# Module-specific extra targets (fuzzing, benchmark dependencies...) live in mk/*.mk.
-include $(wildcard mk/*.mk)
