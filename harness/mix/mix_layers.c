/* A list of layer sizes (mix_layers.h): read, checked line by line, every error naming the file
 * and line. */
#include "mix_layers.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "file_read.h"
#include "mix.h"

static fb_status add(struct fb_mix_layers *l, size_t elements, const char *name, size_t n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        size_t *el = realloc(l->elements, cap * sizeof *el);
        char(*names)[FB_MIX_LAYER_NAME + 1];
        if (!el)
            return FB_ERR_NOMEM;
        l->elements = el;
        if (!(names = realloc(l->names, cap * sizeof *names)))
            return FB_ERR_NOMEM;
        l->names = names;
        l->cap = cap;
    }
    l->elements[l->n] = elements;
    memcpy(l->names[l->n], name, n);
    l->names[l->n][n] = '\0';
    l->n++;
    return FB_OK;
}

/* COUNT: digits only, 1 to max. */
static fb_status parse_count(const char *f, size_t n, size_t max, const char *type,
                             size_t *out, char *why, size_t whylen)
{
    char shown[80];
    size_t v = 0, k = f[0] == '-' ? 1 : 0;
    bool digits = n > k, big = false;

    fb_escape(f, n, 40, shown, sizeof shown);
    for (size_t i = k; i < n; i++)
        digits = digits && f[i] >= '0' && f[i] <= '9';
    if (!digits) {
        snprintf(why, whylen, "'%s' is not a count of elements (decimal digits, e.g. 7087872)",
                 shown);
        return FB_ERR_USAGE;
    }
    for (size_t i = k; i < n && !big; i++) {
        size_t d = (size_t)(f[i] - '0');
        big = v > (max - d) / 10;
        v = v * 10 + d;
    }
    if (k && (v || big)) {
        snprintf(why, whylen, "count '%s' is negative (a layer holds at least 1 element)", shown);
        return FB_ERR_USAGE;
    }
    if (!v && !big) {
        snprintf(why, whylen, "a layer of 0 elements (a layer holds at least 1)");
        return FB_ERR_USAGE;
    }
    if (big) {
        snprintf(why, whylen, "%s elements of %s are more than a mix op may hold (1e18 bytes)",
                 shown, type);
        return FB_ERR_USAGE;
    }
    *out = v;
    return FB_OK;
}

/* One line's fields, comment and blanks taken off. */
static fb_status parse_line(const char *l, size_t n, size_t max, const char *type,
                            struct fb_mix_layers *out, char *why, size_t whylen)
{
    const char *f[3] = {NULL, NULL, NULL};
    size_t fl[3] = {0, 0, 0}, nf = fb_mix_text_fields(l, n, f, fl, 2), elements;
    char shown[80];
    fb_status st;

    if (nf > 2) {
        fb_escape(f[2], (size_t)(l + n - f[2]), 40, shown, sizeof shown);
        snprintf(why, whylen, "a field too many: '%s' (COUNT [NAME])", shown);
        return FB_ERR_USAGE;
    }
    if ((st = parse_count(f[0], fl[0], max, type, &elements, why, whylen)) != FB_OK)
        return st;
    if (nf == 2 && (st = fb_mix_name_check(f[1], fl[1], FB_MIX_LAYER_NAME, why, whylen)) != FB_OK)
        return st;
    if ((st = add(out, elements, nf == 2 ? f[1] : "", fl[1])) == FB_ERR_NOMEM)
        snprintf(why, whylen, "out of memory");
    return st;
}

fb_status fb_mix_layers_parse(const char *text, size_t len, const char *shown,
                              size_t max_elements, const char *type, struct fb_mix_layers *out,
                              char *err, size_t errlen)
{
    size_t pos = fb_file_bom(text, len), line = 0, n;
    const char *l;
    bool nul;
    char why[400];
    fb_status st = FB_OK;

    *out = (struct fb_mix_layers){0};
    while (st == FB_OK && fb_file_line(text, len, &pos, &line, &l, &n, &nul)) {
        if (nul) {
            snprintf(err, errlen, "%s:%zu: a NUL byte in the line", shown, line);
            st = FB_ERR_USAGE;
        } else if (n && (st = parse_line(l, n, max_elements, type, out, why, sizeof why)) !=
                            FB_OK) {
            snprintf(err, errlen, "%s:%zu: %s", shown, line, why);
        }
    }
    if (st == FB_OK && out->n == 0) {
        snprintf(err, errlen, "%s:%zu: no layers in the list (one line per layer: COUNT [NAME])",
                 shown, line ? line : 1);
        st = FB_ERR_USAGE;
    }
    if (st != FB_OK)
        fb_mix_layers_free(out);
    return st;
}

fb_status fb_mix_layers_read(const char *path, size_t max_elements, const char *type,
                             struct fb_mix_layers *out, char *err, size_t errlen)
{
    char shown[600], *buf = NULL;
    size_t len = 0;
    fb_status st;

    *out = (struct fb_mix_layers){0};
    fb_escape_str(path, 0, shown, sizeof shown);
    if ((st = fb_file_read(path, FB_FILE_MIX, false, &buf, &len, err, errlen)) != FB_OK)
        return st;
    st = fb_mix_layers_parse(buf, len, shown, max_elements, type, out, err, errlen);
    free(buf);
    return st;
}

void fb_mix_layers_free(struct fb_mix_layers *l)
{
    free(l->elements);
    free(l->names);
    *l = (struct fb_mix_layers){0};
}
