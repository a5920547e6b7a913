/* What `fabricbench locate` leaves behind, on rank 0: a verdict line per suspect on the terminal,
 * suspects.csv (the CSV writer), locate.md, drain.txt (the slow nodes as scontrol commands,
 * never run here), and the tournament's heat map drawn by gnuplot from
 * the report code's template (plots/locate_heat.gp), each file written atomically. */
#define _POSIX_C_SOURCE 200809L
#include "locate_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "csv.h"
#include "gnuplot.h"
#include "escape.h"
#include "gp_text.h"
#include "hostlist.h"
#include "locate_judge.h"
#include "locate_plan.h"
#include "log.h"
#include "md_text.h"
#include "plot_templates.h"
#include "results.h"
#include "verdict.h"
#include "xml_text.h"

static const char *const suspect_columns[] = {"kind",     "node",    "peer",  "bench",   "metric",
                                              "measured", "typical", "ratio", "evidence"};

static void num(char *dst, size_t len, double v)
{
    if (isnan(v))
        dst[0] = '\0';
    else
        snprintf(dst, len, "%.6g", v);
}

/* One terminal line: SUSPECT node HOST / link A-B / rank R (HOST). */
static void verdict_line(const struct loc *l, const struct loc_suspect *s, char *out, size_t len)
{
    if (strcmp(s->kind, "link") == 0)
        snprintf(out, len, "SUSPECT link %s-%s: %s", l->name[s->node], l->name[s->peer],
                 s->evidence);
    else if (strcmp(s->kind, "rank") == 0)
        snprintf(out, len, "SUSPECT rank %d (%s): straggler, %s", s->rank, l->name[s->node],
                 s->evidence);
    else
        snprintf(out, len, "SUSPECT node %s: %s", l->name[s->node], s->evidence);
}

static fb_status write_suspects(const struct loc *l)
{
    struct fb_atomic_file af;
    char path[4200];
    fb_status st;

    snprintf(path, sizeof path, "%s/suspects.csv", l->res.dir);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    fb_csv_row(af.f, suspect_columns, sizeof suspect_columns / sizeof *suspect_columns);
    for (size_t i = 0; i < l->nsus; i++) {
        const struct loc_suspect *s = &l->sus[i];
        char measured[32], typical[32], ratio[32];
        const char *f[9];
        num(measured, sizeof measured, s->measured);
        num(typical, sizeof typical, s->typical);
        num(ratio, sizeof ratio,
            isnan(s->measured) || !(s->typical > 0) ? NAN : s->measured / s->typical);
        f[0] = s->kind;
        f[1] = l->name[s->node];
        f[2] = s->peer >= 0 ? l->name[s->peer] : "";
        f[3] = s->bench;
        f[4] = s->metric;
        f[5] = measured;
        f[6] = typical;
        f[7] = ratio;
        f[8] = s->evidence;
        fb_csv_row(af.f, f, 9);
    }
    if (ferror(af.f)) {
        fb_error("locate: cannot write '%s'", af.tmp);
        fb_atomic_abort(&af);
        return FB_ERR_IO;
    }
    return fb_atomic_commit(&af);
}

/* What of the heat map write_heat wrote: nothing (one node, no template), its data and script,
 * or those and the pictures gnuplot drew. */
enum heat { HEAT_NONE, HEAT_DATA, HEAT_DRAWN };

/* The files of the run folder named by locate.md and the last line: only those written. */
static const char *heat_files(enum heat h)
{
    return h == HEAT_DRAWN  ? ", locate-heat.png, locate-heat.svg (locate-heat.dat, locate-heat.gp)"
           : h == HEAT_DATA ? ", locate-heat.dat, locate-heat.gp (no picture drawn)"
                            : "";
}

/* A node named from the job's view at a timeout after phase 1 (locate_run.c's name_working):
 * "hang" (a rank still working) or "silent" (a rank that sent nothing). */
static bool stop_suspect(const struct loc_suspect *s)
{
    return strcmp(s->metric, "hang") == 0 || strcmp(s->metric, "silent") == 0;
}

/* Node i's drain reason: what named it, every kind once, in the suspects' order ("slow pairs"
 * for the tournament, "h2d alone" for a case of phase 1), without figures, so nodes named for
 * the same things share one line (their figures are in suspects.csv); "" when none did. Only the
 * characters a single-quoted shell word and scontrol's Reason= both keep as they are. */
static void drain_reason(const struct loc *l, int i, char *out, size_t len)
{
    size_t used = 0;

    out[0] = '\0';
    for (size_t k = 0; k < l->nsus; k++) {
        const struct loc_suspect *s = &l->sus[k];
        char what[64];
        if (strcmp(s->kind, "node") != 0 || s->node != i)
            continue;
        if (strcmp(s->metric, "answer") == 0)
            snprintf(what, sizeof what, "no answer (hung or dead)");
        else if (strcmp(s->metric, "hang") == 0)
            snprintf(what, sizeof what, "hung (still working at the timeout)");
        else if (strcmp(s->metric, "silent") == 0)
            snprintf(what, sizeof what, "no answer (dead, frozen or cut off)");
        else if (strncmp(s->metric, "node_", 5) == 0)
            snprintf(what, sizeof what, "%s alone", s->metric + 5);
        else
            snprintf(what, sizeof what, "slow pairs");
        if (strstr(out, what) || used + 1 >= len)
            continue;
        int w = snprintf(out + used, len - used, "%s%s",
                         used ? ", " : "fabricbench locate: slow node: ", what);
        used = w > 0 && (size_t)w < len - used ? used + (size_t)w : len - 1;
    }
    if (used && used + 1 < len)
        snprintf(out + used, len - used, " (figures in suspects.csv)");
    for (char *c = out; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:/()=+-_%",
                    *c))
            *c = '?';
}

/* drain.txt: one `scontrol update ... State=DRAIN` line per reason, its nodes in Slurm's
 * hostlist syntax; a node whose name scontrol would not take as one is a comment instead.
 * Written for every run (comments alone when no node is suspect) and never run by locate. */
static fb_status write_drain(const struct loc *l)
{
    struct fb_atomic_file af;
    char path[4200], list[4096], shown[160];
    char (*why)[300] = NULL; /* each node's reason, made once */
    const char **names = NULL;
    bool *done = NULL;
    fb_status st = FB_ERR_NOMEM;
    int nodes = l->nodes > 0 ? l->nodes : 0;

    snprintf(path, sizeof path, "%s/drain.txt", l->res.dir);
    if (!(names = calloc((size_t)nodes + 1, sizeof *names)) ||
        !(done = calloc((size_t)nodes + 1, 1)) || !(why = calloc((size_t)nodes + 1, sizeof *why)))
        goto out;
    for (int i = 0; i < nodes; i++)
        drain_reason(l, i, why[i], sizeof why[i]);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        goto out;
    fprintf(af.f, "# fabricbench locate: the nodes it found slow, as Slurm commands that drain "
            "them.\n# Nothing here was run: read suspects.csv and locate.md, then run the lines "
            "(sh drain.txt)\n# and, once a node is mended: scontrol update NodeName=NODE "
            "State=RESUME\n");
    for (int i = 0; i < nodes; i++) {
        const char *reason = why[i];
        size_t n = 0;
        if (done[i] || !reason[0])
            continue;
        if (!fb_hostlist_name_ok(l->name[i])) {
            fprintf(af.f, "# not drained: '%s' is not a name scontrol takes as one node\n",
                    fb_escape_str(l->name[i], 60, shown, sizeof shown));
            continue;
        }
        for (int j = i; j < nodes; j++) {
            if (done[j] || !fb_hostlist_name_ok(l->name[j]))
                continue;
            if (strcmp(reason, why[j]) == 0) {
                names[n++] = l->name[j];
                done[j] = true;
            }
        }
        if (!fb_hostlist_fold(names, n, list, sizeof list)) {
            fprintf(af.f, "# not drained: %zu node(s) with the reason '%s' do not fit one line\n",
                    n, reason);
            continue;
        }
        /* quoted: a hostlist's brackets are a shell glob */
        fprintf(af.f, "scontrol update NodeName='%s' State=DRAIN Reason='%s'\n", list, reason);
    }
    if (ferror(af.f)) {
        fb_error("locate: cannot write '%s'", af.tmp);
        fb_atomic_abort(&af);
        st = FB_ERR_IO;
        goto out;
    }
    st = fb_atomic_commit(&af);
out:
    free(names);
    free(done);
    free(why);
    return st;
}

/* ---- the node table: every node's checks, for nodes.csv, junit.xml and fabricbench.prom ---- */

/* the checks: phase 1's cases (loc_node_cases' order), then the tournament's pairs and links
 * and the stragglers */
enum { C_PAIRS = LOC_NODE_CASES, C_LINKS, C_ARRIVE, CHECKS };
static const char *const check_names[CHECKS] = {"h2d",   "p2p",   "allreduce", "compute",
                                                "pairs", "links", "arrive"};

struct node_check {
    enum fb_verdict v;
    double fig, med;   /* in check_unit()'s unit; NaN where the check has no figure */
    struct fb_expect_fig exp; /* what the node's own hardware allows (the model); NaN: none */
    char evidence[480];
};

/* a check's unit: phase 1's case's, GB/s for the pairs; "" for links and arrive (no figure) */
static const char *check_unit(int k)
{
    return k < LOC_NODE_CASES ? loc_node_units[k] : k == C_PAIRS ? "GB/s" : "";
}

/* The median of node i's pairs in the tournament (its heat map row); NaN when it met none. */
static double pairs_median(const struct loc *l, int i)
{
    double v[l->nodes > 0 ? l->nodes : 1], med, mad;
    size_t n = 0;
    for (int j = 0; l->heat && j < l->nodes; j++) {
        double x = l->heat[(size_t)i * (size_t)l->nodes + (size_t)j];
        if (j != i && !isnan(x))
            v[n++] = x;
    }
    return n && fb_locate_typical(v, n, &med, &mad) == FB_OK ? med : NAN;
}

/* Node i's checks: phase 1's four cases (each against the median node), its pairs in the
 * tournament (against the median pair), the links that were found slow at either end, and a
 * straggling rank on it. FAIL where a suspect names it, PASS where it was measured and judged,
 * SKIP where there was nothing to judge it against. */
static void node_checks(const struct loc *l, int i, struct node_check c[CHECKS])
{
    for (int k = 0; k < CHECKS; k++) {
        c[k].v = FB_PASS;
        c[k].fig = c[k].med = NAN;
        c[k].exp = k < LOC_NODE_CASES && l->node_exp
                       ? l->node_exp[(size_t)i * LOC_NODE_CASES + (size_t)k]
                       : (struct fb_expect_fig){NAN, ""};
        c[k].evidence[0] = '\0';
    }
    for (int k = 0; k < LOC_NODE_CASES; k++) {
        c[k].fig = l->node_fig ? l->node_fig[(size_t)i * LOC_NODE_CASES + (size_t)k] : NAN;
        c[k].med = l->node_med[k];
        if (isnan(c[k].fig)) {
            c[k].v = FB_SKIP;
            snprintf(c[k].evidence, sizeof c[k].evidence, "%s",
                     strcmp(loc_node_cases[k], "node_compute") != 0
                         ? "not measured (a case of two ranks on a node of one)"
                     : l->no_compute ? "not measured (--compute off)"
                                     : "not measured (compute cannot run here: no convolution "
                                       "engine for this backend, or a precision it does not run)");
        } else if (l->one_kernel && l->s.be->on_cpu) {
            c[k].v = FB_SKIP;
            snprintf(c[k].evidence, sizeof c[k].evidence, "not judged: the nodes run on one "
                     "kernel (boot_id %.8s...) and on the %s backend each node's figure is its "
                     "share of the same CPUs", l->boot_id, l->s.be->name);
        } else if (isnan(c[k].med)) {
            c[k].v = FB_SKIP;
            snprintf(c[k].evidence, sizeof c[k].evidence, "no fleet to judge it by (fewer "
                     "than 3 nodes)");
        }
    }
    c[C_PAIRS].fig = pairs_median(l, i);
    c[C_PAIRS].med = l->phase2_typical > 0 ? l->phase2_typical : NAN;
    /* the tournament judges a pair or a link only against 3 nodes or more (one pair between two
     * nodes has nothing to be compared with), and a straggler only among 3 ranks or more */
    for (int k = C_PAIRS; k <= C_LINKS; k++)
        if (l->unanswered) {
            c[k].v = FB_SKIP;
            snprintf(c[k].evidence, sizeof c[k].evidence, "not run: the fleet stopped after "
                     "phase 1 (%d node(s) did not answer)", l->unanswered);
        } else if (l->nodes < 2 ||
            (k == C_PAIRS && (isnan(c[C_PAIRS].fig) || isnan(c[C_PAIRS].med)))) {
            c[k].v = FB_SKIP;
            snprintf(c[k].evidence, sizeof c[k].evidence, "no tournament (one node)");
        } else if (l->nodes < 3) {
            c[k].v = FB_SKIP;
            snprintf(c[k].evidence, sizeof c[k].evidence, "no fleet to judge it by (fewer "
                     "than 3 nodes)");
        }
    if (l->unanswered) {
        c[C_ARRIVE].v = FB_SKIP;
        snprintf(c[C_ARRIVE].evidence, sizeof c[C_ARRIVE].evidence, "%s", c[C_PAIRS].evidence);
    } else if (l->s.world.size < 3) {
        c[C_ARRIVE].v = FB_SKIP;
        snprintf(c[C_ARRIVE].evidence, sizeof c[C_ARRIVE].evidence,
                 "no straggler to find among fewer than 3 ranks");
    }
    /* a job stopped after phase 1: the checks of the phases it did not finish (those with
     * nothing to judge them by keep that reason) */
    for (int k = l->stage == LOC_STAGE_PAIRS ? C_PAIRS : C_ARRIVE; l->stopped[0] && k < CHECKS;
         k++) {
        if (c[k].v == FB_SKIP && (l->nodes < 3 || (k == C_ARRIVE && l->s.world.size < 3)))
            continue;
        c[k].v = FB_SKIP;
        c[k].fig = c[k].med = NAN;
        snprintf(c[k].evidence, sizeof c[k].evidence, "not finished: the job stopped (%s) in "
                 "%s", l->stopped, loc_stage_name(l->stage));
    }
    for (size_t n = 0; n < l->nsus; n++) {
        const struct loc_suspect *s = &l->sus[n];
        int k = -1;
        if (strcmp(s->kind, "node") == 0 && s->node == i && strcmp(s->metric, "answer") == 0) {
            /* no figure of phase 1 came from it: each of its checks fails on that */
            for (int m = 0; m < LOC_NODE_CASES; m++) {
                c[m].v = FB_FAIL;
                snprintf(c[m].evidence, sizeof c[m].evidence, "%s", s->evidence);
            }
            continue;
        } else if (strcmp(s->kind, "node") == 0 && s->node == i) {
            k = C_PAIRS;
            for (int m = 0; m < LOC_NODE_CASES; m++)
                if (strcmp(s->metric, loc_node_cases[m]) == 0)
                    k = m;
            /* hung in the phase the job stopped in: that phase's check */
            if (stop_suspect(s) && l->stage == LOC_STAGE_STRAGGLERS)
                k = C_ARRIVE;
        } else if (strcmp(s->kind, "link") == 0 && (s->node == i || s->peer == i)) {
            k = C_LINKS;
        } else if (strcmp(s->kind, "rank") == 0 && s->node == i) {
            k = C_ARRIVE;
        }
        if (k < 0)
            continue;
        c[k].v = FB_FAIL;
        if (k == C_LINKS)
            snprintf(c[k].evidence, sizeof c[k].evidence, "slow link with %s: %s",
                     l->name[s->node == i ? s->peer : s->node], s->evidence);
        else if (k == C_ARRIVE && s->rank >= 0)
            snprintf(c[k].evidence, sizeof c[k].evidence, "rank %d: %s", s->rank, s->evidence);
        else
            snprintf(c[k].evidence, sizeof c[k].evidence, "%s", s->evidence);
    }
}

static bool node_failed(const struct node_check c[CHECKS])
{
    for (int k = 0; k < CHECKS; k++)
        if (c[k].v == FB_FAIL)
            return true;
    return false;
}

static fb_status commit_or_fail(struct fb_atomic_file *af)
{
    if (ferror(af->f)) {
        fb_error("locate: cannot write '%s'", af->tmp);
        fb_atomic_abort(af);
        return FB_ERR_IO;
    }
    return fb_atomic_commit(af);
}

/* nodes.csv: one row per node and check */
static fb_status write_nodes(const struct loc *l)
{
    static const char *const cols[] = {"node",     "check", "verdict", "figure", "fleet_median",
                                       "expected", "unit",  "bound",   "evidence"};
    struct fb_atomic_file af;
    struct node_check c[CHECKS];
    char path[4200], fig[32], med[32], allows[32];
    fb_status st;

    snprintf(path, sizeof path, "%s/nodes.csv", l->res.dir);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    fb_csv_row(af.f, cols, 9);
    for (int i = 0; i < l->nodes; i++) {
        node_checks(l, i, c);
        for (int k = 0; k < CHECKS; k++) {
            bool e = c[k].exp.gbps > 0;
            const char *f[9] = {l->name[i],  check_names[k], fb_verdict_str(c[k].v), fig, med,
                                allows, isnan(c[k].fig) && !e ? "" : check_unit(k),
                                e ? c[k].exp.bound : "", c[k].evidence};
            num(fig, sizeof fig, c[k].fig);
            num(med, sizeof med, c[k].med);
            num(allows, sizeof allows, e ? c[k].exp.gbps : NAN);
            fb_csv_row(af.f, f, 9);
        }
    }
    return commit_or_fail(&af);
}

/* junit.xml: one test case per node and check, the node as its class */
static fb_status write_junit(const struct loc *l)
{
    struct fb_atomic_file af;
    struct node_check c[CHECKS];
    char path[4200];
    size_t fails = 0, skips = 0;
    fb_status st;

    for (int i = 0; i < l->nodes; i++) {
        node_checks(l, i, c);
        for (int k = 0; k < CHECKS; k++) {
            fails += c[k].v == FB_FAIL;
            skips += c[k].v == FB_SKIP;
        }
    }
    snprintf(path, sizeof path, "%s/junit.xml", l->res.dir);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    fprintf(af.f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
            "  <testsuite name=\"fabricbench locate\" tests=\"%d\" failures=\"%zu\" "
            "skipped=\"%zu\" errors=\"0\">\n", l->nodes * CHECKS, fails, skips);
    for (int i = 0; i < l->nodes; i++) {
        node_checks(l, i, c);
        for (int k = 0; k < CHECKS; k++) {
            fputs("    <testcase classname=\"", af.f);
            fb_xml_put_attr(af.f, l->name[i]);
            fprintf(af.f, "\" name=\"%s\"", check_names[k]);
            if (c[k].v == FB_PASS) {
                fputs("/>\n", af.f);
                continue;
            }
            fputs(c[k].v == FB_FAIL ? ">\n      <failure message=\"" : ">\n      <skipped message=\"",
                  af.f);
            fb_xml_put_attr(af.f, c[k].evidence);
            fputs("\"/>\n    </testcase>\n", af.f);
        }
    }
    fputs("  </testsuite>\n</testsuites>\n", af.f);
    return commit_or_fail(&af);
}

/* A label value in Prometheus's text format: backslash, quote and line feed escaped, other
 * control bytes as '?'. */
static void prom_label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else if (fb_escape_is_control((unsigned char)*s))
            fputc('?', f);
        else
            fputc(*s, f);
    }
}

/* A check's gauge family in fabricbench.prom (0 bandwidth in B/s, 1 compute in FLOP/s) and the
 * factor from its unit to the family's base unit. */
static int prom_family(int k)
{
    return strcmp(check_unit(k), "TFLOP/s") == 0;
}

static double prom_scale(int k)
{
    return prom_family(k) ? 1e12 : 1e9;
}

/* fabricbench.prom: the node table as gauges, for node_exporter's textfile collector, in the
 * text both Prometheus (promtool check metrics) and OpenMetrics (its closing `# EOF`) read:
 * every family with its HELP and TYPE, gauges only, label values escaped alike. */
static fb_status write_prom(const struct loc *l)
{
    struct fb_atomic_file af;
    struct node_check c[CHECKS];
    char path[4200];
    fb_status st;

    snprintf(path, sizeof path, "%s/fabricbench.prom", l->res.dir);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    for (int g = 0; g < 2; g++) {
        const char *fam = g ? "compute_flops_per_second" : "bandwidth_bytes_per_second";
        fprintf(af.f, "# HELP fabricbench_locate_%s A node's figure in a check of fabricbench "
                "locate.\n# TYPE fabricbench_locate_%s gauge\n", fam, fam);
        for (int i = 0; i < l->nodes; i++) {
            node_checks(l, i, c);
            for (int k = 0; k < CHECKS; k++) {
                if (isnan(c[k].fig) || prom_family(k) != g)
                    continue;
                fprintf(af.f, "fabricbench_locate_%s{node=\"", fam);
                prom_label(af.f, l->name[i]);
                fprintf(af.f, "\",check=\"%s\"} %.6g\n", check_names[k],
                        c[k].fig * prom_scale(k));
            }
        }
        fprintf(af.f, "# HELP fabricbench_locate_expected_%s What the node's own hardware "
                "allows in a check of fabricbench locate (the expected-figure model).\n"
                "# TYPE fabricbench_locate_expected_%s gauge\n", fam, fam);
        for (int i = 0; i < l->nodes; i++) {
            node_checks(l, i, c);
            for (int k = 0; k < CHECKS; k++) {
                if (!(c[k].exp.gbps > 0) || prom_family(k) != g)
                    continue;
                fprintf(af.f, "fabricbench_locate_expected_%s{node=\"", fam);
                prom_label(af.f, l->name[i]);
                fprintf(af.f, "\",check=\"%s\"} %.6g\n", check_names[k],
                        c[k].exp.gbps * prom_scale(k));
            }
        }
        fprintf(af.f, "# HELP fabricbench_locate_fleet_median_%s The median node's figure in a "
                "check of fabricbench locate.\n# TYPE fabricbench_locate_fleet_median_%s gauge\n",
                fam, fam);
        node_checks(l, 0, c);
        for (int k = 0; l->nodes > 0 && k < CHECKS; k++)
            if (!isnan(c[k].med) && prom_family(k) == g)
                fprintf(af.f, "fabricbench_locate_fleet_median_%s{check=\"%s\"} %.6g\n", fam,
                        check_names[k], c[k].med * prom_scale(k));
    }
    fputs("# HELP fabricbench_locate_check_ok 1 when the node passed the check, 0 when it "
          "failed; a check skipped is absent.\n# TYPE fabricbench_locate_check_ok gauge\n", af.f);
    for (int i = 0; i < l->nodes; i++) {
        node_checks(l, i, c);
        for (int k = 0; k < CHECKS; k++) {
            if (c[k].v == FB_SKIP)
                continue;
            fputs("fabricbench_locate_check_ok{node=\"", af.f);
            prom_label(af.f, l->name[i]);
            fprintf(af.f, "\",check=\"%s\"} %d\n", check_names[k], c[k].v == FB_PASS);
        }
    }
    fputs("# HELP fabricbench_locate_node_ok 1 when no check of the node failed.\n"
          "# TYPE fabricbench_locate_node_ok gauge\n", af.f);
    for (int i = 0; i < l->nodes; i++) {
        node_checks(l, i, c);
        fputs("fabricbench_locate_node_ok{node=\"", af.f);
        prom_label(af.f, l->name[i]);
        fprintf(af.f, "\"} %d\n", !node_failed(c));
    }
    /* OpenMetrics ends its exposition here; to Prometheus's text parser it is a comment */
    fputs("# EOF\n", af.f);
    return commit_or_fail(&af);
}

/* How many of the node table's figures have an expected figure to be judged by (not a peak),
 * and how many of those fall short of FB_EXPECTED_MIN_SHARE of it. */
static void own_hardware_count(const struct loc *l, int *judged, int *short_of)
{
    struct node_check c[CHECKS];

    *judged = *short_of = 0;
    for (int i = 0; i < l->nodes; i++) {
        node_checks(l, i, c);
        for (int k = 0; k < CHECKS; k++) {
            if (!fb_expected_judged(c[k].exp.gbps, c[k].exp.bound) || isnan(c[k].fig))
                continue;
            (*judged)++;
            *short_of += c[k].fig < FB_EXPECTED_MIN_SHARE * c[k].exp.gbps;
        }
    }
}

/* locate.md's table of each node's figures against what its own hardware allows (the
 * expected-figure model), where the model gave any: the verdicts judge a node against the
 * others, so a fleet short of its hardware as a whole shows here, not there. */
static void own_hardware_md(const struct loc *l, FILE *f)
{
    struct node_check c[CHECKS];
    bool any = false;
    int judged, short_of;

    for (int i = 0; i < l->nodes; i++) {
        node_checks(l, i, c);
        for (int k = 0; k < CHECKS; k++) {
            if (!(c[k].exp.gbps > 0))
                continue;
            if (!any)
                fputs("\n## Each node against its own hardware\n\n| node | check | figure | "
                      "expected | share | bound |\n|---|---|---|---|---|---|\n", f);
            any = true;
            fputs("| ", f);
            fb_md_put_text(f, l->name[i]);
            fprintf(f, " | %s | ", check_names[k]);
            if (isnan(c[k].fig))
                fprintf(f, "not measured | %.4g %s | | ", c[k].exp.gbps, check_unit(k));
            else
                fprintf(f, "%.4g %s | %.4g %s | %.*g%%%s | ", c[k].fig, check_unit(k),
                        c[k].exp.gbps, check_unit(k),
                        c[k].fig < 0.01 * c[k].exp.gbps ? 2 : 3, /* 0.032%, 93.4%, 393% */
                        100.0 * c[k].fig / c[k].exp.gbps,
                        !fb_expected_judged(c[k].exp.gbps, c[k].exp.bound)
                            ? " (a peak: shown, not judged)"
                        : c[k].fig < FB_EXPECTED_MIN_SHARE * c[k].exp.gbps ? " <--" : "");
            fb_md_put_text(f, c[k].exp.bound);
            fputs(" |\n", f);
        }
    }
    if (!any)
        return;
    own_hardware_count(l, &judged, &short_of);
    fprintf(f, "\n%d of %d figures judged by their hardware are under %.0f%% of it (`<--`). The "
            "verdicts above judge each node against the others; this table, against what its "
            "own links and GPUs allow (docs/expected.md).\n", short_of, judged,
            100.0 * FB_EXPECTED_MIN_SHARE);
}

static fb_status write_md(const struct loc *l, enum heat heat)
{
    struct fb_atomic_file af;
    char path[4200], line[800];
    fb_status st;

    snprintf(path, sizeof path, "%s/locate.md", l->res.dir);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    fprintf(af.f, "# fabricbench locate: %d node(s), %d rank(s)\n\n", l->nodes,
            l->s.world.size);
    fprintf(af.f, "Tolerance: %.0f%% below the typical value (and 3 scaled MADs). Backend %s, "
            "collectives %s.\n\n", l->tolerance, l->s.be->name, l->s.coll->name);
    fprintf(af.f, "## Verdict\n\n");
    if (!l->nsus && !l->stopped[0])
        fprintf(af.f, "No suspect among %d node(s).\n\n", l->nodes);
    if (l->unanswered)
        fprintf(af.f, "The fleet stopped after phase 1: %d node(s) did not answer (hung or "
                "dead: the watchdog's lines name their ranks); the other nodes were judged "
                "among themselves in phase 1 only, the tournament and the stragglers not "
                "run.\n\n", l->unanswered);
    if (l->stopped[0])
        fprintf(af.f, "The job stopped (%s) in %s: this table holds the checks that finished "
                "(phase 1%s); the others SKIP, and the watchdog's lines name the ranks that did "
                "not arrive.\n\n", l->stopped, loc_stage_name(l->stage),
                l->stage == LOC_STAGE_STRAGGLERS ? " and the tournament" : "");
    for (size_t i = 0; l->stopped[0] && i < l->nsus; i++)
        if (stop_suspect(&l->sus[i])) {
            fprintf(af.f, "At the timeout every rank's watchdog told rank 0 where it was: the "
                    "node(s) below had a rank still working while the others waited (`hang` "
                    "suspects) or, when none was, a rank that told nothing (`silent`: dead, "
                    "frozen, or cut off).\n\n");
            break;
        }
    if (l->by_deputy) {
        fprintf(af.f, "Written by the deputy, rank %d on ", l->s.world.rank);
        fb_md_put_text(af.f, l->s.world.host);
        fprintf(af.f, ": rank 0's own node did not answer, so rank 0 could not write this "
                "table. The deputy also rewrote results.csv with every node's rows it holds; "
                "env.json is rank 0's, marked by its watchdog (or by the deputy, when it "
                "still said 'running').\n\n");
    }
    for (size_t i = 0; i < l->nsus; i++) {
        verdict_line(l, &l->sus[i], line, sizeof line);
        fputs("- ", af.f);
        fb_md_put_text(af.f, line);
        fputs("\n", af.f);
    }
    own_hardware_md(l, af.f);
    fprintf(af.f, "\n## Plan\n\n| phase | rounds | seconds |\n|---|---|---|\n");
    fprintf(af.f, "| 1: every node alone | 1 | %.2f |\n", l->phase_s[0]);
    fprintf(af.f, "| 1: compute stand-in | 1 | %.2f |\n", l->phase_s[4]);
    fprintf(af.f, "| 1: the other nodes' answers | 1 | %.2f |\n", l->phase_s[5]);
    if (l->unanswered) {
        fprintf(af.f, "| 2: tournament, twice | not run | |\n| retests | not run | |\n"
                "| stragglers | not run | |\n\n");
        fprintf(af.f, "Phase 1's first two rows are %s node's (each node measures itself "
                "at its own pace); the third, how long %s then waited for the others.\n",
                l->by_deputy ? "the deputy's" : "rank 0's",
                l->by_deputy ? "the deputy" : "rank 0");
        goto files;
    }
    if (l->stopped[0] && l->stage == LOC_STAGE_PAIRS) {
        fprintf(af.f, "| 2: tournament, twice, and retests | not finished | |\n"
                "| stragglers | not run | |\n\n");
        goto files;
    }
    fprintf(af.f, "| 2: tournament, twice | %d | %.2f |\n", l->rounds, l->phase_s[1]);
    fprintf(af.f, "| retests | %d | %.2f |\n", l->retest_rounds, l->phase_s[2]);
    if (l->stopped[0])
        fprintf(af.f, "| stragglers | not finished | |\n\n");
    else
        fprintf(af.f, "| stragglers | 1 | %.2f |\n\n", l->phase_s[3]);
    fprintf(af.f, "Phase 1's first two rows are rank 0's node's (each node measures itself at "
            "its own pace); the third, how long rank 0 then waited for the others.\n\n");
    fprintf(af.f, "rounds: %d of the tournament's %d%s; %.3f s per round; typical pair %.3g "
            "GB/s.\n", l->rounds, l->full_rounds,
            l->sampled ? " (sampled)" : "", l->round_s, l->phase2_typical);
    if (l->sampled)
        fprintf(af.f, "\nA sampled plan misses a given slow link with probability %.2f (it "
                "meets in one round of %d); a slow node is met in every round.\n",
                fb_locate_miss_odds(l->full_rounds, l->rounds), l->full_rounds);
files:
    fprintf(af.f, "\nFiles: suspects.csv, drain.txt, nodes.csv, junit.xml, fabricbench.prom, "
            "results.csv, env.json%s.\n", heat_files(heat));
    if (ferror(af.f)) {
        fb_error("locate: cannot write '%s'", af.tmp);
        fb_atomic_abort(&af);
        return FB_ERR_IO;
    }
    return fb_atomic_commit(&af);
}

/* The heat map: its data and script in the run folder, drawn by gnuplot when it is there (a
 * missing gnuplot is a warning: the figures are in results.csv). */
static fb_status write_heat(const struct loc *l, enum heat *heat)
{
    const char *tmpl = fb_plot_template_find("locate_heat");
    const char *common = fb_plot_template_find("common");
    struct fb_atomic_file af;
    char path[4200], gp[512], err[4500], q[200];
    size_t n = (size_t)l->nodes;
    fb_status st;

    *heat = HEAT_NONE;
    if (!tmpl || !common || n < 2 || l->unanswered || l->stopped[0]) /* no whole tournament */
        return FB_OK;
    snprintf(path, sizeof path, "%s/locate-heat.dat", l->res.dir);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    fprintf(af.f, "# node partner bandwidth_gbps (a's own, while it exchanged with b)\n");
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < n; b++)
            fprintf(af.f, "%zu %zu %.6g\n", a, b, l->heat[a * n + b]);
        fputs("\n", af.f);
    }
    if ((st = fb_atomic_commit(&af)) != FB_OK)
        return st;
    snprintf(path, sizeof path, "%s/locate-heat.gp", l->res.dir);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    fprintf(af.f, "# locate-heat.gp: written by `fabricbench locate` from plots/locate_heat.gp;"
            " redraw with: gnuplot locate-heat.gp (in this folder)\n");
    fprintf(af.f, "name = 'locate-heat'\ndat = 'locate-heat.dat'\nnnodes = %zu\n", n);
    fprintf(af.f, "width = %zu\nheight = %zu\nlabels = \"", 360 + 60 * (n < 40 ? n : 40),
            300 + 60 * (n < 40 ? n : 40));
    for (size_t i = 0; i < n && n <= 64; i++) {
        /* each label a gnuplot string inside the tics list, itself inside a double-quoted
         * string, where gnuplot would also run a command between backquotes */
        fb_gp_tic_label(q, sizeof q, l->name[i]);
        fprintf(af.f, "%s%s %zu", i ? ", " : "", q, i);
    }
    fprintf(af.f, "\"\n");
    fputs(common, af.f);
    fputs(tmpl, af.f);
    if (ferror(af.f)) {
        fb_atomic_abort(&af);
        return FB_ERR_IO;
    }
    if ((st = fb_atomic_commit(&af)) != FB_OK)
        return st;
    *heat = HEAT_DATA;
    if (!fb_gnuplot_find(gp, sizeof gp)) {
        fb_warn("locate: no gnuplot on PATH: the heat map's data and script are in %s",
                l->res.dir);
        return FB_OK;
    }
    if (fb_gnuplot_run(gp, l->res.dir, NULL, "locate-heat.gp", err, sizeof err) != FB_OK)
        fb_warn("locate: %s: heat map not drawn", err);
    else
        *heat = HEAT_DRAWN;
    return FB_OK;
}

fb_status loc_write_outputs(struct loc *l)
{
    char line[800];
    enum heat heat = HEAT_NONE;
    fb_status st;

    fb_out("\n");
    for (size_t i = 0; i < l->nsus; i++) {
        verdict_line(l, &l->sus[i], line, sizeof line);
        fb_out("%s\n", line);
    }
    if (l->stopped[0])
        fb_out("locate: stopped (%s) in %s: the checks that finished are judged in nodes.csv\n",
               l->stopped, loc_stage_name(l->stage));
    else if (!l->nsus)
        fb_out("locate: no suspect among %d node(s)\n", l->nodes);
    {
        int judged, short_of;
        own_hardware_count(l, &judged, &short_of);
        if (judged)
            fb_out("locate: against their own hardware, %d of %d node figures under %.0f%% of "
                   "what it allows (locate.md, nodes.csv's expected)\n", short_of, judged,
                   100.0 * FB_EXPECTED_MIN_SHARE);
    }
    /* the heat map first, so that locate.md and the last line name only what was written */
    if ((st = write_suspects(l)) != FB_OK || (st = write_drain(l)) != FB_OK ||
        (st = write_nodes(l)) != FB_OK || (st = write_junit(l)) != FB_OK ||
        (st = write_prom(l)) != FB_OK ||
        (st = write_heat(l, &heat)) != FB_OK ||
        (st = write_md(l, heat)) != FB_OK)
        return st;
    fb_out("locate: %s/suspects.csv, drain.txt, nodes.csv, junit.xml, fabricbench.prom, locate.md, "
           "results.csv, env.json%s\n", l->res.dir,
           heat_files(heat));
    return FB_OK;
}
