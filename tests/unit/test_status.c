/* The status table (harness/core/status.h): every status has a severity, and the order of the
 * severities is the one documented: a waived point below every failure, a transport error below
 * the cause it echoes, a resource failure (memory, storage, the GPU) above the rest, a timeout
 * and a signal on top. The enum's order decides nothing. */
#include "status.h"
#include "test.h"

int main(void)
{
    /* every code has a message and a severity inside the range */
    for (int i = 0; i < FB_STATUS_COUNT; i++) {
        CHECK(fb_status_str((fb_status)i)[0] != '\0');
        CHECK(fb_status_severity((fb_status)i) < FB_SEV_COUNT);
        CHECK((fb_status_severity((fb_status)i) == FB_SEV_OK) == (i == FB_OK));
    }
    /* the issue: "not supported" (a larger code) must not outrank a real failure */
    CHECK(fb_status_severity(FB_ERR_UNSUPPORTED) < fb_status_severity(FB_ERR_NOMEM));
    CHECK(fb_status_severity(FB_ERR_UNSUPPORTED) < fb_status_severity(FB_ERR_IO));
    CHECK(fb_status_severity(FB_ERR_UNSUPPORTED) < fb_status_severity(FB_ERR_NO_DEVICE));
    CHECK(fb_status_severity(FB_ERR_UNSUPPORTED) < fb_status_severity(FB_ERR_USAGE));
    CHECK(fb_status_severity(FB_ERR_UNSUPPORTED) < fb_status_severity(FB_ERR_MPI));
    /* the documented order, class by class */
    CHECK(fb_status_severity(FB_OK) == FB_SEV_OK);
    CHECK(fb_status_severity(FB_ERR_UNSUPPORTED) == FB_SEV_WAIVED);
    CHECK(fb_status_severity(FB_ERR_MPI) == FB_SEV_TRANSPORT);
    CHECK(fb_status_severity(FB_ERR_NCCL) == FB_SEV_TRANSPORT);
    CHECK(fb_status_severity(FB_ERR_VERIFY) == FB_SEV_FAILED);
    CHECK(fb_status_severity(FB_ERR_BACKEND) == FB_SEV_FAILED);
    CHECK(fb_status_severity(FB_ERR_USAGE) == FB_SEV_FAILED);
    CHECK(fb_status_severity(FB_ERR_NOMEM) == FB_SEV_RESOURCE);
    CHECK(fb_status_severity(FB_ERR_IO) == FB_SEV_RESOURCE);
    CHECK(fb_status_severity(FB_ERR_NO_DEVICE) == FB_SEV_RESOURCE);
    CHECK(fb_status_severity(FB_ERR_TIMEOUT) == FB_SEV_TIMEOUT);
    CHECK(fb_status_severity(FB_ERR_INTERRUPTED) == FB_SEV_INTERRUPTED);
    /* a partner's failure echoed yields to every failure, so the partner is named */
    CHECK(fb_status_severity(FB_ERR_PEER) == FB_SEV_ECHO);
    CHECK(FB_SEV_WAIVED < FB_SEV_ECHO && FB_SEV_ECHO < FB_SEV_TRANSPORT);
    CHECK(fb_status_exit_code(FB_ERR_PEER) == 1);
    CHECK(FB_SEV_OK < FB_SEV_WAIVED && FB_SEV_WAIVED < FB_SEV_TRANSPORT &&
          FB_SEV_TRANSPORT < FB_SEV_FAILED && FB_SEV_FAILED < FB_SEV_RESOURCE &&
          FB_SEV_RESOURCE < FB_SEV_TIMEOUT && FB_SEV_TIMEOUT < FB_SEV_INTERRUPTED);
    /* outside the enum: never below a failure */
    CHECK(fb_status_severity((fb_status)-1) == FB_SEV_RESOURCE);
    CHECK(fb_status_severity(FB_STATUS_COUNT) == FB_SEV_RESOURCE);
    /* exit codes are unchanged */
    CHECK(fb_status_exit_code(FB_OK) == 0);
    CHECK(fb_status_exit_code(FB_ERR_USAGE) == 2);
    CHECK(fb_status_exit_code(FB_ERR_TIMEOUT) == 3);
    CHECK(fb_status_exit_code(FB_ERR_INTERRUPTED) == 4);
    CHECK(fb_status_exit_code(FB_ERR_NOMEM) == 1);
    TEST_DONE();
}
