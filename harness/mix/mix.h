/* A mix: one training step's communication as an ordered list of collectives, each with its
 * bytes and data type, issued the way a framework issues them (replay, bench/replay.c). Read
 * from the text format of profiles/mixes/ (.mix files) (docs/benchmarks/replay.md: one op a line,
 * comments, sizes with units) or from NCCL Inspector's JSON output (mix_inspector.c), and
 * written back in the text format (the shipped mixes are generated: mix_gen.c). */
#ifndef FB_MIX_H
#define FB_MIX_H

#include <stdbool.h>
#include <stddef.h>

#include "pattern.h"
#include "status.h"

/* The collectives a mix may hold, in the order of fb_mix_coll_name's names. */
enum fb_mix_coll {
    FB_MIX_ALLREDUCE,
    FB_MIX_ALLGATHER,
    FB_MIX_REDUCE_SCATTER,
    FB_MIX_ALLTOALL,
    FB_MIX_BROADCAST, /* root 0 */
    FB_MIX_REDUCE,    /* root 0, sum */
    FB_MIX_COLLS
};

enum { FB_MIX_NAME = 48 };

/* The most bytes one op of a mix may hold (the text format's limit on SIZE). */
#define FB_MIX_MAX_BYTES ((size_t)1000000000000000000ULL)

/* One collective of the step. `bytes` is each rank's larger buffer, as nccl-tests' `size`
 * column: the buffer of an all-reduce, broadcast or reduce; the gathered (all-gather), scattered
 * (reduce-scatter) or sent (all-to-all) buffer, whose 1/ranks piece is each rank's own. A
 * multiple of the type's size. `compute_us`: the compute stand-in before it (the framework's
 * work that makes this op's data ready), 0 for none. */
struct fb_mix_op {
    enum fb_mix_coll coll;
    size_t bytes;
    enum fb_dtype dtype;
    double compute_us;
    char name[FB_MIX_NAME]; /* "" when the line gave none */
    size_t line;            /* the line of the file it was read from; 0 when made, not read */
};

struct fb_mix {
    struct fb_mix_op *ops;
    size_t nops, cap;
};

/* "allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast", "reduce". */
const char *fb_mix_coll_name(enum fb_mix_coll c);
/* The collective named `name`; false when none is. */
bool fb_mix_coll_parse(const char *name, enum fb_mix_coll *out);
/* "float32", "float64", "int32", "float16", "int8" (the CSV's dtype names). */
const char *fb_mix_dtype_name(enum fb_dtype t);
bool fb_mix_dtype_parse(const char *name, enum fb_dtype *out);
/* An op's name (or a layer's, mix_layers.h) of name[0..n): letters, digits and _ . - / : [ ],
 * at most `max` bytes. FB_OK, or FB_ERR_USAGE with why ("name 'x' is longer than ...", "name
 * 'x' has a character other than ..."). */
fb_status fb_mix_name_check(const char *name, size_t n, size_t max, char *why, size_t whylen);

/* The blank-separated fields of l[0..n): up to `max` of them into f[] and fl[] (start and
 * length), their count returned; max + 1 when there are more, the first extra one in f[max],
 * fl[max] (the arrays hold max + 1). */
size_t fb_mix_text_fields(const char *l, size_t n, const char **f, size_t *fl, size_t max);

/* Appends a copy of *op. FB_ERR_NOMEM. */
fb_status fb_mix_add(struct fb_mix *m, const struct fb_mix_op *op);
/* Frees the ops and empties *m. Accepts an empty mix. */
void fb_mix_free(struct fb_mix *m);
/* The sum of the ops' bytes. */
size_t fb_mix_total_bytes(const struct fb_mix *m);
/* The largest op (the first of the largest); NULL for an empty mix. */
const struct fb_mix_op *fb_mix_largest(const struct fb_mix *m);

/* Parses the text format in text[0..len) into *out (empty on entry; emptied on failure).
 * `shown` names the file in messages. A line is `COLL SIZE DTYPE [NAME] [compute_us=US]`,
 * blanks between fields, `#` starts a comment; SIZE is a decimal number (fb_decimal_parse)
 * with an optional unit B, K/KiB, M/MiB, G/GiB (binary) that must come to whole bytes, a
 * multiple of DTYPE's size, above 0. Bad input is FB_ERR_USAGE with one line in err,
 * "FILE:LINE: why" (an unknown collective or type, a bad size or unit, a size not a multiple of
 * the type, a field too many, a name too long or with odd characters, a mix without ops);
 * FB_ERR_NOMEM. */
fb_status fb_mix_parse(const char *text, size_t len, const char *shown, struct fb_mix *out,
                       char *err, size_t errlen);

/* Reads the mix in `path` (opened and read as file_read.h's readers do, at most the 64 MiB of
 * FB_FILE_MIX): NCCL Inspector's JSON when its first character past blanks is '{'
 * (fb_mix_inspector_parse, with `inspector_dtype`), the text format otherwise. Errors as the
 * parsers' and fb_file_read's. */
fb_status fb_mix_read(const char *path, enum fb_dtype inspector_dtype, struct fb_mix *out,
                      char *err, size_t errlen);

/* Writes *m in the text format: `header` (lines without their '#', may be NULL) as comments,
 * then one aligned line per op, each size in the largest binary unit that keeps it exact.
 * *text is malloc'ed and NUL-terminated (the caller frees it). FB_ERR_NOMEM. */
fb_status fb_mix_format(const struct fb_mix *m, const char *header, char **text);

/* NCCL Inspector's JSON output (mix_inspector.c; docs/benchmarks/replay.md names the fields and
 * the version followed): the records of the communicator and rank of the first collective
 * record in text[0..len), in coll_sn order, as ops of `dtype` (Inspector v4.0 records no type).
 * AllGather's and ReduceScatter's coll_msg_size_bytes is one rank's piece: the op's bytes are
 * n_ranks times it. Point-to-point records (Send, Recv, SendRecv; 2.30's p2p_perf) are skipped
 * and choose nothing. Bad input FB_ERR_USAGE, "FILE:LINE: why". */
fb_status fb_mix_inspector_parse(const char *text, size_t len, const char *shown,
                                 enum fb_dtype dtype, struct fb_mix *out, char *err,
                                 size_t errlen);

#endif
