/* The tensor-core choice (kernels/conv_gemm.h, fb_kconv_tc_usable): by the device and by what
 * was compiled for it. A binary built for sm_75 alone runs on an H200 (sm_90) with its bf16
 * tensor-core kernel compiled to a trap, so asking the device alone chose a trap. */
#include "conv_gemm.h"
#include "test.h"

int main(void)
{
    /* built for the device: tensor cores where the device has them */
    CHECK(fb_kconv_tc_usable(FB_KPREC_BF16, 90, 90) == 1);
    CHECK(fb_kconv_tc_usable(FB_KPREC_BF16, 80, 80) == 1);
    CHECK(fb_kconv_tc_usable(FB_KPREC_FP16, 90, 90) == 1);
    /* PTX for sm_90 compiled just in time for a newer device */
    CHECK(fb_kconv_tc_usable(FB_KPREC_BF16, 100, 90) == 1);
    /* the defect: nvcc's default sm_75 on an sm_90 device; fp16 has WMMA there, bf16 a trap */
    CHECK(fb_kconv_tc_usable(FB_KPREC_BF16, 90, 75) == 0);
    CHECK(fb_kconv_tc_usable(FB_KPREC_FP16, 90, 75) == 1);
    CHECK(fb_kconv_tc_usable(FB_KPREC_FP16, 90, 60) == 0);
    /* the device lacks them whatever was compiled */
    CHECK(fb_kconv_tc_usable(FB_KPREC_BF16, 75, 90) == 0);
    CHECK(fb_kconv_tc_usable(FB_KPREC_FP16, 61, 90) == 0);
    /* fp32 never runs on the tensor-core kernel; nothing known (0) is not usable */
    CHECK(fb_kconv_tc_usable(FB_KPREC_FP32, 90, 90) == 0);
    CHECK(fb_kconv_tc_usable(FB_KPREC_BF16, 90, 0) == 0);
    TEST_DONE();
}
