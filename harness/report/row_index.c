/* Rows sorted once by a key and searched (row_index.h). */
#define _GNU_SOURCE
#include "row_index.h"

#include <stdlib.h>
#include <string.h>

static int order_cmp(const void *x, const void *y, void *arg)
{
    const struct fb_row_index *ix = arg;
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    int c = ix->cmp(&ix->rows[i], &ix->rows[j]);

    return c ? c : (i > j) - (i < j);
}

bool fb_row_index_build(struct fb_row_index *ix, const struct fb_row *rows, size_t n,
                        fb_row_pick pick, fb_row_cmp cmp)
{
    memset(ix, 0, sizeof *ix);
    if (!(ix->at = malloc((n + 1) * sizeof *ix->at)))
        return false;
    ix->rows = rows;
    ix->cmp = cmp;
    for (size_t i = 0; i < n; i++)
        if (!pick || pick(&rows[i]))
            ix->at[ix->n++] = i;
    qsort_r(ix->at, ix->n, sizeof *ix->at, order_cmp, ix);
    return true;
}

size_t fb_row_index_find(const struct fb_row_index *ix, const struct fb_row *key)
{
    size_t lo = 0, hi = ix->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->cmp(&ix->rows[ix->at[mid]], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->n && ix->cmp(&ix->rows[ix->at[lo]], key) == 0 ? lo : ix->n;
}

const struct fb_row *fb_row_index_first(const struct fb_row_index *ix, const struct fb_row *key)
{
    size_t k = fb_row_index_find(ix, key);

    return k < ix->n ? &ix->rows[ix->at[k]] : NULL;
}

void fb_row_index_release(struct fb_row_index *ix)
{
    free(ix->at);
    memset(ix, 0, sizeof *ix);
}
