#!/usr/bin/env python3
"""A PyTorch MLP on sklearn's digits, its Linear layers run on the modelled core
(tpbsim.torch, SPEC §16, docs/PYTHON.md "PyTorch"):

1. trains a 64 -> 64 -> 32 -> 10 MLP in FP32 on the host (torch, a few seconds);
2. converts copies of it with MXFP8 and with MXFP4 weights
   (tpbsim.torch.convert: weights transposed and quantized once);
3. runs the test set through each on the core, prints the accuracy against FP32
   and each layer's profile (simulated time, TFLOPS, what bounds it, HBM bytes).

    build/tpbsim-python examples/python/digits_mlp.py [--perfetto trace.json]

Exits 1 when a quantized model loses more accuracy than it should (MXFP8: 1
point, MXFP4: 3 points): the example checks itself. Needs Debian's python3-torch
and python3-sklearn (scripts/install-deps.sh).
"""

import argparse
import copy
import sys

try:
    import torch
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
except ImportError as e:
    sys.exit(f"digits_mlp: {e}: this example needs python3-torch and python3-sklearn "
             "(scripts/install-deps.sh)")

import tpbsim.torch

# The most accuracy each format may lose against FP32, in points.
TOLERANCE = {"mxfp8": 1.0, "mxfp4": 3.0}


def data():
    x, y = load_digits(return_X_y=True)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    f = lambda a: torch.tensor(a / 16.0, dtype=torch.float32)   # noqa: E731  pixels 0..16
    return f(xtr), torch.tensor(ytr), f(xte), torch.tensor(yte)


def train(xtr, ytr):
    torch.manual_seed(0)
    torch.set_num_threads(1)       # small matrices: one thread is the fastest
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    for _ in range(120):                       # full batch: 1347 images
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(xtr), ytr).backward()
        opt.step()
    return model.eval()


def accuracy(logits, y):
    return 100.0 * (logits.argmax(dim=1) == y).float().mean().item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--perfetto", help="a Perfetto trace of the MXFP4 model's layers")
    args = ap.parse_args()
    xtr, ytr, xte, yte = data()
    model = train(xtr, ytr)
    with torch.no_grad():
        fp32 = accuracy(model(xte), yte)
    print(f"FP32 on the host: {fp32:.1f}% of {len(yte)} test digits")
    ok = True
    for weights in ("mxfp8", "mxfp4"):
        q = tpbsim.torch.convert(copy.deepcopy(model), weights=weights, arch="mariana")
        print(f"\n{weights.upper()} weights, MXFP8 activations, on the modelled core (mariana):")
        prof = tpbsim.torch.profile(q, xte, perfetto=args.perfetto if weights == "mxfp4" else None)
        acc = accuracy(prof.output, yte)
        drop = fp32 - acc
        print(f"accuracy {acc:.1f}% ({-drop:+.1f} points against FP32); "
              f"{len(prof.layers)} layers, {prof.total_ns / 1000:.2f} us simulated")
        if drop > TOLERANCE[weights]:
            print(f"FAILED: {weights} loses {drop:.1f} points (at most {TOLERANCE[weights]})")
            ok = False
    tpbsim.torch.release()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
