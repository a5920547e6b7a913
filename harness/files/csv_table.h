/* A CSV file with a header line, read whole into cells by column name (csv_reader.h parses). */
#ifndef FB_CSV_TABLE_H
#define FB_CSV_TABLE_H

#include <stddef.h>

#include "file_read.h"
#include "status.h"

/* Any CSV file with a header line (RFC 4180, as results.csv), read whole: a sweep's
 * launches.csv. Row 0 of cell is the header; data rows are 1..nrows. */
struct fb_csv_table {
    size_t ncols, nrows;   /* nrows: data rows, the header not counted */
    char **cell;           /* (nrows + 1) * ncols pointers into store */
    size_t *line;          /* the file's line where each row starts (line[0] = 1) */
    char *store;
};

/* Reads path, a file of `kind` (file_read.h: its cap), into t (release with
 * fb_csv_table_release). FB_ERR_IO when it cannot be opened, FB_ERR_USAGE with "path:line:
 * what" in err when it is not a regular file, is over the cap, or a record is malformed, has
 * another number of fields than the header, or the file is empty; FB_ERR_NOMEM. */
fb_status fb_csv_table_read(const char *path, enum fb_file_kind kind, struct fb_csv_table *t,
                            char *err, size_t errlen);

/* The cell of data row `row` (1..nrows) in the column whose header is `column`; NULL when there
 * is no such column. */
const char *fb_csv_table_get(const struct fb_csv_table *t, size_t row, const char *column);

void fb_csv_table_release(struct fb_csv_table *t); /* accepts a zeroed struct */

#endif
