/* NCCL Inspector's JSON output read as a mix (mix.h): the profiler plugin of nccl's
 * ext-profiler/inspector (plugins/profiler/inspector since 2.29.7) writes one JSON object per
 * collective per communicator (format "v4.0": header {id, rank, n_ranks, nnodes; comm_name
 * since 2.30}, metadata {...}, coll_perf {coll, coll_sn, coll_msg_size_bytes,
 * coll_exec_time_us, ...}; since 2.30, opt-in, p2p_perf records, left out), pretty-printed or
 * one a line. Objects are read one after another with cJSON; the line of each is counted for
 * messages. */
#include "mix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "escape.h"

struct rec {
    unsigned long long sn;
    struct fb_mix_op op;
};

static int by_sn(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    return x->sn < y->sn ? -1 : x->sn > y->sn;
}

/* A whole number from 0 to max in field `key` of the object `obj` (named `where`), or false
 * with why naming the field and what it holds ("'rank' in 'header' is -1: not a whole number
 * from 0 to 1e9"). */
static bool whole(const cJSON *obj, const char *where, const char *key, double max,
                  const char *maxs, double *out, char *why, size_t whylen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        snprintf(why, whylen, "'%s' has no '%s' (a whole number from 0 to %s)", where, key, maxs);
        return false;
    }
    if (!cJSON_IsNumber(v)) {
        snprintf(why, whylen, "'%s' in '%s' is not a number (a whole number from 0 to %s)", key,
                 where, maxs);
        return false;
    }
    if (!isfinite(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > max ||
        v->valuedouble != floor(v->valuedouble)) {
        char shown[32]; /* the shortest text that reads back as the value: 0.1, not 0.1000...1 */
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(shown, sizeof shown, "%.*g", prec, v->valuedouble);
            if (strtod(shown, NULL) == v->valuedouble)
                break;
        }
        snprintf(why, whylen, "'%s' in '%s' is %s: not a whole number from 0 to %s", key, where,
                 shown, maxs);
        return false;
    }
    *out = v->valuedouble;
    return true;
}

/* Whether the JSON text holds a NUL byte, raw or as the escape \u0000 (a backslash itself
 * escaped aside): cJSON makes a C string that ends there, so "AllReduce\u0000x" would read as
 * AllReduce, and an id "0x1<NUL>zz" as another communicator's "0x1". */
static bool has_nul(const char *text, size_t len)
{
    if (memchr(text, '\0', len))
        return true;
    for (size_t i = 0; i + 6 <= len; i++) {
        if (text[i] != '\\')
            continue;
        if (text[i + 1] == 'u' && memcmp(text + i + 2, "0000", 4) == 0)
            return true;
        i++; /* the escaped character: a backslash after it starts nothing */
    }
    return false;
}

/* NCCL's function names (ncclFuncToString) to a mix's collective; *skip for point-to-point. */
static bool coll_of(const char *name, enum fb_mix_coll *c, bool *skip, int *pieces)
{
    static const struct {
        const char *nccl;
        enum fb_mix_coll coll;
        int pieces; /* 1: the op's bytes are the record's; 0: n_ranks times them */
    } map[] = {
        {"AllReduce", FB_MIX_ALLREDUCE, 1}, {"AllGather", FB_MIX_ALLGATHER, 0},
        {"ReduceScatter", FB_MIX_REDUCE_SCATTER, 0}, {"Broadcast", FB_MIX_BROADCAST, 1},
        {"Reduce", FB_MIX_REDUCE, 1},
    };
    *skip = strcmp(name, "Send") == 0 || strcmp(name, "Recv") == 0 ||
            strcmp(name, "SendRecv") == 0;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(name, map[i].nccl) == 0) {
            *c = map[i].coll;
            *pieces = map[i].pieces;
            return true;
        }
    return false;
}

/* One record into *r; false with why. *take is false for a record to leave out (another
 * communicator or rank than the first, point-to-point). */
static bool read_record(const cJSON *o, char *comm, size_t commlen, int *rank0,
                        enum fb_dtype dtype, struct rec *r, bool *take, char *why,
                        size_t whylen)
{
    const cJSON *hdr = cJSON_GetObjectItemCaseSensitive(o, "header"),
                *perf = cJSON_GetObjectItemCaseSensitive(o, "coll_perf"),
                *id = cJSON_GetObjectItemCaseSensitive(hdr, "id"),
                *coll = cJSON_GetObjectItemCaseSensitive(perf, "coll");
    double rank, nranks, sn, bytes;
    int pieces = 1;
    bool skip = false, p2p, known;

    *take = false;
    /* 2.30 can also record point-to-point operations (opt-in), as "p2p_perf" objects */
    p2p = !perf && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "p2p_perf"));
    if (!cJSON_IsObject(hdr) || (!cJSON_IsObject(perf) && !p2p)) {
        snprintf(why, whylen, "not an NCCL Inspector record (no 'header' and 'coll_perf' "
                 "objects)");
        return false;
    }
    if (!cJSON_IsString(id)) {
        snprintf(why, whylen, "'header' needs 'id' (a string)");
        return false;
    }
    if (!whole(hdr, "header", "rank", 1e9, "1e9", &rank, why, whylen) ||
        !whole(hdr, "header", "n_ranks", 1e9, "1e9", &nranks, why, whylen))
        return false;
    if (nranks < 1) {
        snprintf(why, whylen, "'n_ranks' in 'header' is 0 (1 or more)");
        return false;
    }
    if (p2p) /* left out, and it does not choose the communicator replayed */
        return true;
    if (!cJSON_IsString(coll)) {
        snprintf(why, whylen, "'coll_perf' needs 'coll' (a string)");
        return false;
    }
    /* JSON numbers are doubles here: past 2^53 - 1 one is read as its neighbour */
    if (!whole(perf, "coll_perf", "coll_sn", 0x1p53 - 1, "2^53 - 1", &sn, why, whylen) ||
        !whole(perf, "coll_perf", "coll_msg_size_bytes", 0x1p53 - 1, "2^53 - 1", &bytes, why,
               whylen))
        return false;
    known = coll_of(coll->valuestring, &r->op.coll, &skip, &pieces);
    if (!known && skip) /* Send, Recv, SendRecv: left out, as p2p_perf records are */
        return true;
    /* the first collective record chooses the communicator and the rank replayed */
    if (!comm[0]) {
        /* kept whole, or two communicators alike in their first bytes would be one (an id
         * longer than the buffer was cut, matched no record, and read as no collectives) */
        if (!id->valuestring[0] || strlen(id->valuestring) >= commlen) {
            snprintf(why, whylen, "the communicator's 'id' in 'header' is %s (1 to %zu bytes)",
                     id->valuestring[0] ? "too long" : "empty", commlen - 1);
            return false;
        }
        snprintf(comm, commlen, "%s", id->valuestring);
        *rank0 = (int)rank;
    }
    if (strcmp(comm, id->valuestring) != 0 || (int)rank != *rank0)
        return true;
    if (!known) {
        char shown[128]; /* the name as JSON decoded it: a line break in it stays escaped */
        fb_escape_str(coll->valuestring, 40, shown, sizeof shown);
        snprintf(why, whylen, "unknown collective '%s' in 'coll' (AllReduce, AllGather, "
                 "ReduceScatter, Broadcast, Reduce; Send, Recv and SendRecv are skipped)",
                 shown);
        return false;
    }
    r->sn = (unsigned long long)sn;
    r->op.dtype = dtype;
    /* the whole buffer, checked in integers before it can wrap (in doubles, products just
     * above 1e18 rounded down to it and passed) */
    if (!pieces && (size_t)bytes > FB_MIX_MAX_BYTES / (size_t)nranks) {
        snprintf(why, whylen, "coll_sn %llu: %.0f bytes times %.0f ranks is more than 1e18 bytes",
                 (unsigned long long)sn, bytes, nranks);
        return false;
    }
    r->op.bytes = (size_t)bytes * (pieces ? 1 : (size_t)nranks);
    snprintf(r->op.name, sizeof r->op.name, "sn%llu", r->sn);
    if (r->op.bytes == 0 || r->op.bytes % fb_dtype_size(dtype) != 0) {
        snprintf(why, whylen, "coll_sn %llu: %zu bytes is not a whole number (above 0) of %s "
                 "elements", r->sn, r->op.bytes, fb_mix_dtype_name(dtype));
        return false;
    }
    *take = true;
    return true;
}

fb_status fb_mix_inspector_parse(const char *text, size_t len, const char *shown,
                                 enum fb_dtype dtype, struct fb_mix *out, char *err,
                                 size_t errlen)
{
    struct rec *recs = NULL;
    size_t nrec = 0, cap = 0, pos = 0, line = 1, counted = 0;
    char comm[128] = "", why[300];
    int rank0 = -1;
    fb_status st = FB_OK;

    *out = (struct fb_mix){0};
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        pos = 3;
    for (;;) {
        const char *end = NULL;
        cJSON *o;
        struct rec r = {0};
        bool take;

        while (pos < len && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' ||
                             text[pos] == '\r'))
            pos++;
        for (; counted < pos; counted++)
            line += text[counted] == '\n';
        if (pos >= len)
            break;
        o = cJSON_ParseWithLengthOpts(text + pos, len - pos, &end, false);
        if (!o || !cJSON_IsObject(o)) {
            snprintf(err, errlen, "%s:%zu: not a JSON object (NCCL Inspector writes one per "
                     "collective)", shown, line);
            cJSON_Delete(o);
            st = FB_ERR_USAGE;
            goto out;
        }
        if (has_nul(text + pos, (size_t)(end - text) - pos)) {
            snprintf(err, errlen, "%s:%zu: a NUL byte (raw or \\u0000) in a record, which no "
                     "NCCL Inspector field holds", shown, line);
            cJSON_Delete(o);
            st = FB_ERR_USAGE;
            goto out;
        }
        if (!read_record(o, comm, sizeof comm, &rank0, dtype, &r, &take, why, sizeof why)) {
            snprintf(err, errlen, "%s:%zu: %s", shown, line, why);
            cJSON_Delete(o);
            st = FB_ERR_USAGE;
            goto out;
        }
        cJSON_Delete(o);
        pos = (size_t)(end - text);
        if (!take)
            continue;
        if (nrec == cap) {
            size_t nc = cap ? 2 * cap : 256;
            struct rec *nr = realloc(recs, nc * sizeof *nr);
            if (!nr) {
                snprintf(err, errlen, "%s: out of memory reading it", shown);
                st = FB_ERR_NOMEM;
                goto out;
            }
            recs = nr;
            cap = nc;
        }
        r.op.line = line;
        recs[nrec++] = r;
    }
    if (nrec == 0) {
        snprintf(err, errlen, "%s:%zu: no collectives in the NCCL Inspector output", shown, line);
        st = FB_ERR_USAGE;
        goto out;
    }
    /* the dump thread may write records out of order: the communicator's sequence decides */
    qsort(recs, nrec, sizeof *recs, by_sn);
    for (size_t i = 0; i < nrec && st == FB_OK; i++)
        st = fb_mix_add(out, &recs[i].op);
    if (st != FB_OK)
        snprintf(err, errlen, "%s: out of memory reading it", shown);
out:
    free(recs);
    if (st != FB_OK)
        fb_mix_free(out);
    return st;
}
