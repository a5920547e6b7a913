/* The gnuplot templates of plots/ (*.gp), compiled into the binary (cmake/EmbedPlots.cmake
 * generates the table at build time), so `report` draws from any folder. */
#ifndef FB_PLOT_TEMPLATES_H
#define FB_PLOT_TEMPLATES_H

#include <stddef.h>

struct fb_plot_template {
    const char *name; /* the file name without ".gp": "allreduce_busbw", "common" */
    const char *text; /* the file's content, NUL-terminated */
};

extern const struct fb_plot_template fb_plot_templates[];
extern const size_t fb_plot_ntemplates;

/* The template called name, NULL when there is none. */
const char *fb_plot_template_find(const char *name);

#endif
