/* `fabricbench run`: checks the options, starts MPI, opens the session and the run folder,
 * records the fingerprint, runs each benchmark through the runner, and ends with a headline. */
#include <mpi.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <fb_version.h>

#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "fingerprint.h"
#include "json_file.h"
#include "mpi_half.h"
#include "headline.h"
#include "log.h"
#include "nccl_log.h"
#include "nccl_report.h"
#include "nccl_verdict.h"
#include "registry.h"
#include "results.h"
#include "run_plan.h"
#include "run_mode.h"
#include "run_record.h"
#include "runner.h"
#include "expect_job.h"
#include "session.h"
#include "telemetry.h"
#include "topo.h"
#include "units.h"
#include "watchdog.h"

struct run {
    struct fb_options opt;
    struct fb_session s;
    struct fb_results res; /* rank 0 */
    FILE *log;             /* rank 0 */
    struct fb_telemetry *tel; /* NULL when off or nothing to read */
    cJSON *env;            /* rank 0 */
    char env_path[4300];
    const struct fb_run_mode *mode; /* NULL: run's benchmarks */
    char nccl_path[4200];           /* this rank's NCCL log in the run folder; "" when none */
    struct fb_expect_job expect;    /* the expected-figure model (rows annotated on rank 0) */
};

/* The headline (harness/report/headline.c chooses the rows; `report` writes the same into
 * summary.md). Matrix cells and per-rank shares are left to their own tables. A host figure
 * from a buffer inside the last-level cache (llc_bytes, 0 = unknown) is marked as one. */
static void print_headline(const struct fb_results *res, unsigned long long llc_bytes,
                           bool level_forced)
{
    size_t *idx = malloc((res->nrows + 1) * sizeof *idx);
    size_t n, cached = 0, over_mpi = 0;
    int level = MPI_THREAD_SINGLE;
    char note[160];

    if (!idx) {
        fb_warn("headline: out of memory");
        return;
    }
    if (fb_headline_select(res->rows, res->nrows, idx, &n) != FB_OK) {
        fb_warn("headline: out of memory");
        free(idx);
        return;
    }
    fb_out("\nheadline (median at the largest size of each case; GB/s = 1e9 B/s; size bN = a "
           "batch of N; where the model has one, the share of the expected figure and its bound, "
           "docs/expected.md):\n");
    fb_out("  %-18s %-14s %-20s %-8s %5s %6s %8s %-16s %10s\n", "bench", "case", "transport",
           "dtype", "ranks", "rank", "size", "metric", "median");
    for (size_t k = 0; k < n; k++) {
        const struct fb_row *w = &res->rows[idx[k]];
        char size[24], who[24], expected[120];
        bool in_cache = fb_headline_in_cache(w, llc_bytes);

        cached += in_cache;
        over_mpi += strncmp(w->transport, "mpi", 3) == 0;
        fb_headline_cells(w, size, sizeof size, who, sizeof who);
        fb_headline_expected(w, expected, sizeof expected);
        fb_out("  %-18s %-14s %-20s %-8s %5d %6s %8s %-16s %10.3f %s%s%s%s%s\n", w->bench, w->kase,
               w->transport, w->dtype[0] ? w->dtype : "-", w->ranks, who, size, w->metric,
               w->st.median, w->unit, in_cache ? " " : "", in_cache ? FB_HEADLINE_CACHE_MARK : "",
               expected[0] ? ": " : "", expected);
    }
    if (cached) {
        fb_headline_cache_note(llc_bytes, note, sizeof note);
        fb_out("  %s\n", note);
    }
    MPI_Query_thread(&level);
    if (over_mpi && level > MPI_THREAD_SINGLE)
        fb_out("  mpi: MPI ran at thread level %s (%s): Open MPI locks in every call, a cost "
               "in every small message's figure; a run without step and replay runs at single\n",
               fb_mpi_thread_name(level),
               level_forced ? "asked for with --mpi-thread" : "step and replay need it");
    free(idx);
}

/* Rank 0 writes env.json; all ranks take part in gathering the facts. */
static fb_status record_fingerprint(struct run *r)
{
    struct fb_topo *topo = NULL;
    struct fb_rank_facts mine, *all = NULL;
    struct fb_topo_summary sum = {0};
    fb_status st = fb_topo_load(&topo, NULL);

    if (st == FB_OK)
        fb_topo_summary(topo, &sum);
    /* every rank plans h2d's sizes from it (--beyond-llc): the largest of the nodes' */
    if (fb_session_set_llc(&r->s, sum.llc_bytes) != FB_OK && st == FB_OK)
        st = FB_ERR_MPI;
    if (r->opt.beyond_llc && !r->s.llc_bytes && r->s.world.rank == 0)
        fb_warn("--beyond-llc: the last-level cache size is unknown (hwloc sees no cache on "
                "this machine): h2d adds no size");
    if (st == FB_OK)
        st = fb_fingerprint_collect(&r->s, topo, &mine);
    if ((st = fb_world_agree(&r->s.world, st)) != FB_OK)
        goto out;
    if ((st = fb_fingerprint_gather(&r->s, &mine, &all)) != FB_OK)
        goto out;
    if (r->s.world.rank == 0) {
        r->env = fb_fingerprint_json(&r->s, topo, all, "running");
        st = r->env ? fb_json_file_write(r->env_path, r->env) : FB_ERR_NOMEM;
    }
    st = fb_world_agree(&r->s.world, st);
out:
    free(all);
    fb_topo_free(topo);
    return st;
}

/* Collective: the peak resident memory of rank 0 and of the largest rank, printed and kept in
 * env.json (docs/scale.md: how rank 0's memory grows with the ranks). */
static void record_peak_rss(struct run *r)
{
    struct rusage ru;
    double mine = 0.0, most = 0.0;

    if (getrusage(RUSAGE_SELF, &ru) == 0)
        mine = (double)ru.ru_maxrss * 1024.0; /* Linux: KiB */
    MPI_Reduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, 0, r->s.world.comm);
    if (r->s.world.rank != 0)
        return;
    fb_info("peak memory (max RSS): rank 0 %.1f MiB, the largest rank %.1f MiB", mine / 1048576.0,
            most / 1048576.0);
    if (r->env) {
        fb_run_record_lock(); /* the stop hook writes env.json from r->env */
        cJSON_DeleteItemFromObject(r->env, "rank0_peak_rss_bytes");
        cJSON_DeleteItemFromObject(r->env, "max_rank_peak_rss_bytes");
        cJSON_AddNumberToObject(r->env, "rank0_peak_rss_bytes", mine);
        cJSON_AddNumberToObject(r->env, "max_rank_peak_rss_bytes", most);
        fb_run_record_unlock();
    }
}

/* Rank 0: the run's end state in env.json (the watchdog may have marked it first: a timeout
 * or a signal; the first mark stays). */
static fb_status finish_fingerprint(struct run *r, fb_status worst, const char *detail)
{
    const char *state = worst == FB_OK ? "complete"
                        : worst == FB_ERR_INTERRUPTED ? "interrupted"
                        : worst == FB_ERR_TIMEOUT ? "timeout" : "failed";

    if (r->s.world.rank != 0 || !r->env)
        return FB_OK;
    return fb_run_record_mark(state, detail);
}

static fb_status open_run_folder(struct run *r)
{
    fb_status st = FB_OK;
    char path[4300];

    if (r->s.world.rank == 0) {
        st = fb_results_prepare(&r->res, r->opt.out_dir, r->opt.results_root, r->s.world.host,
                                r->opt.force);
        if (st == FB_OK) {
            snprintf(path, sizeof path, "%s/fabricbench.log", r->res.dir);
            snprintf(r->env_path, sizeof r->env_path, "%s/env.json", r->res.dir);
            if (!(r->log = fb_file_create(path))) { /* never through a link */
                fb_error("cannot write '%s'", path);
                st = FB_ERR_USAGE;
            }
            fb_log_set_file(r->log);
        }
    }
    return fb_world_agree(&r->s.world, st);
}

/* The benchmarks asked for (all when none was named), in order. */
static size_t bench_list(const struct run *r, const struct fb_bench **list)
{
    size_t n = 0;

    if (r->opt.nbench)
        for (int i = 0; i < r->opt.nbench; i++)
            list[n++] = fb_bench_find(r->opt.bench[i]);
    else
        for (size_t i = 0; fb_benches[i] && n < FB_MAX_BENCHES; i++)
            list[n++] = fb_benches[i];
    return n;
}

/* Whether a benchmark asked for has this need. */
static bool needs_any(const struct run *r, unsigned need)
{
    const struct fb_bench *list[FB_MAX_BENCHES];
    size_t n = bench_list(r, list);

    for (size_t i = 0; i < n; i++)
        if (list[i] && (list[i]->needs & need))
            return true;
    return false;
}

/* --dry-run: the plans as a GPU of the described peak and bandwidth would make them (the
 * session's backend beneath, its device memory the described one's), and each benchmark's floor
 * (run_plan.h). Nothing measured, no run folder. */
static int dry_run(struct run *r)
{
    const struct fb_world *w = &r->s.world;
    const struct fb_plan_device dev = {r->opt.dry_tflops, r->opt.dry_gbps};
    struct fb_backend described = *r->s.be;
    struct fb_runner runner;
    const struct fb_bench *list[FB_MAX_BENCHES];
    long points[FB_MAX_BENCHES], all = 0;
    double secs[FB_MAX_BENCHES], total = 0.0;
    size_t n = bench_list(r, list), free_b = 0, total_b = 0;
    char mem[32] = "unknown";
    fb_status st;

    described.name = "cuda";
    described.on_cpu = false;
    if (described.mem_info(&free_b, &total_b) == FB_OK)
        fb_size_format(total_b, mem, sizeof mem);
    if ((st = fb_runner_init(&runner, &r->s, &r->opt, NULL)) != FB_OK)
        return fb_status_exit_code(st);
    st = fb_run_plan_floor(&runner, &described, list, n, &dev, points, secs);
    if (st == FB_OK && w->rank == 0) {
        printf("dry run: nothing measured, no run folder; plans as a GPU of %g TFLOP/s, %g GB/s "
               "and %s of memory would make them (the %s backend beneath); each benchmark's "
               "floor: its warm-up, calibration and trials at --trial-ms, no iteration faster "
               "than its known work, FLOPs and bytes allow; setup not counted\n",
               dev.tflops, dev.gbps, mem, r->s.be->name);
        for (size_t i = 0; i < n; i++) {
            if (w->size < list[i]->min_ranks)
                continue;
            printf("plan %s %ld points at least %.1f s\n", list[i]->name, points[i], secs[i]);
            all += points[i];
            total += secs[i];
        }
        printf("plan total %ld points at least %.1f s\n", all, total);
        fflush(stdout);
    }
    fb_runner_release(&runner);
    return fb_status_exit_code(st);
}

static int run_benchmarks(struct run *r)
{
    const struct fb_world *w = &r->s.world;
    struct fb_runner runner;
    struct fb_progress progress;
    const struct fb_bench *list[FB_MAX_BENCHES];
    size_t n = bench_list(r, list);
    fb_status st, worst = FB_OK;
    int failed_points;
    char stopped[320] = "";
    bool nothing = false; /* every benchmark planned no point, and none said why */

    if ((st = fb_runner_init(&runner, &r->s, &r->opt, w->rank == 0 ? &r->res : NULL)) != FB_OK)
        return fb_status_exit_code(st);
    /* A line per point on rank 0's terminal, counted against the whole run's plan. */
    fb_progress_init(&progress, w->rank == 0 && !r->opt.quiet ? stderr : NULL, "");
    unsigned long warned = fb_log_warnings();
    if (fb_run_plan_count(&runner, list, n, &progress) == FB_OK) {
        char names[256] = "";
        size_t used = 0;
        fb_status none_st = FB_OK;

        if (w->rank == 0) {
            runner.progress = &progress;
            runner.point_begin = fb_run_plan_begin;
        }
        /* Measuring nothing without a reason is an error, not a complete run with no row: a
         * benchmark the job has the ranks for, whose options leave it no point (allreduce at
         * --sizes 1, below one element) and that said nothing. One waived (too few ranks, a
         * precision the backend lacks) has said why, on rank 0, as it planned. */
        for (size_t i = 0; i < n && used < sizeof names; i++)
            if (w->size >= list[i]->min_ranks)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                         used ? ", " : "", list[i]->name);
        if (w->rank == 0 && progress.total == 0 && used > 0 && fb_log_warnings() == warned) {
            fb_error("run: nothing to measure: with these options %s plan%s no point (a size "
                     "below one element of its data type, or lists that leave nothing)",
                     names, strchr(names, ',') ? "" : "s");
            none_st = FB_ERR_USAGE;
        }
        if (fb_world_agree(w, none_st) != FB_OK) {
            nothing = true;
            snprintf(stopped, sizeof stopped, "nothing to measure");
            worst = FB_ERR_USAGE;
            n = 0;
        }
    }
    for (size_t i = 0; i < n; i++) {
        fb_watchdog_point(list[i]->name, "(preparing)");
        fb_telemetry_bench_begin(r->tel, list[i]->name, !(list[i]->needs & FB_REPORTS_VALUES));
        st = fb_runner_run(&runner, list[i]);
        fb_watchdog_phase("telemetry gather");
        /* its rows join the results: held from the watchdog, which may write them on a stop */
        if (w->rank == 0)
            fb_run_record_lock();
        fb_telemetry_bench_end(r->tel, w->rank == 0 ? &r->res : NULL);
        if (w->rank == 0)
            fb_run_record_unlock();
        if (st == FB_ERR_UNSUPPORTED)
            continue; /* waived with a reason */
        if (st != FB_OK) {
            char why[160];

            /* the rank that failed first, and its host: "rank 1 on nodeb: out of memory" */
            fb_world_stop_reason(w, st, why, sizeof why);
            if (w->rank == 0)
                fb_error("%s %s: %s; results of earlier points are kept", list[i]->name,
                         st == FB_ERR_INTERRUPTED ? "interrupted" : "stopped", why);
            snprintf(stopped, sizeof stopped, "%s: %s", list[i]->name, why);
            worst = st;
            break;
        }
    }
    fb_watchdog_point("", "%s", "");
    failed_points = runner.failed_points; /* read before the release clears it */
    fb_runner_release(&runner);

    record_peak_rss(r);
    if (finish_fingerprint(r, worst, stopped) != FB_OK && worst == FB_OK)
        worst = FB_ERR_IO;
    if (w->rank == 0) {
        if (r->s.be && !r->s.be->measures)
            fb_out("\n%s (CUDA's rules enforced on a CPU, for tests): no headline\n",
                   FB_STRICT_NOTE);
        else
            print_headline(&r->res, r->s.llc_bytes, strcmp(r->opt.mpi_thread, "auto") != 0);
        if (r->res.written)
            fb_out("\nresults: %s/results.csv (%zu rows), env.json, fabricbench.log\n",
                   r->res.dir, r->res.nrows);
        else /* stopped before its first benchmark ended, or nothing planned: none to name */
            fb_out("\nresults: %s: no results.csv (%s), env.json, fabricbench.log\n", r->res.dir,
                   nothing ? "nothing to measure"
                       : "the run stopped before its first benchmark ended");
        if (failed_points > 0)
            fb_error("%d point(s) failed verification: see the `wrong` column", failed_points);
    }
    if (worst != FB_OK)
        return fb_status_exit_code(worst);
    return failed_points > 0 ? 1 : 0;
}

/* Whether benchmark `name` is part of this run. */
static bool wants(const struct run *r, const char *name)
{
    if (r->opt.nbench == 0)
        return true;
    for (int i = 0; i < r->opt.nbench; i++)
        if (strcmp(r->opt.bench[i], name) == 0)
            return true;
    return false;
}

/* The command's name in messages: "run", or the mode's ("soak"). */
static const char *cmd_name(const struct run *r) { return r->mode ? r->mode->name : "run"; }

/* Rank lists are checked against the job's size before anything is written. */
static fb_status check_ranks(const struct run *r)
{
    int size = r->s.world.size;

    for (size_t i = 0; i < r->opt.ngroups; i++)
        if (r->opt.groups[i] > size) {
            if (r->s.world.rank == 0)
                fb_error("%s: bad value for --ranks: %d ranks asked for, but the job has %d",
                         cmd_name(r), r->opt.groups[i], size);
            return FB_ERR_USAGE;
        }
    /* MPI counts are ints: a p2p message over MPI above 2 GiB - 1 cannot be sent as one. */
    if (r->s.coll == &fb_coll_mpi && wants(r, "p2p")) {
        size_t big = r->opt.matrix_bytes > r->opt.max_bytes ? r->opt.matrix_bytes : r->opt.max_bytes;
        for (size_t i = 0; i < r->opt.nsizes; i++)
            big = r->opt.sizes[i] > big ? r->opt.sizes[i] : big;
        big = r->opt.latency_bytes > big ? r->opt.latency_bytes : big;
        if (big > (size_t)INT32_MAX) {
            if (r->s.world.rank == 0)
                fb_error("%s: p2p over MPI sends one message of at most 2147483647 bytes; "
                         "%zu asked for", cmd_name(r), big);
            return FB_ERR_USAGE;
        }
    }
    for (size_t i = 0; i < r->opt.npairs; i++)
        if (r->opt.pairs[i][0] >= size || r->opt.pairs[i][1] >= size) {
            if (r->s.world.rank == 0)
                fb_error("%s: bad value for --pairs: %d:%d names a rank the job does not have "
                         "(ranks 0..%d)", cmd_name(r), r->opt.pairs[i][0], r->opt.pairs[i][1],
                         size - 1);
            return FB_ERR_USAGE;
        }
    return FB_OK;
}

/* Collective: NCCL's INFO log goes into the run folder, one file per rank, when NCCL runs. */
static fb_status keep_nccl_log(struct run *r)
{
    const struct fb_world *w = &r->s.world;
    char dir[4096], path[4200];
    fb_status st = FB_OK;

    if (r->s.coll != &fb_coll_nccl || r->opt.no_nccl_log)
        return FB_OK;
    if (w->rank == 0)
        snprintf(dir, sizeof dir, "%s", r->res.dir);
    MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, w->comm);
    /* A node where the folder cannot be made keeps NCCL's default: noted, not fatal. */
    st = fb_world_agree(w, fb_nccl_log_setup(dir, w->rank, path, sizeof path));
    snprintf(r->nccl_path, sizeof r->nccl_path, "%s", path);
    if (st == FB_OK && w->rank == 0)
        fb_info("NCCL's log: %s", path[0] ? "nccl-rank<N>.log in the results folder (NCCL_DEBUG=INFO)"
                                          : "where NCCL_DEBUG/NCCL_DEBUG_FILE already send it");
    else if (w->rank == 0)
        fb_warn("NCCL's log is not kept in the results folder on every rank (see above)");
    return FB_OK;
}

/* Collective: after NCCL ran with its log kept in the run folder, rank 0 reads the logs it can
 * see and prints the verdicts (also into the run's log). Advice only: the exit code stays the
 * measurement's, and a log that cannot be read is a warning, not a failed run. */
static void judge_nccl_log(struct run *r)
{
    const struct fb_world *w = &r->s.world;
    struct fb_nccl_report rep;
    struct fb_nccl_verdict v[FB_NCCL_VERDICTS];
    char err[512], summary[512];
    fb_status st;

    if (r->s.coll != &fb_coll_nccl || r->opt.no_nccl_log)
        return;
    /* every rank has set its connections up and logged them */
    MPI_Barrier(w->comm);
    if (w->rank != 0)
        return;
    st = fb_nccl_report_dir(r->res.dir, &rep, err, sizeof err);
    if (st == FB_ERR_UNSUPPORTED)
        return; /* the user's NCCL_DEBUG_FILE or level kept the log elsewhere */
    if (st != FB_OK) {
        fb_warn("NCCL's log not judged: %s", err);
        return;
    }
    if (rep.nccl_lines) {
        fb_nccl_report_summary(&rep, summary, sizeof summary);
        fb_out("nccl-log: %s\n", summary);
        fb_nccl_verdicts(&rep, v);
        for (int i = 0; i < FB_NCCL_VERDICTS; i++)
            if (v[i].verdict != FB_SKIP)
                fb_out("nccl-log: %s %s: %s\n", fb_verdict_str(v[i].verdict), v[i].check,
                       v[i].text);
    }
    fb_nccl_report_release(&rep);
}

/* Collective: a mode's work in place of the benchmarks, then the run's end as run records it. */
static int run_mode_work(struct run *r)
{
    struct fb_run_ctx ctx = {.s = &r->s, .opt = &r->opt,
                             .res = r->s.world.rank == 0 ? &r->res : NULL,
                             .nccl_log_path = r->nccl_path, .tel = r->tel};
    fb_status worst = FB_OK;
    char stopped[320] = "";
    int rc = r->mode->work(r->mode->arg, &ctx, &worst, stopped, sizeof stopped);

    record_peak_rss(r);
    if (finish_fingerprint(r, worst, stopped) != FB_OK && rc == 0)
        rc = fb_status_exit_code(FB_ERR_IO);
    return rc;
}

static int run_main(struct run *r)
{
    const struct fb_world *w = &r->s.world;
    fb_status st;
    int rc;

    if (fb_expect_job_site(fb_cli_rank_hint() == 0) != FB_OK)
        return fb_status_exit_code(FB_ERR_USAGE);
    st = fb_session_open(&r->s, r->opt.backend, r->opt.coll, r->opt.allow_oversubscribe);
    if (st == FB_OK)
        st = fb_session_device_memory(&r->s, r->opt.device_memory);
    if (st == FB_OK && r->opt.self_bind)
        fb_session_bind_home(&r->s);
    if (st == FB_OK)
        st = check_ranks(r);
    if (st == FB_OK && r->mode && r->mode->check) {
        fb_watchdog_phase("plan");
        st = r->mode->check(r->mode->arg, &r->s, &r->opt);
    }
    if (st != FB_OK) {
        fb_session_close(&r->s);
        return fb_status_exit_code(st);
    }
    if (r->opt.dry_run && r->mode) {
        if (r->s.world.rank == 0)
            fb_error("%s: --dry-run plans run's benchmarks only", r->mode->name);
        fb_session_close(&r->s);
        return fb_status_exit_code(FB_ERR_USAGE);
    }
    if (r->opt.dry_run) {
        fb_watchdog_phase("dry run");
        rc = dry_run(r);
        fb_session_close(&r->s);
        return rc;
    }
    fb_watchdog_phase("run folder");
    if ((st = open_run_folder(r)) != FB_OK) {
        rc = fb_status_exit_code(st);
        goto out;
    }
    if (w->rank == 0) {
        fb_info("fabricbench %s (%s): %d rank(s) on %d node(s)", FB_VERSION, FB_GIT_COMMIT,
                w->size, w->nodes);
        fb_info("backend: %s (%s); device: %s", r->s.be->name, r->s.be_why, r->s.dev.name);
        fb_info("collectives: %s (%s)", r->s.coll->name, r->s.coll_why);
        fb_info("results: %s", r->res.dir);
    }
    fb_watchdog_phase("fingerprint");
    if ((st = keep_nccl_log(r)) != FB_OK || (st = record_fingerprint(r)) != FB_OK ||
        (st = fb_world_agree(w, fb_expect_job_gather(&r->s, &r->expect))) != FB_OK) {
        rc = fb_status_exit_code(st);
        goto out;
    }
    if (!r->mode && needs_any(r, FB_NEEDS_MEMCPY_REF)) {
        size_t largest = fb_h2d_largest_bytes(&r->opt, r->s.llc_bytes),
               from = fb_expect_job_copy_from(r->s.llc_bytes);
        char most[32], judged[32];
        fb_watchdog_phase("memcpy calibration");
        if (r->s.be->on_cpu && largest < from) {
            /* no row of h2d's will be judged by it: the copies would be for nothing */
            fb_size_format(largest, most, sizeof most);
            fb_size_format(from, judged, sizeof judged);
            if (w->rank == 0)
                fb_info("expected figures: no memcpy calibration (h2d copies %s at most; its "
                        "host rows are judged from %s, twice the last-level cache or more)",
                        most, judged);
        } else if ((st = fb_world_agree(w, fb_expect_job_calibrate(&r->s, &r->expect, true))) !=
                   FB_OK) {
            rc = fb_status_exit_code(st);
            goto out;
        }
    }
    if (w->rank == 0) {
        r->res.annotate = fb_expect_job_annotate;
        r->res.annotate_ctx = &r->expect;
        fb_expect_job_say(&r->expect);
    }
    if (w->rank == 0) {
        fb_run_record_set(r->env, r->env_path, &r->res);
        if (r->opt.timeout_s > 0)
            fb_info("timeout: %g s per phase (--timeout)", r->opt.timeout_s);
    }
    /* GPU telemetry is advice: without it the run goes on (the reason is printed). */
    fb_watchdog_phase("telemetry start");
    (void)fb_telemetry_start(&r->tel, &r->s, r->opt.telemetry_ms);
    rc = r->mode ? run_mode_work(r) : run_benchmarks(r);
    fb_watchdog_phase("NCCL log");
    judge_nccl_log(r);
out:
    fb_watchdog_phase("telemetry finish");
    fb_telemetry_finish(r->tel); /* the run's last lines: one per benchmark */
    if (w->rank == 0) {
        fb_log_set_file(NULL);
        if (r->log)
            fclose(r->log);
        fb_run_record_set(NULL, NULL, NULL);
        fb_results_release(&r->res);
        cJSON_Delete(r->env);
    }
    fb_expect_job_release(&r->expect);
    fb_session_close(&r->s);
    return rc;
}

int fb_cmd_run(int argc, char **argv)
{
    return fb_cmd_run_mode(argc, argv, NULL);
}

int fb_cmd_run_mode(int argc, char **argv, const struct fb_run_mode *mode)
{
    const char *name = mode ? mode->name : "run";
    struct run *r = calloc(1, sizeof *r);
    char err[512];
    int help = 0, rc, provided = MPI_THREAD_SINGLE, level;
    bool threaded;
    fb_status st;

    if (!r)
        return 1;
    r->mode = mode;
    st = fb_cli_parse_run(argc, argv, &r->opt, &help, err, sizeof err);
    if (st == FB_OK && !help && mode && mode->prepare)
        st = mode->prepare(mode->arg, &r->opt, err, sizeof err);
    if ((rc = fb_cli_answer_early(name, st == FB_OK, help, err,
                                  mode ? mode->usage : fb_cli_run_usage)) >= 0) {
        free(r);
        return rc;
    }
    fb_log_set_quiet(r->opt.quiet);
    /* The thread level (--mpi-thread; docs/methodology.md#the-mpi-thread-level). `step`
     * all-reduces over MPI on a communication thread while the main thread computes (Horovod's
     * design), and `replay` issues its mix on one: they need SERIALIZED; with less, step runs
     * without overlap and says so, and replay refuses to overlap (fb_overlap_possible reads the
     * level back).
     * Every other benchmark calls MPI from the main thread only, and above SINGLE Open MPI 4.1
     * takes a lock in every call (measured 2026-12-01 on the 2-core CI VM: about 0.08 us per
     * small message, 10-20% of an 8-byte latency): auto asks for SINGLE unless step or replay
     * run. One behaviour differs: at SINGLE, a TCP link that becomes unreachable mid-run makes
     * ob1 end the job itself (its "FATAL" line, exit 255) before the watchdog's timeout; at
     * SERIALIZED the send waits and the watchdog names the rank behind the link
     * (cluster_fault_link_down runs both). */
    threaded = wants(r, "step") || wants(r, "replay");
    if (strcmp(r->opt.mpi_thread, "single") == 0)
        level = MPI_THREAD_SINGLE;
    else if (strcmp(r->opt.mpi_thread, "serialized") == 0)
        level = MPI_THREAD_SERIALIZED;
    else
        level = threaded ? MPI_THREAD_SERIALIZED : MPI_THREAD_SINGLE;
    fb_world_start(&argc, &argv, name, r->opt.timeout_s, level, &provided);
    if (provided < MPI_THREAD_SERIALIZED && threaded && fb_cli_rank_hint() == 0)
        fb_info("MPI thread level %s (%s): step and replay run without a communication thread",
                fb_mpi_thread_name(provided), level < MPI_THREAD_SERIALIZED
                ? "--mpi-thread single" : "MPI offers no more");
    rc = run_main(r);
    fb_mpi_half_free();
    rc = fb_world_finish(rc);
    free(r);
    return rc;
}
