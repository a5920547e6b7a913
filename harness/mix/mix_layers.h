/* A user's model as a list of layer sizes: the input `fabricbench mix fsdp|horovod|ddp` turns
 * into a mix (docs/benchmarks/replay.md, "A mix of your model"). One layer a line, in forward order
 * (the order the model registers its parameters): `COUNT [NAME]`, COUNT the layer's elements
 * (parameters) in decimal digits, NAME optional; `#` starts a comment, blank lines are skipped. */
#ifndef FB_MIX_LAYERS_H
#define FB_MIX_LAYERS_H

#include <stddef.h>

#include "status.h"

/* The longest layer name, in bytes: an FSDP op's name is "grad." and it, within a mix name. */
enum { FB_MIX_LAYER_NAME = 40 };

struct fb_mix_layers {
    size_t *elements;                  /* [n], each at least 1 */
    char (*names)[FB_MIX_LAYER_NAME + 1]; /* [n], "" where the line gave none */
    size_t n, cap;
};

/* Parses the list in text[0..len) into *out (empty on entry; emptied on failure). `shown`
 * names the file in messages; a count above `max_elements` is refused (the caller's limit: a
 * mix op's 1e18 bytes in its type, `type` named in that message). Bad input is FB_ERR_USAGE
 * with one line in err, "FILE:LINE: why": a count that is not digits, negative, zero or above
 * the limit, a name too long or with a character a mix name may not hold, a field too many, a
 * NUL byte, a list without layers; FB_ERR_NOMEM. */
fb_status fb_mix_layers_parse(const char *text, size_t len, const char *shown,
                              size_t max_elements, const char *type, struct fb_mix_layers *out,
                              char *err, size_t errlen);

/* Reads the list in `path` (file_read.h's reader, at most FB_FILE_MIX's 64 MiB) and parses it.
 * Errors as fb_file_read's and fb_mix_layers_parse's. */
fb_status fb_mix_layers_read(const char *path, size_t max_elements, const char *type,
                             struct fb_mix_layers *out, char *err, size_t errlen);

/* Frees the list and empties it; accepts an empty one. */
void fb_mix_layers_free(struct fb_mix_layers *l);

#endif
