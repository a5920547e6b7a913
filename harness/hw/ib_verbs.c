/* InfiniBand and RoCE ports through libibverbs: every port of every device, with its state,
 * link layer, width and speed. Devices that exist but cannot be opened (a container without
 * /dev/infiniband) are listed with state "NO_ACCESS" rather than hidden, since "the HCA is there
 * but unusable" is exactly what doctor must report. */
#define _GNU_SOURCE
#include "ib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "log.h"

bool fb_ib_built(void) { return true; }

static const char *port_state(enum ibv_port_state s)
{
    switch (s) {
    case IBV_PORT_NOP: return "NOP";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    }
    return "?";
}

static const char *link_layer(uint8_t ll)
{
    switch (ll) {
    /* Old kernels leave InfiniBand ports unspecified; ibv_devinfo reads it the same way. */
    case IBV_LINK_LAYER_UNSPECIFIED:
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    }
    return "unspecified";
}

/* IBTA width codes to lanes. */
static int width_lanes(uint8_t code)
{
    switch (code) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    }
    return 0;
}

/* IBTA speed codes to name and per-lane signalling rate in Gb/s (EDR 4x = 103.125 Gb/s on the
 * wire, sold as 100 Gb/s of data). Codes newer than this libibverbs (XDR) answer "?" and 0. */
static double lane_gbps(uint8_t code, const char **name)
{
    switch (code) {
    case 1: *name = "SDR"; return 2.5;
    case 2: *name = "DDR"; return 5.0;
    case 4: *name = "QDR"; return 10.0;
    case 8: *name = "FDR10"; return 10.3125;
    case 16: *name = "FDR"; return 14.0625;
    case 32: *name = "EDR"; return 25.78125;
    case 64: *name = "HDR"; return 53.125;
    case 128: *name = "NDR"; return 106.25;
    }
    *name = "?";
    return 0.0;
}

/* Appends one zeroed port to the array, growing it; NULL when out of memory. */
static struct fb_ib_port *port_add(struct fb_ib_port **arr, size_t *n, size_t *cap,
                                   const char *device, int port)
{
    struct fb_ib_port *p;

    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        struct fb_ib_port *grown = realloc(*arr, ncap * sizeof *grown);
        if (!grown)
            return NULL;
        *arr = grown;
        *cap = ncap;
    }
    p = &(*arr)[(*n)++];
    memset(p, 0, sizeof *p);
    snprintf(p->device, sizeof p->device, "%s", device);
    p->port = port;
    snprintf(p->speed, sizeof p->speed, "?");
    return p;
}

fb_status fb_ib_ports(struct fb_ib_port **out, size_t *n)
{
    struct ibv_device **list = NULL;
    struct ibv_context *ctx = NULL;
    struct fb_ib_port *ports = NULL, *p;
    size_t count = 0, cap = 0;
    int ndev = 0;
    fb_status st = FB_OK;

    *out = NULL;
    *n = 0;
    errno = 0;
    if (!(list = ibv_get_device_list(&ndev))) {
        /* ENOSYS: a kernel without RDMA support, which is simply a host with no HCA. */
        if (errno == ENOSYS || errno == 0)
            goto out;
        fb_error("cannot list InfiniBand devices: %s", strerror(errno));
        st = errno == ENOMEM ? FB_ERR_NOMEM : FB_ERR_IO;
        goto out;
    }
    for (int d = 0; d < ndev; d++) {
        const char *name = ibv_get_device_name(list[d]);
        struct ibv_device_attr dattr;

        if (!name)
            name = "?";
        if (!(ctx = ibv_open_device(list[d])) || ibv_query_device(ctx, &dattr) != 0) {
            fb_warn("cannot open InfiniBand device '%s': %s", name, strerror(errno));
            if (!(p = port_add(&ports, &count, &cap, name, 0))) {
                st = FB_ERR_NOMEM;
                goto out;
            }
            snprintf(p->state, sizeof p->state, "NO_ACCESS");
            snprintf(p->link_layer, sizeof p->link_layer, "unspecified");
            if (ctx)
                ibv_close_device(ctx);
            ctx = NULL;
            continue;
        }
        for (int port = 1; port <= dattr.phys_port_cnt; port++) {
            struct ibv_port_attr pa;
            const char *speed;
            double lane;

            if (!(p = port_add(&ports, &count, &cap, name, port))) {
                st = FB_ERR_NOMEM;
                goto out;
            }
            if (ibv_query_port(ctx, (uint8_t)port, &pa) != 0) {
                fb_warn("cannot query InfiniBand device '%s' port %d: %s", name, port,
                        strerror(errno));
                snprintf(p->state, sizeof p->state, "NO_ACCESS");
                snprintf(p->link_layer, sizeof p->link_layer, "unspecified");
                continue;
            }
            snprintf(p->state, sizeof p->state, "%s", port_state(pa.state));
            snprintf(p->link_layer, sizeof p->link_layer, "%s", link_layer(pa.link_layer));
            lane = lane_gbps(pa.active_speed, &speed);
            snprintf(p->speed, sizeof p->speed, "%s", speed);
            p->width = width_lanes(pa.active_width);
            p->rate_gbps = lane * p->width;
        }
        ibv_close_device(ctx);
        ctx = NULL;
    }
    *out = ports;
    *n = count;
    ports = NULL;
out:
    if (ctx)
        ibv_close_device(ctx);
    if (list)
        ibv_free_device_list(list);
    free(ports);
    return st;
}
