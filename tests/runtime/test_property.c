/* Property test: no queue without a backward binding ever holds more than its bound.
 *
 * Random linear graphs of segments between a source and a sink Thread, each segment one
 * binding kind: a Thread output, a Shader output, in-place forward or push into a plain
 * queue, any producer kind (Thread gr_reserve_out_key, Shader gr_output_key, in-place
 * with a key, gr_push_key) into a static or dynamic queue set read by an instanced
 * Thread, or an ordered chain Thread -> Shader(s) -> Thread. Some graphs get a backward
 * binding (a cycle; elements carry a time-to-live). Each graph runs at 1, 2, 4 and 8
 * workers, odd seeds in torture mode (GRAMPS_TORTURE=1: preempt at every reserve/commit).
 *
 * Two independent views of what a queue holds are checked against the bound the runtime
 * guarantees (see bound_of):
 *  (a) the application's: every producer adds to an atomic per-(sub)queue `produced`
 *      once the runtime holds the space (after gr_reserve_out returns, after a push, in
 *      a Shader task whose output was reserved before it ran, after the commit that
 *      reserves an ordered chain's end slot), every consumer adds to `consumed` as soon
 *      as it receives (reserve return, Shader task start, before the runtime frees the
 *      space at commit / task end). So produced - consumed never exceeds what the
 *      runtime holds; the producer reads `consumed` after adding, which can only make
 *      its figure smaller. Push-fed queues count elements: a packet holds at most E,
 *      so ceil(elements / E) packets at least are held.
 *  (b) the runtime's: gr_get_stats reserved_peak_packets, peak_subqueue_packets.
 * And every element reaches the sink exactly once (nothing lost, nothing duplicated),
 * ordered chains deliver in the head's order. Every Thread stage declares its output
 * buffers as private state (gr_state_bytes), so the GRAMPS policy sends each woken
 * instance back to its last worker's inbox (gramps/inbox.h) and the bounds and delivery
 * are checked on that path too.
 *
 * A failure prints the seed, worker count, torture mode, the graph's shape and the bound
 * broken. GRAMPS_PROPERTY_SEEDS=N runs seeds 1..N (default DEFAULT_SEEDS: 2000 in a
 * plain build, 15-25 s on 2 busy cores; 300 under AddressSanitizer, 150 under
 * ThreadSanitizer, some 65 s); GRAMPS_PROPERTY_SEED=N replays
 * seed N alone; GRAMPS_PROPERTY_VERBOSE=1 prints every graph; GRAMPS_PROPERTY_DEBUG=1
 * every queue's peaks (application, reserved, subqueue) beside its bound. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define MAX_SEG 5
#define MAX_Q (1 + 4 * MAX_SEG)
#define MAX_ST (2 + 4 * MAX_SEG)
#define MAX_SUB 16
#define MAX_E 8
#define MAX_IDS 8000
#define HDR 8                            /* Collection header: count, chain sequence */

typedef struct elem { uint32_t id; uint16_t ttl, hops; } elem;

/* How a queue is fed, which decides its bound. */
typedef enum feed {
    F_THREAD, F_SH_OUT, F_SH_INPLACE, F_SH_PUSH,
    F_SET_THREAD, F_SET_SH_OUT, F_SET_SH_INPLACE, F_SET_SH_PUSH,
    F_CHAIN_MID, F_CHAIN_END,
} feed;

static const char *feed_name[] = {"thread", "sh-out", "sh-inplace", "sh-push", "set-thread",
                                  "set-sh-out", "set-sh-inplace", "set-sh-push", "chain-mid",
                                  "chain-end"};

typedef struct pqueue {
    char name[32];
    int id;
    feed feed;
    uint32_t cap, elems, nsub;           /* nsub > 0: a queue set */
    bool dynamic, ordered, in_elements;  /* in_elements: counted in elements (push-fed) */
    bool has_back;                       /* a later stage feeds it: a cycle */
    uint32_t push_max;                   /* most elements one task pushes here */
    uint32_t end_cap;                    /* chain-mid: the chain end's capacity */
    _Atomic(int64_t) produced[MAX_SUB], consumed[MAX_SUB], peak[MAX_SUB];
} pqueue;

typedef struct pstage {
    struct pgraph *pg;
    char name[24];
    bool shader, instanced;
    gr_bind_mode mode;                   /* Shader: OUTPUT, INPLACE or PUSH */
    int in, out, back;                   /* queue indices, -1: none */
    int chain_end;                       /* Thread chain head: the end its commits reserve */
    bool chain_tail;                     /* reads a chain end: checks the sequence */
    uint32_t reserve_max, delay, salt;
    uint32_t seq, expect;                /* chain head's next sequence, tail's expected */
} pstage;

typedef struct pgraph {
    uint64_t seed;
    int nq, ns;
    pqueue q[MAX_Q];
    pstage st[MAX_ST];
    uint32_t nids;
    char shape[1024];
    _Atomic(uint32_t) seen[MAX_IDS];
    _Atomic(int) order_errors;
} pgraph;

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

static uint32_t pick(uint64_t *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

static uint32_t mix(uint32_t v) { v ^= v >> 16; v *= 0x7feb352d; v ^= v >> 15; return v; }

static void spin(uint32_t n)
{
    for (volatile uint32_t i = 0; i < n; i++) {}
}

/* ---- application-side counting -------------------------------------------------- */

static int64_t units(const pqueue *q, uint32_t count) { return q->in_elements ? count : 1; }

static void raise_to(_Atomic(int64_t) *peak, int64_t now)
{
    int64_t cur = atomic_load(peak);
    while (now > cur && !atomic_compare_exchange_weak(peak, &cur, now)) {}
}

/* Called once the runtime holds the space: produced - consumed <= runtime's held. */
static void note_produced(pqueue *q, uint32_t sub, int64_t n)
{
    int64_t p = atomic_fetch_add(&q->produced[sub], n) + n;
    raise_to(&q->peak[sub], p - atomic_load(&q->consumed[sub]));
}

/* Called as soon as a consumer receives, before the runtime frees the space. */
static void note_consumed(pqueue *q, uint32_t sub, int64_t n)
{
    atomic_fetch_add(&q->consumed[sub], n);
}

/* ---- keys: subqueue index <-> key ----------------------------------------------- */

static uint32_t sub_of_elem(const pqueue *q, const pstage *s, elem e)
{
    return mix(e.id ^ s->salt) % q->nsub;
}

static uint64_t key_of(const pqueue *q, uint32_t sub) { return q->dynamic ? sub * 1000u + 7 : sub; }

static uint32_t sub_of_key(const pqueue *q, uint64_t key)
{
    return q->dynamic ? (uint32_t)((key - 7) / 1000) : (uint32_t)key;
}

/* Elements with time to live left go back on a third of their visits. */
static bool goes_back(const pstage *s, elem *e)
{
    if (s->back < 0 || e->ttl == 0 || mix(e->id ^ s->salt ^ e->hops) % 3) return false;
    e->ttl--;
    return true;
}

static elem *elem_at(void *pk, uint32_t i) { return (elem *)((char *)pk + HDR + i * sizeof(elem)); }

/* ---- Thread stages: buffer elements, emit whole packets, flush before waiting ---- */

typedef struct outbuf { uint32_t n; elem e[MAX_E]; } outbuf;
typedef struct tbufs { outbuf out[MAX_SUB], back; } tbufs;

static void emit(gr_ctx *c, pstage *s, int slot, int qi, uint32_t sub, outbuf *b)
{
    pgraph *pg = s->pg;
    pqueue *q = &pg->q[qi];
    gr_window w;
    gr_status st = q->nsub ? gr_reserve_out_key(c, slot, 1, key_of(q, sub), &w)
                           : gr_reserve_out(c, slot, 1, &w);
    if (st != GR_OK) return;
    note_produced(q, sub, units(q, b->n));          /* the runtime holds it since reserve */
    uint32_t *pk = w.mem;
    pk[0] = b->n;
    pk[1] = s->chain_end >= 0 ? s->seq++ : 0;   /* only a chain head is one instance */
    memcpy(elem_at(pk, 0), b->e, b->n * sizeof(elem));
    uint32_t n = b->n;
    b->n = 0;
    gr_commit_out(c, slot, 1);
    /* An ordered chain's end slot is reserved by this commit, not before. */
    if (s->chain_end >= 0) note_produced(&pg->q[s->chain_end], 0, units(&pg->q[s->chain_end], n));
}

static void flush_all(gr_ctx *c, pstage *s, tbufs *b)
{
    if (s->out >= 0) {
        uint32_t n = s->pg->q[s->out].nsub ? s->pg->q[s->out].nsub : 1;
        for (uint32_t k = 0; k < n; k++)
            if (b->out[k].n) emit(c, s, 0, s->out, k, &b->out[k]);
    }
    if (s->back >= 0 && b->back.n) emit(c, s, 1, s->back, 0, &b->back);
}

static void add(gr_ctx *c, pstage *s, int slot, int qi, uint32_t sub, outbuf *b, elem e)
{
    b->e[b->n++] = e;
    if (b->n == s->pg->q[qi].elems) emit(c, s, slot, qi, sub, b);
}

/* Routes one element out of a Thread stage (or records it at the sink). */
static void thread_route(gr_ctx *c, pstage *s, tbufs *b, elem e)
{
    pgraph *pg = s->pg;
    e.hops++;
    if (goes_back(s, &e)) { add(c, s, 1, s->back, 0, &b->back, e); return; }
    if (s->out < 0) { atomic_fetch_add(&pg->seen[e.id], 1); return; }
    pqueue *q = &pg->q[s->out];
    uint32_t sub = q->nsub ? sub_of_elem(q, s, e) : 0;
    add(c, s, 0, s->out, sub, &b->out[sub], e);
}

static void source_main(gr_ctx *c)
{
    pstage *s = gr_user(c);
    tbufs b = {0};
    for (uint32_t i = 0; i < s->pg->nids; i++) thread_route(c, s, &b, (elem){i, 2, 0});
    flush_all(c, s, &b);
}

/* One received packet: counted, order checked at a chain's tail, elements routed. */
static void thread_packet(gr_ctx *c, pstage *s, tbufs *b, uint32_t *pk)
{
    if (s->chain_tail && pk[1] != s->expect++) atomic_fetch_add(&s->pg->order_errors, 1);
    spin(s->delay);
    for (uint32_t i = 0; i < pk[0]; i++) thread_route(c, s, b, *elem_at(pk, i));
}

static void thread_main(gr_ctx *c)
{
    pstage *s = gr_user(c);
    pqueue *in = &s->pg->q[s->in];
    uint32_t sub = in->nsub ? sub_of_key(in, gr_key(c)) : 0;
    tbufs b = {0};
    gr_state_bytes(c, sizeof b);          /* its buffers: under GRAMPS it resumes where they are */
    gr_window w;
    gr_status st;
    /* Emit what is buffered before waiting: held output would be work the runtime
     * cannot see (a cycle could never finish, a consumer could wait forever). */
    while (flush_all(c, s, &b), (st = gr_reserve(c, 0, s->reserve_max, &w)) == GR_OK ||
           st == GR_SHORT) {
        int64_t n = 0;
        for (uint32_t p = 0; p < w.packets; p++)
            n += units(in, *(uint32_t *)((char *)w.mem + p * (w.bytes / w.packets)));
        note_consumed(in, sub, n);
        for (uint32_t p = 0; p < w.packets; p++)
            thread_packet(c, s, &b, (uint32_t *)((char *)w.mem + p * (w.bytes / w.packets)));
        gr_commit(c, 0, w.packets);
    }
    flush_all(c, s, &b);
}

/* ---- Shader stages -------------------------------------------------------------- */

/* OUTPUT or INPLACE: the whole input packet goes to one (sub)queue. Into a plain
 * queue the output's space was reserved before the task ran (a running task cannot be
 * held back), so counting it here is within what the runtime holds. Into a set the key
 * is chosen now and the runtime files the packet under its subqueue only at commit:
 * counted here it is a task in flight, which the set bound's W x (M + 1) allows for.
 * A chain end was counted at the head's commit. */
static void shader_forward(gr_ctx *c, pstage *s, uint32_t *in)
{
    pqueue *q = &s->pg->q[s->out];
    uint32_t *out = gr_output(c, 0);
    if (out != in) memcpy(out, in, HDR + in[0] * sizeof(elem));
    for (uint32_t i = 0; i < out[0]; i++) elem_at(out, i)->hops++;
    uint32_t sub = 0;
    if (q->nsub) {
        sub = sub_of_elem(q, s, *elem_at(out, 0));
        gr_output_key(c, 0, key_of(q, sub));
    }
    if (q->feed != F_CHAIN_END) note_produced(q, sub, units(q, out[0]));
}

/* Elements for a plain output queue go one gr_push at a time, or (packets with an odd
 * count) gathered and sent with one gr_push_n at the end, which must be the same. */
static void shader_push(gr_ctx *c, pstage *s, uint32_t *in)
{
    pgraph *pg = s->pg;
    pqueue *q = &pg->q[s->out];
    elem gathered[MAX_E];
    uint32_t ngathered = 0;
    bool gather = in[0] % 2 == 1;
    for (uint32_t i = 0; i < in[0] && i < MAX_E; i++) {
        elem e = *elem_at(in, i);
        e.hops++;
        if (goes_back(s, &e)) {
            gr_push(c, 1, &e);
            note_produced(&pg->q[s->back], 0, units(&pg->q[s->back], 1));
        } else if (q->nsub) {
            uint32_t sub = sub_of_elem(q, s, e);
            gr_push_key(c, 0, key_of(q, sub), &e);
            note_produced(q, sub, 1);
        } else {
            if (gather) gathered[ngathered++] = e;
            else gr_push(c, 0, &e);
            note_produced(q, 0, 1);
        }
    }
    if (ngathered) gr_push_n(c, 0, gathered, ngathered);
}

static void shader_main(gr_ctx *c)
{
    pstage *s = gr_user(c);
    pqueue *in_q = &s->pg->q[s->in];
    uint32_t *in = gr_input(c, NULL);
    note_consumed(in_q, 0, units(in_q, in[0]));       /* the task's start receives it */
    spin(s->delay);
    if (s->mode == GR_BIND_PUSH) shader_push(c, s, in);
    else shader_forward(c, s, in);
}

/* ---- generating ------------------------------------------------------------------- */

typedef enum seg { S_THREAD, S_SH_OUT, S_SH_INPLACE, S_SH_PUSH, S_SET, S_CHAIN, NSEG } seg;

static const uint32_t caps[] = {1, 2, 3, 4, 8, 16, 32, 64};

static int new_queue(pgraph *pg, uint64_t *r, feed f, uint32_t elems)
{
    int i = pg->nq++;
    pqueue *q = &pg->q[i];
    q->feed = f;
    q->cap = caps[pick(r, sizeof caps / sizeof *caps)];
    q->elems = elems ? elems : 1 + pick(r, MAX_E);
    q->in_elements = f == F_SH_PUSH || f == F_SET_SH_PUSH;
    snprintf(q->name, sizeof q->name, "q%d-%s", i, feed_name[f]);
    return i;
}

static pstage *new_stage(pgraph *pg, uint64_t *r, bool shader, gr_bind_mode mode, int in, int out)
{
    pstage *s = &pg->st[pg->ns];
    *s = (pstage){.pg = pg, .shader = shader, .mode = mode, .in = in, .out = out, .back = -1,
                  .chain_end = -1, .reserve_max = 1 + pick(r, 3), .salt = (uint32_t)rng_next(r),
                  .delay = pick(r, 4) == 0 ? pick(r, 300) : 0};
    snprintf(s->name, sizeof s->name, "s%d-%s", pg->ns, shader ? "shader" : "thread");
    pg->ns++;
    return s;
}

static void shape(pgraph *pg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void shape(pgraph *pg, const char *fmt, ...)
{
    size_t len = strlen(pg->shape);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pg->shape + len, sizeof pg->shape - len, fmt, ap);
    va_end(ap);
}

/* A queue set fed by one producer of a random kind, read by an instanced Thread. */
static int gen_set(pgraph *pg, uint64_t *r, int cur)
{
    static const feed kinds[] = {F_SET_THREAD, F_SET_SH_OUT, F_SET_SH_INPLACE, F_SET_SH_PUSH};
    feed f = kinds[pick(r, 4)];
    uint32_t e_in = pg->q[cur].elems;
    uint32_t elems = f == F_SET_SH_INPLACE ? e_in : f == F_SET_SH_OUT ? e_in + pick(r, 3) : 0;
    int set = new_queue(pg, r, f, elems > MAX_E ? MAX_E : elems);
    pqueue *q = &pg->q[set];
    q->nsub = 1 + pick(r, MAX_SUB);
    q->dynamic = pick(r, 2);
    q->push_max = e_in;
    gr_bind_mode m = f == F_SET_SH_OUT ? GR_BIND_OUTPUT : f == F_SET_SH_INPLACE ? GR_BIND_INPLACE
                                                                               : GR_BIND_PUSH;
    new_stage(pg, r, f != F_SET_THREAD, f == F_SET_THREAD ? GR_BIND_OUTPUT : m, cur, set);
    int next = new_queue(pg, r, F_THREAD, 0);
    new_stage(pg, r, false, GR_BIND_OUTPUT, set, next)->instanced = true;
    shape(pg, " -> %s(cap %u E %u, %s %u) -> inst-thread -> %s(cap %u E %u)", q->name, q->cap,
          q->elems, q->dynamic ? "keys" : "subqueues", q->nsub, pg->q[next].name,
          pg->q[next].cap, pg->q[next].elems);
    return next;
}

/* Thread head -> ordered queue -> 1-2 Shaders (output or in-place) -> Thread tail. */
static int gen_chain(pgraph *pg, uint64_t *r, int cur)
{
    int first = new_queue(pg, r, F_THREAD, 0);
    uint32_t e = pg->q[first].elems;
    pstage *head = new_stage(pg, r, false, GR_BIND_OUTPUT, cur, first);
    int nsh = 1 + (int)pick(r, 2), prev = first, mids[2];
    for (int k = 0; k < nsh; k++) {
        bool inplace = pick(r, 2);
        mids[k] = new_queue(pg, r, k == nsh - 1 ? F_CHAIN_END : F_CHAIN_MID, e);
        new_stage(pg, r, true, inplace ? GR_BIND_INPLACE : GR_BIND_OUTPUT, prev, mids[k]);
        prev = mids[k];
    }
    int end = prev;
    head->chain_end = end;
    for (int i = first; i <= end; i++) pg->q[i].ordered = true;
    for (int k = 0; k < nsh - 1; k++) pg->q[mids[k]].end_cap = pg->q[end].cap;
    int next = new_queue(pg, r, F_THREAD, 0);
    new_stage(pg, r, false, GR_BIND_OUTPUT, end, next)->chain_tail = true;
    shape(pg, " -> chain[%s(cap %u E %u)", pg->q[first].name, pg->q[first].cap, e);
    for (int k = 0; k < nsh; k++)
        shape(pg, " -> %s %s(cap %u)", pg->st[pg->ns - 2 - (nsh - 1 - k)].mode == GR_BIND_INPLACE
              ? "inplace" : "output", pg->q[mids[k]].name, pg->q[mids[k]].cap);
    shape(pg, "] -> thread -> %s(cap %u E %u)", pg->q[next].name, pg->q[next].cap,
          pg->q[next].elems);
    return next;
}

/* A plain segment: one stage from cur into a new plain queue. */
static int gen_plain(pgraph *pg, uint64_t *r, int cur, seg k)
{
    uint32_t e_in = pg->q[cur].elems;
    static const feed f[] = {F_THREAD, F_SH_OUT, F_SH_INPLACE, F_SH_PUSH};
    static const gr_bind_mode m[] = {GR_BIND_OUTPUT, GR_BIND_OUTPUT, GR_BIND_INPLACE, GR_BIND_PUSH};
    uint32_t elems = k == S_SH_INPLACE ? e_in : k == S_SH_OUT ? e_in + pick(r, 3) : 0;
    int next = new_queue(pg, r, f[k], elems > MAX_E ? MAX_E : elems);
    pg->q[next].push_max = e_in;
    new_stage(pg, r, k != S_THREAD, m[k], cur, next);
    shape(pg, " -> %s(cap %u E %u)", pg->q[next].name, pg->q[next].cap, pg->q[next].elems);
    return next;
}

/* A backward binding from a Thread or push Shader of a plain segment to the input
 * queue of an earlier (or its own) plain segment. */
static void gen_cycle(pgraph *pg, uint64_t *r, int nplain, const int *plain_stage)
{
    if (nplain == 0 || pick(r, 2)) return;
    int a = (int)pick(r, (uint32_t)nplain), b = (int)pick(r, (uint32_t)nplain);
    int from = plain_stage[a > b ? a : b], to = plain_stage[a > b ? b : a];
    pstage *s = &pg->st[from];
    if (s->shader && s->mode != GR_BIND_PUSH) return;
    s->back = pg->st[to].in;
    pqueue *q = &pg->q[s->back];
    q->has_back = true;
    if (s->shader) q->in_elements = true;
    shape(pg, "; back edge %s -> %s", s->name, q->name);
}

static void make_graph(pgraph *pg, uint64_t seed)
{
    memset(pg, 0, sizeof *pg);
    pg->seed = seed;
    uint64_t r = seed * 0x9e3779b97f4a7c15ull + 1;
    pg->nids = 500 + pick(&r, MAX_IDS - 500);
    int cur = new_queue(pg, &r, F_THREAD, 0);
    new_stage(pg, &r, false, GR_BIND_OUTPUT, -1, cur);
    shape(pg, "%u elements: source -> %s(cap %u E %u)", pg->nids, pg->q[cur].name,
          pg->q[cur].cap, pg->q[cur].elems);
    int nseg = 1 + (int)pick(&r, MAX_SEG), nplain = 0, plain_stage[MAX_SEG];
    for (int i = 0; i < nseg; i++) {
        seg k = (seg)pick(&r, NSEG);
        /* cycles stay within plain segments: no set or chain inside them */
        if (k == S_SET || k == S_CHAIN) nplain = 0;
        else plain_stage[nplain++] = pg->ns;
        cur = k == S_SET ? gen_set(pg, &r, cur) : k == S_CHAIN ? gen_chain(pg, &r, cur)
                                                                : gen_plain(pg, &r, cur, k);
    }
    new_stage(pg, &r, false, GR_BIND_OUTPUT, cur, -1);
    shape(pg, " -> sink");
    gen_cycle(pg, &r, nplain, plain_stage);
}

/* ---- building and running ------------------------------------------------------------ */

static gr_graph *build(pgraph *pg)
{
    gr_graph *g = gr_graph_create();
    int sid[MAX_ST];
    for (int i = 0; i < pg->nq; i++) {
        pqueue *q = &pg->q[i];
        q->id = gr_queue(g, &(gr_queue_desc){.name = q->name, .kind = GR_COLLECTION,
                         .header_bytes = HDR, .element_bytes = sizeof(elem), .elements = q->elems,
                         .capacity = q->cap, .ordered = q->ordered,
                         .subqueues = q->dynamic ? 0 : q->nsub, .dynamic_keys = q->dynamic,
                         .max_keys = q->dynamic ? q->nsub : 0});
    }
    for (int i = 0; i < pg->ns; i++) {
        pstage *s = &pg->st[i];
        sid[i] = gr_stage(g, &(gr_stage_desc){.name = s->name,
                          .kind = s->shader ? GR_SHADER : GR_THREAD,
                          .main = s->shader ? shader_main : s->in < 0 ? source_main : thread_main,
                          .user = s, .instanced = s->instanced});
        if (s->in >= 0) gr_bind(g, sid[i], GR_BIND_INPUT, pg->q[s->in].id);
        if (s->out >= 0) gr_bind(g, sid[i], s->shader ? s->mode : GR_BIND_OUTPUT, pg->q[s->out].id);
    }
    /* backward bindings last: slot 1 of their stage */
    for (int i = 0; i < pg->ns; i++)
        if (pg->st[i].back >= 0)
            gr_bind(g, sid[i], pg->st[i].shader ? GR_BIND_PUSH : GR_BIND_OUTPUT,
                    pg->q[pg->st[i].back].id);
    return g;
}

static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* The most packets the runtime may hold in one (sub)queue at W workers (module doc of
 * the brief / README): exact for Thread reserves and plain Shader outputs and in-place
 * forwards; push coalescing may start M packets per task per worker, M counting the
 * worker's partial packet it fills first; set outputs are bounded by backpressure on the
 * producing stage (key chosen while the task runs); a chain's queues by its end, plus
 * one packet per worker: a finished task releases its input just after it delivered its
 * output, so for a moment the packet counts in both queues. */
static uint64_t bound_of(const pqueue *q, unsigned w)
{
    uint32_t m_push = ceil_div(q->push_max, q->elems) + 1;
    switch (q->feed) {
    case F_THREAD: case F_SH_OUT: case F_SH_INPLACE: case F_SET_THREAD: case F_CHAIN_END:
        return q->cap;
    case F_SH_PUSH: return q->cap + (uint64_t)w * (m_push - 1);
    case F_SET_SH_OUT: case F_SET_SH_INPLACE: return q->cap - 1 + (uint64_t)w * 2;
    case F_SET_SH_PUSH: return q->cap - 1 + (uint64_t)w * (m_push + 1);
    case F_CHAIN_MID: return q->end_cap + w;
    }
    return 0;
}

typedef struct run_id { uint64_t seed; unsigned workers; bool torture; } run_id;

static bool reported;                     /* graph shape printed for this run */

static void fail_note(const pgraph *pg, run_id id)
{
    if (reported) return;
    reported = true;
    fprintf(stderr, "  seed %llu, %u workers%s: %s\n", (unsigned long long)id.seed, id.workers,
            id.torture ? ", torture" : "", pg->shape);
}

#define PCHECK(pg, id, cond, ...)                                                     \
    do {                                                                              \
        if (!(cond)) fail_note(pg, id);                                               \
        CHECK_MSG(cond, __VA_ARGS__);                                                 \
    } while (0)

/* (a) the application's count, per (sub)queue. */
static void check_app_side(pgraph *pg, run_id id, const pqueue *q, uint64_t bound)
{
    uint32_t n = q->nsub ? q->nsub : 1;
    for (uint32_t k = 0; k < n; k++) {
        int64_t u = atomic_load(&q->peak[k]);
        uint64_t held = u <= 0 ? 0 : q->in_elements ? ceil_div((uint32_t)u, q->elems) : (uint64_t)u;
        PCHECK(pg, id, held <= bound, "seed %llu W=%u %s sub %u (%s): application saw %llu "
               "packets held, bound %llu (cap %u)", (unsigned long long)id.seed, id.workers,
               q->name, k, feed_name[q->feed], (unsigned long long)held,
               (unsigned long long)bound, q->cap);
        PCHECK(pg, id, atomic_load(&q->produced[k]) == atomic_load(&q->consumed[k]),
               "seed %llu W=%u %s sub %u: produced %lld, consumed %lld",
               (unsigned long long)id.seed, id.workers, q->name, k,
               (long long)atomic_load(&q->produced[k]), (long long)atomic_load(&q->consumed[k]));
    }
}

/* (b) the runtime's statistics. reserved_peak_packets (space taken from the pool at
 * once, cached credits included) never exceeds the capacity outside the exemptions
 * (README), so it is held to the bound too, except in a chain's middle queue: there
 * the runtime charges without checking the queue's own capacity (the chain's end
 * bounds it), so only the true peak must fit. peak_subqueue_packets is the true peak:
 * the exact count of a Thread-fed subqueue, the sampled one of a queue feeding a
 * Shader. */
static void check_stats_side(pgraph *pg, run_id id, const pqueue *q, const gr_queue_stats *qs,
                             uint64_t bound)
{
    uint64_t subs = q->nsub ? qs->subqueues : 1;
    uint64_t space = bound * subs;
    bool fits = q->feed == F_CHAIN_MID || qs->reserved_peak_packets <= space;
    PCHECK(pg, id, fits, "seed %llu W=%u %s (%s): reserved_peak_packets %llu > bound %llu "
           "(%llu subqueues, cap %u)",
           (unsigned long long)id.seed, id.workers, q->name, feed_name[q->feed],
           (unsigned long long)qs->reserved_peak_packets, (unsigned long long)space,
           (unsigned long long)subs, q->cap);
    PCHECK(pg, id, qs->peak_subqueue_packets <= bound, "seed %llu W=%u %s (%s): "
           "peak_subqueue_packets %u > bound %llu (cap %u)", (unsigned long long)id.seed,
           id.workers, q->name, feed_name[q->feed], qs->peak_subqueue_packets,
           (unsigned long long)bound, q->cap);
    PCHECK(pg, id, qs->peak_packets <= qs->reserved_peak_packets, "seed %llu W=%u %s: sampled "
           "peak %llu above reserved peak %llu", (unsigned long long)id.seed, id.workers,
           q->name, (unsigned long long)qs->peak_packets,
           (unsigned long long)qs->reserved_peak_packets);
}

/* The most packets the application saw held in one (sub)queue. */
static int64_t app_peak(const pqueue *q)
{
    int64_t most = 0;
    for (uint32_t k = 0; k < (q->nsub ? q->nsub : 1); k++) {
        int64_t u = atomic_load(&q->peak[k]);
        int64_t p = u <= 0 ? 0 : q->in_elements ? ceil_div((uint32_t)u, q->elems) : u;
        if (p > most) most = p;
    }
    return most;
}

static void check_queues(pgraph *pg, run_id id, const gr_stats *stats)
{
    bool debug = getenv("GRAMPS_PROPERTY_DEBUG") != NULL;
    for (int i = 0; i < pg->nq; i++) {
        const pqueue *q = &pg->q[i];
        const gr_queue_stats *qs = &stats->queues[q->id];
        CHECK(strcmp(qs->name, q->name) == 0);
        /* From one source along a line, the depth-first ranking closes the cycle with
         * our back edge and no other. */
        PCHECK(pg, id, qs->backward == q->has_back, "seed %llu W=%u %s: backward %d, expected %d",
               (unsigned long long)id.seed, id.workers, q->name, qs->backward, q->has_back);
        if (!gr_scheduler_bounded(NULL)) continue;   /* no backpressure: no bound to check */
        check_app_side(pg, id, q, q->has_back ? UINT64_MAX : bound_of(q, id.workers));
        if (!qs->backward) check_stats_side(pg, id, q, qs, bound_of(q, id.workers));
        if (debug) fprintf(stderr, "debug seed %llu W=%u %s app %lld stats %llu/%u bound %llu\n",
                           (unsigned long long)id.seed, id.workers, q->name,
                           (long long)app_peak(q), (unsigned long long)qs->reserved_peak_packets,
                           qs->peak_subqueue_packets, (unsigned long long)bound_of(q, id.workers));
    }
}

static void check_delivery(pgraph *pg, run_id id)
{
    uint32_t lost = 0, dup = 0, first = UINT32_MAX;
    for (uint32_t i = 0; i < pg->nids; i++) {
        uint32_t n = atomic_load(&pg->seen[i]);
        if (n != 1 && first == UINT32_MAX) first = i;
        lost += n == 0;
        dup += n > 1;
    }
    PCHECK(pg, id, lost == 0 && dup == 0, "seed %llu W=%u: %u elements lost, %u duplicated "
           "(first: id %u)", (unsigned long long)id.seed, id.workers, lost, dup, first);
    PCHECK(pg, id, atomic_load(&pg->order_errors) == 0, "seed %llu W=%u: %d packets out of "
           "order at a chain's end", (unsigned long long)id.seed, id.workers,
           atomic_load(&pg->order_errors));
}

static void run_one(uint64_t seed, unsigned workers, bool verbose)
{
    static pgraph pg;                     /* large; one run at a time */
    make_graph(&pg, seed);
    run_id id = {seed, workers, seed % 2 == 1};
    reported = false;
    if (verbose) fprintf(stderr, "seed %llu W=%u%s: %s\n", (unsigned long long)seed, workers,
                         id.torture ? " torture" : "", pg.shape);
    setenv("GRAMPS_TORTURE", id.torture ? "1" : "0", 1);   /* read at launch */
    gr_graph *g = build(&pg);
    gr_launch_opts opts = {.workers = workers, .deadlock_seconds = 10};
    gr_status st = gr_launch(g, &opts, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    PCHECK(&pg, id, st == GR_OK, "seed %llu W=%u: %s", (unsigned long long)seed, workers,
           gr_error(g));
    const gr_stats *stats = gr_get_stats(g);
    if (st == GR_OK && stats) {
        check_queues(&pg, id, stats);
        check_delivery(&pg, id);
    }
    gr_graph_destroy(g);
}

/* Seeds run when GRAMPS_PROPERTY_SEEDS is not set: what fits the test timeout on a
 * 2-core machine in each build (ThreadSanitizer runs the runtime about 15x slower, and
 * 2,000 seeds outran the 600 s timeout; AddressSanitizer about 4x). */
#if defined(__SANITIZE_THREAD__)
#define DEFAULT_SEEDS 150
#elif defined(__SANITIZE_ADDRESS__)
#define DEFAULT_SEEDS 300
#else
#define DEFAULT_SEEDS 2000
#endif

static void test_random_graphs(void)
{
    const char *one = getenv("GRAMPS_PROPERTY_SEED");
    const char *env = getenv("GRAMPS_PROPERTY_SEEDS");
    if (one && !*one) one = NULL;                       /* set but empty: unset */
    if (env && !*env) env = NULL;
    bool verbose = getenv("GRAMPS_PROPERTY_VERBOSE") != NULL;
    uint64_t first = one ? strtoull(one, NULL, 10) : 1;
    uint64_t last = one ? first : env ? strtoull(env, NULL, 10) : DEFAULT_SEEDS;
    for (uint64_t seed = first; seed <= last; seed++)
        for (unsigned w = 1; w <= 8; w *= 2) run_one(seed, w, verbose);
}

int main(void)
{
    if (!gr_scheduler_bounded(NULL))
        printf("note test_random_graphs: capacity bounds not checked, delivery is (the %s "
               "scheduler has no backpressure)\n", gr_scheduler_default());
    RUN(test_random_graphs);
    return check_finish();
}
