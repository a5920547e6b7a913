/* JSON files: a run folder's env.json and doctor.json, read back by report, compare and accept
 * with one reader (one set of errors and statuses), and written atomically by run and doctor. */
#ifndef FB_JSON_FILE_H
#define FB_JSON_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "status.h"

/* Reads the JSON object in `path` into *out (the caller cJSON_Deletes it), opened and read as
 * fb_file_read does (a regular file, at most the 64 MiB of FB_FILE_JSON, a byte-order mark
 * skipped). With `optional`, a missing file is FB_OK and *out NULL. A file that cannot be
 * opened or read, is not a regular file, is over the cap, is not valid JSON, holds something
 * other than an object, or has a control character (below 0x20 but TAB, or 0x7f; raw or
 * escaped) in a string is bad input: FB_ERR_USAGE, *out NULL, and one line in err naming the
 * file, and the line where it can ("run/env.json:2: not a JSON object (not valid JSON at this
 * line)", "run/env.json:7: control character in field 'host': \x0a after 'node'"). A number
 * that is not finite (1e999, which cJSON reads as inf) is bad input too, named with its line
 * and column ("run/env.json:7:19: '1e999' is not a finite number ..."). File text in messages
 * is escaped (escape.h). FB_ERR_NOMEM when memory runs out. */
fb_status fb_json_file_read(const char *path, bool optional, cJSON **out, char *err,
                            size_t errlen);

/* Writes `json` to `path` as indented JSON with a final line end, atomically (the file appears
 * whole or not at all). FB_ERR_IO with a message (fb_atomic_write), FB_ERR_NOMEM with a message,
 * FB_ERR_USAGE for a NULL argument. */
fb_status fb_json_file_write(const char *path, const cJSON *json);

#endif
