/* The ordered raster graph with a ticket-ordered PS (examples/graphs/raster-tickets.graph,
 * gr_stage_desc.ticket_order) in place of its ordered chain renders the same bytes as the
 * chain: the showcase's blended fragments reach each tile's OM in primitive order under
 * every policy (1, 2, 3 and 8 workers in turn), with 4x MSAA too. Runs gramps-render beside
 * this test's build dir. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <unistd.h>

static char dir[] = "/tmp/gramps-ticket-raster-XXXXXX";

static void render(const char *graph, const char *opts, const char *png)
{
    char args[1024];
    snprintf(args, sizeof args, "-q --size 96x64 --set graph.tile=16 %s %s -o %s/%s showcase",
             graph, opts, dir, png);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
}

static bool same_png(const char *a, const char *b)
{
    char pa[300], pb[300];
    snprintf(pa, sizeof pa, "%s/%s", dir, a);
    snprintf(pb, sizeof pb, "%s/%s", dir, b);
    return same_files(pa, pb);
}

/* Each policy once, worker counts 1, 2, 3, 8 in turn (the runtime's test_ticket_order
 * covers every pair); then 4x MSAA. */
static void test_tickets_render_the_chains_image(void)
{
    static const char *const policies[] = {"gramps", "task-stealing", "breadth-first",
                                           "static", "qes", "pss"};
    static const int workers[] = {1, 2, 3, 8};
    render("-p raster-ordered", "", "chain.png");
    for (int p = 0; p < 6; p++) {
        char opts[128];
        snprintf(opts, sizeof opts, "-t %d --scheduler %s", workers[p % 4], policies[p]);
        render("--graph examples/graphs/raster-tickets.graph", opts, "tickets.png");
        CHECK_MSG(same_png("chain.png", "tickets.png"), "%s: the image differs from the "
                  "ordered chain's", opts);
    }
    render("-p raster-ordered", "--msaa 4", "chain4.png");
    render("--graph examples/graphs/raster-tickets.graph", "--msaa 4 -t 3", "tickets4.png");
    CHECK_MSG(same_png("chain4.png", "tickets4.png"), "4x MSAA: the image differs from the "
              "ordered chain's");
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_tickets_render_the_chains_image);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}
