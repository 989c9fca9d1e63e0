"""Runtime overhead of `torchdoctor.watch` on a GPU: plain step vs watched, in one process.

    python benchmarks/watch_overhead.py [--steps 120] [--memory-steps 1000] [--quick]

Models: a GPT-2-small-sized transformer (12 layers, d=768, 12 heads, 1024 tokens, bf16
autocast) and a ResNet-style CNN (bf16 autocast). Variants: plain, watch with the default
checks, watch with every check, and a naive hook set for reference (a per-module
`isfinite().item()` and per-parameter `norm().item()`, the design torchdoctor avoids).
Prints the median step time of each and the ratio to plain, measured in the same process,
interleaved in rounds so clock drift hits every variant alike. Then runs 1,000 watched
steps and reports host RSS and CUDA allocation at the start and end (no growth expected).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import torchdoctor
from torchdoctor.runtime.checks import check_ids


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.1 if self.training else 0.0)
        x = x + self.drop(self.proj(y.transpose(1, 2).reshape(b, t, c)))
        return x + self.drop(self.mlp(self.ln2(x)))


class GPT(nn.Module):
    def __init__(self, vocab=50304, dim=768, heads=12, depth=12, block=1024):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


class ResBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))) + self.short(x))


class ResNet(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [ResBlock(cin, cout, stride), ResBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1).flatten(1))


def make_workload(name: str, quick: bool):
    if name == "gpt2-small":
        model = GPT(depth=4 if quick else 12).cuda()
        batch, seq = (4, 256) if quick else (8, 1024)
        data = torch.randint(0, 50304, (batch, seq + 1), device="cuda")

        def loss_fn():
            logits = model(data[:, :-1])
            return F.cross_entropy(logits.view(-1, logits.size(-1)), data[:, 1:].reshape(-1))
    else:
        model = ResNet().cuda().to(memory_format=torch.channels_last)
        batch = 32 if quick else 128
        images = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
        labels = torch.randint(0, 1000, (batch,), device="cuda")

        def loss_fn():
            return F.cross_entropy(model(images), labels)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn()
        loss.backward()
        opt.step()
        return loss

    return model, step


class NaiveHooks:
    """The reference design to beat: host syncs in every hook."""

    def __init__(self, model):
        self.handles = []
        for m in model.modules():
            self.handles.append(m.register_forward_hook(self._check_output))
        for p in model.parameters():
            self.handles.append(p.register_post_accumulate_grad_hook(self._grad_norm))
        self.seen = 0.0

    def _check_output(self, module, args, output):
        if torch.is_tensor(output):
            self.seen += float(torch.isfinite(output).all().item())
        return None

    def _grad_norm(self, param):
        self.seen += param.grad.norm().item()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()


def time_steps(step, n: int) -> list[float]:
    times = []
    for _ in range(n):
        torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return times


def contexts(model):
    every = sorted(check_ids())
    return {
        "plain": lambda: _Null(),
        "watch (default checks)": lambda: torchdoctor.watch(model, quiet=True),
        "watch (every check)": lambda: torchdoctor.watch(model, checks=every, quiet=True),
        "naive hooks (reference)": lambda: NaiveHooks(model),
    }


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def measure(name: str, steps: int, rounds: int, quick: bool) -> dict[str, float]:
    model, step = make_workload(name, quick)
    for _ in range(10):
        step()  # warm-up: cuDNN autotune, allocator
    samples: dict[str, list[float]] = {k: [] for k in contexts(model)}
    for _ in range(rounds):
        for label, make in contexts(model).items():
            with make():
                time_steps(step, 3)  # let the variant settle (first sampled steps)
                samples[label] += time_steps(step, steps // rounds)
    medians = {k: statistics.median(v) for k, v in samples.items()}
    means = {k: statistics.fmean(v) for k, v in samples.items()}
    base, base_mean = medians["plain"], means["plain"]
    print(f"\n{name}: step time over {steps} steps per variant ({rounds} interleaved rounds)")
    print(f"  {'variant':<26} {'median ms':>10} {'ratio':>7} {'mean ms':>9} {'ratio':>7}")
    for label in medians:
        print(f"  {label:<26} {medians[label] * 1e3:10.2f} {medians[label] / base:7.3f} "
              f"{means[label] * 1e3:9.2f} {means[label] / base_mean:7.3f}")
    del model
    torch.cuda.empty_cache()
    return medians


def memory_soak(steps: int, quick: bool) -> None:
    model, step = make_workload("gpt2-small", True)
    for _ in range(5):
        step()
    with torchdoctor.watch(model, checks=sorted(check_ids()), quiet=True) as doc:
        marks = {}
        for i in range(1, steps + 1):
            step()
            if i in (100, steps):
                torch.cuda.synchronize()
                marks[i] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, torch.cuda.memory_allocated())
    (rss0, cuda0), (rss1, cuda1) = marks[100], marks[steps]
    print(f"\nmemory over {steps} watched steps (every check, small GPT): host max RSS {rss0 / 1024:.1f} -> "
          f"{rss1 / 1024:.1f} MiB, CUDA allocated {cuda0 / 2**20:.1f} -> {cuda1 / 2**20:.1f} MiB; "
          f"findings: {[f.check for f in doc.findings] or 'none'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--memory-steps", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="smaller models, for a smoke run")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("watch_overhead needs a CUDA GPU", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = True
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    for name in ("gpt2-small", "resnet"):
        measure(name, args.steps, args.rounds, args.quick)
    memory_soak(args.memory_steps, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
