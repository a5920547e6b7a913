/* `fabricbench densenet`: DenseNet-121's trainable tensors in gradient-ready order, with
 * totals, as a table or CSV. The list the all-reduce gradient profile is built from. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "densenet.h"
#include "log.h"
#include "units.h"

static void usage(void)
{
    printf("usage: fabricbench densenet [--classes N] [--csv]\n"
           "Lists DenseNet-121's trainable parameter tensors in the order their gradients\n"
           "become ready in the backward pass, with sizes and totals.\n\n"
           "  --classes N   classifier outputs (default 14, CheXNet's findings; 1000 for ImageNet)\n"
           "  --csv         CSV on stdout: index,name,shape,elements,bytes_fp32,bytes_fp16\n"
           "  --help        this text\n");
}

static void shape_str(const struct fb_tensor *t, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < t->dims && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? "x%d" : "%d", t->shape[i]);
}

int fb_cmd_densenet(int argc, char **argv)
{
    static const struct option options[] = {
        {"classes", required_argument, NULL, 'c'},
        {"csv", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct fb_densenet d;
    long classes = 14;
    int csv = 0, c;
    char why[160], shape[48];
    size_t cumulative = 0;

    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (fb_count_parse(optarg, 1, 1000000, &classes, why, sizeof why) != FB_OK) {
                fb_error("densenet: bad value for --classes: %s", why);
                return 2;
            }
            break;
        case 's': csv = 1; break;
        case 'h': usage(); return 0;
        default:
            fb_cli_option_error(c, argv, why, sizeof why);
            fb_error("densenet: %s", why);
            return 2;
        }
    }
    if (optind < argc) {
        fb_error("densenet: unexpected argument '%s'", argv[optind]);
        return 2;
    }
    if (fb_densenet121((int)classes, &d) != FB_OK) {
        fb_error("densenet: out of memory");
        return 1;
    }
    if (csv)
        printf("index,name,shape,elements,bytes_fp32,bytes_fp16\n");
    else
        printf("# DenseNet-121, %ld classes: %zu trainable tensors, %zu parameters, %zu bytes of "
               "fp32 gradients (%zu in fp16)\n# in the order gradients become ready in the "
               "backward pass\n# %5s %-52s %-14s %10s %12s %14s\n",
               classes, d.ntensors, d.parameters, d.parameters * 4, d.parameters * 2, "index",
               "name", "shape", "elements", "bytes_fp32", "cumulative_B");
    for (size_t i = 0; i < d.ntensors; i++) {
        const struct fb_tensor *t = &d.tensors[i];
        shape_str(t, shape, sizeof shape);
        cumulative += t->elements * 4;
        if (csv)
            printf("%zu,%s,%s,%zu,%zu,%zu\n", i, t->name, shape, t->elements, t->elements * 4,
                   t->elements * 2);
        else
            printf("  %5zu %-52s %-14s %10zu %12zu %14zu\n", i, t->name, shape, t->elements,
                   t->elements * 4, cumulative);
    }
    if (!csv)
        printf("# total: %zu tensors, %zu parameters, %zu bytes fp32, %zu bytes fp16\n",
               d.ntensors, d.parameters, d.parameters * 4, d.parameters * 2);
    fb_densenet_free(&d);
    return 0;
}
