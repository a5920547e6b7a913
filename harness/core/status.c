/* Messages, severities and exit codes for fb_status, generated from FB_STATUS_TABLE. */
#include "status.h"

#define FB_STATUS_TEXT_ITEM(code, sev, text) text,
static const char *const status_text[] = {FB_STATUS_TABLE(FB_STATUS_TEXT_ITEM)};
#undef FB_STATUS_TEXT_ITEM

#define FB_STATUS_SEV_ITEM(code, sev, text) sev,
static const enum fb_severity status_sev[] = {FB_STATUS_TABLE(FB_STATUS_SEV_ITEM)};
#undef FB_STATUS_SEV_ITEM

const char *fb_status_str(fb_status st)
{
    if ((int)st < 0 || st >= FB_STATUS_COUNT)
        return "unknown status";
    return status_text[st];
}

enum fb_severity fb_status_severity(fb_status st)
{
    if ((int)st < 0 || st >= FB_STATUS_COUNT)
        return FB_SEV_RESOURCE;
    return status_sev[st];
}

int fb_status_exit_code(fb_status st)
{
    if (st == FB_OK)
        return 0;
    switch (st) {
    case FB_ERR_USAGE: return 2;
    case FB_ERR_TIMEOUT: return 3;     /* FB_EXIT_TIMEOUT (watchdog.h) */
    case FB_ERR_INTERRUPTED: return 4; /* FB_EXIT_INTERRUPTED */
    default: return 1;
    }
}
