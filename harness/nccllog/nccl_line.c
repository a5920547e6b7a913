/* The classifier of one NCCL_DEBUG=INFO line: which of NCCL's messages it is, for a transport
 * line which ranks, channel and transport, and for a line on a network fault (an InfiniBand
 * port error, 2.29's failover, 2.30's recovery) what happened to which device. The formats are
 * those of NCCL 2.3 to 2.30 (see docs/nccl-log.md); the message is found after "NCCL INFO" or
 * "NCCL WARN", so any prefix a launcher or NCCL itself puts before it (2.26's timestamp too) is
 * skipped without having to be known. */
#define _POSIX_C_SOURCE 200809L
#include "nccl_line.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

const char *fb_nccl_path_str(enum fb_nccl_path p)
{
    static const char *const names[FB_NCCL_PATHS] = {"P2P",    "SHM", "IB",     "IB+GDR",
                                                     "Socket", "net", "unknown"};
    return (unsigned)p < FB_NCCL_PATHS ? names[p] : "unknown";
}

const char *fb_nccl_event_str(enum fb_nccl_event e)
{
    static const char *const names[FB_NCCL_EVENTS] = {
        "",          "port error",      "fatal event", "device failed", "failover",
        "recovered", "recovery failed", "port active", "speed change"};
    return (unsigned)e < FB_NCCL_EVENTS ? names[e] : "";
}

bool fb_nccl_event_fault(enum fb_nccl_event e)
{
    return e == FB_NCCL_EV_PORT_ERROR || e == FB_NCCL_EV_FATAL || e == FB_NCCL_EV_DEV_FAILED;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *skip_spaces(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Copies s[0..n) into dst, cut to fit. */
static void copy_n(char *dst, size_t size, const char *s, size_t n)
{
    if (n >= size)
        n = size - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Length of s without its end of line and trailing blanks. */
static size_t trimmed_len(const char *s)
{
    size_t n = strlen(s);

    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n;
}

/* "NCCL version 2.18.3+cuda12.2" anywhere a word may start: NCCL up to 2.5 printf'd it to
 * stdout without its INFO prefix, so a launcher's prefix may sit right before it. */
static bool read_version(const char *line, char *version, size_t size)
{
    const char *key = "NCCL version ";

    for (const char *p = strstr(line, key); p; p = strstr(p + 1, key)) {
        const char *v = p + strlen(key);
        size_t n = 0;
        if (p != line && !strchr(" :]>", p[-1]))
            continue;
        while (isdigit((unsigned char)v[n]) || v[n] == '.')
            n++;
        if (n && isdigit((unsigned char)v[0])) {
            copy_n(version, size, v, n);
            return true;
        }
    }
    return false;
}

/* "12[3d000]" or "12": a rank, then NCCL's device or bus id in brackets (not kept). */
static const char *read_rank(const char *s, int *rank)
{
    char *end;
    long v;

    s = skip_spaces(s);
    if (!isdigit((unsigned char)*s))
        return NULL;
    v = strtol(s, &end, 10);
    if (v > 1 << 24)
        return NULL;
    *rank = (int)v;
    if (*end == '[') {
        const char *close = strchr(end, ']');
        if (!close)
            return NULL;
        end = (char *)close + 1;
    }
    return end;
}

/* The transport after "via ": its path, and whether it crosses nodes. Returns false with why
 * when it is none of NCCL's families, so that a damaged line is not silently miscounted. */
static bool read_transport(const char *t, size_t n, struct fb_nccl_conn *c, char *why,
                           size_t whylen)
{
    copy_n(c->transport, sizeof c->transport, t, n);
    if (n > 4 && starts(t, "P2P/")) {
        c->path = FB_NCCL_P2P;
        /* multi-node NVLink: peer access, but to a GPU in another node */
        c->inter = starts(t + 4, "MNNVL");
        return true;
    }
    if ((n > 4 && starts(t, "SHM/")) || starts(t, "direct shared memory")) {
        c->path = FB_NCCL_SHM;
        return true;
    }
    if (n > 4 && starts(t, "NET/")) {
        const char *name = t + 4, *slash = memchr(name, '/', n - 4);
        size_t namelen = slash ? (size_t)(slash - name) : 0;
        /* NET/<network>/<NIC index>[(<proxy rank>)][/GDRDMA][(PCI)][/Shared] */
        if (!slash || namelen == 0 || !isdigit((unsigned char)slash[1])) {
            snprintf(why, whylen, "network transport '%.*s' lacks its NIC index", (int)n, t);
            return false;
        }
        c->inter = true;
        if (namelen >= 2 && starts(name, "IB"))
            c->path = strstr(c->transport, "/GDRDMA") ? FB_NCCL_IB_GDR : FB_NCCL_IB;
        else if (namelen == 6 && starts(name, "Socket"))
            c->path = FB_NCCL_SOCKET;
        else
            c->path = FB_NCCL_NET_OTHER;
        return true;
    }
    snprintf(why, whylen, "unknown transport '%.*s'", (int)(n > 40 ? 40 : n), t);
    return false;
}

/* "Ring|Channel NN[/c] : A[..] -> B[..] [send|receive] via TRANSPORT". Returns false for the
 * other Ring/Channel lines (ring lists, ring graphs), which have no "via". */
static bool classify_conn(const char *msg, struct fb_nccl_line *out)
{
    const char *p = msg, *via;
    struct fb_nccl_conn *c = &out->conn;
    char *end;

    p += starts(p, "Ring ") ? 5 : 8;
    via = strstr(p, " via ");
    if (!via) {
        /* "Channel 00/0 : 0[0] -> 1[1] vi": a transport line cut short (the last line of a
         * killed job) is refused like any other it cannot read; ring lists and graphs
         * ("Ring 02 : 2 -> 0 -> 1") have no '[' after their first rank */
        const char *q = p;
        while (isdigit((unsigned char)*q) || *q == '/')
            q++;
        q = skip_spaces(q);
        if (q == p || *q != ':')
            return false;
        q = skip_spaces(q + 1);
        if (!isdigit((unsigned char)*q))
            return false;
        while (isdigit((unsigned char)*q))
            q++;
        /* NCCL 2.3-2.4's network lines name no device: "Ring 00 : 3 -> 0 [receive] vi" */
        if (*q != '[' && !strstr(q, "[send]") && !strstr(q, "[receive]"))
            return false;
        out->kind = FB_NCCL_LINE_BAD;
        snprintf(out->text, sizeof out->text, "a transport line cut short (no 'via TRANSPORT' "
                 "after its ranks)");
        return true;
    }
    out->kind = FB_NCCL_LINE_BAD;
    c->channel = (int)strtol(p, &end, 10);
    if (end == p || c->channel < 0) {
        snprintf(out->text, sizeof out->text, "a transport line without its channel number");
        return true;
    }
    p = end;
    if (*p == '/') /* the connection index (2.12.7 on): connections on one channel are one */
        for (p++; isdigit((unsigned char)*p); p++) {
        }
    p = skip_spaces(p);
    if (*p != ':' || !(p = read_rank(p + 1, &c->src)) || !starts(skip_spaces(p), "->") ||
        !(p = read_rank(skip_spaces(p) + 2, &c->dst)) || p > via) {
        snprintf(out->text, sizeof out->text, "a transport line whose ranks cannot be read");
        return true;
    }
    p = skip_spaces(p);
    if (starts(p, "[send]") || starts(p, "[receive]"))
        p = skip_spaces(strchr(p, ']') + 1);
    if (p != via + 1) {
        snprintf(out->text, sizeof out->text, "unexpected text before 'via' in a transport line");
        return true;
    }
    p = via + 5;
    if (!read_transport(p, trimmed_len(p), c, out->text, sizeof out->text))
        return true;
    out->kind = FB_NCCL_LINE_CONN;
    return true;
}

/* The NICs of "Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:..." or of the socket list
 * "Using [0]eth0:10.0.0.1<0> [1]ib0:...<0>", space-separated; sockets as "eth0/Socket". */
static void read_nics(const char *list, bool socket, char *text, size_t size)
{
    const char *p = list, *stop = strchr(list, ';');
    size_t used = 0;

    text[0] = '\0';
    while (*(p = skip_spaces(p)) && (!stop || p < stop)) {
        const char *name = p, *end;
        size_t n;
        if (*p == '[') {
            const char *close = strchr(p, ']');
            if (!close)
                break;
            name = close + 1;
        }
        for (end = name; *end && *end != ' ' && *end != ';' && *end != '\n' && *end != '\r'; end++) {
        }
        if (end == p)
            break; /* the end of the line */
        p = end;
        if (name == end || name[-1] != ']' || !isdigit((unsigned char)name[-2]))
            continue; /* "[RO]" (relaxed ordering) and other flags */
        n = (size_t)(end - name);
        if (socket) {
            const char *colon = memchr(name, ':', n);
            if (colon)
                n = (size_t)(colon - name);
        }
        if (used + n + 9 >= size)
            break;
        used += (size_t)snprintf(text + used, size - used, "%s%.*s%s", used ? " " : "", (int)n,
                                 name, socket ? "/Socket" : "");
    }
}

/* "NCCL_P2P_LEVEL set by environment to LOC." as "NCCL_P2P_LEVEL=LOC". */
static bool read_env(const char *msg, char *text, size_t size)
{
    const char *key = " set by environment to ", *p = strstr(msg, key), *v;
    size_t n;

    if (!starts(msg, "NCCL_") || !p)
        return false;
    v = p + strlen(key);
    n = trimmed_len(v);
    if (n && v[n - 1] == '.')
        n--;
    snprintf(text, size, "%.*s=%.*s", (int)(p - msg), msg, (int)n, v);
    return true;
}

/* The timestamp NCCL 2.26 on puts before a WARN line (NCCL_DEBUG_TIMESTAMP_FORMAT's default
 * "[%F %T] ", with subseconds when the format asks): "[2026-03-04 10:11:12] host:pid:tid ...".
 * Only that form is read, anywhere before `end`; another format is skipped like any prefix. */
static void read_when(const char *line, const char *end, char *when, size_t size)
{
    static const char shape[] = "dddd-dd-dd dd:dd:dd";

    for (const char *p = line; p < end && (p = memchr(p, '[', (size_t)(end - p))); p++) {
        const char *close;
        size_t i = 0;
        for (; shape[i] && p + 1 + i < end; i++)
            if (shape[i] == 'd' ? !isdigit((unsigned char)p[1 + i]) : p[1 + i] != shape[i])
                break;
        if (shape[i] || !(close = memchr(p + 1, ']', (size_t)(end - p - 1))))
            continue;
        copy_n(when, size, p + 1, (size_t)(close - p - 1));
        return;
    }
}

/* The device a network line names: "mlx5_0:1" from "NET/IB : mlx5_0:1 Got ..." (2.20.3 on;
 * before, none is named), "device 0" from "Device 0 marked ...", "devIndex=0". */
static void read_nic(const char *msg, char *nic, size_t size)
{
    const char *p;

    if (starts(msg, "NET/IB : ")) {
        size_t n = strcspn(msg + 9, " ");
        const char *colon = memchr(msg + 9, ':', n);
        if (colon && colon > msg + 9 && isdigit((unsigned char)colon[1])) {
            copy_n(nic, size, msg + 9, n);
            return;
        }
    }
    if ((p = strstr(msg, "Device ")) && isdigit((unsigned char)p[7]))
        snprintf(nic, size, "device %d", atoi(p + 7));
    else if ((p = strstr(msg, "devIndex=")) && isdigit((unsigned char)p[9]))
        snprintf(nic, size, "device %d", atoi(p + 9));
}

/* What an InfiniBand line of NCCL's says happened, in the wordings of each release:
 * "Got async event : port error" (up to 2.22.3), "Got async error event: port error" (2.23 to
 * 2.28.3), "Got non-fatal async event: port error(10)" (2.28.7 on), "async fatal event: ..."
 * (2.23 on), "Device N marked as failed" (2.29.7 on), "Replacing QP: ..." (its failover),
 * "Device N has been recovered" and "... will not be attempted to be recovered any more" (2.30
 * port recovery), "speed change detected" (2.30). */
static enum fb_nccl_event read_event(const char *msg, char *nic, size_t size)
{
    enum fb_nccl_event e = FB_NCCL_EV_NONE;

    if (!starts(msg, "NET/IB"))
        return e;
    if (strstr(msg, "async fatal event"))
        e = FB_NCCL_EV_FATAL;
    else if (strstr(msg, "async") && strstr(msg, "event") && strstr(msg, ": port error"))
        e = FB_NCCL_EV_PORT_ERROR;
    else if (strstr(msg, "async") && strstr(msg, "event") && strstr(msg, ": port active"))
        e = FB_NCCL_EV_PORT_ACTIVE;
    else if (strstr(msg, " marked as failed") && !strstr(msg, "already marked"))
        e = FB_NCCL_EV_DEV_FAILED;
    else if (strstr(msg, "Replacing QP:"))
        e = FB_NCCL_EV_FAILOVER;
    else if (strstr(msg, " has been recovered"))
        e = FB_NCCL_EV_RECOVERED;
    else if (strstr(msg, "will not be attempted to be recovered"))
        e = FB_NCCL_EV_RECOVERY_FAILED;
    else if (strstr(msg, "speed change detected"))
        e = FB_NCCL_EV_SPEED_CHANGE;
    if (e != FB_NCCL_EV_NONE)
        read_nic(msg, nic, size);
    return e;
}

/* A WARN line: counted, and read for a network fault. */
static enum fb_nccl_kind classify_warn(const char *line, const char *warn,
                                       struct fb_nccl_line *out)
{
    const char *msg = skip_spaces(warn + strlen("NCCL WARN "));

    out->kind = FB_NCCL_LINE_WARN;
    copy_n(out->text, sizeof out->text, msg, trimmed_len(msg));
    read_when(line, warn, out->when, sizeof out->when);
    /* the whole message: a long one's words past the 191 bytes kept in text still count */
    out->event = read_event(msg, out->nic, sizeof out->nic);
    return out->kind;
}

static enum fb_nccl_kind classify(const char *line, struct fb_nccl_line *out)
{
    const char *warn;
    const char *msg = strstr(line, "NCCL INFO ");

    memset(out, 0, sizeof *out);
    out->conn.src = out->conn.dst = out->conn.channel = -1;
    out->conn.path = FB_NCCL_UNKNOWN;
    if (!msg)
        msg = strstr(line, "NCCL TRACE ");
    if (!msg) {
        if ((warn = strstr(line, "NCCL WARN ")))
            return classify_warn(line, warn, out);
        if (read_version(line, out->version, sizeof out->version))
            out->kind = FB_NCCL_LINE_VERSION;
        else
            out->kind = FB_NCCL_LINE_OTHER;
        return out->kind;
    }
    msg = skip_spaces(strchr(msg + 5, ' '));
    out->kind = FB_NCCL_LINE_INFO;
    if (starts(msg, "NCCL version ")) {
        if (read_version(msg, out->version, sizeof out->version))
            out->kind = FB_NCCL_LINE_VERSION;
    } else if ((starts(msg, "Ring ") || starts(msg, "Channel ")) && classify_conn(msg, out)) {
        /* kind set: CONN or BAD */
    } else if (read_env(msg, out->text, sizeof out->text)) {
        out->kind = FB_NCCL_LINE_ENV;
    } else if (strstr(msg, "GPU Direct RDMA ")) {
        out->kind = FB_NCCL_LINE_GDR;
        out->gdr = strstr(msg, "Enabled") || strstr(msg, "enabled");
    } else if (starts(msg, "NET/IB : No device found")) {
        out->kind = FB_NCCL_LINE_NET_IB_NONE;
    } else if (starts(msg, "NET/IB : Using ")) {
        out->kind = FB_NCCL_LINE_NET_IB;
        read_nics(msg + 15, false, out->text, sizeof out->text);
    } else if (starts(msg, "NET/Socket : Using ")) {
        out->kind = FB_NCCL_LINE_NET_SOCKET;
        read_nics(msg + 19, true, out->text, sizeof out->text);
    } else if (starts(msg, "NET : Using interface ")) { /* up to 2.3 */
        out->kind = FB_NCCL_LINE_NET_SOCKET;
        read_nics(msg + 22, true, out->text, sizeof out->text);
    } else if (starts(msg, "NET/Socket : ") || starts(msg, "Using internal Network Socket")) {
        out->kind = FB_NCCL_LINE_NET_SOCKET;
    } else if (starts(msg, "Using network ")) {
        out->kind = FB_NCCL_LINE_NETWORK;
        copy_n(out->text, sizeof out->text, msg + 14, trimmed_len(msg + 14));
    } else if (starts(msg, "Assigned NET plugin ")) { /* 2.27.3 on: "... IB to comm" */
        const char *name = msg + 20, *to = strstr(name, " to comm");
        out->kind = FB_NCCL_LINE_NETWORK;
        copy_n(out->text, sizeof out->text, name, to ? (size_t)(to - name) : trimmed_len(name));
    } else if (starts(msg, "DMA-BUF is available on GPU device ")) {
        out->kind = FB_NCCL_LINE_DMABUF;
        copy_n(out->text, sizeof out->text, msg + 35, trimmed_len(msg + 35));
    } else if ((out->event = read_event(msg, out->nic, sizeof out->nic)) != FB_NCCL_EV_NONE) {
        out->kind = FB_NCCL_LINE_NET_EVENT;
        copy_n(out->text, sizeof out->text, msg, trimmed_len(msg));
        read_when(line, msg, out->when, sizeof out->when); /* NCCL_DEBUG_TIMESTAMP_LEVELS=ALL */
    } else if (starts(msg, "NET/Plugin") || strstr(msg, "plugin")) {
        out->kind = FB_NCCL_LINE_NET_PLUGIN;
    }
    return out->kind;
}

/* A field taken from the log, as text a terminal or a JSON file can hold: control bytes and
 * bytes outside ASCII as \xNN (escape.h), so a log line cannot set a terminal's title or write
 * invalid UTF-8 into nccl-log --json. A field of printable ASCII is left as it is. */
static void printable(char *s, size_t size)
{
    char tmp[256];

    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p >= 0x7f) {
            fb_escape_str(s, 0, tmp, size < sizeof tmp ? size : sizeof tmp);
            memcpy(s, tmp, strlen(tmp) + 1);
            return;
        }
}

enum fb_nccl_kind fb_nccl_classify_line(const char *line, struct fb_nccl_line *out)
{
    enum fb_nccl_kind kind = classify(line, out);

    printable(out->version, sizeof out->version);
    printable(out->conn.transport, sizeof out->conn.transport);
    printable(out->text, sizeof out->text);
    printable(out->nic, sizeof out->nic);
    printable(out->when, sizeof out->when);
    return kind;
}
