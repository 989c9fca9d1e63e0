"""The runtime companion on CPU: small real models trained in scenarios that trigger each check,
clean runs that must stay silent, and the guarantees (same numbers, hooks removed, no stacking)."""

from __future__ import annotations

import dataclasses
import json

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

import torchdoctor  # noqa: E402
from torch.nn.modules import module as module_hooks  # noqa: E402
from torch.optim import optimizer as optimizer_hooks  # noqa: E402


class MLP(nn.Module):
    def __init__(self, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.bn = nn.BatchNorm1d(16)
        self.drop = nn.Dropout(dropout)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.bn(self.fc1(x)))))


def batches(n=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(16, 8, generator=g), torch.randint(0, 3, (16,), generator=g)) for _ in range(n)]


def clean_training(model, steps=12, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for x, y in batches(steps):
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        for x, _ in batches(3, seed=1):
            model(x)
    model.train()
    return losses


def checks_of(doc):
    return sorted({f.check for f in doc.findings})


def test_clean_run_is_silent():
    torch.manual_seed(0)
    model = MLP()
    with torchdoctor.watch(model, every=1, quiet=True) as doc:
        clean_training(model)
    assert doc.findings == [], [f.message for f in doc.findings]
    assert doc.steps == 12


def test_every_check_on_clean_run_is_silent():
    from torchdoctor.runtime.checks import check_ids

    torch.manual_seed(0)
    model = MLP()
    with torchdoctor.watch(model, every=1, checks=sorted(check_ids()), quiet=True) as doc:
        clean_training(model)
    assert doc.findings == [], [f.message for f in doc.findings]


def test_watching_does_not_change_the_result():
    torch.manual_seed(0)
    plain_model = MLP()
    state = {k: v.clone() for k, v in plain_model.state_dict().items()}
    torch.manual_seed(1)
    plain = clean_training(plain_model)
    watched_model = MLP()
    watched_model.load_state_dict(state)
    torch.manual_seed(1)
    from torchdoctor.runtime.checks import check_ids

    with torchdoctor.watch(watched_model, every=1, checks=sorted(check_ids()), quiet=True):
        watched = clean_training(watched_model)
    assert plain == watched  # bitwise-identical losses
    for (name, a), b in zip(plain_model.state_dict().items(), watched_model.state_dict().values()):
        assert torch.equal(a, b), name


def _global_hook_counts():
    return (
        len(module_hooks._global_forward_pre_hooks),
        len(module_hooks._global_forward_hooks),
        len(optimizer_hooks._global_optimizer_pre_hooks),
        len(optimizer_hooks._global_optimizer_post_hooks),
        torch.Tensor.backward,
    )


def test_hooks_removed_on_exit_and_on_error_and_never_stacked():
    before = _global_hook_counts()
    model = MLP()
    with pytest.raises(ValueError):
        with torchdoctor.watch(model, quiet=True):
            with torchdoctor.watch(model, quiet=True) as inner:  # nested: adds nothing
                assert inner.unsupported
                assert len(module_hooks._global_forward_pre_hooks) == before[0] + 1
            raise ValueError("user error")
    assert _global_hook_counts() == before


def test_missing_zero_grad_is_grad_not_reset():
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with torchdoctor.watch(model, quiet=True) as doc:
        for x, y in batches(4):
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    (finding,) = [f for f in doc.findings if f.check == "grad-not-reset"]
    assert finding.severity == "error" and finding.step == 1


def test_gradient_accumulation_is_not_grad_not_reset():
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with torchdoctor.watch(model, quiet=True) as doc:
        for i, (x, y) in enumerate(batches(12)):
            (nn.functional.cross_entropy(model(x), y) / 4).backward()
            if (i + 1) % 4 == 0:
                opt.step()
                opt.zero_grad()
    assert "grad-not-reset" not in checks_of(doc)


def test_zero_grad_without_set_to_none_is_a_reset():
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with torchdoctor.watch(model, quiet=True) as doc:
        for x, y in batches(4):
            opt.zero_grad(set_to_none=False)
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    assert "grad-not-reset" not in checks_of(doc)


class PlainListNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(8, 8)
        self.blocks = [nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(2)]

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return x


def test_unregistered_module_names_the_attribute():
    model = PlainListNet()
    opt = torch.optim.Adam(model.parameters())
    with torchdoctor.watch(model, quiet=True) as doc:
        for x, _ in batches(2):
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
    found = [f for f in doc.findings if f.check == "unregistered-module"]
    assert [f.module for f in found] == ["PlainListNet.blocks[0]", "PlainListNet.blocks[1]"]
    assert found[0].details["parameters"] == 72


def test_params_not_optimized_and_unused_parameters():
    model = MLP()
    model.unused = nn.Linear(3, 3)
    opt = torch.optim.SGD(list(model.fc2.parameters()), lr=0.1)  # forgot fc1 and bn
    with torchdoctor.watch(model, quiet=True) as doc:
        for x, y in batches(3):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    by_check = {f.check: f for f in doc.findings}
    assert "fc1.weight" in by_check["params-not-optimized"].details["parameters"]
    assert "bn.weight" in by_check["params-not-optimized"].details["parameters"]
    assert by_check["unused-parameters"].details["parameters"] == ["unused.weight", "unused.bias"]


def test_grad_explosion_names_the_layer():
    torch.manual_seed(0)
    model = MLP(dropout=0.0)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    with torchdoctor.watch(model, every=1, quiet=True) as doc:
        for i, (x, y) in enumerate(batches(10)):
            opt.zero_grad()
            scale = 1e5 if i == 8 else 1.0
            (nn.functional.cross_entropy(model(x), y) * scale).backward()
            opt.step()
    found = [f for f in doc.findings if f.check == "grad-explosion"]
    assert found and found[0].step == 8
    assert {f.module for f in found} <= {"fc1", "bn", "fc2"}


def test_grad_vanishing():
    model = nn.Sequential(nn.Linear(8, 8), nn.Sigmoid(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    with torchdoctor.watch(model, every=1, quiet=True) as doc:
        for x, _ in batches(6):
            opt.zero_grad()
            (model(x).sum() * 1e-12).backward()
            opt.step()
    assert "grad-vanishing" in checks_of(doc)


class Log(nn.Module):
    def forward(self, x):
        return torch.log(x)


def test_non_finite_names_the_producer_not_every_layer_after():
    model = nn.Sequential(nn.Linear(8, 8), Log(), nn.Linear(8, 8), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with torchdoctor.watch(model, every=1, quiet=True) as doc:
        for x, _ in batches(2):
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
    forward = [f for f in doc.findings if f.check == "non-finite" and "forward" in f.message]
    assert [f.module for f in forward] == ["1"]
    assert any(f.check == "non-finite" and "gradients" in f.message for f in doc.findings)


def test_non_contiguous_input():
    model = nn.Sequential(nn.Linear(8, 8))
    with torchdoctor.watch(model, checks=["non-contiguous-input"], quiet=True) as doc:
        for _ in range(10):
            model(torch.randn(8, 16).t())
    (f,) = doc.findings
    assert f.module == "0" and f.details["non_contiguous"] == 10 and f.details["stride"] == [1, 16]


def test_train_mode_eval_and_eval_graph_built():
    model = MLP()
    with torchdoctor.watch(model, quiet=True) as doc:
        with torch.no_grad():
            model(torch.randn(4, 8))  # still in training mode
        model.eval()
        for x, _ in batches(4):
            model(x).argmax(1)  # gradients on: graphs nobody uses
    assert {"train-mode-eval", "eval-graph-built"} <= set(checks_of(doc))
    built = next(f for f in doc.findings if f.check == "eval-graph-built")
    assert built.details["unused_graphs"] == 4


def test_graph_retention_from_running_loss():
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    running = 0.0
    with torchdoctor.watch(model, quiet=True) as doc:
        for x, y in batches(12):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            running += loss  # keeps every step's graph alive
    assert "graph-retention" in checks_of(doc)
    assert running.grad_fn is not None


def test_sampler_without_set_epoch():
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    data = TensorDataset(torch.randn(32, 8))
    sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    with torchdoctor.watch(quiet=True) as doc:
        for epoch in range(3):
            for _ in loader:
                pass
    (f,) = doc.findings
    assert f.check == "sampler-epoch"
    with torchdoctor.watch(quiet=True) as doc:
        for epoch in range(3):
            sampler.set_epoch(epoch)
            for _ in loader:
                pass
    assert doc.findings == []


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.mask = torch.ones(4)  # a plain attribute: .to() leaves it behind

    def forward(self, x):
        return self.fc(x) * self.mask


def test_device_crash_is_enriched_not_swallowed():
    """meta stands in for a second device on CPU-only machines; the GPU test does it for real."""
    model = Masked()
    model.fc.to("meta")
    with pytest.raises(RuntimeError) as info:
        with torchdoctor.watch(model, quiet=True) as doc:
            model(torch.randn(2, 4))
    note = "\n".join(getattr(info.value, "__notes__", []))
    assert "torchdoctor: while running 'fc' (Linear)" in note
    assert "args[0] on cpu" in note and "parameter 'weight' on meta" in note
    found = [f for f in doc.findings if f.check == "device-mismatch"]
    assert found and found[0].module == "fc" and found[0].severity == "error"


def test_inputs_on_another_device_reported_before_the_crash():
    model = nn.Sequential(nn.Linear(4, 4)).to("meta")
    with pytest.raises(RuntimeError):
        with torchdoctor.watch(model, quiet=True) as doc:
            model(torch.randn(2, 4))
    messages = [f.message for f in doc.findings if f.check == "device-mismatch"]
    assert any("args[0] on cpu" in m and "(meta)" in m for m in messages)


@dataclasses.dataclass
class Output:
    logits: torch.Tensor
    aux: dict


class FancyOutputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        logits = self.fc(x)
        return Output(logits, {"hidden": (logits * 2, [logits])})


def test_models_returning_dataclasses_dicts_and_tuples_work():
    model = FancyOutputs()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with torchdoctor.watch(model, every=1, quiet=True) as doc:
        for x, y in batches(3):
            opt.zero_grad()
            out = model(x)
            nn.functional.cross_entropy(out.logits, y).backward()
            opt.step()
    assert doc.findings == []


def test_report_json_and_options(tmp_path):
    model = MLP()
    path = tmp_path / "run.json"
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with torchdoctor.watch(model, report=str(path), skip=["grad-not-reset"], quiet=True) as doc:
        for x, y in batches(3):
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    data = json.loads(path.read_text())
    assert set(data) == {"findings", "steps", "torch", "device"}
    assert data["steps"] == 3 and data["device"] == "cpu"
    assert all(f["check"] != "grad-not-reset" for f in data["findings"])
    with pytest.raises(ValueError, match="unknown check 'nope'"):
        torchdoctor.watch(model, checks=["nope"])


def test_summary_is_printed_on_exit(capsys):
    model = PlainListNet()
    with torchdoctor.watch(model):
        model(torch.randn(2, 8))
    err = capsys.readouterr().err
    assert "torchdoctor watched 0 steps on cpu: 2 findings" in err
    assert "unregistered-module" in err
