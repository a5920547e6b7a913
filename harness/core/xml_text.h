/* Text written into XML (accept's JUnit file): element text and attribute values escaped so
 * that the file stays well-formed XML 1.0 whatever the text holds. Bytes XML cannot carry
 * (control characters other than tab, line feed and carriage return; malformed UTF-8; U+FFFE
 * and U+FFFF) are shown as the text \xNN. */
#ifndef FB_XML_TEXT_H
#define FB_XML_TEXT_H

#include <stdio.h>

/* Writes s as element text: & < > as entities, a carriage return as &#13; (a parser would
 * turn a raw one into a line feed). NULL writes nothing. */
void fb_xml_put_text(FILE *f, const char *s);

/* Writes s as an attribute value (for "..." or '...'): & < > " ' as entities, and tab, line
 * feed and carriage return as character references (a parser turns raw ones into spaces). */
void fb_xml_put_attr(FILE *f, const char *s);

#endif
