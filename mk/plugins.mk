# Plugin stages: examples/plugins/*.c -> $(BUILD)/plugins/*.so, and the test plugins of
# tests/plugins/*.c -> $(BUILD)/tests/plugins/*.so. Built -shared -fPIC and linked with no
# library: a plugin's gr_*/cp_*/pl_*/sh_*/rt_* calls resolve against the program that
# loads it (PLUGIN_HOST_LIBS). The programs look for plugins named without a directory in
# $(BUILD)/plugins, beside their $(BUILD)/bin (tools/common/plugin_path.h), so every
# build directory (build/, build/san-*) uses its own.
EXAMPLE_PLUGINS := $(patsubst examples/plugins/%.c,$(BUILD)/plugins/%.so,$(wildcard examples/plugins/*.c))
TEST_PLUGINS := $(patsubst tests/plugins/%.c,$(BUILD)/tests/plugins/%.so,$(wildcard tests/plugins/*.c))
PLUGINS := $(EXAMPLE_PLUGINS) $(TEST_PLUGINS)

$(BUILD)/plugins/%.so: examples/plugins/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared $< -o $@

$(BUILD)/tests/plugins/%.so: tests/plugins/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared $< -o $@

.PHONY: plugins
plugins: $(PLUGINS)
all: $(PLUGINS)
programs: $(EXAMPLE_PLUGINS)
test: $(PLUGINS)
