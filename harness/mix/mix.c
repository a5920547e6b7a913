/* The mix model and its text format (mix.h): one op a line, `#` comments, sizes with binary
 * units, every error naming the file and line. */
#include "mix.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "file_read.h"
#include "units.h"

static const char *const coll_names[FB_MIX_COLLS] = {
    [FB_MIX_ALLREDUCE] = "allreduce",     [FB_MIX_ALLGATHER] = "allgather",
    [FB_MIX_REDUCE_SCATTER] = "reduce_scatter", [FB_MIX_ALLTOALL] = "alltoall",
    [FB_MIX_BROADCAST] = "broadcast",     [FB_MIX_REDUCE] = "reduce",
};

static const char *const dtype_names[FB_DTYPE_COUNT] = {
    [FB_DTYPE_FLOAT32] = "float32", [FB_DTYPE_FLOAT64] = "float64", [FB_DTYPE_INT32] = "int32",
    [FB_DTYPE_FLOAT16] = "float16", [FB_DTYPE_INT8] = "int8",
};

const char *fb_mix_coll_name(enum fb_mix_coll c)
{
    return (unsigned)c < FB_MIX_COLLS ? coll_names[c] : "?";
}

/* The index of name in names[0..n), -1 when it is none. */
static int index_of(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

bool fb_mix_coll_parse(const char *name, enum fb_mix_coll *out)
{
    int i = index_of(coll_names, FB_MIX_COLLS, name);
    if (i >= 0)
        *out = (enum fb_mix_coll)i;
    return i >= 0;
}

const char *fb_mix_dtype_name(enum fb_dtype t)
{
    return (unsigned)t < FB_DTYPE_COUNT ? dtype_names[t] : "?";
}

bool fb_mix_dtype_parse(const char *name, enum fb_dtype *out)
{
    int i = index_of(dtype_names, FB_DTYPE_COUNT, name);
    if (i >= 0)
        *out = (enum fb_dtype)i;
    return i >= 0;
}

fb_status fb_mix_add(struct fb_mix *m, const struct fb_mix_op *op)
{
    if (m->nops == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        struct fb_mix_op *ops = realloc(m->ops, cap * sizeof *ops);
        if (!ops)
            return FB_ERR_NOMEM;
        m->ops = ops;
        m->cap = cap;
    }
    m->ops[m->nops++] = *op;
    return FB_OK;
}

void fb_mix_free(struct fb_mix *m)
{
    free(m->ops);
    *m = (struct fb_mix){0};
}

size_t fb_mix_total_bytes(const struct fb_mix *m)
{
    size_t sum = 0;
    for (size_t i = 0; i < m->nops; i++)
        sum += m->ops[i].bytes;
    return sum;
}

const struct fb_mix_op *fb_mix_largest(const struct fb_mix *m)
{
    const struct fb_mix_op *big = NULL;
    for (size_t i = 0; i < m->nops; i++)
        if (!big || m->ops[i].bytes > big->bytes)
            big = &m->ops[i];
    return big;
}

/* The binary units a size may carry; "KB", "MB" and "GB" are refused as ambiguous. */
static const struct {
    const char *unit;
    unsigned shift; /* the unit is 2^shift bytes */
} units[] = {
    {"", 0},   {"B", 0},   {"K", 10},  {"KiB", 10}, {"M", 20},  {"MiB", 20}, {"G", 30},
    {"GiB", 30},
};

enum { EXACT_OK, EXACT_NOT_WHOLE, EXACT_OUT_OF_RANGE };

/* The number in the k bytes at f (already checked by fb_decimal_parse: digits, a '.', an
 * exponent; a '-' only where the range check has refused it) times 2^shift, read exactly, with
 * no double in the way: its significant digits D (leading and trailing zeros off) times 10^e
 * times 2^shift. With e < 0 it is whole only when 5^-e divides D and -e <= shift (D, with no
 * factor 10 left, is odd once 5 divides it), and then it is D / 5^-e times 2^(shift + e). */
static int exact_bytes(const char *f, size_t k, unsigned shift, size_t *out)
{
    const uint64_t most = FB_MIX_MAX_BYTES;
    size_t i = 0, first = k, last = k;
    long frac = 0, exp = 0, after_last = 0; /* digits after the last significant one */
    int esign = 1;
    bool dot = false;

    for (; i < k && f[i] != 'e' && f[i] != 'E'; i++) {
        if (f[i] == '.') {
            dot = true;
            continue;
        }
        if (f[i] < '0' || f[i] > '9')
            return EXACT_OUT_OF_RANGE; /* a sign: below 1 byte */
        frac += dot;
        after_last++;
        if (f[i] != '0') {
            if (first == k)
                first = i;
            last = i;
            after_last = 0;
        }
    }
    if (first == k)
        return EXACT_OUT_OF_RANGE; /* zero */
    if (i < k && ++i < k && (f[i] == '-' || f[i] == '+'))
        esign = f[i++] == '-' ? -1 : 1;
    for (; i < k; i++)
        if (exp < 100000)
            exp = exp * 10 + (f[i] - '0');
    long e = esign * exp - frac + after_last; /* value = D x 10^e x 2^shift */
    if (e < 0 && -e > (long)shift)
        return EXACT_NOT_WHOLE;
    /* D / 5^m in one pass over its digits (m = -e, at most 30: 5^30 < 2^70), the quotient
     * kept while it can still be 1e18 bytes or less */
    unsigned m = e < 0 ? (unsigned)-e : 0;
    __extension__ typedef unsigned __int128 u128;
    u128 div = 1, r = 0;
    uint64_t q = 0, cap = e < 0 ? most >> (shift - m) : most >> shift;
    for (unsigned j = 0; j < m; j++)
        div *= 5;
    for (size_t j = first; j <= last; j++) {
        if (f[j] == '.')
            continue;
        r = r * 10 + (unsigned)(f[j] - '0');
        if (q > cap / 10 || q * 10 + (uint64_t)(r / div) > cap)
            return EXACT_OUT_OF_RANGE;
        q = q * 10 + (uint64_t)(r / div);
        r %= div;
    }
    if (r != 0)
        return EXACT_NOT_WHOLE;
    for (; e > 0; e--)
        if (q > cap / 10 || (q *= 10) > cap)
            return EXACT_OUT_OF_RANGE;
    *out = (size_t)(q << (shift - m));
    return EXACT_OK;
}

/* A size field: digits (fb_decimal_parse) then a unit. */
static fb_status parse_size(const char *f, size_t n, size_t *bytes, char *why, size_t whylen)
{
    char shown[80], num_why[160];
    size_t k = 0;
    double v, total;

    fb_escape(f, n, 40, shown, sizeof shown);
    while (k < n && f[k] && strchr("0123456789.-eE", f[k]))
        k++;
    if (k == 0) {
        snprintf(why, whylen, "size '%s' is not a number with a unit (4096, 64K, 1.5MiB)", shown);
        return FB_ERR_USAGE;
    }
    if (fb_decimal_parse(f, k, &v, num_why, sizeof num_why) != FB_OK) {
        snprintf(why, whylen, "size '%s': %s", shown, num_why);
        return FB_ERR_USAGE;
    }
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        if (strlen(units[u].unit) != n - k || memcmp(units[u].unit, f + k, n - k) != 0)
            continue;
        total = ldexp(v, (int)units[u].shift);
        if (!(total >= 1.0) || total > (double)FB_MIX_MAX_BYTES) {
            snprintf(why, whylen, "size '%s' is out of range (1 byte to 1e18 bytes)", shown);
            return FB_ERR_USAGE;
        }
        /* plain digits are read exactly, as digits and a power of ten otherwise: a double
         * holds whole numbers only to 2^53 (`fabricbench mix` writes byte counts up to 1e18)
         * and would round "1099511627776.0000001" onto a whole number */
        int r = exact_bytes(f, k, units[u].shift, bytes);
        if (r == EXACT_OUT_OF_RANGE) {
            snprintf(why, whylen, "size '%s' is out of range (1 byte to 1e18 bytes)", shown);
            return FB_ERR_USAGE;
        }
        if (r == EXACT_NOT_WHOLE) {
            snprintf(why, whylen, "size '%s' is not a whole number of bytes", shown);
            return FB_ERR_USAGE;
        }
        return FB_OK;
    }
    snprintf(why, whylen, "size '%s' has an unknown unit (B, K, KiB, M, MiB, G, GiB: binary; "
             "KB, MB and GB are refused as ambiguous)", shown);
    return FB_ERR_USAGE;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-' || c == '/' || c == ':' || c == '[' || c == ']';
}

fb_status fb_mix_name_check(const char *name, size_t n, size_t max, char *why, size_t whylen)
{
    char shown[80];

    fb_escape(name, n, 40, shown, sizeof shown);
    if (n > max) {
        snprintf(why, whylen, "name '%s' is longer than %zu bytes", shown, max);
        return FB_ERR_USAGE;
    }
    for (size_t c = 0; c < n; c++)
        if (!name_char(name[c])) {
            snprintf(why, whylen, "name '%s' has a character other than letters, digits and "
                     "_ . - / : [ ]", shown);
            return FB_ERR_USAGE;
        }
    return FB_OK;
}

size_t fb_mix_text_fields(const char *l, size_t n, const char **f, size_t *fl, size_t max)
{
    size_t nf = 0, k = 0;

    while (k < n && nf <= max) {
        while (k < n && (l[k] == ' ' || l[k] == '\t'))
            k++;
        if (k == n)
            break;
        f[nf] = l + k;
        while (k < n && l[k] != ' ' && l[k] != '\t')
            k++;
        fl[nf] = (size_t)(l + k - f[nf]);
        nf++;
    }
    return nf;
}

/* One line's fields, comment and blanks taken off: "why" on failure. */
static fb_status parse_line(const char *l, size_t n, struct fb_mix_op *op, char *why,
                            size_t whylen)
{
    const char *f[6];
    size_t fl[6], nf = fb_mix_text_fields(l, n, f, fl, 5);
    char word[64], shown[80];

    if (nf > 5) {
        fb_escape(f[5], (size_t)(l + n - f[5]), 40, shown, sizeof shown);
        snprintf(why, whylen, "a field too many: '%s' (COLL SIZE DTYPE [NAME] "
                 "[compute_us=US])", shown);
        return FB_ERR_USAGE;
    }
    *op = (struct fb_mix_op){0};
    if (nf < 3) {
        snprintf(why, whylen, "%zu field%s, expected COLL SIZE DTYPE [NAME] [compute_us=US]", nf,
                 nf == 1 ? "" : "s");
        return FB_ERR_USAGE;
    }
    fb_escape(f[0], fl[0], 40, shown, sizeof shown);
    snprintf(word, sizeof word, "%.*s", (int)(fl[0] < 63 ? fl[0] : 63), f[0]);
    if (fl[0] >= sizeof word || !fb_mix_coll_parse(word, &op->coll)) {
        snprintf(why, whylen, "unknown collective '%s' (allreduce, allgather, reduce_scatter, "
                 "alltoall, broadcast, reduce)", shown);
        return FB_ERR_USAGE;
    }
    if (parse_size(f[1], fl[1], &op->bytes, why, whylen) != FB_OK)
        return FB_ERR_USAGE;
    fb_escape(f[2], fl[2], 40, shown, sizeof shown);
    snprintf(word, sizeof word, "%.*s", (int)(fl[2] < 63 ? fl[2] : 63), f[2]);
    if (fl[2] >= sizeof word || !fb_mix_dtype_parse(word, &op->dtype)) {
        snprintf(why, whylen, "unknown type '%s' (float32, float64, int32, float16, int8)", shown);
        return FB_ERR_USAGE;
    }
    if (op->bytes % fb_dtype_size(op->dtype) != 0) {
        snprintf(why, whylen, "%zu bytes is not a whole number of %s elements (%zu bytes each)",
                 op->bytes, dtype_names[op->dtype], fb_dtype_size(op->dtype));
        return FB_ERR_USAGE;
    }
    bool compute_seen = false;
    for (size_t i = 3; i < nf; i++) {
        static const char key[] = "compute_us=";
        char num_why[160];
        if (fl[i] >= sizeof key - 1 && memcmp(f[i], key, sizeof key - 1) == 0) {
            const char *v = f[i] + sizeof key - 1;
            if (compute_seen) { /* the last would win, silently */
                fb_escape(f[i], fl[i], 40, shown, sizeof shown);
                snprintf(why, whylen, "compute_us given twice ('%s' after the first)", shown);
                return FB_ERR_USAGE;
            }
            compute_seen = true;
            size_t vl = fl[i] - (sizeof key - 1);
            if (fb_decimal_parse(v, vl, &op->compute_us, num_why, sizeof num_why) != FB_OK ||
                op->compute_us < 0.0 || op->compute_us > 1e9) {
                fb_escape(f[i], fl[i], 40, shown, sizeof shown);
                snprintf(why, whylen, "'%s': compute_us must be a number of microseconds from 0 "
                         "to 1e9", shown);
                return FB_ERR_USAGE;
            }
            continue;
        }
        fb_escape(f[i], fl[i], 40, shown, sizeof shown);
        if (i != 3 || op->name[0]) {
            snprintf(why, whylen, "a field too many: '%s' (COLL SIZE DTYPE [NAME] "
                     "[compute_us=US])", shown);
            return FB_ERR_USAGE;
        }
        if (fb_mix_name_check(f[i], fl[i], FB_MIX_NAME - 1, why, whylen) != FB_OK)
            return FB_ERR_USAGE;
        memcpy(op->name, f[i], fl[i]);
        op->name[fl[i]] = '\0';
    }
    return FB_OK;
}

fb_status fb_mix_parse(const char *text, size_t len, const char *shown, struct fb_mix *out,
                       char *err, size_t errlen)
{
    size_t pos = fb_file_bom(text, len), line = 0, n;
    const char *l;
    bool nul;
    char why[400];
    fb_status st = FB_OK;

    *out = (struct fb_mix){0};
    while (st == FB_OK && fb_file_line(text, len, &pos, &line, &l, &n, &nul)) {
        struct fb_mix_op op;

        if (nul) {
            snprintf(err, errlen, "%s:%zu: a NUL byte in the line", shown, line);
            st = FB_ERR_USAGE;
            break;
        }
        if (n == 0)
            continue;
        if (parse_line(l, n, &op, why, sizeof why) != FB_OK) {
            snprintf(err, errlen, "%s:%zu: %s", shown, line, why);
            st = FB_ERR_USAGE;
        } else if ((op.line = line), (st = fb_mix_add(out, &op)) != FB_OK) {
            snprintf(err, errlen, "%s: out of memory reading it", shown);
        }
    }
    if (st == FB_OK && out->nops == 0) {
        snprintf(err, errlen, "%s:%zu: no ops in the mix (one line per collective: COLL SIZE "
                 "DTYPE [NAME])", shown, line ? line : 1);
        st = FB_ERR_USAGE;
    }
    if (st != FB_OK)
        fb_mix_free(out);
    return st;
}

fb_status fb_mix_read(const char *path, enum fb_dtype inspector_dtype, struct fb_mix *out,
                      char *err, size_t errlen)
{
    char shown[600], *buf = NULL;
    size_t len = 0, k;
    fb_status st;

    *out = (struct fb_mix){0};
    fb_escape_str(path, 0, shown, sizeof shown);
    if ((st = fb_file_read(path, FB_FILE_MIX, false, &buf, &len, err, errlen)) != FB_OK)
        return st;
    k = fb_file_bom(buf, len);
    while (k < len && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\n' || buf[k] == '\r'))
        k++;
    if (k < len && buf[k] == '{')
        st = fb_mix_inspector_parse(buf, len, shown, inspector_dtype, out, err, errlen);
    else
        st = fb_mix_parse(buf, len, shown, out, err, errlen);
    free(buf);
    return st;
}

/* bytes in the largest binary unit that keeps it exact. */
static void size_text(size_t bytes, char *buf, size_t len)
{
    if (bytes % ((size_t)1 << 30) == 0)
        snprintf(buf, len, "%zuGiB", bytes >> 30);
    else if (bytes % ((size_t)1 << 20) == 0)
        snprintf(buf, len, "%zuMiB", bytes >> 20);
    else if (bytes % 1024 == 0)
        snprintf(buf, len, "%zuKiB", bytes >> 10);
    else
        snprintf(buf, len, "%zu", bytes);
}

/* Appends printf output to a growing buffer. */
struct sbuf {
    char *s;
    size_t len, cap;
    bool failed;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->failed)
        return;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap : 4096);
        char *s;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        if (!(s = realloc(b->s, cap))) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

fb_status fb_mix_format(const struct fb_mix *m, const char *header, char **text)
{
    struct sbuf b = {0};

    *text = NULL;
    for (const char *h = header; h && *h;) {
        const char *nl = strchr(h, '\n');
        int n = nl ? (int)(nl - h) : (int)strlen(h);
        sb_printf(&b, n ? "# %.*s\n" : "#\n", n, h);
        h += n + (nl ? 1 : 0);
    }
    sb_printf(&b, "# %-14s %10s %-8s %s\n", "coll", "bytes", "dtype", "name");
    for (size_t i = 0; i < m->nops; i++) {
        const struct fb_mix_op *o = &m->ops[i];
        char size[32];
        size_text(o->bytes, size, sizeof size);
        sb_printf(&b, "%-16s %10s %-8s%s%s", fb_mix_coll_name(o->coll), size,
                  fb_mix_dtype_name(o->dtype), o->name[0] ? " " : "", o->name);
        if (o->compute_us > 0.0)
            sb_printf(&b, " compute_us=%.17g", o->compute_us);
        sb_printf(&b, "\n");
    }
    if (b.failed || !b.s) {
        free(b.s);
        return FB_ERR_NOMEM;
    }
    /* a line without a name keeps no trailing blank */
    {
        char *w = b.s;
        for (const char *r = b.s; *r; r++) {
            if (*r == '\n')
                while (w > b.s && w[-1] == ' ')
                    w--;
            *w++ = *r;
        }
        *w = '\0';
    }
    *text = b.s;
    return FB_OK;
}
