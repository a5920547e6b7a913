/* Host names in Slurm's hostlist syntax (hostlist.h). */
#include "hostlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool fb_hostlist_name_ok(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n < 128 &&
           strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* A name split at its trailing number: prefix length, digits (0 when none) and their value. */
struct part {
    const char *name;
    size_t prefix, digits;
    unsigned long long value;
};

static int part_cmp(const void *pa, const void *pb)
{
    const struct part *a = pa, *b = pb;
    size_t m = a->prefix < b->prefix ? a->prefix : b->prefix;
    int c;
    if ((c = strncmp(a->name, b->name, m)) != 0)
        return c;
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix ? -1 : 1;
    if (a->digits != b->digits)
        return a->digits < b->digits ? -1 : 1;
    if (a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return strcmp(a->name, b->name);
}

static bool same_group(const struct part *a, const struct part *b)
{
    return a->digits && b->digits && a->prefix == b->prefix && a->digits == b->digits &&
           strncmp(a->name, b->name, a->prefix) == 0;
}

/* Appends text to out at *used; false when it does not fit. */
static bool put(char *out, size_t len, size_t *used, const char *text, size_t n)
{
    if (*used + n + 1 > len)
        return false;
    memcpy(out + *used, text, n);
    *used += n;
    out[*used] = '\0';
    return true;
}

bool fb_hostlist_fold(const char *const *names, size_t n, char *out, size_t len)
{
    struct part *p;
    size_t used = 0, k = 0;
    bool ok = true;

    if (len)
        out[0] = '\0';
    if (!len || !(p = calloc(n ? n : 1, sizeof *p)))
        return false;
    for (size_t i = 0; i < n && ok; i++) {
        size_t m = strlen(names[i]), d = 0;
        ok = fb_hostlist_name_ok(names[i]);
        while (d < m && names[i][m - 1 - d] >= '0' && names[i][m - 1 - d] <= '9')
            d++;
        if (d > 18) /* too long to be a number: the whole name is the prefix */
            d = 0;
        p[i].name = names[i];
        p[i].prefix = m - d;
        p[i].digits = d;
        p[i].value = d ? strtoull(names[i] + m - d, NULL, 10) : 0;
    }
    if (ok)
        qsort(p, n, sizeof *p, part_cmp);
    while (ok && k < n) {
        size_t g = k + 1, bracket;
        char num[48];
        if (k > 0 && strcmp(p[k].name, p[k - 1].name) == 0) { /* a duplicate */
            k++;
            continue;
        }
        while (g < n && same_group(&p[k], &p[g]))
            g++;
        if (used)
            ok = put(out, len, &used, ",", 1);
        if (g - k == 1 || !p[k].digits || p[g - 1].value == p[k].value) { /* one name */
            ok = ok && put(out, len, &used, p[k].name, strlen(p[k].name));
            k = p[k].digits ? g : k + 1;
            continue;
        }
        ok = ok && put(out, len, &used, p[k].name, p[k].prefix) && put(out, len, &used, "[", 1);
        bracket = used;
        for (size_t i = k; i < g && ok;) {
            size_t j = i;
            while (j + 1 < g && p[j + 1].value <= p[j].value + 1)
                j++; /* a run of consecutive numbers (a duplicate inside it too) */
            if (used > bracket)
                ok = put(out, len, &used, ",", 1);
            if (j == i || p[j].value == p[i].value)
                snprintf(num, sizeof num, "%0*llu", (int)p[i].digits, p[i].value);
            else
                snprintf(num, sizeof num, "%0*llu-%0*llu", (int)p[i].digits, p[i].value,
                         (int)p[j].digits, p[j].value);
            ok = ok && put(out, len, &used, num, strlen(num));
            i = j + 1;
        }
        ok = ok && put(out, len, &used, "]", 1);
        k = g;
    }
    free(p);
    if (!ok && len)
        out[0] = '\0';
    return ok;
}
