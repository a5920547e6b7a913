/* JSON files: a run folder's env.json and doctor.json, read back by report, compare and accept
 * with one reader (one set of errors and statuses), and written atomically by run and doctor. */
#ifndef FB_JSON_FILE_H
#define FB_JSON_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "status.h"

/* The largest JSON file read: a fingerprint of 4096 ranks is a few MiB. */
#define FB_JSON_FILE_MAX ((size_t)64 << 20)

/* Reads the JSON object in `path` into *out (the caller cJSON_Deletes it). With `optional`, a
 * missing file is FB_OK and *out NULL. A file that cannot be opened or read, is larger than
 * FB_JSON_FILE_MAX, is not valid JSON or holds something other than an object is bad input:
 * FB_ERR_USAGE, *out NULL, and one line in err naming the file, and the line for bad JSON
 * ("run/env.json:2: not a JSON object (not valid JSON at this line)"). A number that is not
 * finite (1e999, which cJSON reads as inf) is bad input too, named with its line and column
 * ("run/env.json:7:19: '1e999' is not a finite number ..."). FB_ERR_NOMEM when memory runs
 * out. */
fb_status fb_json_file_read(const char *path, bool optional, cJSON **out, char *err,
                            size_t errlen);

/* Writes `json` to `path` as indented JSON with a final line end, atomically (the file appears
 * whole or not at all). FB_ERR_IO with a message (fb_atomic_write), FB_ERR_NOMEM with a message,
 * FB_ERR_USAGE for a NULL argument. */
fb_status fb_json_file_write(const char *path, const cJSON *json);

#endif
