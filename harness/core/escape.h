/* Text from a file or the command line shown in a message: every byte that is not printable
 * ASCII is written as \xNN (a line break, a control character, a byte-order mark, any byte of
 * UTF-8), so a message stays one visible line. The one helper every reader's message uses. */
#ifndef FB_ESCAPE_H
#define FB_ESCAPE_H

#include <stddef.h>

/* Writes s[0..n) into dst (dstlen bytes, NUL-terminated) with bytes below 0x20, 0x7f and above
 * it as \xNN and a backslash as \\. When it does not fit, or n is over max (0: no limit), ends
 * with "..." instead. Returns dst. */
char *fb_escape(const char *s, size_t n, size_t max, char *dst, size_t dstlen);

/* The same for a NUL-terminated string. */
char *fb_escape_str(const char *s, size_t max, char *dst, size_t dstlen);

/* Whether byte c is a control character: below 0x20 or 0x7f (TAB counted). */
static inline int fb_escape_is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* The offset in s of its first control character, C1 included: a byte below 0x20 or 0x7f, a
 * C1 control as UTF-8 writes it (C2 80 to C2 9F) or as a lone byte 0x80-0x9f after anything but
 * a UTF-8 lead byte (where a terminal reads it as one); strlen(s) when it has none. */
size_t fb_escape_control_at(const char *s);

#endif
