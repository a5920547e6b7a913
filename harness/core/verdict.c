/* Verdict names and how verdicts combine (verdict.h): the bottom layer, so that the topology,
 * doctor, NCCL-log and acceptance checks share one order. */
#include "verdict.h"

const char *fb_verdict_str(enum fb_verdict v)
{
    switch (v) {
    case FB_PASS: return "PASS";
    case FB_WARN: return "WARN";
    case FB_FAIL: return "FAIL";
    case FB_SKIP: return "SKIP";
    }
    return "????";
}

static int verdict_rank(enum fb_verdict v)
{
    switch (v) {
    case FB_SKIP: return 0;
    case FB_PASS: return 1;
    case FB_WARN: return 2;
    case FB_FAIL: return 3;
    }
    return 3;
}

enum fb_verdict fb_verdict_worst(enum fb_verdict a, enum fb_verdict b)
{
    return verdict_rank(a) >= verdict_rank(b) ? a : b;
}
