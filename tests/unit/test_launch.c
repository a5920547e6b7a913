/* Launch variants of `sweep`: which settings may vary, parsing --vary, the cartesian product
 * and its names, the binding arguments (the quickstart's reasoning), the mpirun and srun
 * argument vectors, and shell quoting of the printed command (checked by running it back
 * through /bin/sh). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "launch.h"
#include "test.h"

/* argv joined with spaces, unquoted, for comparisons */
static const char *joined(const struct fb_strv *a)
{
    static char buf[4096];
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < a->n; i++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", i ? " " : "", a->v[i]);
    return buf;
}

int main(void)
{
    char why[256];
    struct fb_launch_var v[3];

    /* names */
    CHECK(fb_launch_name_ok("NCCL_P2P_DISABLE"));
    CHECK(fb_launch_name_ok("NCCL_MIN_NCHANNELS"));
    CHECK(fb_launch_name_ok("UCX_TLS"));
    CHECK(fb_launch_name_ok("OMPI_MCA_btl"));
    CHECK(!fb_launch_name_ok("NCCL_"));
    CHECK(!fb_launch_name_ok("PATH"));
    CHECK(!fb_launch_name_ok("LD_PRELOAD"));
    CHECK(!fb_launch_name_ok("OMPI_ALLOW_RUN_AS_ROOT")); /* not an MCA parameter */
    CHECK(!fb_launch_name_ok("NCCL_X;rm"));
    CHECK(!fb_launch_name_ok("nccl_algo"));

    /* --vary */
    CHECK(fb_launch_var_parse("NCCL_P2P_DISABLE=0,1", &v[0], why, sizeof why) == FB_OK);
    CHECK(v[0].nvalues == 2);
    CHECK_STR(v[0].name, "NCCL_P2P_DISABLE");
    CHECK_STR(v[0].values[0], "0");
    CHECK_STR(v[0].values[1], "1");
    CHECK(fb_launch_var_parse("NCCL_SOCKET_IFNAME=eth0\\,eth1,=ib0", &v[1], why, sizeof why) ==
          FB_OK);
    CHECK(v[1].nvalues == 2);
    CHECK_STR(v[1].values[0], "eth0,eth1");
    CHECK_STR(v[1].values[1], "=ib0");
    CHECK(fb_launch_var_parse("NCCL_ALGO=Ring", &v[2], why, sizeof why) == FB_OK);
    {
        struct fb_launch_var bad;
        CHECK(fb_launch_var_parse("FOO=1,2", &bad, why, sizeof why) == FB_ERR_USAGE);
        CHECK_HAS(why, "'FOO' is not a launch setting");
        CHECK(fb_launch_var_parse("NCCL_ALGO", &bad, why, sizeof why) == FB_ERR_USAGE);
        CHECK_HAS(why, "has no values");
        CHECK(fb_launch_var_parse("NCCL_ALGO=", &bad, why, sizeof why) == FB_ERR_USAGE);
        CHECK(fb_launch_var_parse("NCCL_ALGO=Ring,,Tree", &bad, why, sizeof why) == FB_ERR_USAGE);
        CHECK_HAS(why, "empty value");
        CHECK(fb_launch_var_parse("NCCL_ALGO=Ring,Tree,", &bad, why, sizeof why) == FB_ERR_USAGE);
        CHECK(fb_launch_var_parse("NCCL_ALGO=Ring,Ring", &bad, why, sizeof why) == FB_ERR_USAGE);
        CHECK_HAS(why, "given twice");
        CHECK(fb_launch_var_parse("NCCL_ALGO=a\nb", &bad, why, sizeof why) == FB_ERR_USAGE);
    }

    /* the product: bindings outermost, the last var fastest; names of what varies */
    {
        enum fb_binding both[2] = {FB_BIND_SOCKET, FB_BIND_NONE};
        struct fb_launch_variant *var = NULL;
        size_t n = 0;
        CHECK(fb_launch_variants(both, 2, v, 3, &var, &n, why, sizeof why) == FB_OK);
        CHECK(n == 8);
        if (n == 8) {
            CHECK_STR(var[0].name, "bind-socket_NCCL_P2P_DISABLE-0_NCCL_SOCKET_IFNAME-eth0-eth1");
            CHECK_STR(var[1].name, "bind-socket_NCCL_P2P_DISABLE-0_NCCL_SOCKET_IFNAME--ib0");
            CHECK_STR(var[2].name, "bind-socket_NCCL_P2P_DISABLE-1_NCCL_SOCKET_IFNAME-eth0-eth1");
            CHECK_STR(var[7].name, "bind-none_NCCL_P2P_DISABLE-1_NCCL_SOCKET_IFNAME--ib0");
            CHECK(var[3].binding == FB_BIND_SOCKET && var[4].binding == FB_BIND_NONE);
            CHECK_STR(var[5].values[0], "0");
            CHECK_STR(var[5].values[1], "=ib0");
            CHECK_STR(var[5].values[2], "Ring"); /* one value: set, not in the name */
        }
        free(var);
        /* nothing varies: one launch */
        CHECK(fb_launch_variants(both, 1, v + 2, 1, &var, &n, why, sizeof why) == FB_OK);
        CHECK(n == 1);
        CHECK_STR(var[0].name, "default");
        free(var);
        /* binding alone */
        CHECK(fb_launch_variants(both, 2, NULL, 0, &var, &n, why, sizeof why) == FB_OK);
        CHECK(n == 2);
        CHECK_STR(var[0].name, "bind-socket");
        CHECK_STR(var[1].name, "bind-none");
        free(var);
    }
    /* values that read the same once cleaned get numbered */
    {
        struct fb_launch_var same;
        enum fb_binding one = FB_BIND_SOCKET;
        struct fb_launch_variant *var = NULL;
        size_t n = 0;
        CHECK(fb_launch_var_parse("NCCL_ALGO=a b,a-b,a/b", &same, why, sizeof why) == FB_OK);
        CHECK(fb_launch_variants(&one, 1, &same, 1, &var, &n, why, sizeof why) == FB_OK);
        CHECK(n == 3);
        if (n == 3) {
            CHECK_STR(var[0].name, "NCCL_ALGO-a-b");
            CHECK_STR(var[1].name, "NCCL_ALGO-a-b-2");
            CHECK_STR(var[2].name, "NCCL_ALGO-a-b-3");
        }
        free(var);
        fb_launch_var_free(&same);
    }
    /* too many */
    {
        struct fb_launch_var big[3];
        enum fb_binding one = FB_BIND_SOCKET;
        struct fb_launch_variant *var = NULL;
        size_t n = 0;
        const char *text = "NCCL_A=1,2,3,4,5,6,7,8,9,10,11,12";
        for (int i = 0; i < 3; i++)
            CHECK(fb_launch_var_parse(text, &big[i], why, sizeof why) == FB_OK);
        CHECK(fb_launch_variants(&one, 1, big, 3, &var, &n, why, sizeof why) == FB_ERR_USAGE);
        CHECK(var == NULL && n == 0);
        CHECK_HAS(why, "more than 1024 launch variants");
        for (int i = 0; i < 3; i++)
            fb_launch_var_free(&big[i]);
    }

    /* binding arguments */
    {
        struct fb_launch l = {FB_LAUNCHER_MPIRUN, 4, 4, 2, NULL, 0, false};
        struct fb_strv a = {0};
        fb_launch_binding_args(&l, FB_BIND_SOCKET, &a);
        CHECK_STR(joined(&a), "--map-by ppr:2:socket --bind-to socket");
        fb_strv_free(&a);
        l.np = 16; /* several nodes: K is per node, from this node's GPUs */
        fb_launch_binding_args(&l, FB_BIND_SOCKET, &a);
        CHECK_STR(joined(&a), "--map-by ppr:2:socket --bind-to socket");
        fb_strv_free(&a);
        CHECK(!fb_launch_self_binds(&l, FB_BIND_SOCKET));
        l.gpus = 3; /* GPUs that do not divide over the sockets: never dealt round robin, each
                       rank binds itself to its GPU's socket (issue 28) */
        fb_launch_binding_args(&l, FB_BIND_SOCKET, &a);
        CHECK_STR(joined(&a), "--bind-to none");
        CHECK(fb_launch_self_binds(&l, FB_BIND_SOCKET) && !fb_launch_self_binds(&l, FB_BIND_NONE));
        fb_strv_free(&a);
        {
            const struct fb_launch_variant v = {.binding = FB_BIND_SOCKET};
            const char *tail[] = {"run", "--out", "d", "--", "allreduce"};
            struct fb_strv env = {0};
            CHECK(fb_launch_command(&l, &v, NULL, 0, "fabricbench", tail, 5, &a, &env) == FB_OK);
            CHECK_STR(joined(&a), "mpirun -np 16 --bind-to none fabricbench run --self-bind --out "
                                  "d -- allreduce");
            fb_strv_free(&a);
            fb_strv_free(&env);
            l.gpus = 4;
            CHECK(fb_launch_command(&l, &v, NULL, 0, "fabricbench", tail, 5, &a, &env) == FB_OK);
            CHECK_STR(joined(&a), "mpirun -np 16 --map-by ppr:2:socket --bind-to socket "
                                  "fabricbench run --out d -- allreduce");
            fb_strv_free(&a);
            fb_strv_free(&env);
            l.gpus = 3;
        }
        l.gpus = 0, l.np = 2, l.sockets = 1; /* host: the ranks themselves */
        fb_launch_binding_args(&l, FB_BIND_SOCKET, &a);
        CHECK_STR(joined(&a), "--map-by ppr:2:socket --bind-to socket");
        fb_strv_free(&a);
        fb_launch_binding_args(&l, FB_BIND_NONE, &a);
        CHECK_STR(joined(&a), "--bind-to none");
        fb_strv_free(&a);
        fb_launch_binding_args(&l, FB_BIND_CORE, &a);
        CHECK_STR(joined(&a), "--map-by core --bind-to core");
        fb_strv_free(&a);
        l.launcher = FB_LAUNCHER_SRUN;
        /* srun: block:block, or Slurm's default second distribution (cyclic) deals the tasks
         * of a node round robin over its sockets */
        fb_launch_binding_args(&l, FB_BIND_CORE, &a);
        CHECK_STR(joined(&a), "--distribution=block:block --cpu-bind=cores");
        fb_strv_free(&a);
        fb_launch_binding_args(&l, FB_BIND_SOCKET, &a);
        CHECK_STR(joined(&a), "--distribution=block:block --cpu-bind=socket");
        fb_strv_free(&a);
        fb_launch_binding_args(&l, FB_BIND_NONE, &a);
        CHECK_STR(joined(&a), "--cpu-bind=none");
        fb_strv_free(&a);
        /* 3 GPUs on 2 sockets under srun too: the ranks bind themselves */
        l.gpus = 3, l.np = 3, l.sockets = 2;
        CHECK(fb_launch_self_binds(&l, FB_BIND_SOCKET));
        fb_launch_binding_args(&l, FB_BIND_SOCKET, &a);
        CHECK_STR(joined(&a), "--cpu-bind=none");
        fb_strv_free(&a);
        {
            const struct fb_launch_variant v = {.binding = FB_BIND_SOCKET};
            const char *tail[] = {"run", "allreduce"};
            struct fb_strv env = {0};
            CHECK(fb_launch_command(&l, &v, NULL, 0, "fabricbench", tail, 2, &a, &env) == FB_OK);
            CHECK_STR(joined(&a), "srun --ntasks 3 --cpu-bind=none --export=ALL fabricbench run "
                                  "--self-bind allreduce");
            fb_strv_free(&a);
            fb_strv_free(&env);
        }
    }

    /* whole commands */
    {
        const char *extra[] = {"--oversubscribe", "--hostfile", "my hosts"};
        const char *tail[] = {"run", "--out", "r/x", "h2d"};
        struct fb_launch l = {FB_LAUNCHER_MPIRUN, 2, 0, 1, extra, 3, true};
        struct fb_launch_variant var = {.name = "x", .binding = FB_BIND_NONE,
                                        .values = {"1", "eth0,eth1", "Ring"}};
        struct fb_strv argv = {0}, env = {0};
        char *line;
        CHECK(fb_launch_command(&l, &var, v, 3, "/opt/fb bin/fabricbench", tail, 4, &argv,
                                &env) == FB_OK);
        CHECK_STR(joined(&argv), "mpirun -np 2 --bind-to none -x NCCL_P2P_DISABLE=1 -x "
                                 "NCCL_SOCKET_IFNAME=eth0,eth1 -x NCCL_ALGO=Ring "
                                 "--oversubscribe --hostfile my hosts /opt/fb bin/fabricbench "
                                 "run --out r/x h2d");
        CHECK(argv.v[argv.n] == NULL);
        CHECK_STR(joined(&env), "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
        line = fb_launch_command_line(&env, &argv);
        CHECK_STR(line, "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 "
                        "--bind-to none -x NCCL_P2P_DISABLE=1 -x NCCL_SOCKET_IFNAME=eth0,eth1 "
                        "-x NCCL_ALGO=Ring --oversubscribe --hostfile 'my hosts' "
                        "'/opt/fb bin/fabricbench' run --out r/x h2d");
        free(line);
        fb_strv_free(&argv);
        fb_strv_free(&env);

        l.launcher = FB_LAUNCHER_SRUN;
        l.nextra = 0;
        var.binding = FB_BIND_SOCKET;
        var.values[1] = "it's";
        CHECK(fb_launch_command(&l, &var, v, 3, "fabricbench", tail, 1, &argv, &env) == FB_OK);
        CHECK_STR(joined(&argv), "srun --ntasks 2 --distribution=block:block --cpu-bind=socket "
                                 "--export=ALL fabricbench run");
        /* srun's settings travel in its environment; root needs nothing for srun */
        CHECK_STR(joined(&env), "NCCL_P2P_DISABLE=1 NCCL_SOCKET_IFNAME=it's NCCL_ALGO=Ring");
        line = fb_launch_command_line(&env, &argv);
        CHECK_STR(line, "NCCL_P2P_DISABLE=1 NCCL_SOCKET_IFNAME='it'\\''s' NCCL_ALGO=Ring srun "
                        "--ntasks 2 --distribution=block:block --cpu-bind=socket --export=ALL "
                        "fabricbench run");
        free(line);
        fb_strv_free(&argv);
        fb_strv_free(&env);
    }

    /* quoting, and the shell reading it back as the same words */
    {
        const char *words[] = {"plain-1.0/x:y=z,w", "", "two words", "it's", "$HOME", "a\"b",
                               "back\\slash", "*", "~x", "new\nline"};
        char buf[128], cmd[4096];
        size_t used = 0;
        fb_launch_quote("plain", buf, sizeof buf);
        CHECK_STR(buf, "plain");
        fb_launch_quote("", buf, sizeof buf);
        CHECK_STR(buf, "''");
        fb_launch_quote("it's", buf, sizeof buf);
        CHECK_STR(buf, "'it'\\''s'");
        CHECK(fb_launch_quote("two words", NULL, 0) == 11);
        fb_launch_quote("two words", buf, 5); /* cut, still terminated */
        CHECK_STR(buf, "'two");
        used = (size_t)snprintf(cmd, sizeof cmd, "printf '[%%s]' ");
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
            used += fb_launch_quote(words[i], cmd + used, sizeof cmd - used);
            cmd[used++] = ' ';
        }
        cmd[used] = '\0';
        FILE *sh = popen(cmd, "r");
        char out[1024] = "";
        size_t got = sh ? fread(out, 1, sizeof out - 1, sh) : 0;
        out[got] = '\0';
        if (sh)
            pclose(sh);
        CHECK_STR(out, "[plain-1.0/x:y=z,w][][two words][it's][$HOME][a\"b][back\\slash][*][~x]"
                       "[new\nline]");
    }
    for (int i = 0; i < 3; i++)
        fb_launch_var_free(&v[i]);
    TEST_DONE();
}
