# The built-in graph files are compiled into the renderer library
# (pipelines/stages.c includes them as C string literals), so gramps-render runs them
# from anywhere without an installed data directory.
GRAPH_FILES := $(wildcard pipelines/graphs/*.graph)
GRAPH_INCS := $(patsubst pipelines/graphs/%.graph,$(BUILD)/gen/graphs/%.graph.inc,$(GRAPH_FILES))

$(BUILD)/gen/graphs/%.graph.inc: pipelines/graphs/%.graph
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@

$(BUILD)/obj/pipelines/stages.c.o: $(GRAPH_INCS)
$(BUILD)/obj/pipelines/stages.c.o: CPPFLAGS += -I$(BUILD)/gen
