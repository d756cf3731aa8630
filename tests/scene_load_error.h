/* scene_load_error.h — for tests of bad scene inputs: loading PATH must fail, leave no
 * scene, and give an error that contains a given fragment (the file's name, a line
 * number, the reason). Include once per test program, after tests/check.h. */
#ifndef TESTS_SCENE_LOAD_ERROR_H
#define TESTS_SCENE_LOAD_ERROR_H

#include "scenes/scene.h"
#include "tests/check.h"

#include <string.h>

static inline void expect_load_error(const char *path, const char *fragment)
{
    char err[SC_ERR_MAX];
    sc_scene *s = NULL;
    CHECK_MSG(sc_load(path, &s, err) != 0 && s == NULL, "%s loaded", path);
    CHECK_MSG(strstr(err, fragment) != NULL, "error '%s' lacks '%s'", err, fragment);
}

#endif
