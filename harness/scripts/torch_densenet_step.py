#!/usr/bin/env python3
"""PyTorch's own DenseNet-121 training step, timed: the figure fabricbench's `compute` stand-in
is compared with on the same GPU (docs/benchmarks/compute.md). torchvision's densenet121 with
14 outputs, mixed precision (autocast fp16 or bf16, a GradScaler for fp16), Adam, synthetic
input; CUDA events around each step after warm-up; the median of the steps. Run by
harness/scripts/gpu-check.sh when torch and torchvision are installed, at compute's batch and
precision: its `images_per_s` is the peer of compute's step_ours in the check's summary.md."""
import argparse
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--resolution", type=int, default=224)
    ap.add_argument("--classes", type=int, default=14)
    ap.add_argument("--precision", choices=("fp16", "bf16", "fp32"), default="fp16")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()

    import torch
    import torchvision

    if not torch.cuda.is_available():
        print("no GPU visible to PyTorch")
        return 77
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    model = torchvision.models.densenet121(num_classes=args.classes).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": None}[args.precision]
    # torch.amp.GradScaler since torch 2.3; torch.cuda.amp's is deprecated there
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        scaler = torch.amp.GradScaler("cuda", enabled=args.precision == "fp16")
    else:
        scaler = torch.cuda.amp.GradScaler(enabled=args.precision == "fp16")
    x = torch.randn(args.batch, 3, args.resolution, args.resolution, device=dev)
    y = torch.randint(0, 2, (args.batch, args.classes), device=dev).float()
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)  # microseconds
    med = statistics.median(times)
    print(f"torch {torch.__version__} torchvision {torchvision.__version__} "
          f"{torch.cuda.get_device_name()} {args.precision} batch {args.batch} "
          f"resolution {args.resolution}")
    print(f"step_us median {med:.1f} min {min(times):.1f} max {max(times):.1f}; "
          f"images_per_s {args.batch / med * 1e6:.1f}; "
          f"peak_memory_bytes {torch.cuda.max_memory_allocated()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
