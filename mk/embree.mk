# Intel Embree 3 for the ray-tracer comparison benchmark (bench/bench_rt_embree.c).
#
#   make embree     installs Debian's libembree-dev as root, or prints the command to run.
#
# bench_rt_embree.c compiles to a stub ("# embree not installed") when the header is
# missing, so the generic bench rule always builds; -lembree3 is only added when the
# header is there, so the link never names a library that does not exist.

EMBREE_HEADER := /usr/include/embree3/rtcore.h

.PHONY: embree
embree:
	@if [ -f $(EMBREE_HEADER) ]; then echo "embree: libembree-dev already installed"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "embree: installing libembree-dev" >&2; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libembree-dev >/dev/null; \
	else echo "embree: run    sudo apt-get install -y libembree-dev" >&2; exit 1; fi

# Target-specific, for this one program: the generic $(BUILD)/bench/% rule links with
# $(RENDER_LDLIBS) (not $(LDLIBS)), so -lembree3 is appended there.
$(BUILD)/bench/bench_rt_embree: RENDER_LDLIBS += $(shell test -f $(EMBREE_HEADER) && echo -lembree3)
# Rebuild the bench when embree appears or disappears: the stamp's name records the
# state, so a change of state is a missing (hence new) prerequisite. The header's own
# mtime would not do: a package installs it with its build date, older than the program.
EMBREE_STATE := $(BUILD)/.embree-$(if $(wildcard $(EMBREE_HEADER)),yes,no)
$(EMBREE_STATE):
	@mkdir -p $(dir $@) && rm -f $(BUILD)/.embree-yes $(BUILD)/.embree-no && touch $@
$(BUILD)/bench/bench_rt_embree: $(EMBREE_STATE)
