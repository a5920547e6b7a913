#!/usr/bin/env python3
"""PyTorch's pinned host-to-device and device-to-host copies, timed as fabricbench's h2d times
its pinned cases: a page-locked host tensor and a device tensor of BYTES bytes, back-to-back
non-blocking copies on one stream between two CUDA events, the median over trials of the time
per copy; GB/s = 1e9 bytes/s. The peer of h2d's pinned_h2d and pinned_d2h rows in
harness/scripts/gpu-check.sh's summary.md. Prints one line per case and size:
`<case> <bytes> bandwidth_gbps <median>`."""
import argparse
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bytes", required=True, help="sizes in bytes, comma-separated")
    ap.add_argument("--trials", type=int, default=10)
    args = ap.parse_args()
    try:
        sizes = [int(s) for s in args.bytes.split(",") if s]
    except ValueError:
        print(f"--bytes: not a list of integers: '{args.bytes}'", file=sys.stderr)
        return 2
    if not sizes or min(sizes) <= 0:
        print(f"--bytes: sizes must be positive: '{args.bytes}'", file=sys.stderr)
        return 2

    import torch

    if not torch.cuda.is_available():
        print("no GPU visible to PyTorch")
        return 77
    print(f"torch {torch.__version__} {torch.cuda.get_device_name()}")
    for n in sizes:
        host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        dev = torch.empty(n, dtype=torch.uint8, device="cuda")
        # about 64 MiB per trial, as fabricbench calibrates its trials to a few milliseconds
        iters = max(1, min(1000, (64 << 20) // n))
        for case, dst, src in (("pinned_h2d", dev, host), ("pinned_d2h", host, dev)):
            for _ in range(3):
                dst.copy_(src, non_blocking=True)
            torch.cuda.synchronize()
            times = []
            for _ in range(args.trials):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(iters):
                    dst.copy_(src, non_blocking=True)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) * 1e-3 / iters)  # seconds per copy
            print(f"{case} {n} bandwidth_gbps {n / statistics.median(times) / 1e9:.3f}")
        del host, dev
    return 0


if __name__ == "__main__":
    sys.exit(main())
