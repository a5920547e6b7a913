/* Reading NCCL's logs into one report: every line classified (nccl_line.c), the connections
 * of all ranks gathered and merged (both ends of a network connection log it), NICs and
 * environment settings collected once each. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nccl_report.h"

#include "escape.h"
#include "file_read.h"

void fb_nccl_report_release(struct fb_nccl_report *r)
{
    if (!r)
        return;
    free(r->conns);
    memset(r, 0, sizeof *r);
}

/* Adds item to a comma-separated list unless it is there; "..." ends a list that is full. */
static void list_add(char *list, size_t size, const char *item)
{
    size_t used = strlen(list), n = strlen(item);
    const char *p = list;

    if (!n)
        return;
    for (; (p = strstr(p, item)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return;
    if (used >= 3 && strcmp(list + used - 3, "...") == 0)
        return;
    if (used + n + 2 + 4 > size) {
        if (used + 4 < size)
            strcat(list, used ? ",..." : "...");
        return;
    }
    if (used)
        strcat(list, ",");
    strcat(list, item);
}

static fb_status conn_add(struct fb_nccl_report *r, size_t *cap, const struct fb_nccl_conn *c)
{
    if (r->nconns == *cap) {
        size_t ncap = *cap ? *cap * 2 : 256;
        struct fb_nccl_conn *grown = realloc(r->conns, ncap * sizeof *grown);
        if (!grown)
            return FB_ERR_NOMEM;
        r->conns = grown;
        *cap = ncap;
    }
    r->conns[r->nconns++] = *c;
    return FB_OK;
}

/* P2P, SHM and the network are the families a connection is merged within. */
static int family(enum fb_nccl_path p)
{
    return p == FB_NCCL_P2P ? 0 : p == FB_NCCL_SHM ? 1 : 2;
}

static int conn_cmp(const void *a, const void *b)
{
    const struct fb_nccl_conn *x = a, *y = b;

    if (x->channel != y->channel)
        return x->channel < y->channel ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return family(x->path) - family(y->path);
}

/* Within a family, how far a path is from the best: GPUDirect RDMA, IB, another plugin,
 * sockets. */
static int badness(enum fb_nccl_path p)
{
    return p == FB_NCCL_SOCKET ? 3 : p == FB_NCCL_NET_OTHER ? 2 : p == FB_NCCL_IB ? 1 : 0;
}

/* One entry per connection: the sender's and receiver's lines of a network connection are
 * one, and so are a channel's connection indices. Lines that disagree keep the worse path:
 * when one end lacks GPUDirect RDMA the data passes through host memory, and when logs of
 * several communicators (or jobs) are read together a misconfigured one must not be hidden. */
static void conns_merge(struct fb_nccl_report *r)
{
    size_t out = 0;

    if (r->nconns)
        qsort(r->conns, r->nconns, sizeof *r->conns, conn_cmp);
    for (size_t i = 0; i < r->nconns; i++) {
        struct fb_nccl_conn *c = &r->conns[i];
        if (out && conn_cmp(&r->conns[out - 1], c) == 0) {
            if (badness(c->path) > badness(r->conns[out - 1].path))
                r->conns[out - 1] = *c;
            continue;
        }
        r->conns[out++] = *c;
    }
    r->nconns = out;
    for (size_t i = 0; i < r->nconns; i++)
        (r->conns[i].inter ? r->inter : r->intra)[r->conns[i].path]++;
}

static void take_version(struct fb_nccl_report *r, const char *v)
{
    if (!r->version[0])
        snprintf(r->version, sizeof r->version, "%s", v);
    else if (strcmp(r->version, v) != 0 && !r->version_other[0])
        snprintf(r->version_other, sizeof r->version_other, "%s", v);
}

/* A network event (a port error, a failed device, its failover or recovery): counted, its
 * device listed, and the first fault kept as NCCL wrote it. */
static void take_event(struct fb_nccl_report *r, const struct fb_nccl_line *l)
{
    bool fault = fb_nccl_event_fault(l->event);

    if (l->event == FB_NCCL_EV_NONE || (unsigned)l->event >= FB_NCCL_EVENTS)
        return;
    r->events[l->event]++;
    list_add(r->event_nics[l->event], sizeof r->event_nics[l->event], l->nic);
    if (fault && !r->first_fault[0])
        snprintf(r->first_fault, sizeof r->first_fault, "%s%s%s%.160s", l->when[0] ? "[" : "",
                 l->when, l->when[0] ? "] " : "", l->text);
}

/* Applies one classified line to the report; FB_ERR_USAGE with "path:lineno: why" on a
 * malformed line. */
static fb_status take_line(struct fb_nccl_report *r, size_t *cap, const struct fb_nccl_line *l,
                           const char *path, size_t lineno, char *err, size_t errlen)
{
    char nic[64];

    if (l->kind != FB_NCCL_LINE_OTHER)
        r->nccl_lines++;
    switch (l->kind) {
    case FB_NCCL_LINE_BAD: {
        char shown[600], why[400];
        snprintf(err, errlen, "%s:%zu: %s", fb_escape_str(path, 0, shown, sizeof shown), lineno,
                 fb_escape_str(l->text, 0, why, sizeof why));
        return FB_ERR_USAGE;
    }
    case FB_NCCL_LINE_CONN:
        return conn_add(r, cap, &l->conn);
    case FB_NCCL_LINE_VERSION: take_version(r, l->version); break;
    case FB_NCCL_LINE_NET_IB:
        r->ib_available = r->ib_available || l->text[0];
        /* fall through - both lists name the NICs */
    case FB_NCCL_LINE_NET_SOCKET:
        for (const char *p = l->text; *p;) {
            size_t n = strcspn(p, " ");
            snprintf(nic, sizeof nic, "%.*s", (int)n, p);
            list_add(r->nics, sizeof r->nics, nic);
            p += n + (p[n] == ' ');
        }
        break;
    case FB_NCCL_LINE_NET_IB_NONE: r->ib_missing = true; break;
    case FB_NCCL_LINE_NETWORK:
        snprintf(r->network, sizeof r->network, "%.31s", l->text);
        /* the IB network (NCCL's or a plugin's) is used only when it found devices */
        if (strncmp(l->text, "IB", 2) == 0)
            r->ib_available = true;
        break;
    case FB_NCCL_LINE_ENV: list_add(r->env, sizeof r->env, l->text); break;
    case FB_NCCL_LINE_DMABUF: list_add(r->dmabuf, sizeof r->dmabuf, l->text); break;
    case FB_NCCL_LINE_WARN:
        r->warns++;
        /* fall through - a WARN may report a network event */
    case FB_NCCL_LINE_NET_EVENT: take_event(r, l); break;
    default: break;
    }
    return FB_OK;
}

/* What is done with each classified line of a log: FB_OK to go on. */
typedef fb_status (*line_fn)(void *arg, const struct fb_nccl_line *l, const char *path,
                             size_t lineno, char *err, size_t errlen);

/* One log, read whole through file_read.h (a regular file, at most FB_FILE_NCCL_LOG's cap, no
 * line over FB_FILE_LINE_MAX), each line classified and given to fn: a failed allocation is an
 * error, never the end of the log. With `optional`, a missing file is no line (FB_OK). */
static fb_status each_line(const char *path, bool optional, line_fn fn, void *arg,
                           size_t *lines, char *err, size_t errlen)
{
    char *text = NULL, shown[600];
    size_t len = 0, lineno = 0, start = 0;
    fb_status st;
    struct fb_nccl_line l;

    st = fb_file_read(path, FB_FILE_NCCL_LOG, optional, &text, &len, err, errlen);
    if (st != FB_OK || !text)
        return st;
    fb_escape_str(path, 0, shown, sizeof shown);
    start = fb_file_bom(text, len); /* a byte-order mark: skipped */
    while (start < len) {
        char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;

        lineno++;
        (*lines)++;
        text[end] = '\0'; /* the line without its line end (the classifier trims it anyway) */
        if (strlen(text + start) != end - start) {
            snprintf(err, errlen, "%s:%zu: a NUL byte: not a text log", shown, lineno);
            st = FB_ERR_USAGE;
            goto out;
        }
        fb_nccl_classify_line(text + start, &l);
        if (!nl && l.kind == FB_NCCL_LINE_CONN) {
            /* NCCL ends every line: a last one without its end was cut while being written (a
             * killed job), maybe inside its transport ("NET/IB/0/GDRD" would read as IB) */
            l.kind = FB_NCCL_LINE_BAD;
            snprintf(l.text, sizeof l.text, "a transport line cut short (the log's last line, "
                     "with no line end)");
        }
        if ((st = fn(arg, &l, path, lineno, err, errlen)) != FB_OK) {
            if (st == FB_ERR_NOMEM)
                snprintf(err, errlen, "%s: out of memory reading it", shown);
            goto out;
        }
        start = end + 1;
    }
out:
    free(text);
    return st;
}

struct report_arg {
    struct fb_nccl_report *r;
    size_t *cap;
};

static fb_status report_line(void *arg, const struct fb_nccl_line *l, const char *path,
                             size_t lineno, char *err, size_t errlen)
{
    struct report_arg *a = arg;
    return take_line(a->r, a->cap, l, path, lineno, err, errlen);
}

static fb_status read_file(struct fb_nccl_report *r, size_t *cap, const char *path, char *err,
                           size_t errlen)
{
    struct report_arg a = {r, cap};
    return each_line(path, false, report_line, &a, &r->lines, err, errlen);
}

fb_status fb_nccl_count_events_from(const char *path, long long *offset,
                                    size_t events[FB_NCCL_EVENTS], char *err, size_t errlen)
{
    char shown[600], *line = malloc(FB_FILE_LINE_MAX + 2);
    struct fb_nccl_line l;
    struct stat sb;
    FILE *f;
    fb_status st = FB_OK;

    err[0] = '\0';
    fb_escape_str(path, 0, shown, sizeof shown);
    if (!line) {
        snprintf(err, errlen, "%s: out of memory reading it", shown);
        return FB_ERR_NOMEM;
    }
    if (!(f = fopen(path, "r"))) {
        free(line);
        if (errno == ENOENT)
            return FB_OK;
        snprintf(err, errlen, "%s: %s", shown, strerror(errno));
        return FB_ERR_IO;
    }
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", shown);
        st = FB_ERR_IO;
        goto out;
    }
    if ((long long)sb.st_size < *offset)
        *offset = 0;
    if (fseeko(f, (off_t)*offset, SEEK_SET) != 0) {
        snprintf(err, errlen, "%s: %s", shown, strerror(errno));
        st = FB_ERR_IO;
        goto out;
    }
    /* line by line into a fixed buffer: a longer line is classified by its start and the rest
     * skipped to its line end; a last line without one is left for the next call */
    while (fgets(line, FB_FILE_LINE_MAX + 2, f)) {
        bool whole = strchr(line, '\n') != NULL;
        int c = 0;

        while (!whole && (c = getc(f)) != EOF && c != '\n')
            ;
        if (!whole && c != '\n')
            break; /* the file ends inside this line */
        fb_nccl_classify_line(line, &l);
        if ((l.kind == FB_NCCL_LINE_WARN || l.kind == FB_NCCL_LINE_NET_EVENT) &&
            l.event != FB_NCCL_EV_NONE && (unsigned)l.event < FB_NCCL_EVENTS)
            events[l.event]++;
        *offset = (long long)ftello(f);
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", shown);
        st = FB_ERR_IO;
    }
out:
    fclose(f);
    free(line);
    return st;
}

fb_status fb_nccl_report_files(const char *const *paths, size_t n, struct fb_nccl_report *r,
                               char *err, size_t errlen)
{
    size_t cap = 0;
    fb_status st = FB_OK;

    memset(r, 0, sizeof *r);
    err[0] = '\0';
    for (size_t i = 0; i < n && st == FB_OK; i++)
        st = read_file(r, &cap, paths[i], err, errlen);
    if (st != FB_OK) {
        fb_nccl_report_release(r);
        return st;
    }
    conns_merge(r);
    return FB_OK;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_rank_log(const char *name)
{
    size_t n = strlen(name);

    return strncmp(name, "nccl-rank", 9) == 0 && n > 13 && strcmp(name + n - 4, ".log") == 0;
}

fb_status fb_nccl_report_dir(const char *run_dir, struct fb_nccl_report *r, char *err,
                             size_t errlen)
{
    DIR *d = opendir(run_dir);
    struct dirent *e;
    char **paths = NULL;
    size_t n = 0, cap = 0;
    fb_status st = FB_OK;
    bool listed = false;

    memset(r, 0, sizeof *r);
    if (!d) {
        snprintf(err, errlen, "cannot read folder '%s': %s", run_dir, strerror(errno));
        return FB_ERR_IO;
    }
    while ((e = readdir(d))) {
        if (!is_rank_log(e->d_name))
            continue;
        if (n == cap) {
            char **grown = realloc(paths, (cap = cap ? cap * 2 : 16) * sizeof *paths);
            if (!grown) {
                st = FB_ERR_NOMEM;
                goto out;
            }
            paths = grown;
        }
        if (!(paths[n] = malloc(strlen(run_dir) + strlen(e->d_name) + 2))) {
            st = FB_ERR_NOMEM;
            goto out;
        }
        sprintf(paths[n++], "%s/%s", run_dir, e->d_name);
    }
    if (!n) {
        snprintf(err, errlen, "no nccl-rank*.log in '%s'", run_dir);
        st = FB_ERR_UNSUPPORTED;
        goto out;
    }
    /* a fixed order, so the same folder always names the same first bad file */
    qsort(paths, n, sizeof *paths, str_cmp);
    /* its own message: out of memory reading a log is not out of memory listing the folder */
    st = fb_nccl_report_files((const char *const *)paths, n, r, err, errlen);
    listed = true;
out:
    if (st == FB_ERR_NOMEM && !listed)
        snprintf(err, errlen, "out of memory listing '%s'", run_dir);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    closedir(d);
    return st;
}

fb_status fb_nccl_report_path(const char *path, struct fb_nccl_report *r, char *err,
                              size_t errlen)
{
    struct stat sb;

    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return fb_nccl_report_dir(path, r, err, errlen);
    return fb_nccl_report_files(&path, 1, r, err, errlen);
}

static size_t counts_add(char *buf, size_t len, size_t used, const char *where,
                         const size_t *counts)
{
    bool any = false;

    for (int p = 0; p < FB_NCCL_PATHS && used < len; p++) {
        if (!counts[p])
            continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s %zu", any ? ", " : where,
                                 fb_nccl_path_str((enum fb_nccl_path)p), counts[p]);
        any = true;
    }
    return used;
}

void fb_nccl_report_summary(const struct fb_nccl_report *r, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "NCCL %s; %zu connections",
                                   r->version[0] ? r->version : "(version not stated)",
                                   r->nconns);

    used = counts_add(buf, len, used, "; intra-node ", r->intra);
    used = counts_add(buf, len, used, "; inter-node ", r->inter);
    if (used < len && r->nics[0])
        snprintf(buf + used, len - used, "; NICs %s", r->nics);
}
