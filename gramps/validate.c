/* validate.c — checks a graph before launch and derives what the scheduler needs:
 * static priorities (a DFS: consumers above producers), backward (cycle) edges, the
 * strongly connected components used by termination detection, and ordered chains.
 * Every error names the stage or queue at fault, and records their ids (gr_error_blame)
 * for a caller that knows where the user wrote them. */
#include "gramps/internal.h"

#include <stdlib.h>
#include <string.h>

#define FAIL(...) do { gr_set_error(g, GR_ERR_INVALID, __VA_ARGS__); return false; } while (0)
/* The same about a stage (its binding of a queue when both are given; GR_INVALID: none). */
#define FAIL_AT(stage, queue, ...) do { blame(g, stage, queue); FAIL(__VA_ARGS__); } while (0)

/* The first error's subject, as gr_set_error keeps the first message. */
static void blame(gr_graph *g, int stage, int queue)
{
    if (g->status != GR_OK) return;
    g->blame_stage = stage;
    g->blame_queue = queue;
}

static bool check_queue(gr_graph *g, gr_queue_rt *q)
{
    if (q->consumer < 0)
        FAIL_AT(GR_INVALID, q->id, "queue '%s' has no consumer: bind it as an input of a stage", q->name);
    if (q->nproducers == 0)
        FAIL_AT(GR_INVALID, q->id, "queue '%s' has no producer: bind it as an output of a stage", q->name);
    gr_stage_rt *c = g->stages[q->consumer];
    q->physical = c->d.kind != GR_SHADER;
    if (q->d.ordered && q->push_fed)
        FAIL_AT(GR_INVALID, q->id, "queue '%s' is ordered but pushed to: push queues are unordered", q->name);
    return true;
}

/* A recirculating reduction (reduction.c) coalesces a plain queue's packets, two of
 * whose results fit in one, and sends its one result to a plain unordered queue. */
static bool check_recirculation(gr_graph *g, gr_stage_rt *s, const gr_queue_rt *in)
{
    if (!s->d.coalesce_input)
        FAIL_AT(s->id, in->id, "Shader stage '%s' recirculates its reduction, which needs "
                "coalesce_input as well", s->name);
    if (in->is_set || in->d.elements < 2)
        FAIL_AT(s->id, in->id, "Shader stage '%s' recirculates its reduction, which needs a "
                "plain input queue of at least 2 elements per packet ('%s' is %s)", s->name,
                in->name, in->is_set ? "a queue set" : "of 1 element");
    for (int i = 0; i < s->nout; i++) {
        const gr_queue_rt *q = g->queues[s->out[i].queue];
        bool set_refused = q->is_set && !s->d.reduce_per_key;
        if (s->out[i].mode == GR_BIND_INPLACE && (set_refused || q->d.ordered))
            FAIL_AT(s->id, q->id, "Shader stage '%s' recirculates its reduction into '%s', "
                    "which is %s: its one result goes to a plain unordered queue%s", s->name,
                    q->name, q->d.ordered ? "ordered" : "a queue set",
                    q->d.ordered ? "" : " (one per key, with keys, with reduce_per_key)");
    }
    return true;
}

static int ordered_output(gr_graph *g, gr_stage_rt *s, int *count);

/* A ticket-ordered Shader (gr_stage_desc.ticket_order): its input's tickets follow one
 * Thread stage's commits, so they are the same in every run; its results fill the slots
 * of one ordered queue that a Thread stage reads and nothing else writes, so ticket k's
 * slot is that subqueue's k-th. */
static bool check_ticket_order(gr_graph *g, gr_stage_rt *s, gr_queue_rt *in)
{
    if (in->d.ordered || in->is_set || in->nproducers != 1 ||
        g->stages[in->producers[0]]->d.kind == GR_SHADER || g->stages[in->producers[0]]->d.instanced)
        FAIL_AT(s->id, in->id, "Shader stage '%s' orders its output by tickets, which needs an "
                "input queue that is not ordered nor a queue set, written by one Thread stage "
                "that is not instanced (its commits give the tickets' order); '%s' is not",
                s->name, in->name);
    if (s->d.coalesce_input || s->d.batch)
        FAIL_AT(s->id, in->id, "Shader stage '%s' orders its output by tickets, one result per "
                "input packet, which %s excludes", s->name,
                s->d.coalesce_input ? "coalescing its input" : "running in batches");
    int n, out = ordered_output(g, s, &n);
    gr_queue_rt *q = out >= 0 ? g->queues[out] : NULL;
    if (n != 1 || !q->physical || q->nproducers != 1)
        FAIL_AT(s->id, out, "Shader stage '%s' orders its output by tickets, which needs exactly "
                "one ordered output queue, read by a Thread stage and written by it alone",
                s->name);
    in->ticket_end = q->id;
    s->fifo = true;                       /* oldest tickets first: the slots fill in order */
    return true;
}

static bool check_shader(gr_graph *g, gr_stage_rt *s)
{
    if (s->nin != 1)
        FAIL_AT(s->id, GR_INVALID, "Shader stage '%s' has %d input queues; a Shader runs once per packet of "
             "exactly one input queue", s->name, s->nin);
    gr_queue_rt *in = g->queues[s->in[0].queue];
    int inplace = 0;
    for (int i = 0; i < s->nout; i++) {
        gr_queue_rt *q = g->queues[s->out[i].queue];
        if (s->out[i].mode != GR_BIND_INPLACE) continue;
        if (++inplace > 1)
            FAIL_AT(s->id, q->id, "Shader stage '%s' has more than one in-place output", s->name);
        if (q->packet_bytes != in->packet_bytes)
            FAIL_AT(s->id, q->id, "Shader stage '%s': in-place queue '%s' has %zu-byte packets but input "
                 "queue '%s' has %zu", s->name, q->name, q->packet_bytes, in->name,
                 in->packet_bytes);
    }
    if (s->d.coalesce_input && (in->d.kind != GR_COLLECTION || in->d.ordered || !inplace))
        FAIL_AT(s->id, in->id, "Shader stage '%s' coalesces its input, which needs an unordered Collection "
             "input queue ('%s' is %s) and an in-place output", s->name, in->name,
             in->d.kind != GR_COLLECTION ? "Opaque" : in->d.ordered ? "ordered" : "one, but "
             "the stage has no in-place output");
    if (s->d.reduce_per_key && !s->d.recirculate)
        FAIL_AT(s->id, in->id, "Shader stage '%s' reduces per key, which needs recirculate "
                "(and coalesce_input) as well", s->name);
    if (s->d.recirculate && !check_recirculation(g, s, in)) return false;
    if (s->d.batch && (s->d.coalesce_input || s->d.recirculate || s->d.batch_max > GR_BATCH_MAX))
        FAIL_AT(s->id, GR_INVALID, "Shader stage '%s' runs in batches of %u (at most %d), which "
             "coalescing or recirculating its input excludes", s->name, s->d.batch_max, GR_BATCH_MAX);
    if (s->d.instanced)
        FAIL_AT(s->id, GR_INVALID, "Shader stage '%s' is flagged instanced: Shaders are instanced automatically; "
             "the flag is for Thread stages", s->name);
    return !s->d.ticket_order || check_ticket_order(g, s, in);
}

static bool check_thread(gr_graph *g, gr_stage_rt *s)
{
    if (s->d.coalesce_input || s->d.recirculate || s->d.reduce_per_key)
        FAIL_AT(s->id, GR_INVALID, "Thread stage '%s' asks to %s its input: that is for Shader "
                "stages (a Thread stage reserves what it combines itself)", s->name,
                s->d.recirculate ? "recirculate" : s->d.coalesce_input ? "coalesce" : "reduce per key");
    if (s->d.ticket_order)
        FAIL_AT(s->id, GR_INVALID, "Thread stage '%s' asks for ticket-ordered output: that is for "
                "Shader stages (a Thread stage commits in its own order)", s->name);
    if (s->d.every_subqueue && !s->d.instanced)
        FAIL_AT(s->id, GR_INVALID, "stage '%s' asks for an instance per subqueue (every_subqueue) but is not "
             "instanced", s->name);
    if (!s->d.instanced) return true;
    if (s->nin != 1 || !g->queues[s->in[0].queue]->is_set)
        FAIL_AT(s->id, GR_INVALID, "instanced Thread stage '%s' must have exactly one input, a queue set", s->name);
    if (s->d.every_subqueue && g->queues[s->in[0].queue]->d.dynamic_keys)
        FAIL_AT(s->id, s->in[0].queue, "stage '%s' asks for an instance per subqueue (every_subqueue) of queue set '%s', "
             "whose subqueues come with their keys (dynamic_keys): which there will be is not "
             "known", s->name, g->queues[s->in[0].queue]->name);
    return true;
}

static bool check_runnable(gr_graph *g, const int *runnable, int n)
{
    for (int i = 0; i < n; i++) {
        if (runnable[i] < 0 || runnable[i] >= g->nstages)
            FAIL("gr_launch: runnable stage %d does not exist", runnable[i]);
        gr_stage_rt *s = g->stages[runnable[i]];
        if (s->d.kind == GR_SHADER)
            FAIL_AT(s->id, GR_INVALID, "gr_launch: Shader stage '%s' cannot be initially runnable (Shaders run "
                 "per input packet)", s->name);
        if (s->d.instanced)
            FAIL_AT(s->id, GR_INVALID, "gr_launch: instanced stage '%s' cannot be initially runnable (its "
                 "instances start per subqueue)", s->name);
        s->runnable_at_launch = true;
    }
    /* Every Thread instance starts runnable (it blocks at its first reserve if it has
     * no input yet); the list only has to name the sources, so a source left out is an
     * error rather than a stage that silently never runs. */
    for (int i = 0; i < g->nstages; i++) {
        gr_stage_rt *s = g->stages[i];
        if (s->nin == 0 && n > 0 && !s->runnable_at_launch)
            FAIL_AT(s->id, GR_INVALID, "stage '%s' has no input queues and is not in the runnable set: it would "
                 "never run", s->name);
        if (s->nin == 0 && s->d.kind == GR_SHADER)
            FAIL_AT(s->id, GR_INVALID, "Shader stage '%s' has no input queue: a Shader runs once per input packet",
                 s->name);
        if (s->d.kind != GR_SHADER && !s->d.instanced) s->runnable_at_launch = true;
    }
    return true;
}

/* ---- priorities: DFS post-order over producer->consumer edges ---------------------- */

typedef struct dfs_state {
    gr_graph *g;
    int *order;                       /* stage ids in post-order */
    int norder;
    char *mark;                       /* 0 new, 1 on stack, 2 done */
} dfs_state;

static void dfs(dfs_state *st, int s)
{
    st->mark[s] = 1;
    gr_stage_rt *stage = st->g->stages[s];
    for (int i = 0; i < stage->nout; i++) {
        int c = st->g->queues[stage->out[i].queue]->consumer;
        if (!st->mark[c]) dfs(st, c);
    }
    st->mark[s] = 2;
    st->order[st->norder++] = s;
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
    gr_graph *g = ctx;
    const gr_stage_rt *x = g->stages[*(const int *)a], *y = g->stages[*(const int *)b];
    if (x->priority != y->priority) return x->priority < y->priority ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static bool assign_priorities(gr_graph *g)
{
    dfs_state st = {g, calloc((size_t)g->nstages, sizeof(int)), 0, calloc((size_t)g->nstages, 1)};
    g->by_rank = malloc((size_t)g->nstages * sizeof(int));
    if (!st.order || !st.mark || !g->by_rank) { free(st.order); free(st.mark); return false; }
    for (int pass = 0; pass < 2; pass++)      /* sources first, then anything left */
        for (int i = 0; i < g->nstages; i++)
            if (!st.mark[i] && (pass || g->stages[i]->nin == 0)) dfs(&st, i);
    /* Reverse post-order is a topological order of forward edges: later = downstream. */
    for (int k = 0; k < st.norder; k++) {
        gr_stage_rt *s = g->stages[st.order[st.norder - 1 - k]];
        s->priority = s->d.priority ? s->d.priority : k + 1;
        s->rank = k;                          /* topological index until re-ranked */
    }
    for (int i = 0; i < g->nstages; i++) {
        gr_stage_rt *s = g->stages[i];
        for (int k = 0; k < s->nout; k++) {
            gr_queue_rt *q = g->queues[s->out[k].queue];
            s->out[k].backward = s->rank >= g->stages[q->consumer]->rank;
            if (s->out[k].backward) q->backward = true;
        }
    }
    for (int i = 0; i < g->nstages; i++) g->by_rank[i] = i;
    qsort_r(g->by_rank, (size_t)g->nstages, sizeof(int), cmp_rank, g);
    for (int r = 0; r < g->nstages; r++) g->stages[g->by_rank[r]]->rank = r;
    free(st.order);
    free(st.mark);
    return true;
}

/* ---- components: Tarjan's strongly connected components ---------------------------- */

typedef struct scc_state {
    gr_graph *g;
    int *index, *low, *stack;
    char *on_stack;
    int next_index, sp;
} scc_state;

static void scc_visit(scc_state *st, int v)
{
    gr_graph *g = st->g;
    st->index[v] = st->low[v] = st->next_index++;
    st->stack[st->sp++] = v;
    st->on_stack[v] = 1;
    gr_stage_rt *s = g->stages[v];
    for (int i = 0; i < s->nout; i++) {
        int w = g->queues[s->out[i].queue]->consumer;
        if (st->index[w] < 0) {
            scc_visit(st, w);
            if (st->low[w] < st->low[v]) st->low[v] = st->low[w];
        } else if (st->on_stack[w] && st->index[w] < st->low[v]) {
            st->low[v] = st->index[w];
        }
    }
    if (st->low[v] != st->index[v]) return;
    int c = g->ncomps++;
    int w;
    do {
        w = st->stack[--st->sp];
        st->on_stack[w] = 0;
        g->stages[w]->comp = c;
    } while (w != v);
}

static bool append_unique(int **arr, int *n, int v)
{
    for (int i = 0; i < *n; i++)
        if ((*arr)[i] == v) return true;
    int *p = realloc(*arr, (size_t)(*n + 1) * sizeof(int));
    if (!p) return false;
    p[(*n)++] = v;
    *arr = p;
    return true;
}

static bool link_components(gr_graph *g)
{
    for (int i = 0; i < g->nstages; i++) {
        gr_comp *c = &g->comps[g->stages[i]->comp];
        if (!append_unique(&c->stages, &c->nstages, i)) return false;
    }
    for (int i = 0; i < g->nqueues; i++) {
        gr_queue_rt *q = g->queues[i];
        int cc = g->stages[q->consumer]->comp;
        if (!append_unique(&g->comps[cc].in_queues, &g->comps[cc].nin_queues, i)) return false;
        int ext = 0;
        for (int p = 0; p < q->nproducers; p++) {
            int pc = g->stages[q->producers[p]]->comp;
            if (pc == cc) { q->internal_producer = true; continue; }
            int before = g->comps[pc].nconsumers;
            if (!append_unique(&g->comps[pc].consumers, &g->comps[pc].nconsumers, cc)) return false;
            (void)before;
            bool seen = false;
            for (int k = 0; k < p; k++)
                if (g->stages[q->producers[k]]->comp == pc) seen = true;
            if (!seen) ext++;
            if (!append_unique(&g->comps[pc].out_queues, &g->comps[pc].nout_queues, i)) return false;
        }
        q->producers_at_launch = ext + (q->internal_producer ? 1 : 0);
        atomic_init(&q->open_producers, q->producers_at_launch);
    }
    return true;
}

/* A queue Q with a backward producer closes a cycle: its packets may come back to it
 * through the other queues of its consumer's component. Those are Q's cycle queues, and
 * a Shader's forward output into Q from outside the component is an entry, which waits
 * while Q and the cycle queues together hold Q's capacity (capacity.c), so that what
 * comes back finds room. A Shader's backward output of one packet per task (an output
 * or an in-place forward, as the ray tracer's Intersect) waits for room in Q too, unless the cycle is jammed (capacity.c's gr_cycle_jammed); README
 * "Capacity" gives the bound. Only for cycles of Shader stages: a Thread in the cycle
 * may wait for a batch of input that only new entries would complete (test_property's
 * seed 199 deadlocked so), and a Thread entry parked on Q is woken by Q's releases
 * only. Push backward outputs keep the exemption: a running Shader cannot wait for a
 * push's later packets. */
static bool shaders_only(const gr_graph *g, int comp)
{
    for (int i = 0; i < g->comps[comp].nstages; i++)
        if (g->stages[g->comps[comp].stages[i]]->d.kind != GR_SHADER) return false;
    return true;
}

static bool link_cycles(gr_graph *g)
{
    for (int i = 0; i < g->nqueues; i++) {
        gr_queue_rt *q = g->queues[i];
        int comp = g->stages[q->consumer]->comp;
        if (!q->backward || !shaders_only(g, comp)) continue;
        for (int k = 0; k < g->nqueues; k++) {
            gr_queue_rt *o = g->queues[k];
            if (k != i && o->internal_producer && g->stages[o->consumer]->comp == comp &&
                !append_unique(&q->cycle_queues, &q->ncycle_queues, k)) return false;
        }
    }
    for (int i = 0; i < g->nstages; i++) {
        gr_stage_rt *s = g->stages[i];
        for (int k = 0; k < s->nout; k++) {
            gr_queue_rt *q = g->queues[s->out[k].queue];
            bool rule = q->backward && shaders_only(g, g->stages[q->consumer]->comp);
            s->out[k].entry = rule && s->d.kind == GR_SHADER && !s->out[k].backward &&
                              s->comp != g->stages[q->consumer]->comp;
            s->out[k].back_waits = rule && s->d.kind == GR_SHADER && s->out[k].backward &&
                                   (s->out[k].mode == GR_BIND_OUTPUT ||
                                    s->out[k].mode == GR_BIND_INPLACE) && !q->is_set &&
                                   !q->d.ordered && s->nin == 1;
        }
    }
    return true;
}

static bool find_components(gr_graph *g)
{
    int n = g->nstages;
    scc_state st = {g, malloc(n * sizeof(int)), malloc(n * sizeof(int)),
                    malloc(n * sizeof(int)), calloc(n, 1), 0, 0};
    g->comps = gr_calloc_lines((size_t)n, sizeof *g->comps);
    bool ok = st.index && st.low && st.stack && st.on_stack && g->comps;
    if (ok) {
        for (int i = 0; i < n; i++) st.index[i] = -1;
        for (int i = 0; i < n; i++)
            if (st.index[i] < 0) scc_visit(&st, i);
        for (int i = 0; i < g->ncomps; i++) g->comps[i].id = i;
        ok = link_components(g) && link_cycles(g);
    }
    free(st.index); free(st.low); free(st.stack); free(st.on_stack);
    return ok;
}

/* ---- ordered chains ---------------------------------------------------------------- */

/* The ordered output of a Shader in a chain (OUTPUT or INPLACE of an ordered queue). */
static int ordered_output(gr_graph *g, gr_stage_rt *s, int *count)
{
    int found = -1;
    *count = 0;
    for (int i = 0; i < s->nout; i++)
        if (s->out[i].mode != GR_BIND_PUSH && g->queues[s->out[i].queue]->d.ordered) {
            found = s->out[i].queue;
            (*count)++;
        }
    return found;
}

/* The one output of a Shader that is neither ordered nor pushed to, or NULL. */
static gr_queue_rt *only_unordered_output(gr_graph *g, gr_stage_rt *s)
{
    gr_queue_rt *found = NULL;
    for (int i = 0; i < s->nout; i++) {
        gr_queue_rt *q = g->queues[s->out[i].queue];
        if (s->out[i].mode == GR_BIND_PUSH || q->d.ordered) continue;
        if (found) return NULL;
        found = q;
    }
    return found;
}

/* A Shader inside an ordered chain without exactly one ordered output. When it has one
 * unordered output, that queue is the one to mark `ordered` (typically a queue just
 * inserted into the chain), so the error is about it. */
static bool chain_broken_at(gr_graph *g, gr_queue_rt *q, gr_stage_rt *s, int n)
{
    gr_queue_rt *out = n == 0 ? only_unordered_output(g, s) : NULL;
    if (out)
        FAIL_AT(s->id, out->id, "Shader stage '%s' continues the ordered chain of queue '%s', "
                "but its output queue '%s' is not ordered: a queue inside an ordered chain "
                "must be ordered too", s->name, q->name, out->name);
    FAIL_AT(s->id, q->id, "ordered queue '%s' feeds Shader stage '%s', which has %d ordered "
            "outputs: an ordered chain continues through exactly one", q->name, s->name, n);
}

/* From an ordered queue feeding a Shader, follows the chain of Shaders to the Thread
 * stage at its end; every queue on the way learns the chain's final queue. */
static bool walk_chain(gr_graph *g, gr_queue_rt *head)
{
    gr_queue_rt *q = head;
    for (int hops = 0; !q->physical; hops++) {
        gr_stage_rt *s = g->stages[q->consumer];
        int n, next = ordered_output(g, s, &n);
        if (n != 1) return chain_broken_at(g, q, s, n);
        if (hops > g->nqueues)
            FAIL_AT(GR_INVALID, head->id, "ordered queue '%s': the ordered chain loops back "
                    "on itself", head->name);
        s->fifo = true;
        q = g->queues[next];
        if (q->nproducers != 1)
            FAIL_AT(q->producers[1], q->id, "ordered queue '%s' has %d producers; inside an "
                    "ordered chain each queue has one", q->name, q->nproducers);
    }
    for (gr_queue_rt *p = head; p != q;) {
        p->chain_end = q->id;
        int n;
        p = g->queues[ordered_output(g, g->stages[p->consumer], &n)];
    }
    return true;
}

static bool check_ordered(gr_graph *g)
{
    for (int i = 0; i < g->nqueues; i++) {
        gr_queue_rt *q = g->queues[i];
        if (!q->d.ordered) continue;
        bool from_shader = false;
        for (int p = 0; p < q->nproducers; p++)
            if (g->stages[q->producers[p]]->d.kind == GR_SHADER) from_shader = true;
        if (from_shader) {
            gr_stage_rt *s = g->stages[q->producers[0]];
            gr_queue_rt *in = g->queues[s->in[0].queue];
            if (!in->d.ordered && !s->d.ticket_order)
                FAIL_AT(s->id, in->id, "ordered queue '%s' is produced by Shader stage '%s' whose "
                        "input queue '%s' is not ordered, so there is no order to keep", q->name,
                        s->name, in->name);
            continue;
        }
        if (!q->physical) {
            if (q->nproducers != 1)
                FAIL_AT(q->producers[1], q->id, "ordered queue '%s' has %d producers; an ordered chain starts at one "
                     "Thread stage", q->name, q->nproducers);
            if (!walk_chain(g, q)) return false;
        }
    }
    return true;
}

gr_status gr_validate(gr_graph *g, const int *runnable, int nrunnable)
{
    if (g->status != GR_OK) return g->status;
    if (g->nstages == 0) {
        gr_set_error(g, GR_ERR_INVALID, "the graph has no stages");
        return g->status;
    }
    bool ok = true;
    for (int i = 0; ok && i < g->nqueues; i++) ok = check_queue(g, g->queues[i]);
    for (int i = 0; ok && i < g->nstages; i++) {
        gr_stage_rt *s = g->stages[i];
        ok = s->d.kind == GR_SHADER ? check_shader(g, s) : check_thread(g, s);
    }
    ok = ok && check_runnable(g, runnable, nrunnable);
    ok = ok && assign_priorities(g) && find_components(g) && check_ordered(g);
    if (!ok && g->status == GR_OK) gr_set_error(g, GR_ERR_NOMEM, "out of memory validating");
    return g->status;
}
