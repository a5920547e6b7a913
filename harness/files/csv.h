/* RFC 4180 CSV output: comma-separated, fields quoted only when they hold a comma, a quote or
 * a line break, quotes doubled inside quoted fields, "\n" line ends. */
#ifndef FB_CSV_H
#define FB_CSV_H

#include <stdio.h>

/* Writes one field (no separator). NULL is written as an empty field. */
void fb_csv_field(FILE *f, const char *text);

/* Writes `n` fields separated by commas, then a line end. Returns 0, or -1 on a write error. */
int fb_csv_row(FILE *f, const char *const *fields, size_t n);

#endif
