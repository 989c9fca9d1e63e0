"""Facts about torch that the rules' judgements rest on and that need no GPU, checked on the CPU torch
CI installs (device facts are in test_gpu.py)."""

import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "wrap",
    [torch.nn.utils.spectral_norm, torch.nn.utils.parametrizations.spectral_norm],
    ids=["spectral_norm", "parametrizations.spectral_norm"],
)
def test_spectral_norm_acts_on_the_mode(wrap):
    """TD005 counts spectral norm as a layer that acts on the mode: in training mode every forward runs
    a power iteration that updates its `u` vector (and so the normalised weight); in eval mode it does not."""
    torch.manual_seed(0)
    layer = wrap(torch.nn.Linear(8, 8))

    def u():
        state = layer.state_dict()
        return next(v for k, v in state.items() if k.endswith("_u")).clone()

    x = torch.randn(4, 8)
    layer.eval()
    before = u()
    layer(x)
    assert torch.equal(u(), before)
    layer.train()
    layer(x)
    assert not torch.equal(u(), before)


def test_legacy_autograd_function_cannot_be_called():
    """TD004 skips the forward of a legacy autograd Function (`class Detect(Function)` with a non-static
    `def forward(self, ...)`, ssd.pytorch's detection layer): torch refuses to call it, so the CPU tensors
    its forward would make are never made."""

    class LegacyDetect(torch.autograd.Function):
        def forward(self, scores):
            return torch.zeros(scores.shape[0], 5)

    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        LegacyDetect()(torch.randn(3, 4))
