/* Reads a hardware profile with inih. inih splits the lines; this file decides what each
 * section and key means, and refuses (with file:line) whatever it does not know, so a typo in a
 * profile can never quietly drop a check. */
#define _GNU_SOURCE
#include "profile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "file_read.h"

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
    char err[512];
    char seen[MAX_SEEN][80]; /* "section.key" already given */
    size_t nseen;
    bool asked;         /* some check was asked for */
};

static const char *const sections[] = {"profile", "node",    "p2p",        "h2d",     "allreduce",
                                       "compute", "transports", "infiniband", "binding", "noise"};
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

static char *read_line(char *str, int num, void *stream)
{
    struct parse *ps = stream;
    char *r = NULL;

    if (ps->f) {
        r = fgets(str, num, ps->f);
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
    /* inih would take the rest of an overlong line for a line of its own. */
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
    /* A section header is checked here: inih does not call the handler for an empty one. */
    const char *s = str + strspn(str, " \t");
    if (*s == '[') {
        char name[64];
        size_t len = strcspn(s + 1, "]");
        if (s[1 + len] == ']' && len < sizeof name) {
            memcpy(name, s + 1, len);
            name[len] = '\0';
            if (!known(sections, sizeof sections / sizeof *sections, name))
                refuse(ps, "unknown section [%s] (known: profile, node, p2p, h2d, allreduce, "
                       "compute, transports, infiniband, binding, noise)", name);
        }
    }
    return r;
}

static bool real(struct parse *ps, const char *key, const char *value, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(value, &end);
    if (end == value || *end || errno || !isfinite(v) || v < 0) {
        refuse(ps, "%s = '%s': expected a number >= 0", key, value);
        return false;
    }
    *out = v;
    return true;
}

static bool integer(struct parse *ps, const char *key, const char *value, long long min,
                    long long max, long long *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(value, &end, 10);
    if (end == value || *end || errno || v < min || v > max) {
        refuse(ps, "%s = '%s': expected a whole number from %lld to %lld", key, value, min, max);
        return false;
    }
    *out = v;
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

/* busbw_gbps.<bytes>.<ranks> */
static bool busbw_key(struct parse *ps, const char *key, const char *value)
{
    struct fb_profile *p = ps->p;
    long long bytes, ranks;
    char *end;
    const char *s = key + strlen("busbw_gbps.");
    double v;

    errno = 0;
    bytes = strtoll(s, &end, 10);
    if (end == s || *end != '.' || errno || bytes <= 0)
        goto bad;
    s = end + 1;
    ranks = strtoll(s, &end, 10);
    if (end == s || *end || errno || ranks < 1 || ranks > 1000000)
        goto bad;
    if (p->nbusbw == FB_PROFILE_MAX_BUSBW) {
        refuse(ps, "%s: more than %d all-reduce thresholds", key, FB_PROFILE_MAX_BUSBW);
        return false;
    }
    if (!real(ps, key, value, &v))
        return false;
    p->busbw[p->nbusbw++] = (struct fb_profile_busbw){bytes, (int)ranks, v};
    return true;
bad:
    refuse(ps, "unknown key '%s' in [allreduce] (expected busbw_gbps.<bytes>.<ranks>, e.g. "
           "busbw_gbps.27872824.4)", key);
    return false;
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
        if (!integer(ps, name, value, 0, 1024, &n))
            return false;
        p->gpus = (int)n;
        return true;
    }
    if (KEY("node", "gpu_model"))
        return text(ps, name, value, p->gpu_model, sizeof p->gpu_model);
    if (strcmp(section, "p2p") == 0)
        return p2p_key(ps, name, value);
    if (KEY("h2d", "min_pinned_gbps_per_gpu_all"))
        return real(ps, name, value, &p->h2d_min_gbps);
    if (KEY("h2d", "bytes"))
        return integer(ps, name, value, 1, (long long)1 << 50, &p->h2d_bytes);
    if (KEY("allreduce", "case"))
        return text(ps, name, value, p->allreduce_case, sizeof p->allreduce_case);
    if (KEY("allreduce", "dtype"))
        return text(ps, name, value, p->allreduce_dtype, sizeof p->allreduce_dtype);
    if (strcmp(section, "allreduce") == 0 && strncmp(name, "busbw_gbps.", 11) == 0)
        return busbw_key(ps, name, value);
    if (KEY("compute", "min_tflops"))
        return real(ps, name, value, &p->compute_min_tflops);
    if (KEY("compute", "case"))
        return text(ps, name, value, p->compute_case, sizeof p->compute_case);
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
        if (!integer(ps, name, value, 0, 64, &n))
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

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct parse *ps = user;
    char full[80];

    snprintf(full, sizeof full, "%s.%s", section, name);
    for (size_t i = 0; i < ps->nseen; i++)
        if (strcmp(ps->seen[i], full) == 0) {
            refuse(ps, "'%s' given twice in [%s]", name, section);
            return 0;
        }
    if (ps->nseen < MAX_SEEN)
        snprintf(ps->seen[ps->nseen++], sizeof ps->seen[0], "%s", full);
    return handle(ps, section, name, value) ? 1 : 0;
}

void fb_profile_init(struct fb_profile *p)
{
    memset(p, 0, sizeof *p);
    p->gpus = -1;
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
    p->min_samples = 3;
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
    ps->text = text;
    ps->name = name;
    snprintf(p->path, sizeof p->path, "%s", name);
    st = parse(ps, p, err, errlen);
    free(ps);
    return st;
}

fb_status fb_profile_load(const char *path, struct fb_profile *p, char *err, size_t errlen)
{
    struct parse *ps = NULL;
    char *text = NULL;
    size_t len;
    fb_status st;

    fb_profile_init(p);
    snprintf(p->path, sizeof p->path, "%s", path);
    /* a regular file of at most 1 MiB (file_read.h): a FIFO or a device never blocks it */
    st = fb_file_read(path, FB_FILE_PROFILE, false, &text, &len, err, errlen);
    if (st == FB_ERR_IO && strncmp(err, "cannot open ", 12) == 0) {
        char why[700];
        snprintf(why, sizeof why, "%s", err + 12);
        snprintf(err, errlen, "cannot open profile %s", why);
    }
    if (st != FB_OK)
        return st;
    if (!(ps = calloc(1, sizeof *ps))) {
        snprintf(err, errlen, "out of memory");
        st = FB_ERR_NOMEM;
        goto out;
    }
    ps->p = p;
    ps->text = text;
    ps->name = path;
    st = parse(ps, p, err, errlen);
out:
    free(ps);
    free(text);
    return st;
}
