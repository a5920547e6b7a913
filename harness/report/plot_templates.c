/* Looking a template up by name in the table generated from plots/. */
#include "plot_templates.h"

#include <string.h>

const char *fb_plot_template_find(const char *name)
{
    for (size_t i = 0; i < fb_plot_ntemplates; i++)
        if (strcmp(fb_plot_templates[i].name, name) == 0)
            return fb_plot_templates[i].text;
    return NULL;
}
