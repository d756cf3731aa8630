/* Replays the fuzzing seed corpora and every saved crash (tests/fuzz/regress/) through
 * the scene loaders as .scene and as .obj input: each must load or fail cleanly. */
#include "scenes/scene.h"
#include "tests/check.h"

#include <dirent.h>
#include <unistd.h>

static int replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char src[512];
        snprintf(src, sizeof src, "%s/%s", dir, e->d_name);
        FILE *in = fopen(src, "rb");
        if (!in) continue;
        static const char *suffix[] = {".scene", ".obj"};
        for (int k = 0; k < 2; k++) {
            char path[64];
            snprintf(path, sizeof path, "/tmp/gramps-replay-%d%s", (int)getpid(), suffix[k]);
            FILE *out = fopen(path, "wb");
            char buf[4096];
            size_t got;
            rewind(in);
            while ((got = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, got, out);
            fclose(out);
            char err[SC_ERR_MAX];
            sc_scene *s;
            if (sc_load(path, &s, err) == 0) {
                sc_geometry g;
                CHECK(sc_flatten(s, &g, err) == 0);
                sc_geometry_free(&g);
                sc_free(s);
            } else {
                CHECK_MSG(err[0] != 0, "%s failed without a message", src);
            }
            unlink(path);
        }
        fclose(in);
        n++;
    }
    closedir(d);
    return n;
}

static void test_replay(void)
{
    int n = replay_dir("tests/fuzz/corpus/scene") + replay_dir("tests/fuzz/corpus/obj") +
            replay_dir("tests/fuzz/regress");
    CHECK(n >= 4);
}

int main(void)
{
    RUN(test_replay);
    return check_finish();
}
