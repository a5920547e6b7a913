/* Fuzzes the mix readers (harness/mix, issue 18): the input read as `run replay --mix` reads a
 * file (fb_mix_read: NCCL Inspector's JSON when it starts with '{', the text format otherwise),
 * parsed directly as the text format and as Inspector's JSON, and read as a layer list (what
 * `fabricbench mix fsdp|horovod|ddp --layers` reads). Each reader either returns FB_OK with
 * what mix.h and mix_layers.h promise (ops of a known collective and type, of 1 byte to 1e18
 * bytes and a multiple of the type's size, a terminated name, a compute time from 0 to 1e9 us;
 * layers of 1 to the limit's elements with a terminated name), or FB_ERR_USAGE with a one-line
 * message (every reader escapes what it quotes, so a line feed in the input is no excuse)
 * naming the input first and its result emptied. A text mix that parses is written
 * back (fb_mix_format, what `fabricbench mix` writes) and must parse to the same ops; a file
 * fb_mix_read takes as the text format parses the same way from memory. */
#include "fuzz.h"

#include <math.h>

#include "mix.h"
#include "mix_layers.h"

static struct fuzz_file file;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_file_init(&file, "step.mix");
    return 0;
}

static void check_ops(const struct fb_mix *m)
{
    FUZZ_CHECK(m->nops > 0 && m->nops <= m->cap && m->ops);
    for (size_t i = 0; i < m->nops; i++) {
        const struct fb_mix_op *o = &m->ops[i];
        FUZZ_CHECK((unsigned)o->coll < FB_MIX_COLLS);
        FUZZ_CHECK((unsigned)o->dtype < FB_DTYPE_COUNT);
        FUZZ_CHECK(o->bytes > 0 && o->bytes <= FB_MIX_MAX_BYTES);
        FUZZ_CHECK(o->bytes % fb_dtype_size(o->dtype) == 0);
        FUZZ_CHECK(memchr(o->name, '\0', sizeof o->name) != NULL);
        FUZZ_CHECK(isfinite(o->compute_us) && o->compute_us >= 0.0 && o->compute_us <= 1e9);
    }
}

/* A reader's result: ops as promised, or a message and an empty mix. `shown` starts the
 * message where the reader was given it (NULL: any). */
static void check_result(fb_status st, const struct fb_mix *m, const char *err, int lf,
                         const char *shown)
{
    FUZZ_CHECK(st == FB_OK || st == FB_ERR_USAGE);
    if (st == FB_OK) {
        check_ops(m);
        return;
    }
    FUZZ_CHECK(m->nops == 0 && m->ops == NULL);
    fuzz_check_message(err, lf);
    if (shown)
        FUZZ_CHECK(strncmp(err, shown, strlen(shown)) == 0);
}

static bool same_ops(const struct fb_mix *a, const struct fb_mix *b)
{
    if (a->nops != b->nops)
        return false;
    for (size_t i = 0; i < a->nops; i++)
        if (a->ops[i].coll != b->ops[i].coll || a->ops[i].bytes != b->ops[i].bytes ||
            a->ops[i].dtype != b->ops[i].dtype || a->ops[i].compute_us != b->ops[i].compute_us ||
            strcmp(a->ops[i].name, b->ops[i].name) != 0)
            return false;
    return true;
}

/* The first byte past a UTF-8 byte order mark and blanks is '{': fb_mix_read's choice. */
static bool looks_json(const uint8_t *d, size_t n)
{
    size_t k = n >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF ? 3 : 0;

    while (k < n && (d[k] == ' ' || d[k] == '\t' || d[k] == '\n' || d[k] == '\r'))
        k++;
    return k < n && d[k] == '{';
}

static void check_layers(const uint8_t *data, size_t size, int lf)
{
    /* float32's limit, as `fabricbench mix --dtype float32` sets it */
    const size_t max = FB_MIX_MAX_BYTES / 4;
    struct fb_mix_layers l = {0};
    char err[1024] = "";
    fb_status st = fb_mix_layers_parse((const char *)data, size, "model.layers", max, "float32",
                                       &l, err, sizeof err);

    FUZZ_CHECK(st == FB_OK || st == FB_ERR_USAGE);
    if (st != FB_OK) {
        FUZZ_CHECK(l.n == 0 && l.elements == NULL && l.names == NULL);
        fuzz_check_message(err, lf);
        FUZZ_CHECK(strncmp(err, "model.layers", 12) == 0);
        return;
    }
    FUZZ_CHECK(l.n > 0 && l.n <= l.cap && l.elements && l.names);
    for (size_t i = 0; i < l.n; i++) {
        FUZZ_CHECK(l.elements[i] >= 1 && l.elements[i] <= max);
        FUZZ_CHECK(memchr(l.names[i], '\0', sizeof l.names[i]) != NULL);
    }
    fb_mix_layers_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fb_mix file_mix = {0}, text_mix = {0}, json_mix = {0}, again = {0};
    char err[1024] = "";
    int lf = 0; /* the messages escape what they quote: one line whatever the input holds */
    fb_status sf, st, sj;

    fuzz_file_set(&file, data, size);
    sf = fb_mix_read(file.path, FB_DTYPE_FLOAT32, &file_mix, err, sizeof err);
    check_result(sf, &file_mix, err, lf, NULL);

    err[0] = '\0';
    st = fb_mix_parse((const char *)data, size, "step.mix", &text_mix, err, sizeof err);
    check_result(st, &text_mix, err, lf, "step.mix");

    err[0] = '\0';
    sj = fb_mix_inspector_parse((const char *)data, size, "inspector.json", FB_DTYPE_FLOAT16,
                                &json_mix, err, sizeof err);
    check_result(sj, &json_mix, err, lf, "inspector.json");
    for (size_t i = 0; sj == FB_OK && i < json_mix.nops; i++)
        FUZZ_CHECK(json_mix.ops[i].dtype == FB_DTYPE_FLOAT16);

    /* the file reader only refuses more (size and line caps): what it reads as text, the
     * parser reads the same from memory */
    if (sf == FB_OK && !looks_json(data, size))
        FUZZ_CHECK(st == FB_OK && same_ops(&file_mix, &text_mix));

    /* written back as `fabricbench mix` writes, read again: the same ops */
    if (st == FB_OK) {
        char *text = NULL;
        FUZZ_CHECK(fb_mix_format(&text_mix, "fuzz\nround trip", &text) == FB_OK && text);
        err[0] = '\0';
        FUZZ_CHECK(fb_mix_parse(text, strlen(text), "again.mix", &again, err, sizeof err) ==
                   FB_OK);
        FUZZ_CHECK(same_ops(&text_mix, &again));
        free(text);
    }

    check_layers(data, size, lf);
    fb_mix_free(&file_mix);
    fb_mix_free(&text_mix);
    fb_mix_free(&json_mix);
    fb_mix_free(&again);
    return 0;
}
