# Mesa's llvmpipe through OSMesa, for the rasterizer comparison (bench/bench_rs_llvmpipe.c).
#
#   make osmesa     installs Debian's libosmesa6-dev as root, or prints the command to run.
#
# The bench compiles to a stub when the header is missing; -lOSMesa is added only when it
# is there, so the link never names a library that does not exist.
OSMESA_HEADER := /usr/include/GL/osmesa.h

.PHONY: osmesa
osmesa:
	@if [ -f $(OSMESA_HEADER) ]; then echo "osmesa: libosmesa6-dev already installed"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libosmesa6-dev >/dev/null; \
	else echo "osmesa: run    sudo apt-get install -y libosmesa6-dev" >&2; exit 1; fi

$(BUILD)/bench/bench_rs_llvmpipe: RENDER_LDLIBS += $(shell test -f $(OSMESA_HEADER) && echo -lOSMesa)
$(BUILD)/bench/bench_rs_llvmpipe: $(wildcard $(OSMESA_HEADER))

# The albedo AOV and textured-speed check against llvmpipe (bench/bench_albedo_llvmpipe.c):
#   make albedo-check    runs it on the opaque scenes (exit 1 below 99% of pixels within 4/255),
#                        then on every scene with both at --msaa 4 (llvmpipe: a 4x FBO)
$(BUILD)/bench/bench_albedo_llvmpipe: RENDER_LDLIBS += $(shell test -f $(OSMESA_HEADER) && echo -lOSMesa)
$(BUILD)/bench/bench_albedo_llvmpipe: $(wildcard $(OSMESA_HEADER))

# tests/render/test_albedo_llvmpipe runs it: `make test` builds it first.
$(BUILD)/tests/render/test_albedo_llvmpipe: | $(BUILD)/bench/bench_albedo_llvmpipe

.PHONY: albedo-check
albedo-check: $(BUILD)/bench/bench_albedo_llvmpipe
	$(BUILD)/bench/bench_albedo_llvmpipe --opaque
	$(BUILD)/bench/bench_albedo_llvmpipe --msaa 4
