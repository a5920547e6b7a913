/* A run's results: the run folder, the rows measured so far, and results.csv rewritten
 * atomically (the runner does it after every point, see fb_runner_run), so the file on disk is
 * always whole, complete up to the last rewrite. Rank 0 only. Columns and metrics are documented in results/SCHEMA.md. */
#ifndef FB_RESULTS_H
#define FB_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "stats.h"
#include "status.h"

struct fb_row {
    char bench[24];
    char kase[48];
    char backend[16];
    char transport[24];
    char link[16];        /* a pair's link ("nvlink", "cross-socket", "network"); "" otherwise */
    int nodes, ranks;
    int src, dst;         /* -1 when not about one rank or pair */
    long batch;           /* -1 when not about a batch */
    long long bytes;      /* -1 when not about a message */
    long long count;      /* -1 when untyped */
    char dtype[12];       /* "" when untyped */
    char redop[8];        /* "" when not a reduction */
    long iters;           /* iterations per trial */
    char metric[24];
    char unit[12];
    struct fb_stats st;
    long long wrong;      /* -1 when not verified */
    bool detail;          /* not in results.csv's columns: a per-rank share or a matrix cell,
                             left out of the headline */
    double expected;      /* the model's figure for this row, in `unit` (docs/expected.md);
                             0 (or below) when it has nothing honest to say: the cell is empty */
    char bound[48];       /* the part that bounds `expected` ("eth 800 Mb/s fbv0"); "" */
    double cpu_wait;      /* the largest share, over the point's ranks, of its time that a
                             rank's thread was runnable but waiting for a CPU (0-1) */
    bool cpu_wait_known;  /* ... measured: false leaves the cell empty (a summary's rows, a
                             kernel that does not say, a file before the column) */
};

/* A point whose cpu_wait is above this shared its CPUs with other work: the runner warns, and
 * compare does not judge a change of its rows (docs/methodology.md, "A busy machine"). */
#define FB_CPU_WAIT_BUSY 0.05

/* Orders rows by series: every key of a row but its size (bytes, count), so the points of one
 * series (the same benchmark, metric, case, backend, transport, ranks, nodes, pair, batch and
 * dtype) sort together; 0 when a and b are of one series. */
int fb_row_series_cmp(const struct fb_row *a, const struct fb_row *b);

/* The share of its expected figure below which a figure is called short of it: accept's default
 * `[expected] min_share` and the marks of summary.md's "Short of the hardware" table
 * (docs/expected.md). */
#define FB_EXPECTED_MIN_SHARE 0.8

/* Whether a row's expected figure is one to judge it by: it has one, and it is not a datasheet
 * peak (a bound starting "peak ", the compute stand-in's: shown as a share, judged by nothing
 * but a profile's own floors, since no published efficiency says what the stand-in reaches). */
bool fb_row_expected_judged(const struct fb_row *w);

/* The same rule for a figure and its bound outside a row (locate's node table). */
bool fb_expected_judged(double expected, const char *bound);

/* The CSV header, in order; results/SCHEMA.md documents each (a test checks it). The readers
 * also take the headers of earlier fabricbench: without `cpu_wait`
 * (fb_results_model_ncolumns), and before the expected-figure model, without `expected` and
 * `bound` too (fb_results_legacy_ncolumns). */
extern const char *const fb_results_columns[];
extern const size_t fb_results_ncolumns;
extern const size_t fb_results_model_ncolumns;
extern const size_t fb_results_legacy_ncolumns;

/* Called on each row fb_results_add takes, before it is kept: the expected-figure model's hook
 * (job/expect_job.c fills `expected` and `bound`). */
typedef void (*fb_results_annotate_fn)(void *ctx, struct fb_row *row);

struct fb_results {
    char dir[4096];
    char run_id[128];
    char csv_path[4200];
    struct fb_row *rows;
    size_t nrows, cap;
    bool locked; /* this process holds the folder's run lock (run_folder.h) */
    bool written; /* results.csv is on disk: a flush succeeded */
    /* The most bytes results.csv may hold: 0 is the readers' cap (fb_file_cap), which a flush
     * never passes; smaller only in tests. */
    size_t max_bytes;
    /* Rows kept in memory only (never prepared, no folder): a flush writes nothing. locate's
     * phase 1 gives each node's lead such a set and sends its rows to rank 0. */
    bool in_memory;
    fb_results_annotate_fn annotate; /* NULL: rows are kept as given */
    void *annotate_ctx;
};

/* The most bytes a results.csv may hold: the readers' cap (fb_file_cap), or in tests a smaller
 * one from FB_TEST_RESULTS_MAX_BYTES. A run's plan is held against it (replay) and no flush
 * passes it. */
size_t fb_results_cap(void);

/* Chooses and creates the run folder and takes its run lock (fb_run_folder_lock; a folder a
 * live run is writing is refused, --force or not). With out_dir: that folder, refused when it
 * already holds a run's file unless force. Without: <root>/<YYYYmmdd-HHMMSS>-<host>, made
 * unique. On failure prints one line naming the path and returns FB_ERR_USAGE; nothing is left
 * behind. fb_results_release removes the lock. */
fb_status fb_results_prepare(struct fb_results *r, const char *out_dir, const char *root,
                             const char *host, bool force);

/* The default run folder's name: <YYYYmmdd-HHMMSS>-<host>, with -2, -3, ... when taken; id is
 * the name, dir = root/id. False when none is free (or dir is too small). */
bool fb_results_free_id(const char *root, const char *host, char *id, size_t idlen, char *dir,
                        size_t dirlen);

/* Appends a row (copied). It may move the rows: a pointer into r->rows taken before is stale
 * after, unless fb_results_reserve made room first. */
fb_status fb_results_add(struct fb_results *r, const struct fb_row *row);

/* Room for `more` rows, so that adding them moves nothing (a summary that adds rows while it
 * holds pointers to the rows it reads). */
fb_status fb_results_reserve(struct fb_results *r, size_t more);

/* Rewrites results.csv atomically with every row so far (FB_OK and nothing written for a set
 * in_memory). */
fb_status fb_results_flush(struct fb_results *r);

/* Writes the rows as CSV to any stream (used by flush and by tests). */
int fb_results_write_csv(FILE *f, const char *run_id, const struct fb_row *rows, size_t n);

void fb_results_release(struct fb_results *r);

#endif
