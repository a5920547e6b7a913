/* Reading a results.csv back (what `compare` and `accept` judge): the header must be the one
 * fabricbench writes (fb_results_columns, in order), fields are RFC 4180, and every value is
 * checked. A malformed file is refused with "path:line: what was wrong", never half read. */
#ifndef FB_RESULTS_READ_H
#define FB_RESULTS_READ_H

#include <stddef.h>

#include "results.h"
#include "status.h"

/* One row as read: the written row (empty cells are -1 or "" as fb_row says) and its run id. */
struct fb_read_row {
    struct fb_row row;
    char run_id[128];
    size_t line; /* 1-based line of the file, for messages */
};

struct fb_read_results {
    char path[4096];
    struct fb_read_row *rows;
    size_t nrows;
};

/* Reads path into out (release with fb_results_read_release). FB_ERR_IO when it cannot be
 * opened, FB_ERR_USAGE with "path:line: what" in err when its content is not a results.csv. */
fb_status fb_results_read(const char *path, struct fb_read_results *out, char *err,
                          size_t errlen);
/* The same over len bytes at buf (not NUL-terminated; nothing past buf[len - 1] is read);
 * `path` names the file in messages. */
fb_status fb_results_parse(const char *path, const char *buf, size_t len,
                           struct fb_read_results *out, char *err, size_t errlen);
void fb_results_read_release(struct fb_read_results *r); /* accepts a zeroed struct */

/* Any CSV file with a header line (RFC 4180, as results.csv), read whole: a sweep's
 * launches.csv. Row 0 of cell is the header; data rows are 1..nrows. */
struct fb_csv_table {
    size_t ncols, nrows;   /* nrows: data rows, the header not counted */
    char **cell;           /* (nrows + 1) * ncols pointers into store */
    size_t *line;          /* the file's line where each row starts (line[0] = 1) */
    char *store;
};

/* Reads path into t (release with fb_csv_table_release). FB_ERR_IO when it cannot be opened,
 * FB_ERR_USAGE with "path:line: what" in err when a record is malformed, has another number of
 * fields than the header, or the file is empty. */
fb_status fb_csv_table_read(const char *path, struct fb_csv_table *t, char *err, size_t errlen);

/* The cell of data row `row` (1..nrows) in the column whose header is `column`; NULL when there
 * is no such column. */
const char *fb_csv_table_get(const struct fb_csv_table *t, size_t row, const char *column);

void fb_csv_table_release(struct fb_csv_table *t); /* accepts a zeroed struct */

#endif
