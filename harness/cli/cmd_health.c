/* `fabricbench health [--profile NAME|FILE] [--gpus N] [--ib-ports N] [--ib-rate GBPS]
 * [--drain [--node NAME]]`: one node's hardware against what it should have, in a fraction of a
 * second, for Slurm's HealthCheckProgram or a job prolog (docs/slurm.md). One line, exit 0
 * healthy, 1 not, 2 bad input. With --drain a node found wrong is drained through `scontrol
 * update` with the line as its reason. No MPI. */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "escape.h"
#include "health.h"
#include "hostlist.h"
#include "log.h"
#include "node_health.h"
#include "profile.h"
#include "profile_find.h"
#include "slurm_node.h"
#include "units.h"

static void usage(void)
{
    printf("usage: fabricbench health [--profile NAME|FILE] [--gpus N] [--ib-ports N]\n"
           "                          [--ib-rate GBPS] [--drain [--node NAME]]\n"
           "Checks this node's hardware by reading sysfs, measuring nothing: the NVIDIA GPUs on\n"
           "its PCI bus, its InfiniBand ports that are ACTIVE and their rates, and every PCIe link\n"
           "of a GPU (width) or HCA (speed and width) at its maximum. One line: 'health NODE: OK:\n"
           "...' or 'health NODE: FAIL: ...' with every finding. For Slurm's HealthCheckProgram\n"
           "or a job prolog (docs/slurm.md). No MPI: run it without mpirun or srun.\n\n"
           "  --profile NAME|FILE  what the node should have: [node] gpus, [infiniband] ports\n"
           "                  and rate_gbps of a hardware profile (as `accept --profile`)\n"
           "  --gpus N        NVIDIA GPUs the node must have, exactly (overrides the profile)\n"
           "  --ib-ports N    ACTIVE InfiniBand ports, at least (overrides the profile)\n"
           "  --ib-rate GBPS  each ACTIVE port's rate in Gb/s, at least (overrides the profile)\n"
           "  --drain         on FAIL, drain the node: scontrol update NodeName=NODE\n"
           "                  State=DRAIN Reason='fabricbench health: ...', unless an\n"
           "                  administrator drained it for another reason (left as it is)\n"
           "  --node NAME     the Slurm node name (default: $SLURMD_NODENAME, else the host\n"
           "                  name up to its first dot)\n"
           "  --help          this text\n\n"
           "Without an expectation only the PCIe links are judged. sysfs is read under\n"
           "$FB_SYSFS_ROOT when set (default /sys).\n\n"
           "exit status: 0 healthy, 1 a finding (drained with --drain; a drain that failed is\n"
           "said on stderr), 2 bad input\n");
}

/* --drain: the node out through scontrol, unless an administrator drained it first. */
static void drain(const char *node, const char *line)
{
    static const char ours[] = "fabricbench health: ";
    char reason[1200], shown[600];
    struct fb_slurm_node seen;
    int rc = 0;

    snprintf(reason, sizeof reason, "%s%s", ours, line);
    switch (fb_slurm_drain(node, reason, ours, &seen, &rc)) {
    case FB_SLURM_DRAINED: break;
    case FB_SLURM_LEFT:
        fb_error("health: %s is already %s for another reason ('%s'): left as it is", node,
                 seen.state, fb_escape_str(seen.reason, 200, shown, sizeof shown));
        break;
    case FB_SLURM_FAILED:
        fb_error("health: could not drain %s: scontrol update exited %d", node, rc);
        break;
    }
}

int fb_cmd_health(int argc, char **argv)
{
    static const struct option options[] = {
        {"profile", required_argument, NULL, 'p'}, {"gpus", required_argument, NULL, 'g'},
        {"ib-ports", required_argument, NULL, 'i'}, {"ib-rate", required_argument, NULL, 'r'},
        {"drain", no_argument, NULL, 'd'},          {"node", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    struct fb_node_expect e = {.gpus = -1, .ib_ports = -1, .ib_rate_gbps = -1};
    const char *profile_path = NULL, *node = NULL;
    long gpus = -1, ports = -1;
    double rate = -1;
    bool do_drain = false;
    char why[1024], found[4096], host[256], shown[160];
    struct fb_profile *p = NULL;
    struct fb_node_health h;
    int c;

    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        fb_status st = FB_OK;
        switch (c) {
        case 'p': profile_path = optarg; break;
        case 'g':
            st = fb_count_parse(optarg, 0, FB_PROFILE_COUNT_MAX, &gpus, why, sizeof why);
            break;
        case 'i':
            st = fb_count_parse(optarg, 0, FB_PROFILE_COUNT_MAX, &ports, why, sizeof why);
            break;
        case 'r': st = fb_real_parse(optarg, 1e-3, 1e6, &rate, why, sizeof why); break;
        case 'd': do_drain = true; break;
        case 'n': node = optarg; break;
        case 'h': usage(); return 0;
        default:
            fb_cli_option_error(c, argv, why, sizeof why);
            fb_error("health: %s (see `fabricbench health --help`)", why);
            return 2;
        }
        if (st != FB_OK) {
            fb_error("health: bad value for --%s: %s", options[c == 'g' ? 1 : c == 'i' ? 2 : 3].name,
                     why);
            return 2;
        }
    }
    if (optind != argc) {
        fb_error("health: unexpected argument '%s' (it takes options only)",
                 fb_escape_str(argv[optind], 60, shown, sizeof shown));
        return 2;
    }
    if (!node && getenv("SLURMD_NODENAME") && *getenv("SLURMD_NODENAME"))
        node = getenv("SLURMD_NODENAME");
    if (!node) {
        if (gethostname(host, sizeof host) != 0)
            snprintf(host, sizeof host, "localhost");
        host[sizeof host - 1] = '\0';
        host[strcspn(host, ".")] = '\0';
        node = host;
    }
    if (!fb_hostlist_name_ok(node)) {
        fb_error("health: node name '%s' is not a Slurm node name (letters, digits, '.', '_', "
                 "'-'): give --node",
                 fb_escape_str(node, 60, shown, sizeof shown));
        return 2;
    }
    if (profile_path) {
        if (!(p = malloc(sizeof *p))) {
            fb_error("health: out of memory");
            return 2;
        }
        if (fb_profile_find(profile_path, NULL, getenv("FB_PROFILE_PATH"), found, sizeof found,
                            why, sizeof why) != FB_OK ||
            fb_profile_load(found, p, why, sizeof why) != FB_OK) {
            fb_error("health: %s", why);
            free(p);
            return 2;
        }
        e.gpus = p->gpus;
        e.ib_ports = p->ib_ports;
        e.ib_rate_gbps = p->ib_rate_gbps;
        free(p);
    }
    if (gpus >= 0)
        e.gpus = (int)gpus;
    if (ports >= 0)
        e.ib_ports = (int)ports;
    if (rate > 0)
        e.ib_rate_gbps = rate;
    fb_status st = fb_node_health_check(&e, fb_health_sysfs_root(), &h);
    if (st == FB_ERR_IO) {
        /* no PCI bus to read: a wrong FB_SYSFS_ROOT would read as a node without GPUs */
        fb_error("health: cannot read %s/bus/pci/devices (not a sysfs tree?)",
                 fb_escape_str(fb_health_sysfs_root(), 200, shown, sizeof shown));
        return 2;
    }
    if (st != FB_OK) {
        fb_error("health: out of memory reading %s",
                 fb_escape_str(fb_health_sysfs_root(), 200, shown, sizeof shown));
        return 2;
    }
    printf("health %s: %s: %s\n", node, h.findings ? "FAIL" : "OK", h.reason);
    fflush(stdout);
    if (!h.findings)
        return 0;
    if (do_drain)
        drain(node, h.reason);
    return 1;
}
