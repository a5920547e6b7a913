/* InfiniBand (and RoCE) ports as libibverbs reports them: state, link layer and rate.
 * ib_verbs.c asks libibverbs; ib_stub.c stands in when the binary is built without it and
 * reports no ports. */
#ifndef FB_IB_H
#define FB_IB_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

struct fb_ib_port {
    char device[64];     /* "mlx5_0" */
    int port;            /* 1-based port number */
    char state[16];      /* "ACTIVE", "DOWN", "INIT", "ARMED", "ACTIVE_DEFER", "NOP" */
    char link_layer[16]; /* "InfiniBand", "Ethernet" (RoCE), or "unspecified" when unreadable */
    double rate_gbps;    /* lanes x per-lane signalling rate, Gb/s (1e9 bits/s); 0 when unknown */
    int width;           /* active lanes: 1, 2, 4, 8 or 12; 0 when unknown */
    char speed[16];      /* "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", or "?" */
};

/* Every port of every verbs device on this host. *out is malloc'ed (free() it; NULL when
 * *n == 0). No device at all (or no RDMA support in the kernel) is a valid answer: FB_OK with
 * *n == 0. FB_ERR_NOMEM, FB_ERR_IO when a device cannot be opened or queried. Not collective. */
fb_status fb_ib_ports(struct fb_ib_port **out, size_t *n);

/* Whether this binary was built with libibverbs (false: fb_ib_ports always answers none). */
bool fb_ib_built(void);

#endif
