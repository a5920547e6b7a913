/* replay: one training step's communication, a mix (harness/mix: --mix FILE), issued the way a
 * framework issues it: overlapped (each op handed to a communication stream or thread the
 * moment its compute stand-in is done: train/overlap.c's engine, given the mix's ops as its
 * buckets) or in sequence (every op once all the step's compute is done). Reports time per
 * step, the step's exposed communication, and each op's time and exposed time (from the moment
 * its data was ready to its completion; in each trial the slowest rank's, MPI_MAX over the
 * ranks after the trials, in summarize). Values are checked op by op outside the timed loop
 * (replay_ops.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "log.h"
#include "mix.h"
#include "overlap.h"
#include "registry.h"
#include "replay_ops.h"
#include "results.h"
#include "stats.h"

enum { HIST = 64, MAX_TRIALS = 4096 };
/* Test only: FB_TEST_REPLAY_SLOW=rank:R makes rank R's every op last SLOW_US longer (a busy
 * wait after it on the communication stream or thread, inside the op's span), so a test can
 * tell whose figures the per-op rows are. Never set in a real run. */
enum { SLOW_US = 20000 };

struct replay_state {
    const struct fb_ctx *ctx;
    struct fb_stream *compute; /* the setup stream: the compute stand-in runs there */
    struct fb_replay_op *ops;
    size_t nops;
    size_t *elements;          /* 1 per op: the engine's buckets */
    void *send, *recv;         /* shared by the ops, as large as the largest */
    struct fb_overlap *ov;
    struct fb_event *anchor, *compute_done, **ready;
    double anchor_us;
    bool pending;              /* a step enqueued whose figures are not read yet */
    long steps;                /* steps whose figures were read */
    /* per step (ring of HIST): the step's exposed time, each op's time and exposed time */
    double *step_exposed, *op_us, *op_exposed, *span_start, *span_end;
    /* per trial (every rank; rank 0's become the slowest rank's in verify, for summarize):
     * each op's mean time and exposed time */
    size_t trials, max_trials;
    double *trial_op_us, *trial_op_exposed;
    bool slow; /* FB_TEST_REPLAY_SLOW names this rank */
    char kase[48];
};

/* What rank 0's teardown leaves for summarize: each case's per-op figures (every trial's
 * slowest rank's). */
static struct {
    char kase[48];
    size_t nops, trials;
    struct fb_replay_op *ops;
    double *op_us, *op_exposed; /* [trial * nops + op] */
} kept[2];

static fb_status read_ops(const struct fb_ctx *ctx, struct fb_replay_op **ops, size_t *n)
{
    const struct fb_options *o = ctx->opt;
    struct fb_mix m;
    char err[512];
    fb_status st;

    *ops = NULL;
    *n = 0;
    if ((st = fb_mix_read(o->mix, o->dtype, &m, err, sizeof err)) != FB_OK) {
        fb_error("replay: %s", err);
        return st;
    }
    st = fb_replay_ops_plan(&m, o->mix_scale, o->compute_us, ctx->ranks, ops);
    *n = m.nops;
    fb_mix_free(&m);
    return st;
}

static size_t digits(long long v)
{
    char buf[32];
    return (size_t)snprintf(buf, sizeof buf, "%lld", v);
}

/* The fewest bytes the two rows of op i (op_time, op_exposed) take in results.csv under case
 * `mode` ("overlap", "sequence"): their own text (the case, cut to 47 characters as the rows
 * cut it; the dtype; bytes and count) and every other field at its shortest (one character
 * for the run id, the backend, the transport and each number; a comma between columns and a
 * line end: one separator a column). */
static size_t op_rows_floor(const char *mode, size_t i, const struct fb_replay_op *op)
{
    char name[256];
    size_t kase = (size_t)snprintf(name, sizeof name, "%s:%zu:%s:%s", mode, i,
                                   fb_mix_coll_name(op->coll), op->name);
    size_t each = fb_results_ncolumns + strlen("replay") + 3 + 4 + strlen("us") + 7 +
                  (kase < 47 ? kase : 47) + strlen(fb_mix_dtype_name(op->dtype)) +
                  digits((long long)op->bytes) + digits((long long)op->count);

    return 2 * each + strlen("op_time") + strlen("op_exposed");
}

static fb_status replay_plan(const struct fb_ctx *ctx, struct fb_case **out, size_t *n)
{
    const struct fb_options *o = ctx->opt;
    bool on = strcmp(o->overlap, "off") != 0, off = strcmp(o->overlap, "on") != 0;
    static bool noted, noted_cap; /* plan runs more than once (the progress plan, the run): say
                                   * it once */
    struct fb_replay_op *ops = NULL;
    char why[256];
    struct fb_case *cases;
    size_t nops = 0, bytes = 0, k = 0, floor[2] = {0, 0}; /* [mode]: the op rows' fewest bytes */
    double busy = 0.0;
    fb_status st;

    *out = NULL;
    *n = 0;
    if (!o->mix)
        return FB_OK; /* nothing to replay: `run replay --mix FILE` */
    if ((st = read_ops(ctx, &ops, &nops)) != FB_OK)
        return st;
    for (size_t i = 0; i < nops; i++) {
        bytes += ops[i].bytes;
        busy += ops[i].compute_us;
        floor[0] += op_rows_floor("sequence", i, &ops[i]);
        floor[1] += op_rows_floor("overlap", i, &ops[i]);
    }
    free(ops);
    /* As step does: without a way to overlap (MPI below MPI_THREAD_SERIALIZED: no
     * communication thread) the overlap case becomes the sequence, said once, rather than a
     * run that prints errors and ends with no rows. */
    if (on && !fb_overlap_possible(ctx->s->coll, why, sizeof why)) {
        if (ctx->s->world.rank == 0 && !noted)
            fb_warn("replay: overlap off: %s", why);
        on = false;
        off = true;
    }
    noted = true;
    /* What the run writes, its readers must take: a plan whose rows alone, each at its
     * shortest, pass results.csv's cap is refused before anything runs (a large mix with
     * --overlap both once wrote a results.csv over the 1 GiB every reader refuses); a plan
     * under this floor that still passes the cap is stopped by the writer (fb_results_flush). */
    size_t least = (on ? floor[1] : 0) + (off ? floor[0] : 0);
    if (least > fb_results_cap()) {
        if (ctx->s->world.rank == 0 && !noted_cap)
            fb_error("replay: --mix %s: %zu ops%s write at least %zu bytes of rows (2 per op%s), "
                     "over the %zu bytes of a results.csv fabricbench's readers accept: replay "
                     "fewer ops%s",
                     o->mix, nops, on && off ? " in both modes" : "", least,
                     on && off ? " and mode" : "", fb_results_cap(),
                     on && off ? ", or one --overlap mode" : "");
        noted_cap = true;
        return FB_ERR_USAGE;
    }
    if (!(cases = calloc(2, sizeof *cases)))
        return FB_ERR_NOMEM;
    for (int mode = 1; mode >= 0; mode--) {
        struct fb_case *c;
        if ((mode && !on) || (!mode && !off))
            continue;
        c = &cases[k++];
        snprintf(c->name, sizeof c->name, "%s", mode ? "overlap" : "sequence");
        snprintf(c->transport, sizeof c->transport, "%s",
                 ctx->s->coll->transport(ctx->world_coll));
        c->bytes = bytes;
        c->active = FB_ALL_RANKS;
        c->report = FB_REPORT_THROUGHPUT;
        c->busy_us = busy;
        c->variant = mode;
    }
    *out = cases;
    *n = k;
    return FB_OK;
}

static void replay_teardown(void *p)
{
    struct replay_state *s = p;
    const struct fb_backend *be;

    if (!s)
        return;
    be = s->ctx->be;
    fb_overlap_free(s->ov);
    /* rank 0 keeps its per-op figures for summarize */
    if (s->ctx->s->world.rank == 0 && s->trials > 0) {
        for (size_t k = 0; k < 2; k++) {
            if (kept[k].kase[0] && strcmp(kept[k].kase, s->kase) != 0)
                continue;
            free(kept[k].ops);
            free(kept[k].op_us);
            free(kept[k].op_exposed);
            snprintf(kept[k].kase, sizeof kept[k].kase, "%s", s->kase);
            kept[k].nops = s->nops;
            kept[k].trials = s->trials;
            kept[k].ops = s->ops;
            kept[k].op_us = s->trial_op_us;
            kept[k].op_exposed = s->trial_op_exposed;
            s->ops = NULL;
            s->trial_op_us = s->trial_op_exposed = NULL;
            break;
        }
    }
    for (size_t i = 0; s->ready && i < s->nops; i++)
        be->event_destroy(s->ready[i]);
    be->event_destroy(s->anchor);
    be->event_destroy(s->compute_done);
    be->free(FB_MEM_DEVICE, s->send);
    be->free(FB_MEM_DEVICE, s->recv);
    free(s->ready);
    free(s->ops);
    free(s->elements);
    free(s->step_exposed);
    free(s->op_us);
    free(s->op_exposed);
    free(s->span_start);
    free(s->span_end);
    free(s->trial_op_us);
    free(s->trial_op_exposed);
    free(s);
}

/* The engine's hook: op i on the communication stream or thread. */
static fb_status issue(void *arg, size_t i, struct fb_stream *stream)
{
    struct replay_state *s = arg;
    fb_status st = fb_replay_op_issue(s->ctx, &s->ops[i], s->send, s->recv, stream);

    if (st == FB_OK && s->slow)
        st = s->ctx->be->busy_wait(SLOW_US, stream);
    return st;
}

/* Whether FB_TEST_REPLAY_SLOW ("rank:R") names this rank; FB_ERR_USAGE when it is malformed. */
static fb_status test_slow(const struct fb_ctx *ctx, bool *slow)
{
    const char *t = getenv("FB_TEST_REPLAY_SLOW");
    int rank = -1, n = 0;

    *slow = false;
    if (!t || !*t)
        return FB_OK;
    if (sscanf(t, "rank:%d%n", &rank, &n) != 1 || t[n] || rank < 0) {
        fb_error("FB_TEST_REPLAY_SLOW: '%s' is not rank:R", t);
        return FB_ERR_USAGE;
    }
    *slow = rank == ctx->s->world.rank;
    return FB_OK;
}

static fb_status replay_setup(const struct fb_ctx *ctx, const struct fb_case *c,
                              struct fb_stream *stream, void **state)
{
    const struct fb_backend *be = ctx->be;
    struct replay_state *s = calloc(1, sizeof *s);
    size_t send_max = 0, recv_max = 0, nh;
    bool half = false;
    char why[256];
    fb_status st = FB_ERR_NOMEM;

    *state = NULL;
    if (!s)
        return st;
    s->ctx = ctx;
    s->compute = stream;
    snprintf(s->kase, sizeof s->kase, "%s", c->name);
    if ((st = read_ops(ctx, &s->ops, &s->nops)) != FB_OK ||
        (st = test_slow(ctx, &s->slow)) != FB_OK)
        goto fail;
    nh = HIST * s->nops;
    st = FB_ERR_NOMEM;
    if (!(s->elements = calloc(s->nops, sizeof *s->elements)) ||
        !(s->ready = calloc(s->nops, sizeof *s->ready)) ||
        !(s->step_exposed = calloc(HIST, sizeof *s->step_exposed)) ||
        !(s->op_us = calloc(nh, sizeof *s->op_us)) ||
        !(s->op_exposed = calloc(nh, sizeof *s->op_exposed)) ||
        !(s->span_start = calloc(s->nops, sizeof *s->span_start)) ||
        !(s->span_end = calloc(s->nops, sizeof *s->span_end)))
        goto fail;
    for (size_t i = 0; i < s->nops; i++) {
        size_t es = fb_dtype_size(s->ops[i].dtype);
        s->elements[i] = 1;
        send_max = s->ops[i].send_elems * es > send_max ? s->ops[i].send_elems * es : send_max;
        recv_max = s->ops[i].recv_elems * es > recv_max ? s->ops[i].recv_elems * es : recv_max;
        half |= s->ops[i].dtype == FB_DTYPE_FLOAT16;
    }
    if (c->variant && !fb_overlap_possible(ctx->s->coll, why, sizeof why)) {
        fb_error("replay: cannot overlap: %s", why);
        st = FB_ERR_UNSUPPORTED;
        goto fail;
    }
    if ((st = be->alloc(FB_MEM_DEVICE, send_max, &s->send)) != FB_OK ||
        (st = be->alloc(FB_MEM_DEVICE, recv_max, &s->recv)) != FB_OK ||
        (st = be->event_create(&s->anchor)) != FB_OK ||
        (st = be->event_create(&s->compute_done)) != FB_OK)
        goto fail;
    for (size_t i = 0; i < s->nops; i++)
        if ((st = be->event_create(&s->ready[i])) != FB_OK)
            goto fail;
    {
        /* float16 among the ops: the engine makes MPI's half type before its thread runs */
        struct fb_overlap_config cfg = {
            .be = be, .coll = ctx->s->coll, .comm = ctx->coll_comm,
            .dtype = half ? FB_DTYPE_FLOAT16 : FB_DTYPE_FLOAT32, .compute = stream,
            .overlap = c->variant != 0, .skip_bucket = -1, .elements = s->elements,
            .nelements = s->nops, .issue = issue, .issue_arg = s,
        };
        if ((st = fb_overlap_create(&cfg, &s->ov)) != FB_OK)
            goto fail;
    }
    if ((st = be->fill(s->send, send_max / 4, FB_DTYPE_FLOAT32,
                       (struct fb_pattern){.seed = 5, .scale = 1}, stream)) != FB_OK ||
        (st = be->stream_sync(stream)) != FB_OK)
        goto fail;
    /* every rank keeps its own: verify reduces them to the slowest rank's */
    s->max_trials = ctx->opt->trials < MAX_TRIALS ? (size_t)ctx->opt->trials : MAX_TRIALS;
    s->max_trials = s->max_trials ? s->max_trials : 1;
    if (!(s->trial_op_us = calloc(s->max_trials * s->nops, sizeof *s->trial_op_us)) ||
        !(s->trial_op_exposed = calloc(s->max_trials * s->nops, sizeof(double))))
        goto fail_nomem;
    *state = s;
    return FB_OK;
fail_nomem:
    st = FB_ERR_NOMEM;
fail:
    replay_teardown(s);
    return st;
}

/* The figures of the step enqueued last, once it is done (its events have completed). */
static fb_status harvest(struct replay_state *s)
{
    const struct fb_backend *be = s->ctx->be;
    size_t h = (size_t)(s->steps % HIST);
    double done = 0.0, last = s->anchor_us;
    fb_status st;

    if (!s->pending)
        return FB_OK;
    s->pending = false;
    if ((st = fb_overlap_spans(s->ov, s->anchor, s->anchor_us, s->span_start, s->span_end)) !=
            FB_OK ||
        (st = be->event_elapsed_us(s->anchor, s->compute_done, &done)) != FB_OK)
        return st;
    for (size_t i = 0; i < s->nops; i++) {
        double ready = 0.0;
        if ((st = be->event_elapsed_us(s->anchor, s->ready[i], &ready)) != FB_OK)
            return st;
        s->op_us[h * s->nops + i] = s->span_end[i] - s->span_start[i];
        s->op_exposed[h * s->nops + i] = s->span_end[i] - (s->anchor_us + ready);
        last = s->span_end[i] > last ? s->span_end[i] : last;
    }
    s->step_exposed[h] = last - (s->anchor_us + done) > 0.0 ? last - (s->anchor_us + done) : 0.0;
    s->steps++;
    return FB_OK;
}

/* One step: each op's compute stand-in on the compute stream, then the op handed over (overlap)
 * or kept until the step's compute is done (sequence). */
static fb_status replay_iterate(void *p)
{
    struct replay_state *s = p;
    const struct fb_backend *be = s->ctx->be;
    fb_status st;

    /* the previous step's figures first (they are read against its own anchor), then this
     * step's anchor: an event the device has passed, at a known host time */
    if ((st = be->stream_sync(s->compute)) != FB_OK || (st = harvest(s)) != FB_OK ||
        (st = fb_overlap_anchor(be, s->anchor, s->compute, &s->anchor_us)) != FB_OK)
        return st;
    if ((st = fb_overlap_begin(s->ov)) != FB_OK)
        return st;
    for (size_t i = 0; i < s->nops; i++) {
        if (s->ops[i].compute_us > 0.0 &&
            (st = be->busy_wait(s->ops[i].compute_us, s->compute)) != FB_OK)
            break;
        if ((st = be->event_record(s->ready[i], s->compute)) != FB_OK ||
            (st = fb_overlap_ready(s->ov, 1, s->ready[i])) != FB_OK)
            break;
    }
    if (st == FB_OK)
        st = be->event_record(s->compute_done, s->compute);
    /* what was handed over finishes before anything else happens, even after a failure */
    {
        fb_status fin = fb_overlap_finish(s->ov);
        st = st != FB_OK ? st : fin;
    }
    s->pending = st == FB_OK;
    return st;
}

/* Rank 0's per-op figures of each trial become the largest over the ranks (MPI_MAX), each
 * figure on its own: an op is as slow as its slowest rank. Collective over the case's ranks
 * (all of them); in chunks, so trials x ops may pass an int. */
static fb_status reduce_slowest(struct replay_state *s)
{
    const struct fb_ctx *ctx = s->ctx;
    size_t total = (size_t)s->trials * s->nops, chunk = 1u << 24;
    int root = ctx->s->world.rank == 0, rc = MPI_SUCCESS;

    for (size_t at = 0; at < total; at += chunk) {
        int n = (int)(total - at < chunk ? total - at : chunk);
        double *us = s->trial_op_us + at, *ex = s->trial_op_exposed + at;
        int r1 = MPI_Reduce(root ? MPI_IN_PLACE : us, us, n, MPI_DOUBLE, MPI_MAX, 0, ctx->comm);
        int r2 = MPI_Reduce(root ? MPI_IN_PLACE : ex, ex, n, MPI_DOUBLE, MPI_MAX, 0, ctx->comm);
        rc = rc != MPI_SUCCESS ? rc : r1 != MPI_SUCCESS ? r1 : r2;
    }
    return rc == MPI_SUCCESS ? FB_OK : FB_ERR_MPI;
}

static fb_status replay_verify(void *p, size_t *wrong)
{
    struct replay_state *s = p;
    fb_status st;

    *wrong = 0;
    if ((st = s->ctx->be->stream_sync(s->compute)) == FB_OK)
        st = harvest(s);
    /* each op's figures of every trial: the slowest rank's, as the runner's `time` (called by
     * every rank whatever its status, so none is left waiting) */
    {
        fb_status red = reduce_slowest(s);
        st = st != FB_OK ? st : red;
    }
    if (st != FB_OK)
        return st;
    for (size_t i = 0; i < s->nops && st == FB_OK; i++) {
        size_t w = 0;
        st = fb_replay_op_verify(s->ctx, i, &s->ops[i], s->send, s->recv, s->compute, &w);
        if (w && s->ctx->s->world.rank == 0)
            fb_warn("replay: op %zu (%s %s) has %zu wrong elements", i,
                    fb_mix_coll_name(s->ops[i].coll), s->ops[i].name, w);
        *wrong += w;
    }
    return st;
}

/* The trial's figures: means over its last `iters` steps (at most HIST). */
static fb_status replay_trial_values(void *p, long iters, struct fb_value *out, size_t *n)
{
    struct replay_state *s = p;
    long k;
    double exposed = 0.0;
    fb_status st;

    if ((st = s->ctx->be->stream_sync(s->compute)) != FB_OK || (st = harvest(s)) != FB_OK)
        return st;
    k = iters < s->steps ? iters : s->steps;
    k = k < HIST ? k : HIST;
    for (long j = s->steps - k; j < s->steps; j++)
        exposed += s->step_exposed[j % HIST];
    if (s->trials < s->max_trials && k > 0) {
        for (size_t i = 0; i < s->nops; i++) {
            double us = 0.0, ex = 0.0;
            for (long j = s->steps - k; j < s->steps; j++) {
                us += s->op_us[(size_t)(j % HIST) * s->nops + i];
                ex += s->op_exposed[(size_t)(j % HIST) * s->nops + i];
            }
            s->trial_op_us[s->trials * s->nops + i] = us / (double)k;
            s->trial_op_exposed[s->trials * s->nops + i] = ex / (double)k;
        }
        s->trials++;
    }
    out[0] = (struct fb_value){"comm_exposed_us", "us", k > 0 ? exposed / (double)k : 0.0};
    *n = 1;
    return FB_OK;
}

/* Rank 0: each op's time and exposed time (in each trial the slowest rank's, statistics over
 * the trials), as detail rows beside the case's `time` row, and a table. */
static void replay_summarize(const struct fb_ctx *ctx, struct fb_results *res, size_t first)
{
    size_t nrows = res->nrows;

    for (size_t k = 0; k < 2; k++) {
        const struct fb_row *t = NULL;
        struct fb_row base;
        double *v;

        if (!kept[k].kase[0])
            continue;
        for (size_t r = first; r < nrows && !t; r++)
            if (strcmp(res->rows[r].bench, "replay") == 0 &&
                strcmp(res->rows[r].kase, kept[k].kase) == 0 &&
                strcmp(res->rows[r].metric, "time") == 0)
                t = &res->rows[r];
        /* a copy: adding rows may move res->rows */
        if (t && (base = *t, v = malloc(kept[k].trials * sizeof *v))) {
            fb_out("\n# replay %s: %s, %zu ops; per op (the slowest rank's, medians over %zu "
                   "trials)\n",
                   kept[k].kase, ctx->opt->mix, kept[k].nops, kept[k].trials);
            fb_out("# %4s %-15s %-24s %12s %10s %12s\n", "op", "coll", "name", "bytes",
                   "op_us", "exposed_us");
            for (size_t i = 0; i < kept[k].nops; i++) {
                const struct fb_replay_op *o = &kept[k].ops[i];
                struct fb_row row = base;
                struct fb_stats us = {0}, ex = {0};
                for (int m = 0; m < 2; m++) {
                    const double *src = m ? kept[k].op_exposed : kept[k].op_us;
                    for (size_t j = 0; j < kept[k].trials; j++)
                        v[j] = src[j * kept[k].nops + i];
                    if (fb_stats_compute(v, kept[k].trials, m ? &ex : &us) != 0)
                        continue;
                    char name[256];
                    snprintf(name, sizeof name, "%s:%zu:%s:%s", kept[k].kase, i,
                             fb_mix_coll_name(o->coll), o->name);
                    snprintf(row.kase, sizeof row.kase, "%.47s", name);
                    snprintf(row.metric, sizeof row.metric, "%s", m ? "op_exposed" : "op_time");
                    snprintf(row.unit, sizeof row.unit, "us");
                    snprintf(row.dtype, sizeof row.dtype, "%s", fb_mix_dtype_name(o->dtype));
                    row.redop[0] = '\0';
                    row.bytes = (long long)o->bytes;
                    row.count = (long long)o->count;
                    row.st = m ? ex : us;
                    row.src = -1; /* every rank's largest, not one rank's */
                    row.wrong = -1;
                    row.detail = true;
                    if (fb_results_add(res, &row) != FB_OK)
                        break;
                }
                fb_out("  %4zu %-15s %-24s %12zu %10.1f %12.1f\n", i, fb_mix_coll_name(o->coll),
                       o->name, o->bytes, us.median, ex.median);
            }
            free(v);
        }
        free(kept[k].ops);
        free(kept[k].op_us);
        free(kept[k].op_exposed);
        memset(&kept[k], 0, sizeof kept[k]);
    }
}

const struct fb_bench fb_bench_replay = {
    .name = "replay",
    .summary = "a training step's communication from a mix (--mix FILE): overlapped with a "
               "compute stand-in or in sequence; time per step, exposed time per op",
    .needs = FB_NEEDS_COLL,
    .min_ranks = 1,
    .plan = replay_plan,
    .setup = replay_setup,
    .iterate = replay_iterate,
    .verify = replay_verify,
    .teardown = replay_teardown,
    .summarize = replay_summarize,
    .trial_values = replay_trial_values,
};
