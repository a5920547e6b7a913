/* Rows looked up by a key: an index of rows sorted once by a comparison (ties in file order),
 * then searched in O(log n). What keeps the headline, the detail flags, the telemetry table and
 * the plots' lookups O(n log n) in the rows of results.csv (docs/scale.md, "report and rows"). */
#ifndef FB_ROW_INDEX_H
#define FB_ROW_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "results.h"

/* A key's order on rows, strcmp-like; and which rows an index holds. */
typedef int (*fb_row_cmp)(const struct fb_row *a, const struct fb_row *b);
typedef bool (*fb_row_pick)(const struct fb_row *r);

struct fb_row_index {
    const struct fb_row *rows; /* borrowed */
    fb_row_cmp cmp;
    size_t *at;                /* indexes into rows, sorted by cmp, then file order */
    size_t n;
};

/* Builds ix over the rows of rows[0..n) that pick takes (NULL: all). false when out of memory
 * (ix empty). Release with fb_row_index_release. */
bool fb_row_index_build(struct fb_row_index *ix, const struct fb_row *rows, size_t n,
                        fb_row_pick pick, fb_row_cmp cmp);

/* The position in ix->at of the first row (in file order) that cmp finds equal to key; ix->n
 * when there is none. */
size_t fb_row_index_find(const struct fb_row_index *ix, const struct fb_row *key);

/* That row, or NULL. */
const struct fb_row *fb_row_index_first(const struct fb_row_index *ix, const struct fb_row *key);

void fb_row_index_release(struct fb_row_index *ix); /* accepts a zeroed index */

#endif
