/* The outcome of one environment check, shared by the topology verdicts and `doctor`.
 * Ordered from best to worst, except SKIP ("could not judge"), which any real verdict
 * outranks when verdicts are combined. */
#ifndef FB_VERDICT_H
#define FB_VERDICT_H

enum fb_verdict { FB_PASS, FB_WARN, FB_FAIL, FB_SKIP };

/* "PASS", "WARN", "FAIL" or "SKIP"; never NULL ("????" for a value out of range). */
const char *fb_verdict_str(enum fb_verdict v);

/* The worse of two verdicts: FAIL > WARN > PASS > SKIP, so one SKIP does not hide a PASS and
 * a set of verdicts is SKIP only when nothing could be judged. */
enum fb_verdict fb_verdict_worst(enum fb_verdict a, enum fb_verdict b);

#endif
