/* Prefixed diagnostics on stderr, report text on stdout, both mirrored into the run log. */
#include "log.h"

#include <stdarg.h>
#include <string.h>

#include "escape.h"

static int log_rank = -1;
static char log_host[64];
static FILE *log_file;
static int log_quiet;
static int log_no_report;

void fb_log_set_identity(int rank, const char *host)
{
    log_rank = rank;
    snprintf(log_host, sizeof log_host, "%s", host ? host : "?");
}

void fb_log_set_file(FILE *f) { log_file = f; }

void fb_log_set_quiet(int quiet) { log_quiet = quiet; }

/* msg into out (outlen bytes) with each control character but line feed and TAB written as
 * \xNN (escape.h's rule: C0, DEL and C1): a value the user or a file gave, quoted raw in a
 * message, cannot move a terminal's cursor, set its title or hide the line. Already escaped
 * text is left as it is. */
static void neutral(const char *msg, char *out, size_t outlen)
{
    size_t o = 0;

    while (*msg && o + 1 < outlen) {
        size_t run = fb_escape_control_at(msg);
        if (run > outlen - 1 - o)
            run = outlen - 1 - o;
        memcpy(out + o, msg, run);
        o += run;
        msg += run;
        if (!*msg || o + 1 >= outlen)
            break;
        if (*msg == '\n' || *msg == '\t') {
            out[o++] = *msg++;
            continue;
        }
        /* a C1 control as UTF-8 writes it is two bytes: both shown */
        for (int n = (unsigned char)*msg == 0xc2 ? 2 : 1; n > 0 && *msg && o + 5 < outlen; n--)
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", (unsigned char)*msg++);
        if (o + 5 >= outlen)
            break;
    }
    out[o] = '\0';
}

/* stream NULL: the log file only */
static void log_emit(FILE *stream, const char *level, const char *fmt, va_list ap)
{
    char raw[2048], msg[2560];
    char prefix[128] = "fabricbench: ";

    vsnprintf(raw, sizeof raw, fmt, ap);
    neutral(raw, msg, sizeof msg);
    if (log_rank >= 0)
        snprintf(prefix, sizeof prefix, "[%d %s] ", log_rank, log_host);
    if (stream) {
        fprintf(stream, "%s%s%s\n", prefix, level, msg);
        fflush(stream);
    }
    if (log_file) {
        fprintf(log_file, "%s%s%s\n", prefix, level, msg);
        fflush(log_file);
    }
}

void fb_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_emit(stderr, "error: ", fmt, ap);
    va_end(ap);
}

static _Atomic unsigned long warnings;

unsigned long fb_log_warnings(void) { return warnings; }

void fb_warn(const char *fmt, ...)
{
    va_list ap;
    warnings++;
    va_start(ap, fmt);
    log_emit(stderr, "warning: ", fmt, ap);
    va_end(ap);
}

void fb_info(const char *fmt, ...)
{
    va_list ap;
    if (log_quiet && !log_file)
        return;
    va_start(ap, fmt);
    log_emit(log_quiet ? NULL : stderr, "", fmt, ap); /* the run's log keeps what quiet hides */
    va_end(ap);
}

void fb_log_set_report(int on) { log_no_report = !on; }

void fb_out(const char *fmt, ...)
{
    char line[4096];
    va_list ap;

    if (log_no_report)
        return;
    /* Format once, write twice: the table lines are short; a longer one is cut, not lost. */
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fputs(line, stdout);
    fflush(stdout);
    if (log_file) {
        fputs(line, log_file);
        fflush(log_file);
    }
}
