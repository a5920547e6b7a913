/* Launch variants and launcher commands for `fabricbench sweep`. */
#define _GNU_SOURCE
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

bool fb_launch_name_ok(const char *name)
{
    static const char *const prefixes[] = {"NCCL_", "UCX_", "OMPI_MCA_"};
    const char *rest = NULL;

    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0] && !rest; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            rest = name + strlen(prefixes[i]);
    if (!rest || !*rest || strlen(name) >= sizeof ((struct fb_launch_var *)0)->name)
        return false;
    for (; *rest; rest++)
        if (!((*rest >= 'A' && *rest <= 'Z') || (*rest >= 'a' && *rest <= 'z') ||
              (*rest >= '0' && *rest <= '9') || *rest == '_'))
            return false;
    return true;
}

void fb_launch_var_free(struct fb_launch_var *v)
{
    for (size_t i = 0; i < v->nvalues; i++)
        free(v->values[i]);
    memset(v, 0, sizeof *v);
}

fb_status fb_launch_var_parse(const char *text, struct fb_launch_var *v, char *why,
                              size_t whylen)
{
    const char *eq = strchr(text, '=');
    size_t namelen = eq ? (size_t)(eq - text) : strlen(text);
    char name[sizeof v->name], *value = NULL;
    size_t used = 0;
    fb_status st = FB_ERR_USAGE;

    memset(v, 0, sizeof *v);
    if (namelen >= sizeof name) {
        snprintf(why, whylen, "setting name '%.40s...' is too long", text);
        return FB_ERR_USAGE;
    }
    memcpy(name, text, namelen);
    name[namelen] = '\0';
    if (!fb_launch_name_ok(name)) {
        snprintf(why, whylen,
                 "'%s' is not a launch setting (use NCCL_*, UCX_* or OMPI_MCA_* names, e.g. "
                 "NCCL_P2P_DISABLE, NCCL_ALGO)", name);
        return FB_ERR_USAGE;
    }
    memcpy(v->name, name, namelen + 1);
    if (!eq || !eq[1]) {
        snprintf(why, whylen, "'%s' has no values (use %s=V1,V2,...)", text, name);
        return FB_ERR_USAGE;
    }
    if (!(value = malloc(strlen(eq) + 1))) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    for (const char *p = eq + 1;; p++) {
        if (*p == '\\' && p[1] == ',') {
            value[used++] = *++p;
            continue;
        }
        if (*p && *p != ',') {
            if (*p == '\n' || *p == '\r') {
                snprintf(why, whylen, "a value of %s holds a line break", name);
                goto out;
            }
            if (fb_escape_is_control((unsigned char)*p) ||
                fb_escape_ends_c1(p > eq + 1 ? (unsigned char)p[-1] : 0, (unsigned char)*p)) {
                /* an escape sequence would reach the terminal in every launch line */
                snprintf(why, whylen, "a value of %s holds a control character (\\x%02x)", name,
                         (unsigned char)*p);
                goto out;
            }
            value[used++] = *p;
            continue;
        }
        value[used] = '\0';
        if (!used) {
            snprintf(why, whylen, "empty value in '%s'", text);
            goto out;
        }
        for (size_t i = 0; i < v->nvalues; i++)
            if (strcmp(v->values[i], value) == 0) {
                snprintf(why, whylen, "%s=%s is given twice", name, value);
                goto out;
            }
        if (v->nvalues == FB_LAUNCH_MAX_VALUES) {
            snprintf(why, whylen, "%s has more than %d values", name, FB_LAUNCH_MAX_VALUES);
            goto out;
        }
        if (!(v->values[v->nvalues] = strdup(value))) {
            st = FB_ERR_NOMEM;
            goto out;
        }
        v->nvalues++;
        used = 0;
        if (!*p)
            break;
    }
    st = FB_OK;
out:
    free(value);
    if (st != FB_OK)
        fb_launch_var_free(v);
    return st;
}

static const char *binding_name(enum fb_binding b)
{
    return b == FB_BIND_NONE ? "none" : b == FB_BIND_CORE ? "core" : "socket";
}

/* Appends "_" (unless first) and s to name, cutting at the buffer's end. */
static void name_add(char *name, size_t len, const char *s)
{
    size_t used = strlen(name);

    if (used && used + 1 < len)
        name[used++] = '_';
    for (; *s && used + 1 < len; s++)
        name[used++] = *s;
    name[used] = '\0';
}

static void name_value(char *dst, size_t len, const char *var, const char *value)
{
    size_t used = (size_t)snprintf(dst, len, "%s-", var);

    for (const char *p = value; *p && used + 1 < len; p++) {
        char c = *p;
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '+' || c == '-';
        dst[used++] = ok ? c : '-';
    }
    dst[used < len ? used : len - 1] = '\0';
}

fb_status fb_launch_variants(const enum fb_binding *bindings, size_t nbindings,
                             const struct fb_launch_var *vars, size_t nvars,
                             struct fb_launch_variant **out, size_t *n, char *why,
                             size_t whylen)
{
    size_t total = nbindings, idx[FB_LAUNCH_MAX_VARS] = {0};
    struct fb_launch_variant *all;

    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < nvars; i++) {
        total *= vars[i].nvalues;
        if (total > FB_LAUNCH_MAX_VARIANTS) {
            snprintf(why, whylen, "more than %d launch variants", FB_LAUNCH_MAX_VARIANTS);
            return FB_ERR_USAGE;
        }
    }
    if (total == 0 || !(all = calloc(total, sizeof *all)))
        return total == 0 ? FB_ERR_USAGE : FB_ERR_NOMEM;
    for (size_t k = 0; k < total; k++) {
        struct fb_launch_variant *v = &all[k];
        /* k = binding index, then the vars' indices with the last varying fastest */
        size_t rest = k;
        for (size_t i = nvars; i-- > 0;) {
            idx[i] = rest % vars[i].nvalues;
            rest /= vars[i].nvalues;
        }
        v->binding = bindings[rest];
        if (nbindings > 1) {
            char part[32];
            snprintf(part, sizeof part, "bind-%s", binding_name(v->binding));
            name_add(v->name, sizeof v->name, part);
        }
        for (size_t i = 0; i < nvars; i++) {
            char part[160];
            v->values[i] = vars[i].values[idx[i]];
            if (vars[i].nvalues > 1) {
                name_value(part, sizeof part, vars[i].name, v->values[i]);
                name_add(v->name, sizeof v->name, part);
            }
        }
        if (!v->name[0])
            snprintf(v->name, sizeof v->name, "default");
    }
    /* Two values that read the same once cleaned ("a b", "a-b"): number the later ones. */
    for (size_t k = 1; k < total; k++) {
        char base[sizeof all[0].name];
        bool clash = true;
        memcpy(base, all[k].name, sizeof base);
        for (unsigned suffix = 2; clash && suffix < 10000; suffix++) {
            clash = false;
            for (size_t j = 0; j < k && !clash; j++)
                clash = strcmp(all[j].name, all[k].name) == 0;
            if (clash)
                snprintf(all[k].name, sizeof all[k].name, "%.150s-%u", base,
                         suffix % 10000u);
        }
    }
    *out = all;
    *n = total;
    return FB_OK;
}

bool fb_launch_self_binds(const struct fb_launch *l, enum fb_binding binding)
{
    int per_node = l->gpus > 0 ? l->gpus : l->np, sockets = l->sockets > 0 ? l->sockets : 1;

    return binding == FB_BIND_SOCKET && per_node % sockets != 0;
}

fb_status fb_launch_binding_args(const struct fb_launch *l, enum fb_binding binding,
                                 struct fb_strv *argv)
{
    fb_status st = FB_OK;
    int per_node = l->gpus > 0 ? l->gpus : l->np, sockets = l->sockets > 0 ? l->sockets : 1;
    char map[48];

    if (l->launcher == FB_LAUNCHER_SRUN) {
        /* Slurm deals a node's tasks over its sockets cyclically unless told block:block */
        if (binding == FB_BIND_NONE || fb_launch_self_binds(l, binding))
            return fb_strv_push(argv, "--cpu-bind=none");
        if ((st = fb_strv_push(argv, "--distribution=block:block")) != FB_OK)
            return st;
        return fb_strv_push(argv, binding == FB_BIND_CORE ? "--cpu-bind=cores"
                                                          : "--cpu-bind=socket");
    }
    /* The local rank picks the GPU, so ranks must be laid out in GPU order. With GPUs spread
     * evenly over the sockets and numbered socket by socket (the usual case), K consecutive
     * ranks per socket put rank i on GPU i's socket. Where they do not divide, --map-by socket
     * would deal ranks round robin (rank 1 on socket 1 while it drives GPU 1, usually on socket
     * 0): the launcher then binds nothing and each rank binds itself to its GPU's socket
     * (run --self-bind, added by fb_launch_command). */
    if (binding == FB_BIND_NONE || fb_launch_self_binds(l, binding))
        return (st = fb_strv_push(argv, "--bind-to")) == FB_OK ? fb_strv_push(argv, "none") : st;
    if (binding == FB_BIND_CORE) {
        if ((st = fb_strv_push(argv, "--map-by")) == FB_OK && (st = fb_strv_push(argv, "core")) == FB_OK &&
            (st = fb_strv_push(argv, "--bind-to")) == FB_OK)
            st = fb_strv_push(argv, "core");
        return st;
    }
    snprintf(map, sizeof map, "ppr:%d:socket", per_node / sockets);
    if ((st = fb_strv_push(argv, "--map-by")) == FB_OK && (st = fb_strv_push(argv, map)) == FB_OK &&
        (st = fb_strv_push(argv, "--bind-to")) == FB_OK)
        st = fb_strv_push(argv, "socket");
    return st;
}

fb_status fb_launch_command(const struct fb_launch *l, const struct fb_launch_variant *v,
                            const struct fb_launch_var *vars, size_t nvars, const char *exe,
                            const char *const *tail, size_t ntail, struct fb_strv *argv,
                            struct fb_strv *env)
{
    bool srun = l->launcher == FB_LAUNCHER_SRUN;
    char np[32], pair[4200];
    fb_status st;

    snprintf(np, sizeof np, "%d", l->np);
    if ((st = fb_strv_push(argv, srun ? "srun" : "mpirun")) != FB_OK ||
        (st = fb_strv_push(argv, srun ? "--ntasks" : "-np")) != FB_OK ||
        (st = fb_strv_push(argv, np)) != FB_OK ||
        (st = fb_launch_binding_args(l, v->binding, argv)) != FB_OK)
        return st;
    if (srun && (st = fb_strv_push(argv, "--export=ALL")) != FB_OK)
        return st;
    if (!srun && l->as_root &&
        ((st = fb_strv_push(env, "OMPI_ALLOW_RUN_AS_ROOT=1")) != FB_OK ||
         (st = fb_strv_push(env, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")) != FB_OK))
        return st;
    for (size_t i = 0; i < nvars; i++) {
        snprintf(pair, sizeof pair, "%s=%s", vars[i].name, v->values[i]);
        /* mpirun carries -x settings to every node; srun exports the environment it is
         * started with (--export=ALL) */
        if (srun)
            st = fb_strv_push(env, pair);
        else if ((st = fb_strv_push(argv, "-x")) == FB_OK)
            st = fb_strv_push(argv, pair);
        if (st != FB_OK)
            return st;
    }
    for (size_t i = 0; i < l->nextra; i++)
        if ((st = fb_strv_push(argv, l->extra[i])) != FB_OK)
            return st;
    if ((st = fb_strv_push(argv, exe)) != FB_OK)
        return st;
    for (size_t i = 0; i < ntail; i++)
        if ((st = fb_strv_push(argv, tail[i])) != FB_OK ||
            /* right after the command (run, soak), before any `--` of the user's */
            (i == 0 && fb_launch_self_binds(l, v->binding) &&
             (st = fb_strv_push(argv, "--self-bind")) != FB_OK))
            return st;
    return FB_OK;
}

size_t fb_launch_quote(const char *word, char *buf, size_t len)
{
    static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                               "_@%+=:,./-";
    size_t need = 0;
    bool plain = *word && strspn(word, safe) == strlen(word);

#define PUT(ch)                   \
    do {                          \
        if (need + 1 < len)       \
            buf[need] = (ch);     \
        need++;                   \
    } while (0)
    if (plain) {
        for (const char *p = word; *p; p++)
            PUT(*p);
    } else {
        PUT('\'');
        for (const char *p = word; *p; p++) {
            if (*p == '\'') {
                PUT('\'');
                PUT('\\');
                PUT('\'');
                PUT('\'');
            } else {
                PUT(*p);
            }
        }
        PUT('\'');
    }
#undef PUT
    if (len)
        buf[need < len ? need : len - 1] = '\0';
    return need;
}

char *fb_launch_command_line(const struct fb_strv *env, const struct fb_strv *argv)
{
    size_t total = 1, used = 0;
    char *line;

    for (size_t i = 0; i < env->n; i++)
        total += fb_launch_quote(env->v[i], NULL, 0) + 1;
    for (size_t i = 0; i < argv->n; i++)
        total += fb_launch_quote(argv->v[i], NULL, 0) + 1;
    if (!(line = malloc(total)))
        return NULL;
    line[0] = '\0';
    for (size_t k = 0; k < env->n + argv->n; k++) {
        const char *w = k < env->n ? env->v[k] : argv->v[k - env->n];
        if (k)
            line[used++] = ' ';
        /* NAME=VALUE stays unquoted up to the '=' so the shell still reads an assignment */
        if (k < env->n && strchr(w, '=')) {
            size_t name = (size_t)(strchr(w, '=') - w) + 1;
            memcpy(line + used, w, name);
            used += name;
            w += name;
            if (!*w)
                continue;
        }
        used += fb_launch_quote(w, line + used, total - used);
    }
    line[used] = '\0';
    return line;
}
