"""TD004: a CPU tensor created inside forward (or a helper it calls) of an nn.Module."""

from __future__ import annotations

import re
import weakref
from pathlib import Path

import libcst as cst

from torchdoctor.dataflow import is_none
from torchdoctor.decorators import is_no_grad_name
from torchdoctor.facts import AssignInfo, CallInfo, FunctionInfo, argument, call_receiver, calls_within, default_of, dotted_name, exclusive_branches, is_test_module, keyword_arg, names_in, positional_args, repeated_sequence
from torchdoctor.project import lookup_class
from torchdoctor.rule import Rule

_FACTORIES = {
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "arange", "range", "linspace", "logspace",
    "eye", "rand", "randn", "randint", "randperm", "tril_indices", "triu_indices", "from_numpy",
    "Tensor", "FloatTensor", "LongTensor", "IntTensor", "BoolTensor", "ByteTensor", "HalfTensor", "DoubleTensor",
}
_LITERAL_DATA = {"tensor", "as_tensor", "Tensor", "FloatTensor", "LongTensor", "IntTensor", "BoolTensor", "ByteTensor", "HalfTensor", "DoubleTensor"}
_MOVES = {"to", "cuda", "type_as", "copy_"}
_COLLECTIVES = {"all_reduce", "all_gather", "all_gather_into_tensor", "reduce", "broadcast", "reduce_scatter", "all_to_all_single"}
# Arguments that may be CPU tensors whatever the device, by (position, keyword): `pack_padded_sequence`'s
# lengths (read on the CPU), the shape tensor of ONNX-friendly `reshape_from_tensor_shape` (built from
# `shape_as_tensor`, a CPU tensor)
_CTC_HOST_ARGUMENTS = ((1, "targets"), (2, "input_lengths"), (3, "target_lengths"))
_HOST_ARGUMENTS = {
    "pack_padded_sequence": ((1, "lengths"),),
    "reshape_from_tensor_shape": ((1, "shape"),),
    # torchdiffeq coerces the time grid to y0's device (with a warning): `odeint(f, h, torch.tensor([0, eps]))`
    "odeint": ((2, "t"),),
    "odeint_adjoint": ((2, "t"),),
    # CTC targets and lengths on the CPU are what cuDNN's CTC needs, and the native CUDA kernel moves them
    # itself (flowtron's `self.CTCLoss(log_probs, torch.arange(1, n + 1)[None], ...)`, the captcha models'
    # `torch.full(size=(bs,), fill_value=t, dtype=torch.int32)` lengths; checked in tests/test_gpu.py)
    "ctc_loss": _CTC_HOST_ARGUMENTS,
    "CTCLoss": _CTC_HOST_ARGUMENTS,
    # the output size of `F.interpolate(x, (w, h))` is read as Python ints (SpeechBrain's time warping)
    "interpolate": ((1, "size"),),
}
# factories whose positional arguments and these keywords are sizes or bounds, read as Python numbers:
# `torch.randint(low=lo, high=start_max + 1, size=(drop_times[i],))`
_SIZED_FACTORIES = {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange"}
_SIZE_KEYWORDS = {"size", "low", "high", "start", "end", "step"}
_TO_ZERO_DIM = {"max", "min", "sum", "mean", "prod", "amax", "amin", "norm", "all", "any", "std", "var"}
_CPU_SIDE_METHODS = {"tolist", "item", "numel", "size", "dim", "numpy", "cpu"}
_INDEX_OPS = ("index_select", "gather", "take_along_dim", "index_add", "index_copy", "index_fill", "scatter", "scatter_add")
# Methods that reshape or fill a tensor where it is: a move at the end of the chain moves the factory.
_SHAPING = {
    "expand", "expand_as", "view", "view_as", "reshape", "reshape_as", "unsqueeze", "squeeze", "repeat", "t",
    "transpose", "permute", "flatten", "contiguous", "float", "long", "int", "bool", "half", "double", "type",
    "uniform_", "normal_", "fill_", "zero_", "random_", "bernoulli_", "exponential_", "triu", "tril", "clone",
}


class TensorCreatedInForward(Rule):
    code = "TD004"
    name = "tensor-created-in-forward"
    severity = "error"
    summary = "A tensor created in forward without device= stays on the CPU when the model runs on a GPU"
    rationale = """
        Factories such as `torch.tensor([...])`, `torch.zeros`, `torch.arange` or
        `torch.ones` create tensors on the CPU unless told otherwise. Inside `forward`
        they run on every call, after the model was moved with `.to("cuda")`, so the
        first operation that mixes the new tensor with the CUDA input raises
        `Expected all tensors to be on the same device`. The model works in CPU tests
        and crashes on the GPU. Measured on an H200 (torch 2.11): a 0-dim CPU tensor
        such as `torch.tensor(2.0)` mixes with CUDA tensors in out-of-place arithmetic,
        and a CUDA tensor indexed by a CPU index tensor (`x[idx]`) works, so neither is
        flagged; but a 0-dim CPU tensor passed to `index_select` as the index, or
        accumulated into in place (`total += loss`), raises and is; `torch.tensor([2.0])`,
        `arange` or a CPU input to `nn.Linear` raise. A hard-coded `.cuda()` or
        `device="cpu"` in `forward` breaks the other way.

        A CPU tensor is reported where it meets something on the model's device: the
        input, the model's layers, parameters and buffers, or what is computed from
        them. Host-only bookkeeping (indices shifted and combined on the CPU, an
        encoding filled and then moved with `.to(x.device)`), test doubles, data
        transforms that take a PIL image and zero-size placeholders are left alone.
    """
    bad = """
        import torch
        import torch.nn as nn

        class Attention(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                scores = q @ k.transpose(-2, -1)
                n = x.size(1)
                causal = torch.tril(torch.ones(n, n))  # expect: TD004
                scores = scores.masked_fill(causal == 0, float("-inf"))
                return scores.softmax(dim=-1) @ v
    """
    good = """
        import torch
        import torch.nn as nn

        class Attention(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                scores = q @ k.transpose(-2, -1)
                n = x.size(1)
                causal = torch.tril(torch.ones(n, n, device=x.device))
                scores = scores.masked_fill(causal == 0, float("-inf"))
                scale = torch.tensor(2.0)  # 0-dim: mixes with CUDA tensors
                rows = torch.arange(n)
                first = scores[:, rows, 0]  # CPU index tensors may index CUDA tensors
                return scores.softmax(dim=-1) @ v * scale + first.mean()
    """
    fixed = """
        import torch
        import torch.nn as nn

        class Attention(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                scores = q @ k.transpose(-2, -1)
                n = x.size(1)
                causal = torch.tril(torch.ones(n, n, device=x.device))
                scores = scores.masked_fill(causal == 0, float("-inf"))
                return scores.softmax(dim=-1) @ v
    """
    fix_hint = (
        "Create the tensor on the input's device (`device=x.device`, `torch.zeros_like(x)`, `x.new_zeros(...)`), "
        "or build it once in `__init__` with `self.register_buffer(...)` so `.to()` moves it."
    )
    triggers = ("forward",)

    def check(self, ctx):
        facts, training = ctx.facts, ctx.training
        if is_test_module(facts):
            return  # test doubles (`class TinyModel: forward -> torch.randn(...)`) run on the CPU by design
        self.movers = _device_movers(facts)
        params_of = _params_of(facts)
        _project_movers(ctx.project, facts, self.movers, params_of)
        scans: dict[int, _UseScan] = {}

        binding: set[int] = set()  # helpers whose callers are being asked: recursion gets no answer

        def bound_on_device(fn: FunctionInfo) -> dict[str, bool] | None:
            """Which of a helper's parameters its callers in this file pass device values to."""
            sites = [c for c in facts.calls_of(fn) if c.function is not fn]
            if not sites or id(fn) in binding:
                return None
            binding.add(id(fn))
            try:
                bound: dict[str, bool] = {}
                for site in sites:
                    device = scan_of(site.function).device
                    for param, value in _bind_arguments(site.node, fn.params):
                        bound[param] = bound.get(param, False) or device.touches(value)
                return bound
            finally:
                binding.discard(id(fn))

        host_params: dict[tuple[int, str], str | None] = {}

        def helper_reads_on_host(call: cst.Call, arg: cst.BaseExpression) -> str | None:
            """How a helper reads what it is handed: "index" for `self.similarities(feat, mask)` where the
            helper only writes `feat[mask]`; "cpu" for espnet's `self.loss_fn(ys_hat, ys_true, hlens, olens)`,
            which hands the lengths on to the CTC loss, read on the host. None otherwise."""
            info = facts.call_info(call)
            helper = facts.resolve_function(info) if info is not None else None
            if helper is None or helper.node is None:
                return None
            for param, value in _bind_arguments(call, helper.params):
                if value is arg:
                    key = (id(helper), param)
                    if key not in host_params:
                        host_params[key] = (
                            "index" if _only_indexes(helper, param, facts) else "cpu" if _only_host_arguments(helper, param) else None
                        )
                    return host_params[key]
            return None

        def scan_of(fn: FunctionInfo) -> "_UseScan":  # one walk per function, however often it is asked about
            if id(fn) not in scans:
                scans[id(fn)] = _UseScan(fn, self.movers, params_of, lambda: bound_on_device(fn), helper_reads_on_host)
            return scans[id(fn)]

        self.scan_of = scan_of
        reported: set[int] = set()
        for cls in facts.all_classes:
            forward = cls.methods.get("forward")
            autograd = "torch.autograd.Function" in cls.bases  # `def forward(ctx, x, f)`: runs on the input's device too
            if forward is None or not (autograd or training.is_module_class(facts, cls)) or _takes_host_data(facts, forward):
                continue
            if not _device_attributes(cls) and _takes_library_object(facts, training.project, forward):
                continue  # `TSDPLayer.forward(self, board: chess.Board)`: no tensor in, no weight held: no device to follow
            if cls.name.startswith(("Mock", "Fake", "Dummy", "Stub")):
                continue  # a test double, wherever it is written
            if autograd and forward.params[:1] == ("self",) and "staticmethod" not in forward.decorators:
                # ssd.pytorch's `class Detect(Function)` with `def forward(self, loc, conf, priors)`: a legacy
                # Function, which torch >= 1.5 refuses to call (`self.detect(...)` raises before it makes anything)
                continue
            for fn, direct in _forward_and_helpers(facts, forward):
                if not direct and _moved_at_every_call_site(facts, fn, scan_of):
                    continue  # `self.make_mask(t).to(x.device)`: the caller moves the result
                gpu_only = _holds_data_parallel(facts, cls) or bool(_GPU_CLASS_NAME.search(cls.name))
                # `def forward(self, batch_size=32)`: "hollow" when the module also holds no layer,
                # parameter or buffer, so nothing inside it is on the device at all
                # (a subclass of a torch layer holds that layer's weight: BART's `LearnedPositionalEmbedding(nn.Embedding)`)
                holds = _device_attributes(cls) or any(_TORCH_LAYER_BASE.match(b) for b in cls.bases)
                sampler = ("hollow" if not holds else "sampler") if _takes_no_tensor(forward) else None
                for finding in self._check_function(
                    ctx, cls.name, fn, forward if direct and not autograd else None, gpu_only, sampler
                ):
                    if id(finding.node) not in reported:  # a helper shared by a subclass's forward: once
                        reported.add(id(finding.node))
                        yield finding

    @staticmethod
    def _zero_dim_problem(ctx, fn: FunctionInfo, call, uses) -> str | None:
        """What breaks for a 0-dim CPU tensor (measured on an H200, torch 2.11): used as an index tensor
        (`index_select` requires the index on the input's device), or accumulated into in place
        (`total += cuda_loss` cannot write a CUDA result into a CPU tensor). Mixing it into
        out-of-place arithmetic works, and is not reported."""
        for user in uses.callers_of(call.node):
            arg = next((a for a in user.args if a.value is call.node), None)
            keyword = arg.keyword.value if arg is not None and arg.keyword is not None else ""
            if keyword in ("index", "indices") or _is_index_op(ctx, user, fn):
                return (
                    "is a CPU index tensor: `index_select`/`gather` on a CUDA input raises 'Expected all tensors "
                    "to be on the same device'; create it with `device=` from the input"
                )
        target = uses.assigned_name(call.node)
        if target is not None and any(
            c.context.order > call.context.order and (dotted_name(c.node.func) or "").rsplit(".", 1)[-1].rstrip("_") in _INDEX_OPS
            and any(dotted_name(a.value) == target for a in c.node.args)
            for c in fn.calls
        ):  # `input_pos = torch.tensor(n - 1)` ... `cache_k.index_copy(2, input_pos, k)` (lit-llama's KV cache)
            return (
                f"is a CPU index tensor ('{target}'): an index op on a CUDA tensor raises 'Expected all tensors "
                "to be on the same device'; create it with `device=` from the input"
            )
        lists = {c.receiver for c in fn.calls if c.method == "append" and c.receiver and c.node.args
                 and (c.node.args[0].value is call.node or target and dotted_name(c.node.args[0].value) == target)}
        stacked = _joined_with_device_values(ctx.facts, fn, call, target, uses, sorted(lists)) if _scalar_literal(call.node) else None
        if stacked is not None:  # `all_losses.append(torch.tensor(0.))` ... `torch.stack(all_losses)` (vector-quantize)
            return (
                f"is a CPU tensor stacked with the others by `{stacked}`: stack and cat require every tensor on one "
                "device and raise 'Expected all tensors to be on the same device'; create it with `device=`"
            )
        collective = next(
            (c for c in fn.calls if (c.qualname or "").rsplit(".", 1)[-1] in _COLLECTIVES
             and (c.qualname or "").startswith("torch.distributed.")
             and any(a.value is call.node or (target and dotted_name(a.value) == target) for a in c.node.args)),
            None,
        )
        if collective is not None:
            return (
                f"is a CPU tensor handed to `{collective.dotted}`: the NCCL backend of GPU training accepts only "
                "CUDA tensors and raises; create it with `device=` from the input"
            )
        added = any(a.augmented and a.value is not None and any(c is call.node for c in calls_within(a.value)) for a in fn.assigns)
        if target is not None and not added and any(
            a.augmented and a.targets == (target,) and not _host_number(a.value, fn) and not _computed_on_host(a.value, uses)
            and not _reads_only_itself(a.value, target) and not _reads_only_sizes(a.value)
            and a.context.order > call.context.order  # (`loss += ...` in the loop above, then `loss = torch.tensor(0.0)`)
            for a in fn.assigns
        ):  # (`state["offset"] += offset` with an int offset stays on the host; `loss += torch.tensor(0.0)` adds a scalar)
            return (
                f"starts '{target}' as a CPU tensor and accumulates into it in place: `{target} += ...` with a "
                "CUDA value raises 'Expected all tensors to be on the same device'; create it with `device=`"
            )
        return None

    def _check_function(
        self, ctx, cls_name: str, fn: FunctionInfo, forward: FunctionInfo | None, gpu_only: bool = False,
        sampler: str | None = None,
    ):
        """`sampler`: the forward takes no tensor (`def forward(self, batch_size=32)`), so a tensor it makes
        and hands back without meeting a parameter is the caller's to place ("hollow": the module holds
        no parameter either, so there is nothing on the device for it to meet)."""
        if not any(c.method == "cuda" or _factory_name(c) or _cuda_type(c.node) for c in fn.calls):
            return  # nothing made here: no need to walk the function
        uses = self.scan_of(fn)
        # `get_noise(shape)` beside the class: named with the class whose forward reaches it
        # A function beside the classes is judged for hard-coded `.cuda()` only: such helpers are often
        # general-purpose (kornia's functional API, flair's pooling) and their factories meet the device
        # in ways the forward's own code does not show (at least 23 of 37 such findings were false).
        beside = _beside_the_class(fn)
        where = f"{fn.name} (called from {cls_name}.forward)" if beside else f"{cls_name}.{fn.name}"
        gpu_only = gpu_only or _runs_cuda_kernel(fn) or _hands_buffers_to_extension(ctx, fn)
        defaults = _calls_in_defaults(fn)  # `def forward(ctx, boxes, k=torch.tensor([100]))`: made once, at definition
        # kornia's `CV2SIFT`: the forward takes its input to the host for OpenCV and hands back tensors
        # made from the results, on the host by design
        host_results = _returned_calls(fn) if _input_taken_to_host(fn) else set()
        placed_siblings = sampler is not None and any(
            _factory_name(c) and (d := keyword_arg(c.node, "device")) is not None and not _is_cpu(d.value) for c in fn.calls
        )
        device_aware = _returns_moved(fn)  # `return out.to(device=...)`: whatever it built is moved
        on_host_copies = None  # worked out for the first factory that needs it
        cuda_default = ctx.project is not None and ctx.project.sets_cuda_default(ctx.facts)
        for call in fn.calls:
            if id(call.node) in defaults:
                continue
            if call.context.branches and _branch_never_taken(ctx.facts, fn, call):
                continue  # `if add == False:` in `norm(self, H, add=True)`, which every call leaves at True
            q = call.qualname or ""
            if (
                (call.method == "cuda" or _cuda_type(call.node)) and isinstance(call.node.func, cst.Attribute)
                and not q and not gpu_only
                and not _guarded_by_device_check(call) and id(call.node) not in uses.guarded
                and not _offloaded_after(call)
            ):
                given = None if call.method == "type" else next(
                    (a.value for a in call.node.args if a.keyword is None or a.keyword.value == "device"), None
                )
                if given is None:
                    moved = f"`.type({ctx.code(call.node.args[0].value)})`" if call.method == "type" else "`.cuda()`"
                    said = (f"{moved} in {where}: the model fails on CPU and ignores the device it was moved to; "
                            "use the input's device (`.to(x.device)`)")
                else:  # `.cuda(device)`, `.cuda(x.get_device())`: the right GPU, but never the CPU
                    device = ctx.code(given)
                    plain = isinstance(given, cst.Name) or isinstance(given, cst.Attribute) and given.attr.value == "device"
                    said = f"`.cuda({device})` in {where}: the model fails on CPU; use `.to({device if plain else 'x.device'})`, which works on every device"
                yield ctx.report(call.node, "hard-coded " + said)
                continue
            factory = _factory_name(call)
            if factory is None or beside:
                continue
            if _guarded_by_device_check(call):
                continue  # `if torch.cuda.is_available(): ... .cuda() else: torch.ones(n)`: chosen per device
            if keyword_arg(call.node, "out") is not None:
                continue  # `torch.arange(n, out=x.new(n).long())`: written into a tensor on the input's device
            if id(call.node) in host_results or host_results and _handed_back_from_host(fn, call.node, uses):
                continue  # (a result built on the host from the host copy, returned under a name or in a dict)
            if on_host_copies is None:
                on_host_copies = _works_on_host_copies(fn, uses)
            if on_host_copies:
                continue
            device = keyword_arg(call.node, "device")
            held = uses.assigned_name(call.node)  # the local name the tensor is bound to, if any
            if device is not None:
                scalar = factory in _LITERAL_DATA and not _is_sequence_literal(call.node) or _is_zero_dim_size(call.node)
                if _is_cpu(device.value) and not _named_host_side(held) and not (
                    scalar or id(call.node) in uses.moved  # a 0-dim value mixes with CUDA tensors; `(...).to("cuda")`
                    # (s2e-coref's labels filled one by one on the host, then `labels = labels.to(self.device)`)
                    or _moved_before_met(ctx.facts, call.node, held, uses)
                ):
                    yield ctx.report(
                        call.node,
                        f"`torch.{factory}(..., device=\"cpu\")` in {where} pins the tensor to the CPU: "
                        "with the model on a GPU the first op mixing it with the input raises; use the input's device",
                    )
                continue
            if cuda_default:
                continue  # the project makes CUDA the default device of new tensors
            zero_dim = factory in ("zeros", "ones", "empty", "full", "rand", "randn") and _is_zero_dim_size(call.node)
            if zero_dim or factory in _LITERAL_DATA and not _is_sequence_literal(call.node) and not _sequence_data(ctx, fn, call, held):
                # (a 0-dim literal, `torch.tensor(0.0)`, or a 0-dim factory, DeepFilterNet's `torch.zeros(())` loss
                # accumulator; data of unknown shape goes here too, and is not guessed at)
                problem = self._zero_dim_problem(ctx, fn, call, uses)
                # (`idx = idx.type_as(x.data).long()` before `hs.gather(1, idx)`: moved later under its name)
                moved_later = held is not None and held in uses.moved_names and not uses.met_before_moved(call.node, held)
                if problem is not None and not (device_aware or id(call.node) in uses.moved or moved_later):
                    yield ctx.report(call.node, f"`torch.{factory}(...)` in {where} {problem}")
                continue  # other 0-dim scalars mix with CUDA tensors
            if factory in _LITERAL_DATA and _from_shapes(call.node):
                continue  # `torch.tensor([t.shape[-1] for t in crops])`: bookkeeping of sizes, used on the host
            if (_is_zero_size(call.node, factory) or factory in _LITERAL_DATA and _is_empty_data(call.node)) and not _joined_with_device_values(
                ctx.facts, fn, call, uses.assigned_name(call.node), uses
            ):
                # `torch.empty(0)`, `torch.Tensor([])`: a placeholder (TorchScript's None, "no steps yet"); but one that
                # `torch.cat` later grows with CUDA values raises (measured on an H200: tests/test_gpu.py)
                continue
            if _joined_inline(fn, call.node, uses):  # `torch.meshgrid(torch.arange(n), torch.arange(n, device=d))`
                yield ctx.report(
                    call.node,
                    f"`torch.{factory}(...)` in {where} makes a CPU tensor that is joined with device tensors in the "
                    "same call: once the model is on a GPU it raises 'Expected all tensors to be on the same device'; "
                    "pass `device=` from the input",
                    replace=_device_fix(ctx, call.node, forward) if forward is not None else None,
                )
                continue
            target = held
            carrier = uses.carried_by.get(id(call.node))
            if device_aware and not uses.met_before_moved(call.node, target, carrier, moved_at_end=True):
                continue
            if id(call.node) in uses.moved or id(call.node) in uses.indexing:
                continue
            written = uses.copied_into_slice.get(id(call.node))
            if written is not None and not uses.device.touches(written):
                continue  # `grid[:, :, 1] = torch.arange(w) * step`: copied onto the grid's device
            held_in = target or carrier
            if held_in is not None and held_in.isidentifier() and fn.node is not None and _only_copied_into_slices(
                fn, held_in, call.node, uses
            ):
                continue  # `position = torch.arange(n)` read only in `pe[:, 0::2] = torch.sin(position * div)`
            if held_in is not None and held_in.isidentifier() and fn.node is not None and _meshed_then_copied_into_slices(
                fn, held_in, call.node, uses
            ):
                continue  # `x = torch.linspace(-1, 1, w)` ... `lidar[:, 1] = x_grid` after `torch.meshgrid(x, y)`
            if _read_as_host_scalar(ctx.facts, fn, call.node, target, ctx.project) or _cast_to_host(fn, call.node):
                continue
            if target is not None and target.startswith("self.") and _kept_element_by_element(fn.self_class(), target[5:]):
                continue  # `self.finished = torch.tensor([True for e in self.envs])`: per-env flags read one by one
            if target is not None and target.isidentifier() and fn.node is not None and _HostReads(
                target, call.node, outputs_only=_autograd_function_forward(fn)
            ).count(fn) == 0:
                # `finished = torch.tensor([False])`, never read: it meets nothing. (Nor a count that a custom
                # autograd Function only returns or marks non-differentiable: OpenPCDet's caller reads `.item()`)
                continue
            if _moved_before_met(ctx.facts, call.node, target, uses):
                continue
            # kornia's generators: a parameter handed back beside others placed with `device=`; a flow's
            # log-determinant (`ldj = torch.zeros(b); return z, ldj`), which its caller adds to the CUDA ones
            handed_back = target is not None and uses.handed_back(target, call.node)
            handed = handed_back and (placed_siblings or bool(_ACCUMULATED_TERM.search(target)) or (
                forward is not None and _returned_beside_layer_outputs(fn, target)))
            verdict = (
                _callers_verdict(ctx.facts, fn, target, self.scan_of) if forward is None and handed_back and not handed else None
            )
            if verdict == "placed":
                continue
            if forward is None and target is None and carrier is None and _callers_verdict(
                ctx.facts, fn, None, self.scan_of, call.node
            ) == "placed":
                continue  # `return torch.LongTensor(padded_neighbors)`, which each caller uses only as an index
            handed = handed or verdict == "met"
            if not handed and target is not None and (uses.only_cpu_side(target, call.node) or uses.overwritten_unread(call, target)):
                continue
            if target is None and carrier is None and _saved_for_host_reads(fn, uses.callers_of(call.node), call.node):
                continue
            if (
                carrier in uses.moved_names and not uses.met_before_moved(call.node, carrier)
                and _moved_on_its_path(ctx.facts, call.node, uses.move_calls.get(carrier))
            ):
                continue  # computed into something that is moved before use: `pe[:, 0::2] = sin(pos * div)` ... `pe.to(x.device)`
            if target is None and carrier is None and uses.made_on_host(call.node):
                continue  # `if self.training and torch.rand(1) < p:`: a statement that meets nothing on the device
            if carrier and not handed and uses.made_on_host(call.node) and uses.only_cpu_side(carrier, call.node):
                continue  # `neg = neg + torch.arange(b)[:, None] * high` on the host, then only an index
            if (sampler == "hollow" or sampler and not (
                uses.met_before_moved(call.node, target, carrier, moved_at_end=True)
                or any(uses.met_on_return.get(name) for name in (target, carrier) if name)
            )) and not placed_siblings:
                # `s = torch.rand(b, n, 3) * r; return s`: a sample returned, no input to mismatch (unless the
                # function places its other factories itself: kornia's parameter generators pass
                # `device=self.device` to every tensor they hand back, so one without it is a slip)
                continue
            if _logged_into_returned_dict(fn, call.node):
                continue
            replace = _device_fix(ctx, call.node, forward) if forward is not None else None
            yield ctx.report(
                call.node,
                f"`torch.{factory}(...)` in {where} creates a CPU tensor on every call: once the model "
                "is on a GPU, the first op mixing it with the input raises 'Expected all tensors to be on the same "
                "device'; pass `device=` from the input (or register a buffer)",
                replace=replace,
            )


_DATA_PARALLEL = ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel")


_GPU_CLASS_NAME = re.compile(r"GPU|Cuda|CUDA")  # `class SingleGPU(nn.Module)`: a wrapper that exists to put inputs on a GPU


def _branch_never_taken(facts, fn: FunctionInfo, call: CallInfo) -> bool:
    """The call sits in a branch of an `if` that tests a parameter against literals, and no call of fn in
    this file takes that branch: each leaves the parameter at its literal default or passes a literal
    (DL4EEG's `norm(self, H, add=True)` with `if add == False:`, always called without `add`)."""
    sites = [c for c in facts.calls_of(fn) if c.function is not fn]
    if not sites or fn.node is None:
        return False
    for if_id, side in call.context.branches:
        test = facts.if_tests.get(if_id)
        param = _tested_parameter(test, fn) if test is not None and side in (0, 1) else None
        if param is None:
            continue
        taken = _outcomes(facts, fn, sites, test, param)
        if taken is not None and (side == 0) not in taken:
            return True
    return False


def _outcomes(facts, fn: FunctionInfo, sites, test: cst.BaseExpression, param: str) -> set[bool] | None:
    """The values the test takes over the call sites, or None when one site's value is not a literal
    (or `norm(*args, **kw)` does not write it down)."""
    try:
        code = compile(facts.module.code_for_node(test).strip(), "<test>", "eval")
    except SyntaxError:
        return None
    default = default_of(fn, param)
    taken = set()
    for site in sites:
        if any(a.star for a in site.node.args):
            return None
        value = _literal_value(dict(_bind_arguments(site.node, fn.params)).get(param, default))
        if value is _UNKNOWN:
            return None
        try:
            taken.add(bool(eval(code, {"__builtins__": {}}, {param: value})))
        except Exception:
            return None
    return taken


_UNKNOWN = object()


def _literal_value(node):
    if node is None:
        return _UNKNOWN
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return node.evaluated_value
    return _UNKNOWN


def _tested_parameter(test: cst.BaseExpression, fn: FunctionInfo) -> str | None:
    """The one parameter a test reads, when everything else in it is a literal, a comparison or `not`."""
    names: set[str] = set()

    def plain(node) -> bool:
        if isinstance(node, cst.Name):
            if node.value not in ("True", "False", "None"):
                names.add(node.value)
            return True
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return plain(node.expression)
        if isinstance(node, cst.Comparison):
            return plain(node.left) and all(plain(c.comparator) for c in node.comparisons)
        return False

    if not plain(test) or len(names) != 1:
        return None
    name = names.pop()
    return name if name in fn.params and name not in fn.assigned_names() else None


def _holds_data_parallel(facts, cls) -> bool:
    """`self.net = nn.DataParallel(net)`: a wrapper that exists to run on the GPUs, where `.cuda()` is the point."""
    init = cls.methods.get("__init__")
    return init is not None and any(
        isinstance(a.value, cst.Call) and facts.qualify(a.value.func) in _DATA_PARALLEL
        and any(t.startswith("self.") for t in a.targets)
        for a in init.assigns
    )


_CUDA_KERNEL = re.compile(r"(forward|backward)_cuda$|^cuda_(forward|backward)|_cuda_(forward|backward)")


def _runs_cuda_kernel(fn: FunctionInfo) -> bool:
    """`psroi_pooling.psroi_pooling_forward_cuda(...)`: the function's work is a CUDA-only extension
    kernel, so it cannot run on the CPU whatever `.cuda(features.get_device())` does."""
    return any(
        not (c.qualname or "").startswith("torch.") and _CUDA_KERNEL.search((c.dotted or "").rsplit(".", 1)[-1])
        for c in fn.calls
    )


_PYTHON_LIBRARIES = frozenset({"torch", "numpy", "np", "math", "scipy", "cv2", "random", "time", "os", "sys"})


def _hands_buffers_to_extension(ctx, fn: FunctionInfo) -> bool:
    """`import chamfer` ... `chamfer.forward(xyz1, xyz2, dist1, dist2, idx1, idx2)` in an autograd
    Function (Pixel2Mesh): the work is a compiled extension that is no module of the project, and the
    buffers it fills are moved to where that kernel runs. Its device is the extension's, not ours."""
    cls = fn.self_class()
    if cls is None or "torch.autograd.Function" not in cls.bases or ctx.facts.path == "<string>":
        return False
    for call in fn.calls:
        head = (call.dotted or "").split(".", 1)[0]
        imported = ctx.facts.imported.get(head)
        if call.dotted == head or imported is None or imported.name is not None or head in _PYTHON_LIBRARIES:
            continue
        if imported.module.split(".", 1)[0] in _PYTHON_LIBRARIES:
            continue
        if ctx.project is not None and ctx.project.module_file(Path(ctx.facts.path), imported.module) is None:
            return True
    return False


def _pure_of_self(method: FunctionInfo) -> bool:
    """A method whose body never reads `self` (T5's `relative_position_bucket`): a function of its
    arguments, which meets no parameter or buffer of the module."""
    return method.node is not None and "self" not in names_in(method.node.body)


def _calls_in_defaults(fn: FunctionInfo) -> set[int]:
    """ids of the calls in the default values and annotations of fn's parameters (asv-subtools'
    `mask: torch.ones((0, 0, 0), dtype=torch.bool)`, a default written as an annotation: evaluated once,
    at definition, and never used as a value)."""
    found: set[int] = set()
    params = fn.node.params if fn.node is not None else None
    for param in (*params.params, *params.kwonly_params, *params.posonly_params) if params is not None else ():
        for part in (param.default, param.annotation):
            if part is not None:
                found.update(id(c) for c in calls_within(part))
    return found


def _named_host_side(target: str | None) -> bool:
    """`cu_seqlens_cpu = torch.tensor(lens, device="cpu")`: pinned to the host on purpose, for a kernel
    that reads sizes there; the name says so."""
    return target is not None and bool(re.search(r"cpu|host", target.rsplit(".", 1)[-1], re.I))


def _takes_no_tensor(forward: FunctionInfo) -> bool:
    """`def forward(self, batch_size=32)`: every parameter a number, flag or string by its default."""
    if forward.node is None:
        return False
    params = [p for p in (*forward.node.params.params, *forward.node.params.kwonly_params) if p.name.value not in ("self", "cls")]
    return all(
        isinstance(p.default, (cst.Integer, cst.Float, cst.SimpleString))
        or isinstance(p.default, cst.Name) and p.default.value in ("True", "False")
        or _shape_annotation(p.annotation)
        for p in params
    ) and not isinstance(forward.node.params.star_arg, cst.Param) and forward.node.params.star_kwarg is None


def _shape_annotation(annotation: cst.Annotation | None) -> bool:
    """`batch_shape: Tuple[int, ...]`, `n: int`, `size: torch.Size`: a number or a shape, no tensor
    (kornia's random parameter generators take only the batch shape)."""
    if annotation is None:
        return False
    words = set(re.findall(r"[A-Za-z_]+", cst.Module([]).code_for_node(annotation.annotation)))
    return bool(words) and words <= {"int", "bool", "float", "str", "Tuple", "tuple", "List", "list", "Size", "torch", "Optional", "None"}


_TRANSFORM_PLACES = ("transforms", "transform", "augmentations")


def _takes_host_data(facts, forward: FunctionInfo) -> bool:
    """`def forward(self, img: Image.Image)`, any module of a `transforms.py` or a `transform/` package
    (torchvision's references' `RandomMixup`, applied in the loader's `collate_fn`), or a class built on a
    `*Transform` base: a data transform run by the loader's CPU workers."""
    if forward.node is None:
        return False
    where = Path(facts.path)
    transform_class = forward.cls is not None and any(b.rsplit(".", 1)[-1].endswith("Transform") for b in forward.cls.written_bases)
    if where.stem in _TRANSFORM_PLACES or where.parent.name in _TRANSFORM_PLACES or transform_class:
        # (`src/transform/convert.py`'s `ToTensor(BaseTransform)`, turning a sample's arrays into tensors;
        # not a normalizing flow's `transforms.py`, whose layers hand back a log-determinant)
        return not _returns_summed_term(forward)
    params = [p for p in forward.node.params.params if p.name.value not in ("self", "cls")]
    if not params or params[0].annotation is None:
        return False
    text = facts.module.code_for_node(params[0].annotation.annotation)
    # (`obs: np.ndarray | torch.Tensor`: a policy network that also takes tensors on the device;
    # `src_tokens: List[str]`: a TorchScript serving module that turns raw tokens into tensors)
    return (any(word in text for word in ("Image", "PIL", "ndarray")) or bool(re.search(r"\bstr\b", text))) and "Tensor" not in text


# libraries whose objects carry tensors (on whatever device the batch went to)
_TENSOR_CARRIERS = ("torch", "numpy", "typing", "torch_geometric", "dgl", "transformers", "collections", "dataclasses")


def _takes_library_object(facts, project, forward: FunctionInfo) -> bool:
    """`def forward(self, board: chess.Board)`: the input is an object of another library (a chess board,
    a molecule), which holds no tensor and so names no device."""
    params = [p for p in forward.node.params.params if p.name.value not in ("self", "cls")] if forward.node else []
    if not params or params[0].annotation is None:
        return False
    written = dotted_name(params[0].annotation.annotation)
    qualified = facts.qualify(params[0].annotation.annotation) if written else None
    return (
        qualified is not None and "." in qualified and not qualified.startswith(_TENSOR_CARRIERS)
        and "Tensor" not in qualified and lookup_class(project, facts, written) is None
    )


def _input_taken_to_host(fn: FunctionInfo) -> bool:
    """The function copies a tensor parameter to the host as numpy: `img.cpu().numpy()`, or a value read
    from one (DeepLabCut's SimCC predictor: `x = outputs["x"].detach()` ... `x.cpu().numpy()`)."""
    inputs = set(fn.params) - {"self", "cls", "ctx"}
    for _ in range(2):
        inputs |= {t for a in fn.assigns if a.value is not None and _read_names(a.value) & inputs
                   for t in a.targets if t.isidentifier()}
    return any(_host_copy_of(call.node, inputs) for call in fn.calls)



def _host_copy_of(node: cst.BaseExpression, params) -> bool:
    """`img.detach().cpu().numpy()` / `x.tolist()`: a host copy of one of `params`."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("numpy", "tolist")):
        return False
    inner = node.func.value
    while isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute):
        inner = inner.func.value
    return isinstance(inner, cst.Name) and inner.value in params


def _returned_parts(value: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """What a return statement hands back, element by element: `return z, log_det` -> [z, log_det]
    (not what a starred element unpacks)."""
    if value is None:
        return []
    return [e.value for e in value.elements if isinstance(e, cst.Element)] if isinstance(value, cst.Tuple) else [value]


def _returned_calls(fn: FunctionInfo) -> set[int]:
    """The calls a return statement hands back as they are: `return torch.from_numpy(pts), desc`."""
    return {id(part) for ret, _ in fn.returns for part in _returned_parts(ret.value) if isinstance(part, cst.Call)}


def _returns_summed_term(fn: FunctionInfo) -> bool:
    """`return z, log_det`: fn hands back a per-sample term its caller sums (a flow layer)."""
    return any(
        isinstance(part, cst.Name) and _ACCUMULATED_TERM.search(part.value)
        for ret, _ in fn.returns for part in _returned_parts(ret.value)
    )


def _factory_name(call) -> str | None:
    q = call.qualname or ""
    return q[6:] if q.startswith("torch.") and q.count(".") == 1 and q[6:] in _FACTORIES else None


def _is_index_op(ctx, user: cst.Call, fn: FunctionInfo) -> bool:
    """`torch.index_select(x, 1, idx)`, `x.gather(1, idx)`, or a module whose forward does that (`self.pool`)."""
    name = (dotted_name(user.func) or "").rsplit(".", 1)[-1].rstrip("_")  # (in place too: `index_copy_`)
    if name in _INDEX_OPS:
        return True
    info = ctx.facts.call_info(user)
    if info is None:
        return False
    inst = ctx.dataflow.instance_of(user.func, fn, info.context.order)
    if inst is None or inst.cls is None:
        return False
    code = inst.facts.module.code_for_node(inst.cls.node)
    return any(f"{op}(" in code for op in _INDEX_OPS)


def _single_draws_compared(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The sides of the test's comparisons made by a one-element factory (`torch.rand(1)`,
    `torch.empty(1).uniform_(0, 1)`), through `and`/`or`/`not`."""
    if isinstance(test, cst.BooleanOperation):
        return _single_draws_compared(test.left) + _single_draws_compared(test.right)
    if isinstance(test, cst.UnaryOperation):
        return _single_draws_compared(test.expression)
    if not isinstance(test, cst.Comparison):
        return []
    sides = [test.left, *(c.comparator for c in test.comparisons)]
    out = []
    for side in sides:
        made = _shaping_chain(side)[-1]
        if (isinstance(made, cst.Call) and (dotted_name(made.func) or "").split(".")[0] == "torch"
                and len(made.args) == 1 and isinstance(made.args[0].value, cst.Integer) and made.args[0].value.value == "1"):
            out.append(side)
    return out


def _shaping_chain(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`torch.arange(b).unsqueeze(-1).long()`: the node, then each receiver down the reshaping methods,
    ending at the tensor they all reshape."""
    chain = [node]
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _SHAPING:
            node = node.func.value
        elif isinstance(node, cst.Subscript):  # `torch.arange(b)[:, None, None]`
            node = node.value
        else:
            return chain
        chain.append(node)


_SPLITTING = {"chunk", "split", "unbind", "tensor_split"}
_SELECTING = {"topk", "sort", "argsort", "nonzero", "argmax", "argmin", "scatter_", "masked_fill_", "index_fill_"}
# Reductions over dimensions (their arguments are dims, not tensors): the result stays where the input is
_REDUCING = {"sum", "any", "all", "cumsum", "prod", "mean", "amax", "amin", "count_nonzero"}


def _read_names(node: cst.CSTNode) -> set[str]:
    """Plain names whose values flow into an expression's result (not attribute names, not called
    functions' names, not the inputs of a module call: `self.fusion(a, b)` makes a new tensor on the
    module's device)."""
    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Call(self, n: cst.Call) -> bool:
            called = dotted_name(n.func) or ""
            return not (called.startswith("self.") and called.count(".") == 1)

        def visit_SubscriptElement(self, n: cst.SubscriptElement) -> bool:
            return False  # `x[rows, keep]`: the indices select, their values do not flow into the result

        def visit_DictElement(self, n: cst.DictElement) -> bool:
            return False  # `log = {"p_loss": p_loss.mean()}`: reported values, never mixed

        def visit_CompFor(self, n: cst.CompFor) -> bool:
            if isinstance(n.iter, cst.Call) and dotted_name(n.iter.func) in ("zip", "enumerate"):
                # `sum(w * out for w, out in zip(k_weights, outs))`: a vector iterated element by element
                # gives 0-dim values, which mix with CUDA tensors (as the scan's own `zip` reads say)
                for part in (*n.ifs, n.inner_for_in):
                    if part is not None:
                        part.visit(self)
                return False
            return True

    node.visit(_V())
    return found


def _derivation_base(value: cst.BaseExpression) -> cst.Name | None:
    """The name a value reshapes, selects from or fills in place: `zeros.scatter_(1, y, 1)` -> zeros,
    `rand.topk(k, dim=-1).indices` -> rand, `b[..., None]` -> b. Not arithmetic with other tensors,
    which is a use of its own."""
    node = value
    for _ in range(8):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _SHAPING | _SELECTING | _REDUCING:
            node = node.func.value
        elif isinstance(node, cst.Attribute) and node.attr.value in ("indices", "values"):
            node = node.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        # a comparison or arithmetic with a plain number: `(subsequent_mask == 0).unsqueeze(1)` (RecBole's FEARec)
        elif isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and _number_literal(node.comparisons[0].comparator):
            node = node.left
        elif isinstance(node, cst.BinaryOperation) and (_number_literal(node.right) or _number_literal(node.left)):
            node = node.left if _number_literal(node.right) else node.right
        elif isinstance(node, cst.UnaryOperation):
            node = node.expression
        else:
            break
    return node if isinstance(node, cst.Name) and node is not value else None


def _walks(fn: FunctionInfo) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, iterable) of every `for` statement and comprehension `for` in the function."""
    found = [(loop.node.target, loop.node.iter) for loop in fn.loops if isinstance(loop.node, cst.For)]
    if fn.node is not None:

        class _Comprehensions(cst.CSTVisitor):
            def visit_CompFor(self, n: cst.CompFor) -> None:
                found.append((n.target, n.iter))

        fn.node.body.visit(_Comprehensions())
    return found


def _walked_pairs(target: cst.BaseExpression, it: cst.BaseExpression) -> list[tuple[cst.Name, str]]:
    """(the tensor name read, the loop variable bound to its elements): `for d in offsets`,
    `for d in offsets.view(-1)`, and position by position `for dx, dy in zip(off_x.reshape(-1), off_y)`."""
    if isinstance(it, cst.Call) and dotted_name(it.func) == "zip" and isinstance(target, (cst.Tuple, cst.List)):
        pairs = []
        for arg, element in zip(it.args, target.elements):
            base = arg.value if isinstance(arg.value, cst.Name) else _derivation_base(arg.value)
            if base is not None and arg.keyword is None and not arg.star and isinstance(element.value, cst.Name):
                pairs.append((base, element.value.value))
        return pairs
    base = it if isinstance(it, cst.Name) else _derivation_base(it)
    return [(base, target.value)] if base is not None and isinstance(target, cst.Name) else []


def _number_expression(node: cst.BaseExpression) -> bool:
    """`1/4`, `-1`, `1e-6`: arithmetic on number literals only."""
    if isinstance(node, cst.UnaryOperation):
        return _number_expression(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return _number_expression(node.left) and _number_expression(node.right)
    return isinstance(node, (cst.Integer, cst.Float))


def _number_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _returned_beside_layer_outputs(fn: FunctionInfo, name: str) -> bool:
    """A forward hands the tensor back in one tuple (or dict) with the output of one of the module's layers:
    GVP's `return (s, v)` with `s = torch.relu(self.ws(x))` and `v = torch.zeros(...)`. Its caller
    receives one result on two devices and mixes them (`v + dv`); nothing suggests it places `v`."""
    layer_outputs = {t for a in fn.assigns if a.value is not None and _runs_a_layer(fn, a.value) for t in a.targets}
    for ret, _ in fn.returns:
        value = ret.value
        if isinstance(value, cst.Tuple):
            parts = [e.value for e in value.elements]
        elif isinstance(value, cst.Dict):  # `return {"value": value, "policy": policy}` (a board network's heads)
            parts = [e.value for e in value.elements if isinstance(e, cst.DictElement)]
        else:
            continue
        if any(isinstance(p, cst.Name) and p.value == name for p in parts) and any(
            isinstance(p, cst.Name) and p.value in layer_outputs or _runs_a_layer(fn, p) for p in parts
        ):
            return True
    return False


def _runs_a_layer(fn: FunctionInfo, value: cst.BaseExpression) -> bool:
    return any(_runs_held_layer(fn, c) for c in calls_within(value))


def _runs_held_layer(fn: FunctionInfo, call: cst.Call) -> bool:
    """`self.rnn(...)`: a submodule the class holds (an attribute, not one of its methods) is run."""
    dotted = dotted_name(call.func) or ""
    owner = fn.self_class()
    return owner is not None and dotted.startswith("self.") and dotted.count(".") == 1 and dotted[5:] not in owner.methods


_TENSOR_VIEWS = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})  # attributes that view a tensor where it is


def _value_calls(node: cst.BaseExpression, depth: int = 0) -> list[cst.Call]:
    """The calls whose results flow into `node` through arithmetic, elementwise torch functions and
    method chains: all moved together when `node` is."""
    if depth > 8:
        return []
    if isinstance(node, cst.BinaryOperation):
        return _value_calls(node.left, depth + 1) + _value_calls(node.right, depth + 1)
    if isinstance(node, cst.UnaryOperation):
        return _value_calls(node.expression, depth + 1)
    if isinstance(node, cst.Subscript):  # `torch.arange(h)[None, :, None]`
        return _value_calls(node.value, depth + 1)
    if isinstance(node, cst.Attribute) and node.attr.value in _TENSOR_VIEWS:  # GDN's `torch.arange(n).T.unsqueeze(1)`
        return _value_calls(node.value, depth + 1)
    if isinstance(node, (cst.List, cst.Tuple)):  # torch.cat([torch.ones(b), torch.zeros(b)]).to(x.device)
        return [c for e in node.elements for c in _value_calls(e.value, depth + 1)]
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):  # torch.cat([torch.ones(len(c)) for c in coords]).to(dev)
        return _value_calls(node.elt, depth + 1)
    if isinstance(node, cst.IfExp):  # `torch.ones(n) if keep else torch.zeros(n)`: either one flows on
        return _value_calls(node.body, depth + 1) + _value_calls(node.orelse, depth + 1)
    if isinstance(node, cst.Comparison):  # x[:, torch.arange(n) != cls_pos]: a CPU mask
        return _value_calls(node.left, depth + 1) + [
            c for t in node.comparisons for c in _value_calls(t.comparator, depth + 1)
        ]
    if isinstance(node, cst.Call):
        found = [node]
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.BaseExpression):
            found += _value_calls(node.func.value, depth + 1)
        for arg in node.args:
            found += _value_calls(arg.value, depth + 1)
        return found
    return []


def _forward_and_helpers(facts, forward: FunctionInfo, depth: int = 2):
    """forward itself (direct=True), then the methods it calls through `self.` and the functions it
    defines and calls itself (s4's `def restrict(x): ...` inside forward), two levels deep."""
    yield forward, True
    seen = {id(forward)}
    frontier = [forward]
    for _ in range(depth):
        nxt = []
        for fn in frontier:
            for call in fn.calls:
                if call.receiver == "self" or call.receiver is None and isinstance(call.node.func, cst.Name):
                    helper = facts.resolve_function(call)
                    if call.receiver is None and (helper is None or helper.parent is not fn and not _module_level(helper)):
                        continue
                    if helper is not None and id(helper) not in seen and helper.name != "__init__" and not (
                        _probe_only(facts, fn, call)
                    ):
                        seen.add(id(helper))
                        nxt.append(helper)
                        yield helper, False
        frontier = nxt


def _probe_only(facts, fn: FunctionInfo, call) -> bool:
    """`if is_probe: self._generate_anchors()` in a forward whose `is_probe` defaults to False and is
    passed true only by constructors (`self.head(branches, is_probe=True)` in a detector's `__init__`):
    the helper runs once while the model is built, before any `.to(device)`."""
    flags = {t.value for t in call.context.conditions if isinstance(t, cst.Name)}
    for flag in flags & set(fn.params):
        default = default_of(fn, flag)
        if not (isinstance(default, cst.Name) and default.value == "False"):
            continue
        passing = [c for c in facts.calls for a in c.node.args
                   if a.keyword is not None and a.keyword.value == flag
                   and not (isinstance(a.value, cst.Name) and a.value.value == "False")]
        if passing and all(c.function.name == "__init__" for c in passing):
            return True
    return False


def _module_level(fn: FunctionInfo) -> bool:
    """`def get_noise(shape): return torch.randn(*shape)` beside the class, called from its forward."""
    return fn.cls is None and fn.parent is not None and fn.parent.is_module


def _beside_the_class(fn: FunctionInfo) -> bool:
    """A function beside the classes, or one nested in it (torchgeo's `calculate_pinv` inside
    `resize_patch_embed`), not in any method."""
    while fn.parent is not None and not fn.parent.is_module:
        if fn.cls is not None:
            return False
        fn = fn.parent
    return _module_level(fn)


_DEVICE_WORDS = ("cuda", "gpu", "device")


def _guarded_by_device_check(call) -> bool:
    """`if torch.cuda.is_available(): x = x.cuda()`, `if x.is_cuda: ...`, `with torch.cuda.device_of(x):`:
    the author chose the device."""
    if any("device" in w.lower() for w in call.context.withs):
        return True
    return any(_tests_device(test) for test in call.context.conditions)


def _saved_for_host_reads(fn: FunctionInfo, users: list[cst.Call], made: cst.Call) -> bool:
    """apex's `ctx.save_for_backward(logits, torch.FloatTensor([smoothing]))`, read back in `backward` only
    as `smoothing.item()`: a number carried to the backward pass, never mixed with the gradients."""
    backward = fn.cls.methods.get("backward") if fn.cls is not None and fn.name == "forward" else None
    if backward is None or len(users) != 1 or (dotted_name(users[0].func) or "").rsplit(".", 1)[-1] != "save_for_backward":
        return False
    position = next((i for i, a in enumerate(users[0].args) if a.value is made), None)
    unpacked = next((a for a in backward.assigns if (dotted_name(a.value) or "").endswith(".saved_tensors")), None)
    if position is None or unpacked is None or position >= len(unpacked.targets):
        return False
    name = unpacked.targets[position]
    reads = [c for c in backward.calls if c.receiver == name]
    return bool(reads) and all(c.method in ("item", "tolist") for c in reads) and _HostReads(name).count(backward) == len(reads)


class _HostReads(cst.CSTVisitor):
    """How often a name is read at all, to check that every read is one of the calls already seen. With
    `made`, only reads that can see what `made` built: after its statement, or anywhere in a loop around
    it (OpenPCDet's `nsample = torch.Tensor([nsample]).int()` as the last use of a parameter)."""

    def __init__(self, name: str, made: cst.CSTNode | None = None, outputs_only: bool = False) -> None:
        self.name, self.reads, self.made = name, 0, made
        self.seen = made is None
        self.outputs_only = outputs_only  # reads in `return` and `ctx.*(...)` do not count
        self.loops: list[cst.CSTNode] = []  # the loops being walked
        self.around_made: set[int] = set()  # the loops around `made`, once it is seen
        self.loop_reads: list[int] = []

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.reads += self.seen
            if self.loop_reads:
                self.loop_reads[-1] += 1

    def leave_Call(self, node: cst.Call) -> None:
        if node is self.made:
            self.seen = True
            self.around_made = {id(loop) for loop in self.loops}

    def visit_Return(self, node: cst.Return) -> bool:
        if not self.outputs_only or node.value is None:
            return True
        # the name handed back as it is is an output; `return input * mask` still mixes it
        value = node.value
        parts = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
        for part in parts:
            if not (isinstance(part, cst.Name) and part.value == self.name):
                part.visit(self)
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        return not (self.outputs_only and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "ctx")

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return False

    def visit_For(self, node) -> None:
        self.loops.append(node)
        self.loop_reads.append(0)

    def leave_For(self, node) -> None:
        self.loops.pop()
        inner = self.loop_reads.pop()
        if self.loop_reads:
            self.loop_reads[-1] += inner
        if id(node) in self.around_made:
            self.reads += inner  # (read at the top of the next iteration)

    visit_While, leave_While = visit_For, leave_For

    def count(self, fn: FunctionInfo) -> int:
        fn.node.body.visit(self)
        return self.reads


def _moved_attribute(fn: FunctionInfo, attribute: str) -> bool:
    """fn reassigns the attribute moved: `self.rel_indices = self.rel_indices.to(device)`."""
    return any(
        a.targets == (attribute,) and isinstance(a.value, cst.Call) and isinstance(a.value.func, cst.Attribute)
        and a.value.func.attr.value in _MOVES - {"copy_"} and dotted_name(a.value.func.value) == attribute
        for a in fn.assigns
    )


def _buffer_read_safely(fn: FunctionInfo, attr: str) -> bool:
    """Every read of the buffer `self.<attr>` in the class is read back as a number (`self.HW.item()`) or
    taken into a name the same method moves to the input's device (`mask = self.attn_mask` ...
    `mask = mask.to(x.device)`): registered on the CPU while the model runs, it meets nothing there."""
    cls = fn.self_class()
    if cls is None:
        return False
    dotted = f"self.{attr}"
    safe = 0
    for method in cls.methods.values():
        safe += sum(1 for c in method.calls if c.receiver == dotted and c.method in ("item", "tolist"))
        for a in method.assigns:
            if len(a.targets) == 1 and dotted_name(a.value) == dotted and any(
                b.targets == a.targets and isinstance(b.value, cst.Call) and _moves_device(b.value)
                and dotted_name(b.value.func.value) == a.targets[0] and b.context.order > a.context.order
                for b in method.assigns
            ):
                safe += 1
    reads = 0

    class _Reads(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
            return False

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            nonlocal reads
            reads += dotted_name(node) == dotted
            return True

    for method in cls.methods.values():
        if method.node is not None:
            method.node.body.visit(_Reads())
    return reads > 0 and reads == safe


def _autograd_function_forward(fn: FunctionInfo) -> bool:
    """The static `forward(ctx, ...)` of a custom `torch.autograd.Function`: what it returns is its output."""
    return fn.name == "forward" and fn.params[:1] == ("ctx",)


def _offloaded_after(call: CallInfo) -> bool:
    """Jukebox's `self.prime_prior.cuda()` ... `self.prime_prior.cpu()`: a submodule brought onto the GPU
    for one call and sent back, to spare GPU memory; the author manages its device on purpose."""
    receiver = call.receiver or ""
    return receiver.startswith("self.") and any(
        c.method == "cpu" and c.receiver == receiver and c.context.order > call.context.order for c in call.function.calls
    )


def _tests_device(test: cst.BaseExpression) -> bool:
    """`torch.cuda.is_available()`, `x.is_cuda`, `device == "cpu"`, `self.cpu_cache`: a test that chooses
    by device (RVRT keeps features on the host when `cpu_cache` is set, and brings each back with `.cuda()`)."""
    if isinstance(test, cst.BooleanOperation):
        return _tests_device(test.left) or _tests_device(test.right)
    if isinstance(test, cst.Comparison) and all(isinstance(c.operator, (cst.In, cst.NotIn)) for c in test.comparisons):
        # `device not in self.labels`: a cache keyed by device, not a choice of device; but
        # `"cuda" in str(self.conv1.weight.device)` (SwAV's ResNet) asks where the weights are
        return isinstance(test.left, cst.SimpleString) and str(test.left.evaluated_value).lower() in ("cuda", "cpu", "gpu")
    text = " ".join(names_in(test)).lower()
    # (`if self.config['use_cuda']:`, a device flag read from a config mapping)
    text += " " + " ".join(
        str(key.evaluated_value).lower() for key in _subscript_keys(test) if isinstance(key, cst.SimpleString)
    )
    if isinstance(test, cst.Comparison):  # YOLOX's `if mode == "cpu":` (assignment falls back to the host on OOM)
        text += " " + " ".join(
            str(side.evaluated_value).lower() for side in (test.left, *(c.comparator for c in test.comparisons))
            if isinstance(side, cst.SimpleString)
        )
    return any(word in text for word in (*_DEVICE_WORDS, "cpu"))


def _subscript_keys(test: cst.BaseExpression) -> list:
    """The keys a test reads from mappings: `'use_cuda'` in `self.config['use_cuda']`."""
    node, keys = test, []
    while isinstance(node, (cst.Subscript, cst.UnaryOperation)):
        if isinstance(node, cst.UnaryOperation):
            node = node.expression
            continue
        keys += [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
        node = node.value
    return keys


def _moved_at_every_call_site(facts, helper: FunctionInfo, scan_of, depth: int = 0) -> bool:
    """Every call the forward's path makes moves the result (kornia's LoFTR: `self.pe =
    self._create_position_encoding(shape).to(self.pe.device)`), or hands it back from a helper whose
    callers all move it (pytorch-ssim's `_gaussian` inside `_create_window`, whose window the forward
    casts with `type_as(img1)`); the call in `__init__` builds a buffer before the model is moved, and
    `.to()` takes it along."""
    sites = [c for c in _sites_in_methods(facts, helper) if c.function.name != "__init__"]
    if not sites:
        return False
    for site in sites:
        scan = scan_of(site.function)
        # (`kernel = self.make_2d_gaussian_kernel(...)[None, None]`, then `kernel = kernel.repeat(...).to(dev)`)
        target = scan.assigned_name(site.node) or next(
            (a.targets[0] for a in site.function.assigns
             if len(a.targets) == 1 and a.value is not None and _shaping_chain(a.value)[-1] is site.node), None)
        if id(site.node) in scan.moved or (target and target in scan.moved_names) or _read_on_host_at(site):
            continue
        if depth < 2 and site.function.self_class() is not None and site.function.name != "forward" and (
            _handed_back(site.function, site.node)
        ) and _moved_at_every_call_site(facts, site.function, scan_of, depth + 1):
            continue
        return False
    return True


def _handed_back(fn: FunctionInfo, made: cst.Call) -> bool:
    """Every return of fn hands back a value computed from `made`: directly, or through the names
    assigned from it (`_1D = self._gaussian(n).unsqueeze(1)`, `_2D = _1D.mm(_1D.t())`, `return _2D.expand(...)`)."""
    returns = [r.value for r, _ in fn.returns if r.value is not None]
    if not returns or len(returns) != len(fn.returns):
        return False
    carrying: set[str] = set()
    for a in sorted(fn.assigns, key=lambda a: a.context.order):
        if len(a.targets) == 1 and a.value is not None and (
            any(c is made for c in calls_within(a.value)) or _read_names(a.value) & carrying
        ):
            carrying.add(a.targets[0])
    return all(any(c is made for c in calls_within(r)) or bool(_read_names(r) & carrying) for r in returns)


def _handed_back_from_host(fn: FunctionInfo, made: cst.Call, uses) -> bool:
    """`_handed_back`, with nothing on the way meeting a device value: DeepLabCut's SimCC predictor returns
    `dict(poses=keypoints_with_score)` after `keypoints_with_score = torch.tensor(keypoints_with_score)`."""
    if not _handed_back(fn, made):
        return False
    carrying = [a.value for a in fn.assigns if a.value is not None and any(c is made for c in calls_within(a.value))]
    returns = [r.value for r, _ in fn.returns if r.value is not None]
    inputs = set(fn.params) - {"self", "cls", "ctx"}
    # (not `refined = outputs["offset"] + torch.tensor(peaks)`: joined with an input on the way out)
    return not any(uses.device.touches(v) or _read_names(v) & inputs for v in (*carrying, *returns))


def _read_on_host_at(site) -> bool:
    """`order = self.positions(n).tolist()`: the caller takes the result straight to the host."""
    return any(
        _brought_to_host(c.node) and site.node in (call_receiver(c.node), *positional_args(c.node)[:1])
        for c in site.function.calls
    )


def _sites_in_methods(facts, helper: FunctionInfo) -> list:
    """The calls a model's methods make to a helper: `self.helper(...)`, or `helper(...)` for a
    function beside the classes (its calls from scripts and data code are not the forward's)."""
    if _module_level(helper):
        return [c for c in facts.calls_of(helper) if c.receiver is None and c.function.self_class() is not None]
    if helper.cls is None and helper.parent is not None and not helper.parent.is_module:
        # `def gaussian(...)` nested in `create_window`: called by its bare name there
        return [c for c in facts.calls_of(helper) if c.receiver is None and c.function is helper.parent]
    return [c for c in facts.calls_of(helper) if c.receiver == "self"]


def _callers_verdict(facts, helper: FunctionInfo, target: str | None, scan_of, made: cst.Call | None = None) -> str | None:
    """How the callers of a helper in this file use the tensor it hands back as `target` (or `made`, returned
    as it is built: `return torch.LongTensor(padded_neighbors)`): "placed" when
    each moves it before it meets the device (`y_true, mask = self.get_target(...)` then `y_true =
    y_true.type_as(x)`) or uses it only as a forward may use a CPU tensor (torchdyn's `x, t_span =
    self._prep_integration(x, t_span)`, handed on to a solver that places it); "met" when one mixes it
    with device values; None when the callers or the returned position are not known."""
    positions = {
        i if isinstance(ret.value, cst.Tuple) else None for ret, _ in helper.returns if ret.value is not None
        for i, e in (enumerate(ret.value.elements) if isinstance(ret.value, cst.Tuple) else [(None, ret)])
        if (e.value is made if made is not None else dotted_name(e.value) == target)
    }
    if len(positions) != 1:
        return None
    position = positions.pop()
    sites = _sites_in_methods(facts, helper)
    if not sites:
        return None
    for site in sites:
        assigned = next((a for a in site.function.assigns if a.value is site.node), None)
        if assigned is None or len(assigned.targets) <= (position or 0) or (position is None) != (len(assigned.targets) == 1):
            return None
        name = assigned.targets[position or 0]
        scan = scan_of(site.function)
        if name in scan.moved_names and not scan.met_before_moved(site.node, name):
            continue
        if scan.only_cpu_side(name, site.node) or not scan.read_after(name, site.node):
            continue
        return "met"
    return "placed"


def _device_movers(facts) -> dict[str, set[str]]:
    """Local helpers that move a parameter to a device, with the parameters they move
    (`def cuda_variable(t): return t.cuda()`). `weight.to(x.dtype)` is a cast, not a move."""
    movers: dict[str, set[str]] = {}
    for name, fn in _helpers_by_call_name(facts).items():
        moved = _moved_params(fn)
        if moved:
            movers[name] = moved  # (or a method: SpeechBrain's `self._dp_forward(pi_prob, ...)` moves pi_prob first)
    return movers


def _moved_params(fn: FunctionInfo) -> set[str]:
    """The parameters a helper moves to a device (`tensor.cuda()`, `t.to(device)`)."""
    return {c.receiver for c in fn.calls if c.receiver in fn.params and _moves_device(c.node)}


_NOT_PROJECT_MODULES = frozenset({
    "torch", "torchvision", "torchaudio", "numpy", "scipy", "math", "random", "os", "sys", "time", "collections",
    "itertools", "functools", "cv2", "PIL", "json", "re", "copy", "typing", "einops", "timm", "transformers",
})


def _project_movers(project, facts, movers: dict[str, set[str]], params_of: dict) -> None:
    """Helpers of other files of the project that move a parameter to a device, by the name this file
    calls them with (`datatools.to_variable(torch.zeros(1))`, whose body is `tensor.cuda()`)."""
    if project is None:
        return
    asked: set[str] = set()
    for call in facts.calls:
        name = call.dotted
        if (not name or name in movers or name in asked or name.startswith(("torch.", "self."))
                or not any(isinstance(a.value, cst.Call) for a in call.node.args)):
            continue
        asked.add(name)
        qualified = facts.qualify(call.node.func) or ""
        if qualified.split(".", 1)[0] in _NOT_PROJECT_MODULES or facts.resolve_function(call) is not None:
            continue  # (`nn.Sequential(...)`, `np.array(...)`: a library, not the project)
        found = project.function_named(facts, name)
        if found is None and _MOVER_NAME.match(name.rsplit(".", 1)[-1]) and facts.imported.get(name.split(".", 1)[0]):
            # TL-ERC's `to_var(torch.zeros(...))`, imported from a file of the project that does not parse
            # (`def to_var(x, on_cpu=False, gpu_id=None, async=False)`): the name says it moves its first argument
            movers[name] = {"x"}
            params_of[name] = ("x",)
            continue
        if found is None:
            continue
        helper = found[1]
        moved = _moved_params(helper)
        if moved:
            movers[name] = moved
            params_of[name] = helper.params


_MOVER_NAME = re.compile(r"^(to_var|to_cuda|to_gpu|to_device|cuda_var|var_cuda|make_cuda|maybe_cuda|to_variable)$")


def _helpers_by_call_name(facts) -> dict[str, FunctionInfo]:
    """Top-level functions by name, and methods as `self.<name>` where only one class of the file has one."""
    out: dict[str, FunctionInfo] = dict(facts.toplevel_functions)
    methods: dict[str, list[FunctionInfo]] = {}
    for cls in facts.all_classes:
        for name, method in cls.methods.items():
            methods.setdefault(f"self.{name}", []).append(method)
    out.update({name: found[0] for name, found in methods.items() if len(found) == 1})
    return out


def _bind_arguments(call: cst.Call, params: tuple[str, ...]) -> list[tuple[str, cst.BaseExpression]]:
    """(parameter, argument) pairs of a call to a local function; `*args` binds nothing."""
    positional = [p for p in params if p not in ("self", "cls")]
    pairs = []
    for i, arg in enumerate(a for a in call.args if a.keyword is None):
        if arg.star:
            return []  # `f(*args)`: which parameter gets what is not written down
        if i < len(positional):
            pairs.append((positional[i], arg.value))
    pairs += [(a.keyword.value, a.value) for a in call.args if a.keyword is not None and a.keyword.value in params]
    return pairs


def _args_bound_to(call: cst.Call, params: set[str] | None, all_params: tuple[str, ...] | None) -> list[cst.Arg]:
    """The arguments that arrive as `params` (every argument when the helper is known only by name)."""
    if params is None or all_params is None:
        return list(call.args)
    positional = [p for p in all_params if p not in ("self", "cls")]
    bound = []
    for i, arg in enumerate(a for a in call.args if a.keyword is None and not a.star):
        if i < len(positional) and positional[i] in params:
            bound.append(arg)
    bound += [a for a in call.args if a.keyword is not None and a.keyword.value in params]
    return bound


def _cuda_type(call: cst.Call) -> bool:
    """`.type(torch.cuda.FloatTensor)`: a cast that also puts the tensor on the current GPU, like `.cuda()`."""
    return (
        isinstance(call.func, cst.Attribute) and call.func.attr.value == "type" and len(call.args) == 1
        and (dotted_name(call.args[0].value) or "").startswith("torch.cuda.")
    )


def _moves_device(call: cst.Call) -> bool:
    """`.cuda()`, `.to(device)`, `.to(x)`: not `.to(x.dtype)`, `.to(torch.float16)` or `.to(memory_format=...)`."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
    if method == "cuda" or _cuda_type(call):
        return True
    target = _device_argument(call) if method == "to" else None
    return target is not None and not _is_cast(target)


def _device_argument(call: cst.Call) -> cst.BaseExpression | None:
    """Where a call puts its result: `device=` (a factory, `.to`), or the first positional argument of `.to`."""
    keyword = keyword_arg(call, "device")
    if keyword is not None:
        return keyword.value
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "to":
        positional = positional_args(call)
        return positional[0] if positional else None
    return None


def _is_cast(target: cst.BaseExpression) -> bool:
    """`.to(x.dtype)`, `.to(torch.float16)`: a dtype, not a device."""
    text = (dotted_name(target) or "").lower()
    return text.endswith("dtype") or text.startswith("torch.") and "device" not in text


def _moved_before_met(facts, node: cst.Call, target: str | None, uses) -> bool:
    """The name holding the tensor is moved (`x = x.to(device)`) on its path before anything meets it."""
    return (
        target is not None and target in uses.moved_names and not uses.met_before_moved(node, target)
        and _moved_on_its_path(facts, node, uses.move_calls.get(target))
    )


def _is_cpu(target: cst.BaseExpression | None) -> bool:
    return isinstance(target, cst.SimpleString) and target.evaluated_value == "cpu"


def _params_of(facts) -> dict[str, tuple[str, ...]]:
    return {name: fn.params for name, fn in _helpers_by_call_name(facts).items()}


def _read_as_host_scalar(facts, fn: FunctionInfo, factory: cst.Call, target: str | None = None, project=None) -> bool:
    """`helper(x, torch.IntTensor([n]))` where helper only reads `param[0]`: a host-side number.

    (WaveGlow's `fused_add_tanh_sigmoid_multiply(a, b, n_channels)` slices with `n_channels[0]`; the
    tensor may be passed by the name it was given, and VITS keeps the helper in `commons.py`.)
    """
    for call in fn.calls:
        positional = [a for a in call.node.args if a.keyword is None and not a.star]
        index = next(
            (i for i, a in enumerate(positional)
             if _unwrap_variable(a.value) is factory or (target and dotted_name(a.value) == target)),
            None,
        )
        if index is None:
            continue
        helper = facts.resolve_function(call) or _function_forward(facts, call.node) or _held_forward(facts, fn, call, project)
        if helper is None and project is not None and call.dotted:
            found = project.function_named(facts, call.dotted)
            helper = found[1] if found is not None else None
        params = [p for p in helper.params if p not in ("self", "cls", "ctx")] if helper is not None else []
        if helper is None or helper.node is None or index >= len(params):
            return False
        scan = _IndexOnly(params[index])
        helper.node.body.visit(scan)
        return scan.reads > 0 and scan.reads == scan.constant_index_reads
    return False


def _held_forward(facts, fn: FunctionInfo, call, project) -> FunctionInfo | None:
    """The forward of what `self.<name>` holds, when `__init__` builds it from a project class: ROAD's
    `self.calc = Calculator(k, ...)` (an autograd Function of calc_score/calc.py), called as `self.calc(...)`."""
    cls = fn.self_class()
    if cls is None or not call.dotted or not call.dotted.startswith("self.") or call.dotted.count(".") != 1:
        return None
    init = cls.methods.get("__init__")
    built = [a.value for a in init.assigns if a.targets == (call.dotted,) and isinstance(a.value, cst.Call)] if init else []
    if len(built) != 1:
        return None
    found = lookup_class(project, facts, dotted_name(built[0].func)) if project is not None else None
    if found is None:
        local = facts.classes.get(dotted_name(built[0].func) or "")
        return local.methods.get("forward") if local is not None else None
    return found[1].methods.get("forward")


def _logged_into_returned_dict(fn: FunctionInfo, made: cst.Call) -> bool:
    """`results['val_match_loss'] = torch.tensor([match_loss])` in a `forward_test` that returns `[results]`:
    a number wrapped for the logs, stored under a literal key and handed back in a dict the function
    computes nothing else with."""
    args = made.args
    if not (len(args) == 1 and isinstance(args[0].value, cst.List) and len(args[0].value.elements) == 1
            and isinstance(args[0].value.elements[0].value, (cst.Name, cst.Attribute))):
        return False
    stores = [a for a in fn.assigns if a.value is made and len(a.targets) == 1 and a.targets[0].endswith("[]")]
    if len(stores) != 1:
        return False
    holder = stores[0].targets[0][:-2]
    if not holder.isidentifier():
        return False
    returned = [r.value for r, _ in fn.returns if r.value is not None]
    return bool(returned) and all(
        isinstance(v, cst.Name) and v.value == holder
        or isinstance(v, (cst.Tuple, cst.List)) and any(isinstance(e.value, cst.Name) and e.value.value == holder for e in v.elements)
        for v in returned
    )


def _unwrap_variable(value: cst.BaseExpression) -> cst.BaseExpression:
    """`Variable(th.Tensor([n]))`: the tensor the old autograd wrapper holds."""
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("Variable", "autograd.Variable", "torch.autograd.Variable") and value.args:
        return value.args[0].value
    return value


def _function_forward(facts, call: cst.Call) -> FunctionInfo | None:
    """The forward of an autograd Function of this file called as `MyImpMap()(x, ...)` or `MyImpMap.apply(x, ...)`."""
    func = call.func
    if isinstance(func, cst.Call):
        func = func.func
    elif isinstance(func, cst.Attribute) and func.attr.value == "apply":
        func = func.value
    else:
        return None
    cls = facts.classes.get(func.value) if isinstance(func, cst.Name) else None
    return cls.methods.get("forward") if cls is not None and "torch.autograd.Function" in cls.bases else None


class _IndexOnly(cst.CSTVisitor):
    """Reads of a parameter, and how many of them take a host number from it: `n[0]`, `int(n)`, `n.item()`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reads = 0
        self.constant_index_reads = 0
        self.rebound = False  # `L = int(L)`: later reads are of the number

    def visit_Assign(self, node: cst.Assign) -> bool:
        if any(isinstance(t.target, cst.Name) and t.target.value == self.name for t in node.targets):
            node.value.visit(self)
            self.rebound = True
            return False
        return True

    def visit_Call(self, node: cst.Call) -> bool:
        if self.rebound:
            return False
        func = node.func
        read = (  # `int(n)`, `float(n)`, `n.item()`
            node.args[0].value if isinstance(func, cst.Name) and func.value in ("int", "float") and len(node.args) == 1
            else func.value if isinstance(func, cst.Attribute) and func.attr.value == "item" else None
        )
        while (isinstance(read, cst.Call) and not read.args and isinstance(read.func, cst.Attribute)
               and read.func.attr.value in ("int", "long", "float", "double", "cpu")):
            read = read.func.value  # `n.int().item()`
        if isinstance(read, cst.Name) and read.value == self.name:
            self.reads += 1
            self.constant_index_reads += 1
            return False
        return True

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        if self.rebound:
            return False
        if isinstance(node.value, cst.Name) and node.value.value == self.name:
            self.reads += 1
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.Integer):
                self.constant_index_reads += 1
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name and not self.rebound:
            self.reads += 1


def _returns_moved(fn: FunctionInfo) -> bool:
    return any(
        isinstance(ret.value, cst.Call)
        and isinstance(ret.value.func, cst.Attribute)
        and ret.value.func.attr.value in ("to", "cuda", "type_as")
        for ret, _ in fn.returns
    )


def _from_shapes(call: cst.Call) -> bool:
    """Data read from tensor shapes (`.shape`, `.size()`, `len()`): split sizes and offsets, not math."""
    args = positional_args(call)
    if not args:
        return False
    data = repeated_sequence(args[0])  # `torch.IntTensor([preds.size(1)] * preds.size(0))`: CTC input lengths
    elements = [data.elt] if isinstance(data, cst.ListComp) else [getattr(e, "value", e) for e in getattr(data, "elements", [])]
    code = [cst.Module([]).code_for_node(e) for e in elements]
    return bool(code) and all(".shape" in c or ".size(" in c or c.startswith("len(") for c in code)


_NUMBER_BUILTINS = {"int", "len", "round", "float", "abs", "max", "min"}


def _host_number(value, fn: FunctionInfo, depth: int = 0) -> bool:
    """A plain Python number: a literal, sizes read from shapes, `max(0, n - self.context)`, or a
    name only ever assigned such values."""
    if value is None or depth > 4:
        return False
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return _host_number(value.expression, fn, depth + 1)
    if isinstance(value, cst.BinaryOperation):
        return _host_number(value.left, fn, depth + 1) and _host_number(value.right, fn, depth + 1)
    if isinstance(value, cst.Subscript):  # `x.shape[1]`
        return isinstance(value.value, cst.Attribute) and value.value.attr.value == "shape"
    if isinstance(value, cst.Attribute):  # `self.past_context`: a setting
        return isinstance(value.value, cst.Name) and value.value.value == "self" and depth > 0
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _NUMBER_BUILTINS:
        return value.func.value not in ("max", "min") or all(_host_number(a.value, fn, depth + 1) for a in value.args)
    if isinstance(value, cst.Name):
        values = [a.value for a in fn.assigns if a.targets == (value.value,)]
        return bool(values) and all(_host_number(v, fn, depth + 1) for v in values)
    return False


def _moved_on_its_path(facts, made: cst.Call, moves: list[cst.Call] | None) -> bool:
    """Some move of the name can follow the factory: not only one in the other branch of its `if`
    (diffusers' `if not torch.is_tensor(t): t = torch.tensor([t]) elif ...: t = t[None].to(dev)`), nor one
    before it, outside any loop they share (`x = x.to(w.device)` at the top of forward moves the input, not
    the `x` a later `torch.cat([x, torch.zeros(...)])` computes; diffusers' `timesteps = timesteps[None].to(d)`
    moves the old value, not `timesteps * torch.ones(batch)` made after it)."""
    made_info = facts.call_info(made)
    if not moves or made_info is None:
        return True
    for move in moves:
        info = facts.call_info(move)
        if info is None:
            return True
        later = info.context.order > made_info.context.order or bool(
            set(map(id, info.context.loops)) & set(map(id, made_info.context.loops)))
        if later and not exclusive_branches(made_info.context.branches, info.context.branches):
            return True
    return False


def _plain_slice_write(a: AssignInfo) -> bool:
    """`grid[:, :, 1] = torch.arange(w) * step`: a write through basic indexing (slices, ints, `...`) is a
    `copy_` into a view, which copies across devices (measured on an H200, torch 2.11); a mask or an
    index tensor (`index_put_`) is not counted."""
    node = a.node
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return False
    target = node.targets[0].target
    if not isinstance(target, cst.Subscript):
        return False
    return all(
        isinstance(e.slice, cst.Slice)
        or isinstance(e.slice, cst.Index) and (_is_int_literal(e.slice.value) or isinstance(e.slice.value, cst.Ellipsis)
                                                or isinstance(e.slice.value, cst.Name) and e.slice.value.value == "None")
        for e in target.slice
    )


def _only_copied_into_slices(fn: FunctionInfo, name: str, made: cst.Call, uses) -> bool:
    """Every read of `name` after `made` is in a value written through a plain slice (a `copy_` across
    devices) that meets nothing on the device: `pe[:, 0::2] = torch.sin(position * div_term)`, where
    `pe` was made with `device=x.device` and `div_term` on the host too."""
    writes = [a for a in fn.assigns if a.value is not None and _plain_slice_write(a) and name in _read_names(a.value)]
    if not writes or any(uses.device.touches(a.value) for a in writes):
        return False
    inside = 0
    for a in writes:
        reads = _HostReads(name)
        a.value.visit(reads)
        inside += reads.reads
    return inside == _HostReads(name, made).count(fn)


def _meshed_then_copied_into_slices(fn: FunctionInfo, name: str, made: cst.Call, uses) -> bool:
    """`x = torch.linspace(-1, 1, w)` read only by `y_grid, x_grid = torch.meshgrid(x, y)` of host values,
    whose grids are only copied into slices of a device tensor (transfuser's positional encoding written into
    the lidar input: a copy across devices)."""
    meshes = [a for a in fn.assigns if isinstance(a.value, cst.Call) and (dotted_name(a.value.func) or "").endswith("meshgrid")
              and name in _read_names(a.value) and a.context.order > 0]
    if len(meshes) != 1 or _HostReads(name, made).count(fn) != 1 or uses.device.touches(meshes[0].value):
        return False
    grids = meshes[0].targets
    return bool(grids) and all(t.isidentifier() and _only_copied_into_slices(fn, t, meshes[0].value, uses) for t in grids)


def _scalar_index(element: cst.SubscriptElement) -> bool:
    """`[0]`, `[i]`: one position (a loop counter or an int), not a slice, mask or index tensor expression."""
    return isinstance(element.slice, cst.Index) and (
        _is_int_literal(element.slice.value) or isinstance(element.slice.value, cst.Name)
    )


def _is_int_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def _dimensions(call: cst.Call) -> int | None:
    """How many dimensions a factory's tensor has, where the call says: 1 for `torch.tensor([a, b])`,
    `torch.arange(n)` or `torch.zeros(3)`, 2 for `torch.zeros(b, k)`; None when unknown (`zeros(shape)`)."""
    args = positional_args(call)
    name = (dotted_name(call.func) or "").rsplit(".", 1)[-1]
    if name in ("arange", "linspace", "logspace", "randperm"):
        return 1
    if name in _LITERAL_DATA:
        if not args or not isinstance(args[0], (cst.List, cst.Tuple)):
            return None
        nested = any(isinstance(e.value, (cst.List, cst.Tuple, cst.ListComp)) for e in args[0].elements)
        return None if nested else 1
    if name in ("zeros", "ones", "empty", "rand", "randn") and args:
        if isinstance(args[0], (cst.List, cst.Tuple)):
            return len(args[0].elements)
        if len(args) == 1:
            return 1 if isinstance(args[0], cst.Integer) else None
        return len(args)
    size = keyword_arg(call, "size")
    size = size.value if size is not None else None
    if name in ("randint", "zeros", "ones", "empty", "rand", "randn", "full") and isinstance(size, (cst.List, cst.Tuple)):
        return len(size.elements)  # `torch.randint(low=lo, high=hi, size=(batch_size,))`
    if name == "randint" and len(args) == 3 and isinstance(args[2], (cst.List, cst.Tuple)):
        return len(args[2].elements)
    return None


def _is_sequence_literal(call: cst.Call) -> bool:
    """`torch.tensor([a, b])`, a comprehension, or a repeated list (`[0.0] * self.h_dim`, a tree LSTM's empty
    child state): a vector, never a 0-dim scalar."""
    args = positional_args(call)
    return isinstance(repeated_sequence(args[0] if args else None), (cst.List, cst.Tuple, cst.ListComp))


def _sequence_data(ctx, fn: FunctionInfo, call: CallInfo, held_in: str | None) -> bool:
    """`torch.tensor(target)` where `target` was plainly built as a list: a list literal or comprehension,
    or what a method of the same class returns as one (project-NN's `target = self._get_target(filenames)`,
    `return [self.protocol_parser[x] for x in filenames]`): a vector, not a 0-dim scalar. So is data named or
    tested as a list, and data whose tensor (`held_in`) is then indexed or given dimensions."""
    args = positional_args(call.node)
    name = dotted_name(args[0]) if args else None
    held = ctx.dataflow.value_of(name, fn, call.context.order) if name else None
    value = held[0] if held is not None and held[1] is fn else None
    if _built_list(value) or _numpy_array_with_shape(ctx.facts, _before_array_rebinds(ctx, fn, name, held)):
        return True
    if args and _computed_from_host_copy(args[0] if name is None else value, fn):
        return True
    if name is not None and name.isidentifier() and (_LIST_NAME.search(name) or any(
        _tests_for_sequence(test, name) for test in call.context.conditions
    )):
        return True  # `if isinstance(doc_tens, list): doc_tens = torch.tensor(doc_tens)`, `torch.tensor(sent_len_list)`
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and dotted_name(value.func.value) == "self":
        info = ctx.facts.call_info(value)
        method = ctx.facts.resolve_function(info) if info is not None else None
        returns = [r.value for r, _ in method.returns] if method is not None else []
        if returns and all(_built_list(r) for r in returns):
            return True
    if fn.node is None:
        return False
    reads = _ReadWithDimensions(held_in if held_in and held_in.isidentifier() else None, call.node)
    fn.node.visit(reads)
    return reads.found


_LIST_NAME = re.compile(r"_list$")
# what a 0-dim tensor cannot take, or what gives it dimensions
_DIMENSIONED = {"unsqueeze", "expand", "expand_as", "repeat", "transpose", "permute", "split", "chunk", "unbind", "narrow"}


def _tests_for_sequence(test, name: str) -> bool:
    """`isinstance(doc_tens, list)` (or a tuple of types with list or tuple among them)."""
    if not (isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2):
        return False
    if dotted_name(test.args[0].value) != name:
        return False
    kinds = test.args[1].value
    types = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
    return any(dotted_name(t) in ("list", "tuple") for t in types)


class _ReadWithDimensions(cst.CSTVisitor):
    """`torch.tensor(data)` of unknown shape whose result is then indexed (`sent_id[heads_ids]`,
    `bounds[:, 0]`) or given dimensions (`.unsqueeze(1)`, `.expand_as(ids)`): a 0-dim tensor raises on an
    index, and an expanded one is no 0-dim scalar either, so the data was a sequence."""

    def __init__(self, name: str | None, made: cst.Call) -> None:
        self.name, self.made = name, made
        self.seen = self.found = False

    def _is_the_tensor(self, node: cst.BaseExpression) -> bool:
        """The factory call itself, or its name read after it."""
        return node is self.made or self.seen and bool(self.name) and isinstance(node, cst.Name) and node.value == self.name

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _DIMENSIONED and self._is_the_tensor(node.value):
            self.found = True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if not self._is_the_tensor(node.value):
            return
        index = node.slice[0].slice if len(node.slice) == 1 else None
        if isinstance(index, cst.Index) and (is_none(index.value) or isinstance(index.value, cst.Ellipsis)):
            return  # `x[None]`, `x[...]`: a 0-dim tensor takes these
        self.found = True

    def leave_Call(self, node: cst.Call) -> None:
        if node is self.made:
            self.seen = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if self.seen and isinstance(node.target, cst.Name) and node.target.value == self.name:
            self.seen = False  # rebound (reads of the new value say nothing of this one)


# numpy factories and where their shape goes: (position, keyword); None: every positional argument is a size
_NUMPY_SHAPED = {
    "numpy.zeros": (0, "shape"), "numpy.ones": (0, "shape"), "numpy.empty": (0, "shape"), "numpy.full": (0, "shape"),
    "numpy.random.rand": None, "numpy.random.randn": None, "numpy.random.random": (0, "size"),
    "numpy.random.choice": (1, "size"), "numpy.random.uniform": (2, "size"), "numpy.random.normal": (2, "size"),
    "numpy.random.randint": (2, "size"), "numpy.random.binomial": (2, "size"),
}


_ARRAY_REBINDS = {"transpose", "reshape", "astype", "copy", "squeeze", "swapaxes", "clip", "round"}


def _before_array_rebinds(ctx, fn: FunctionInfo, name: str | None, held):
    """What `name` held before rebinding itself through array methods: `np.zeros((b, h, w, k))` behind
    `paf_map = paf_map.transpose((0, 3, 1, 2))` (DeepLabCut's target generators)."""
    for _ in range(4):
        value = held[0] if held is not None and held[1] is fn else None
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _ARRAY_REBINDS
                and name is not None and dotted_name(value.func.value) == name):
            return value
        held = ctx.dataflow.value_of(name, fn, held[2])
    return None


def _numpy_array_with_shape(facts, value) -> bool:
    """`mask = np.random.choice([0.0, 1.0], image.shape[2:], p=...)` (HiDDeN's pixel dropout), `np.zeros((h, w))`:
    an array with a shape given, so `torch.tensor(mask)` is a vector, not a 0-dim scalar."""
    if not isinstance(value, cst.Call):
        return False
    q = facts.qualify(value.func) or ""
    if q not in _NUMPY_SHAPED:
        return False
    where = _NUMPY_SHAPED[q]
    return bool(positional_args(value)) if where is None else argument(value, *where) is not None


def _computed_from_host_copy(value, fn: FunctionInfo) -> bool:
    """`self.dense_weight_model.dense_weight(target.cpu().numpy())`: values worked out from a host copy of
    an input, one per element of it (a weight per sample), not a 0-dim scalar."""
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
        return False
    if (dotted_name(value.func) or "").split(".", 1)[0] in _PYTHON_LIBRARIES:
        return False  # `np.mean(x.cpu().numpy())`: a library reduction may well hand back one number
    params = set(fn.params) - {"self", "cls", "ctx"}
    return any(_host_copy_of(arg.value, params) for arg in value.args)


def _built_list(value) -> bool:
    """A list comprehension, or a list literal with elements."""
    return isinstance(value, cst.ListComp) or isinstance(value, cst.List) and bool(value.elements)


def _is_empty_data(call: cst.Call) -> bool:
    """`torch.Tensor([])`: data with no elements (not `torch.zeros([])`, a size that makes a 0-dim value)."""
    args = positional_args(call)
    return len(args) == 1 and isinstance(args[0], (cst.List, cst.Tuple)) and not args[0].elements


def _is_zero_size(call: cst.Call, factory: str | None = None) -> bool:
    """`torch.empty(0)`, `torch.empty([0])`, `torch.zeros((0,))`, `torch.Tensor(0)`: no elements at all
    (not `torch.tensor([0])` nor `torch.Tensor([0])`, whose argument is the data: one element)."""
    args = positional_args(call)
    if len(args) != 1:
        return False
    size = args[0]
    if factory in _LITERAL_DATA and (factory in ("tensor", "as_tensor") or isinstance(size, (cst.List, cst.Tuple))):
        return False
    if isinstance(size, (cst.List, cst.Tuple)) and len(size.elements) == 1:
        size = size.elements[0].value
    return isinstance(size, cst.Integer) and size.evaluated_value == 0


def _is_zero_dim_size(call: cst.Call) -> bool:
    """`torch.zeros(())`, `torch.zeros([], requires_grad=True)`, `torch.zeros(size=(), dtype=torch.long)`:
    a 0-dim tensor."""
    args, keyword = positional_args(call), keyword_arg(call, "size")
    size = args[0] if len(args) == 1 else keyword.value if keyword is not None and not args else None
    return isinstance(size, (cst.Tuple, cst.List)) and not size.elements


def _device_fix(ctx, call: cst.Call, forward: FunctionInfo):
    """Add `device=x.device` when forward's input `x` is plainly a tensor (its .device/.shape/.size are used)."""
    params = [p for p in forward.params if p not in ("self", "cls")]
    if not params or forward.node is None:
        return None
    x = params[0]
    used_as_tensor = any(
        c.receiver == x and c.method in ("size", "dim", "view", "reshape", "to") for c in forward.calls
    ) or f"{x}.shape" in ctx.code(forward.node) or f"{x}.device" in ctx.code(forward.node)
    if not used_as_tensor:
        return None
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(
        cst.Arg(
            keyword=cst.Name("device"),
            value=cst.Attribute(cst.Name(x), cst.Name("device")),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
    )
    return call, call.with_changes(args=args)


_METADATA_ATTRS = {"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad", "training", "batch_size"}
_METADATA_CALLS = {"size", "dim", "numel", "item", "tolist", "element_size", "stride", "data_ptr", "get_device", "shape_as_tensor"}
_HOST_BUILTINS = {"len", "int", "float", "bool", "isinstance", "range", "str", "print", "hasattr", "getattr"}


class _DeviceValues:
    """Which values in a function live on the model's device: its tensor parameters (the input), the
    model's own layers, parameters and buffers (`self.proj(x)`, `self.weight`), and what is computed
    from them. A statement that touches none of them computes on the host only: CPU tensors meeting
    there (`neg = neg + torch.arange(b)[:, None] * high`) meet nothing on the GPU."""

    def __init__(self, fn: FunctionInfo, callers=None) -> None:
        self.fn = fn
        self._names: set[str] | None = None
        # () -> {param: whether some caller in the file passes a device value} or None when nobody calls it
        self._callers = callers

    @property
    def names(self) -> set[str]:
        """Worked out on first use: most functions make no tensor that needs it."""
        if self._names is None:
            self._names = set()
            self._work_out(self.fn)
        return self._names

    def _work_out(self, fn: FunctionInfo) -> None:
        self.attrs = _device_attributes(fn.cls)
        self.pure_methods = _arithmetic_methods(fn.self_class())
        # `reward = reward.to("cpu")`: the function moved it to the host on purpose, to compute there
        host = {t for a in fn.assigns if a.value is not None and _brought_to_host(a.value) for t in a.targets}
        params = [p for p in fn.params if p not in ("self", "cls", "ctx", *host) and not _host_parameter(fn, p)]
        # the inputs are on the device, unless a parameter is only used as a container of other things
        # (`for r in results`, `batch["key"]`, `results.get(...)`): the serving code's list of dicts
        if fn.name == "forward":  # a module's inputs
            self._names |= set(params) - _used_as_containers(fn, params)
        else:  # a helper's parameters: what its callers pass, or else those it uses as tensors
            bound = self._callers() if self._callers is not None else None
            if bound is not None:  # `self.get_target(l, targets, anchors, in_h, in_w)`: in_h is a size
                self._names |= {p for p in params if bound.get(p)}
                params = []
            else:
                self._names |= _arithmetic_operands(fn) & set(params)
        for c in fn.calls:
            receiver = c.receiver or ""
            if receiver in params and c.method in _TENSOR_METHODS:
                self._names.add(receiver)  # `y.view(...)`, `x.transpose(1, 2)`: a tensor input
            if (c.qualname or "").startswith("torch.") or (c.dotted or "").startswith("self."):
                self._names |= {dotted_name(a.value) for a in c.node.args if dotted_name(a.value) in params}
        for a in fn.assigns:
            if isinstance(a.value, cst.Subscript) and dotted_name(a.value.value) in params:
                self._names.add(dotted_name(a.value.value))
        # (`halt_prob = torch.sigmoid(halts / self.temperature)`: a torch function's result is a tensor,
        # whatever its name says)
        torch_made = {id(c.node) for c in fn.calls if (c.qualname or "").startswith("torch.")}
        for _ in range(2):  # what is computed from them, in any order the loops allow
            # `for in_feat, union_map in zip(in_feats, union_maps)` over `*in_feats`: an element of the inputs (not
            # `for tokens in token_lists`, a plain parameter that may hold python data)
            star = fn.node.params.star_arg if fn.node is not None else None
            iterable = {n for n in self._names if n not in fn.params} | (
                {star.name.value} if isinstance(star, cst.Param) and star.name.value in self._names else set()
            )
            for loop in fn.loops:
                self._names.update(_loop_elements_of(loop, iterable))
            for c in fn.calls:  # `outputs.append(member(x))`: a list of device values, stacked later
                if c.method in ("append", "extend", "insert") and c.receiver and c.receiver.isidentifier() and any(
                    self.touches(arg.value) for arg in c.node.args
                ):
                    self._names.add(c.receiver)
            for a in fn.assigns:
                if a.value is not None and self.touches(a.value) and not _brought_to_host(a.value):
                    # (`batch_size = td.batch_size[0]` is a number, but `edge_index = torch.empty(..., device=d)`
                    # is a tensor placed on the device, whatever its name)
                    placed = isinstance(a.value, cst.Call) and (_placed_on_device(a.value) or id(a.value) in torch_made)
                    self._names.update(
                        t for t in a.targets
                        if "." not in t and not t.endswith("[]") and t not in host and (placed or not _HOST_PARAM.search(t))
                    )

    def touches(self, node: cst.CSTNode, excluding: str | set[str] | None = None) -> bool:
        """Whether `node` reads a value on the model's device (`excluding` names: the tensor asked about)."""
        found = False
        names = self.names - ({excluding} if isinstance(excluding, str) else excluding) if excluding else self.names
        attrs = self.attrs
        pure = self.pure_methods

        class _V(cst.CSTVisitor):
            def visit_Attribute(self, n: cst.Attribute) -> bool:
                nonlocal found
                if n.attr.value in _METADATA_ATTRS:
                    return False
                d = dotted_name(n) or ""
                if d.startswith("self.") and _TEXT_PREPROCESSOR.search(d.split(".")[1]):
                    return False  # `self.reader_tokenizer.batch_encode_plus(...)`: tensors made on the host
                if d.startswith("self.") and d.split(".")[1] in attrs:
                    found = True
                return True

            def visit_Call(self, n: cst.Call) -> bool:
                nonlocal found
                func = n.func
                if _placed_on_device(n) and not _on_the_device_of_another(n, names):
                    found = True  # `torch.arange(n, device=x.device)`, `t.to(x.device)`, `t.cuda()`
                elif _sized_factory(dotted_name(func)):
                    return False  # `torch.randint(low=lo, high=start_max + 1, size=(k,))`: a CPU tensor, whatever its bounds
                if isinstance(func, cst.Attribute) and func.attr.value in _METADATA_CALLS:
                    return False
                if isinstance(func, cst.Name) and func.value in _HOST_BUILTINS:
                    return False
                if _moved_to_host(n):
                    return False  # PipeGCN's `gat_flops(F_in, F_out, in_deg.to('cpu'), ...)`: a host copy
                d = dotted_name(func) or ""
                if d.startswith("self.") and _TEXT_PREPROCESSOR.search(d.split(".")[1]):
                    return False  # `self.reader_tokenizer(query, return_tensors="pt")`: CPU tensors (Atlas)
                if isinstance(func, cst.Attribute) and func.attr.value == "forward" and isinstance(func.value, cst.Call) and (
                    dotted_name(func.value.func) == "super"
                ):
                    found = True  # BART's `LearnedPositionalEmbedding(nn.Embedding)`: `super().forward(positions)` reads the weight
                if d.startswith("self.") and d.count(".") == 1 and d != "self.training":
                    method = d.split(".")[1]
                    found = found or method in attrs or not (method.startswith("_") or method in pure)
                return True

            def visit_Name(self, n: cst.Name) -> None:
                nonlocal found
                if n.value in names:
                    found = True

        node.visit(_V())
        return found


def _reads_only_itself(value: cst.BaseExpression, target: str) -> bool:
    """`kernel /= torch.sum(kernel)`: the update reads nothing but the tensor itself (and torch), so it
    brings no CUDA value in."""
    read: set[str] = set()

    class _Bases(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # (the attribute's own name is not a read)
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)  # (`dim=0`: a keyword, not a read)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            read.add(node.value)

    value.visit(_Bases())
    return read <= {target, "torch"}


def _loop_elements_of(loop, device: set[str]) -> set[str]:
    """The loop variables bound to elements of device values: `x` of `for x in xs`, `feat` of
    `for feat, m in zip(feats, maps)` or `for i, feat in enumerate(feats)`, when `xs`/`feats` itself (not a
    view of it) is on the device."""
    node = loop.node
    if not isinstance(node, cst.For):
        return set()
    it, target = node.iter, node.target
    if isinstance(it, cst.Call) and dotted_name(it.func) == "enumerate" and it.args and isinstance(
        target, (cst.Tuple, cst.List)
    ) and len(target.elements) == 2:
        it, target = it.args[0].value, target.elements[1].value
    direct = {id(it)} | ({id(a.value) for a in it.args} if isinstance(it, cst.Call) else set())
    return {name for base, name in _walked_pairs(target, it) if id(base) in direct and base.value in device}


def _reads_only_sizes(value: cst.BaseExpression) -> bool:
    """`input_offset += batch_size`, with `batch_size = batch_sizes[i]` of a packed sequence: every name the
    update reads is named as a size or a count, kept on the host (a PackedSequence's `batch_sizes` always is)."""
    read = names_in(value)
    return bool(read) and all(_HOST_PARAM.search(name) for name in read)


def _computed_on_host(value: cst.BaseExpression, uses) -> bool:
    """`gat_flops(F_in, F_out, in_deg.to('cpu'), num_dst, heads)`: the device values it reads are copied to
    the host first, so what it returns lives there too."""
    return any(_moved_to_host(c) for c in calls_within(value)) and not uses.device.touches(value)


def _moved_to_host(call: cst.Call) -> bool:
    """`t.cpu()`, `t.to("cpu")`, `t.to(device="cpu")`, `t.to(torch.device("cpu"))`: the value is on the host."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in ("cpu", "to"):
        return False
    if func.attr.value == "cpu":
        return not call.args
    target = _device_argument(call)
    if isinstance(target, cst.Call) and (dotted_name(target.func) or "").endswith("device") and target.args:
        target = target.args[0].value  # (`torch.device("cpu")`)
    return _is_cpu(target)


_TEXT_PREPROCESSOR = re.compile(r"tokeni[sz]er|processor", re.I)
_HOST_PARAM = re.compile(
    r"^(n|k|i|j|num|bsz|size|sizes|shape|dim|dims|step|steps|epoch|mode|length|padding_count|incremental_state)$"
    r"|^(n|num)_\w+|_(size|sizes|shape|dim|len|length|count|idx|index|id|ids|mode|steps?|ratio|rate|prob|p)$"
)


def _only_indexes(fn: FunctionInfo, name: str, facts=None, depth: int = 0) -> bool:
    """Every read of `name` in `fn` selects from another tensor (`feat[name]`), which works with a CPU index,
    or hands it to a helper of the file that only does that (powerful-gnns' `self.maxpool(h, padded_neighbors)`)."""
    reads = indexes = 0

    class _V(cst.CSTVisitor):
        depth = 0

        def visit_SubscriptElement(self, n: cst.SubscriptElement) -> None:
            self.depth += 1

        def leave_SubscriptElement(self, original_node: cst.SubscriptElement) -> None:
            self.depth -= 1

        def visit_Name(self, n: cst.Name) -> None:
            nonlocal reads, indexes
            if n.value == name:
                reads += 1
                indexes += self.depth > 0

    fn.node.body.visit(_V())
    if reads > indexes and facts is not None and depth < 2:
        for c in fn.calls:
            if not any(isinstance(a.value, cst.Name) and a.value.value == name for a in c.node.args):
                continue
            helper = facts.resolve_function(c)
            if helper is None or helper is fn or helper.node is None:
                continue
            indexes += sum(
                isinstance(value, cst.Name) and value.value == name and _only_indexes(helper, param, facts, depth + 1)
                for param, value in _bind_arguments(c.node, helper.params)
            )
    return reads > 0 and (reads == indexes or _only_masks(fn, name))


def _only_host_arguments(fn: FunctionInfo, name: str) -> bool:
    """Every read of `name` in `fn` is an argument that its callee reads on the host: the lengths of
    `self.ctc_loss(th_pred, th_target, th_ilen, th_olen)` (the callee known by its last name, as in
    `_HOST_ARGUMENTS`)."""
    host = sum(
        isinstance(read, cst.Name) and read.value == name
        for call in fn.calls for read in _host_read_arguments(call.node, call.dotted or "")
    )
    reads = len(_name_uses(fn).get(name, ()))
    return reads > 0 and reads == host


def _held_loss_class(fn: FunctionInfo, callee: str) -> str | None:
    """The class name of the loss `self.<attr>` holds, when every assignment of it in the class builds one
    (STR-Fewer-Labels' `self.criterion = torch.nn.CTCLoss(zero_infinity=True)`)."""
    cls = fn.self_class()
    if cls is None or not callee.startswith("self.") or callee.count(".") != 1:
        return None
    built = {(dotted_name(a.value.func) or "").rsplit(".", 1)[-1] for m in cls.methods.values() for a in m.assigns
             if a.targets == (callee,) and isinstance(a.value, cst.Call)}
    return built.pop() if len(built) == 1 and next(iter(built)) in _HOST_ARGUMENTS else None


def _host_read_arguments(node: cst.Call, callee: str) -> list[cst.BaseExpression]:
    """The arguments of a call to `callee` (known by its last name) that it reads on the host (`_HOST_ARGUMENTS`)."""
    found = (argument(node, *where) for where in _HOST_ARGUMENTS.get(callee.rsplit(".", 1)[-1], ()))
    return [read for read in found if read is not None]


def _only_masks(fn: FunctionInfo, name: str) -> bool:
    """ALBEF's and BLIP's `mask()`: `masked = torch.bernoulli(probability_matrix).bool()`, then `masked` is only
    written through with a scalar (`masked[input_ids == pad] = False`), combined with other such masks
    (`& masked`, `~masked`) and used to select from other tensors. Measured on an H200 (torch 2.11): a CPU bool
    tensor written through with a CUDA mask and a scalar works, and a CPU mask selects from CUDA tensors."""
    uses = _name_uses(fn)
    pending, seen = [name], set()
    while pending:
        current = pending.pop()
        if current in seen or len(seen) > 6:
            continue
        seen.add(current)
        for use, parents in uses.get(current, ()):
            kind = _mask_use(use, parents)
            if kind is None:
                return False
            if isinstance(kind, str):
                pending.append(kind)  # a mask derived from it, held under a new name
    return True


def _mask_use(use: cst.Name, parents: list) -> "str | bool | None":
    """How one read keeps a host mask on the host: True when it indexes or is written through with a scalar,
    the new name when it derives another mask, None otherwise."""
    child = use
    for parent in reversed(parents):
        if isinstance(parent, (cst.SubscriptElement, cst.Index)):
            return True  # `feat[mask]`: selects from another tensor
        if isinstance(parent, cst.Comparison) and parent.left is child and all(
            isinstance(c.operator, (cst.Is, cst.IsNot)) for c in parent.comparisons
        ):
            return True  # `if masked_indices is None:`
        if isinstance(parent, cst.Arg):
            child = parent.value
            continue
        if isinstance(parent, cst.Subscript) and parent.value is child:
            return _written_with_scalar(parent, parents) or None
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.BitInvert):
            child = parent
            continue
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.BitAnd, cst.BitOr)):
            child = parent
            continue
        if isinstance(parent, cst.Call) and any(a.value is child for a in parent.args) and dotted_name(parent.func) in ("torch.bernoulli", "bernoulli"):
            child = parent
            continue
        if isinstance(parent, cst.Attribute) and parent.value is child and parent.attr.value == "bool":
            child = parent
            continue
        if isinstance(parent, cst.Call) and parent.func is child:
            child = parent  # `.bool()`
            continue
        if isinstance(parent, cst.Assign) and parent.value is child and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            return parent.targets[0].target.value
        return None
    return None


def _written_with_scalar(subscript: cst.Subscript, chain: list) -> bool:
    """`masked[cond] = False` / `= self.tokenizer.mask_token_id`: the subscript is an assignment target and
    the value a constant, not a tensor."""
    at = chain.index(subscript)
    parent = chain[at - 1] if at > 0 else None
    grand = chain[at - 2] if at > 1 else None
    if not (isinstance(parent, cst.AssignTarget) and isinstance(grand, cst.Assign)):
        return False
    value = grand.value
    return isinstance(value, (cst.Integer, cst.Float, cst.Name)) and (
        not isinstance(value, cst.Name) or value.value in ("True", "False")
    ) or isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float)) or (
        isinstance(value, cst.Attribute) and (dotted_name(value) or "").startswith("self.")
    )


def _name_uses(fn: FunctionInfo) -> dict[str, list]:
    """Every read of a plain name in fn with the chain of nodes above it (statement first)."""
    found: dict[str, list] = {}

    class _V(cst.CSTVisitor):
        def __init__(self) -> None:
            self.stack: list = []

        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.Name):
                parent = self.stack[-1] if self.stack else None
                if not (isinstance(parent, cst.Attribute) and parent.attr is node) and not (
                    isinstance(parent, cst.AssignTarget) and parent.target is node
                ):
                    found.setdefault(node.value, []).append((node, list(self.stack)))
            self.stack.append(node)
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            self.stack.pop()

    if fn.node is not None:
        fn.node.body.visit(_V())
    return found


def _host_parameter(fn: FunctionInfo, name: str) -> bool:
    """A parameter that is plainly a number or a setting: annotated so, named so (`num`, `seq_len`), or
    given a number for default (`def forward(self, input, scale=1/4)`)."""
    if fn.node is not None:
        for param in (*fn.node.params.params, *fn.node.params.kwonly_params):
            if param.name.value == name and param.annotation is not None:
                text = cst.Module([]).code_for_node(param.annotation.annotation)
                return text in ("int", "float", "bool", "str") or text.startswith(("Optional[int", "Optional[bool"))
            if param.name.value == name and param.default is not None and _number_expression(param.default):
                return True
    return bool(_HOST_PARAM.search(name))


_TENSOR_METHODS = {
    "view", "reshape", "transpose", "permute", "unsqueeze", "squeeze", "flatten", "contiguous", "to", "float",
    "half", "long", "int", "bool", "matmul", "bmm", "mm", "sum", "mean", "masked_fill", "masked_fill_", "expand",
    "expand_as", "repeat", "chunk", "split", "softmax", "log_softmax", "sigmoid", "tanh", "exp", "log", "abs",
    "clamp", "norm", "new_zeros", "new_ones", "new_full", "new_empty", "type_as", "gather", "index_select",
    "narrow", "unfold", "detach", "clone", "cuda", "cpu", "numpy", "argmax", "max", "min", "topk", "t", "mul", "add",
}


_CONTAINER_METHODS = {"get", "items", "keys", "values", "append", "extend", "pop", "update", "setdefault"}


def _used_as_containers(fn: FunctionInfo, names: list[str]) -> set[str]:
    """The names whose every use is a container's: iterated, indexed by a string, or a dict's/list's
    method (`for r in results`, `batch["key"]`, `results.get(...)`). One walk for all of them."""
    if fn.node is None or not names:
        return set()
    wanted = set(names)
    uses: dict[str, int] = {}
    container: dict[str, int] = {}

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value in wanted:
                uses[n.value] = uses.get(n.value, 0) + 1

        def visit_For(self, n: cst.For) -> None:
            if isinstance(n.iter, cst.Name) and n.iter.value in wanted:
                container[n.iter.value] = container.get(n.iter.value, 0) + 1

        def visit_Subscript(self, n: cst.Subscript) -> None:
            if isinstance(n.value, cst.Name) and n.value.value in wanted and any(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString) for e in n.slice
            ):
                container[n.value.value] = container.get(n.value.value, 0) + 1

        def visit_Attribute(self, n: cst.Attribute) -> None:
            if isinstance(n.value, cst.Name) and n.value.value in wanted and n.attr.value in _CONTAINER_METHODS:
                container[n.value.value] = container.get(n.value.value, 0) + 1

    fn.node.body.visit(_V())
    return {n for n in wanted if uses.get(n, 0) > 0 and uses[n] == container.get(n, 0)}


def _arithmetic_operands(fn: FunctionInfo) -> set[str]:
    """Plain names used directly as operands of arithmetic or comparison in fn."""
    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_BinaryOperation(self, n: cst.BinaryOperation) -> None:
            found.update(o.value for o in (n.left, n.right) if isinstance(o, cst.Name))

        def visit_Comparison(self, n: cst.Comparison) -> None:
            found.update(o.value for o in (n.left, *(t.comparator for t in n.comparisons)) if isinstance(o, cst.Name))

    if fn.node is not None:
        fn.node.body.visit(_V())
    return found


def _placed_on_device(call: cst.Call) -> bool:
    """`t.cuda()`, `torch.arange(n, device=x.device)`, `t.to(x.device)`: the result is on the model's device."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda" or _cuda_type(call):
        return True
    target = _device_argument(call)
    if target is None or _is_cast(target) or _is_cpu(target):
        return False
    text = dotted_name(target) or ""
    return "device" in text or "cuda" in text or isinstance(target, cst.Attribute) or text in ("dev", "device")


def _on_the_device_of_another(call: cst.Call, names: set[str]) -> bool:
    """`torch.zeros(1, device=perm.device)` beside a CPU `perm`: on that tensor's device, not the model's
    (`device=self.device` is the module's own, the model's)."""
    target = _device_argument(call)
    return (
        isinstance(target, cst.Attribute) and target.attr.value == "device" and isinstance(target.value, cst.Name)
        and target.value.value not in names and target.value.value != "self"
    )


_JOINING = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})
_JOIN_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in _JOINING)
# Per-sample terms a caller sums with its own: log-determinants of flows, log-densities, KL terms
_ACCUMULATED_TERM = re.compile(r"^(ldj|log_?det\w*|logabsdet|log_?abs_?det\w*|log_?jac\w*|log_?probs?|log_?p|kl|kld|nll)$", re.I)


def _joined_inline(fn: FunctionInfo, made: cst.Call, uses) -> bool:
    """The factory is written as an operand of a joining call (`torch.cat`, `torch.stack`, `torch.meshgrid`)
    beside an operand placed on the device: `torch.meshgrid(torch.arange(n), torch.arange(n, device=d))`
    raises at once, whatever the result is used for later."""
    for c in fn.calls:
        if c.qualname not in _JOINING and c.qualname not in _SPREADING_CALLS:
            continue
        args = [a.value for a in c.node.args if a.keyword is None]
        if len(args) == 1 and isinstance(args[0], (cst.List, cst.Tuple)):
            args = [e.value for e in args[0].elements]
        mine = [a for a in args if any(part is made for part in _shaping_chain(a))]
        if mine and any(uses.device.touches(a) for a in args if a not in mine):
            return True
    return False


_SPREADING_CALLS = frozenset({"torch.meshgrid", "torch.broadcast_tensors"})


def _joining_calls(facts, fn: FunctionInfo, name: str):
    """(call, how it is written) for the calls of fn that join `name` with other tensors: `torch.cat((acc,
    loss))`, or `map(partial(torch.stack, dim=-1), (all_losses, all_indices))`."""
    for c in fn.calls:
        if not any(name in names_in(a.value) for a in c.node.args):
            continue  # (the cheap question first: most calls do not take the name at all)
        inner_calls = calls_within(c.node)
        joined = [inner for inner in inner_calls if facts.qualify(inner.func) in _JOINING]
        referenced = [a.value for inner in inner_calls for a in inner.args
                      if isinstance(a.value, (cst.Attribute, cst.Name)) and facts.qualify(a.value) in _JOINING]
        if joined or referenced:
            yield c, dotted_name((joined[0].func if joined else referenced[0])) or "torch.cat"


def _joined_with_device_values(facts, fn: FunctionInfo, made, name: str | None, uses, lists=()) -> str | None:
    """How `name` (or a list `made` was appended to) is joined with tensors on the device, after `made`
    and before anything replaces it: `cat((all_losses, loss))` with the CUDA loss. Not a join with
    host values (`cat((char, h.cpu().data))`), not after a move, nor after the placeholder is replaced
    (`if emb.shape[-1] == 0: emb = step else: emb = cat([emb, step], 1)`)."""
    if not name or not name.isidentifier() or name in uses.moved_names:
        return None
    replaced = [a.context.order for a in fn.assigns if name in a.targets and a.value is not None
                and a.context.order > made.context.order and name not in names_in(a.value)
                and not any(c is made.node for c in calls_within(a.value))]  # (not the assignment that makes it)
    for holder in (name, *lists):
        appended = [a.value for c in fn.calls if c.method == "append" and c.receiver == holder for a in c.node.args[:1]]
        for join, how in _joining_calls(facts, fn, holder):
            if join.context.order <= made.context.order or any(made.context.order < r < join.context.order for r in replaced):
                continue
            operands = [a.value for a in join.node.args] + (appended if holder != name else [])
            if any(_on_device(uses, o, holder) for o in operands):
                return how
    return None


def _on_device(uses, value: cst.BaseExpression, skip: str) -> bool:
    """A join operand on the device: not the held name itself, nor a value brought to the host."""
    while isinstance(value, cst.Attribute) and value.attr.value == "data" or (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "detach"
    ):
        value = value.value if isinstance(value, cst.Attribute) else value.func.value
    if _brought_to_host(value) or dotted_name(value) == skip:
        return False
    if isinstance(value, (cst.Tuple, cst.List)):
        return any(_on_device(uses, e.value, skip) for e in value.elements if isinstance(e, cst.Element))
    return uses.device.touches(value)


def _scalar_literal(call: cst.Call) -> bool:
    """`torch.tensor(0.)`, `torch.tensor(-1, dtype=torch.long)`: a 0-dim tensor by its literal."""
    data = call.args[0].value if call.args and call.args[0].keyword is None else None
    return data is not None and _number_literal(data)


def _kept_element_by_element(cls, attr: str) -> bool:
    """Every use of `self.<attr>` in the class reads or writes one element (`self.finished[k] = False`,
    `if self.finished[k]:`, `self.timestep[k] += 1`) or builds it anew: host-side bookkeeping (salina's
    gym agent keeps a flag and a step count per environment), whose elements are 0-dim values that mix
    with CUDA tensors without error."""
    if cls is None:
        return False
    scan = _ElementUses(attr)
    for method in cls.methods.values():
        if method.node is not None:
            method.node.body.visit(scan)
    return scan.elements > 0 and scan.others == 0


class _ElementUses(cst.CSTVisitor):
    def __init__(self, attr: str) -> None:
        self.attr, self.elements, self.others = attr, 0, 0

    def _is_attr(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Attribute) and node.attr.value == self.attr and dotted_name(node.value) == "self"

    def visit_Assign(self, node: cst.Assign) -> bool:
        if any(self._is_attr(t.target) for t in node.targets):
            node.value.visit(self)  # `self.finished = torch.tensor([...])`, `self.timestep = 0`: bound anew, not used
            return False
        return True

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        if self._is_attr(node.value):
            single = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            index = node.slice[0].slice.value if single else None
            if isinstance(index, (cst.Name, cst.Integer)):
                self.elements += 1
            else:
                self.others += 1
            return False
        return True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if self._is_attr(node):
            self.others += 1
            return False
        return True


def _sized_factory(dotted: str | None) -> bool:
    """`torch.randint`, `torch.zeros`, ...: a factory whose arguments are sizes and bounds."""
    return bool(dotted) and dotted.startswith("torch.") and dotted[6:] in _SIZED_FACTORIES


def _number_of(call: cst.Call) -> bool:
    """`int(t[-1])`, `float(t.sum())`, `len(t)`, `range(n_swaps)`: the tensor read back as Python numbers."""
    return isinstance(call.func, cst.Name) and call.func.value in ("int", "float", "bool", "len", "range")


def _cast_to_host(fn: FunctionInfo, factory: cst.Call) -> bool:
    """The factory is part of a value brought to the host as it is assigned: `size = int(width *
    torch.zeros(1).normal_(0.8, 0.3))` keeps a Python number, not the tensor."""
    return any(
        a.value is not None and _brought_to_host(a.value) and any(c is factory for c in calls_within(a.value))
        for a in fn.assigns
    )


def _brought_to_host(value: cst.BaseExpression) -> bool:
    """`ids.squeeze(0).to(dtype=torch.long, device="cpu")`, `x.detach().cpu()`, `t.tolist()`, or a Python
    number made of it: `int(width * torch.zeros(1).normal_(0.8, 0.3))` (big-sleep's cutout size); also a
    choice between a host copy and a host fallback: `m[0].cpu() if torch.is_tensor(m) else torch.ones(q)`."""
    if isinstance(value, cst.IfExp):
        branches = (value.body, value.orelse)
        return any(_brought_to_host(b) for b in branches) and all(_brought_to_host(b) or _host_fallback(b) for b in branches)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("int", "float", "bool"):
        return True
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
        return False
    method = value.func.attr.value
    if method in ("cpu", "numpy", "tolist", "item", "shape_as_tensor", "_shape_as_tensor"):
        return True  # (`torch.onnx.operators.shape_as_tensor(x)`: the shape, as a CPU tensor)
    return method == "to" and _is_cpu(_device_argument(value))


def _host_fallback(value: cst.BaseExpression) -> bool:
    """`None`, a number, or a factory given no device: what stands in for a host copy that is missing."""
    if isinstance(value, (cst.Integer, cst.Float)) or isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
        return True
    if not isinstance(value, cst.Call):
        return False
    callee = dotted_name(value.func) or ""
    return callee.startswith("torch.") and callee[6:] in _FACTORIES and keyword_arg(value, "device") is None


def _works_on_host_copies(fn: FunctionInfo, uses) -> bool:
    """`x = feat.detach().float().cpu()` and nothing else reads the device: the function (a visualizer, a
    PCA of a feature map) copies what it needs to the host and computes there, so what it makes meets
    host tensors only."""
    copied: set[int] = set()
    for a in fn.assigns:
        if a.value is not None and _brought_to_host(a.value) and names_in(a.value) & uses.device.names:
            copied.update(id(c) for c in calls_within(a.value))
    if not copied:
        return False
    return not any(
        a.value is not None and not _brought_to_host(a.value) and uses.device.touches(a.value) for a in fn.assigns
    ) and not any(id(c.node) not in copied and uses.device.touches(c.node) for c in fn.calls) and not any(
        ret.value is not None and uses.device.touches(ret.value) for ret, _ in fn.returns
    )


def _arithmetic_methods(cls) -> set[str]:
    """Methods that never read `self` (`self.calculate_iou(a, b)`): they reach none of the model's
    layers, parameters or buffers, so their result is on the device only if their arguments are.
    Worked out once per class."""
    if cls is None:
        return set()
    if cls not in _ARITHMETIC_METHODS:
        _ARITHMETIC_METHODS[cls] = {
            name for name, method in cls.methods.items()
            if name != "forward" and method.node is not None and not _reads_self(method.node.body)
        }
    return _ARITHMETIC_METHODS[cls]


_ARITHMETIC_METHODS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _reads_self(node: cst.CSTNode) -> bool:
    found = False

    class _V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            nonlocal found
            if isinstance(n, cst.Name) and n.value == "self":
                found = True
            return not found  # stop descending once seen

    node.visit(_V())
    return found


_TORCH_LAYER_BASE = re.compile(r"^torch\.nn\.(modules\.\w+\.)?(Embedding|Linear|Conv\w*|Bilinear|LSTM|GRU|RNN|\w*Norm\w*)$")


def _device_attributes(cls) -> set[str]:
    """`self.X` that hold the model's layers, parameters or buffers."""
    attrs: set[str] = set()
    if cls is None:
        return attrs
    for m in cls.methods.values():
        for c in m.calls:
            if c.method in ("register_buffer", "register_parameter") and c.node.args:
                name = c.node.args[0].value
                if isinstance(name, cst.SimpleString):
                    attrs.add(name.evaluated_value)
        for a in m.assigns:
            for t in a.targets:
                if t.startswith("self.") and t.count(".") == 1 and isinstance(a.value, cst.Call):
                    q = dotted_name(a.value.func) or ""
                    last = q.rsplit(".", 1)[-1]
                    if last.endswith("Tensor") and q.startswith("torch.") and ".cuda." not in q:
                        continue  # `self.anchors = torch.Tensor(anchors)`: a plain CPU tensor, which `.to()` leaves alone
                    if last[:1].isupper() or "Parameter" in q:
                        attrs.add(t[5:])  # `self.proj = nn.Linear(...)`, `self.w = nn.Parameter(...)`, `Block(...)`
    return attrs



# uses of a name that keep it on the host: an index, metadata or a `.cpu()`-side read, handed back
# to the caller, or arithmetic in a statement that touches nothing on the device
_HOST_KINDS = ("index", "cpu", "return", "host")
_SHAPE_OF_ARGUMENT = frozenset({"expand_as", "view_as", "reshape_as"})


class _Statement:
    """A statement being walked; whether it touches the device is worked out only when asked."""

    __slots__ = ("node", "device", "always", "_touches", "ended_at")

    def __init__(self, node: cst.CSTNode, device: "_DeviceValues", always: bool = False) -> None:
        self.node, self.device, self.always, self._touches = node, device, always, None
        self.ended_at: int | None = None

    @property
    def touches(self) -> bool:
        if self._touches is None:
            self._touches = self.always or self.device.touches(_read_part(self.node))
        return self._touches


def _read_part(node: cst.CSTNode) -> cst.CSTNode:
    """What a statement reads: the value of `labels = b1 * h * w + c1`, not the name it binds (which a
    later `labels = labels.to(logits.device)` puts on the device), nor the names it unpacks into (`zz, yy =
    torch.meshgrid(z, y)`, each moved on a later line). Writes into a subscript or an attribute read
    their owner, and keep the whole statement."""
    if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 and isinstance(node.body[0], cst.Assign):
        assign = node.body[0]
        if all(_plain_names(t.target) for t in assign.targets):
            return assign.value
    return node


def _spread_parts(a: AssignInfo) -> list[tuple[str, cst.Name]]:
    """(part, operand) for `zz, yy, xx = torch.meshgrid(z, y, x)` (or `broadcast_tensors`, or either over
    a list): each part holds the values of its own operand, spread over the shape of them all."""
    value = a.value
    if len(a.targets) < 2 or not (
        isinstance(value, cst.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in _SPREADING
    ):
        return []
    args = [arg.value for arg in value.args if arg.keyword is None]
    if len(args) == 1 and isinstance(args[0], (cst.List, cst.Tuple)):
        args = [e.value for e in args[0].elements]
    if len(args) != len(a.targets):
        return []
    return [(t, arg) for t, arg in zip(a.targets, args) if isinstance(arg, cst.Name) and t.isidentifier()]


_SPREADING = frozenset(q.rsplit(".", 1)[-1] for q in _SPREADING_CALLS)  # (also as written: `meshgrid(...)` imported)


def _chained(a: AssignInfo) -> bool:
    """`a = b = value`: plain names bound to one value."""
    return isinstance(a.node, cst.Assign) and len(a.node.targets) > 1 and all(
        isinstance(t.target, cst.Name) for t in a.node.targets)


def _plain_names(target: cst.BaseExpression) -> bool:
    """`x`, or `a, b` / `[a, *rest]`: names bound, nothing of theirs read."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(isinstance(e.value, cst.Name) for e in target.elements)
    return isinstance(target, cst.Name)


class _NameCollector(cst.CSTVisitor):
    """Collects the ids of the Name nodes under a node."""

    def __init__(self, into: set[int]) -> None:
        self.into = into

    def visit_Name(self, node: cst.Name) -> None:
        self.into.add(id(node))


class _UseScan(cst.CSTVisitor):
    """How tensors made in one function are used: moved, used as an index, or only read on the CPU side.

    A targeted walk of one small function, done only for forward methods and their helpers.
    """

    def __init__(
        self, fn: FunctionInfo, movers: dict[str, set[str]] | None = None, params_of=None, callers=None, helper_reads=None
    ) -> None:
        self.fn = fn
        self.movers = movers or {}
        self._helper_reads = helper_reads  # (call, argument) -> "index"/"cpu" when the helper reads it only so
        self.params_of = params_of or {}  # helper name -> its parameters, to bind arguments
        self.moved: set[int] = set()  # factory calls moved right away: torch.ones(n).to(x.device)
        self.moved_names: set[str] = set()  # names later moved: mask = mask.to(x.device)
        self.move_calls: dict[str, list[cst.Call]] = {}  # name -> the `.to(...)`-style calls that move it
        self.indexing: set[int] = set()  # nodes used as a subscript index, or read back as numbers (`.item()`)
        self.targets: dict[int, str] = {}
        self.uses: dict[str, list[tuple[int, str]]] = {}  # name -> (when, how) for each read
        self.made_at: dict[int, int] = {}  # factory call -> when it ran, in source order
        self._tick = 0
        self._index_depth = 0
        self._cpu_side_depth = 0
        self._returned: set[int] = set()  # names handed back as they are: `return mean, var`
        self._element_reads: dict[int, int] = {}  # `scale_t[0]`, `done[i][j]`: how many scalar indices pick it
        self.passed_to: dict[int, list[cst.Call]] = {}  # argument node -> the calls it is passed to
        self.guarded: set[int] = set()  # `.cuda()` calls chosen by a device test in a conditional expression
        self.met: dict[str, list[int]] = {}  # name -> when it was read in a body statement on the device
        self.call_tick: dict[int, int] = {}  # call -> when it returned, in source order
        self._device_branch_depth = 0  # inside branches chosen by a device test
        self.moved_at: dict[str, int] = {}  # name -> when it was first moved (or carried into a moved value)
        self._moved_reads: set[int] = set()  # Name nodes read inside a moved value: `x + pe.to(x.device)`
        self._made_buffers: set[int] = set()  # Name nodes registered as buffers: `self.register_buffer("pos", pos)`
        self._host_arg_reads: set[int] = set()  # Name nodes read in an argument taken on the CPU
        self._held_losses: dict[str, str | None] = {}  # `self.criterion` -> the loss class it holds, if known
        self.met_on_return: dict[str, list[int]] = {}  # name -> when a return statement ran it through the device
        self._bound_to_factory: dict[str, int | None] = {}  # name -> the host factory it holds at this point of the walk
        self._factories = {id(c.node) for c in fn.calls if _factory_name(c)}
        for a in fn.assigns:
            value = a.value
            if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Call):
                value = value.expression  # `poses = -torch.ones((b, n, k, 5))`: the same tensor, negated
            if len(a.targets) != 1 and not isinstance(value, cst.Call):
                continue
            if isinstance(value, cst.IfExp):  # `c = torch.zeros(n) if cell else None`
                for branch in (value.body, value.orelse):
                    if isinstance(branch, cst.Call):
                        self.targets[id(branch)] = a.targets[0]
            elif isinstance(value, cst.BinaryOperation):  # `offset = torch.arange(0, b) * n`, `torch.arange(t).float() * r`
                for operand in (value.left, value.right):
                    for part in _shaping_chain(operand) if isinstance(operand, cst.Call) else ():
                        self.targets[id(part)] = a.targets[0]
            elif isinstance(value, cst.Call) and len(a.targets) == 1:
                for part in _shaping_chain(value):  # `idx = torch.Tensor([]).long()`
                    self.targets[id(part)] = a.targets[0]
                if (dotted_name(value.func) or "").rsplit(".", 1)[-1] == "Variable" and value.args:
                    self.targets[id(value.args[0].value)] = a.targets[0]  # `v = Variable(torch.Tensor(...))`
            elif len(a.targets) > 1 and isinstance(value, cst.Call) and isinstance(a.node, cst.Assign) and len(a.node.targets) > 1:
                for part in _shaping_chain(value):  # `kv_idx = block_idx = torch.arange(n)`: one tensor, two names
                    self.targets[id(part)] = a.targets[0]
            elif (len(a.targets) > 1 and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                  and value.func.attr.value in _SPLITTING):
                # `z0, z1 = torch.randn([2 * n, d]).chunk(2)`: the pieces are the factory's, under the first name
                for part in _shaping_chain(value.func.value):
                    self.targets[id(part)] = a.targets[0]
            elif len(a.targets) > 1 and isinstance(value, cst.Call) and not _runs_held_layer(fn, value):
                # `mesh_a, mesh_b = torch.meshgrid(torch.arange(n), torch.arange(m))`: the outputs stand for
                # the factories, under the first name; what happens to either happens to the group (not
                # `_, h = self.rnn(x, (torch.zeros(1, b, d), c0))`: a layer takes them in, beside the input)
                for arg in value.args:  # (YOLOX: `yv, xv = meshgrid([torch.arange(h), torch.arange(w)])`)
                    for part in _value_calls(arg.value):
                        self.targets[id(part)] = a.targets[0]
        walks = _walks(fn)
        self._walked: set[str] = set()  # loop variables bound to one element of a tensor at a time
        for target, it in walks:  # `for shift in torch.arange(1, 4):` binds each element, as an assignment would
            if isinstance(it, cst.Call) and isinstance(target, cst.Name):
                for part in _shaping_chain(it):
                    self.targets.setdefault(id(part), target.value)
                self._walked.add(target.value)
        self._tracked = set(self.targets.values())
        # `x, t_span = self._prep_integration(x, t_span)`: what a helper hands back is judged here, by its use
        self.helper_results: set[int] = set()
        owner = fn.self_class()
        methods = owner.methods if owner is not None else {}
        helper_assigns = []  # (assignment, the method of this class it calls)
        for a in fn.assigns:
            callee = dotted_name(a.value.func) if isinstance(a.value, cst.Call) else None
            if callee and callee.startswith("self.") and callee[5:] in methods:
                helper_assigns.append((a, methods[callee[5:]]))
                self.helper_results.add(id(a.value))
                self._tracked.update(t for t in a.targets if t.isidentifier())
        self._assign_info = {id(a.node): a for a in fn.assigns}
        self.rebound: dict[str, list[tuple[int, AssignInfo]]] = {}  # name -> (when, assignment) for each fresh value
        # Names that hold a tracked tensor after reshaping, selection or an in-place fill:
        # `targets = zeros.scatter_(1, y, 1)`, `keep = rand.topk(k).indices`, `b = b[..., None]`.
        self.derived_from: dict[str, set[str]] = {}
        self._derive_reads: set[int] = set()
        for a in fn.assigns:
            spread = _spread_parts(a)
            if len(a.targets) > 1 and a.targets[0] in self._tracked and isinstance(a.value, cst.Call) and not spread:
                for other in a.targets[1:]:
                    self.derived_from.setdefault(other, set()).add(a.targets[0])
                    self._tracked.add(other)
            for target, read in spread:  # `zz, yy, xx = torch.meshgrid(z, y, x)`: zz holds z's values
                if read.value in self._tracked:
                    self._derive_reads.add(id(read))
                    self.derived_from.setdefault(target, set()).add(read.value)
                    self._tracked.add(target)
            if len(a.targets) == 1 and a.targets[0].isidentifier() and isinstance(a.value, (cst.List, cst.Tuple)):
                self._held_by(a.targets[0], [e.value for e in a.value.elements])  # `ret = [features, counts]`
            base = _derivation_base(a.value) if len(a.targets) == 1 else None
            if base is not None and base.value in self._tracked:
                self._derive_reads.add(id(base))
                self.derived_from.setdefault(a.targets[0], set()).add(base.value)
                self._tracked.add(a.targets[0])
        # `bucket = self.relative_position_bucket(relative_position, ...)`, a method that reads nothing of
        # `self`: arithmetic on what it is given, so its result carries the argument (moved with it)
        for a, helper in helper_assigns:
            if len(a.targets) != 1 or not a.targets[0].isidentifier() or not _pure_of_self(helper):
                continue
            for arg in a.value.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in fn.assigned_names():
                    self._derive_reads.add(id(arg.value))
                    self.derived_from.setdefault(a.targets[0], set()).add(arg.value.value)
                    self._tracked.add(a.targets[0])
        # Whatever is computed from tracked tensors carries them: `key = torch.cat([a, b])`,
        # `distance = key[None, :] - query[:, None]` ... `distance.to(x.device)` moves a and b too.
        # (Only for moves: reads in such expressions are still uses of their own.)
        self.flows_into: dict[str, set[str]] = {}
        self.carried_by: dict[int, str] = {}  # factory inside an expression -> the name the result gets
        # factory -> the value it is part of, copied into a plain slice of another tensor
        self.copied_into_slice: dict[int, cst.BaseExpression] = {}
        for a in fn.assigns:  # `div = torch.exp(torch.arange(0, d, 2) * c)`
            # (also `tgt_mask = query_mask = torch.triu(torch.ones(n, n), 1)`: one tensor, under its first name)
            if a.value is not None and (len(a.targets) == 1 or _chained(a)):
                sliced = _plain_slice_write(a)
                for inner in _value_calls(a.value):
                    self.carried_by.setdefault(id(inner), a.targets[0].removesuffix("[]"))
                    if sliced:
                        self.copied_into_slice[id(inner)] = a.value
                    self._tracked.add(a.targets[0].removesuffix("[]"))
        for c in fn.calls:  # `blocks.append(torch.arange(st, ed))`, `blocks.append(temp)`
            if c.method == "append" and c.receiver and "." not in c.receiver and len(c.node.args) == 1:
                for part in _value_calls(c.node.args[0].value):
                    self.carried_by.setdefault(id(part), c.receiver)
                name = dotted_name(c.node.args[0].value)
                if name:
                    self.flows_into.setdefault(c.receiver, set()).add(name)
                self._held_by(c.receiver, [c.node.args[0].value])  # `ret.append(counts)`
                if c.receiver in self._tracked and isinstance(c.node.func, cst.Attribute):
                    self._derive_reads.add(id(c.node.func.value))  # (appending reads none of the list's tensors)
                self._tracked.add(c.receiver)
        for a in sorted(fn.assigns, key=lambda a: a.context.order):
            if len(a.targets) == 1 and a.value is not None:
                target = a.targets[0].removesuffix("[]")  # `pe[:, 0::2] = torch.sin(position * div)` fills pe
                used = {n for n in _read_names(a.value) if n in self._tracked} - {target}
                if used:
                    self.flows_into.setdefault(target, set()).update(used)
                    self._tracked.add(target)
            elif spread := _spread_parts(a):
                for target, read in spread:
                    if read.value in self._tracked and target != read.value:
                        self.flows_into.setdefault(target, set()).add(read.value)
            elif a.value is not None and isinstance(a.value, cst.Call):
                # `xx, yy = torch.meshgrid(nodes, offsets)`: each part is computed from what the call reads
                # (part by part when each operand is a name: `_spread_parts`)
                used = {n for n in _read_names(a.value) if n in self._tracked}
                for target in a.targets if used else ():
                    if target.isidentifier() and target not in used:
                        self.flows_into.setdefault(target, set()).update(used)
                        self._tracked.add(target)
        # `for idx in perm: z[idx + i * bs] = ...`, `[... for dx, dy in zip(off_x.reshape(-1), off_y.reshape(-1))]`:
        # the loop variables are elements of a tracked tensor
        for target, it in walks if self._tracked else ():
            for read, name in _walked_pairs(target, it):
                if read.value in self._tracked:
                    self._walked.add(name)
                    self._derive_reads.add(id(read))
                    self.derived_from.setdefault(name, set()).add(read.value)
                    self._tracked.add(name)
        self._host_made: dict[int, _Statement] = {}
        self.device = _DeviceValues(fn, callers)
        self._statements: list[_Statement] = []  # the statements being walked (whether each touches the device)
        if fn.node is not None:
            fn.node.body.visit(self)
        self._follow_derivations()
        self._feeds: dict[str, set[str]] = {}  # source -> what is computed from it
        for result, sources in self.flows_into.items():
            for source in sources:
                self._feeds.setdefault(source, set()).add(result)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        # a value handed out of the function meets whatever the caller has: not host-only
        returns = any(isinstance(small, cst.Return) for small in node.body)
        self._statements.append(_Statement(node, self.device, always=returns))

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._statements.pop().ended_at = self._tick

    def visit_If(self, node: cst.If) -> bool:
        """`if ids.numel() == 0 or int(ids[-1]) != eos:`: a test is a statement of its own."""
        for draw in _single_draws_compared(node.test):
            # `if torch.empty(1).uniform_(0, 1) < drop_prob:` (QANet's layer dropout): one random draw,
            # compared to a Python number and read back as a bool where it is made
            self.indexing.update(id(part) for part in _shaping_chain(draw))
        self._statements.append(_Statement(node.test, self.device))
        node.test.visit(self)
        self._statements.pop()
        chosen = _tests_device(node.test)
        self._device_branch_depth += chosen  # `if not x.is_cuda: cpu_kernel(x, out) else: out = out.cuda()`
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        self._device_branch_depth -= chosen
        return False

    def _follow_derivations(self) -> None:
        """What happens to a derived name happens to the tensor it came from: moved, or read."""
        for _ in range(6):
            for result, sources in self.flows_into.items():
                if result in self.moved_names:
                    self.moved_names.update(sources)
                    self._moved_with(sources, result)
            for derived, bases in self.derived_from.items():
                for base in bases - {derived}:
                    if derived in self.moved_names:
                        self.moved_names.add(base)
                        self._moved_with((base,), derived)
                    known = set(self.uses.get(base, []))
                    self.uses.setdefault(base, []).extend(u for u in self.uses.get(derived, []) if u not in known)

    def _held_by(self, container: str, elements: list) -> None:
        """A Python list holding a tensor mixes it with nothing: what the list meets later (`torch.cat`,
        the caller it is returned to) is what the tensor meets. VoteNet's `ret.append(unique_cnt)`."""
        for element in elements:
            if isinstance(element, cst.Name) and element.value in self._tracked and element.value != container:
                self._derive_reads.add(id(element))
                self.derived_from.setdefault(container, set()).add(element.value)
                self._tracked.add(container)

    def _moved_with(self, sources, result: str) -> None:
        """What flows into a moved value is moved when that value is (not before)."""
        when = self.moved_at.get(result, float("inf"))
        for source in sources:
            if when < self.moved_at.get(source, float("inf")):
                self.moved_at[source] = when

    def assigned_name(self, call: cst.Call) -> str | None:
        return self.targets.get(id(call))

    def only_cpu_side(self, name: str, made: cst.Call | None = None) -> bool:
        """Used only as an index, for its shape, or handed back to the caller (who decides its device).
        Only reads after `made` count: `p = a + b` in the if-branch is not a read of the else-branch's
        `p = torch.tensor([0.0])`."""
        after = self.made_at.get(id(made), -1) if made is not None else -1
        kinds = [k for at, k in self.uses.get(name, []) if at > after and k != "derive"]
        if "filled" in kinds:
            # `ind[1] = gt_labels` then only `pd_scores[ind[0], ind[1]]` (YOLOv6's assigner): filled with device
            # values and read only as an index. Filled, then handed back or mixed (`dec_outputs[t] = out` ...
            # `return dec_outputs`), it carries device results on the CPU: a tensor use like any other
            # (under no_grad, filled and handed back is a score table: vilmedic's GREEN fills `final_scores[i] =
            # score` on the host and returns it with its mean, for the caller to read)
            others = [k for k in kinds if k != "filled"]
            if others and (all(k == "index" for k in others) or all(k == "return" for k in others) and self._made_without_grad(made)):
                kinds = others
            else:
                kinds = [k if k != "filled" else "tensor" for k in kinds]
        # `scale_t[0]` of `torch.tensor([scale])`, `done[i][j]` of `torch.zeros(b, k)`: a 0-dim tensor
        dims = _dimensions(made) if made is not None else None
        kinds = ["index" if k.startswith("element") and dims is not None and int(k[7:]) >= dims else k for k in kinds]
        if not (kinds and all(k in _HOST_KINDS for k in kinds)):
            return False
        if "host" not in kinds:
            return True
        # `causal = q_idx[:, None] >= kv_idx` is computed on the host, but `causal` may meet the device later
        return all(self._stays_on_host(result, {name}) for result in self._feeds.get(name, ()))

    def _made_without_grad(self, made: cst.Call | None) -> bool:
        info = next((c for c in self.fn.calls if c.node is made), None) if made is not None else None
        return info is not None and any(is_no_grad_name(w) for w in info.context.withs)

    def _stays_on_host(self, name: str, seen: set[str]) -> bool:
        if name in seen or name in self.moved_names:
            return True
        seen.add(name)
        kinds = [k for _, k in self.uses.get(name, []) if k != "derive"]
        if any(k not in _HOST_KINDS for k in kinds):
            return False
        return all(self._stays_on_host(r, seen) for r in self._feeds.get(name, ()))

    def callers_of(self, node: cst.CSTNode) -> list[cst.Call]:
        """The calls that take `node` as an argument directly."""
        return self.passed_to.get(id(node), [])

    def made_on_host(self, call: cst.Call) -> bool:
        statement = self._host_made.get(id(call))
        return statement is not None and not statement.touches

    def visit_Call(self, node: cst.Call) -> None:
        already = len(self.moved_names)
        self._scan_call(node)
        if len(self.moved_names) != already:
            self._tick += 1
            for name in self.moved_names:
                self.moved_at.setdefault(name, self._tick)

    def _mark_moved_reads(self, moved: cst.CSTNode) -> None:
        if isinstance(moved, cst.Name):
            self._moved_reads.add(id(moved))  # the common case: `mask.to(x.device)`
        else:
            moved.visit(_NameCollector(self._moved_reads))

    def _scan_call(self, node: cst.Call) -> None:
        if self._statements:
            self._host_made[id(node)] = self._statements[-1]  # asked about only for a few factories
        if id(node) in self.targets:
            self._tick += 1
            self.made_at[id(node)] = self._tick
            if id(node) in self._factories and keyword_arg(node, "device") is None:
                self._bound_to_factory[self.targets[id(node)]] = id(node)
        for arg in node.args:
            self.passed_to.setdefault(id(arg.value), []).append(node)
        callee = dotted_name(node.func) or ""
        if callee in ("zip", "enumerate", "iter"):
            # `zip(self.blocks, to_drop)`: iterated element by element, each a 0-dim value, which mixes
            # with CUDA tensors (reformer's layer-drop flags, read as Python booleans)
            self._host_arg_reads.update(id(a.value) for a in node.args if isinstance(a.value, cst.Name))
        if (isinstance(node.func, cst.Attribute) and node.func.attr.value in _TO_ZERO_DIM and not node.args
                and isinstance(node.func.value, cst.Name)):
            # `start_max - length.max()`: a 0-dim CPU tensor, which mixes with CUDA values
            self._host_arg_reads.add(id(node.func.value))
        if _sized_factory(callee):
            for a in node.args:
                if a.keyword is None or a.keyword.value in _SIZE_KEYWORDS:
                    a.value.visit(_NameCollector(self._host_arg_reads))
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _SHAPE_OF_ARGUMENT:
            # `coord_mask.expand_as(tcoord)`: only the argument's shape is read, wherever it lives
            self._host_arg_reads.update(id(a.value) for a in node.args if isinstance(a.value, cst.Name))
        taker = callee or (dotted_name(node.func.func) or "" if isinstance(node.func, cst.Call) else "")
        if taker not in self._held_losses:  # (asked once per callee: a forward calls its layers many times)
            self._held_losses[taker] = _held_loss_class(self.fn, taker)
        taker = self._held_losses[taker] or taker  # `self.criterion(...)` after `self.criterion = nn.CTCLoss()`
        # `pack_padded_sequence(x, lengths.clamp(1, t))`: the lengths are read on the CPU (a CUDA tensor there
        # is copied back), so a CPU tensor is what belongs there (also `nn.CTCLoss(blank=0)(log_probs, ...)`)
        for read in _host_read_arguments(node, taker):
            read.visit(_NameCollector(self._host_arg_reads))
            self.indexing.update(id(part) for part in _value_calls(read))
        # (`cuda_utils.Variable(t)`: a helper of the project's cuda module, pytext's device mover)
        by_name = any(word in callee.rsplit(".", 1)[-1].lower() for word in _DEVICE_WORDS) or (
            "." in callee and not callee.startswith("torch.") and any(w in callee.split(".")[0].lower() for w in _DEVICE_WORDS)
        )
        if callee in self.movers or by_name:
            for arg in _args_bound_to(node, self.movers[callee] if callee in self.movers else None, self.params_of.get(callee)):
                self.moved.add(id(arg.value))  # cuda_variable(torch.zeros(n)), to_device(torch.ones(k), dev)
                self.moved.update(id(inner) for inner in _value_calls(arg.value))  # cuda(torch.ones(n).bool())
                self._mark_moved_reads(arg.value)
                name = dotted_name(arg.value)
                if name:
                    self.moved_names.add(name)
        if (
            isinstance(node.func, cst.Attribute) and node.func.attr.value == "type" and node.args
            and (_cuda_type(node) or not (dotted_name(node.args[0].value) or "").startswith("torch."))
        ):
            self.moved.add(id(node.func.value))  # `.type(dtype)` with dtype = x.type(): 'torch.cuda.FloatTensor'
            # (`torch.eye(2).view(1, 1, 2, 2).type(value.type())`: the factory under the reshaping moves too)
            self.moved.update(id(inner) for inner in _value_calls(node.func.value))
            self._mark_moved_reads(node.func.value)
            name = dotted_name(node.func.value)
            if name:
                self.moved_names.add(name)
            # `torch.stack((xv, yv), 2).type(dtype)`: what the moved value is made of is moved with it
            self.moved_names.update(n for n in _read_names(node.func.value) if n in self._tracked)
        if (
            isinstance(node.func, cst.Attribute) and node.func.attr.value in _MOVES
            and (node.func.attr.value != "to" or _moves_device(node))  # `.to(dtype=q.dtype)` is a cast
        ):
            moved = node.func.value
            self.moved.add(id(moved))
            self._mark_moved_reads(moved)
            # torch.eye(n).expand_as(x).to(x.device), (torch.arange(n) + k).cuda(),
            # torch.exp(c * torch.arange(h)).to(t.device): every call whose value flows in moves too
            self.moved.update(id(inner) for inner in _value_calls(moved))
            for name in (dotted_name(moved), dotted_name(_shaping_chain(moved)[-1])):
                if name:
                    self.moved_names.add(name)  # `offset.view(-1, 1).type_as(idx)`: offset is moved
                    self.move_calls.setdefault(name, []).append(node)
            self.moved_names.update(n for n in _read_names(moved) if n in self._tracked)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "copy_":
            for arg in node.args:  # `self.inited.data.copy_(torch.Tensor([True]))`: copied onto the buffer's device
                self.moved.update(id(inner) for inner in _value_calls(arg.value))
                self._mark_moved_reads(arg.value)
                name = dotted_name(arg.value)
                if name:
                    self.moved_names.add(name)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "save_for_backward":
            # `ctx.save_for_backward(out, scale_t)`: kept for backward, which decides how it is used
            self._returned.update(id(arg.value) for arg in node.args if isinstance(arg.value, cst.Name))
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "register_buffer":
            # Registered while the model runs, after `.to(device)`: the buffer stays where it was made, and
            # meets the input as one of the model's own tensors; unless the function moves the buffer right
            # after (ConViT's `self.rel_indices = self.rel_indices.to(device)`)
            registered = [arg.value for arg in node.args[1:2] if isinstance(arg.value, cst.Name)]
            key = node.args[0].value if node.args else None
            if isinstance(key, cst.SimpleString) and _moved_attribute(self.fn, f"self.{key.evaluated_value}"):
                self.moved_names.update(r.value for r in registered)
            elif not (isinstance(key, cst.SimpleString) and _buffer_read_safely(self.fn, str(key.evaluated_value))):
                self._made_buffers.update(id(r) for r in registered)
            elif node.args[1:2] and isinstance(node.args[1].value, cst.Call):
                self.indexing.update(id(part) for part in _shaping_chain(node.args[1].value))  # only read back as numbers
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _CPU_SIDE_METHODS:
            self._cpu_side_depth += 1
            # `if torch.rand(1).item() < p:`: read back as a Python number where it is made
            self.indexing.update(id(part) for part in _shaping_chain(node.func.value))
        elif _number_of(node):
            self._cpu_side_depth += 1  # open-unmix's `pos = int(cur_frame[-1]) + 1`: a Python number

    def leave_Call(self, original_node: cst.Call) -> None:
        self.call_tick[id(original_node)] = self._tick  # its own arguments (`from_numpy(window_sum)`) are read by now
        if id(original_node) in self.helper_results:
            self._tick += 1
            self.made_at[id(original_node)] = self._tick  # what it hands back exists from here on
        if isinstance(original_node.func, cst.Attribute) and original_node.func.attr.value in _CPU_SIDE_METHODS:
            self._cpu_side_depth -= 1
        elif _number_of(original_node):
            self._cpu_side_depth -= 1

    def visit_Subscript(self, node: cst.Subscript) -> None:
        scalars, inner = 0, node  # `done[i][j]`, `done[i, j]`: count the scalar indices down to the name
        while isinstance(inner, cst.Subscript) and all(_scalar_index(e) for e in inner.slice):
            scalars, inner = scalars + len(inner.slice), inner.value
        if isinstance(inner, cst.Name) and inner.value in self._tracked and scalars and id(inner) not in self._element_reads:
            self._element_reads[id(inner)] = scalars

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        self._index_depth += 1
        if isinstance(node.slice, cst.Index):
            # `x[torch.arange(b).unsqueeze(-1), idx]`: the factory under the reshaping is still a CPU index
            joined = self._joined_with_device(node.slice.value)
            self.indexing.update(id(part) for part in _shaping_chain(node.slice.value) if id(part) not in joined)
            self.indexing.update(id(part) for part in _value_calls(node.slice.value) if id(part) not in joined)

    def _joined_with_device(self, value: cst.BaseExpression) -> set[int]:
        """Factories that an index joins with device values first: `gru_o[tuple(torch.stack((lengths - 1,
        torch.arange(bs))))]` stacks a CPU arange with CUDA lengths, which raises before any indexing."""
        out: set[int] = set()
        for call in calls_within(value):
            if (dotted_name(call.func) or "").rsplit(".", 1)[-1] not in _JOIN_NAMES or not call.args:
                continue
            sequence = call.args[0].value
            parts = [e.value for e in sequence.elements] if isinstance(sequence, (cst.List, cst.Tuple)) else []
            if any(self.device.touches(p) for p in parts):
                out.update(id(c) for p in parts if not self.device.touches(p) for c in _value_calls(p))
        return out

    def leave_SubscriptElement(self, original_node: cst.SubscriptElement) -> None:
        self._index_depth -= 1

    def visit_Arg(self, node: cst.Arg) -> bool:
        """`self.mask(..., probability_matrix=probability_matrix)`: the keyword names a parameter, and is no read."""
        node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self._tracked:
            kind = (
                "tensor" if id(node) in self._made_buffers  # a buffer of the model: it meets the input wherever it is read
                else "derive" if id(node) in self._derive_reads
                else "index" if self._index_depth
                else "return" if id(node) in self._returned
                else "cpu" if self._cpu_side_depth or id(node) in self._host_arg_reads
                else self._read_on_host_by_helper(node) or self._statement_kind(node)
            )
            if kind == "tensor" and id(node) in self._element_reads:  # `scale_t[0]` handed to a CUDA kernel
                kind = f"element{self._element_reads[id(node)]}"
            elif kind == "tensor" and node.value in self._walked:  # `for d in offsets`: one element (0-dim of a vector)
                kind = "element1"
            self._tick += 1
            self.uses.setdefault(node.value, []).append((self._tick, kind))
            if id(node) in self._made_buffers or (
                kind == "tensor" and id(node) not in self._moved_reads and not self._device_branch_depth
                and self._statements and not self._statements[-1].always
            ):
                self.met.setdefault(node.value, []).append(self._tick)
            elif (
                kind == "tensor" and id(node) not in self._moved_reads and self._statements
                and self._statements[-1].always and self.device.touches(self._statements[-1].node)
            ):  # `return self.net(z)`: handed back, but through the model's own layers first
                self.met_on_return.setdefault(node.value, []).append(self._tick)

    def _statement_kind(self, node: cst.Name) -> str:
        """"host" when the statement reading the name reads no device value (but perhaps the name itself)."""
        if self._statements and (not self._statements[-1].touches or self._meets_only_itself(node.value)):
            return "host"
        return "tensor"

    def _meets_only_itself(self, name: str) -> bool:
        """FocalLoss's `alpha = alpha * (1 - self.alpha)`: the statement reads no device value but the
        tensor itself (its name counts as a device value only for the later `alpha = alpha.to(logit.device)`),
        or other names that hold host-made tensors here (`zz, yy, xx = torch.meshgrid(z, y, x)` over three
        `torch.arange` results, though `x` is rebound to the joints' coordinates further down)."""
        statement = self._statements[-1]
        host = {n for n, made in self._bound_to_factory.items() if made is not None and made not in self.moved}
        return not statement.always and not self.device.touches(_read_part(statement.node), excluding=host | {name})

    def _read_on_host_by_helper(self, node: cst.Name) -> str | None:
        """"index" or "cpu" when every helper the name is handed to reads it only that way."""
        calls = self.passed_to.get(id(node))
        if not calls or self._helper_reads is None:
            return None
        kinds = {self._helper_reads(call, node) for call in calls}
        return kinds.pop() if len(kinds) == 1 else "cpu" if kinds == {"index", "cpu"} else None

    def met_before_moved(self, made: cst.Call, *names: str | None, moved_at_end: bool = False) -> bool:
        """`pos = torch.arange(n)`, `theta = torch.outer(pos, self.freq)` ... `return theta.type_as(x)`:
        a move that comes after the CPU tensor met the device in the body comes too late. (Only reads
        between the factory and the move count: an earlier value of the same name is another value.)"""
        start = self.call_tick.get(id(made), -1)
        statement = self._host_made.get(id(made))
        if statement is not None and statement.ended_at is not None:
            start = max(start, statement.ended_at)  # `emb = torch.exp(torch.arange(n) * -emb)` reads the old emb
        for name in names:
            if name:
                moved = float("inf") if moved_at_end else self.moved_at.get(name, float("inf"))
                if any(start < t < moved for t in self.met.get(name, ())):
                    return True
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value in ("shape", "device", "dtype"):
            self.moved.add(id(node.value))  # only metadata is read: the device never matters
            if isinstance(node.value, cst.Name):
                self._tick += 1
                self.uses.setdefault(node.value.value, []).append((self._tick, "cpu"))
                return False
        node.value.visit(self)
        return False  # `self.keep` is no read of a local `keep`

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """`if t_span is None:`: an identity test reads no data."""
        if all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in node.comparisons):
            self._host_arg_reads.update(
                id(part) for part in (node.left, *(c.comparator for c in node.comparisons)) if isinstance(part, cst.Name)
            )

    def visit_IfExp(self, node: cst.IfExp) -> None:
        """`w = w.cuda() if magnitude.is_cuda else w`: the author chose the device."""
        if _tests_device(node.test):
            for part in (node.body, node.orelse):
                if isinstance(part, cst.Call):
                    self.guarded.add(id(part))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        returned = bool(self._statements) and self._statements[-1].always
        if returned and isinstance(node.value, cst.Name):
            self._returned.add(id(node.value))  # `return {"scale": scale, ...}`: handed back as it is
        self._cpu_side_depth += 1  # `log = {"p_loss": p_loss.detach().mean()}`: reported, never mixed
        # (each value a statement of its own: OpenGait's `"image/denosing": norm(torch.from_numpy(vis))` beside
        # the CUDA embeddings of the same output dict meets nothing on the device)
        self._statements.append(_Statement(node.value, self.device, always=returned))

    def leave_DictElement(self, original_node: cst.DictElement) -> None:
        self._cpu_side_depth -= 1
        self._statements.pop().ended_at = self._tick

    def read_after(self, name: str, made: cst.CSTNode) -> bool:
        """The name is read at all after `made` ran (a helper's result that nobody reads meets nothing)."""
        after = self.made_at.get(id(made), -1)
        return any(at > after for at, _ in self.uses.get(name, []))

    def handed_back(self, name: str, made: cst.Call) -> bool:
        """The tensor is returned as it is (`return scale`, `return {"scale": scale}`) after it is made."""
        after = self.made_at.get(id(made), -1)
        return any(at > after and kind == "return" for at, kind in self.uses.get(name, []))

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        if isinstance(value, cst.Call) and dotted_name(value.func) in ("tuple", "list") and len(value.args) == 1:
            value = value.args[0].value  # `return tuple(ret)`: the same elements, handed back
        for v in _returned_parts(value):
            if isinstance(v, cst.Subscript) and isinstance(v.value, cst.Name):
                v = v.value  # `return ret[0]`: a part of it, handed back as it is
            if isinstance(v, cst.Name):
                self._returned.add(id(v))

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        node.iter.visit(self)  # the comprehension's variables are written, not read
        for condition in node.ifs:  # (`if not drop`: a test is a statement of its own, as in visit_If)
            self._statements.append(_Statement(condition.test, self.device))
            condition.visit(self)
            self._statements.pop()
        if node.inner_for_in is not None:
            node.inner_for_in.visit(self)
        return False

    def visit_For(self, node: cst.For) -> bool:
        node.iter.visit(self)  # the loop variable is written, not read
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        """`t = torch.arange(0, l).expand(l)` and, next line, `t = torch.arange(0, l)...to(device)`: the
        name gets a fresh value that does not read the old one."""
        target = node.targets[0].target if len(node.targets) == 1 else None
        info = self._assign_info.get(id(node))
        # (`pos = self.embed(pos)` reads the old value, even though a module's output is a new tensor)
        if isinstance(target, cst.Name) and target.value in self._tracked and info is not None and target.value not in names_in(node.value):
            self._tick += 1
            self.rebound.setdefault(target.value, []).append((self._tick, info))
            self._bound_to_factory[target.value] = None  # (a factory in the value binds it again)

    def overwritten_unread(self, made: CallInfo, name: str) -> bool:
        """The tensor is replaced on the same path before anything reads it: dead, it meets nothing."""
        start = self.made_at.get(id(made.node))
        if start is None:
            return False
        ends = [t for t, a in self.rebound.get(name, ()) if t > start
                and a.context.branches == made.context.branches and a.context.loops == made.context.loops
]
        if not ends:
            return False
        return not any(start < t < min(ends) for t, _ in self.uses.get(name, ()))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        if (
            isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value in self._tracked
            and self._statements and self._statements[-1].touches
        ):
            # MinkowskiEngine's `out_feat[union_map[1]] += in_feat[union_map[0]]`: adding GPU values into part of a
            # CPU tensor in place raises at once (unlike a plain copy into it)
            self._tick += 1
            self.uses.setdefault(target.value.value, []).append((self._tick, "tensor"))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        if isinstance(node.target, cst.Subscript):  # `x[torch.randint(0, n, (1,))] = True`: an index is read
            for element in node.target.slice:
                element.visit(self)
            base = node.target.value
            if isinstance(base, cst.Name) and base.value in self._tracked and self._statements and self._statements[-1].touches:
                # `out_ft[:, :, j] = cuda_values`: the CPU tensor takes in GPU results and stays on the CPU (the
                # copy itself works; what is read from it afterwards meets the device)
                self._tick += 1
                self.uses.setdefault(base.value, []).append((self._tick, "filled"))
        return False  # targets are writes, not uses
