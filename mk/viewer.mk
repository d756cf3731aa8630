# gramps-view, the live SDL2 viewer (tools/view/): built only where pkg-config finds SDL2
# and SDL2_ttf, so the rest of the project builds and tests without them (mk/deps.sh
# and .ci/run install them; a build that ran before they were installed picks them up
# on the next make). tests/render/test_view skips, saying why, when the viewer is absent.
VIEW_PKGS := sdl2 SDL2_ttf
ifeq ($(shell pkg-config --exists $(VIEW_PKGS) 2>/dev/null && echo yes),yes)
VIEW_SRC := $(wildcard tools/view/*.c)
VIEW_OBJ := $(patsubst %,$(BUILD)/obj/%.o,$(VIEW_SRC))
VIEWER   := $(BUILD)/bin/gramps-view

$(VIEW_OBJ): CFLAGS += $(shell pkg-config --cflags $(VIEW_PKGS))

$(VIEWER): $(VIEW_OBJ) $(LIBTOOLS) $(LIBRENDER) $(LIBGRAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(VIEW_OBJ) -o $@ $(LDFLAGS) $(PLUGIN_HOST_LIBS) $(RENDER_LDLIBS) \
	    $(shell pkg-config --libs $(VIEW_PKGS))

all test programs: $(VIEWER)
endif
