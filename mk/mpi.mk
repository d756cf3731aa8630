# gramps-render-mpi, the renderer on several machines under Open MPI (tools/mpi/): built
# only where pkg-config finds Open MPI (ompi-c, from Debian's libopenmpi-dev), so the
# rest of the project builds and tests without it (mk/deps.sh and .ci/run install it;
# a build that ran before it was installed picks it up on the next make).
# tests/render/test_mpi skips, saying why, when the program is absent.
MPI_PKG := ompi-c
ifeq ($(shell pkg-config --exists $(MPI_PKG) 2>/dev/null && echo yes),yes)
MPI_SRC := $(wildcard tools/mpi/*.c)
MPI_OBJ := $(patsubst %,$(BUILD)/obj/%.o,$(MPI_SRC))
MPI_RENDER := $(BUILD)/bin/gramps-render-mpi

$(MPI_OBJ): CFLAGS += $(shell pkg-config --cflags $(MPI_PKG))

$(MPI_RENDER): $(MPI_OBJ) $(LIBTOOLS) $(LIBRENDER) $(LIBGRAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(MPI_OBJ) -o $@ $(LDFLAGS) $(PLUGIN_HOST_LIBS) $(RENDER_LDLIBS) \
	    $(shell pkg-config --libs $(MPI_PKG))

all test programs: $(MPI_RENDER)
endif
