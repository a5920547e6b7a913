/* Text written into Markdown (summary.md, compare.md): text from files and options escaped so
 * that it stays text, in one table cell, on one line: no raw line break, no '|' that splits
 * a cell, no link, HTML tag or code span it did not ask for, and a code span or
 * fenced block that its own backquotes cannot close. Control bytes (below 0x20, 0x7f), C1
 * controls (U+0080-U+009F, which terminals obey) and bytes that are not UTF-8 are shown as
 * \xNN, so the file is UTF-8 text whatever a run folder held. */
#ifndef FB_MD_TEXT_H
#define FB_MD_TEXT_H

#include <stdbool.h>
#include <stdio.h>

/* Writes s as plain text (a paragraph, a heading, a table cell): \ ` [ ] < > | & get a
 * backslash (CommonMark's escapes), control bytes are \xNN. Emphasis marks (* _ ~) are left
 * as they are: they can only change how text looks, and metric names are full of '_'. NULL
 * writes nothing. */
void fb_md_put_text(FILE *f, const char *s);

/* Writes s as one inline code span, with its backquotes: the fence is one backquote longer
 * than the longest run inside, a space pads content that starts or ends with one, control
 * bytes are \xNN, and in_table escapes '|' (GitHub's tables split cells on it even inside a
 * span). NULL or "" is a span of one space (`` is no span). */
void fb_md_put_code(FILE *f, const char *s, bool in_table);

/* Writes s as a fenced code block (its fences and line ends included): the fence is longer
 * than any run of backquotes in s, and control bytes are \xNN, so the block is one line. */
void fb_md_put_code_block(FILE *f, const char *s);

/* Writes s as a link's destination: every byte but A-Z a-z 0-9 - . _ ~ / percent-encoded, so
 * a path cannot close the link or add a title. */
void fb_md_put_link(FILE *f, const char *s);

#endif
