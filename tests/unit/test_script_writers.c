/* Every writer of a gnuplot script or a Markdown report fed hostile text (issue 15): the
 * report fixture's run (argv[1]) with its run id, transports, cases, dtypes and units replaced
 * by fixed-seed random strings (fuzz_text.h: quotes, backslashes, line ends, control bytes,
 * system(...), backquotes, pipes, UTF-8), 15 times (FB_FUZZ_ROUNDS=N for more), through
 * report's plots and summary.md and compare's plots and compare.md. Each .gp must lex as
 * gnuplot: every string closed on its line, no backquote outside single quotes, no `system`
 * outside strings, no comment ending in a backslash; each .dat line one line; each Markdown table the same number of cells on every
 * row, no raw control byte. Then, when gnuplot is on PATH, the same writers with the issue's
 * run id really draw, and no file `pwned` appears. */
#define _GNU_SOURCE
#include <dirent.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "compare_out.h"
#include "fuzz_text.h"
#include "gnuplot.h"
#include "log.h"
#include "report.h"
#include "test.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int c;

    while (f && (c = fgetc(f)) != EOF)
        fputc(c, m);
    fclose(m);
    if (f)
        fclose(f);
    return buf;
}

static bool control_in(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
            return true;
    return false;
}

/* One line of a gnuplot script: false (and why in *why) when it is not safe. */
static bool gp_line_ok(const char *l, size_t n, const char **why)
{
    char q = 0;

    if (control_in(l, n))
        return *why = "a control byte", false;
    for (size_t i = 0; i < n; i++) {
        char c = l[i];
        if (q == '\'') {
            q = c == '\'' ? 0 : q;
        } else if (q == '"') {
            if (c == '\\')
                i++;
            else if (c == '`')
                return *why = "a backquote in a double-quoted string", false;
            else if (c == '"')
                q = 0;
        } else if (c == '\'' || c == '"') {
            q = c;
        } else if (c == '#') {
            if (l[n - 1] == '\\')
                return *why = "a comment ending in a backslash", false;
            return true;
        } else if (c == '`') {
            return *why = "a backquote outside strings", false;
        } else if (strncmp(l + i, "system", 6) == 0 && n - i >= 6) {
            return *why = "system outside strings", false;
        }
    }
    if (q)
        return *why = "a string left open at the end of the line", false;
    return true;
}

static void check_gp(const char *path)
{
    char *s = slurp(path), *l = s;
    const char *why = "";
    int line = 1;

    for (char *nl; s && *l; l = nl + 1, line++) {
        nl = strchr(l, '\n');
        if (!nl)
            nl = l + strlen(l) - 1;
        if (!gp_line_ok(l, (size_t)(nl - l), &why)) {
            fprintf(stderr, "%s:%d: %s: %.*s\n", path, line, why, (int)(nl - l), l);
            fb_test_failures++;
            break;
        }
    }
    free(s);
}

static void check_dat(const char *path)
{
    char *s = slurp(path), *l = s;

    for (char *nl; s && *l && (nl = strchr(l, '\n')); l = nl + 1)
        if (control_in(l, (size_t)(nl - l)) || (*l == '#' && nl > l && nl[-1] == '\\')) {
            fprintf(stderr, "%s: a line is not one line: %.*s\n", path, (int)(nl - l), l);
            fb_test_failures++;
            break;
        }
    free(s);
}

/* Markdown: every table's rows have as many unescaped '|' as its header; no control byte. */
static void check_md(const char *path)
{
    char *s = slurp(path), *l = s;
    int cells = -1, line = 1;

    for (char *nl; s && *l && (nl = strchr(l, '\n')); l = nl + 1, line++) {
        int pipes = 0;
        if (control_in(l, (size_t)(nl - l))) {
            fprintf(stderr, "%s:%d: a raw control byte: %.*s\n", path, line, (int)(nl - l), l);
            fb_test_failures++;
            break;
        }
        if (*l != '|') {
            cells = -1;
            continue;
        }
        for (char *p = l; p < nl; p++) {
            if (*p == '\\')
                p++;
            else
                pipes += *p == '|';
        }
        if (cells >= 0 && pipes != cells) {
            fprintf(stderr, "%s:%d: %d cell bars, the table has %d: %.*s\n", path, line, pipes,
                    cells, (int)(nl - l), l);
            fb_test_failures++;
            break;
        }
        cells = pipes;
    }
    free(s);
}

static char checked_dir[512];

static int check_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    size_t n = strlen(path);
    (void)sb;
    (void)ftw;
    if (type != FTW_F)
        return 0;
    if (strcmp(path + n - strlen("pwned"), "pwned") == 0) {
        fprintf(stderr, "%s: gnuplot ran text from the run\n", path);
        fb_test_failures++;
    } else if (n > 3 && strcmp(path + n - 3, ".gp") == 0) {
        check_gp(path);
    } else if (n > 4 && strcmp(path + n - 4, ".dat") == 0) {
        check_dat(path);
    } else if (n > 3 && strcmp(path + n - 3, ".md") == 0) {
        check_md(path);
    }
    return fb_test_failures ? 1 : 0;
}

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)type;
    (void)ftw;
    return remove(path);
}

/* Copies s over field (size len), cut to fit. */
static void set_field(char *field, size_t len, const char *s)
{
    size_t n = strlen(s) < len ? strlen(s) : len - 1;
    memcpy(field, s, n);
    field[n] = '\0';
}

/* New hostile values for the run's text fields: each distinct value is replaced by the same
 * random string everywhere, so series still group. */
static void mutate(struct fb_row *rows, const struct fb_row *orig, size_t n, const char *payload)
{
    char r[4][48];

    for (int k = 0; k < 4; k++)
        fuzz_string(r[k], sizeof r[k]);
    if (payload)
        for (int k = 0; k < 4; k++)
            snprintf(r[k], sizeof r[k], "%s", payload);
    for (size_t i = 0; i < n; i++) {
        rows[i] = orig[i];
        if (strcmp(orig[i].transport, "mpi") == 0)
            set_field(rows[i].transport, sizeof rows[i].transport, r[0]);
        if (strcmp(orig[i].transport, "ipc") == 0)
            set_field(rows[i].transport, sizeof rows[i].transport, r[1]);
        if (strcmp(orig[i].dtype, "float32") == 0)
            set_field(rows[i].dtype, sizeof rows[i].dtype, r[2]);
        if (strcmp(orig[i].kase, "in_place") == 0)
            set_field(rows[i].kase, sizeof rows[i].kase, r[3]);
        if (strcmp(orig[i].unit, "us") == 0)
            set_field(rows[i].unit, sizeof rows[i].unit, r[3]);
    }
}

static void one_round(struct fb_report_run *r, const struct fb_row *orig,
                      const struct fb_read_row *orig_read, struct fb_cmp_side *b,
                      struct fb_cmp_side *n, const char *top, const char *gnuplot,
                      const char *payload)
{
    struct fb_comparison c = {0};
    char path[700], out[600], note[200];

    mutate(r->rows, orig, r->nrows, payload);
    fuzz_string(r->id, sizeof r->id);
    if (payload)
        snprintf(r->id, sizeof r->id, "%s", payload);
    fb_report_plots_release(&r->plots);
    free(r->state);
    CHECK(fb_report_plots(r->rows, r->nrows, &r->plots) == FB_OK);
    r->state = calloc(r->plots.n + 1, sizeof *r->state);
    snprintf(r->dir, sizeof r->dir, "%s/run", top);
    mkdir(r->dir, 0700);
    CHECK(fb_report_run_plots(r, gnuplot) == 0);
    CHECK(fb_report_write_summary(r, false, !gnuplot) == 0);

    for (int side = 0; side < 2; side++) {
        struct fb_cmp_side *s = side ? n : b;
        for (size_t i = 0; i < s->res.nrows; i++) {
            s->res.rows[i] = orig_read[i];
            if (side)
                s->res.rows[i].row.st.median *= 0.5;
        }
        mutate(r->rows, orig, r->nrows, payload); /* fresh strings for this side */
        for (size_t i = 0; i < s->res.nrows && i < r->nrows; i++) {
            memcpy(s->res.rows[i].row.transport, r->rows[i].transport, 24);
            memcpy(s->res.rows[i].row.dtype, r->rows[i].dtype, 12);
        }
        fuzz_string(s->id, sizeof s->id);
        if (payload)
            snprintf(s->id, sizeof s->id, "%s", payload);
    }
    fuzz_string(note, sizeof note);
    snprintf(out, sizeof out, "%s/cmp", top);
    mkdir(out, 0700);
    snprintf(path, sizeof path, "%s/compare.md", out);
    CHECK(fb_compare_join(&b->res, &n->res, 0.05, &c) == FB_OK);
    struct fb_cmp_set bs = {b, 1, b->id}, ns = {n, 1, n->id};
    CHECK(fb_compare_write_md(path, out, &bs, &ns, &c, 0.05, false, NULL, 0, note) == 0);
    fb_compare_release(&c);
    CHECK(nftw(top, check_one, 16, FTW_PHYS) == 0);
    nftw(checked_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    mkdir(checked_dir, 0700);
}

int main(int argc, char **argv)
{
    static struct fb_report_run r;
    static struct fb_cmp_side b, n;
    char fake[600], gnuplot[4096], *path0 = getenv("PATH");
    char *saved_path = strdup(path0 ? path0 : "");
    struct fb_row *orig;
    struct fb_read_row *orig_read;
    bool have_gnuplot = fb_gnuplot_find(gnuplot, sizeof gnuplot);
    int rounds = getenv("FB_FUZZ_ROUNDS") ? atoi(getenv("FB_FUZZ_ROUNDS")) : 15;

    if (argc != 2 || fb_report_run_load(&r, argv[1], "report") != 0) {
        fprintf(stderr, "usage: test_script_writers REPORT_FIXTURE_RUN\n");
        return 1;
    }
    fb_log_set_quiet(1);
    snprintf(checked_dir, sizeof checked_dir, "/tmp/fb_script_writers_XXXXXX");
    CHECK(mkdtemp(checked_dir) != NULL);
    CHECK(chdir(checked_dir) == 0); /* compare runs gnuplot here: a pwned would land here */
    orig = malloc(r.nrows * sizeof *orig);
    orig_read = malloc(r.res.nrows * sizeof *orig_read);
    memcpy(orig, r.rows, r.nrows * sizeof *orig);
    memcpy(orig_read, r.res.rows, r.res.nrows * sizeof *orig_read);
    for (int side = 0; side < 2; side++) {
        struct fb_cmp_side *s = side ? &n : &b;
        s->res.nrows = r.res.nrows;
        s->res.rows = malloc(r.res.nrows * sizeof *s->res.rows);
        snprintf(s->csv, sizeof s->csv, "%s/results.csv", argv[1]);
    }
    /* the fuzz rounds: a gnuplot that draws nothing, so compare writes its scripts quickly */
    snprintf(fake, sizeof fake, "/tmp/fb_fake_gnuplot_%d", (int)getpid());
    mkdir(fake, 0700);
    snprintf(gnuplot, sizeof gnuplot, "%s/gnuplot", fake);
    CHECK(symlink("/bin/true", gnuplot) == 0);
    setenv("PATH", fake, 1);
    for (int i = 0; i < rounds && !fb_test_failures; i++)
        one_round(&r, orig, orig_read, &b, &n, checked_dir, NULL, NULL);
    unlink(gnuplot);
    rmdir(fake);
    setenv("PATH", saved_path, 1);
    /* gnuplot itself on the issue's run id */
    if (have_gnuplot && fb_gnuplot_find(gnuplot, sizeof gnuplot))
        one_round(&r, orig, orig_read, &b, &n, checked_dir, gnuplot,
                  "x\nsystem(\"touch pwned\")\n#");
    else
        printf("gnuplot not on PATH: the scripts were not run\n");
    nftw(checked_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    for (int side = 0; side < 2; side++)
        free((side ? &n : &b)->res.rows);
    memcpy(r.rows, orig, r.nrows * sizeof *orig);
    fb_report_run_release(&r);
    free(orig);
    free(orig_read);
    free(saved_path);
    TEST_DONE();
}
