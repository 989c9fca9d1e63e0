"""GPU scenarios: real CUDA device mismatches and memory growth. Skipped without CUDA (CI has none)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA device", allow_module_level=True)

import torchdoctor  # noqa: E402

nn = torch.nn


class MaskedAttention(nn.Module):
    def __init__(self, n=16, d=32):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.mask = torch.tril(torch.ones(n, n))  # plain attribute: .cuda() leaves it on the CPU

    def forward(self, x):
        scores = self.proj(x) @ x.transpose(-2, -1)
        return scores.masked_fill(self.mask == 0, float("-inf")).softmax(-1) @ x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(32, 32), nn.ReLU())
        self.attn = MaskedAttention()

    def forward(self, x):
        return self.attn(self.encoder(x))


def test_plain_tensor_attribute_crash_is_located_to_module_and_tensor(capsys):
    model = Net().cuda()
    with pytest.raises(RuntimeError) as info:
        with torchdoctor.watch(model) as doc:
            model(torch.randn(2, 16, 32, device="cuda"))
    print("EXCEPTION:", info.value)
    for note in getattr(info.value, "__notes__", []):
        print("NOTE:", note)
    note = "\n".join(info.value.__notes__)
    assert "while running 'attn' (MaskedAttention)" in note
    assert "plain attribute 'mask' on cpu" in note and "register_buffer" in note
    (finding,) = [f for f in doc.findings if f.check == "device-mismatch"]
    assert finding.module == "attn" and finding.details["plain attribute mask"] == "cpu"
    print(capsys.readouterr().err)


def test_cpu_input_to_cuda_layer_is_reported_with_devices():
    model = nn.Sequential(nn.Linear(8, 8)).cuda()
    with pytest.raises(RuntimeError):
        with torchdoctor.watch(model, quiet=True) as doc:
            model(torch.randn(4, 8))
    messages = [f.message for f in doc.findings if f.check == "device-mismatch"]
    print(messages)
    assert any("args[0] on cpu" in m and "cuda:0" in m for m in messages)


def test_zero_dim_cpu_tensor_is_not_a_mismatch():
    model = nn.Linear(8, 8).cuda()
    with torchdoctor.watch(model, quiet=True) as doc:
        model(torch.randn(4, 8, device="cuda")) * torch.tensor(2.0)
    assert doc.findings == []


def test_cuda_memory_growth_from_kept_outputs():
    model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 512)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    kept = []
    with torchdoctor.watch(model, quiet=True) as doc:
        for _ in range(60):
            opt.zero_grad()
            out = model(torch.randn(256, 512, device="cuda"))
            loss = out.pow(2).mean()
            loss.backward()
            opt.step()
            kept.append(out)  # the classic leak: outputs (and their graphs) kept for "logging"
    growth = [f for f in doc.findings if f.check == "memory-growth"]
    print([f.message for f in growth])
    assert growth and growth[0].details["bytes_per_step"] > 256 * 1024


def test_clean_cuda_run_is_silent():
    model = nn.Sequential(nn.Linear(64, 64), nn.Dropout(0.1), nn.Linear(64, 4)).cuda()
    opt = torch.optim.AdamW(model.parameters(), fused=True)
    with torchdoctor.watch(model, every=5, quiet=True) as doc:
        for _ in range(40):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(torch.randn(32, 64, device="cuda")).float().pow(2).mean()
            loss.backward()
            opt.step()
    assert doc.findings == [], [f.message for f in doc.findings]


def test_compiled_model_is_reported_as_partly_supported_and_does_not_crash():
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU()).cuda()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with torchdoctor.watch(compiled, quiet=True) as doc:
        for _ in range(3):
            opt.zero_grad()
            compiled(torch.randn(4, 16, device="cuda")).sum().backward()
            opt.step()
    assert doc.unsupported and "torch.compile" in doc.unsupported[0]


DDP_SCRIPT = r'''
import json, os, sys
import torch, torch.distributed as dist, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
import torchdoctor

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(rank)
torch.manual_seed(0)
data = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
sampler = DistributedSampler(data, shuffle=True)
loader = DataLoader(data, batch_size=32, sampler=sampler)
model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).cuda(rank), device_ids=[rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with torchdoctor.watch(model, every=2, quiet=True, report=f"{sys.argv[1]}/rank{rank}.json") as doc:
    for epoch in range(3):  # no sampler.set_epoch: sampler-epoch must say so
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x.cuda(rank)), y.cuda(rank)).backward()
            opt.step()
dist.destroy_process_group()
'''


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_ddp_wrapped_model_on_two_gpus(tmp_path):
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "ddp_train.py"
    script.write_text(DDP_SCRIPT)
    env = {**os.environ, "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", str(script), str(tmp_path)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank in (0, 1):
        report = json.loads((tmp_path / f"rank{rank}.json").read_text())
        print(rank, report)
        assert report["steps"] == 12
        assert [f["check"] for f in report["findings"]] == ["sampler-epoch"]


# What TD004 reports and what it leaves alone, checked on the device itself: each judgement the
# rule makes about CPU tensors in forward (fixtures/rules/TD004) must match what CUDA does.
def _cpu_index(x):
    return x[torch.arange(x.shape[0])]


def _cpu_mask(x):
    return x[:, torch.arange(x.shape[1]) != 0, :]


def _cpu_index_put(x):
    x = x.clone()
    x[torch.randint(0, x.shape[0], (1,))] = 0.0
    return x


def _cpu_topk_indices(x):
    rows = torch.arange(x.shape[0])[..., None]
    keep = torch.randn(x.shape[0], x.shape[1]).topk(2, dim=-1).indices
    return x[rows, keep]


def _cpu_and_cuda_indices(x):
    return x[torch.arange(x.shape[0]), x[:, 0, 0].long().clamp(0, x.shape[1] - 1)]


def _zero_dim_out_of_place(x):
    return torch.tensor(0) + x.sum()


def _cpu_onehot_mixed(x):
    return torch.zeros(x.shape) * x


def _cpu_topk_values_mixed(x):
    best = torch.rand(x.shape[0], x.shape[1]).topk(2, dim=-1).values
    return x[:, :2, 0] * best


def _zero_dim_index_select(x):
    return torch.index_select(x, 0, torch.tensor(0))


def _element_of_one_d_literal(x):
    scale = torch.tensor([2.0])  # `scale_t[0]` handed on: one element is a 0-dim tensor
    return x * scale[0]


def _copied_onto_cuda_buffer(x):
    buffer = torch.zeros(1, device=x.device)
    buffer.copy_(torch.Tensor([1.0]))
    return x * buffer


def _type_as_moves(x):
    return x[..., 0] * torch.arange(x.shape[1]).type_as(x)


def _int_accumulator_then_mixed(x):
    offset = torch.tensor(0)
    offset += 3
    return torch.arange(x.shape[0], device=x.device) + offset


def _read_back_as_number(x):
    return x * 2 if torch.rand(1).item() < 2 else x


def _stack_cpu_with_cuda(x):
    return torch.stack((x[:, 0, 0].long(), torch.arange(x.shape[0])))


def _accumulate_cuda_into_cpu(x):
    total = torch.Tensor([0.0])
    total += x.sum()
    return total


def _cpu_values_into_cuda_slice(x):
    out = torch.zeros_like(x)
    out[1, :, 2] = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])  # RWKV's ROSA: a slice assignment copies across devices
    return out


def _cpu_index_rows_of_cuda_cache(x):
    cache = torch.zeros(4, 2, 6, 3, device=x.device)
    cache[torch.arange(0, 4, dtype=torch.long), :, 2, :] = x[:, :2, :]  # LoRA's GPT-2 cache: CPU rows, CUDA values
    return cache


def _cpu_mask_into_helper(x):
    def similarities(features, rows):
        return features[rows]  # torchdistill's SSKD: the helper only indexes with the CPU mask

    return similarities(x, torch.arange(x.shape[0]) % 2 == 0)


def _cpu_mask_written_through_cuda_mask(x):
    ids = (x[..., 0] > 0).long()
    masked = torch.bernoulli(torch.full(ids.shape, 0.5)).bool()  # ALBEF's MLM mask, drawn on the CPU
    masked[ids == 0] = False  # a CPU tensor written through a CUDA mask
    labels = ids.clone()
    labels[~masked] = -100
    return labels


def _one_element_count_as_slice_bound(x):
    n_channels = torch.IntTensor([2])  # WaveNet's `n_channels_tensor`, read back as `n_channels[0]`
    return x[:, : n_channels[0], :]


def _arange_into_cuda_grid_slice(x):
    grid = torch.zeros((x.shape[0], 16, 3)).to(x.device)
    grid[:, :, 1] = torch.arange(4).repeat(4) * 2 + 1  # co-tracker's query grid: a CPU arange copied into a slice
    return grid


def _host_encoding_into_cuda_slices(x):
    pe = torch.zeros(x.shape[1], 8, device=x.device)  # a from-scratch positional encoding
    position = torch.arange(0, x.shape[1], dtype=torch.float).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, 8, 2).float() * -0.5)
    pe[:, 0::2] = torch.sin(position * div_term)  # computed on the host, copied into the slices
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def _host_encoding_added_to_cuda_tensor(x):
    pe = torch.zeros(x.shape[1], 8, device=x.device)
    position = torch.arange(0, x.shape[1], dtype=torch.float).unsqueeze(1)
    return pe + torch.sin(position * 0.5)  # an addition, not a copy: raises


def _cpu_lengths_for_packing(x):
    mask = torch.ones(x.shape[:2], dtype=torch.bool)  # pytorchvideo's LSTM: the CPU mask gives the lengths
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, mask.sum(axis=1).clamp(1, x.shape[1]), batch_first=True, enforce_sorted=False)
    return torch.nn.utils.rnn.pad_packed_sequence(packed, batch_first=True)[0]


def _zero_dim_in_maximum(x):
    return torch.maximum(x.square().sum(-1, keepdim=True), torch.tensor(1e-12))  # co-tracker's norm floor


def _zero_dim_cpu_index_copy(x):
    cache = torch.zeros(4, 5, 8, device=x.device)
    input_pos = torch.tensor(7)  # lit-llama's rolled KV-cache position, made on the CPU
    return cache.index_copy(2, input_pos, x[..., :1])


def _arange_mixed_before_slice_write(x):
    out = x.clone()
    out[:, 0] = x[:, 0] + torch.arange(x.shape[0])[:, None]  # the sum raises before any copy
    return out


def _zero_dim_stacked_with_cuda_losses(x):
    losses = [x.sum(), torch.tensor(0.0)]  # vector-quantize's ResidualLFQ: a null loss made on the CPU
    return torch.stack(losses)


def _cuda_values_cat_onto_empty_cpu_placeholder(x):
    all_losses = torch.empty((0,))  # vector-quantize's ResidualVQ: grown with cat, layer by layer
    return torch.cat((all_losses, x.flatten()))


def _zero_dim_added_into_cuda_accumulator(x):
    loss = x.sum()
    loss += torch.tensor(0.0)  # vector-quantize's LatentQuantize: the CPU value is the addend
    return loss


def _cpu_draw_cast_to_int(x):
    size = int(5 * torch.zeros(1).normal_(mean=0.8, std=0.1).clip(0.5, 0.95))  # big-sleep's cutout size
    return x[:, :size]


def _cpu_flags_set_at_cuda_indices(x):
    valid = torch.zeros(4)
    valid[(x[:, 0, 0] > -10).nonzero().view(-1)] = 1  # OpenPCDet's MPPNet: CPU flags marked at CUDA indices
    return x * float(valid.sum())


def _cpu_flags_read_at_cuda_indices(x):
    valid = torch.zeros(4)
    return x * valid[(x[:, 0, 0] > -10).nonzero().view(-1)][:, None, None]  # MPPNet's later read of those flags


def _cuda_values_put_into_cpu_tensor(x):
    outputs = torch.zeros(4, 3)
    outputs[x[:, 0, 0] > -10] = x[:, 0, :]  # DeepCTR's DIEN: `zero_outputs[mask] = outputs` on a CPU buffer
    return outputs


def _cpu_repeats_for_repeat_interleave(x):
    return x.repeat_interleave(torch.tensor([1, 2, 1]), dim=2)  # pytorch-forecasting's N-HiTS output sizes


def _cpu_degrees_scattered_from_cuda_edges(x):
    rows = (x[:, 0, 0] > -10).nonzero().view(-1)
    return torch.zeros(4).scatter_add_(0, rows, x[:, 0, 0])  # DCRNN's node degrees


def _zero_dim_in_where(x):
    return torch.where(x > 0, x, torch.tensor(0.0))  # kornia's Otsu threshold: a 0-dim CPU fallback value


def _cpu_log_det_accumulated(x):
    total_logabsdet = torch.zeros(x.shape[0])  # normflows' Composite._cascade
    total_logabsdet += x[:, 0, 0]
    return total_logabsdet


def _cpu_flags_returned_then_read_as_masks(x):
    """OpenPCDet's MPPNet `generate_trajectory`: CPU flags set at CUDA indices, handed back, then read
    as masks of CUDA tensors by the caller (`effective_length[i]`)."""
    valid = torch.zeros([1, 3, 5])
    valid[:, 0] = 1
    fg = (x[0, :, 0] > -10).nonzero().view(-1)
    valid[0, 1, fg] = 1
    effective = valid[0, 1:3].bool()
    matching = torch.ones(3, 5, dtype=torch.long, device=x.device)
    bank = torch.randn(2, 5, 3, device=x.device)
    before = torch.zeros(5, 2, 3, device=x.device)
    for i in range(2):
        before[:, i][effective[i]] = bank[i, matching[1 + i][effective[i]]]
    return before


def _cpu_targets_for_ctc_loss(x):
    """flowtron's attention CTC loss: CUDA log-probabilities, targets and lengths made on the host."""
    log_probs = x.reshape(4, 15).log_softmax(-1)[:, None, :].expand(4, 2, 15).contiguous()  # (T, N, C)
    targets = torch.arange(1, 3).unsqueeze(0).expand(2, 2)
    lengths = torch.tensor([4, 4])
    return torch.nn.CTCLoss(zero_infinity=True)(log_probs, targets, input_lengths=lengths, target_lengths=torch.tensor([2, 2]))


def _cpu_full_lengths_for_ctc_loss(x):
    """The captcha readers' CTC loss: int32 lengths made by `torch.full` on the host, passed by position."""
    log_probs = x.reshape(4, 15).log_softmax(-1)[:, None, :].expand(4, 2, 15).contiguous()  # (T, N, C)
    targets = torch.randint(1, 15, (2, 2), device=x.device)
    input_lengths = torch.full(size=(2,), fill_value=log_probs.size(0), dtype=torch.int32)
    target_lengths = torch.full(size=(2,), fill_value=targets.size(1), dtype=torch.int32)
    return torch.nn.CTCLoss(blank=0)(log_probs, targets, input_lengths, target_lengths)


def _cpu_noise_ids_gathered_from_cuda_tokens(x):
    """A masked autoencoder's random masking: noise drawn on the host, sorted, and used to gather tokens."""
    noise = torch.rand(x.shape[0], x.shape[1])
    ids_keep = torch.argsort(noise, dim=1)[:, :2]
    return torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, x.shape[2]))


def _cpu_listed_targets_into_cross_entropy(x):
    """project-NN's spoofing models: targets looked up per file name and made into a tensor in forward."""
    target_vec = torch.tensor([0, 1, 1, 0], dtype=torch.long)
    return torch.nn.functional.cross_entropy(x.sum(-1)[:, :2], target_vec)


def _cpu_targets_scattered_into_cuda_index(x):
    """The same models' `_compose_logit`: a CUDA boolean index filled by `scatter_` at CPU target positions."""
    logits = x.sum(-1)
    index = torch.zeros_like(logits).bool()
    index.scatter_(1, torch.tensor([0, 1, 1, 0]).view(-1, 1), 1)
    return logits[index]


def _cpu_placeholder_head_returned_in_dict(x):
    """A board network without a policy head returns `torch.zeros(...)` beside a CUDA value head."""
    out = {"value": x.sum(-1), "policy": torch.zeros(x.shape[0], 5)}
    return torch.nn.functional.mse_loss(out["policy"], torch.ones(x.shape[0], 5, device=x.device)) + out["value"].mean()


def _cuda_zero_dim_times_cpu_vector(x):
    return x.sum() * torch.ones(x.shape[0])  # normflows' cached _Linear: a CUDA 0-dim log-det times CPU ones


def _window_indices_into_cuda_spectrogram(x):
    """open-unmix's Wiener filtering: CPU frame indices read and write CUDA tensors beside an int index,
    and the window moves on as a Python int read from the last index."""
    out = torch.zeros_like(x)
    pos = 0
    while pos < x.shape[1]:
        cur_frame = torch.arange(pos, min(x.shape[1], pos + 2))
        pos = int(cur_frame[-1]) + 1
        out[0, cur_frame] = x[0, cur_frame] * 2
    return out


def _host_shapes_from_cuda_tensors(x):
    """YOLOv2's loss: `coord_mask.expand_as(tcoord)`; expand_as/view_as/reshape_as read only the other
    tensor's shape, so a CPU tensor shaped after a CUDA one stays on the CPU until it is moved."""
    mask = torch.ones(4, 1, 3).expand_as(x)
    target = torch.zeros(60).view_as(x).reshape_as(x)
    assert mask.device.type == "cpu" and target.device.type == "cpu"
    return x * mask.cuda() + target.cuda()


def _zero_dim_fill_value_in_where(x):
    return torch.where(x > 0, torch.tensor(0.0), x)  # flair's lemmatizer masks encoder outputs with a CPU 0.0


def _random_bounds_as_python_numbers(x):
    """SpeechBrain-style augmentations: CPU draws as interpolate sizes, slice bounds, loop counts, and the
    bounds of another draw taken from a CUDA length minus a CPU 0-dim maximum."""
    c = torch.randint(1, 3, (1,))[0]
    w = torch.randint(c - 1, c + 1, (1,))[0] + 1
    left = torch.nn.functional.interpolate(x[None, :, :c, :], (w, x.shape[2]), mode="bilinear", align_corners=True)
    n_swaps = torch.randint(low=0, high=2, size=(1,))
    out = x.clone()
    for i in range(n_swaps):
        out[i] = x[i] * 2
    lengths = torch.full((4,), 5, device=x.device)
    length = torch.randint(low=1, high=3, size=(2,))
    start_max = max(0, lengths[0] - length.max())
    start = torch.randint(low=0, high=start_max + 1, size=(2,))
    end = start + length
    out[0, start[0]:end[0]] = 0.0
    return out * left.mean()


def _zero_dim_cpu_total_added_in_place(x):
    total = torch.zeros(())  # DeepFilterNet's spectral losses: a 0-dim start mixes out of place, not in place
    total += x.mean()
    return total


def _cpu_mask_set_at_cpu_and_cuda_indices(x):
    starts = (x[:, 0, 0].abs() * 2).long()  # LaneATT's invalid-offsets mask: a CPU row index beside CUDA columns
    mask = torch.zeros((x.shape[0], 10), dtype=torch.int)
    rows = torch.arange(x.shape[0])
    mask[rows, 1 + starts] = 1  # (a scalar written there works)
    mask[rows, 3 + starts] -= 1  # reading it back to subtract does not
    return mask


def _cuda_clamped_by_cpu_zero_dim_bounds(x):
    clip_value = torch.rand(1)[0] * 0.5 + 0.1  # SpeechBrain's DoClip: an element of a CPU draw as the bounds
    return x.clamp(-clip_value, clip_value)


@pytest.mark.parametrize(
    "pattern",
    [_random_bounds_as_python_numbers, _window_indices_into_cuda_spectrogram, _host_shapes_from_cuda_tensors, _zero_dim_fill_value_in_where, _zero_dim_in_where, _cpu_flags_set_at_cuda_indices, _cpu_values_into_cuda_slice, _arange_into_cuda_grid_slice, _cpu_lengths_for_packing, _zero_dim_in_maximum,
     _cpu_mask_written_through_cuda_mask, _one_element_count_as_slice_bound, _cpu_index_rows_of_cuda_cache, _cpu_mask_into_helper, _cpu_index, _cpu_mask, _cpu_index_put, _cpu_topk_indices, _cpu_and_cuda_indices, _zero_dim_out_of_place,
     _element_of_one_d_literal, _copied_onto_cuda_buffer, _type_as_moves, _int_accumulator_then_mixed,
     _read_back_as_number, _zero_dim_added_into_cuda_accumulator, _cpu_draw_cast_to_int, _cpu_flags_returned_then_read_as_masks,
     _cpu_targets_for_ctc_loss, _cpu_full_lengths_for_ctc_loss, _host_encoding_into_cuda_slices],
)
def test_cpu_tensors_td004_leaves_alone_work_on_cuda(pattern):
    x = torch.randn(4, 5, 3, device="cuda")
    assert pattern(x).device.type == "cuda"


@pytest.mark.parametrize(
    "pattern",
    [_cpu_onehot_mixed, _cpu_topk_values_mixed, _zero_dim_index_select, _stack_cpu_with_cuda, _accumulate_cuda_into_cpu,
     _arange_mixed_before_slice_write, _zero_dim_cpu_index_copy, _zero_dim_stacked_with_cuda_losses,
     _cuda_values_cat_onto_empty_cpu_placeholder, _cpu_flags_read_at_cuda_indices, _cuda_values_put_into_cpu_tensor,
     _cpu_repeats_for_repeat_interleave, _cpu_degrees_scattered_from_cuda_edges, _cpu_log_det_accumulated,
     _cuda_zero_dim_times_cpu_vector, _host_encoding_added_to_cuda_tensor, _cpu_noise_ids_gathered_from_cuda_tokens,
     _cpu_listed_targets_into_cross_entropy, _cpu_targets_scattered_into_cuda_index, _cpu_placeholder_head_returned_in_dict,
     _zero_dim_cpu_total_added_in_place, _cpu_mask_set_at_cpu_and_cuda_indices, _cuda_clamped_by_cpu_zero_dim_bounds],
)
def test_cpu_tensors_td004_reports_fail_on_cuda(pattern):
    with pytest.raises(RuntimeError, match="device"):
        pattern(torch.randn(4, 5, 3, device="cuda"))


@pytest.mark.parametrize("make_default", ["tensor_type", "device"])
def test_cuda_default_puts_factories_without_device_on_the_gpu(make_default):
    """NeuS and YOLACT call `torch.set_default_tensor_type('torch.cuda.FloatTensor')` before training:
    TD004 then leaves factories without `device=` alone (`ProjectIndex.sets_cuda_default`), but still
    reports a pinned `device="cpu"`."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # set_default_tensor_type is deprecated, and still works
            if make_default == "tensor_type":
                torch.set_default_tensor_type("torch.cuda.FloatTensor")
            else:
                torch.set_default_device("cuda")
        made = [torch.ones(3), torch.zeros(2, 2), torch.linspace(0, 1, 2), torch.arange(3), torch.randperm(4),
                torch.tensor([1.0, 2.0]), torch.tensor([1, 2]), torch.rand(2)]
        assert all(t.device.type == "cuda" for t in made), [t.device for t in made]
        assert torch.zeros(2, device="cpu").device.type == "cpu"
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if make_default == "tensor_type":
                torch.set_default_tensor_type("torch.FloatTensor")
            else:
                torch.set_default_device(None)
