/* compare's plots: one gnuplot script and PNG per (bench, metric), each series of more than one
 * message size drawn for both runs, base dashed and new solid in the same colour, with its
 * p05-p95 band. The scripts are written atomically and kept, so a plot can be made again. */
#define _GNU_SOURCE
#include "compare_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "file_name.h"
#include "gnuplot.h"
#include "gp_text.h"
#include "log.h"
#include "md_text.h"

enum { MAX_SERIES_PER_PLOT = 12 };

static int point_cmp(const void *x, const void *y)
{
    const struct fb_cmp_entry *a = *(const struct fb_cmp_entry *const *)x;
    const struct fb_cmp_entry *b = *(const struct fb_cmp_entry *const *)y;
    int d = fb_row_series_cmp(&a->base->row, &b->base->row);
    if (d)
        return d;
    return (a->base->row.bytes > b->base->row.bytes) - (a->base->row.bytes < b->base->row.bytes);
}

/* Whether a plot's name is among the `nused` names before it (fb_file_name_unique). */
struct used_names {
    char (*name)[96];
    size_t n;
};

static bool name_taken(const char *name, void *ctx)
{
    const struct used_names *u = ctx;
    for (size_t k = 0; k < u->n; k++)
        if (strcmp(u->name[k], name) == 0)
            return true;
    return false;
}

/* One plot per (bench, metric) with up to MAX_SERIES_PER_PLOT series that have more than one
 * size: base dashed, new solid, the same colour. Lists the PNGs made in md. */
int fb_compare_write_plots(const char *out, const struct fb_comparison *c, bool machines,
                           const char *bname, const char *nname, FILE *md, bool *gnuplot_missing)
{
    const struct fb_cmp_entry **pts = malloc((c->n + 1) * sizeof *pts);
    char (*used)[96] = NULL; /* the plots' names so far */
    size_t np = 0, i = 0, made = 0, nused = 0;
    int rc = 0;

    char gnuplot[4096], gperr[4400];

    if (!pts)
        return 1;
    if (!fb_gnuplot_find(gnuplot, sizeof gnuplot)) {
        *gnuplot_missing = true;
        fb_warn("compare: gnuplot not found on PATH: plots skipped (their scripts are written: "
                "run gnuplot on them later)");
    }
    for (size_t k = 0; k < c->n; k++)
        if (c->e[k].base && c->e[k].cur && c->e[k].base->row.bytes >= 0 &&
            isfinite(c->e[k].base->row.st.median) && isfinite(c->e[k].cur->row.st.median))
            pts[np++] = &c->e[k];
    qsort(pts, np, sizeof *pts, point_cmp);
    while (i < np) {
        /* One (bench, metric) group: [i, j). */
        size_t j = i, nseries = 0, skipped = 0;
        const struct fb_row *g = &pts[i]->base->row;
        char name[96], bench[32], metric[32], gp[4300], png[4300], tmp[4400];
        struct fb_atomic_file af;

        while (j < np && !strcmp(pts[j]->base->row.bench, g->bench) &&
               !strcmp(pts[j]->base->row.metric, g->metric))
            j++;
        snprintf(bench, sizeof bench, "%s", g->bench);
        snprintf(metric, sizeof metric, "%s", g->metric);
        fb_file_name_safe(bench, "_-");
        fb_file_name_safe(metric, "_-");
        snprintf(name, sizeof name, "compare-%s-%s", bench, metric);
        if (!fb_file_name_unique(name, sizeof name, "-", name_taken,
                                 &(struct used_names){used, nused})) {
            rc = 1;
            break;
        }
        {
            char(*grown)[96] = realloc(used, (nused + 1) * sizeof *used);
            if (!grown) {
                rc = 1;
                break;
            }
            used = grown;
            snprintf(used[nused++], sizeof used[0], "%s", name);
        }
        if (snprintf(gp, sizeof gp, "%s/%s.gp", out, name) >= (int)sizeof gp ||
            snprintf(png, sizeof png, "%s/%s.png", out, name) >= (int)sizeof png ||
            snprintf(tmp, sizeof tmp, "%s.tmp", png) >= (int)sizeof tmp) {
            fb_error("compare: output path too long: '%s'", out);
            rc = 1;
            break;
        }
        if (fb_atomic_open(&af, gp) != FB_OK) {
            rc = 1;
            break;
        }
        /* the run ids, bench and metric come from results.csv: each kept on its line */
        fputs("# ", af.f);
        fb_gp_put_comment(af.f, bname);
        fputs(" vs ", af.f);
        fb_gp_put_comment(af.f, nname);
        fputs(": ", af.f);
        fb_gp_put_comment(af.f, g->bench);
        fputs(" ", af.f);
        fb_gp_put_comment(af.f, g->metric);
        fprintf(af.f, " against message size, base dashed, new solid.\n"
                      "# Written by `fabricbench compare`; rerun with: gnuplot %s.gp\n",
                name);
        /* a row's case, transport, dtype, backend, ranks and pair: 175 bytes at most */
        char titles[MAX_SERIES_PER_PLOT][200];
        for (size_t s = i; s < j;) {
            size_t e = s;
            while (e < j && !fb_row_series_cmp(&pts[e]->base->row, &pts[s]->base->row))
                e++;
            if (e - s > 1) {
                if (nseries == MAX_SERIES_PER_PLOT) {
                    skipped++;
                } else {
                    const struct fb_row *r = &pts[s]->base->row;
                    char extra[64] = "";
                    if (r->src >= 0)
                        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " src %d",
                                 r->src);
                    if (r->dst >= 0)
                        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " dst %d",
                                 r->dst);
                    if (r->batch >= 0)
                        snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                                 " batch %ld", r->batch);
                    snprintf(titles[nseries], sizeof titles[nseries], "%s %s %s%s%s %dr%s",
                             r->kase, r->transport, r->dtype, r->dtype[0] ? " " : "", r->backend,
                             r->ranks, extra);
                    for (int side = 0; side < 2; side++) {
                        fprintf(af.f, "$s%zu_%s << EOD\n", nseries, side ? "new" : "base");
                        for (size_t p = s; p < e; p++) {
                            const struct fb_read_row *rr = side ? pts[p]->cur : pts[p]->base;
                            fprintf(af.f, "%lld %.10g %.10g %.10g\n", rr->row.bytes,
                                    rr->row.st.median, rr->row.st.p05, rr->row.st.p95);
                        }
                        fprintf(af.f, "EOD\n");
                    }
                    nseries++;
                }
            }
            s = e;
        }
        if (!nseries) {
            fb_atomic_abort(&af);
            i = j;
            continue;
        }
        /* the output named without a folder: gnuplot writes it in a private folder of its own,
         * moved into `out` when it ends (fb_gnuplot_run). compare names a temporary one
         * (fb_out, set before the script), renamed once whole; run by hand, the script makes
         * the picture itself. */
        fprintf(af.f, "if (!exists(\"fb_out\")) fb_out = ");
        fb_gp_put_string(af.f, strrchr(png, '/') + 1);
        fprintf(af.f, "\nset terminal pngcairo size 1100,650 noenhanced font \",10\"\n"
                      "set output fb_out");
        fprintf(af.f, "\nset title ");
        {
            char t[400];
            snprintf(t, sizeof t, "%s %s: %s (dashed) vs %s (solid), median with p05-p95%s",
                     g->bench, g->metric, bname, nname,
                     skipped ? " (more series in compare.csv)" : "");
            fb_gp_put_string(af.f, t);
        }
        fprintf(af.f, "\nset xlabel 'message size (bytes, binary prefixes, log scale)'\n"
                      "set ylabel ");
        {
            char t[64];
            snprintf(t, sizeof t, "%s (%s)", g->metric, g->unit);
            fb_gp_put_string(af.f, t);
        }
        fprintf(af.f, "\nset logscale x 2\nset format x \"%%.0b %%BB\"\nset grid\n"
                      "set key outside right top\nplot \\\n");
        for (size_t s = 0; s < nseries; s++) {
            fprintf(af.f, "  $s%zu_base using 1:2:3:4 with yerrorlines dt 2 lc %zu title ", s,
                    s + 1);
            {
                char t[200];
                /* a title cut short is still a title */
                if (snprintf(t, sizeof t, "%s: %s", machines ? "first" : "base", titles[s]) < 0)
                    t[0] = '\0';
                fb_gp_put_string(af.f, t);
            }
            fprintf(af.f, ", \\\n  $s%zu_new using 1:2:3:4 with yerrorlines dt 1 lc %zu title ", s,
                    s + 1);
            {
                char t[200];
                if (snprintf(t, sizeof t, "%s: %s", machines ? "second" : "new", titles[s]) < 0)
                    t[0] = '\0';
                fb_gp_put_string(af.f, t);
            }
            fprintf(af.f, "%s\n", s + 1 < nseries ? ", \\" : "");
        }
        fprintf(af.f, "set output\n");
        if (fb_atomic_commit(&af) != FB_OK) {
            rc = 1;
            break;
        }
        if (*gnuplot_missing) {
            i = j;
            continue;
        }
        char setup[200];
        snprintf(setup, sizeof setup, "fb_out = ");
        fb_gp_string(setup + 9, sizeof setup - 9, strrchr(tmp, '/') + 1);
        if (fb_gnuplot_run(gnuplot, out, setup, strrchr(gp, '/') + 1, gperr, sizeof gperr) !=
                FB_OK ||
            rename(tmp, png) != 0) {
            unlink(tmp);
            fb_warn("compare: gnuplot failed on '%s': plot skipped", gp);
        } else {
            fputs("\n![", md);
            fb_md_put_text(md, g->bench);
            fputs(" ", md);
            fb_md_put_text(md, g->metric);
            fputs("](", md);
            fb_md_put_link(md, name);
            fputs(".png)\n", md);
            made++;
        }
        i = j;
    }
    if (!made)
        fprintf(md, "\nNo plots (no series with more than one size%s).\n",
                *gnuplot_missing ? ", or no gnuplot" : "");
    free(used);
    free(pts);
    return rc;
}
