/* Reads a hardware profile with inih. inih splits the lines; this file decides what each
 * section and key means, and refuses (with file:line) whatever it does not know, so a typo in a
 * profile can never quietly drop a check. */
#define _GNU_SOURCE
#include "profile.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <ini.h>

#include "escape.h"
#include "file_read.h"
#include "results.h"
#include "units.h"

enum { MAX_SEEN = 128 };

/* What the handler and the line reader share. The reader counts lines, so the handler knows
 * the line it is called for (Debian's inih is built without INI_HANDLER_LINENO). */
struct parse {
    struct fb_profile *p;
    FILE *f;            /* reading a file, or */
    const char *text;   /* reading a string */
    const char *name;   /* the file, for messages */
    size_t line;        /* the line last read */
    size_t err_line;    /* first line our own checks refused (0: none) */
    size_t nul_line;    /* the line last read held a NUL byte: that line (0: none) */
    char err[512];
    struct seen {
        char key[80];   /* "section.key", numbers in a busbw key normalised ("2", not "02") */
        char given[64]; /* the key as written, for the message */
        size_t line;
    } seen[MAX_SEEN];   /* the keys already given */
    size_t nseen;
    bool asked;         /* some check was asked for */
};

static const char *const sections[] = {"profile", "node",    "p2p",        "h2d",     "allreduce",
                                       "compute", "transports", "infiniband", "binding", "noise",
                                       "expected"};
static const char *const links[] = {"nvlink", "pcie-switch", "host-bridge", "socket",
                                    "cross-socket", "same-gpu", "network", "same-node"};

static bool known(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return true;
    return false;
}

static void refuse(struct parse *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void refuse(struct parse *ps, const char *fmt, ...)
{
    va_list ap;

    if (ps->err_line)
        return; /* the first error is the one to fix first */
    ps->err_line = ps->line;
    va_start(ap, fmt);
    vsnprintf(ps->err, sizeof ps->err, fmt, ap);
    va_end(ap);
}

/* The first control character of a profile's line (escape.h's rule, C1 included), TAB and a
 * line end (LF, or CRLF where `crlf` says a CR may end it) apart; NULL when none. A profile is
 * text: no message may echo one. */
static const char *line_control(const char *s, bool crlf)
{
    for (;;) {
        s += fb_escape_control_at(s);
        if (!*s || (*s == '\n' && !s[1]) || (crlf && s[0] == '\r' && s[1] == '\n' && !s[2]))
            return NULL;
        if (*s != '\t')
            return s;
        s++;
    }
}

static char *read_line(char *str, int num, void *stream)
{
    struct parse *ps = stream;
    char *r = NULL;

    /* a NUL byte on a line the handler was not called for (a comment, a section header) */
    if (ps->nul_line) {
        refuse(ps, "a NUL byte in the line (a profile is text)");
        ps->nul_line = 0;
    }
    if (ps->f) {
        /* fgets would hide a NUL byte ("0.1<NUL>junk" read as 0.1): read byte by byte */
        int c = EOF, n = 0;
        bool nul = false;
        while (n < num - 1 && (c = getc(ps->f)) != EOF) {
            nul |= c == '\0';
            str[n++] = c ? (char)c : ' ';
            if (c == '\n')
                break;
        }
        str[n] = '\0';
        r = n ? str : NULL;
        ps->nul_line = nul ? ps->line + 1 : 0;
    } else if (*ps->text) {
        size_t len = strcspn(ps->text, "\n");
        size_t take = len + (ps->text[len] == '\n');
        if (take > (size_t)num - 1)
            take = (size_t)num - 1;
        memcpy(str, ps->text, take);
        str[take] = '\0';
        ps->text += take;
        r = str;
    }
    if (!r)
        return NULL;
    ps->line++;
    /* A line as long as allowed, ended by CRLF: the buffer holds its CR, the LF is next. */
    bool crlf = true;
    if (!strchr(str, '\n') && strlen(str) == (size_t)num - 1 && str[num - 2] == '\r') {
        int c = ps->f ? getc(ps->f) : (unsigned char)*ps->text;
        if (c == '\n') {
            if (!ps->f)
                ps->text++;
            str[num - 2] = '\n'; /* the line as if it ended in LF */
            crlf = false;         /* its CR is gone: a CR before this LF is the line's own */
        } else if (ps->f && c != EOF)
            ungetc(c, ps->f);
    }
    if (!strchr(str, '\n') && strlen(str) == (size_t)num - 1) {
        int c;
        refuse(ps, "line longer than %d characters", num - 2);
        if (ps->f)
            while ((c = fgetc(ps->f)) != EOF && c != '\n')
                ;
        else
            ps->text += strcspn(ps->text, "\n") + (ps->text[strcspn(ps->text, "\n")] == '\n');
        str[0] = '\0'; /* an empty line to inih */
        return str;
    }
    /* A control character, refused here, before inih or any message sees the line (a NUL's
     * line too: its NUL is a space by now): "control character: \x1b after 'min_gbps = 0.1'"
     * (UTF-8's C1 shown whole) */
    const char *ctl = line_control(str, crlf);
    if (ctl) {
        char culprit[16], before[120];
        size_t n = (unsigned char)ctl[0] == 0xc2 ? 2 : 1;
        fb_escape(ctl, n, 0, culprit, sizeof culprit);
        fb_escape(str, (size_t)(ctl - str), 60, before, sizeof before);
        refuse(ps, "control character: %s after '%s'", culprit, before);
        ps->nul_line = 0; /* one error for the line */
        str[0] = '\0'; /* an empty line to inih */
        return str;
    }
    /* Bytes that are not UTF-8 (a Latin-1 editor's 0xe9, a truncated sequence): a profile's text
     * reaches the screen, summary.md and the JUnit file as it is. */
    size_t bad = fb_utf8_invalid_at(str);
    if (str[bad]) {
        char culprit[16], before[120];
        fb_escape(str + bad, 1, 0, culprit, sizeof culprit);
        fb_escape(str, bad, 60, before, sizeof before);
        refuse(ps, "not UTF-8: %s after '%s'", culprit, before);
        ps->nul_line = 0;
        str[0] = '\0';
        return str;
    }
    /* An indented line of text: inih would take it as a continuation of the key above and
     * report that key as given twice; it is neither a [section] nor a key = value of its own. */
    const char *s = str + strspn(str, " \t");
    if (s > str && *s && !strchr(";#[\r\n", *s)) {
        refuse(ps, "an indented line: not a [section] header nor 'key = value' (a key starts "
                   "its line)");
        str[0] = '\0'; /* an empty line to inih */
        return str;
    }
    /* inih splits a key from its value at ':' too; a profile's is '=' alone (docs/accept.md) */
    if (*s && !strchr(";#[\r\n", *s) && strcspn(s, ":") < strcspn(s, "=")) {
        refuse(ps, "expected 'key = value' (':' does not separate a key from its value here)");
        str[0] = '\0'; /* an empty line to inih */
        return str;
    }
    /* A section header is checked here: inih does not call the handler for an empty one. */
    if (*s == '[') {
        char name[64];
        size_t len = strcspn(s + 1, "]");
        if (s[1 + len] == ']') {
            /* a name longer than any known one is unknown too, shown cut */
            size_t keep = len < sizeof name ? len : sizeof name - 4;
            memcpy(name, s + 1, keep);
            strcpy(name + keep, len < sizeof name ? "" : "...");
            if (len >= sizeof name || !known(sections, sizeof sections / sizeof *sections, name))
                refuse(ps, "unknown section [%s] (known: profile, node, p2p, h2d, allreduce, "
                       "compute, transports, infiniband, binding, noise, expected)", name);
        }
    }
    return r;
}

static bool real(struct parse *ps, const char *key, const char *value, double *out)
{
    char why[200];
    double v = 0;

    if (fb_decimal_parse(value, strlen(value), &v, why, sizeof why) != FB_OK || v < 0) {
        refuse(ps, "%s = '%s': expected a number >= 0%s%s", key, value,
               v < 0 ? "" : ": ", v < 0 ? "" : why);
        return false;
    }
    *out = v;
    return true;
}

/* Digits only, the whole text: no sign, blank, "0x" or suffix. -1 when not, or too large. */
static long long digits(const char *s, size_t len)
{
    long long v = 0;

    if (!len)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (LLONG_MAX - (s[i] - '0')) / 10)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static bool integer(struct parse *ps, const char *key, const char *value, long long min,
                    long long max, long long *out)
{
    long long v = digits(value, strlen(value));

    if (v < 0 || v < min || v > max) {
        refuse(ps, "%s = '%s': expected a whole number from %lld to %lld", key, value, min, max);
        return false;
    }
    *out = v;
    return true;
}

/* A size ("32G", "143771M", bytes): not zero. */
static bool size_value(struct parse *ps, const char *key, const char *value, long long *out)
{
    char why[160] = "zero";
    size_t v = 0;

    if (fb_size_parse(value, &v, why, sizeof why) != FB_OK || v == 0 || v > (size_t)LLONG_MAX) {
        refuse(ps, "%s = '%s': expected a size such as 32G (%s)", key, value,
               v > (size_t)LLONG_MAX ? "too large" : why);
        return false;
    }
    *out = (long long)v;
    return true;
}

static bool word(struct parse *ps, const char *key, const char *value, const char *const *ok,
                 size_t n, char *out, size_t outlen)
{
    if (!known(ok, n, value)) {
        char list[128] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     ok[i]);
        refuse(ps, "%s = '%s': expected one of %s", key, value, list);
        return false;
    }
    snprintf(out, outlen, "%s", value);
    return true;
}

static bool text(struct parse *ps, const char *key, const char *value, char *out, size_t outlen)
{
    if (!*value || strlen(value) >= outlen) {
        refuse(ps, "%s: expected a value of 1 to %zu characters", key, outlen - 1);
        return false;
    }
    snprintf(out, outlen, "%s", value);
    return true;
}

/* busbw_gbps.<bytes>.<ranks>: both whole numbers in digits, as results.csv writes them (bytes
 * 1048576, not 1M). false when the key is not of that form. */
static bool busbw_parse(const char *key, long long *bytes, long long *ranks)
{
    const char *s = key + strlen("busbw_gbps.");
    const char *dot = strchr(s, '.');

    if (strncmp(key, "busbw_gbps.", 11) != 0 || !dot)
        return false;
    *bytes = digits(s, (size_t)(dot - s));
    *ranks = digits(dot + 1, strlen(dot + 1));
    return *bytes > 0 && *ranks >= 1 && *ranks <= 1000000;
}

static bool busbw_key(struct parse *ps, const char *key, const char *value)
{
    struct fb_profile *p = ps->p;
    long long bytes, ranks;
    double v;

    if (!busbw_parse(key, &bytes, &ranks)) {
        refuse(ps, "unknown key '%s' in [allreduce] (expected busbw_gbps.<bytes>.<ranks>, both "
               "whole numbers, e.g. busbw_gbps.27872824.4; bytes in digits, not 1M)", key);
        return false;
    }
    if (p->nbusbw == FB_PROFILE_MAX_BUSBW) {
        refuse(ps, "%s: more than %d all-reduce thresholds", key, FB_PROFILE_MAX_BUSBW);
        return false;
    }
    if (!real(ps, key, value, &v))
        return false;
    p->busbw[p->nbusbw++] = (struct fb_profile_busbw){bytes, (int)ranks, v};
    return true;
}

static bool p2p_key(struct parse *ps, const char *key, const char *value)
{
    struct fb_profile *p = ps->p;
    const char *link = key + strlen("min_gbps.");
    double v;

    if (strncmp(key, "min_gbps.", 9) != 0 || !known(links, sizeof links / sizeof *links, link)) {
        refuse(ps, "unknown key '%s' in [p2p] (expected min_gbps.<link>, link one of nvlink, "
               "pcie-switch, host-bridge, socket, cross-socket, same-gpu, network, same-node)", key);
        return false;
    }
    if (p->np2p == FB_PROFILE_MAX_P2P) {
        refuse(ps, "%s: more than %d P2P thresholds", key, FB_PROFILE_MAX_P2P);
        return false;
    }
    if (!real(ps, key, value, &v))
        return false;
    snprintf(p->p2p[p->np2p].link, sizeof p->p2p[p->np2p].link, "%s", link);
    p->p2p[p->np2p++].min_gbps = v;
    return true;
}

static bool yes_no(struct parse *ps, const char *key, const char *value, bool *out)
{
    if (strcasecmp(value, "yes") == 0 || strcasecmp(value, "true") == 0) {
        *out = true;
        return true;
    }
    if (strcasecmp(value, "no") == 0 || strcasecmp(value, "false") == 0) {
        *out = false;
        return true;
    }
    refuse(ps, "%s = '%s': expected yes or no", key, value);
    return false;
}

#define KEY(s, k) (strcmp(section, s) == 0 && strcmp(name, k) == 0)

static bool handle(struct parse *ps, const char *section, const char *name, const char *value)
{
    static const char *const intra[] = {"p2p", "shm", "any"};
    static const char *const inter[] = {"ib", "socket", "any"};
    static const char *const gdr[] = {"optional", "required", "off"};
    struct fb_profile *p = ps->p;
    long long n;

    if (KEY("profile", "name"))
        return text(ps, name, value, p->name, sizeof p->name);
    if (KEY("profile", "description"))
        return text(ps, name, value, p->description, sizeof p->description);
    if (strcmp(section, "profile") != 0)
        ps->asked = true;
    if (KEY("node", "gpus")) {
        if (!integer(ps, name, value, 0, FB_PROFILE_COUNT_MAX, &n))
            return false;
        p->gpus = (int)n;
        return true;
    }
    if (KEY("node", "gpu_model"))
        return text(ps, name, value, p->gpu_model, sizeof p->gpu_model);
    if (KEY("node", "gpu_memory"))
        return size_value(ps, name, value, &p->gpu_memory);
    if (strcmp(section, "p2p") == 0)
        return p2p_key(ps, name, value);
    if (KEY("h2d", "min_pinned_gbps_per_gpu_all"))
        return real(ps, name, value, &p->h2d_min_gbps);
    if (KEY("h2d", "bytes"))
        return integer(ps, name, value, 1, (long long)1 << 50, &p->h2d_bytes);
    /* closed sets, as `run` writes them: a typo would match no row and drop the check */
    static const char *const ar_case[] = {"out_of_place", "in_place"};
    static const char *const ar_dtype[] = {"float32", "float64", "int32", "float16"};
    static const char *const comp_case[] = {"step_ours", "step_ref", "step_convs"};
    if (KEY("allreduce", "case"))
        return word(ps, name, value, ar_case, 2, p->allreduce_case, sizeof p->allreduce_case);
    if (KEY("allreduce", "dtype"))
        return word(ps, name, value, ar_dtype, 4, p->allreduce_dtype, sizeof p->allreduce_dtype);
    if (strcmp(section, "allreduce") == 0 && strncmp(name, "busbw_gbps.", 11) == 0)
        return busbw_key(ps, name, value);
    if (KEY("compute", "min_tflops"))
        return real(ps, name, value, &p->compute_min_tflops);
    if (KEY("compute", "case"))
        return word(ps, name, value, comp_case, 3, p->compute_case, sizeof p->compute_case);
    if (KEY("transports", "intra"))
        return word(ps, name, value, intra, 3, p->intra, sizeof p->intra);
    if (KEY("transports", "inter"))
        return word(ps, name, value, inter, 3, p->inter, sizeof p->inter);
    if (KEY("transports", "gdrdma")) {
        char w[16];
        if (!word(ps, name, value, gdr, 3, w, sizeof w))
            return false;
        p->gdrdma = strcmp(w, "optional") == 0   ? FB_GDR_OPTIONAL
                    : strcmp(w, "required") == 0 ? FB_GDR_REQUIRED
                                                 : FB_GDR_OFF;
        return true;
    }
    if (KEY("infiniband", "ports")) {
        if (!integer(ps, name, value, 0, FB_PROFILE_COUNT_MAX, &n))
            return false;
        p->ib_ports = (int)n;
        return true;
    }
    if (KEY("infiniband", "rate_gbps"))
        return real(ps, name, value, &p->ib_rate_gbps);
    if (KEY("binding", "required"))
        return yes_no(ps, name, value, &p->binding_required);
    if (KEY("noise", "max_spread_pct"))
        return real(ps, name, value, &p->max_spread_pct);
    if (KEY("noise", "max_cpu_wait_pct")) {
        if (!real(ps, name, value, &p->max_cpu_wait_pct))
            return false;
        if (p->max_cpu_wait_pct > 100) {
            refuse(ps, "%s = '%s': a percentage of a point's time, 0 to 100", name, value);
            return false;
        }
        return true;
    }
    if (KEY("expected", "min_share")) {
        if (!real(ps, name, value, &p->expected_min_share))
            return false;
        if (p->expected_min_share > 1) {
            refuse(ps, "%s = '%s': a share of the expected figure, 0 (not judged) to 1", name,
                   value);
            return false;
        }
        return true;
    }
    if (KEY("noise", "min_samples")) {
        if (!integer(ps, name, value, 1, 1000000, &n))
            return false;
        p->min_samples = (int)n;
        return true;
    }
    if (!*section)
        refuse(ps, "'%s' before any [section]", name);
    else if (known(sections, sizeof sections / sizeof *sections, section))
        refuse(ps, "unknown key '%s' in [%s] (docs/accept.md lists the keys)", name, section);
    /* else: the reader already named the unknown section */
    return false;
}

/* The key the duplicate rule compares: "section.key", with the numbers of a busbw key
 * normalised, so busbw_gbps.1048576.2 and busbw_gbps.1048576.02 are one key. */
static void normal_key(const char *section, const char *name, char *out, size_t len)
{
    long long bytes, ranks;

    if (strcmp(section, "allreduce") == 0 && busbw_parse(name, &bytes, &ranks))
        snprintf(out, len, "%s.busbw_gbps.%lld.%lld", section, bytes, ranks);
    else
        snprintf(out, len, "%s.%s", section, name);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct parse *ps = user;
    char full[80];

    if (ps->nul_line == ps->line) {
        refuse(ps, "%s: a NUL byte in its line (a profile is text)", name);
        return 0;
    }
    normal_key(section, name, full, sizeof full);
    for (size_t i = 0; i < ps->nseen; i++) {
        const struct seen *e = &ps->seen[i];
        if (strcmp(e->key, full) != 0)
            continue;
        if (strcmp(e->given, name) == 0)
            refuse(ps, "'%s' given twice in [%s] (duplicate key: first at line %zu)", name,
                   section, e->line);
        else
            refuse(ps, "'%s' given twice in [%s] (duplicate key: the same as '%s' at line %zu)",
                   name, section, e->given, e->line);
        return 0;
    }
    if (ps->nseen < MAX_SEEN) {
        struct seen *e = &ps->seen[ps->nseen++];
        snprintf(e->key, sizeof e->key, "%s", full);
        snprintf(e->given, sizeof e->given, "%s", name);
        e->line = ps->line;
    }
    return handle(ps, section, name, value) ? 1 : 0;
}

void fb_profile_init(struct fb_profile *p)
{
    memset(p, 0, sizeof *p);
    p->gpus = -1;
    p->gpu_memory = -1;
    p->h2d_min_gbps = -1;
    p->h2d_bytes = -1;
    snprintf(p->allreduce_case, sizeof p->allreduce_case, "out_of_place");
    snprintf(p->allreduce_dtype, sizeof p->allreduce_dtype, "float32");
    p->compute_min_tflops = -1;
    snprintf(p->compute_case, sizeof p->compute_case, "step_ours");
    p->gdrdma = FB_GDR_UNSET;
    p->ib_ports = -1;
    p->ib_rate_gbps = -1;
    p->max_spread_pct = -1;
    p->max_cpu_wait_pct = -1;
    p->min_samples = 3;
    p->expected_min_share = FB_EXPECTED_MIN_SHARE;
}

static fb_status parse(struct parse *ps, struct fb_profile *p, char *err, size_t errlen)
{
    int line = ini_parse_stream(read_line, ps, handler, ps);

    if (line < 0) {
        snprintf(err, errlen, "%s: out of memory while reading", ps->name);
        return FB_ERR_NOMEM;
    }
    /* inih returns the first line it or the handler refused; our reader may have refused an
     * earlier one (a section header). */
    if (ps->err_line && (line == 0 || ps->err_line <= (size_t)line)) {
        snprintf(err, errlen, "%s:%zu: %s", ps->name, ps->err_line, ps->err);
        return FB_ERR_USAGE;
    }
    if (line > 0) {
        snprintf(err, errlen, "%s:%d: not a [section] header nor 'key = value'", ps->name, line);
        return FB_ERR_USAGE;
    }
    if (!ps->asked) {
        snprintf(err, errlen, "%s: the profile asks for no check (docs/accept.md lists them)",
                 ps->name);
        return FB_ERR_USAGE;
    }
    if (!p->name[0]) {
        /* The base name without .ini stands for a profile that did not name itself. */
        const char *base = strrchr(ps->name, '/');
        base = base ? base + 1 : ps->name;
        snprintf(p->name, sizeof p->name, "%.*s", (int)strcspn(base, "."), base);
    }
    return FB_OK;
}

fb_status fb_profile_parse(const char *text, const char *name, struct fb_profile *p, char *err,
                           size_t errlen)
{
    struct parse *ps = calloc(1, sizeof *ps);
    fb_status st;

    fb_profile_init(p);
    if (!ps) {
        snprintf(err, errlen, "out of memory");
        return FB_ERR_NOMEM;
    }
    ps->p = p;
    ps->text = text + fb_file_bom(text, strlen(text)); /* as fb_profile_load skips it */
    ps->name = name;
    snprintf(p->path, sizeof p->path, "%s", name);
    st = parse(ps, p, err, errlen);
    free(ps);
    return st;
}

fb_status fb_profile_load(const char *path, struct fb_profile *p, char *err, size_t errlen)
{
    struct parse *ps = NULL;
    struct stat sb;
    FILE *f = NULL;
    char *text = NULL;
    size_t len, bom;
    fb_status st;

    fb_profile_init(p);
    snprintf(p->path, sizeof p->path, "%s", path);
    /* a folder is not a profile (it used to read as one that "asks for no check") */
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "not a profile file: '%s' is a directory", path);
        return FB_ERR_USAGE;
    }
    /* a regular file of at most 1 MiB (file_read.h): a FIFO or a device never blocks it */
    st = fb_file_read(path, FB_FILE_PROFILE, false, &text, &len, err, errlen);
    if (st == FB_ERR_IO && strncmp(err, "cannot open ", 12) == 0) {
        char why[700];
        snprintf(why, sizeof why, "%s", err + 12);
        snprintf(err, errlen, "cannot open profile %s", why);
    }
    if (st != FB_OK)
        return st;
    /* read byte by byte, as from a file, so that a NUL byte inside a line is seen */
    bom = fb_file_bom(text, len); /* a byte-order mark: skipped */
    if (len > bom && !(f = fmemopen(text + bom, len - bom, "r"))) {
        snprintf(err, errlen, "out of memory");
        st = FB_ERR_NOMEM;
        goto out;
    }
    if (!(ps = calloc(1, sizeof *ps))) {
        snprintf(err, errlen, "out of memory");
        st = FB_ERR_NOMEM;
        goto out;
    }
    ps->p = p;
    ps->f = f;
    ps->text = f ? NULL : "";
    ps->name = path;
    st = parse(ps, p, err, errlen);
out:
    free(ps);
    if (f)
        fclose(f);
    free(text);
    return st;
}
