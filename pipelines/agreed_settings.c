/* agreed_settings.c — settings every stage of a graph that states them must share
 * (pl_stage_agree, frame.h): the first stage of the run to state one fixes it in the
 * frame resource "agreed-settings", made again before each run, and a stage that states
 * another value stops the graph with a message naming both stages. Graph files give the
 * stages one [graph] variable each, but a --set or a hand-written graph can give two
 * stages that pass tiles, set-up triangles, batches or sample runs to each other
 * different ones, and the image came out wrong with exit 0 (an empty image from a
 * Setup/Bin and a per-tile Rast with other tiles, stripes from an rt.tiler and an
 * rt.primary with other samples per pixel). */
#include "pipelines/frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETTINGS 16

typedef struct agreed {
    int n;
    struct {
        char setting[32];
        int value;
        char stage[PL_COUNTER_NAME];
    } e[MAX_SETTINGS];
} agreed;

static void *agreed_create(void *frame, const char *owner)
{
    (void)frame, (void)owner;
    return calloc(1, sizeof(agreed));
}

const cp_resource_type pl_agreed_settings_resource = {
    "agreed-settings", "the settings every stage of the graph that states them shares (the tile edge, "
    "samples per pixel, batch): the first stage's value and name", "names + ints", 0, CP_PER_SCENE, false,
    CP_CLEAR_NONE, NULL, agreed_create, free, NULL};

bool pl_stage_agree(const cp_stage_init *i, const char *setting, int value, char err[CP_ERR_MAX])
{
    agreed *a = pl_frame_use(i, "agreed-settings", err);
    if (!a) return false;
    for (int k = 0; k < a->n; k++) {
        if (strcmp(a->e[k].setting, setting)) continue;
        if (a->e[k].value == value) return true;
        snprintf(err, CP_ERR_MAX, "its `%s` is %d, where stage '%s' has %d: the stages of a graph that "
                 "pass work to one another must agree on it (give them the same `%s`)", setting, value,
                 a->e[k].stage, a->e[k].value, setting);
        return false;
    }
    if (a->n == MAX_SETTINGS || strlen(setting) >= sizeof a->e[0].setting) {
        snprintf(err, CP_ERR_MAX, "setting `%s`: more than %d settings to agree on, or a name of %zu "
                 "characters or more", setting, MAX_SETTINGS, sizeof a->e[0].setting);
        return false;
    }
    snprintf(a->e[a->n].setting, sizeof a->e[0].setting, "%s", setting);
    snprintf(a->e[a->n].stage, sizeof a->e[0].stage, "%s", i->name);
    a->e[a->n++].value = value;
    return true;
}

bool pl_agree_spp(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    return pl_stage_agree(i, "spp", (int)cp_int(i, "spp"), err);
}
