"""Evaluation passes: where a model runs for validation, testing or prediction.

Shared by the eval-mode and no-grad rules (TD005, TD006). An evaluation pass
is a function named like one (`evaluate`, `validate`, `test`, `predict`, ...)
that runs a model and never calls `backward()`, or a `no_grad` block that
loops over a validation/test loader. Callers count: `model.eval()` and
`no_grad` set up by the function that calls the pass satisfy it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path

import libcst as cst

from torchdoctor.dataflow import MODEL_WRAPPERS, is_model_factory, is_none, under_moves
from torchdoctor.decorators import NO_GRAD_WORDS, is_no_grad_name
from torchdoctor.facts import (
    AssignInfo, CallInfo, ClassInfo, FunctionInfo, annotation_of, argument, call_receiver, calls_on_super, calls_within,
    dotted_name, exclusive_branches, import_heads, is_test_file, is_test_module, keyword_arg, names_in, unwrap_iter,
    within,
)
from torchdoctor.mode_layers import ModeLayers, constructions_of
from torchdoctor.mode_methods import offers_mode_api
from torchdoctor.project import lookup_class, method_and_file, stored_as_value
from torchdoctor.training import OTHER_FRAMEWORKS, unwrapped_either_way

_CAMEL_HUMP = re.compile(r"([a-z0-9])([A-Z])")
_TRAINING_METHOD = re.compile(r"^(optimize|train|fit|update|learn)(_|$)")


class _SnakeCased:
    """A name pattern written for snake_case, also applied to camelCase names (`batchPrediction` is
    read as `batch_prediction`, `testModel` as `test_model`)."""

    def __init__(self, pattern: re.Pattern) -> None:
        self.pattern = pattern

    def search(self, name: str):
        return self.pattern.search(_CAMEL_HUMP.sub(r"\1_\2", name))


_EVAL_NAME = _SnakeCased(re.compile(
    r"^_*(val|vali|valid|validate|validation|eval|evaluate|evaluation|test|testing|predict|prediction|inference|infer|score)"
    r"(_(epoch|model|loop|one_epoch|step|net|accuracy|acc|loss|batch|fn|all|dataset|data|set|split|loader|episode|policy)s?)?$"
    r"|_(eval|evaluate|validate|validation|predict|predictions?|inference|infer|scores?|test|accuracy)$"
    r"|^_*(test|predict|inference|infer|score)_[a-z0-9_]+$"  # test_multi, predict_batch, score_image: run only on data passed in
    r"|eval|valid|^estimate_loss$"
    r"|^_*(calc|calculate|compute|get|measure)_(accuracy|acc|metrics?)(_[a-z0-9]+)?$",  # over a loader: `calculate_accuracy(model, loader)`
    re.I,
))
# `model_target`, `model_source`, `model_ema`, `model_without_ddp`: a model named by its role (not
# `model_transform`, `model_registry`, pydantic's `model_dump`)
# (`net_G`, `net_D`: imaginaire's generator and discriminator; `netC`, `netE`: a classifier and encoder named as DCGAN names `netG`)
_ROLE_MODEL_NAME = re.compile(r"^(model|net)_(target|source|ema|teacher|student|without_ddp|with_loss|with_losses)$|^net_?[A-Z]{1,2}$")
MODEL_NAME = re.compile(
    r"(^|_)(model|net|network|classifier|encoder|decoder|generator|discriminator|backbone|policy|actor|critic|"
    r"netG|netD|transformer|resnet|cnn|(bi)?(rnn|lstm|gru)|mlp|vae|unet|engine|ranker|reranker|biencoder)s?\d*$",
    re.I,
)
_PARAMETER_FREE = re.compile(
    r"(\w*Loss|Pad\w*|Pool\w*|ReLU\w*|GELU|Sigmoid|Tanh|Softmax\w*|Softmin|Dropout\w*|Flatten|Unflatten|Identity|Upsample\w*|"
    r"Unfold|Fold|PixelShuffle|PixelUnshuffle|ChannelShuffle|Hardtanh|ELU|SiLU|Mish|Softplus|LogSigmoid|Threshold|"
    r"Hardswish|Hardsigmoid|Softsign|Tanhshrink|CosineSimilarity|PairwiseDistance)$"
)
_RUN_METHOD = re.compile(  # (also private: an agent's `_act(state, eps)`, a wrapper's `_forward(x)`)
    r"_*((\w+_)?forward\w*|encode\w*|(greedy_|beam_)?decode\w*|beam_search\w*|translate|sample|predict\w*|(\w+_)?(infer|inference)|embed\w*|extract_feat\w*|render|"
    r"features|get_\w*(features|embeddings?)|detect|reconstruct|classify|transcribe|recognize|denoise|synthesize|test|act|get_actions?|select_actions?|log_prob\w*|"
    r"reverse|"  # a normalizing flow's generative direction (MoFlow's `self.model.reverse(z)`)
    r"compute_loss(es)?|calc(ulate)?_loss|"  # GG-CNN's `net.compute_loss(x, y)`: the model's own forward and loss
    r"(eval|evaluation|validation|test)_step)$"
)
_NAMED_RUN_METHOD = re.compile(r"(compute_loss(es)?|calc(ulate)?_loss|(\w+_)?forward\w*|predict_(?!proba$|log_proba$|joint_log_proba$)\w+|get_\w*embeddings?|render|encode\w*|(greedy_|beam_)?decode\w*|translate|(\w+_)?(infer|inference)|extract_feat\w*|embed\w*|reconstruct|recognize|test|act|get_actions?|select_actions?|(eval|evaluation|validation|test)_step)$")
_SETTER = re.compile(r"_*(set_(?!forward$)|(reset|enable|disable|toggle|register)_)")  # (few-shot `set_forward(x)` runs)
_DROPOUT_DECLARED = ("torch_geometric.nn.", "diffusers.")  # libraries whose models say their dropout in arguments
_ADAPTING_METHOD = re.compile(r"(^|_)(adapt\w*|finetune|fine_tune|fit|train\w*)(_|$)")
_LIBRARY_NO_GRAD_METHODS = frozenset({"forward_on_instance", "forward_on_instances"})  # allennlp.models.Model
_LIBRARY_INFERENCE = re.compile(r"(inference|infer|predict\w*|test)$")
_PLAIN_MODEL_NAME = re.compile(r"(^|_)(model|net|network|policy|actor|actor_critic)s?\d*$|^net_[A-Z]{1,2}$", re.I)
_MODULE_API = {"eval", "train", "to", "cuda", "parameters", "named_parameters", "half", "requires_grad_"}
# nn.Module's own methods: calling them runs no layer
_MODULE_API_METHODS = _MODULE_API | {
    "cpu", "float", "double", "bfloat16", "type", "zero_grad", "state_dict", "load_state_dict", "apply", "children",
    "named_children", "modules", "named_modules", "buffers", "named_buffers", "register_buffer", "register_parameter",
    "add_module", "register_module", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_backward_hook", "get_submodule", "get_parameter", "get_buffer", "share_memory", "extra_repr", "forward",
}
_TRACED = {"torch.jit.trace", "torch.jit.trace_module", "torch.jit.load"}
# eager-mode quantization steps return the model they are given (or a copy), in the mode it was in
_QUANTIZATION_STEPS = frozenset({"prepare", "prepare_qat", "convert", "fuse_modules", "quantize_dynamic"})
_SCRIPTED = re.compile(r"(^|\.)(ScriptModule|RecursiveScriptModule|TopLevelTracedModule|ScriptFunction)$")
_PARALLEL_WRAPPER = re.compile(r"(^|\.)(DistributedDataParallel|DataParallel|DDP|FullyShardedDataParallel|FSDP|compile)$")
_OTHER_RUNTIME = re.compile(r"^(Trt|TRT|TensorRT|Onnx|ONNX|Ort|OpenVino)[A-Z_]|(Trt|TRT|TensorRT|Onnx|ONNX|OpenVino)$")
_BN_STATISTICS = re.compile(r"(^|_)(bn|batch_?norm|precise|running_stat(s|istics))(_|$)", re.I)
# (`reranker._process_mentions_for_model(...)`; OSTrack's `model.forward_backbone(x)` is a method of `model`)
# (`runtime.deserialize_cuda_engine(f.read())`: TensorRT builds an engine from bytes; no network runs)
_PIPELINE_PARTS = frozenset({"unet", "vae", "text_encoder", "text_encoder_2"})
_CLASS_VERB = re.compile(r"_*(train|fit|evaluate|eval|test|run|compute|calculate|score|attack|finetune|fine_tune)_")
_ACCESSOR = re.compile(
    r"_*(get|show|load|build|create|make|list|save|set|init|setup|prepare|process|wrap|unwrap|forward|"
    r"deserialize|serialize|export|convert|restore|copy|clone|freeze|unfreeze|reset|register|update|sync)_"
)
# `data_generator(path, batch_size=...)`: a Python generator of batches, not a GAN's generator
_DATA_GENERATOR = re.compile(r"(^|_)(data|batch|batches|sample|samples|example|examples|dataset|input|train|val|valid|test)_?generators?\d*$", re.I)
METRIC_NAME = re.compile(r"psnr|ssim|lpips|fid|metric|loss|criterion|iqa|score", re.I)
LIGHTNING_HOOKS = {
    "validation_step", "test_step", "predict_step", "on_validation_epoch_end", "on_test_epoch_end",
    "validation_epoch_end", "test_epoch_end", "eval_step",
    "val_step",  # (mmcv's and mmengine's runners call `model.val_step(...)` after `model.eval()`, under no_grad)
}
_MODULE_REGISTRATION = frozenset({"register_buffer", "register_parameter", "register_module"})  # nn.Module's alone
_MIXIN_BASES = frozenset({"abc.ABC", "ABC", "object", "typing.Generic"})  # bases that add no framework
# A Lightning Callback's evaluation hooks: the evaluation loop calls them after switching the module to
# eval mode and inside its no_grad (or inference_mode) context, before switching back.
_LIGHTNING_CALLBACK_HOOKS = re.compile(r"^on_(validation|test|predict)(_epoch|_batch)?_(start|end)$")
# (`pbar`: a progress bar over the batches; `os.listdir(...)`, `glob(...)`: one input file per iteration)
_DATA_ITERABLE = re.compile(r"load|data|batch|val|test|eval|sample|set|split|iter|pbar|progress|listdir|glob|scandir", re.I)
_ACTING_CLASS = re.compile(r"(Agent|Actor|Policy|Player|Explorer)$")
_ACTING_METHOD = re.compile(r"^(__call__|act|get_action|select_action|choose_action|sample_action|step)$")
_EVAL_STEP_HOOK = re.compile(r"(prediction|predict|eval|evaluation|validation|test)_step$")
_EVAL_LOADER = re.compile(r"(val|valid|test|eval|dev)", re.I)
_ANY_LOADER = re.compile(r"(^|_)(loader|dataloader|data_loader|dl)$", re.I)
_TRAINING_NAME = re.compile(r"train|loss|fit|update|optimi[sz]e", re.I)
_LOSS_HELPER = re.compile(r"_*(compute|calc|calculate|get)_loss(es)?_", re.I)
_OVERFIT = re.compile(r"overfit\w*", re.I)
_REPORTING_NAME = re.compile(r"_*(log|print|plot|save|show|write|record|report|dump|visuali[sz]e)(_|$)", re.I)
# Words an evaluation pass cannot be written without (its name, a no_grad block, an `eval()`): files
# with none of them skip the evaluation rules.
EVAL_TRIGGERS = ("val", "eval", "test", "predict", "infer", "score", "acc", "metric", "no_grad", "inference_mode")
_FACTORIES = frozenset({"zeros", "ones", "rand", "randn", "randint", "empty", "full", "zeros_like", "ones_like", "randn_like", "rand_like"})
_METRIC_PATH = re.compile(r"(^|/)(metrics?|losses|loss)(/|\.py$)")
# a package or module of data augmentations (kornia's `augmentation/container/augment.py`): modules that
# transform data, with no weights or modes
_AUGMENTATION_PATH = re.compile(r"(^|/)augmentations?(/|\.py$)")
# a library module of inference front ends: `espnet2.bin.asr_inference`, `transformers.pipelines`
_INFERENCE_MODULE = re.compile(r"\.(\w+_)?(inference|inferencer|predictor|pipelines?)$")
_HF_PIPELINE = frozenset({"transformers.pipeline", "transformers.pipelines.pipeline"})
_RUNNER_NAME = re.compile(r"^(criterion|loss|loss_fn|compute_loss)$")
# Library functions that run the network they are handed: (position, keyword) of that argument
_LIBRARY_RUNNERS = {
    "monai.inferers.sliding_window_inference": (3, "predictor"),
    "monai.inferers.utils.sliding_window_inference": (3, "predictor"),
    "monai.inferers.inferer.sliding_window_inference": (3, "predictor"),
}
_CALLBACK_RUNNER = re.compile(r"^(forward\w*|\w*step|predict\w*|infer\w*|run\w*)_(fn|func|function)$")


@dataclass(frozen=True)
class ModelRun:
    """A place where a model runs: `model(x)` itself, or `greedy_decode(model, x)` that calls it."""

    call: CallInfo
    model: str  # the model as named at this call: "model", "self.net"
    has_modes: bool = True  # False when only a method name says it is a model: it may be no nn.Module
    grad_off_inside: bool = False  # run through a helper that disables gradients itself


@dataclass(frozen=True)
class EvalPass:
    function: FunctionInfo
    model_calls: tuple[ModelRun, ...]
    by_name: bool  # a validate/evaluate/... function, or one that evals its model and runs it per batch
    # (else a no_grad block over a loader, judged only for the mode)
    needs_grad: bool = False  # an adversarial evaluation: backward to the input, no step; judged only for the mode


def uses_other_framework(facts) -> bool:
    """A MegEngine or JAX script that happens to share PyTorch's idioms: its modes and grads are not ours."""
    heads = import_heads(facts)
    return bool(heads & OTHER_FRAMEWORKS) and "torch" not in heads


class Evaluation:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.facts = ctx.facts
        self.training = ctx.training
        self.flow = ctx.dataflow
        self._asking: set[int] = set()
        self._walked: dict[int, dict[int, str]] = {}  # id(function) -> its switches of walked containers
        self._items_written: dict[str, str] = {}  # `self.networks.feat_model` -> `self.networks['feat_model']`
        self._comprehension_calls: dict[int, set[int]] = {}  # id(function) -> calls in its loader comprehensions
        self._wrapped: dict[tuple[int, str], str | None] = {}  # (id(class), attribute) -> the attribute it wraps
        self._module_like: dict[int, bool] = {}  # id(class) -> whether it is an nn.Module, by its bases or layers
        self._first_eval: dict[int, dict[str, int]] = {}  # id(function) -> receiver -> order of its first `.eval()`
        self._handed_on: dict[int, bool] = {}  # id(function) -> whether some file uses it as a value, uncalled
        self._read_from_numpy: dict[int, set[int]] = {}  # id(function) -> ids of the calls `torch.from_numpy` reads

    # -- models ----------------------------------------------------------------
    def is_model_name(self, name: str | None) -> bool:
        parts = (name or "").split(".")
        last = parts[-1]
        if len(parts) > 2 or _ACCESSOR.match(last):
            return False  # `self.service.show_available_models()`, `get_model()`: a method, not a model
        if len(parts) == 2 and parts[0][:1].isupper() and _CLASS_VERB.match(last):
            return False  # `LIRAUtil.train_shadow_models(model, data)`: a class's own function, handed the model
        return bool(MODEL_NAME.search(last) or _ROLE_MODEL_NAME.match(last)) and not (
            METRIC_NAME.search(last) or _DATA_GENERATOR.search(last))

    def is_model_call(self, call: CallInfo) -> bool:
        if call.qualname is not None and isinstance(call.node.func, cst.Name):
            return self._imported_model(call.node.func.value)
        if isinstance(call.node.func, cst.Name) and call.node.func.value in self.facts.classes and not self._bound_name(call):
            return False  # `net = test_Net3(args)`: a class of this file, however it is spelled, is built, not run
        if call.qualname is not None or call.dotted is None or call.dotted in ("self", "super"):
            return False
        if self.facts.resolve_function(call) is not None or self._inherited_method(call):
            return False
        if isinstance(call.node.func, cst.Name) and is_model_factory(call.dotted) and not self._bound_name(call):
            return False  # `TripletNet(resnet101())` with `from net import *`: a factory builds a model, runs none
        if isinstance(call.node.func, cst.Name) and self._holds_class_loaded_by_name(call):
            return False  # `model = get_model(args)` then `net = model(args)`: the class is built, not run
        inst = self.flow.instance_of(call.node.func, call.function, call.context.order)
        if inst is not None and inst.cls is not None:
            # (`self.rvm = RelativeVolumeMel()` from the project's metrics/ package scores outputs: no model)
            return self._computing_module(inst)
        if inst is not None and (inst.sequential is not None or inst.factory is not None):
            return True
        if inst is not None and (inst.qualname or "").startswith("torch.nn."):
            return not _PARAMETER_FREE.search(inst.qualname)  # a padding or activation layer builds no graph
        receiver = call.dotted.rsplit(".", 1)[0] if "." in call.dotted else None
        submodule = (receiver is not None and self.is_model_name(receiver)
                     and receiver.split(".", 1)[0] not in self.facts.imports)
        if call.dotted.rsplit(".", 1)[-1][:1].isupper() and call.dotted not in self._switched_models and not submodule:
            # `Model(envs)`: a class handed in as `Model` is being constructed, not run (but SEGAN's
            # `self.G(noisy)`, switched with `self.G.train()`, is a network, and so is a seq2seq model's
            # `model.Encoder_LSTM(src)`, a submodule of a model)
            return False
        if self._library_inference_wrapper(call) or self._foreign_runtime_model(call) or self._returns_numpy(call):
            return False
        if self._method_of_project_object(call):
            return False  # `val.eval_model(pred, model, loader)` on `val = Evaler(...)`: a method, not a model
        if _DECODER_NAME.search(call.dotted) and _decodes_model_output(call):
            return False  # `outs = model(images)` ... `scores, boxes = decoder(outs)`: a detector's post-processing
        if isinstance(call.node.func, cst.Name) and self.is_model_name(call.dotted) and self._project_function(call.node.func):
            return False  # `accuracy_encoder(outputs, targets)`, star-imported from the project's utilities: a function
        return (self.is_model_name(call.dotted) or call.dotted in self._switched_models or self._holds_model_attribute(call)
                or self._element_of_models(call) or self._switched_to_eval_before(call))

    def _switched_to_eval_before(self, call: CallInfo) -> bool:
        """`def evaluate_lm_perplexity(lm, loader): lm.eval(); ...; lm(x)`: switched to eval mode, then
        called, in one function: a module whatever its name (a metric's name still says otherwise)."""
        fn = call.function
        if id(fn) not in self._first_eval:  # receiver -> the order of its first `.eval()` in the function
            first: dict[str, int] = {}
            for c in fn.calls:
                if c.method == "eval" and not c.node.args and c.receiver:
                    first.setdefault(c.receiver, c.context.order)
            self._first_eval[id(fn)] = first
        at = self._first_eval[id(fn)].get(call.dotted)
        return at is not None and at < call.context.order and not METRIC_NAME.search(call.dotted.rsplit(".", 1)[-1])

    def _bound_run_method(self, call: CallInfo) -> tuple[str, set[str]] | None:
        """(model, methods) for a call of a local name bound to a model's run method on every path:
        project-NN's `infer_func = pt_model.inference if hasattr(...) else pt_model.forward`."""
        if not isinstance(call.node.func, cst.Name) or call.function.is_module:
            return None
        values = self.flow.reaching_candidates(call.node.func.value, call.function, call.context.order)
        found = {(dotted_name(a.value.value), a.value.attr.value) for a in values if isinstance(a.value, cst.Attribute)}
        if not values or len(found) != len(values) or len({m for m, _ in found}) != 1:
            return None
        model = next(iter(found))[0]
        methods = {name for _, name in found}
        if model is None or not self.is_model_name(model) or not all(_RUN_METHOD.match(m) for m in methods):
            return None
        return model, methods

    def _bound_name(self, call: CallInfo) -> bool:
        """The called name is a variable of the call's scopes (a parameter, a local, a global), not a
        function brought in by an import."""
        name, fn = call.dotted, call.function
        while fn is not None:
            if name in fn.params or name in fn.assigned_names():
                return True
            fn = fn.parent
        return name in self.facts.module_function.assigned_names()

    def _imported_model(self, name: str) -> bool:
        """`from pretrained_model import model`: a model-named global that another file of the project
        builds (`model = BertForSequenceClassification.from_pretrained(...)`), run here as it is."""
        project = self.training.project
        found = project.module_value(self.facts, name) if project is not None and self.is_model_name(name) else None
        return found is not None and isinstance(found[1], cst.Call)

    def _method_of_project_object(self, call: CallInfo) -> bool:
        """`obj.name(...)` where `obj` is an instance of a project class that defines `name` as a method."""
        func = call.node.func
        if not isinstance(func, cst.Attribute) or dotted_name(func.value) in (None, "self"):
            return False
        owner = self.flow.instance_of(func.value, call.function, call.context.order)
        return owner is not None and owner.cls is not None and self._method_of(owner.facts, owner.cls, func.attr.value) is not None

    def _library_inference_wrapper(self, call: CallInfo) -> bool:
        """`self.asr_model = Speech2Text(...)` from `espnet2.bin.asr_inference`: a library's inference
        front end, which loads its network in eval mode and runs it under no_grad; no nn.Module to judge."""
        held = self.flow.value_of(call.dotted or "", call.function, call.context.order)
        value = held[0] if held is not None else None
        if not isinstance(value, cst.Call):
            return False
        q = self.facts.qualify(value.func) or ""
        if q in _HF_PIPELINE:
            return True  # `pipeline("automatic-speech-recognition", model=...)`: eval mode and no_grad inside
        return (bool(_INFERENCE_MODULE.search(q.rsplit(".", 1)[0])) and not q.startswith("torch.") and q.count(".") >= 2
                and lookup_class(self.training.project, self.facts, dotted_name(value.func)) is None)

    def _returns_numpy(self, call: CallInfo) -> bool:
        """`torch.from_numpy(nncf_model(batch["image"])[0])`: what the callable returns is a NumPy array, so
        it is another framework's compiled model (anomalib's OpenVINO `CompiledModel` in a quantization
        check), with no mode and no autograd graph. The calls read so are found once per function."""
        fn = call.function
        if id(fn) not in self._read_from_numpy:
            read = set()
            for c in fn.calls:
                if c.qualname == "torch.from_numpy" and c.node.args:
                    arg = c.node.args[0].value
                    while isinstance(arg, cst.Subscript):
                        arg = arg.value
                    read.add(id(arg))
            self._read_from_numpy[id(fn)] = read
        return id(call.node) in self._read_from_numpy[id(fn)]

    def _foreign_runtime_model(self, call: CallInfo) -> bool:
        """`self.model = core.compile_model(...)` on `core = openvino.Core()`, an `onnxruntime` session, a
        TensorRT engine: on every path the called object comes from another framework's runtime, which
        has no training mode and builds no autograd graph."""
        origins = self.flow.origins(call.node.func, call.function, call.context.order)
        return bool(origins) and all(o is not None and self._made_by_foreign_runtime(o) for o in origins)

    def _made_by_foreign_runtime(self, origin, depth: int = 0) -> bool:
        qualified = origin.qualname()
        if qualified is not None:
            return qualified.split(".", 1)[0] in _FOREIGN_RUNTIMES
        func = origin.call.func  # `core.compile_model(...)`: what made `core`
        if depth > 2 or not isinstance(func, cst.Attribute):
            return False
        flow = self.flow.flow_for(origin.facts)
        made = flow.origins(func.value, origin.function, origin.order)
        return bool(made) and all(o is not None and self._made_by_foreign_runtime(o, depth + 1) for o in made)

    def _calls_a_global(self, helper: FunctionInfo) -> bool:
        """The helper calls a name bound in the scope around it (`model(...)` of a script), not its own."""
        around = helper.parent.assigned_names()
        own = set(helper.params) | helper.assigned_names()
        return any(c.dotted is not None and (head := c.dotted.split(".", 1)[0]) in around and head not in own
                   for c in helper.calls)

    def _item_of_switched_container(self, call: CallInfo) -> str | None:
        """`self.networks['feat_model'](inputs)` on a dict of networks the file switches as a whole
        (`for model in self.networks.values(): model.eval()`) or by key (`self.networks['x'].train()`):
        the item, named `self.networks.feat_model` as `_switched_item` names it."""
        func = call.node.func
        if not isinstance(func, cst.Subscript) or dotted_name(func.value) not in self._switched_containers:
            return None
        return self._keyed_item(func)

    def _keyed_item(self, value: cst.BaseExpression) -> str | None:
        """`networks['classifier_k']` handed to a helper: one of the networks the caller holds in a dict
        (and may switch as a whole), named `networks.classifier_k` as `_item_of_switched_container` names it."""
        if not (isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index)):
            return None
        key, held = value.slice[0].slice.value, dotted_name(value.value)
        name = key.evaluated_value if isinstance(key, cst.SimpleString) else None
        if held is None or not isinstance(name, str) or not name.isidentifier():
            return None
        self._items_written[f"{held}.{name}"] = f"{held}[{key.value}]"
        return f"{held}.{name}"

    def as_written(self, model: str) -> str:
        """A model's name as the code writes it: `self.networks['feat_model']` for the item named
        `self.networks.feat_model` (and what is reached through it)."""
        for name, written in self._items_written.items():
            if model == name or model.startswith(name + "."):
                return written + model[len(name):]
        return model

    @cached_property
    def _switched_containers(self) -> set[str]:
        """The containers of networks this file switches to eval or training mode, walked or by item."""
        walked = {v for fn in self.facts.functions for v in self._walked_containers(fn).values()}
        held = {dotted_name(c.node.func.value.value) for c in self.facts.calls if _switched_item(c)}  # `nets[k].train()`
        return walked | held

    def _element_of_models(self, call: CallInfo) -> bool:
        """`for g_ema in generators: img, _ = g_ema(latent)`: one of a list of models, whatever it is called."""
        if not isinstance(call.node.func, cst.Name):
            return False
        name = call.node.func.value
        return any(
            name in loop.targets and loop.iter_name and loop.iter_name.rsplit(".", 1)[-1].endswith("s")
            and self.is_model_name(loop.iter_name.rsplit(".", 1)[-1])
            for loop in call.context.loops
        )

    def _holds_model_attribute(self, call: CallInfo) -> bool:
        """`gen = self.model.generator_test; if gen is None: gen = self.model.generator` ... `gen()`: a
        short local name for a model attribute (one of the values it may hold is model-named)."""
        if not isinstance(call.node.func, cst.Name):
            return False
        values = [a.value for a in self.flow.reaching_candidates(call.node.func.value, call.function, call.context.order)]
        return bool(values) and all(isinstance(v, cst.Attribute) for v in values) and any(
            self.is_model_name(v.attr.value) for v in values
        )

    @cached_property
    def _switched_models(self) -> set[str]:
        """Names the file treats as nn.Modules whatever they are called: switched with `gnn.eval()` and
        `gnn.train()`, or switched one way and optimized (`Adam(gnn.parameters())`)."""
        evaluated = {c.receiver for c in self.facts.calls if c.method == "eval" and not c.node.args and c.receiver}
        trained = {c.receiver for c in self.facts.calls if c.method == "train" and not c.node.args and c.receiver}
        # (switched both ways, `self.biencoder.train()` ... `self.biencoder.eval()`, is a module whatever its name)
        # (or switched one way and asked for its parameters: `clip_grad_norm_(self.reader.parameters(), m)`)
        # (or switched to eval and given weights: `m.load_state_dict(torch.load(ckpt))` ... `m.eval()`)
        weighted = {c.receiver for c in self.facts.calls if c.method in ("parameters", "named_parameters", "zero_grad") and c.receiver}
        loaded = {c.receiver for c in self.facts.calls if c.method == "load_state_dict" and c.receiver}
        # (or switched to training and run where a loss is backpropagated: MASTER's `self.model.train()`, then
        # `outputs = self.model(images, target)` ... `loss.backward()` in the same method)
        backpropagated = {c.dotted for c in self.facts.calls if c.dotted in trained and any(
            b.method == "backward" for b in c.function.calls)}
        return (evaluated & trained) | ((evaluated | trained) & (self._optimized_models | weighted)) | (evaluated & loaded) | (
            backpropagated)

    def _computing_module(self, inst) -> bool:
        """An nn.Module with weights or modes of its own: not a stateless scoring function
        (`TransEScore`: arithmetic on the embeddings it is given) nor a metric from a metrics/ package
        (`RelativeVolumeMel`) or a data augmentation from an augmentation/ package (kornia's
        `AugmentationSequential`), which build no graph and behave the same in either mode."""
        training = self.training
        if _stands_for_subclasses(inst) and training.is_module_class(inst.facts, inst.cls):
            return True  # `net: BaseNet`: an abstract base stands for the subclasses that hold the layers
        return (
            self.module_like(inst.facts, inst.cls)
            and (ModeLayers._runs_module_passed_in(inst.cls) or not training.is_stateless_module_class(inst.facts, inst.cls))
            and not _METRIC_PATH.search(inst.facts.path) and not _AUGMENTATION_PATH.search(inst.facts.path)
        )

    # -- passes ----------------------------------------------------------------
    @cached_property
    def passes(self) -> list[EvalPass]:
        if is_test_module(self.facts) or uses_other_framework(self.facts):
            return []
        out = self._find_passes()
        if out and self._neighbours_use_other_framework():
            return []
        return out

    def _neighbours_use_other_framework(self) -> bool:
        """compare_gan's `metrics/accuracy.py` imports no framework itself, only project modules built on
        TensorFlow: its `gan.z_generator(...)` is no PyTorch model. Asked only of files with a pass.
        (Read through the project index, so the result cache knows which files it depended on.)"""
        project = self.training.project
        if project is None or "torch" in import_heads(self.facts) or self.facts.path == "<string>":
            return False
        here, seen = Path(self.facts.path), set()
        for qualified in self.facts.imports.values():
            other = project.module_facts(here, qualified)
            if other is None and "." in qualified:  # `from gan_lib import eval_utils` names a module too
                other = project.module_facts(here, qualified.rsplit(".", 1)[0])
            if other is not None:
                seen |= import_heads(other)
        return bool(seen & OTHER_FRAMEWORKS) and "torch" not in seen

    def _find_passes(self) -> list[EvalPass]:
        out = []
        for fn in self.facts.functions:
            if fn.is_module or self.lightning_hook(fn) or _BN_STATISTICS.search(fn.name):
                continue  # (precise-BN passes run the model in training mode on purpose; a plain `def test_step(model, ...)` is no Lightning hook)
            if _returns_first(fn):
                continue  # `def test(self): return` above the old body: switched off, nothing after it runs
            if fn.cls is not None and _OTHER_RUNTIME.search(fn.cls.name):
                continue  # `TrtEvitSam.predict_torch`: the networks it runs are TensorRT or ONNX engines
            attacked = False
            if self.has_training(fn):
                # `eval_adv_test_whitebox`: a PGD attack backpropagates to the input and steps nothing; the
                # evaluation needs gradients, but still eval mode
                attacked = bool(_EVAL_NAME.search(fn.name)) and not self.steps_anything(fn)
                if not attacked:
                    continue
            if fn.cls is not None and self.module_like(self.facts, fn.cls) and not self._trains_itself(self.facts, fn.cls):
                # a model's own infer()/predict(): whoever calls it sets the modes (unless the module runs its
                # own training and evaluation, switching itself: ECAPA-TDNN's `train_network`/`eval_network`)
                own = self._runs_over_own_loader(fn) if _EVAL_NAME.search(fn.name) else ()
                if own:
                    # flair's `TextRegressor.evaluate(data_points)` batches the data itself and runs the model
                    # per batch: the caller sets the mode, but only the method can keep each batch's graph
                    # from being built (judged for gradients only)
                    out.append(EvalPass(fn, own, True))
                continue
            if fn.cls is not None and _ACTING_CLASS.search(fn.cls.name) and _ACTING_METHOD.match(fn.name):
                continue  # `@torch.no_grad() def __call__(self, state)` of an RL agent: acting while training, not an evaluation
            # (a decorator names a pass only when it is torch's own: YOLOv5's `@smart_inference_mode()` also
            # wraps detect.py's `run`, whose model comes from a loader that switches it to eval itself)
            # (nnU-Net flow trainers' `compute_losses_label_prediction`: a loss of the prediction variant, for training)
            named = _EVAL_NAME.search(fn.name) and not _LOSS_HELPER.match(fn.name)
            if named or any(d.rsplit(".", 1)[-1] in NO_GRAD_WORDS for d in fn.decorators):
                calls = tuple(self._modes_left_to_callers_elsewhere(r) for r in self.model_runs(fn) if self._runs_per_batch(r.call))
                # (captum's `train_and_eval`: `self.lm.fit(loader)` then `self.lm(x_test)` trains the model it scores)
                calls = tuple(r for r in calls if not any(c.method == "fit" and c.receiver == r.model for c in fn.calls))
                if calls and not self._shared_with_training(fn) and not self._hook_of_base_passes(fn):
                    # (not a trainer's `predict(batch)` that `training_loss` also calls: not only evaluation)
                    out.append(EvalPass(fn, calls, True, needs_grad=attacked))
        for fn in self.facts.functions:
            if any(p.function is fn for p in out):
                continue
            if fn.is_module or _BN_STATISTICS.search(fn.name):
                continue
            for loop in fn.loops:
                last = loop.iter_name.rsplit(".", 1)[-1] if loop.iter_name else _keyed_loader(loop)
                named_for_evaluation = bool(_EVAL_LOADER.search(last))
                if not (named_for_evaluation or _ANY_LOADER.search(last)):
                    continue  # (`def accuracy(network, loader, ...)`: a no_grad loop over a loader is a pass)
                calls = tuple(
                    r for r in self.model_runs(fn)
                    if r.call.context.loop is not None and loop.encloses(r.call.context.loop)
                    and any(is_no_grad_name(w) for w in r.call.context.withs)
                )  # (`model(x)`, and `network.predict(x)` of a model the function switches with .eval()/.train())
                if not calls or any(e.kind == "backward" for e in self.training.loop_events(loop)):
                    continue
                if named_for_evaluation or not self._fed_training_data(fn, loop.iter_name or last):
                    out.append(EvalPass(fn, calls, False))
        for fn in self.facts.functions:
            if fn.is_module or any(p.function is fn for p in out):
                continue
            if fn.cls is not None and self.training.is_module_class(self.facts, fn.cls) or self.has_training(fn):
                continue
            # `def accuracy(network, loader): network.eval(); for x, y in loader: network.predict(x)`: the
            # function switches the model to eval and runs it per batch; it is a pass whatever its name. So is
            # a batch drawn from a loader and run after the switch (`def visualize_predictions_with_error(model,
            # dataloader): model.eval(); batch = next(iter(dataloader)); model(images)`)
            evaled = [c for c in fn.calls if c.method == "eval" and not c.node.args and c.receiver]
            drawn = _drawn_from_loader(fn) if evaled else []
            if not evaled or not (fn.loops or drawn):
                continue
            runs = [r for r in self.model_runs(fn)
                    if any(e.context.order < r.call.context.order and within(r.model, e.receiver) for e in evaled)]
            calls = tuple(
                r for r in runs
                if r.call.context.loops and self._runs_per_batch(r.call) and iterates_data(r.call.context.loops[-1])
                and not self._over_training_data(fn, r.call)
            ) or tuple(r for r in runs if not r.call.context.loops and any(at < r.call.context.order for at in drawn)
                       and not self._outputs_read_for_shapes_only(r.call))  # (a shape check on one batch is a probe)
            if calls and not self._shared_with_training(fn):
                out.append(EvalPass(fn, calls, True))
        return out

    def _hook_of_base_passes(self, fn: FunctionInfo) -> bool:
        """fn overrides an abstract method that a base class's evaluation passes call per batch
        (`calculate_metrics(self, batch)` under `AbstractTrainer.validate`): those passes set the modes
        and are judged with fn's model runs, where a fix belongs."""
        if fn.cls is None or fn.loops:
            return False
        for flow, base, call in self.flow.calls_from_bases(fn, other_files=True):
            hook = base.methods.get(fn.name)
            # (the caller as a pass by its look, not by asking its file for its passes: that file may be this one)
            if hook is not None and _abstract_method(flow.facts, hook) and call.context.loop is not None and (
                _EVAL_NAME.search(call.function.name) or any(is_no_grad_name(w) for w in call.context.withs)
            ):
                return True
        return False

    def _runs_over_own_loader(self, fn: FunctionInfo) -> tuple[ModelRun, ...]:
        """A module method's runs per batch of a DataLoader it builds itself, with the mode left to
        its callers (has_modes False)."""
        loaders = {t for a in fn.assigns if isinstance(a.value, cst.Call)
                   and (dotted_name(a.value.func) or "").rsplit(".", 1)[-1] == "DataLoader" for t in a.targets}
        if not loaders:
            return ()
        runs = []
        for r in self.model_runs(fn):
            loop = r.call.context.loop
            if loop is not None and isinstance(loop.node, cst.For) and loaders & names_in(unwrap_iter(loop.node.iter)):
                runs.append(ModelRun(r.call, r.model, has_modes=False, grad_off_inside=r.grad_off_inside))
        return tuple(runs)

    def lightning_hook(self, fn: FunctionInfo) -> bool:
        """A LightningModule's evaluation step, or a Callback's evaluation hook in a file built on Lightning,
        that the framework runs."""
        if fn.name in LIGHTNING_HOOKS:
            return self._run_by_a_framework(fn)
        return bool(_LIGHTNING_CALLBACK_HOOKS.match(fn.name)) and bool(
            import_heads(self.facts) & {"lightning", "pytorch_lightning"}
        ) and self._run_by_a_framework(fn)

    def _run_by_a_framework(self, hook: FunctionInfo) -> bool:
        """A Lightning-style hook that nothing in its file calls: the framework runs it, under no_grad
        and in eval mode. `nnUNetTrainer.run_training` calls its own `self.validation_step(batch)`,
        which is then judged like any other code."""
        if hook.cls is None or "staticmethod" in hook.decorators or self.flow.call_sites(hook):
            return False  # (Lightning calls its hooks with self: HAKE's static `KGEModel.test_step(model, ...)` is none)
        if "torch.nn.Module" in hook.cls.bases and all(b == "torch.nn.Module" or b in _MIXIN_BASES for b in hook.cls.bases):
            return False  # USAD's `class UsadModel(nn.Module)` with a `validation_step` its own loop calls
        # (im2scene's `BaseTrainer.evaluate()` calls `self.eval_step()` in another file of the project:
        # the project's own loop runs it, not a framework)
        return not any(c.receiver == "self" for _, _, c in self.flow.calls_from_bases(hook, other_files=True))

    def _over_training_data(self, fn: FunctionInfo, call: CallInfo) -> bool:
        """The run sits in a loop over the training data (SNR-SKF's `for _, train_data in
        enumerate(train_loader)`, where a frozen segmentation net in eval mode guides each training step):
        training's loop, not an evaluation pass. (The innermost loop: a validation loop nested in the
        training loop is a pass.)"""
        loop = call.context.loops[-1]
        name = loop.iter_name.rsplit(".", 1)[-1] if loop.iter_name else _keyed_loader(loop)
        return bool(name and _ANY_LOADER.search(name) and self._fed_training_data(fn, name))

    def _fed_training_data(self, fn: FunctionInfo, loader: str) -> bool:
        """`init_memory(train_loader, model)`: a no_grad pass over the training data (a memory bank, features
        for clustering) runs in whatever mode training wants; it is not an evaluation."""
        sites = self.flow.call_sites_anywhere(fn) if loader in fn.params else []
        if not sites:  # (a parameter no caller in sight fills: its name says it)
            return "train" in loader.lower()
        for flow, site in sites:
            arg = flow.argument_for(fn, loader, site)
            if arg is not None and "train" in (dotted_name(arg) or "").lower():
                return True
        return False

    @cached_property
    def shared_runners_called_to_evaluate(self) -> list:
        """(function, per-batch model runs, backward/step calls, call site) for each call of this file that
        rules out every training branch of a function that trains only under a test (`def
        train_or_eval_model(model, ..., train=False)` with `if train: loss.backward(); optimizer.step()`):
        such a call is an evaluation, which TD005 and TD006 judge where it is made."""
        found = []
        for fn in self.facts.functions:
            if fn.is_module or fn.parent is None:
                continue
            updates = [c for c in fn.calls if (self.training.event_of(c) or ("",))[0] in ("backward", "step")]
            if not updates or not all(c.context.branches and c.context.loops for c in updates):
                continue  # (a function that trains on every call is no evaluation, whatever it is handed)
            runs = [c for c in fn.calls if c.context.loops and self.is_model_call(c) and not c.context.branches]
            if not runs:
                continue
            for site in self.flow.call_sites(fn):
                if all(self.flow.guard_rules_out(c, self.flow, site) for c in updates):
                    found.append((fn, runs, updates, site))
        return found

    def _shared_with_training(self, method: FunctionInfo) -> bool:
        """Some training method computes with `self.<method>(...)`: `def training_loss(self, batch):
        out, y = self.predict(batch)`. A method that loops over no data of its own is then a forward
        wrapper whose callers choose the grad mode (in the same class, a base class, or a mixin composed
        at run time in another file). `train()` calling `self.validate()` for its side effects does not
        make `validate` a training step."""
        if self._computes_for_forward(method):
            return True
        if method.loops or any(c.method == "eval" and not c.node.args and c.receiver for c in method.calls):
            return False  # (`def evaluate_model(model, ...): model.eval(); ...` is an evaluation wherever it is called)
        if _EVAL_NAME.search(method.name) and self.loader_comprehension_calls(method):
            return False  # `outputs = [model.validation_step(b) for b in val_loader]`: a loop over data all the same
        if self._sets_grad_mode(method):
            return False  # a forward wrapper for a training step would not turn gradients off
        if self._handed_to_training(method):
            return True
        for facts, call in self._callers_of(method):
            caller = call.function
            if caller is method or caller.is_module or _EVAL_NAME.search(caller.name):
                continue
            if not any(_holds(a.value, call.node) for a in caller.assigns) and not any(
                _holds(ret.value, call.node) for ret, _ in caller.returns
            ):
                continue  # called for its side effects
            judge = self.for_file(facts)
            if caller.name != "forward" and _EVAL_NAME.search(method.name) and not judge.has_training(caller, depth=0) and (
                judge.has_training(caller)
            ):
                continue  # `train()`: `self.train_step(...)` backpropagates, then `val_loss = self.inference_step(...)`
            if caller.name == "forward" or _TRAINING_NAME.search(caller.name) or judge.has_training(caller, depth=0):
                if caller.name != "forward" and not _TRAINING_NAME.search(caller.name) and _EVAL_NAME.search(method.name) and (
                    not judge.backpropagated_beside(call)
                ):
                    continue  # hogrl's main() trains in its batch loop, then `val_auc = test(...)` every ten epochs
                return True  # (a script's main() that trains through helpers, then predicts, does not count;
                # a `forward` that computes with it hands its result to whoever backpropagates)
        return False

    def backpropagated_beside(self, call: CallInfo) -> bool:
        """A backward in the same iteration as the call (its own loop's body, helpers included), or after it
        in a function body without loops: where a training step could use what the call computes."""
        loop = call.context.loop
        if loop is not None:
            return any(e.kind == "backward" and e.direct for e in self.training.loop_events(loop))
        return any(
            c.context.loop is None and c.context.order > call.context.order
            and (event := self.training.event_of(c)) is not None and event[0] == "backward"
            for c in call.function.calls
        )

    def _handed_to_training(self, fn: FunctionInfo) -> bool:
        """`train(loader, netG, predict, optimizer)`: the function is handed as a callback to a training
        function (CyCADA's segmentation `predict` feeds the generators' semantic loss)."""
        if fn.cls is not None:
            return False
        for call in self.facts.calls:
            if not any(isinstance(a.value, cst.Name) and a.value.value == fn.name for a in call.node.args):
                continue
            callee = self.facts.resolve_function(call)
            if callee is not None and callee is not fn and (_TRAINING_NAME.search(callee.name) or self.has_training(callee, depth=0)):
                return True
        return False

    def _callers_of(self, method: FunctionInfo) -> list:
        """(facts, call) for the calls of a function or method, in this file or the project's others."""
        project = self.training.project
        if method.cls is None:  # a plain function: its calls here, or from other files of the project
            return [(flow.facts, site) for flow, site in self.flow.call_sites_anywhere(method)]
        if project is not None:
            return project.method_callers(self.facts, method.name)
        return [(self.facts, c) for c in self.facts.calls if c.dotted == f"self.{method.name}"]

    def _computes_for_forward(self, fn: FunctionInfo, depth: int = 0) -> bool:
        """A module's `forward` calls it (directly, or through plain helpers): NeRF's `inference()` inside
        `render_rays()` queries the network for training as much as for testing, and runs in whatever
        mode and grad mode the forward runs in."""
        if depth == 0 and (fn.parent is None or fn.parent.is_module):
            return False  # only helpers nested in another function: their callers are in reach, and rare
        for facts, call in self._callers_of(fn):
            caller = call.function
            if caller is fn or caller.is_module:
                continue
            if caller.name == "forward" and caller.cls is not None:
                return True
            plain = caller.cls is None and not _EVAL_NAME.search(caller.name) and not any(is_no_grad_name(d) for d in caller.decorators)
            if plain and depth < 2:
                judge = self.for_file(facts)
                if judge._computes_for_forward(caller, depth + 1):
                    return True
        return False

    def iterates_its_model(self, call: CallInfo) -> bool:
        """One call of a project module whose `forward` runs a model step by step over a counted loop (a
        diffusion sampler's `for t in reversed(range(self.T)): eps = self.model(x_t, t)`): with gradients
        on, the call keeps every step's activations in one graph."""
        inst = self.flow.instance_of(call.node.func, call.function, call.context.order)
        forward = inst.cls.methods.get("forward") if inst is not None and inst.cls is not None else None
        if forward is None:
            return False
        # (the model it steps is one handed to its constructor, not its own layers: an LSTM's
        # `for t in range(T)` over its gates is one network's forward)
        handed = set(inst.cls.stored_params())
        counted = [loop for loop in forward.loops if _counts_steps(loop)]
        return bool(counted and handed) and any(
            any(l is loop for l in r.call.context.loops for loop in counted)
            and r.model is not None and any(r.model == h or within(r.model, h) for h in handed)
            for r in self.for_file(inst.facts).model_runs(forward)
        )

    def model_runs(self, fn: FunctionInfo, depth: int = 0) -> list[ModelRun]:
        """Model calls in fn, and calls of local helpers that run a model fn passes them (or one
        they share with fn: a closure's variable, `self._model` in a method of the same class)."""
        key = _place_of(self.facts, fn)
        if key in _RUNS_BEING_FOUND:
            return self._find_model_runs(fn, depth)
        _RUNS_BEING_FOUND.add(key)
        try:
            return self._find_model_runs(fn, depth)
        finally:
            _RUNS_BEING_FOUND.discard(key)

    def _find_model_runs(self, fn: FunctionInfo, depth: int) -> list[ModelRun]:
        runs = []
        for c in fn.calls:
            if c.context.in_lambda or self._switched_off(c):
                continue
            handed = self._plain_objects_handed_in(c)
            if handed is not None:
                runs.append(handed)
                continue
            if self.is_model_call(c):
                runs.append(ModelRun(c, c.dotted, grad_off_inside=self._grad_off_in_chosen_branch(c, "forward")))
                continue
            item = self._item_of_switched_container(c)
            if item is not None:  # OLTR's `self.networks['feat_model'](inputs)`
                runs.append(ModelRun(c, item))
                continue
            if c.dotted in ("self", "self.forward") and self._module_trains_itself(fn):
                runs.append(ModelRun(c, "self"))  # a Keras-style module's own `evaluate`: it sets its own mode
                continue
            unwrapped = _unwrap_call_model(c) or self._unwrapped_local(c)
            if unwrapped is not None and self.is_model_name(unwrapped):
                runs.append(ModelRun(c, unwrapped))  # `accelerator.unwrap_model(model)(image)`
                continue
            bound = self._bound_run_method(c)
            if bound is not None:  # `infer_func = pt_model.inference` (or `.forward`), then `infer_func(x)`
                model, methods = bound
                runs.append(ModelRun(c, model, True, all(self._grad_off_in_every_method_named(m) for m in methods)))
                continue
            if self._runs_through_method(c):
                # model.forward(x), model.encode(x), tacotron.infer(seq)
                inst, method = self._model_method(c)
                # `@torch.no_grad() def sample(self, ...)`; a library model's own `inference`/`predict`, whose
                # code is not in the project, commonly disables gradients itself (PyG's `BasicGNN.inference`)
                # (a model of unknown class running `inference(...)`, with no method of that name in this file:
                # PyG's GRetriever and BasicGNN decorate theirs with no_grad, as most that carry the name do;
                # its mode still matters)
                held = self.wrapper_runs(inst, c.method)
                if held:  # a plain object's method: gradients are off if they are for every network it runs
                    off = self.for_file(inst.facts).all_grad_off(held)
                elif method is not None:
                    off = self._delegates_grad_off(inst.facts, inst.cls, method) or (
                        _abstract_method(inst.facts, method) and self._grad_off_in_every_override(inst.facts, inst.cls, c.method)
                    )
                else:
                    off = (
                        bool(_LIBRARY_INFERENCE.match(c.method or "")) and self._library_instance(c)
                        or self._grad_off_in_every_method_named(c.method)
                        or self._grad_off_in_chosen_branch(c, c.method)
                        or inst is None and c.method == "inference" and not self._defined_in_project("inference")
                    )
                # (a plain wrapper object has no `.eval()`: its networks' modes are its own business)
                modes = self._treated_as_module(c.receiver, c.function) and not self._wrapper_protocol(c) and not held
                if method is not None and _sets_own_eval(method) or method is None and self._eval_in_every_method_named(c.method):
                    # `def beam_search(self, x, ...): self.eval(); ...`: the method sets its mode, not its
                    # gradients, which stay as the caller has them
                    modes = False
                runs.append(ModelRun(c, c.receiver, modes, off))
                if held and c.receiver and not _switches_held_networks(inst.cls):
                    # `agent._act(state, eps)` runs `self.model`, whose mode the agent never sets: the caller
                    # does (`agent.model.eval()`), so the network is judged as the caller names it
                    runs.extend(ModelRun(c, c.receiver + r.model[4:], True, off) for r in held if r.model.startswith("self."))
                continue
            project_run = self._project_module_method(c)
            if project_run is not None:  # LIIF's `model.gen_feat(inp)` on a model built from a registry
                off, modes = project_run
                runs.append(ModelRun(c, c.receiver, has_modes=modes, grad_off_inside=off))
                continue
            known_run = self._known_module_method_run(c)
            if known_run is not None:  # pytorch-asr's `self.model.classifier(xs)`, which runs `self.encoder`
                runs.append(known_run)
                continue
            wrapped_run = self._project_wrapper_method(c)
            if wrapped_run is not None:  # medical_pytorch's `agent.predict(inputs)` on an agent handed in
                runs.append(wrapped_run)
                continue
            if c.method == "generate" and self._runs_through_method(c, generating=True):
                # `model.generate(image, num_beams=3)`: Dropout still acts unless the model is in eval mode.
                # Hugging Face's generate runs under no_grad; a project's own generate may not.
                _, method = self._model_method(c)
                off = method is None or self._sets_grad_mode(method)
                modes = self._treated_as_module(c.receiver, c.function) and not (method is not None and _sets_own_eval(method))
                runs.append(ModelRun(c, c.receiver, modes, off))
                continue
            if c.dotted == "self" and isinstance(c.node.func, cst.Name) and depth < 2:
                runs.extend(self._runs_through_own_call(c, depth))  # drugai's `logits, _ = self(**batch)`
                continue
            helper = self.facts.resolve_function(c)
            if helper is None:
                handed = self._model_handed_to_runner(c)
                evaluator = self._evaluator_object_runs(c) if handed is None else []
                if handed is not None:  # fairseq's `criterion(model, sample)`, `generator.generate(models, sample)`
                    runs.append(ModelRun(c, handed))
                elif evaluator:  # BiSeNet's `single_scale = MscEvalV0(...)` ... `single_scale(net, dl)`
                    runs.extend(evaluator)
                elif depth == 0:
                    elsewhere = self._run_by_helper_elsewhere(c)
                    if elsewhere is not None:  # `greedy_generate(model, tokenizer, ids)` from the project's utils
                        runs.append(elsewhere)
                    elif c.receiver == "self":
                        runs.extend(self._runs_through_base_method(c))
                continue
            if c.receiver == "self" and depth < 2 and helper is not fn and _abstract_method(self.facts, helper):
                # `metrics = self.calculate_metrics(batch)` in a base trainer's validate(), where only the
                # subclasses (in other files) say what it runs: the models their overrides run
                runs.extend(self._runs_through_overrides(c, helper, depth))
                continue
            if helper is fn or not self._leaves_modes_to_caller(helper):
                continue
            shared = helper.parent is fn or (helper.cls is not None and helper.cls is fn.self_class() and c.receiver == "self") or (
                # `apply_model(part, idx)` beside `evaluate(parts)` in a script: both run the script's own `model`
                helper.cls is None and fn.cls is None and helper.parent is not None and helper.parent is fn.parent
                and self._calls_a_global(helper)
            )
            if shared and depth < 2:  # `def get_pred(x): return inception_model(x)`, `self._loss_step(batch)`
                # (not `if self.segmentation_model.training: x = self.augmentation_model(x)`: a run the helper
                # makes only in training mode, whose model the evaluation never reaches)
                named = [(r, self._as_caller_sees(r, helper, c)) for r in self.model_runs(helper, depth + 1)
                         if not _gated_by_training_flag(r.call)]
                # every model the helper runs, once each (`self.forward(batch)` runs text_enc and mov_enc)
                distinct = list({m: (r, m) for r, m in reversed(named) if m is not None}.values())[::-1]
                for inner, model in distinct:
                    # (a helper that backpropagates itself, MAML's `adapt`, needs the graph it builds)
                    off = (inner.grad_off_inside or _no_grad_at(helper, inner.call) or bool(_ADAPTING_METHOD.search(helper.name))
                           or self.has_training(helper, depth=0))
                    runs.append(ModelRun(c, model, inner.has_modes, off))
                if distinct:
                    continue
            for arg in c.node.args:
                name = dotted_name(arg.value) or self._keyed_item(arg.value)
                if name is None:
                    continue
                param = self._param_bound_to(helper, c, arg)
                if not param:
                    continue
                if not (self.is_model_name(name) or self.is_model_name(param) and _calls_param(helper, param)):
                    continue  # (`_do_fwd_pass(self.biencoder, ...)` runs what it takes as `model`)
                if _calls_param(helper, param):
                    # every model the helper runs: `pgd_blackbox(model_target, model_source, X, y)`
                    runs.append(ModelRun(c, name, grad_off_inside=self._runs_param_without_grad(helper, param)))
                    continue
                handed_on = [r for r in self.model_runs(helper, depth + 1) if r.model == param] if depth < 2 else []
                if handed_on:  # test() -> scale_process(model, ...) -> net_process(model, ...)
                    off = all(r.grad_off_inside or _no_grad_at(helper, r.call) for r in handed_on)
                    runs.append(ModelRun(c, name, grad_off_inside=off))
                    break
        if "import_module" in self.facts.source:
            runs = [r for r in runs if not (r.model and self._picked_at_run_time(r.model, fn, r.call.context.order))]
        return runs

    def _holds_class_loaded_by_name(self, call: CallInfo) -> bool:
        """`model = get_model(args)`, where the project's `get` returns `getattr(import_module(name), cls)`:
        the name holds a class picked by a string (NLSPN's model registry), so calling it builds a model."""
        held = self.flow.value_of(call.node.func.value, call.function, call.context.order)
        value = held[0] if held is not None else None
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return False
        found = self._project_function(value.func)
        if found is None:
            return False
        facts, loader = found
        returns = [r.value for r, _ in loader.returns]
        return bool(returns) and all(_class_from_module(facts, loader, r) for r in returns)

    def _picked_at_run_time(self, name: str, fn: FunctionInfo, order: int, depth: int = 0) -> bool:
        """`model = importlib.import_module(f"Miniproject_{n}.model")`, `Model = importlib.import_module(...).Model`,
        `model = Model()`: code chosen by a string at run time, whose modes and gradients are its own business."""
        held = self.flow.value_of(name.split(".", 1)[0], fn, order) if depth < 3 else None
        value = held[0] if held is not None else None
        while isinstance(value, (cst.Attribute, cst.Call)):
            if isinstance(value, cst.Call) and self.facts.qualify(value.func) == "importlib.import_module":
                return True
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                return self._picked_at_run_time(value.func.value, fn, order, depth + 1)  # `model = Model()`
            value = value.func if isinstance(value, cst.Call) else value.value
        return False

    def _unwrapped_local(self, call: CallInfo) -> str | None:
        """`unwrap_model = self.accelerator.unwrap_model(self.G_Net)`, then `unwrap_model(x)`: the model unwrapped."""
        if not isinstance(call.node.func, cst.Name) or call.function.is_module:
            return None
        name = call.node.func.value
        # (every binding before the call, `unwrap_model = unwrap_model.to(self.device)` moving what it held)
        values = [a.value for a in call.function.assigns if a.targets == (name,) and a.context.order < call.context.order]
        return next((m for m in map(_unwrapped_model, values) if m is not None), None)

    def _module_trains_itself(self, fn: FunctionInfo) -> bool:
        """fn is a method of an nn.Module that trains itself (`self.train()`, a backward and a step in its
        own `fit`): its `self(x)` is a model run whose mode the module sets, not its caller."""
        cls = fn.self_class()
        return cls is not None and self.training.is_module_class(self.facts, cls) and self._trains_itself(self.facts, cls)

    def _trains_itself(self, facts, cls, depth: int = 0) -> bool:
        """`_switches_itself`, for the class or a base class of the project (Text-Mining's `BiLSTM_CRF(BaseModel)`,
        whose base in another file holds `run_train`)."""
        if _switches_itself(cls):
            return True
        for written in cls.written_bases if depth < 4 else ():
            found = lookup_class(self.training.project, facts, written)
            if found is not None and found[1] is not cls and self._trains_itself(found[0], found[1], depth + 1):
                return True
        return False

    def _runs_through_own_call(self, call: CallInfo, depth: int) -> list[ModelRun]:
        """`self(**batch)` in a plain trainer object whose `__call__` hands on to `self.forward(...)`, which
        runs `self.model(...)` (drugai's components, the call defined in a base class of another file):
        the models that forward runs, as this call runs them. (An nn.Module calling itself runs its own
        layers; its caller sets the modes.)"""
        cls = call.function.self_class()
        if cls is None or self.training.is_module_class(self.facts, cls):
            return []
        found = self._method_and_file(self.facts, cls, "__call__")
        if found is None:
            return []
        facts, method = found
        forward = next((c for c in method.calls if c.receiver == "self" and c.method and c.method != "__call__"), None)
        if forward is not None and len(method.calls) == 1:  # `def __call__(self, *a, **k): return self.forward(*a, **k)`
            found = self._method_and_file(self.facts, cls, forward.method)
            if found is None:
                return []
            facts, method = found
        judge = self.for_file(facts)
        runs: dict[str, ModelRun] = {}
        for r in judge.model_runs(method, depth + 1):
            model = judge._as_caller_sees(r, method)
            if model and model.startswith("self.") and model not in runs:
                runs[model] = ModelRun(call, model, r.has_modes, r.grad_off_inside or _no_grad_at(method, r.call))
        return list(runs.values())

    def _runs_through_overrides(self, call: CallInfo, hook: FunctionInfo, depth: int) -> list[ModelRun]:
        """The models that the subclasses' overrides of an abstract `hook` run, as `self.<model>`
        (BERT4Rec-VAE's `AbstractTrainer.validate` calls `self.calculate_metrics(batch)`, which each
        trainer in `trainers/` implements with `self.model(seqs)`)."""
        project = self.training.project
        if project is None or hook.cls is None:
            return []
        seen: dict[str, list[tuple[bool, bool]]] = {}  # model -> (has_modes, grad off) of each override's run
        for facts, override in project.methods_named(self.facts, hook.name):
            if override is hook or not self._derives_from(facts, override.cls, hook.cls):
                continue
            if self.module_like(facts, override.cls):
                # espnet's `BatchScorerInterface.batch_score` calls `self.score(...)`, which the decoders
                # and language models deriving from it implement: a module's own method, whose caller
                # (the beam search, under eval mode and no_grad) sets the modes
                continue
            judge = self.for_file(facts)
            # (whatever its name or decorator: a per-batch `calculate_metrics(self, batch)`, or an
            # `@torch.no_grad() def _eval_step(self, batch)`, is the caller's pass, judged there)
            if not judge._leaves_modes_to_caller(override, by_name=False):
                continue
            backwards = [c for c in override.calls if c.method == "backward"]
            for r in judge.model_runs(override, depth + 1):
                # (TNT's `iteration` trains under `if training:` and evaluates under `no_grad` in the
                # `else`: a run beside the backward is the training branch's, not the evaluation's)
                if any(not exclusive_branches(b.context.branches, r.call.context.branches) for b in backwards):
                    continue
                model = judge._as_caller_sees(r, override)
                if model and model.startswith("self."):
                    seen.setdefault(model, []).append((r.has_modes, r.grad_off_inside or _no_grad_at(override, r.call)))
        # one run per model: gradients are off only if every override turns them off
        return [ModelRun(call, model, any(m for m, _ in found), all(o for _, o in found)) for model, found in seen.items()]

    def module_like(self, facts, cls) -> bool:
        """An nn.Module by its bases, or by what it builds: a class with a base from a package outside the
        project (espnet's decoders derive from espnet2's `AbsDecoder`, an nn.Module) that keeps torch.nn
        layers of its own (`self.embed = torch.nn.Sequential(...)`). A trainer keeps a model, not layers."""
        key = id(cls)
        if key not in self._module_like:
            self._module_like[key] = self.for_file(facts).training.is_module_class(facts, cls) or (
                _keeps_torch_layers(facts, cls) and any(
                    w not in _PLAIN_BASES and w not in facts.classes and lookup_class(self.training.project, facts, w) is None
                    for w in cls.written_bases
                )
            )
        return self._module_like[key]

    def _derives_from(self, facts, cls, base, depth: int = 0) -> bool:
        """`cls` has `base` (a class of this file) among its ancestors, wherever in the project each is
        defined. (The project index parses its own copy of this file: compared by place, not identity.)"""
        if cls is None or depth > 4:
            return False
        here = Path(self.facts.path).resolve()
        for written in cls.written_bases:
            found = lookup_class(self.training.project, facts, written)
            if found is None:
                continue
            if found[1].name == base.name and Path(found[0].path).resolve() == here:
                return True
            if self._derives_from(found[0], found[1], base, depth + 1):
                return True
        return False

    def _evaluator_object_runs(self, call: CallInfo) -> list[ModelRun]:
        """An object of a project class called with the model: its `__call__` runs what it is handed
        (a segmentation repository's multi-scale evaluator, `MscEvalV0()(net, dl)`)."""
        if call.dotted is None or call.qualname is not None:
            return []
        inst = self.flow.instance_of(call.node.func, call.function, call.context.order)
        # (an evaluator handed in, `def eval_test(net, evaluator)`: judged for gradients only, since the network
        # is a parameter too, and which class it holds is the callers' to say)
        handed = isinstance(call.node.func, cst.Name) and call.node.func.value in call.function.params
        method = inst.cls.methods.get("__call__") if inst is not None and inst.cls is not None else None
        if method is None or any(c.method in ("eval", "train") for c in method.calls):
            return []  # (an evaluator that switches the model itself is judged where it does; `@torch.no_grad()` on
            # its `__call__` still leaves the mode to the caller)
        runs = []
        for arg in call.node.args:
            name, param = dotted_name(arg.value), self._param_bound_to(method, call, arg)
            if name and param and self.is_model_name(name) and _calls_param(method, param):
                runs.append(ModelRun(call, name, not handed, self._runs_param_without_grad(method, param)))
        return runs

    def _switched_off(self, call: CallInfo) -> bool:
        """The call sits under `if False:` (or in the `else` of `if True:`): code kept but never run."""
        for if_id, side in call.context.branches:
            test = self.facts.if_tests.get(if_id)
            if isinstance(test, cst.Name) and (test.value, side) in (("False", 0), ("True", 1)):
                return True
        return False

    def _model_handed_to_runner(self, call: CallInfo) -> str | None:
        """The model a call hands to code that runs it: fairseq's criterion, which computes the forward
        pass itself (`criterion(model, sample)`). (A generator's `generate(models, ...)` or another task's
        `valid_step` is judged where it is written: those set their own modes.)"""
        if call.qualname in _LIBRARY_RUNNERS:  # MONAI's `sliding_window_inference(inputs, roi, 4, model)`
            handed = argument(call.node, *_LIBRARY_RUNNERS[call.qualname])
            model = dotted_name(handed) if handed is not None else None
            return model if model and self.is_model_name(model) else None
        name = (call.dotted or "").rsplit(".", 1)[-1]
        # (or a forward-step callback the pass is handed: GPT-NeoX's `forward_step_fn(model=model, ...)`)
        handed_callback = call.dotted == name and name in call.function.params and bool(_CALLBACK_RUNNER.match(name))
        if not (_RUNNER_NAME.search(name) or handed_callback) or call.qualname is not None and call.qualname.startswith("torch."):
            return None
        for arg in call.node.args:
            model = dotted_name(arg.value)
            if model and (self.is_model_name(model) or model.rsplit(".", 1)[-1] == "models"):
                if self._holds_model_output(model, call):
                    continue  # `out_net = model(x)` ... `criterion(out_net, x)`: the output, not the network
                return model
        return None

    def _holds_model_output(self, name: str, call: CallInfo) -> bool:
        """The name was last given what a model run returned (`out_net = model(samples)`)."""
        held = self.flow.value_of(name, call.function, call.context.order) if name.isidentifier() else None
        if held is None or not isinstance(held[0], cst.Call):
            return False
        info = self.facts.call_info(held[0])
        if info is not None and self.is_model_call(info):
            return True
        # (a model handed in, whose class the flow cannot follow: called by a model's name on data, not built)
        called = dotted_name(held[0].func) or ""
        last = called.rsplit(".", 1)[-1]
        return bool(held[0].args) and last[:1].islower() and self.is_model_name(called) and last not in self.facts.classes

    def _run_by_helper_elsewhere(self, call: CallInfo) -> ModelRun | None:
        """A plain function from another file of the project that calls the model it is handed
        (for TD006: gradients on or off)."""
        models = [a for a in call.node.args if self.is_model_name(dotted_name(a.value))]
        if not models or call.dotted is None or call.dotted.count(".") > 1:
            return None
        found = self._project_function(call.node.func)
        if found is None or not self._leaves_modes_to_caller(found[1]):
            return None
        helper = found[1]
        for arg in models:
            param = self._param_bound_to(helper, call, arg)
            if not param:
                continue
            off = None
            if _calls_param(helper, param):
                off = self._sets_grad_mode(helper)
            else:  # EAST's `detect_dataset(model, ...)` hands it on to `detect(img, model, device)` beside it
                off = self._handed_on_in_file(found[0], helper, param)
            if off is not None:
                # judged for gradients only: how models reach helpers of other files (torchtitan's validator
                # hands pretrained encoders to `preprocess_data`) says too little about their mode; unless
                # the file itself trains that model and switches its modes (vilbert's `evaluate(..., model)`
                # hands the model it trains to `ForwardModelsVal`, and ends with `model.train()`), or builds it
                # right there (`model = EAST().to(device)`: a new module starts in training mode)
                name = dotted_name(arg.value)
                # (`model = self.model.module if hasattr(self.model, "module") else self.model`: an alias)
                switched = {name, self.training.canonical(name, call.function)} & self._switched_models
                modes = bool(switched) or self._built_in(call.function, name, call.context.order)
                return ModelRun(call, name, has_modes=modes, grad_off_inside=off)
        return None

    def _handed_on_in_file(self, facts, helper: FunctionInfo, param: str) -> bool | None:
        """Whether gradients are off where the helper hands `param` on to a function of its own file that
        runs it (the helper's runs as its own file sees them); None when it hands it to none."""
        handed_on = [r for r in self.for_file(facts).model_runs(helper, 1) if r.model == param]
        return all(r.grad_off_inside or _no_grad_at(helper, r.call) for r in handed_on) if handed_on else None

    def _built_in(self, fn: FunctionInfo, name: str | None, order: int) -> bool:
        """`model = EAST(False).to(device)` in fn itself: a module of the project's own classes, new, so in
        training mode until something switches it."""
        if not name or not name.isidentifier():
            return False
        origin = self.flow.origin(cst.Name(name), fn, order)
        for _ in range(3):  # `model = model.to(device)`: the value it moved
            if origin is None or origin.function is not fn or not _moves_itself(origin.call, name):
                break
            origin = self.flow.origin(cst.Name(name), fn, origin.order)
        if origin is None:
            # `model = config.init_obj("arch", module_arch)`, then `model = model.to(device)` (with paths the
            # flow cannot tell apart): one of the module classes the module it is handed exports
            made = [o for o in self.flow.origins(cst.Name(name), fn, order) if o is not None and not _moves_itself(o.call, name)]
            return len(made) == 1 and made[0].function is fn and bool(self._classes_picked_from_package(made[0]))
        if origin.function is not fn:
            return False
        inst = self.flow.instance_of(cst.Name(name), fn, order)
        if inst is None or inst.cls is None:
            return bool(self._classes_picked_from_package(origin))
        return self.training.is_module_class(inst.facts, inst.cls)

    def _as_caller_sees(self, run: ModelRun, helper: FunctionInfo, call: CallInfo | None = None) -> str | None:
        """The name a helper's model run has where the helper is called: `self.model`, a variable of
        the enclosing function, or `self.net` behind the helper's `net = self.net`; with the `call`,
        what the caller passes for the helper's parameter (MolCLR's `self._step(model, xis, xjs)`).
        None for the helper's own local (`for text_encoder in [self.enc, self.enc_2]`), which means
        nothing to the caller."""
        head, dot, tail = run.model.partition(".")
        if head == "self":
            return run.model
        if head in helper.params and head != "self" and call is not None:
            passed = _model_named(self.flow.argument_for(helper, head, call))
            return passed + dot + tail if passed and self.is_model_name(passed) else None
        if head in helper.params or any(head in loop.targets for loop in helper.loops):
            return None
        if head not in helper.assigned_names():
            return run.model
        held = self.flow.value_of(head, helper, run.call.context.order)
        name = dotted_name(held[0]) if held is not None else None
        return name + dot + tail if name and name.startswith("self.") else None

    def _runs_through_method(self, call: CallInfo, generating: bool = False) -> bool:
        """`model.encode(x)`, `tacotron2_model.infer(seq)`: a model method that computes with the
        model's layers. `generate` only when asked (`generating`): Hugging Face runs it under no_grad
        already, so it matters for the mode, not for gradients."""
        receiver = call.receiver
        if call.method and _ADAPTING_METHOD.search(call.method):
            return False  # `model.set_forward_adaptation(z)`: fits a new head on the features, with backward inside
        if call.method and _SETTER.match(call.method):
            return False  # skorch modules' `net.set_forward_return(["logits_class"])`: a setting, no run
        runs = call.method == "generate" if generating else bool(call.method and _RUN_METHOD.match(call.method))
        if not receiver or receiver == "self" or not runs:
            return False
        inst = self.flow.instance_of(call.node.func.value, call.function, call.context.order)
        if inst is not None and inst.cls is not None:
            # (a method that switches the module to eval itself still runs it, with the caller's gradients)
            return self._computing_module(inst) or bool(self.wrapper_runs(inst, call.method))
        # Known only by name: `self.tacotron2_model.infer(x)`, but not `decoder.decode(out)` (a CTC
        # decoder) nor `self.model.predict(x)` (an xgboost or sklearn model).
        bare = receiver.removesuffix(".module")  # `model.module.inference(...)` of a DDP-wrapped model
        named = self.is_model_name(bare) and _PLAIN_MODEL_NAME.search(bare.rsplit(".", 1)[-1])
        if self.is_model_name(bare) and not generating and any(
            c.receiver == receiver and c.method in ("eval", "train") for c in call.function.calls
        ):  # `network.predict(x)` (or `classifier.predict(x)`) beside `network.train()` in the pass: an
            return True  # nn.Module's own method, not sklearn's
        owner = call.function.self_class() if receiver.startswith("self.") else None
        if not generating and owner is not None and any(
            c.receiver == receiver and c.method in ("eval", "train") and not c.node.args and c.function.self_class() is owner
            for c in self.facts.calls
        ):
            # `self.model.predict(x)` in a class whose `__init__` calls `self.model.eval()`: a module; so is
            # CityLayout's `self.sampler`, a diffusion model its evaluator switches before `self.sampler.sample(...)`
            return True
        return bool(named) and bool(generating or _NAMED_RUN_METHOD.match(call.method))

    def _runs_through_base_method(self, call: CallInfo) -> list[ModelRun]:
        """`self.test()` where `test` is a base class's method in another file (`with torch.no_grad():
        self.forward()`) and `forward` is overridden here: the models the override runs, as this call runs
        them (gan-compression's distillers, the CycleGAN/pix2pix lineage)."""
        cls = call.function.self_class()
        found = self._method_and_file(self.facts, cls, call.method) if cls is not None and call.method else None
        if found is None or found[0] is self.facts:
            return []  # (a method of this file's classes is a local helper, followed as one)
        base = found[1]
        if any(c.method in ("eval", "train") for c in base.calls):
            return []  # the base method sets the modes itself
        runs: dict[str, ModelRun] = {}
        for inner in base.calls:
            override = self.facts.find_method(cls, inner.method) if inner.receiver == "self" and inner.method else None
            if override is None or override is call.function or not self._leaves_modes_to_caller(override):
                continue
            for r in self.model_runs(override, depth=1):
                model = self._as_caller_sees(r, override)
                if model and model not in runs:
                    off = _no_grad_at(base, inner) or r.grad_off_inside or _no_grad_at(override, r.call)
                    runs[model] = ModelRun(call, model, r.has_modes, off)
        return list(runs.values())

    def _wrapper_protocol(self, call: CallInfo) -> bool:
        """`self.model.test(child)` on an object from `create_model(opt)`, a class picked by name at run
        time: every project class with that method is a plain wrapper (a GAN zoo's BaseModel) with an
        `eval()` of its own, so its subclasses set their networks' modes (TestModel evals in `__init__`)
        in ways that cannot be followed here."""
        inst = self.flow.instance_of(call.node.func.value, call.function, call.context.order)
        project = self.training.project
        if inst is not None and inst.cls is not None or project is None or not call.method:
            return False
        found = project.methods_named(self.facts, call.method)
        return bool(found) and all(
            not self.training.is_module_class(facts, m.cls) and self._method_of(facts, m.cls, "eval") is not None
            for facts, m in found
        )

    def _library_instance(self, call: CallInfo) -> bool:
        """The receiver was built by a library class or model factory (`RENet(...)`, `timm.create_model`)."""
        inst = self.flow.instance_of(call.node.func.value, call.function, call.context.order)
        if inst is not None:
            return inst.cls is None and bool(inst.qualname or inst.factory)
        held = self.flow.value_of(call.receiver or "", call.function, call.context.order)
        value = held[0] if held is not None else None
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("to", "cuda"):
            value = value.func.value
        if not isinstance(value, cst.Call):
            return False
        q = self.facts.qualify(value.func) or ""  # `model = RENet(...).to(device)`, RENet imported from PyG
        return "." in q and q.rsplit(".", 1)[-1][:1].isupper() and lookup_class(self.training.project, self.facts, dotted_name(value.func)) is None

    def _known_module_method_run(self, call: CallInfo) -> ModelRun | None:
        """`model.classifier(xs)` on a model of a known project module class, whose method of that name
        runs the layers the model holds and trains nothing: a run of the model, whatever the method's name."""
        name = call.method
        if not call.receiver or call.receiver == "self" or not name or name.startswith("_") or name in _MODULE_API_METHODS:
            return None
        if _RUN_METHOD.match(name) or _ADAPTING_METHOD.search(name):
            return None  # (run methods are judged by `_runs_through_method`; `fit`/`train_*` adapt the model)
        inst, method = self._model_method(call)
        if inst is None or not self._computing_module(inst) or method is None or method.loops:
            return None  # (a method that loops over data of its own is a pass of its own file)
        judge = self.for_file(inst.facts)
        if judge.has_training(method) or not judge.held_model_runs(method):
            return None
        return ModelRun(call, call.receiver, True, judge._delegates_grad_off(inst.facts, inst.cls, method))

    def _project_wrapper_method(self, call: CallInfo) -> ModelRun | None:
        """`agent.predict(inputs)` on an object of unknown class, where every method of that name in the
        project belongs to a plain object (no nn.Module) that runs the networks it holds: a run of those
        networks. Judged for gradients only: their modes are the object's business."""
        name = call.method
        if not call.receiver or call.receiver == "self" or not name or not _RUN_METHOD.match(name) or name.startswith("_"):
            return None
        project = self.training.project
        if project is None or self.flow.instance_of(call.node.func.value, call.function, call.context.order) is not None:
            return None
        found = project.methods_named(self.facts, name)
        if not found:
            return None
        off = True
        for facts, method in found:
            if method.cls is None or self.training.is_module_class(facts, method.cls) or method.loops:
                return None
            judge = self.for_file(facts)
            held = judge.held_model_runs(method)
            if not held:
                return None
            off = off and judge.all_grad_off(held)
        return ModelRun(call, call.receiver, has_modes=False, grad_off_inside=off)

    def _plain_objects_handed_in(self, call: CallInfo) -> ModelRun | None:
        """`model(image)` on a parameter that every caller fills with plain project objects (a benchmark's
        `{"torch": torch_model, "onnx": onnx_model}` of back-end wrappers, each with a `__call__`): the
        wrappers run whatever networks they hold, in the modes they set. Judged for gradients only: off
        when every wrapper's `__call__` turns them off or runs no torch network."""
        fn, func = call.function, call.node.func
        if not isinstance(func, cst.Name) or func.value not in fn.params or fn.cls is not None:
            return None
        sites = self.flow.call_sites(fn)
        if not sites:
            return None
        off = True
        for site in sites:
            arg = self.flow.argument_for(fn, func.value, site)
            name = dotted_name(arg) if arg is not None else None
            if name is None or "." in name:
                return None
            walked = self._walked_by(site.function, name, site)
            names = [name]
            if walked is not None:  # `for model_name, model in models.items(): test_model(..., model, ...)`
                lists = self._lists_walked(site.function, walked, site)
                if len(lists) != 1 or lists[0][1] is None:
                    return None
                names = lists[0][1]
            for held_name in names:
                inst = self.flow.instance_of(cst.parse_expression(held_name), site.function, site.context.order)
                if inst is None or inst.cls is None or inst.declared or self.training.is_module_class(inst.facts, inst.cls):
                    return None
                method = self._method_of(inst.facts, inst.cls, "__call__")
                if method is None or any(_calls_param(method, self._param_bound_to(method, call, a) or "") for a in call.node.args):
                    return None  # `evaluator(net)`: an evaluator handed the network, judged as one (`_evaluator_object_runs`)
                judge = self.for_file(inst.facts)
                held = judge.held_model_runs(method)
                off = off and (not held or judge.all_grad_off(held))
        return ModelRun(call, func.value, has_modes=False, grad_off_inside=off)

    def _project_module_method(self, call: CallInfo) -> tuple[bool, bool] | None:
        """`model.gen_feat(inp)` on a model whose class cannot be followed (LIIF builds it from a
        registry): when every method of that name in the project belongs to an nn.Module and runs the
        layers it holds, the call runs the model. (whether those methods turn gradients off themselves,
        whether every one of them runs a mode layer), or None when the call is no such run. (The mode
        counts only when all agree: SVAMP's three `Seq2SeqModel.greedy_decode`, each over Dropout.)"""
        receiver, name = call.receiver, call.method
        if not receiver or receiver == "self" or not name or name.startswith("_") or name in _MODULE_API_METHODS:
            return None
        if name == "generate":
            # (CodeReviewer's `model.generate(...)` on a T5 subclass: Hugging Face's generate, under no_grad, is
            # likelier than the UniXcoder `generate` of a sibling folder; the generate path judges it)
            return None
        if not (self.is_model_name(receiver) and _PLAIN_MODEL_NAME.search(receiver.rsplit(".", 1)[-1])):
            return None
        project = self.training.project
        inst = self.flow.instance_of(call.node.func.value, call.function, call.context.order)
        if project is None or inst is not None and inst.cls is not None:
            return None  # (a model whose class is known is judged by the paths that follow it)
        # (a base class's stub, `def get_test_predict(self, image, info): pass`, says nothing: its overrides run)
        found = [(facts, m) for facts, m in project.methods_named(self.facts, name) if not _abstract_method(facts, m)]
        if not found:
            return None
        offs, modes = set(), True
        for facts, method in found:
            if method.cls is None or not self.training.is_module_class(facts, method.cls):
                return None
            judge = self.for_file(facts)
            if not judge.held_model_runs(method) and not _runs_itself(method):
                return None
            offs.add(judge._delegates_grad_off(facts, method.cls, method))
            modes = modes and not _sets_own_eval(method) and self.modes.method_has_modes(facts, method.cls, method)
        # (one detector's `get_test_predict` under no_grad, another's not: which one runs is not known here)
        return (offs.pop(), modes) if len(offs) == 1 else None

    # methods whose held runs are being worked out, across files: mbrl-lib's ensemble members call each
    # other's methods by name, and the question would otherwise come back to itself without end
    _holding: set[int] = set()

    def all_grad_off(self, runs: list[ModelRun]) -> bool:
        """Every run (of this file) has gradients off, inside the model or where it is called."""
        return all(r.grad_off_inside or self.grad_disabled_at(r.call) for r in runs)

    def held_model_runs(self, method: FunctionInfo) -> list[ModelRun]:
        """The runs a method of this file makes of networks its object holds (`self.encoder(x)`)."""
        if id(method) in Evaluation._holding:
            return []
        Evaluation._holding.add(id(method))
        try:
            return [r for r in self.model_runs(method) if r.model.startswith("self.")]
        finally:
            Evaluation._holding.discard(id(method))

    def wrapper_runs(self, inst, name: str | None) -> list[ModelRun]:
        """The networks a plain object's method runs on what it holds: MeshCNN's `ClassifierModel.test()`
        (from `create_model(opt)`, no nn.Module) runs `self.net` through `self.forward()`."""
        if inst is None or inst.cls is None or not name or self.training.is_module_class(inst.facts, inst.cls):
            return []
        method = self._method_of(inst.facts, inst.cls, name)
        if method is None or method.loops:
            return []  # (a method that loops over data of its own is a pass of its own file)
        judge = self.for_file(inst.facts)
        runs = judge.held_model_runs(method)
        if runs or not inst.declared or not _abstract_method(inst.facts, method) or self.training.project is None:
            return runs
        # `agents: Agent` whose `act` is only a docstring: the subclasses' overrides (PPO.act runs
        # `self.policy.act(...)`) are what the call runs
        return [
            r for facts, override in self.training.project.methods_named(inst.facts, name)
            if override is not method and not override.loops and judge._derives_from(facts, override.cls, inst.cls)
            for r in self.for_file(facts).held_model_runs(override)
        ]

    def _model_method(self, call: CallInfo) -> tuple:
        """(instance, method) for the method `model.sample(...)` runs, when the model's class is known;
        else (None, None)."""
        inst = self.flow.instance_of(call.node.func.value, call.function, call.context.order)
        if inst is None or inst.cls is None:
            return None, None
        return inst, self._method_of(inst.facts, inst.cls, call.method)

    def _delegates_grad_off(self, facts, cls, method: FunctionInfo, depth: int = 0) -> bool:
        """The model method turns gradients off itself, or hands the work to one of its class's methods
        that does (AllenNLP's `forward_on_instance` -> `forward_on_instances`, under no_grad)."""
        if method.name == "forward":  # (`model.forward(x, is_val=True)`: VICRegL logs metrics under no_grad, no more)
            return _all_work_without_grad(method)
        if self._sets_grad_mode(method):
            # (not when the method runs its own layers first and only decodes under no_grad: the E2E
            # model's `beam_search`, whose encoder builds its graph before `with torch.no_grad():`)
            return not _runs_own_layers_with_grad(cls, method)
        if depth > 1 or any(c.dotted in ("self", "self.forward") for c in method.calls):
            return False
        if self._torchtuples_predicts_without_grad(facts, cls, method):
            return True
        delegated = {id(m): m for m in (self._method_of(facts, cls, c.method) for c in method.calls if c.receiver == "self" and c.method) if m}
        return any(m is not method and self._delegates_grad_off(facts, cls, m, depth + 1) for m in delegated.values())

    def _grad_off_in_every_override(self, facts, cls, name: str, depth: int = 0) -> bool:
        """`self.policy.select_action(obs)` on `policy: BasePolicy`, whose own method only raises: a subclass's
        method runs, so gradients are off when every subclass turns them off in it, or in the base method its
        override hands the work to (OfflineRL-Kit's RAMBO policy scales the observation, then calls
        `super().select_action(obs)`, the SAC policy's, under no_grad)."""
        project = self.training.project
        subclasses = project.subclasses_of(facts, cls) if project is not None and depth < 4 else []
        if not subclasses:
            return False
        for sub_facts, sub in subclasses:
            own = sub.methods.get(name)
            if own is None or _abstract_method(sub_facts, own):
                if not self._grad_off_in_every_override(sub_facts, sub, name, depth + 1):
                    return False
            elif not (self._delegates_grad_off(sub_facts, sub, own) or self._base_method_grad_off(sub_facts, sub, own)):
                return False
        return True

    def _base_method_grad_off(self, facts, cls, method: FunctionInfo) -> bool:
        """The method calls the base class's method of its name (`super().select_action(obs)`), which turns
        gradients off itself."""
        if not any(calls_on_super(c.node) and c.method == method.name for c in method.calls):
            return False
        for written in cls.written_bases:
            base = lookup_class(self.training.project, facts, written)
            found = self._method_and_file(base[0], base[1], method.name) if base is not None else None
            if found is not None and found[1].cls is not None:
                return self._delegates_grad_off(found[0], found[1].cls, found[1])
        return False

    def _torchtuples_predicts_without_grad(self, facts, cls, method: FunctionInfo) -> bool:
        """pycox's `PMFBase.predict_pmf` hands the work to torchtuples' `Model.predict(input, batch_size,
        numpy, eval_, ...)`, which runs under `torch.set_grad_enabled(grads)`, `grads=False` unless given."""
        # (pycox's `class PMFBase(models.base.SurvBase)` names its base through the package: a file built on
        # torchtuples whose class inherits `predict` from outside the project is taken for one)
        if cls is None or not cls.bases or "torchtuples" not in import_heads(facts):
            return False
        calls = [c for c in method.calls if c.receiver == "self" and (c.method or "").startswith("predict")
                 and self._method_of(facts, cls, c.method) is None]
        given = [argument(c.node, 4, "grads") for c in calls]  # `predict(input, batch_size, numpy, eval_, grads, ...)`
        return bool(calls) and all(g is None or isinstance(g, cst.Name) and g.value == "False" for g in given)

    def _grad_off_in_every_method_named(self, name: str | None) -> bool:
        """`self._model.forward_on_instance(x)` on a model whose class cannot be followed (set by a base class
        of another file): every method of that name in the project turns gradients off."""
        found = self._methods_named_here_first(name)
        if not found and name in _LIBRARY_NO_GRAD_METHODS:
            return True  # AllenNLP's own `Model.forward_on_instances` runs under no_grad
        return bool(found) and all(self._delegates_grad_off(facts, method.cls, method) for facts, method in found)

    def _eval_in_every_method_named(self, name: str | None) -> bool:
        """GraphSAINT's `model.eval_step(...)` on a model whose class cannot be followed: every method of
        that name in the project switches its module to eval itself (`self.eval()`)."""
        found = self._methods_named_here_first(name)
        return bool(found) and all(_sets_own_eval(method) for _, method in found)

    def _methods_named_here_first(self, name: str | None) -> list:
        """The methods a call `x.<name>(...)` on an object of unknown class may run: this file's, or else
        the project's (not proxies to another object's method of the name, nor stubs that raise)."""
        project = self.training.project
        # a class of this file that defines the method is the model's (USAD's `model.validation_step`
        # beside `class UsadModel`); only then the project's others
        def not_proxies(found):  # (not a proxy: `return self.base_model.<name>(...)`; nor a stub that raises)
            return [(facts, m) for facts, m in found if not any(
                c.method == name and (c.receiver or "").startswith("self.") for c in m.calls) and not _abstract_method(facts, m)]

        found = not_proxies([(self.facts, m) for cls in self.facts.all_classes for m in cls.methods.values() if m.name == name])
        if not found:  # (CityLayout's trainer `sample()` hands on to `self.generator_ema.ema_model.sample(...)`)
            found = not_proxies(project.methods_named(self.facts, name) if project is not None and name else [])
        return found

    def _grad_off_in_chosen_branch(self, call: CallInfo, name: str | None) -> bool:
        """`model(data, mode='inference')`: the branch of the model's `forward` (method `name`) that the
        string handed in picks runs under no_grad. For a model of unknown class (PC-AVS builds it by
        name), every method of that name in the project that takes `mode` must do so."""
        chosen = {a.keyword.value: a.value.evaluated_value for a in call.node.args
                  if a.keyword is not None and isinstance(a.value, cst.SimpleString)}
        project = self.training.project
        if not chosen or not name:
            return False
        func = call.node.func  # (`model.forward(...)` or `model.infer(...)`: the model is left of the method; `model(...)`)
        model = func.value if isinstance(func, cst.Attribute) and func.attr.value == name else func
        inst = self.flow.instance_of(model, call.function, call.context.order)
        if inst is not None and inst.cls is not None:
            own = self._method_and_file(inst.facts, inst.cls, name)
            methods = [own[1]] if own is not None else []
        elif project is not None:
            methods = [m for _, m in project.methods_named(self.facts, name)]
        else:
            return False
        # (only a method with such a branch can be the one called: a loss's `forward(..., mode='max')` is not)
        verdicts = [_branch_without_grad(m, key, chosen[key]) for m in methods for key in chosen if key in m.params]
        verdicts = [v for v in verdicts if v is not None]
        return bool(verdicts) and all(verdicts)

    def _defined_in_project(self, name: str) -> bool:
        """Some class of this file, or of a module or package this file imports, defines a method `name`
        (LibContinual's trainer imports `core.model`, whose models each define `inference(batch)`, run
        with gradients on unless the caller turns them off)."""
        if any(name in cls.methods for cls in self.facts.all_classes):
            return True
        project = self.training.project
        if project is None or self.facts.path == "<string>":
            return False
        here = Path(self.facts.path).resolve()
        imported = {project.module_file(here, i.module) for _, i in self.facts.all_imports if i.module}
        homes = {p.parent if p.name == "__init__.py" else p for p in imported if p is not None}
        return any(
            Path(facts.path).resolve() in homes or any(home in Path(facts.path).resolve().parents for home in homes if home.is_dir())
            for facts, _ in project.methods_named(self.facts, name)
        )

    def _method_of(self, facts, cls, name: str) -> FunctionInfo | None:
        """A method of a class or of its base classes, in this file or another file of the project."""
        found = self._method_and_file(facts, cls, name)
        return found[1] if found is not None else None

    def _method_and_file(self, facts, cls, name: str) -> tuple | None:
        """(facts, method): the method as `_method_of` finds it, with the file it is written in."""
        return method_and_file(self.training.project, facts, cls, name)

    def _inherited_method(self, call: CallInfo) -> bool:
        """`self.run_model(x)` where `run_model` is a method of a base class in another file of the project
        (`from . import Co12Property`): a method, which switches its own modes, not a model named `*_model`."""
        func = call.node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls")):
            return False
        cls = call.function.self_class() if call.function is not None else None
        return cls is not None and self._method_and_file(self.facts, cls, func.attr.value) is not None

    def _treated_as_module(self, name: str, fn: FunctionInfo) -> bool:
        """The file moves, loads or switches `name` like an nn.Module (a GAN-zoo style wrapper object
        with a `test()` method has no `.eval()` to call)."""
        inst = self.flow.instance_of(cst.parse_expression(name), fn, 1 << 62)
        if inst is not None and (inst.cls or inst.sequential or inst.factory or (inst.qualname or "").startswith("torch.nn.")):
            return True
        canonical = self.training.canonical(name, fn) or name
        if canonical.startswith("self.") and canonical.endswith(".module"):
            return True  # `net_G = self.net_G.module`: what a DistributedDataParallel wrapper holds
        return any(c.receiver in (name, canonical) and c.method in _MODULE_API for c in self.facts.calls)

    def _made_in_eval_mode(self, value: cst.BaseExpression, fn: FunctionInfo, depth: int = 0) -> bool:
        """The value is a model already switched to eval mode: a chain with `.eval()` in it, or the
        return of a local loader that calls `model.eval()` on what it returns."""
        if isinstance(value, cst.Subscript):  # `load_model(cfg)["model"]`
            value = value.value
        node = value
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value == "eval" and not node.args:
                return True
            if node.func.attr.value == "from_pretrained" and _hugging_face_loader(self.facts.qualify(node.func)):
                return True  # Hugging Face returns pretrained models in eval mode
            if self.facts.qualify(node.func) == "clip.load":
                return True  # OpenAI's `clip.load` builds the model with `model.eval()`
            if node.func.attr.value == "train" and not _is_false_arg(node):
                return False  # `load_model(cfg).train()`: switched back, whatever the loader did
            node = node.func.value
        if isinstance(node, cst.Call):
            value = node  # `load_model(cfg).to(device)`: what the loader returns, moved (GroundingDINO's Model)
        if not isinstance(value, cst.Call) or depth > 2:
            return False
        callee = self.facts.resolve_callee(value.func, fn)
        if callee is None and isinstance(value.func, cst.Name):
            # `load_func = load_checkpoint` ... `model = load_func(n, run)`: every loader the name is given
            aliases = [a.value for a in fn.assigns if a.targets == (value.func.value,) and a.value is not None]
            if aliases and all(isinstance(v, cst.Name) for v in aliases) and value.func.value not in fn.params:
                return all(self._made_in_eval_mode(cst.Call(func=v, args=value.args), fn, depth + 1) for v in aliases)
        if callee is None:  # `load_compression_model(name)` or `Solver.model_from_checkpoint(path)` in another file
            found = self._project_function(value.func)
            if found is None:
                return False
            return self.for_file(found[0])._returns_evaluated(found[1], depth)
        return self._returns_evaluated(callee, depth)

    def _wraps_evaluated(self, value: cst.BaseExpression, fn: FunctionInfo, order: int) -> bool:
        """`seg_model = build_seg_inference(model, ...)` right after `model.eval()`: a project wrapper
        built around a model already in eval mode (GroupViT's segmentation head runs `self.model`)."""
        value = under_moves(value)  # (`GaussianDiffusionSampler(model, ...).to(device)`)
        if not isinstance(value, cst.Call) or not value.args or value.args[0].keyword is not None:
            return False
        inner = value.args[0].value
        if not isinstance(inner, cst.Name) or dotted_name(value.func) is None:
            return False
        if self._project_function(value.func) is None and self.facts.resolve_callee(value.func, fn) is None:
            # `sampler = GaussianDiffusionSampler(model, ...)`: a project module built around the model,
            # with no Dropout or BatchNorm of its own
            if not self._project_module_without_modes(value, fn, order):
                return False
        return self._last_mode(fn, inner.value, order) == "eval"

    def _project_module_without_modes(self, built: cst.Call, fn: FunctionInfo, order: int) -> bool:
        """`built` constructs a project module class whose own layers have no Dropout or BatchNorm (a
        diffusion sampler around the UNet it is handed)."""
        inst = self.flow.instance_of(built, fn, order)
        return inst is not None and inst.cls is not None and not self.modes.own_layers_have_modes(inst.facts, inst.cls)

    def _wraps_switched_parameter(self, fn: FunctionInfo, model: str, call: CallInfo) -> bool:
        """pytorch-ddpm's `evaluate(sampler, model)`: `model.eval()`, then `sampler(x_T)`, where every
        caller hands in a sampler built around that model (`GaussianDiffusionSampler(net_model, ...)`, maybe
        in DataParallel), a project module with no Dropout or BatchNorm of its own."""
        if model not in fn.params:
            return False
        evaled = {c.receiver for c in fn.calls if c.method == "eval"}  # (a cheap look before asking each mode)
        switched = [p for p in fn.params if p in evaled and p not in (model, "self")
                    and self._last_mode(fn, p, call.context.order) == "eval"]
        sites = self.flow.call_sites(fn) if switched else []
        return bool(sites) and any(all(self._built_around(fn, model, p, site) for site in sites) for p in switched)

    def _built_around(self, fn: FunctionInfo, wrapper: str, inner: str, site: CallInfo) -> bool:
        """At `site`, the argument for `wrapper` is a module built around the argument for `inner`."""
        w, i = (_model_named(self.flow.argument_for(fn, p, site)) for p in (wrapper, inner))
        if w is None or i is None or "." in w:
            return False
        values, pending = [], self.flow.reaching_candidates(w, site.function, site.context.order)
        for _ in range(3):
            rewrapped = []
            for a in pending:
                v = under_moves(a.value)
                if isinstance(v, cst.Call) and v.args and dotted_name(v.args[0].value) == w and _PARALLEL_WRAPPER.search(
                    dotted_name(v.func) or ""
                ):  # `net_sampler = DataParallel(net_sampler)`: the same module, built before
                    rewrapped += self.flow.reaching_candidates(w, site.function, a.context.order)
                else:
                    values.append(v)
            pending = rewrapped
        if not values or pending:
            return False
        for v in values:
            first = v.args[0] if isinstance(v, cst.Call) and v.args else None
            if first is None or first.keyword is not None or dotted_name(first.value) != i:
                return False
            if not self._project_module_without_modes(v, site.function, site.context.order):
                return False
        return True

    def _project_function(self, func: cst.BaseExpression) -> tuple | None:
        """(facts, function) for a function or `Class.method` imported from another file of the project."""
        project = self.training.project
        return project.function_named(self.facts, dotted_name(func)) if project is not None else None

    def _returns_evaluated(self, callee: FunctionInfo, depth: int) -> bool:
        """Some `return` of callee hands back a model it switched to eval mode."""
        evaled = {c.receiver for c in callee.calls if c.method == "eval" and c.receiver}
        for ret, at in callee.returns:
            parts = ret.value.elements if isinstance(ret.value, (cst.Tuple, cst.Dict)) else [ret.value]
            for part in parts:
                if isinstance(part, (cst.BaseElement, cst.BaseDictElement)):
                    part = part.value  # `return model, optimizer` / `return {"model": model}`
                name = dotted_name(under_moves(part))  # (`model.eval(); return model.to(self.device)`: anomalib)
                if name in evaled:
                    return True
                if isinstance(part, cst.Call) and any(dotted_name(a.value) in evaled for a in part.args if a.keyword is None):
                    return True  # `return fabric.setup_module(model)`, `return DDP(model)`: wrapped, mode kept
                held = self.flow.value_of(name, callee, at) if name else None
                inner = held[0] if held is not None else part
                if isinstance(inner, (cst.Call, cst.Subscript)) and self._made_in_eval_mode(inner, callee, depth + 1):
                    return True
                if name and "." not in name and depth < 2 and self._mode_left_by(callee, name, at) == "eval":
                    return True  # `model = load_model(...)` (which evals it), then `model = model.to(device)`, `return data, model`
        return False

    def _mode_left_by(self, fn: FunctionInfo, model: str, at: int) -> str | None:
        """`_last_mode` of a helper that may end up asking about itself (a recursive helper, a method
        switching models of its own object): None while that question is already being answered."""
        if id(fn) in self._asking:
            return None
        self._asking.add(id(fn))
        try:
            return self._last_mode(fn, model, at)
        finally:
            self._asking.discard(id(fn))

    def _model_arg(self, callee: FunctionInfo, call: CallInfo, model: str) -> tuple[bool, str | None]:
        """(whether `call` hands `model` to `callee`, the parameter it arrives as)."""
        for arg in call.node.args:
            if dotted_name(arg.value) == model:
                return True, self._param_bound_to(callee, call, arg)
        return False, None

    def _helper_evals(self, call: CallInfo, model: str) -> bool:
        callee = self.facts.resolve_function(call)
        if callee is None and call.receiver and model.startswith(call.receiver + ".") and call.method:
            # `recipe.setup(cfg)` on `recipe = InferenceRecipe(cfg)`, whose setup does `self.model.eval()`
            inst = self.flow.instance_of(call.node.func.value, call.function, call.context.order)
            method = self._method_of(inst.facts, inst.cls, call.method) if inst is not None and inst.cls is not None else None
            own = "self" + model[len(call.receiver):]
            return method is not None and self.for_file(inst.facts)._last_mode(method, own, 1 << 62) == "eval"
        if callee is None and self.training.project is not None and any(dotted_name(a.value) == model for a in call.node.args):
            # `eval_utils.train_s_evaluator(s_evaluator, ...)` from another file, which trains the model it is
            # handed and then tests it in eval mode, leaving it so (CLUB_impl)
            found = self.training.project.function_named(self.facts, call.dotted)
            if found is not None and not any(d.endswith("contextmanager") for d in found[1].decorators):
                _, param = self._model_arg(found[1], call, model)
                return param is not None and self.for_file(found[0])._leaves_in_eval(found[1], param)
        if callee is None:
            # `with torch.no_grad(), evaluating(self.policy):`, pfrl's context manager from another file,
            # judged below as a context manager of this file would be
            callee = self._evaluating_manager(call)
            if callee is None:
                return False
        if self._evals_listed(callee, call, model):
            return True
        _, param = self._model_arg(callee, call, model)
        if param is not None:  # (`def evaluate_model(model, ...): model.eval(); ...; model.train()` leaves it training)
            if not any(i.method == "eval" and i.receiver == param for i in callee.calls) or id(callee) in self._asking:
                return False
            if any(d.endswith("contextmanager") for d in callee.decorators):
                return True  # `with inference_context(model):` restores the mode only after the block
            return self._mode_left_by(callee, param, 1 << 62) != "train"
        head = model.split(".", 1)[0]
        if callee.cls is None and head != "self" and head not in callee.params and head not in callee.assigned_names():
            # a script's `metrics = decode("dev")`, whose `model.eval()` switches the script's global model
            return self._leaves_in_eval(callee, model)
        if call.receiver == "self" and model.startswith("self."):
            named = self._named_switch_mode(callee, model)
            if named is not None:  # `self.train_mode()` that trains the others but keeps `self.mov_enc.eval()`
                return named == "eval"
            # `self.set_model_mode('eval')`: a trainer method that switches its own models (`self._models[n].eval()`)
            switches = {i.method for i in callee.calls if i.method in ("eval", "train") and _rooted_at_self(i.node.func)}
            if switches == {"eval"}:
                return True
            return "eval" in switches and any(_is_eval_word(a.value) for a in call.node.args)
        return False

    def _leaves_in_eval(self, fn: FunctionInfo, model: str) -> bool:
        """fn calls `model.eval()` itself and leaves the model in eval mode when it returns."""
        return any(i.method == "eval" and i.receiver == model for i in fn.calls) and self._mode_left_by(fn, model, 1 << 62) == "eval"

    def _evals_listed(self, callee: FunctionInfo, call: CallInfo, model: str) -> bool:
        """`set_mode('eval', [program_generator, execution_engine])` (CLEVR-IEP): the model sits in a list
        the helper walks, calling `m.eval()` on each element, on a path the literal arguments reach."""
        listed = next(
            (arg for arg in call.node.args if isinstance(arg.value, (cst.List, cst.Tuple))
             and any(dotted_name(e.value) == model for e in arg.value.elements)),
            None,
        )
        param = self._param_bound_to(callee, call, listed) if listed is not None else None
        if not param or not any(f is callee for f in self.facts.functions):
            return False  # (a helper of this file: its `if mode == 'eval':` tests are read with this file's flow)
        walkers = {t for loop in callee.loops if loop.iter_name == param for t in loop.targets}
        return any(
            i.method == "eval" and i.receiver in walkers and not self.flow.guard_rules_out(i, self.flow, call)
            for i in callee.calls
        )

    def _evaluating_manager(self, call: CallInfo) -> FunctionInfo | None:
        """The context manager of another file of the project that `call` enters, when it switches its
        argument to eval mode (pfrl's `pfrl.utils.evaluating(model)`). Only a `with` item is looked up: a
        context manager called bare runs none of its body, and the lookup parses the other file."""
        if not isinstance(call.node.func, (cst.Name, cst.Attribute)) or call.qualname and call.qualname.startswith("torch."):
            return None
        entered = call.qualname or call.dotted
        if not any(entered in c.context.withs for c in call.function.calls):
            return None
        found = self._project_function(call.node.func)
        if found is None or not any(d.endswith("contextmanager") for d in found[1].decorators):
            return None
        return found[1] if any(i.method == "eval" and i.receiver in found[1].params for i in found[1].calls) else None

    def _walked_containers(self, fn: FunctionInfo) -> dict[int, str]:
        """`_walked_containers(fn)`, worked out once per function."""
        if id(fn) not in self._walked:
            self._walked[id(fn)] = _walked_containers(fn)
        return self._walked[id(fn)]

    def _named_switch_mode(self, callee: FunctionInfo, model: str) -> str | None:
        """The mode a method of the same object leaves `self.<model>` in, when it switches that model (or
        what holds it) by name; None when it does not name it."""
        walked = self._walked_containers(callee)  # (`[enc.eval() for enc in self.encoder]` names every encoder)
        if not any(i.method in ("eval", "train") and (walked.get(id(i.node)) or i.receiver) not in (None, "self")
                   and within(model, walked.get(id(i.node)) or i.receiver) for i in callee.calls):
            return None
        return self._mode_left_by(callee, model, 1 << 62)

    def switched_back_by(self, model: str, call: CallInfo) -> CallInfo | None:
        """The helper call that puts `model` back into training mode after this function's own `.eval()`
        and before `call` (imaginaire's `test()`: `net_G.eval()`, then per batch `self.start_of_iteration()`,
        which calls `self.net_G.train()`): for the message, which otherwise would ask for the eval() it has."""
        fn, at = call.function, call.context.order
        names = {model, self.training.canonical(model, fn) or model}
        switched = [c.context.order for c in fn.calls if c.method == "eval" and c.context.order < at and c.receiver
                    and (c.receiver in names or self.training.canonical(c.receiver, fn) in names)]
        if not switched:
            return None
        for c in fn.calls:
            if max(switched) < c.context.order < at:
                callee = self._callee(c)
                if callee is not None and any(self._helper_trains(callee, c, name) for name in names):
                    return c
        return None

    def _callee(self, call: CallInfo) -> FunctionInfo | None:
        """The function a call runs, as `_last_mode` and `switched_back_by` follow it: a function of this
        file, a method of an instance built here (`trainer.train_epoch(epoch)`), or a module function of
        another file of the project (HRNet's `function.train(config, loader, model, ...)` before
        `function.validate(...)`)."""
        found = self.facts.resolve_function(call) or self.training.method_of_local_instance(call)
        project = self.training.project
        if found is None and project is not None and call.dotted and call.dotted.count(".") == 1 and (
            call.dotted.split(".", 1)[0] in self.facts.imported
        ):
            hit = project.function_named(self.facts, call.dotted)
            found = hit[1] if hit is not None and hit[1].cls is None else None
        return found

    def _helper_trains(self, callee: FunctionInfo, call: CallInfo, model: str, depth: int = 0) -> bool:
        """Whether `train(model, linear_classifier, ...)` calls `.train()` on what `model` is inside it
        (not on the linear head it trains beside a frozen backbone); `self.x.train()` in a method counts."""
        passed, param = self._model_arg(callee, call, model)
        if passed:
            return param is not None and _trains_receiver(callee, param)
        receiver = call.receiver
        if receiver and receiver != "self" and "." not in receiver and model.startswith(receiver + "."):
            # `trainer.train_epoch(epoch)` before `trainer.test_epoch(epoch)`: `self.model.train()` inside
            # is `trainer.model` here
            inner = "self" + model[len(receiver):]
            named = self._named_switch_mode(callee, inner)
            return named == "train" if named is not None else _trains_receiver(callee, inner)
        if model.startswith("self.") and call.receiver == "self":
            named = self._named_switch_mode(callee, model)
            if named is not None:
                return named == "train"
        if _trains_receiver(callee, model):
            return True  # the same global or `self.` model: `def train(epoch): model.train() ...`
        # (`self.train()` switches every child; `self.base_model.train()` leaves `self.semantic_model` alone)
        if model.startswith("self.") and call.receiver == "self" and any(
            i.method == "train" and not _is_false_arg(i.node) and i.receiver == "self" for i in callee.calls
        ):
            return True
        # BackdoorBench's `self.train_one_epoch(...)`, whose `self.train_one_batch(x, y)` calls `self.model.train()`
        # (and nothing in the epoch method switches the model back)
        if depth < 2 and model.startswith("self.") and call.receiver == "self" and not any(
            i.method in ("eval", "train") for i in callee.calls
        ):
            return any(
                inner_callee is not None and inner_callee is not callee and self._helper_trains(inner_callee, inner, model, depth + 1)
                for inner in callee.calls if inner.receiver == "self" and inner.method
                for inner_callee in (self._callee(inner),)
            )
        return False

    def _leaves_modes_to_caller(self, helper: FunctionInfo, by_name: bool = True) -> bool:
        """A helper that does not set train/eval mode itself (and, `by_name`, is not named as an
        evaluation pass of its own, nor decorated as one): the mode its caller set is what its model
        call sees. (It may still disable gradients inside: see `_sets_grad_mode`.)"""
        if by_name and any(is_no_grad_name(d) for d in helper.decorators):
            return False  # an evaluation pass of its own, judged where it is
        if by_name and _EVAL_NAME.search(helper.name) and not self._shared_with_training(helper):
            return False  # (Autoformer's `self._predict(batch)`, which `train()` calls too, is a forward wrapper)
        if any(self._evaluating_manager(c) is not None for c in helper.calls):
            return False  # `with torch.no_grad(), evaluating(self.policy):` (pfrl): the helper sets the mode itself
        return not any(c.method in ("eval", "train") for c in helper.calls)

    @staticmethod
    def _sets_grad_mode(helper: FunctionInfo) -> bool:
        """`def net_process(model, x): with torch.no_grad(): return model(x)`: gradients are off inside."""
        return any(is_no_grad_name(d) for d in helper.decorators) or any(
            any(is_no_grad_name(w) for w in c.context.withs) for c in helper.calls
        )

    def _runs_param_without_grad(self, helper: FunctionInfo, param: str) -> bool:
        """Every call of `param` in the helper is under no_grad (or the helper is decorated): a `no_grad`
        block around some other model in it (TRL's reference-model logits) leaves this one's graph on."""
        runs = [c for c in helper.calls if c.dotted == param]
        # (`if model.training: out = model(x) else: with torch.no_grad(): out = model(x)`: DPR's forward pass)
        chosen = [c for c in runs if not any(f"{param}.training" in names_in(t) for t in c.context.conditions)]
        return bool(runs) and all(_no_grad_at(helper, c) for c in chosen)

    def _param_bound_to(self, helper: FunctionInfo, call: CallInfo, arg: cst.Arg) -> str | None:
        if arg.keyword is not None:
            return arg.keyword.value
        params = [p for p in helper.params if p not in ("self", "cls")]
        positional = [a for a in call.node.args if a.keyword is None and not a.star]
        index = next((i for i, a in enumerate(positional) if a is arg), None)
        return params[index] if index is not None and index < len(params) else None

    def _probe_of_fresh_model(self, call: CallInfo) -> bool:
        """The model is built in this function from a project class and run once with no weights loaded
        into it: a check of the shapes it hands back, not an evaluation of a trained model."""
        model = call.dotted or ""
        if not model.isidentifier():
            return False
        fn = call.function
        built = [a.value for a in fn.assigns if a.targets == (model,) and a.context.order < call.context.order]
        if len(built) != 1 or not isinstance(built[0], cst.Call):
            return False
        found = lookup_class(self.training.project, self.facts, dotted_name(built[0].func))
        if found is None or not self.training.is_module_class(found[0], found[1]):
            return False  # (`single_scale = MscEvalV0(...)`: an evaluator object handed the model, not a model)
        if _weights_loaded(fn, model) or any(c.receiver == model and c.method in ("train", "fit") for c in fn.calls):
            return False  # weights loaded (into it, or by `torch.load` anywhere in the function), or trained
        return self._outputs_read_for_shapes_only(call)

    def _outputs_read_for_shapes_only(self, call: CallInfo) -> bool:
        """Only the shapes of what the run hands back are read (`print(x0.shape)`, `if outputs.shape ==
        (b, n_classes):`), not the values (a density's sum)."""
        fn = call.function
        outputs = {t for a in fn.assigns if a.context.order >= call.context.order and a.value is not None
                   and any(n is call.node for n in calls_within(a.value)) for t in a.targets}
        names = [t for t in outputs if t.isidentifier()]
        if not names or fn.node is None:
            return False  # (`self.fake_B = G(x)`: an attribute others read)
        body = self.facts.module.code_for_node(fn.node)
        at = body.find(self.facts.module.code_for_node(call.node))
        after = body[at:] if at >= 0 else ""
        return bool(after) and all(
            len(re.findall(rf"\b{re.escape(t)}\b", after)) == len(re.findall(rf"\b{re.escape(t)}\.(shape|size|dim)\b", after))
            for t in names
        )

    def _runs_per_batch(self, call: CallInfo) -> bool:
        """A model call over data: inside a loop, on data passed in, or in a helper called from loops.

        `def test(): net = Net(); print(net(torch.randn(1, 3, 32, 32)).shape)` is a shape
        check, not an evaluation pass.
        """
        if self.iterates_its_model(call):
            return True  # `sampler(torch.randn(b, 3, 32, 32))`: a diffusion sampler denoising noise step by step
        args = [a.value for a in call.node.args if a.keyword is None]
        if args and all(self.dummy_input(a, call.function) for a in args):
            return False  # `net(torch.zeros((1,) + shape))`: a probe of the output shape, not data
        if not call.context.loops and (self._probe_of_fresh_model(call) or self._outputs_read_for_shapes_only(call)):
            # `def test(data, args): net = test_Net3(args); y = net(data); print(y.shape)`; a trained model's
            # output checked for its shape on one batch (`if outputs.shape == (b, n_classes):`)
            return False
        if any(p not in ("self", "cls") for p in call.function.params):
            return True  # over what the caller passes in (a full-graph GNN batch)
        if any(_DATA_ITERABLE.search(_loop_source(loop)) for loop in call.context.loops):
            return True  # `def test(): for x, y in test_loader: model(x)`, `in enumerate(data_iterator.iterate())`
        if call.context.loops and call.function.is_module:
            return True
        if call.context.loops and _environment_rollout(call):
            return True  # an agent acting step by step in an environment (`env.step(actions)`), each on a new observation
        sites = self.flow.call_sites(call.function)
        if bool(sites) and all(s.context.loops for s in sites):
            return True
        if not sites and self.called_in_loops_elsewhere(call.function):
            return True  # pix2pix's `BaseModel.test()`, which test.py calls once per batch
        # `def test(): output = model(features, adj)`: a full-graph evaluation of the trained global model,
        # unlike a smoke test that builds its own model and feeds it `torch.randn(...)`
        model = (call.dotted or "").split(".", 1)[0]
        # (`gen = self.model.generator` is an alias of a trained model, not one built for a smoke test)
        built_here = any(model in a.targets and not isinstance(a.value, cst.Attribute) for a in call.function.assigns)
        # (built here but given trained weights, `model = EnhancedFCN(); model.load_state_dict(torch.load(path))`,
        # it is the trained model, predicting a whole section in one call)
        built_here = built_here and not _weights_loaded(call.function, model)
        samples = all(
            is_none(a.value) or isinstance(a.value, (cst.Integer, cst.Float)) or _drawn_in_loop(a.value, call)
            for a in call.node.args
        )
        if call.context.loops and not built_here and samples and _EVAL_NAME.search(call.function.name):
            # `def eval_step(self): for i in range(n): x_fake.append(gen())`: samples for FID; or
            # `while len(imgs) < n: z = self.zdist.sample((b,)); imgs += gen(z)` (an inception score)
            return True
        if call.context.loops and not built_here and any(_sliced_per_iteration(a.value, call) for a in call.node.args):
            # `for i in range(n_traces): x = torch.from_numpy(seis_norm[i:i+1]).to(device); pred = model(x)`:
            # the trained model over the data, one slice per iteration
            return True
        random_input = any(
            isinstance(a.value, cst.Call) and (self.facts.qualify(a.value.func) or "").startswith("torch.")
            for a in call.node.args
        )
        return (
            bool(sites) and not call.context.loops and not built_here and not random_input and not call.function.params
            and not _one_training_batch(call.function)
        )

    def _modes_left_to_callers_elsewhere(self, run: ModelRun) -> ModelRun:
        """A run that counts as per batch only because other files call its method in loops (pix2pix's
        `model.test()`): judged for gradients only, since those callers (a test script's `model.eval()`,
        an `opt.is_train` the wrapper reads) set the modes out of sight."""
        call = run.call
        if not run.has_modes or call.context.loops or self.flow.call_sites(call.function):
            return run
        if any(p not in ("self", "cls") for p in call.function.params) or not self.called_in_loops_elsewhere(call.function):
            return run
        return replace(run, has_modes=False)

    def called_in_loops_elsewhere(self, fn: FunctionInfo, evaluating: bool = False) -> bool:
        """A method running the object's own `forward()` that other files of the project call on an object
        (`model.test()`), each time inside a loop and with gradients on (`for data in dataset:
        model.set_input(data); model.test()`); with `evaluating`, a loop that runs no backward and no method
        named for training. (A caller that runs a project object's method is judged where it calls.)"""
        project = self.training.project
        if project is None or fn.cls is None or not any(c.dotted == "self.forward" for c in fn.calls):
            return False  # (only pix2pix's idiom: a model wrapper whose method runs its own `forward()`)
        sites = project.outside_callers(self.facts, fn.name)
        return bool(sites) and all(
            site.context.loops and not any(is_no_grad_name(w) for w in site.context.withs)
            and not any(is_no_grad_name(d) for d in site.function.decorators)
            and not (evaluating and any(
                c.method == "backward" or c.method == "step" or _TRAINING_METHOD.match(c.method or "")
                for c in site.context.loops[-1].calls
            )) for _, site in sites
        )

    @cached_property
    def _frozen(self) -> set[str]:
        """Models whose parameters are frozen in this file: `model.requires_grad_(False)`, or
        `for p in model.parameters(): p.requires_grad = False`. Running them on plain inputs builds no graph.
        (LLMs-from-scratch freezes its GPT, then thaws the last block and trains a new head: a model
        that anything makes trainable again, or that an optimizer updates, is no frozen model.)"""
        frozen = self._requires_grad_set("False")
        thawed = self._requires_grad_set("True") | {
            t.removesuffix(".requires_grad") for a in self.facts.assigns for t in a.targets
            if t.endswith(".requires_grad") and dotted_name(a.value) == "True"
        }
        return {m for m in frozen if not any(within(t, m) for t in thawed | self._optimized_models)}

    def _frozen_by_its_loader(self, run: ModelRun) -> bool:
        """`self.model = self.__load_model()` where the loader freezes what it returns (DINO's video
        generation: `for p in model.parameters(): p.requires_grad = False`)."""
        cls = run.call.function.self_class()
        if cls is None or not run.model.startswith("self.") or run.model.count(".") != 1:
            return False
        loaders = [
            a.value for m in cls.methods.values() for a in m.assigns
            if a.targets == (run.model,) and isinstance(a.value, cst.Call)
        ]
        if not loaders:
            return False
        for value in loaders:
            loader = self.facts.resolve_callee(value.func, run.call.function)
            returned = [ret.value for ret, _ in loader.returns] if loader is not None else []
            if not returned or not all(isinstance(v, cst.Name) and self._frozen_in(loader, v.value, 1 << 62) for v in returned):
                return False
        return True

    def _frozen_in(self, fn: FunctionInfo, model: str, before: int) -> bool:
        """fn freezes `model` before `before`, with nothing thawing it in between."""
        last = None
        for c in fn.calls:
            if c.method == "requires_grad_" and c.receiver == model and c.context.order < before and not c.context.branches:
                last = max(last or (0, ""), (c.context.order, "False" if _is_false_arg(c.node) else "True"))
            elif self._library_freeze(c) and c.receiver == model and c.context.order < before and not c.context.branches:
                last = max(last or (0, ""), (c.context.order, "False"))
        for loop in fn.loops:
            if loop.order >= before or loop.condition_depth:
                continue
            for flag in ("False", "True"):
                if model in self._parameters_set_by(loop, flag):
                    last = max(last or (0, ""), (loop.order, flag))
        return last is not None and last[1] == "False"

    def _library_freeze(self, c: CallInfo) -> bool:
        """`model.freeze()` where neither the model's class nor (for a model of unknown class) the project
        defines `freeze`: Lightning's, which turns off `requires_grad` of every parameter (and switches to
        eval mode)."""
        project = self.training.project
        if c.method != "freeze" or not c.receiver or c.node.args or project is None:
            return False
        inst = self.flow.instance_of(cst.parse_expression(c.receiver), c.function, c.context.order)
        if inst is not None and inst.cls is not None:
            return self._method_of(inst.facts, inst.cls, "freeze") is None and self.training.is_module_class(inst.facts, inst.cls)
        return not project.methods_named(self.facts, "freeze")

    def _parameters_set_by(self, loop, flag: str) -> set[str]:
        """The model whose parameters `loop` sets `requires_grad = flag` on, every one of them."""
        it = loop.node.iter if isinstance(loop.node, cst.For) else None
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in ("parameters", "named_parameters")):
            return set()
        # (every parameter: GPT-NeoX's `if "soft_embedding" not in name: param.requires_grad = False`
        # freezes all but a soft prompt, which still trains and builds a graph)
        if any(t.endswith(".requires_grad") and dotted_name(a.value) == flag
               and (flag == "True" or len(a.context.conditions) == loop.condition_depth)
               for a in loop.assigns for t in a.targets):
            return {dotted_name(it.func.value)} - {None}
        return set()

    def _requires_grad_set(self, flag: str) -> set[str]:
        """Models given `requires_grad_(flag)`, or whose parameters get `p.requires_grad = flag` in a loop."""
        found = {
            c.receiver for c in self.facts.calls
            if c.method == "requires_grad_" and c.receiver and _is_false_arg(c.node) == (flag == "False")
            or flag == "False" and self._library_freeze(c)
        }
        for loop in self.facts.loops:
            found |= self._parameters_set_by(loop, flag)
        return found

    @cached_property
    def _optimized_models(self) -> set[str]:
        """Models whose parameters an optimizer of this file updates (`Adam(gnn.parameters())`)."""
        return set().union(*self.training.optimizer_models.values())

    def forward_without_grad(self, run: ModelRun) -> bool:
        """The model's own class runs its forward under no_grad (CutLER's `ViTFeat.forward`), so calling
        it builds no graph, wherever it is called from."""
        forwards = self._forwards_of(run)
        return bool(forwards) and all(_all_work_without_grad(method) for facts, method in forwards)

    def forward_needs_grad(self, run: ModelRun) -> bool:
        """The model's forward takes gradients itself (an energy model unrolling `higher`'s differentiable
        optimizer, `torch.autograd.grad` of its own output): no_grad would break it. Also through a method
        the forward hands the work to (Meta-Transfer Learning's `self.meta_forward(...)`, which adapts the
        base learner with `torch.autograd.grad`)."""
        if self._attacks_through_helper(run.call):
            return True
        return any(
            _takes_gradients(method) or any(
                _takes_gradients(method.cls.methods[c.method]) for c in method.calls
                if c.receiver == "self" and method.cls is not None and c.method in method.cls.methods and c.method != method.name
            ) or any(_takes_gradients(sub) for sub in self._submodule_forwards(facts, method))
            for facts, method in self._forwards_of(run)
        )

    def _submodule_forwards(self, facts, forward: FunctionInfo) -> list[FunctionInfo]:
        """The forwards of the submodules a forward runs (`self.encoder(x)` with `self.encoder =
        OTEncoder(...)`, whose forward solves for the code by gradient descent), as far as they are known."""
        judge = self.for_file(facts)
        own = forward.cls.methods if forward.cls is not None else {}
        found = []
        for c in forward.calls:
            if not (c.dotted or "").startswith("self.") or c.dotted.count(".") != 1 or c.method in own:
                continue
            inst = judge.flow.instance_of(c.node.func, forward, c.context.order)
            if inst is not None and inst.cls is not None:
                sub = judge._method_and_file(inst.facts, inst.cls, "forward")
                if sub is not None and sub[1] is not forward:
                    found.append(sub[1])
        return found

    def _attacks_through_helper(self, call: CallInfo) -> bool:
        """`fgsm_attack(model, images, labels, eps)`, a helper of this file or the project's that takes
        gradients of the model's loss (with respect to its input: `torch.autograd.grad(loss, x)`) and steps
        nothing: an adversarial attack, which needs the graph."""
        helper = self.facts.resolve_function(call)
        if helper is None and call.dotted and "." not in call.dotted:
            found = self._project_function(call.node.func)
            helper = found[1] if found is not None else None
        return helper is not None and _takes_gradients(helper) and not any(c.method == "step" for c in helper.calls)

    def _forwards_of(self, run: ModelRun) -> list:
        """(facts, forward) of every class the run's model may be (both sides of `a if big else b`), or
        [] when any of them is unknown."""
        model = run.model or ""
        if not model or not all(part.isidentifier() for part in model.split(".")):
            return []
        fn, order = run.call.function, run.call.context.order
        held = self.flow.value_of(model, fn, order)
        if held is not None and isinstance(held[0], cst.IfExp):  # `backbone = self.base if big else self.small`
            choices = [(held[0].body, held[1], held[2]), (held[0].orelse, held[1], held[2])]
        else:
            choices = [(cst.parse_expression(model), fn, order)]
        found = []
        for expr, where, at in choices:
            inst = self.flow.instance_of(expr, where, at)
            forward = self._method_and_file(inst.facts, inst.cls, "forward") if inst is not None and inst.cls is not None else None
            if forward is None:
                return []
            found.append(forward)  # (with the file of the class that defines it: a base may sit elsewhere)
        return found

    def frozen_model(self, run: ModelRun) -> bool:
        """`run.model` is frozen here, or arrives as a parameter that every caller in this file fills
        with a frozen model (EfficientDet's `evaluate_coco(..., model)` after `model.requires_grad_(False)`);
        or the pass itself freezes it before the run (crnn's `val`, whose training loop thaws it again)."""
        if self._frozen_in(run.call.function, run.model, run.call.context.order):
            return True
        if self._frozen_by_its_loader(run):
            return True
        if not self._frozen:
            return False
        if run.model in self._frozen:
            return True
        fn = run.call.function
        if run.model not in fn.params:
            return False
        sites = self.flow.call_sites(fn)
        return bool(sites) and all(_model_named(self.flow.argument_for(fn, run.model, s)) in self._frozen for s in sites)

    def switched_to_eval_here(self, run: ModelRun) -> bool:
        """The pass itself calls `model.eval()` before running it: an evaluation, not a helper whose
        output feeds a caller's loss."""
        fn = run.call.function
        if any(self.dummy_input(a.value, fn) for a in run.call.node.args):
            return False  # a warm-up or sample grid on `torch.zeros(...)` / `torch.randn(...)`: one graph, once
        return self._last_mode(fn, run.model, run.call.context.order) == "eval" and any(
            c.method == "eval" and c.receiver and within(run.model, c.receiver) for c in fn.calls
        )

    def dummy_input(self, value: cst.BaseExpression, fn: FunctionInfo, depth: int = 0, name: str | None = None) -> bool:
        """`torch.zeros(1, 3, h, w).to(device)`, `Variable(torch.randn(b, 100)).cuda()`,
        `self.to_var(torch.randn(...))`, or a name only ever assigned such values (`x = x.to(device)`
        after `x = torch.zeros(...)` keeps it one)."""
        if isinstance(value, cst.Call):
            q = self.facts.qualify(value.func) or ""
            if q.startswith("torch.") and q.rsplit(".", 1)[-1] in _FACTORIES:
                return True
            if q in ("torch.cat", "torch.stack", "torch.concat") and value.args and isinstance(value.args[0].value, (cst.List, cst.Tuple)):
                # `torch.cat([im, mask], dim=1)` of dummies made above
                parts = [e.value for e in value.args[0].value.elements]
                return bool(parts) and all(self.dummy_input(p, fn, depth, name) for p in parts)
            inner = [value.func.value] if isinstance(value.func, cst.Attribute) else []
            inner += [value.args[0].value] if value.args else []  # `Variable(...)`, `self.get_variable(...)`
            return any(self.dummy_input(v, fn, depth, name) for v in inner)
        if isinstance(value, cst.Subscript):  # `y[:, :-1]` of a dummy `y`
            return self.dummy_input(value.value, fn, depth, name)
        if isinstance(value, cst.Name) and depth > 0 and value.value == name:
            return True  # the name moved or cast: what it held before
        if isinstance(value, cst.Name) and (depth == 0 or depth < 3 and value.value != name):
            # (one level further for a name inside a joined input: `coarse_out = coarse(torch.cat([im, mask]))`)
            # (or unpacked from a call on dummies: `masks, images, up_layers = enc.forward(mask, img)`)
            assigned = [a.value for a in fn.assigns if a.targets == (value.value,) or (
                value.value in a.targets and isinstance(a.value, cst.Call))]
            # (at least one of them made from nothing: a loop variable only ever moved is data)
            return any(self.dummy_input(v, fn, depth + 1) for v in assigned) and all(
                self.dummy_input(v, fn, depth + 1, value.value) for v in assigned
            )
        return False

    def called_per_batch_in_evaluation(self, fn: FunctionInfo, depth: int = 0) -> bool:
        """`eval_batch(model, image, target)` called from a validation loop: each call is one batch
        of an evaluation (unlike PPO's `evaluate_actions`, called from an update that steps)."""
        sites = self.sites_anywhere(fn, through_bases=True)
        if not sites and fn.cls is not None:  # `sess.inf_batch_test('test', batch)` on `sess = Session()` here
            sites = [(self, s) for s in self.flow.instance_call_sites(fn)]
        if not sites and fn.cls is not None and _EVAL_STEP_HOOK.match(fn.name):
            return True  # a trainer's `prediction_step(model, inputs)`: the framework's evaluation loop calls it per batch
        if not sites and self.called_in_loops_elsewhere(fn, evaluating=True):
            return True  # pix2pix's `model.test()`, once per batch of test.py
        return bool(sites) and all(judge._per_batch_site(s, depth) for judge, s in sites)

    def _per_batch_site(self, site: CallInfo, depth: int) -> bool:
        """The call runs once per batch of a loop that trains nothing on its way (a validation loop in a
        function that also trains counts; PPO's update loop steps, so it does not). A loop that dispatches
        by kind, `if kind == "train": self.train_batch() elif kind == "valid": self.valid_batch()`, trains
        only on the other branch. Through plain calls, up to the loop: `valid_batch` -> `valid_step`."""
        if site.context.loops:
            return not any(
                e.kind == "backward" and not exclusive_branches(self._branches_at(e.site), site.context.branches)
                for e in self.training.loop_events(site.context.loops[-1])
            )
        if site.function.cls is not None and _EVAL_STEP_HOOK.match(site.function.name):
            return True  # (or a Lightning `validation_step`, which the framework calls once per batch)
        if id(site.node) in self.loader_comprehension_calls(site.function):
            return True  # `[self.evaluate_step(ids) for ids in eval_loader]`
        return depth < 3 and not site.function.is_module and self.called_per_batch_in_evaluation(site.function, depth + 1)

    def _branches_at(self, node: cst.CSTNode) -> tuple:
        info = self.facts.call_info(node) if isinstance(node, cst.Call) else None
        return info.context.branches if info is not None else ()

    def _pipeline_component(self, call: CallInfo, model: str) -> bool:
        """`pipe.unet`, `model.text_encoder` or `self.unet = pipeline.unet` of an object that also hands out a
        `.scheduler` or `.tokenizer`: a part of a diffusers pipeline, whose UNet, VAE and CLIP text encoder
        hold no BatchNorm and no dropout unless configured (0.0 by default), so the mode changes nothing."""
        if model.rsplit(".", 1)[-1] not in _PIPELINE_PARTS:
            return False
        fn, name = call.function, model
        if model.startswith("self.") and model.count(".") == 1:
            held = self.flow.value_of(model, fn, call.context.order)
            if held is None or dotted_name(held[0]) is None:
                return False
            name, fn = dotted_name(held[0]), held[1]
        head, _, part = name.rpartition(".")
        if not head or part not in _PIPELINE_PARTS or fn.node is None:
            return False
        read = names_in(fn.node)
        return f"{head}.scheduler" in read or f"{head}.tokenizer" in read

    def may_change_with_mode(self, call: CallInfo, model: str) -> bool:
        """False only when the model's class is known and has no Dropout, BatchNorm or `self.training` use,
        or when the name holds plain code."""
        if self.training.project is not None and self.training.project.writes_no_modes(self.facts):
            return False  # rlpyt, mbrl-lib: nothing anywhere in the project acts on the mode
        if model.isidentifier():  # d2l's `net, loss = linreg, squared_loss`, read by a closure `eval_loss()`
            scope, at = call.function, call.context.order
            while scope.parent is not None and model not in scope.params and model not in scope.assigned_names():
                scope, at = scope.parent, scope.defined_at
            if self._plain_function_at(model, scope, at):
                return False
        if self._pipeline_component(call, model):
            return False
        expr = cst.parse_expression(model)
        made = self.flow.origin(expr, call.function, call.context.order)
        if made is not None and made.qualname() in _TRACED:
            return False  # a traced graph keeps the mode it was traced in; eval() now changes nothing
        if model in call.function.params and _SCRIPTED.search(annotation_of(call.function, model) or ""):
            return False  # `model: torch.jit.ScriptModule`: an exported graph, handed in
        handed = self._class_handed_to_factory(call, model, made)
        if handed is not None:  # `model = load_model(LSTMModel)`, whose `model = model_class()` builds what it is handed
            return self.modes.class_has_mode_layers(*handed)
        if not self._forward_may_change(expr, call, model):
            return False  # `model(x)` of a project class whose forward reaches no mode layer (a quantizer only `encode` runs)
        declared = self._declared_constructions(expr, call.function, call.context.order)
        if declared:  # `LightGCN(...).to(device)`, `GCN(..., dropout=0.5)` on every path: the arguments say what they hold
            return any(self.modes._call_has(o.facts, built, o.function, 0) for o, built in declared)
        inst = self.flow.instance_of(expr, call.function, call.context.order)
        said = self._called_method_has_modes(inst, call, model) if inst is not None else None
        if said is not None:
            return said
        if inst is not None and _stands_for_subclasses(inst):
            return True  # `net: BaseNet`, whose forward raises NotImplementedError: a subclass does the work
        if inst is not None:
            return self.modes.instance_has_mode_layers(inst)
        # `if args.type == "transformer": model = Transformer(c) elif ...: model = MLP(c)`: every choice
        choices = self.flow.instances_of(expr, call.function, call.context.order)
        if choices is None:
            held = self._handed_to_holder(call, model)
            if held:  # `encoder = context.encoder` with `context: NetworkContext`, built as `NetworkContext(encoder, ...)`
                self._asking.add(id(call.node))  # (a holder handed its own holder's model: no loops)
                try:
                    return any(judge.may_change_with_mode(site, name) for judge, name, site in held)
                finally:
                    self._asking.discard(id(call.node))
            if self._known_by_its_methods(model) is False:
                return False
            picked = self._classes_picked_from_package(made)
            if picked:  # `getattr(models, config.model)(...)`: whichever class the project's package exports
                return any(self.modes.class_has_mode_layers(f, c) for f, c in picked)
            named = self._classes_named_like(made)
            if named:  # `from model import Net` that no file of the project answers: every `class Net` it has
                return any(self.modes.class_has_mode_layers(f, c) for f, c in named)
            # An actor network of unknown class, rolled out in an environment (ElegantRL's
            # `get_rewards_and_steps(env, actor)`): policy MLPs rarely hold Dropout or BatchNorm, and
            # without its class there is no sign this one does (a decision transformer called `model`
            # is still judged)
            if not (_ACTOR_NAME.search(model.rsplit(".", 1)[-1]) and _environment_rollout(call)):
                return True
            # (unless a path whose class is known says otherwise: CORL's `eval_actor(env, actor, ...)` is handed
            # `actor = TanhGaussianPolicy(...)`, or `trainer.actor` after a load, and that policy's `act` picks
            # its action by `self.training`)
            known = self.flow.instances_of(expr, call.function, call.context.order, partial=True)
            return any(self._instance_may_change(i, call, model) for i in known or ())
        # (`model.forward_x(batch)` on whichever model `load_model` returns: for each class that may arrive, only
        # what that method runs counts; ConvE's embedding path skips its dropout)
        return any(self._instance_may_change(i, call, model) for i in choices)

    def _instance_may_change(self, inst, call: CallInfo, model: str) -> bool:
        """Whether the run of `model` computes differently in eval mode when the model is `inst`: only what the
        called method runs counts (the forward, when that is what runs)."""
        said = self._called_method_has_modes(inst, call, model)
        return said if said is not None else self.modes.instance_has_mode_layers(inst)

    def _classes_picked_from_package(self, made) -> list:
        """For `getattr(models, name)(...)` with `import models` a package of the project: the module classes
        its `__init__` defines or imports, one of which the string picks (empty when it also exports a
        function, or something from outside the project). Also for the same built by
        a project factory it is handed to (pytorch-template's `config.init_obj("arch", module_arch)`), where
        the config names a class (its top-level functions are helpers, not what the config picks)."""
        project = self.training.project
        if made is not None and made.qualname() in MODEL_WRAPPERS and made.call.args:  # `nn.DataParallel(model)`
            made = self.flow.flow_for(made.facts).origin(made.call.args[0].value, made.function, made.order)
        built = made.call if made is not None else None
        while isinstance(built, cst.Call) and isinstance(built.func, cst.Attribute) and isinstance(built.func.value, cst.Call):
            built = built.func.value  # `getattr(models, name)(path).cuda()`
        func = built.func if isinstance(built, cst.Call) else None
        if project is None or func is None:
            return []
        functions_ok = False
        if isinstance(func, cst.Call) and dotted_name(func.func) == "getattr" and func.args:
            package = dotted_name(func.args[0].value)
        else:  # `config.init_obj("arch", module_arch)`: a project factory that builds `getattr(module, name)(...)`
            package = self._module_handed_to_factory(made.facts, made.call)
            functions_ok = True
        imported = made.facts.imported.get(package or "")
        if imported is None or imported.name is not None or made.facts.path == "<string>":
            return []  # (`import models`, not `from torchvision import models`)
        facts = project.module_facts(Path(made.facts.path), imported.module)
        if facts is None:
            return []
        if facts.toplevel_functions and not functions_ok:
            return []  # (a factory the string may pick as well)
        found = [(facts, cls) for cls in facts.all_classes]
        for local, imported_there in facts.imported.items():
            if imported_there.name is None:
                continue  # `import torch`: a module, not something a model name picks
            hit = project.resolve_imported(facts, local)
            if (hit is None or not isinstance(hit[1], ClassInfo)) and functions_ok:
                continue  # (`from torch import nn` in the model's own module: a helper, not a choice of the config)
            if hit is None or not isinstance(hit[1], ClassInfo):
                return []  # a library class or a function: which it holds is not known here
            found.append(hit)
        return [(f, c) for f, c in found if self.training.is_module_class(f, c)]

    def _module_handed_to_factory(self, facts, built: cst.Call) -> str | None:
        """The module argument of `config.init_obj("arch", module_arch)` when every project method or function
        of that name returns `getattr(<parameter>, <name>)(...)` of the parameter this argument fills."""
        name = dotted_name(built.func) or ""
        site = facts.call_info(built)
        found = self.training.project.methods_named(facts, name.rsplit(".", 1)[-1]) if "." in name and site else []
        if not found:
            return None
        handed = None
        for there, fn in found:
            param = _getattr_built_parameter(fn)
            if param is None:
                return None
            arg = self.flow.flow_for(there).argument_for(fn, param, site)
            module = dotted_name(arg) if arg is not None else None
            if module is None or handed not in (None, module):
                return None
            handed = module
        return handed

    def _class_handed_to_factory(self, call: CallInfo, model: str, made) -> tuple | None:
        """(facts, class) for `model = load_model(LSTMModel)` where the project's `load_model(model_class,
        path)` builds `model_class()`: the class this call hands in. None when it is anything else."""
        project = self.training.project
        if project is None or made is None or not model.isidentifier() or not isinstance(made.call.func, cst.Name):
            return None
        param = made.call.func.value
        if param not in made.function.params:
            return None
        held = self.flow.value_of(model, call.function, call.context.order)
        value = held[0] if held is not None else None
        site = self.facts.call_info(under_moves(value)) if isinstance(value, cst.BaseExpression) else None
        if site is None or made.function is site.function:
            return None
        arg = self.flow.argument_for(made.function, param, site)
        found = lookup_class(project, self.facts, dotted_name(arg)) if arg is not None else None
        if found is None or not self.training.is_module_class(*found):
            return None
        return found

    def _classes_named_like(self, made) -> list:
        """The project's module classes named as an imported class whose import cannot be followed
        (`import model; from model import Net` run with a `PYTHONPATH` we cannot see): [] unless every
        class of that name in the project is an nn.Module."""
        project = self.training.project
        func = made.call.func if made is not None else None
        if project is None or not isinstance(func, cst.Name) or func.value not in made.facts.imported:
            return []
        if lookup_class(project, made.facts, func.value) is not None:
            return []
        named = project.classes_named(made.facts, func.value)
        return named if named and all(self.training.is_module_class(f, c) for f, c in named) else []

    def _forward_may_change(self, expr: cst.BaseExpression, call: CallInfo, model: str) -> bool:
        """For a run of the model itself (`model(x)`, `model.forward(x)`) of a known project class: whether
        what its `forward` reaches holds a mode layer. True when the class or its forward is not known."""
        if not (call.dotted == model or call.receiver == model and call.method == "forward"):
            return True
        inst = self.flow.instance_of(expr, call.function, call.context.order)
        if inst is None or inst.cls is None or inst.declared or _stands_for_subclasses(inst):
            return True  # (`net: BaseNet`: a type hint, which a subclass with other layers may fill)
        forward = inst.cls.methods.get("forward")
        return forward is None or self.modes.method_has_modes(inst.facts, inst.cls, forward)

    def _called_method_has_modes(self, inst, call: CallInfo, model: str) -> bool | None:
        """`model.inference(x, loader)` on an instance of a known class: whether that method runs layers that
        change with the mode (only what it runs counts); None for the model's forward, or a method the class
        does not define."""
        if inst.cls is None or call.method in (None, "forward") or call.receiver != model:
            return None
        method = self._method_of(inst.facts, inst.cls, call.method)
        if method is None or inst.declared and _abstract_method(inst.facts, method, bare_body=False):
            return None  # (`model: AbstractModel` running `predict`, which only its subclasses write)
        return self.modes.method_has_modes(inst.facts, inst.cls, method)

    def _known_by_its_methods(self, model: str) -> bool | None:
        """Whether a model of unknown class (`rnn = torch.load('char-rnn.pt')`) may hold mode layers, judged
        by the project's module classes that define every method of its own the file calls on it
        (`rnn.initHidden()`); None when it calls none, or no such class is found."""
        project = self.training.project
        names = {c.method for c in self.facts.calls if c.receiver == model and c.method
                 and c.method not in _MODULE_API_METHODS and not c.method.startswith("__")}
        if project is None or not names:
            return None
        classes = None
        for name in sorted(names):
            defining = {(facts.path, m.cls.name): (facts, m.cls) for facts, m in project.methods_named(self.facts, name)
                        if m.cls is not None and self.training.is_module_class(facts, m.cls)}
            classes = defining if classes is None else {k: v for k, v in classes.items() if k in defining}
            if not classes:
                return None
        # (a base class that only shares steps, `ImageClassificationBase.validation_step`, says nothing of the
        # subclass that holds the layers)
        if any("forward" not in cls.methods or any(cls.name in other.written_bases for other in facts.all_classes)
               for facts, cls in classes.values()):
            return None
        # (GR-ConvNet's abstract `GraspModel` defines `compute_loss` and a `forward` that raises; the networks
        # written on it in other files hold the BatchNorm)
        if any(project.subclasses_of(facts, cls) for facts, cls in classes.values()):
            return None
        return any(self.modes.class_has_mode_layers(facts, cls) for facts, cls in classes.values())

    def _handed_to_holder(self, call: CallInfo, model: str) -> list:
        """(judge, name, construction) for `context.encoder`, where `context` is a parameter annotated with a
        project class whose `__init__` stores its `encoder` parameter as `self.encoder`: the name each
        construction of that class (`NetworkContext(encoder, decoder, ...)` in main.py) hands in. Empty when
        any construction hands in something else, or none is in sight."""
        project, fn = self.training.project, call.function
        head, _, attr = (self.training.canonical(model, fn) or model).partition(".")
        if project is None or not attr or "." in attr or head not in fn.params or id(call.node) in self._asking:
            return []
        found = lookup_class(project, self.facts, annotation_of(fn, head))
        init = found[1].methods.get("__init__") if found is not None else None
        param = found[1].stored_params().get(f"self.{attr}") if init is not None else None
        if param is None:
            return []
        held = []
        for facts, site in project.callers_elsewhere(found[0], found[1].name):
            name = _model_named(self.flow.argument_for(init, param, site))
            if name is None or is_test_file(facts.path):
                return []
            held.append((self.for_file(facts), name, site))
        return held

    def _declared_constructions(self, expr, fn: FunctionInfo, order: int, depth: int = 0) -> list:
        """(origin, call) for the PyG or diffusers model constructions behind `expr` on every path, through
        moves and DDP/compile wrappers (`GAT(...) if use_gat else GCN(...)`, then `DDP(model.to(rank))` in
        the function `mp.spawn` runs); empty when some path leads anywhere else."""
        found = []
        for origin in self.flow.origins(expr, fn, order) if depth < 4 else [None]:
            if origin is None:
                return []
            built = under_moves(origin.call)
            q = (origin.facts.qualify(built.func) or "") if isinstance(built, cst.Call) else ""
            if not isinstance(built, cst.Call) or (q in MODEL_WRAPPERS and built.args):  # `model.to(rank)`, `DDP(model)`
                inner = built if not isinstance(built, cst.Call) else built.args[0].value
                deeper = self.for_file(origin.facts)._declared_constructions(inner, origin.function, origin.order, depth + 1)
                if not deeper:
                    return []
                found += deeper
            elif q.startswith(_DROPOUT_DECLARED):
                found.append((origin, built))
            else:
                return []
        return found

    @cached_property
    def modes(self) -> "ModeLayers":
        return ModeLayers(self.training, self.flow)

    def has_training(self, fn: FunctionInfo, depth: int = 2) -> bool:
        """Backward, an optimizer step or autograd.grad anywhere in fn or the helpers it calls."""
        for call in self._calls_with_helpers(fn, depth):
            event = self.training.event_of(call)
            if event is not None and event[0] in ("backward", "step"):
                return True
            if call.qualname in ("torch.autograd.grad",) or call.method in ("requires_grad_", "grad"):
                return True
        return False

    def _updates_weights(self, fn: FunctionInfo, depth: int = 1) -> bool:
        """A backward or an optimizer step in fn or its helpers (freezing parameters with `requires_grad_` trains nothing)."""
        return any((event := self.training.event_of(c)) is not None and event[0] in ("backward", "step")
                   for c in self._calls_with_helpers(fn, depth))

    def steps_anything(self, fn: FunctionInfo, depth: int = 2) -> bool:
        """An optimizer step (or a call we cannot see into that is handed an optimizer) in fn or its helpers."""
        for call in self._calls_with_helpers(fn, depth):
            event = self.training.event_of(call)
            if event is not None and event[0] == "step":
                return True
            if any(self.training.is_optimizer(dotted_name(a.value)) for a in call.node.args) and call.method not in (
                "zero_grad", "scale_loss"
            ) and self.facts.resolve_function(call) is None:
                return True  # (a helper of this file handed `opt=opt` is seen into: PGD's `attack_pgd` only scales with it)
        return False

    def _calls_with_helpers(self, fn: FunctionInfo, depth: int = 2):
        seen = {id(fn)}
        frontier = [fn]
        for _ in range(depth + 1):
            nxt = []
            for f in frontier:
                for call in f.calls:
                    yield call
                    callee = self.facts.resolve_function(call)
                    if callee is not None and id(callee) not in seen:
                        seen.add(id(callee))
                        nxt.append(callee)
            frontier = nxt

    # -- grad mode ---------------------------------------------------------------
    def grad_disabled_at(self, call: CallInfo, depth: int = 0) -> bool:
        """True when gradients are off where `call` runs: a with block, a decorator, or every caller."""
        if any(is_no_grad_name(w) for w in call.context.withs):
            return True
        fn = call.function
        scope = fn
        while scope is not None and not scope.is_module:
            if any(is_no_grad_name(d) for d in scope.decorators):
                return True
            scope = scope.parent
        if any(
            c.context.order < call.context.order
            and ((c.qualname == "torch.set_grad_enabled" and _is_false_arg(c.node))
                 or (c.method == "enter_context" and _enters_no_grad(c.node)))
            for c in fn.calls
        ):
            return True  # `torch.set_grad_enabled(False)`, `stack.enter_context(torch.no_grad())`
        if _legacy_volatile_branch(call):
            return True
        if fn.cls is not None and any(
            (c.qualname or "") in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled") and _is_false_arg(c.node)
            for m in fn.cls.methods.values() for c in m.calls
        ):
            return True  # ClassyVision's hub interface: its `eval()` turns gradients off for the whole process
        if fn.is_module or depth > 3:
            return False
        found = self.sites_anywhere(fn, through_bases=True)
        sites = [  # (`model.forward_test(...)` under no_grad in the train script)
            (judge, site) for judge, site in found if not self.flow.guard_rules_out(call, judge.flow, site)
        ]
        if found and not sites:
            return True  # every caller rules the call's branch out (CCNet's `flip_evaluation=False`): it never runs
        if not found and self._handed_on_as_value(fn):
            return True  # vilmedic's `self.eval_func = evaluation`: run where that value is called, out of sight
        if not found and fn.cls is not None:
            # RecBole's `eval_func = self._full_sort_batch_eval` in an `@torch.no_grad()` evaluate: a method
            # handed on as a value, called where the value is
            holders = _holders_of_method_value(fn)
            return bool(holders) and all(self.grad_disabled_at_function(h, depth + 1) for h in holders)
        return bool(sites) and all(
            judge.grad_disabled_at(site, depth + 1) or self._judged_where_called(judge, site) for judge, site in sites
        )

    def _handed_on_as_value(self, fn: FunctionInfo) -> bool:
        """A top-level function that its own file or another file of the project stores as a value, uncalled
        (`self.eval_func = evaluation` in a model class; the validator calls `model.eval_func(...)` under
        no_grad): it runs where that value is called. Worked out once per function."""
        if fn.cls is not None or fn.parent is None or not fn.parent.is_module:
            return False
        if id(fn) not in self._handed_on:
            project = self.training.project
            self._handed_on[id(fn)] = stored_as_value(self.facts, fn.name) or (
                project is not None and project.handed_on_elsewhere(self.facts, fn.name)
            )
        return self._handed_on[id(fn)]

    def _judged_where_called(self, judge: "Evaluation", site: CallInfo, for_mode: bool = False) -> bool:
        """The call sits in another file's own evaluation pass, as one of its model runs per batch
        (`def predict_batch(model, ...)` runs `model.predict_greedy_search(x)` for each batch): that pass
        is judged, and reported, where it runs, so the method it calls is not reported again for it."""
        caller = site.function
        if judge is self or caller.is_module or not _EVAL_NAME.search(caller.name) or not judge._runs_per_batch(site):
            return False
        if _place_of(judge.facts, caller) in _RUNS_BEING_FOUND:
            # predrnn's `def test(model, ...)` runs `model.test(frames)` per batch: while the caller's runs are
            # being found, the method's own gradients are asked about, and must not defer back to the caller
            return False
        return any(r.call is site and (r.has_modes or not for_mode) for r in judge.model_runs(caller))

    def loader_comprehension_calls(self, fn: FunctionInfo) -> set[int]:
        """`calls_in_loader_comprehensions(fn)`, walked once per function (TD006 asks for every run)."""
        found = self._comprehension_calls.get(id(fn))
        if found is None:
            found = self._comprehension_calls[id(fn)] = calls_in_loader_comprehensions(fn)
        return found

    def grad_disabled_at_function(self, fn: FunctionInfo, depth: int) -> bool:
        """Gradients are off wherever `fn` runs: decorated, or every caller runs it with them off."""
        if any(is_no_grad_name(d) for d in fn.decorators):
            return True
        if fn.is_module or depth > 3:
            return False
        sites = self.sites_anywhere(fn, through_bases=True)
        return bool(sites) and all(judge.grad_disabled_at(site, depth + 1) for judge, site in sites)

    def sites_anywhere(self, fn: FunctionInfo, through_bases: bool = False) -> list:
        """(judge, call) for the calls of fn in this file and in the project's other files: RAFT's
        `validate_chairs` is called under no_grad in its own file and bare from train.py. Methods: in
        this file, or else on an instance elsewhere (`model.forward_test(...)`)."""
        sites = [(self, site) for site in self.flow.call_sites(fn)]
        project = self.training.project
        if project is None:
            return sites
        if through_bases and not sites:  # `self.inference(...)` in a base class of another file
            sites = [  # (an override runs where the base calls it)
                (self.for_file(flow.facts), c) for flow, _, c in self.flow.calls_from_bases(fn, other_files=True)
                if flow is not self.flow
            ]
        if fn.cls is None and fn.parent is not None and fn.parent.is_module:
            elsewhere = project.callers_elsewhere(self.facts, fn.name)
        elif fn.cls is not None and not sites and "_" in fn.name:  # (a distinctive method name, called on an instance)
            elsewhere = project.outside_callers(self.facts, fn.name)
        elif fn.cls is not None and (not sites or not fn.name.startswith("_")):
            # `nnet.validate(...)` on `nnet = NetworkFactory(...)` in train.py; a public method may be called
            # both by its class (under `no_grad` in the training loop) and by a script (`manager.evaluate(...)`)
            elsewhere = [(facts, site) for facts, site in project.outside_callers(self.facts, fn.name)
                         if self._instance_of_class(facts, site, fn.cls)]
        else:
            elsewhere = []
        return sites + [(self.for_file(facts), site) for facts, site in elsewhere if not is_test_file(facts.path)]

    def _instance_of_class(self, facts, site: CallInfo, cls) -> bool:
        """The receiver of a call in another file is an instance of cls, as that file builds it."""
        if not isinstance(site.node.func, cst.Attribute):
            return False
        written = dotted_name(site.node.func.value)
        if written and written.rsplit(".", 1)[-1][:1].isupper():
            # `Toolbox.predict(im, model)`, `utils.ModelTrainer.evaluate(...)`: a static method, called on its class
            found = lookup_class(self.training.project, facts, written)
            if found is not None:  # (the class as that file finds it: parsed again, so compared by name and file)
                return found[1].name == cls.name and found[0].path == self.facts.path
        inst = self.for_file(facts).flow.instance_of(site.node.func.value, site.function, site.context.order)
        return inst is not None and inst.cls is not None and inst.cls.name == cls.name

    # -- train/eval mode -----------------------------------------------------------
    def runs_beside_switching_methods(self, cls) -> list[tuple[FunctionInfo, ModelRun, FunctionInfo]]:
        """(evaluation method, run, sibling) for each network a plain class's evaluation method runs without
        `.eval()` on its way while a sibling method switches that same network to eval: randomized
        smoothing's `Smooth.certify()` calls `self.base_classifier.eval()`, `Smooth.predict()` does not, and
        its callers hand in a freshly built model. (Not when `__init__` switches it and nothing switches it
        back to training, nor when the class offers its own `eval()`, which its callers use.)"""
        evals: dict[str, list[FunctionInfo]] = {}
        trained: set[str] = set()
        for m in cls.methods.values():
            for c in m.calls:
                if not (c.receiver or "").startswith("self.") or c.method not in ("eval", "train") or len(c.node.args) > 1:
                    continue
                if c.method == "eval" or _is_false_arg(c.node):
                    evals.setdefault(c.receiver, []).append(m)
                else:
                    trained.add(c.receiver)
        if not evals or offers_mode_api(cls) or any(
            (base_class := lookup_class(self.training.project, self.facts, base)) is not None and offers_mode_api(base_class[1])
            for base in cls.written_bases
        ):
            return []  # (pix2pix's `BaseModel.eval()`, which test.py calls before `model.test()`)
        found = []
        networks_run: dict[int, set[str]] = {}  # id(method) -> the networks it runs, asked once per sibling
        for m in cls.methods.values():
            if m.name == "__init__" or not _EVAL_NAME.search(m.name) or self.has_training(m):
                continue
            for run in self.model_runs(m):
                if any(s is m for s in evals.get(run.model, ())):
                    continue
                # (a sibling that is an evaluation too, running the network: not a hook that only prepares it,
                # `on_validation_epoch_start()` before the framework's `validation_step()`)
                for s in evals.get(run.model, ()):
                    if id(s) not in networks_run:
                        networks_run[id(s)] = {r.model for r in self.model_runs(s)}
                siblings = [s for s in evals.get(run.model, ()) if run.model in networks_run[id(s)]]
                if not siblings:
                    continue
                if any(s.name == "__init__" for s in evals[run.model]) and run.model not in trained:
                    continue
                if self._last_mode(m, run.model, run.call.context.order) is None:
                    found.append((m, run, siblings[0]))
        return found

    def eval_mode_set_before(self, model: str, call: CallInfo, depth: int = 0) -> bool:
        """True when `model.eval()` (or `train(False)`, or a parent's eval()) runs before `call`.

        With no call site in this file to check and nothing set locally, the answer is True:
        the pass may well be called after `model.eval()` from elsewhere.
        """
        fn = call.function
        mode = self._last_mode(fn, model, call.context.order)
        if mode == "train" and self._trains_on_purpose(fn, model, call):
            return True
        if mode is not None:
            return mode == "eval"
        if call.context.conditions and any(
            c.method == "eval" and c.receiver and within(model, c.receiver)
            and exclusive_branches(c.context.branches, call.context.branches) for c in fn.calls
        ) and any(_SAMPLING_FLAG.search(self.facts.module.code_for_node(t)) for t in call.context.conditions):
            # `if return_samples: preds = [self.model(X) ...] else: self.model.eval(); ...`: the pass chooses the
            # mode per branch (Bayesian or MC-dropout sampling keeps training mode on purpose)
            return True
        if self._trained_later_in_loop(fn, model, call):
            return False
        if self._object_keeps_in_eval(fn, model, call):
            return True
        if fn.is_module:
            return False
        if depth > 3:
            return True  # callers of callers of callers: too far to follow, so no claim is made
        head = model.split(".", 1)[0]
        if self._evaluated_as_parameter(fn, model, call):
            return True
        if model == head and self._wraps_switched_parameter(fn, model, call):
            return True
        if model == head and self._switched_parameter_unused(fn, head, call):
            return True
        inner = self._unwrapped(head, fn, call.context.order)
        if inner is not None and inner != head:  # `net = accelerator.unwrap_model(model)`: the mode is the wrapped model's
            return self.eval_mode_set_before(inner + model[len(head):], call, depth + 1)
        walked = self._walked_by(fn, head, call)
        if walked is not None and self._switched_while_walking(fn, walked, call):
            return True
        if walked is not None:  # `for text_encoder in text_encoders:` every model the list holds
            lists = self._lists_walked(fn, walked, call)
            if not lists or any(models is None for _, models in lists):
                return True  # no caller, or a list we cannot read: no claim is made
            return all(self.eval_mode_set_before(m + model[len(head):], s, depth + 1) for s, models in lists for m in models)
        if self._loaded_in_eval(fn, model, head):
            return True
        if self._record_built_in_eval(fn, model, call, depth):
            return True
        if self._picked_by_name(head, fn, call.context.order):
            # `generator = getattr(self, "netG_%s" % side)`: every `self.netG_*` it may pick must be in eval
            # mode; with none of them in sight, which network it is cannot be known here
            picked = self._attributes_named_like(head, fn, call.context.order)
            return all(self.eval_mode_set_before(p + model[len(head):], call, depth + 1) for p in picked)
        chosen = self._chosen_between(head, fn, call.context.order)
        if chosen:  # `backbone = self.base if size == "base" else self.small`: both must be in eval mode
            return all(self.eval_mode_set_before(side + model[len(head):], call, depth + 1) for side in chosen)
        sites = self.flow.call_sites(fn)
        if not sites and head == "self" and fn.cls is not None:
            if _switches_others_only(fn, model, call.context.order, {"self"}) and not self._class_sets_eval(
                self.facts, fn.cls, model, fn, 0, by_name_only=True
            ):  # (a scorer switched to eval once in `__init__` stays so)
                return False  # `self.netG_B.eval()` here, and not netG_A: this entry sets the modes, and missed one
            if self._class_sets_eval(self.facts, fn.cls, model, fn, 0):
                return True  # `__init__` or a loader method leaves `self.model` in eval mode
            if self._subclasses_set_eval(fn.cls, model, fn):
                return True
            if self._holder_sets_eval(fn, model, call):
                return True
            sites = self.flow.instance_call_sites(fn)  # `embedding.extract_feats(vis)`: its `self.model` is the caller's
        if not sites and head == "self" and fn.cls is not None:
            # Dassl's `model_inference`, an override run by the generic `test()` of a base class in another file
            based = [(j, site) for j, site in self.sites_anywhere(fn, through_bases=True) if site.receiver == "self"]
            if any(self._override_trains_first(fn.cls, model, judge, site) for judge, site in based):
                return False
            if any(judge._last_mode(site.function, model, site.context.order) == "train" for judge, site in based):
                return False  # (BrainNetworkTransformer's `Train.train()`: `train_per_epoch` leaves it training first)
            if based:
                # (or the subclass is handed its model, and every construction of it hands one in eval mode,
                # or none is in sight: pytorch-ood's detectors, run by the base class's `__call__`)
                return all(judge.eval_mode_set_before(model, site, depth + 1) for judge, site in based) or (
                    self._constructed_in_eval(fn.cls, model, depth)
                )
        if not sites and self._free_in_closure(fn, head):
            # `model.eval()` in main(), then `def evaluate(...)` handed to a UI as a callback: the
            # closure sees the model as the enclosing function left it where the closure is defined
            # (or where it is handed on: `eval_fn` defined before the loop, passed to the self-play engine
            # after `net.eval()` in each iteration)
            defined_at = min((c.context.order for c in fn.calls), default=1 << 62)
            used = [c.context.order for c in fn.parent.calls
                    if c.dotted == fn.name or any(dotted_name(a.value) == fn.name for a in c.node.args)]
            modes = {self._last_mode(fn.parent, model, at) for at in used or [defined_at]}
            if modes == {None} and head in fn.parent.params and depth < 3:
                # `def build_eval_fn(net, ...): @torch.no_grad() def eval_fn(planes): net(x)`: the model the
                # builder is handed, as its callers hand it (`net.eval()` in main, then `build_eval_fn(net, ...)`)
                return self._handed_in_eval(fn.parent, model, head, depth)
            return modes == {"eval"}
        handed = set(fn.params) - {"self", "cls"}
        if not sites and head in handed and _switches_others_only(fn, model, call.context.order, handed) and (
            not self.sites_anywhere(fn)
        ):
            return False  # `model_mlp.eval(); model_cnn.eval()`, then `model_bilstm(seqs)`: it sets the modes, and missed one
        if not sites:
            return self._eval_mode_set_by_other_files(fn, model, head, depth)
        judged = [(self, site) for site in sites]
        if head in fn.params and fn.cls is None:  # RAFT's validate_chairs: its own main, and train.py
            judged += [(j, site) for j, site in self.sites_anywhere(fn) if j is not self]
        for judge, site in judged:
            if self.flow.guard_rules_out(call, judge.flow, site):
                continue  # `all_batches("train")` never reaches the `elif type_ == "predict":` branch
            caller_model = model  # `self._model` stays itself when a method calls `self.validate()`
            if head == "self" and site.receiver and site.receiver != "self" and not site.receiver.startswith("super"):
                if not self._held_in_eval_at(fn, model, judge, site, depth):
                    return False
                continue
            if head in fn.params and head != "self":
                arg = self.flow.argument_for(fn, head, site)
                if is_none(arg):
                    continue  # `load_or_compute_activations(..., None, ...)`: the real images, no model on this path
                name = _model_named(arg)
                if name is None:
                    continue  # passed something we cannot follow: no claim from this caller
                if judge._plain_function(name, site):
                    continue  # `net = lambda X: linreg(X, w, b)` (d2l's `evaluate_loss(net, ...)`): no mode to set
                caller_model = name + model[len(head):]
            if judge._restored_to_training_each_pass(call, model, site, caller_model):
                return False
            if not judge.eval_mode_set_before(caller_model, site, depth + 1):
                return False
        return True

    def _record_built_in_eval(self, fn: FunctionInfo, model: str, call: CallInfo, depth: int) -> bool:
        """`specialist.model` of a dataclass instance (`LoadedRealtimeSpecialist(model=model, ...)`), where
        every construction in the project hands in a model already in eval mode (its loader calls
        `model.eval()` first)."""
        parts = model.split(".")
        if len(parts) != 2 or parts[0] == "self" or depth > 3:
            return False
        inst = self.flow.instance_of(cst.parse_expression(parts[0]), fn, call.context.order)
        if inst is None or inst.cls is None or inst.cls.node is None or not any(
            (dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "").endswith("dataclass")
            for d in inst.cls.node.decorators
        ):
            return False
        sites = [(self.for_file(o), c) for o, c in constructions_of(self.training.project, inst.facts, inst.cls)
                 if o is inst.facts or not is_test_file(o.path)]
        if not sites:
            return False
        for site_judge, site in sites:
            given = keyword_arg(site.node, parts[1])
            name = _model_named(given.value) if given is not None else None
            if name is None or not site_judge.eval_mode_set_before(name, site, depth + 1):
                return False
        return True

    def _holder_sets_eval(self, fn: FunctionInfo, model: str, call: CallInfo) -> bool:
        """`self.encoder.model`, where `self.encoder` is an instance of a project class whose own methods
        leave its `self.model` in eval mode (a CLIP wrapper built by `clip.load`, or that calls
        `self.model.eval()` in `__init__`)."""
        parts = model.split(".")
        if len(parts) < 3:
            return False
        holder = ".".join(parts[:2])
        inst = self.flow.instance_of(cst.parse_expression(holder), fn, call.context.order)
        if inst is None or inst.cls is None or inst.declared or inst.cls is fn.cls:
            return False
        return self._class_sets_eval(inst.facts, inst.cls, "self." + ".".join(parts[2:]), None, 0)

    def _trained_later_in_loop(self, fn: FunctionInfo, model: str, call: CallInfo) -> bool:
        """`for task in tasks: acc.append(eval_tasks(self.model, test)); ...; self.model.train()`: nothing
        switches the model before the call in its loop, but the loop switches it to training later on, so
        from the second pass on the call meets it training."""
        for loop in reversed(call.context.loops):
            inside = [c for c in fn.calls if c.context.order > call.context.order and any(l is loop for l in c.context.loops)]
            switches = []
            for c in inside:
                mode = _switch_mode(c, fn) if c.receiver and (within(model, c.receiver) or c.receiver == model) else None
                if mode is not None and self._switch_reaches(c, model):
                    switches.append((c.context.order, mode))
                else:
                    callee = self._callee(c)
                    if callee is not None and self._helper_trains(callee, c, model):
                        switches.append((c.context.order, "train"))
            if switches:
                return max(switches)[1] == "train"
        return False

    def _override_trains_first(self, cls, model: str, judge: "Evaluation", site: CallInfo) -> bool:
        """A base class's loop of another file runs this class's own training step before the pass
        (`self.train_epoch()` then `self.validate()`, both overridden here), and that step leaves
        `model` training; the base switches no mode itself."""
        loop = site.function
        if judge._last_mode(loop, model, site.context.order) is not None:
            return False
        return any(
            c.receiver == "self" and c.method in cls.methods and c.context.order < site.context.order
            and self._mode_left_by(cls.methods[c.method], model, 1 << 62) == "train"
            for c in loop.calls
        )

    def _restored_to_training_each_pass(self, run: CallInfo, model: str, site: CallInfo, caller_model: str) -> bool:
        """`validate()` ends with `self.model.train()` after the run, on the run's own path, and is called
        inside the caller's training loop with no switch of the caller's before the call: from the second
        pass on, it starts in training mode, whatever the model was in before the loop (End-to-end-ASR's
        `Solver.validate`). (Asked of the caller's judge; the run is in the called pass.)"""
        fn = run.function
        if not site.context.loops or self._last_mode(site.function, caller_model, site.context.order) is not None:
            return False
        switches = [c for c in fn.calls if c.method in ("train", "eval") and c.receiver and within(model, c.receiver)]
        last = max(switches, key=lambda c: c.context.order, default=None)
        return (last is not None and last.method == "train" and not _is_false_arg(last.node) and len(last.node.args) <= 1
                and last.context.order > run.context.order and not last.context.branches)

    def wrapped_module(self, name: str, fn: FunctionInfo, before: int) -> str | None:
        """The module a data-parallel wrapper (or `torch.compile`) held under `name` wraps: `model` for
        `ddp_model = DDP(model, device_ids=[rank])`. It shares the module, modes included."""
        if not name.isidentifier():
            return None
        held = self.flow.value_of(name, fn, before)
        return self._parallel_wrapped(held[0]) if held is not None else None

    def _parallel_wrapped(self, value) -> str | None:
        """What a data-parallel wrapper call (`DDP(model, ...)`, `torch.compile(model)`) wraps: its first
        positional argument, by name; None for any other value."""
        if not isinstance(value, cst.Call) or not value.args or value.args[0].keyword is not None:
            return None
        if not _PARALLEL_WRAPPER.search(self.facts.qualify(value.func) or dotted_name(value.func) or ""):
            return None
        return dotted_name(value.args[0].value)

    def _wrapped_attribute(self, fn: FunctionInfo, model: str) -> str | None:
        """The attribute that `model`, an attribute holding a data-parallel wrapper, wraps: `self.model` for
        `model_dp = DataParallel(model)` (or `model_dp = model` on the other branch), then `self.model = model;
        self.model_dp = model_dp` in one method of the class."""
        cls = fn.cls
        if cls is None or not model.startswith("self.") or model.count(".") != 1:
            return None
        key = (id(cls), model)
        if key not in self._wrapped:
            self._wrapped[key] = self._find_wrapped_attribute(cls, model)
        return self._wrapped[key]

    def _find_wrapped_attribute(self, cls, model: str) -> str | None:
        for m in cls.methods.values():
            stored = [a.value for a in m.assigns if a.targets == (model,)]
            if len(stored) != 1 or stored[0] is None:
                continue
            value = stored[0]
            if isinstance(value, cst.Name):  # `self.model_dp = model_dp`: every value the local took
                values = [a.value for a in m.assigns if a.targets == (value.value,)]
            else:
                values = [value]
            # (each value the DataParallel wrapper's own: its argument's name, or the local's, or None)
            wrapped = {v.value if isinstance(v, cst.Name) else self._parallel_wrapped(v) for v in values}
            if len(wrapped) != 1 or None in wrapped or not any(isinstance(v, cst.Call) for v in values):
                continue
            (inner,) = wrapped
            if inner.startswith("self."):
                return inner
            held = [a.targets[0] for a in m.assigns if len(a.targets) == 1 and a.targets[0].startswith("self.")
                    and isinstance(a.value, cst.Name) and a.value.value == inner]
            if len(held) == 1:
                return held[0]
        return None

    def _element_holders(self, model: str, fn: FunctionInfo, before: int, depth: int = 0) -> set[str] | None:
        """The lists a local name takes its model from, on every path: `self.encoder` for
        `encoder = self.encoder[0].module if multi_gpu else self.encoder[0]`; `models` for fairseq's
        `model, reranker = models[0], None` (and for `reranker.encoder`, a part of that element). None
        when not an element."""
        head = model.split(".", 1)[0]
        if not head.isidentifier() or depth > 3:
            return None
        holders: set[str] = set()
        # (each assignment that may reach: `reranker = models[-1]` under `if self.reranking:`, after the
        # tuple's `None`, which holds no model)
        reaching = self.flow.reaching_assignment(head, fn, before)
        if reaching is None:
            return None
        use = self.facts.branches_at.get(before, ())
        candidates = [reaching] if isinstance(reaching, AssignInfo) else [
            c for c in fn.assigns
            if c.augmented is None and c.context.order < before and head in c.targets
            and not exclusive_branches(c.context.branches, use)
        ]
        for a in candidates:
            if head not in a.targets or a.value is None:
                return None
            value = a.value
            if a.targets != (head,):
                if not (isinstance(value, cst.Tuple) and len(value.elements) == len(a.targets)):
                    return None
                value = value.elements[a.targets.index(head)].value
            if is_none(value):
                continue
            for side in (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value,):
                while isinstance(side, cst.Attribute) and side.attr.value == "module":
                    side = side.value  # (DataParallel's `.module` is the same network)
                if isinstance(side, cst.Name) and side.value == head:
                    found = self._element_holders(head, fn, a.context.order, depth + 1)
                elif isinstance(side, cst.Subscript) and dotted_name(side.value):
                    found = {dotted_name(side.value)}
                else:
                    found = None
                if found is None:
                    return None
                holders |= found
        return holders or None

    def _evaluated_as_parameter(self, fn: FunctionInfo, model: str, call: CallInfo) -> bool:
        """crnn's `def val(net, dataset)`: `net.eval()`, then `crnn(image)` on the module-level model that
        every caller passes as `net`: the same object, switched under another name."""
        head = model.split(".", 1)[0]
        if head != "self" and (head in fn.params or head in fn.assigned_names()):
            return False  # (a trainer's `self._eval_epoch_(epoch, self.model)` switches `model`, its `self.model`)
        sites = self.flow.call_sites(fn)
        return bool(sites) and any(
            self._last_mode(fn, p, call.context.order) == "eval"
            and all(_model_named(self.flow.argument_for(fn, p, s)) == model for s in sites)
            for p in fn.params
        )

    def _plain_function(self, name: str, site: CallInfo) -> bool:
        """`name` holds a lambda or a function of this file where `site` runs: code, not an nn.Module."""
        return self._plain_function_at(name, site.function, site.context.order)

    def _plain_function_at(self, name: str, fn: FunctionInfo, at: int) -> bool:
        unpacked = self.flow.unpacking(name, fn, at)
        if unpacked is not None:  # `net, loss = lambda X: linreg(X, w, b), squared_loss`
            value, index, width, _ = unpacked
            value = value.elements[index].value if isinstance(value, cst.Tuple) and len(value.elements) == width else None
        else:
            held = self.flow.value_of(name, fn, at)
            value = held[0] if held is not None else None
        if isinstance(value, cst.Lambda):
            return True
        return isinstance(value, cst.Name) and value.value in self.facts.toplevel_functions

    def _held_in_eval_at(self, fn: FunctionInfo, model: str, judge: "Evaluation", site: CallInfo, depth: int) -> bool:
        """`embedding.extract(...)` runs fn: its `self.model` is `embedding.model`, and the `model` that
        `Embedding(root, model)` stored there; either name switched to eval mode will do, unless the
        instance's own training method ran just before (`trainer.train_epoch(epoch)`)."""
        held = site.receiver + model[len("self"):]
        if self._judged_where_called(judge, site, for_mode=True):
            return True
        if judge._last_mode(site.function, held, site.context.order) == "train":
            return False
        stored = self._stored_by_constructor(fn, model, site, judge)
        return judge.eval_mode_set_before(held, site, depth + 1) or any(
            self.for_file(facts).eval_mode_set_before(name, site if made.function is site.function else made, depth + 1)
            for facts, name, made in stored  # (the model it was built with, as it is where the pass runs)
        )

    def _trains_on_purpose(self, fn: FunctionInfo, model: str, call: CallInfo) -> bool:
        """`model.train()` written just before the pass, with nothing trained in between: the mode is
        chosen for it (maskrcnn-benchmark's validation loss, which its detector returns only in training
        mode), not left behind by the training that came before."""
        if _EVAL_NAME.search(fn.name) and not _detector_losses_read(fn, call):
            return False  # (`def evaluate(self): self.model.train()` is a slip, not a choice)
        at = call.context.order
        switches = [c.context.order for c in fn.calls if c.method == "train" and c.receiver and within(model, c.receiver)
                    and not _is_false_arg(c.node) and c.context.order < at]
        if not switches:
            return False
        start = max(switches)
        switch = next(c for c in fn.calls if c.context.order == start)
        callee = self.facts.resolve_function(switch)
        if callee is not None and self.has_training(callee, depth=1):
            return False  # VIBE's `self.train()`: the trainer's own epoch of training, not a mode chosen for the pass
        entered = self.facts.resolve_function(call)
        # (a backward with no step is the pass's own saliency: nnU-Net flow trainers' `get_gradient_images`)
        if entered is not None and self.steps_anything(entered, depth=1):
            # `self.model.train()` then `self._run_epoch()`, which trains and then evaluates: the mode is
            # chosen for the training, and the pass inside meets it
            return False
        # (a pass inside a loop that the switch is outside of runs after that loop's later training too:
        # pytorch-fcn's `train_epoch`: `self.model.train()`, then per batch `self.validate()` and a step)
        looped = [loop for loop in call.context.loops if loop not in switch.context.loops]
        for c in fn.calls:
            if c.context.order > at and any(loop.encloses(c.context.loop) for loop in looped if c.context.loop is not None):
                event = self.training.event_of(c)  # trained later in the loop, so before the pass's next run
                callee = self.facts.resolve_function(c)
                if event is not None and event[0] in ("backward", "step") or callee is not None and self.has_training(callee, depth=1):
                    return False
                continue
            if not start < c.context.order < at:
                continue
            if c.dotted == model and self.is_model_call(c):
                continue  # a forward of the model leaves its mode as it is (BALD's first of T dropout samples)
            if within(c.dotted or "", model) or within(c.receiver or "", model) or any(dotted_name(a.value) == model for a in c.node.args):
                helper = self.facts.resolve_function(c)
                if helper is not None and not (_trains_by_name(helper.name) or self._updates_weights(helper)):
                    continue  # nnU-Net's `self.freeze_batchnorm_layers(self.network)`: a helper of this file that trains nothing
                return False  # the model is used (updated, handed on, run by a method) between the switch and the pass
            event = self.training.event_of(c)
            if event is not None and event[0] in ("backward", "step"):
                return False
            callee = self.facts.resolve_function(c)
            if callee is not None and (_trains_by_name(callee.name) or self._updates_weights(callee)):
                return False
        return True

    def _object_keeps_in_eval(self, fn: FunctionInfo, model: str, call: CallInfo) -> bool:
        """`inferencer = TorchInferencer(path=...)`, then `inferencer.predict(image)` runs `inferencer.model`:
        the object's class leaves its model in eval mode (anomalib's `load_model` ends with `model.eval()`)
        and no method of it trains the model."""
        if call.receiver == model and isinstance(call.node.func, cst.Attribute):
            return self._wrapper_keeps_in_eval(fn, call)
        head, _, rest = model.partition(".")
        if not rest or head in ("self", "cls"):
            return False
        inst = self.flow.instance_of(cst.Name(head), fn, call.context.order)
        if inst is None or inst.cls is None or self.training.is_module_class(inst.facts, inst.cls):
            return False
        held = "self." + rest.split(".", 1)[0]
        holders = _holders_of(inst.facts, inst.cls, held)
        return not _trains_model(inst.cls, holders - {"self"}) and self._class_sets_eval(inst.facts, inst.cls, "self." + rest, None, 0)

    def _wrapper_keeps_in_eval(self, fn: FunctionInfo, call: CallInfo) -> bool:
        """`self.audio_to_coeff.generate(batch, ...)` of a plain object (SadTalker's `Audio2Coeff`) whose
        `__init__` loads each network the method runs in eval mode, and which trains none of them."""
        left = self.networks_left_training(call)
        return left is not None and not left

    def networks_left_training(self, call: CallInfo) -> list[str] | None:
        """For `helper.generate(...)` on a plain object whose method runs networks it holds: those of them
        (`self.expression_net`) its class neither leaves in eval mode nor trains; None for any other call."""
        if not isinstance(call.node.func, cst.Attribute):
            return None
        inst = self.flow.instance_of(call.node.func.value, call.function, call.context.order)
        runs = self.wrapper_runs(inst, call.method)
        if not runs:
            return None
        return [model for model in dict.fromkeys(r.model for r in runs) if not (
            model.startswith("self.") and not _trains_model(inst.cls, _holders_of(inst.facts, inst.cls, model) - {"self"})
            and self._class_sets_eval(inst.facts, inst.cls, model, None, 0)
        )]

    def _switched_parameter_unused(self, fn: FunctionInfo, head: str, call: CallInfo) -> bool:
        """`def predict(m, part): m.eval(); ... model(x)`: the function switches a parameter it uses for
        nothing else and runs a global model; the parameter stands for that model (the tabular-dl scripts)."""
        if head in fn.params or head in fn.assigned_names() or fn.node is None:
            return False
        switched = [c.receiver for c in fn.calls if c.method == "eval" and not c.node.args and c.receiver in fn.params
                    and c.context.order < call.context.order]
        if not switched:
            return False
        code = self.facts.module.code_for_node(fn.node)
        return any(len(re.findall(rf"\b{name}\b", code)) == 2 for name in switched)  # (the parameter and its switch)

    def _kept_by_objects(self, fn: FunctionInfo, model: str, before: int) -> set[str]:
        """`trainer = Trainer(args, model, criterion, optim)`, whose `__init__` keeps `self.model = model`:
        `trainer.model` is the same network, so `trainer.model.train(False)` switches `model` (PubMedCLIP's
        MEVF training loop, which then calls `evaluate(model, ...)`)."""
        head = model.split(".", 1)[0]  # (`model.classifier` is `trainer.model.classifier`)
        kept = set()
        for a in fn.assigns:
            value = a.value
            if a.context.order >= before or len(a.targets) != 1 or not isinstance(value, cst.Call) or not (
                any(_model_named(arg.value) == head for arg in value.args)
            ):
                continue
            found = lookup_class(self.training.project, self.facts, dotted_name(value.func))
            init = found[1].methods.get("__init__") if found is not None else None
            construction = self.facts.call_info(value)
            if init is None or construction is None:
                continue
            for attribute, param in _params_kept_on_self(init).items():
                if _model_named(self.flow.argument_for(init, param, construction)) == head:
                    kept.add(a.targets[0] + attribute[4:] + model[len(head):])
        return kept

    def _stored_by_constructor(self, fn: FunctionInfo, model: str, site: CallInfo, judge: "Evaluation") -> list[tuple]:
        """(facts, name, construction) for `predictor = Predictor(model, decoder)`, whose `__init__` keeps
        `self.model = model`: the name passed in for `self.model`, to be judged where the object was built
        (in the caller's caller when the object is handed down as a parameter)."""
        init = fn.cls.methods.get("__init__") if fn.cls is not None else None
        attr = ".".join(model.split(".")[:2])
        param = _params_kept_on_self(init).get(attr) if init is not None else None
        if param is None:
            return []
        found = []
        for origin in judge.flow.origins(site.node.func.value, site.function, site.context.order):  # (in the site's file)
            construction = origin.facts.call_info(origin.call) if origin is not None else None
            built = dotted_name(origin.call.func) if construction is not None else None
            # (`return cls(model, names, device)` in `Predictor.from_checkpoint`, a classmethod: built there)
            owner = construction.function.cls if construction is not None else None
            by_factory = (built == "cls" and owner is not None and owner.name == fn.cls.name and origin.facts.path == self.facts.path
                          and "classmethod" in construction.function.decorators)
            if construction is None or built != fn.cls.name and not by_factory:
                continue
            name = _model_named(self.flow.flow_of(origin).argument_for(init, param, construction))
            if name:
                found.append((origin.facts, name + model[len(attr):], construction))
        return found

    def _loaded_in_eval(self, fn: FunctionInfo, model: str, head: str) -> bool:
        """`_model = None`, then `def load_model(): global _model; _model = Net(...); _model.eval()`:
        the one loader leaves the global in eval mode, and nothing else in the file trains it."""
        if model != head or head in fn.params or head in fn.assigned_names():
            return False
        loaders = self.facts.global_setters(head)
        if len(loaders) != 1:
            return False
        trained = any(c.receiver == head and c.method == "train" for c in self.facts.calls if c.function is not loaders[0])
        return not trained and self._last_mode(loaders[0], model, 1 << 62) == "eval"

    def _switch_reaches(self, switch: CallInfo, model: str) -> bool:
        """`model.eval()` on a wrapper object whose own `eval()` switches some of its networks
        (RIFE's `Model.eval`: flownet, contextnet, fusionnet) reaches `model.flownet` only if that
        method switches `self.flownet`; an nn.Module's eval reaches every submodule."""
        receiver = switch.receiver or ""
        if switch.method not in ("eval", "train") or not model.startswith(receiver + ".") or receiver == "self":
            return True
        inst = self.flow.instance_of(switch.node.func.value, switch.function, switch.context.order)
        own = inst.facts.find_method(inst.cls, switch.method) if inst is not None and inst.cls is not None else None
        if own is None:
            return True
        inner = "self" + model[len(receiver):]
        return any(
            c.method == switch.method and (c.receiver in (None, "self") or within(inner, c.receiver or ""))
            for c in own.calls  # (`super().eval()` or `self.train(False)` switch everything)
        )

    def _on_path_for(self, model: str, branches: tuple, use: tuple) -> bool:
        """Every `if` around a call that the use is not inside tests the model itself
        (`if isinstance(model, nn.Module): stack.enter_context(inference_context(model))`)."""
        head = model.split(".", 1)[0]
        tests = self.facts.if_tests
        return all(b in use or b[0] in tests and head in names_in(tests[b[0]]) for b in branches)

    @staticmethod
    def _walked_by(fn: FunctionInfo, head: str, call: CallInfo) -> str | None:
        """The name a loop of fn walks with `head` as its variable: `encoders` for `for i, enc in
        enumerate(encoders)` and for `for p, tok, enc in zip(prompts, tokenizers, encoders)`."""
        if head in fn.params or head in fn.assigned_names():
            return None
        # (the loop around the call, where there is one: `for model in students:` after `for model in teachers:`)
        around = [loop for loop in reversed(call.context.loops) if isinstance(loop.node, cst.For) and head in loop.targets]
        for loop in around or fn.loops:
            if isinstance(loop.node, cst.For) and head in loop.targets:
                return _walk_of(loop, head)
        return None

    @staticmethod
    def _switched_while_walking(fn: FunctionInfo, walked: str, call: CallInfo) -> bool:
        """An earlier loop over the same list switches each model it walks: SAM 2's trainer runs
        `for model in curr_models: model.eval()`, then `for phase, model in zip(curr_phases, curr_models):`."""
        for loop in fn.loops:
            if not isinstance(loop.node, cst.For) or loop.order >= call.context.order or loop in call.context.loops:
                continue
            if any(c.method == "eval" and not c.node.args and c.receiver in loop.targets
                   and _walk_of(loop, c.receiver) == walked for c in loop.calls):
                return True
        return False

    def _lists_walked(self, fn: FunctionInfo, walked: str, call: CallInfo) -> list:
        """(place, model names) for the list a loop walks: each caller's argument when it is a
        parameter, else the local list (`[self.text_encoder, self.text_encoder_2]`) at `call`."""
        if walked in fn.params:
            return [(s, self._listed_models(self.flow.argument_for(fn, walked, s), s)) for s in self.flow.call_sites(fn)]
        return [(call, self._listed_models(cst.Name(walked), call) if walked.isidentifier() else None)]

    def _listed_models(self, arg: cst.BaseExpression | None, site: CallInfo) -> list[str] | None:
        """The model names in a list a caller passes: `[text_encoder_one, text_encoder_two]`, directly or
        through a name assigned such a literal."""
        if isinstance(arg, cst.Name):
            held = self.flow.value_of(arg.value, site.function, site.context.order)
            arg = held[0] if held is not None else None
        if isinstance(arg, cst.IfExp):  # `[self.enc, self.enc_2] if self.enc is not None else [self.enc_2]`
            both = [self._listed_models(branch, site) for branch in (arg.body, arg.orelse)]
            return None if None in both else both[0] + both[1]
        if isinstance(arg, cst.Dict):  # `{"vgg": vgg, "resnet": resnet}` (an empty dict filled later: unknown)
            names = [dotted_name(e.value) for e in arg.elements if isinstance(e, cst.DictElement)]
            return names if names and None not in names and len(names) == len(arg.elements) else None
        if not isinstance(arg, (cst.List, cst.Tuple)):
            return None
        names = [dotted_name(e.value) for e in arg.elements if isinstance(e, cst.Element)]
        return names if names and None not in names else None

    @staticmethod
    def _free_in_closure(fn: FunctionInfo, head: str) -> bool:
        """`head` is a variable of the function (or module) enclosing `fn`, not one of fn's own."""
        parent = fn.parent
        if parent is None or parent.cls is not None and head == "self":
            return False  # (a module-level global counts: `model = load().eval()` then `def predict(...)`)
        return head not in fn.params and head not in fn.assigned_names() and (head in parent.params or head in parent.assigned_names())

    def _unwrapped(self, name: str, fn: FunctionInfo, order: int) -> str | None:
        """The model a local name unwraps: `accelerator.unwrap_model(model)`, `model.module`, `DDP(model)`,
        `model.cuda()`; for a name assigned differently by branch (`parallel_model = model` or
        `nn.DataParallel(model).cuda()`), the model every branch wraps."""
        held = self.flow.value_of(name, fn, order) if name not in fn.params else None
        if held is None and name not in fn.params:
            scope = fn if name in fn.assigned_names() else self.facts.module_function
            candidates = self.flow.reaching_candidates(name, scope, order if scope is fn else 1 << 62)
            inner = {self._wrapped_by(c.value) for c in candidates}
            if len(candidates) > 1 and len(inner) == 1 and None not in inner and name not in inner:
                return inner.pop()
        value = held[0] if held is not None else _unpacked_literal(self.flow.reaching_assignment(name, fn, order), name)
        return self._wrapped_by(value)

    @staticmethod
    def _wrapped_by(value: cst.BaseExpression | None) -> str | None:
        """`model` for `model.module`, `DDP(model)`, `model.cuda()`, `unwrap_model(model)`; `net.decoder`
        for itself (a submodule of a model whose mode we can follow)."""
        if isinstance(value, cst.Name):
            return value.value  # `parallel_model = model`: an alias
        if value is None:
            return None
        moved = under_moves(value)
        if moved is not value and isinstance(moved, (cst.Name, cst.Attribute)):
            return dotted_name(moved)  # `parallel_model = model.cuda()`: the same module
        value = moved
        if isinstance(value, cst.Attribute) and value.attr.value in ("module", "_orig_mod"):
            return dotted_name(value.value)
        if isinstance(value, cst.Attribute) and dotted_name(value):
            return dotted_name(value)  # `net = unwrapped.net`: a submodule of a model whose mode we can follow
        if isinstance(value, cst.Call) and value.args and value.args[0].keyword is None:
            last = (dotted_name(value.func) or "").rsplit(".", 1)[-1]
            # (`from torch.nn.parallel import DistributedDataParallel as DDP`: the usual aliases too)
            if "unwrap" in last or last in ("DistributedDataParallel", "DataParallel", "compile", "FullyShardedDataParallel", "DDP", "FSDP"):
                return dotted_name(value.args[0].value)
            if "quantization" in (dotted_name(value.func) or "").split(".") and last in _QUANTIZATION_STEPS:
                return dotted_name(value.args[0].value)  # `torch.ao.quantization.convert(model)`: the model, in its mode
            if dotted_name(value.func) in ("functools.partial", "partial"):
                return dotted_name(value.args[0].value)  # `functools.partial(self.net_G, random_style=True)`: the same module
        return None

    def _eval_mode_set_by_other_files(self, fn: FunctionInfo, model: str, head: str, depth: int) -> bool:
        """For a top-level function called from other files of the project: do those callers set eval?

        With no caller to be seen anywhere, the benefit of the doubt goes to the code when the
        model arrives as a parameter (or is `self.` state set elsewhere)."""
        project = self.training.project
        elsewhere = []
        if project is not None and fn.parent is not None and fn.parent.is_module and head in fn.params:
            # a unit test that builds a tiny model and calls the pass says nothing about the real callers
            elsewhere = [(o, site) for o, site in project.callers_elsewhere(self.facts, fn.name) if not is_test_file(o.path)]
        if not elsewhere and project is not None and fn.cls is not None and head in fn.params and head != "self":
            # FOTS's `Toolbox.predict(im_fn, input_dir, model)`, a static method called from eval.py
            elsewhere = [(j.facts, site) for j, site in self.sites_anywhere(fn) if j is not self]
            if not elsewhere:
                # CL_Pytorch's `ACL._epoch_test(self, model, loader)`, an override that the base class's
                # `_train_model` (another file) calls as `self._epoch_test(model, ...)` after training it
                elsewhere = [(j.facts, site) for j, site in self.sites_anywhere(fn, through_bases=True)
                             if j is not self and site.receiver == "self"]
        if not elsewhere:
            if model.startswith("self.") and fn.cls is not None:
                # `learner.model.eval()` then `learner.infer(...)` in the scripts that use the class: its
                # `self.model` is theirs, judged where they call it
                outside = [(j, s) for j, s in self.sites_anywhere(fn)
                           if j is not self and s.receiver not in (None, "self") and "." not in s.receiver]
                if outside and depth < 3:
                    return all(self._held_in_eval_at(fn, model, j, s, depth) for j, s in outside)
                # a trainer's evaluate(): fine if some method of the class (or of a base class we cannot
                # see) switches this model to eval, or every construction hands it a model already in eval
                return (self._class_sets_eval(self.facts, fn.cls, model, fn, 0) or self._constructed_in_eval(fn.cls, model, depth)
                        or _never_held(fn.cls, model))
            if head in fn.params and within(model, head) and self._sibling_leaves_training(fn, head, model):
                return False
            return head in fn.params or self._taken_from_param(head, fn)
        for other_facts, site in elsewhere:
            arg = self.flow.argument_for(fn, head, site)
            name = _model_named(arg)
            if name is None:
                return True
            other = self.for_file(other_facts)
            if model == head and other._plain_object(name, site):
                continue  # galaxy-zoo-generation's `SingleImageGenerator`, a stand-in with no layers: no mode to set
            if not other.eval_mode_set_before(name + model[len(head):], site, depth + 1):
                return False
        return True

    def _handed_in_eval(self, fn: FunctionInfo, model: str, head: str, depth: int) -> bool:
        """Every caller of fn in sight hands it, as its parameter `head`, a model in eval mode (a caller
        whose argument cannot be followed makes no claim)."""
        for judge, site in self.sites_anywhere(fn):
            name = _model_named(judge.flow.argument_for(fn, head, site))
            if name is not None and not judge.eval_mode_set_before(name + model[len(head):], site, depth + 1):
                return False
        return True

    def _plain_object(self, name: str, site: CallInfo) -> bool:
        """`name` holds an instance of a project class that is no nn.Module (and wraps none) where `site` runs."""
        inst = self.flow.instance_of(cst.parse_expression(name), site.function, site.context.order)
        return (
            inst is not None and inst.cls is not None and not self.training.is_module_class(inst.facts, inst.cls)
            and not self.module_like(inst.facts, inst.cls) and not self.wrapper_runs(inst, "__call__")
        )

    def _sibling_leaves_training(self, fn: FunctionInfo, param: str, model: str | None = None) -> bool:
        """With no caller in sight, a sibling function of the same file takes the model under the same
        name, switches it to training mode and trains it (`def train(loader, model, ...): model.train()`
        beside `def validate(loader, model, ...)`): the pair runs one after the other, and the pass finds
        the model as training left it. Methods of one trainer class pair the same way (Deep SVDD's
        `DeepSVDDTrainer.train(dataset, net)` and `test(dataset, net)`), sharing `self` besides, and so do
        pytorch-ignite's process functions (`train(engine, mini_batch)` switching `engine.model.train()`
        beside `validate(engine, mini_batch)`, both run per batch by their Engines)."""
        model = model or param
        siblings = fn.cls.methods.values() if fn.cls is not None else self.facts.toplevel_functions.values()
        for other in siblings:
            shared = set(other.params) & set(fn.params) - {param, "self"}
            if other is fn or param not in other.params or "train" not in other.name:
                continue
            if len(shared) < (1 if fn.cls else 2) and not _paired_names(fn.name, other.name):
                continue  # (the pair shares its plumbing: `epoch`, `writer`, `logger`, `config`, `args`, ...; or
                # is named as a pair: `model_train`/`model_validate`, picked by a config and called as values)
            switches = [c for c in other.calls if c.receiver == model and c.method == "train" and not _is_false_arg(c.node)]
            if switches and not any(c.receiver == model and c.method == "eval" for c in other.calls) and self.has_training(other):
                return True
        return False

    def _chosen_between(self, name: str, fn: FunctionInfo, order: int) -> list[str]:
        """The two models `name = a if test else b` picks between (none when either side is no name)."""
        held = self.flow.value_of(name, fn, order)
        value = held[0] if held is not None else None
        if not isinstance(value, cst.IfExp):
            return []
        sides = [dotted_name(value.body), dotted_name(value.orelse)]
        return sides if all(sides) and name not in sides else []

    def _returned_callable(self, call: CallInfo, models: set[str]) -> bool:
        """`train_val_loop(...)` after `train_val_loop = get_train_val_loop(model, ...)`: a callable that a
        factory handed back, and that either call is handed the model (not `build_dataset(..., train=False)`,
        a function called by its own name, nor HRNet's `dataset_type(config, is_train=False)` after
        `dataset_type = get_dataset(config)`)."""
        if not isinstance(call.node.func, cst.Name) or self.facts.resolve_function(call) is not None:
            return False
        held = self.flow.value_of(call.node.func.value, call.function, call.context.order)
        if held is None or not isinstance(held[0], cst.Call):
            return False
        heads = {m.split(".", 1)[0] for m in models}
        return any(names_in(arg.value) & (models | heads) for made in (call.node, held[0]) for arg in made.args)

    def _attributes_named_like(self, name: str, fn: FunctionInfo, order: int) -> list[str]:
        """The `self.` attributes of fn's class whose names start as the computed name does: `netG_` for
        `getattr(self, "netG_%s" % direction[0])` or `getattr(self, f"netG_{d}")`."""
        value = self.flow.value_of(name, fn, order)
        call = value[0] if value is not None else None
        cls = fn.self_class()
        if not isinstance(call, cst.Call) or len(call.args) < 2 or cls is None:
            return []
        key = call.args[1].value
        if isinstance(key, cst.BinaryOperation):
            key = key.left
        if isinstance(key, cst.FormattedString):
            key = key.parts[0] if key.parts and isinstance(key.parts[0], cst.FormattedStringText) else None
            prefix = key.value if key is not None else ""
        elif isinstance(key, cst.SimpleString):
            prefix = key.evaluated_value.split("%", 1)[0].split("{", 1)[0]
        else:
            prefix = ""
        if len(prefix) < 3:
            return []
        return sorted({t for m in cls.methods.values() for a in m.assigns for t in a.targets
                       if t.startswith("self." + prefix) and t.count(".") == 1})

    def _picked_by_name(self, name: str, fn: FunctionInfo, order: int) -> bool:
        """`generator = getattr(self, "netG_%s" % direction[0])`: a network chosen by a computed name, so
        it stands for every attribute of that prefix (see `_attributes_named_like`)."""
        assign = self.flow.reaching_assignment(name, fn, order)
        value = getattr(assign, "value", None)
        return (
            isinstance(value, cst.Call) and dotted_name(value.func) == "getattr" and len(value.args) >= 2
            and not isinstance(value.args[1].value, cst.SimpleString)
        )

    def _taken_from_param(self, name: str, fn: FunctionInfo, depth: int = 0) -> bool:
        """`model = models[0]`, `mt_decoder = getattr(model, ...)`, `net = model.decoder`: a model (or part of
        one) that arrived as a parameter, so the caller owns its mode, as for the parameter itself. So is
        the variable of a comprehension over one: `[model(**batch) for model in models]`, and over a list
        made of one (`[hf.encoder(x) for hf in hf_models]` with `hf_models = [m.enc_dec for m in models]`)."""
        walked = _comprehension_walk(fn, name)
        if walked is not None:
            return depth < 3 and (walked in fn.params and walked not in ("self", "cls") or self._taken_from_param(walked, fn, depth + 1))
        assign = self.flow.reaching_assignment(name, fn, 1 << 62)
        value = getattr(assign, "value", None)  # (None, or the marker of a name assigned differently by branch)
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)) and depth < 3:
            # `hf_models = [model.enc_dec.enc_dec for model in models]`: each element is part of a parameter's
            inner = value.for_in
            element = value.elt
            while isinstance(element, (cst.Subscript, cst.Attribute)):
                element = element.value
            return (isinstance(element, cst.Name) and isinstance(inner.target, cst.Name) and element.value == inner.target.value
                    and isinstance(inner.iter, cst.Name) and inner.iter.value in fn.params and inner.iter.value not in ("self", "cls"))
        while isinstance(value, (cst.Subscript, cst.Attribute)):
            value = value.value
        if isinstance(value, cst.Call) and dotted_name(value.func) == "getattr" and value.args:
            value = value.args[0].value
        return isinstance(value, cst.Name) and value.value in fn.params and value.value not in ("self", "cls")

    def _lightning_instance(self, name: str, call: CallInfo) -> bool:
        """`name` holds an instance of a LightningModule subclass of the project (LaMa's training module)."""
        inst = self.flow.instance_of(cst.parse_expression(name), call.function, call.context.order)
        return inst is not None and inst.cls is not None and _lightning_class(self.training.project, inst.facts, inst.cls)

    def _subclasses_set_eval(self, cls, model: str, skip: FunctionInfo) -> bool:
        """The class leaves `model` to its subclasses (`self._encoder = None  # mock objects`), and every
        subclass that fills it leaves it in eval mode (galaxy-zoo-generation's trainers load a frozen
        feature encoder with `.eval()` for their metrics)."""
        project = self.training.project
        if project is None or not model.startswith("self.") or model.count(".") != 1:
            return False
        if any(a.targets == (model,) and not is_none(a.value) and not _moves_itself(a.value, model)
               for m in cls.methods.values() for a in m.assigns):
            return False  # (`def cuda(self): self.model = self.model.cuda()` moves what a subclass put there)
        filling = [
            (facts, sub) for facts, sub in project.subclasses_of(self.facts, cls)
            if any(model in a.targets for m in sub.methods.values() for a in m.assigns)
        ]
        return bool(filling) and all(self._class_sets_eval(facts, sub, model, skip, 0) for facts, sub in filling)

    def _class_sets_eval(self, facts, cls, model: str, skip: FunctionInfo, depth: int, by_name_only: bool = False) -> bool:
        """Some method of the class, not itself an evaluation pass, leaves `model` in eval mode when it
        returns (`load_best()`; not `vali()` that ends with `self.model.train()`: a test() run after
        train() finds the model training)."""
        judge = self.for_file(facts)
        if _set_by_computed_name(cls, model):
            return True  # `setattr(self, names[i], m)` then `self.models[i].eval()`: which attribute is which is not in the code
        holders = _holders_of(facts, cls, model)
        for m in cls.methods.values():
            runs = judge.model_runs(m) if m is not skip else []
            if not runs and m is not skip and _EVAL_NAME.search(m.name):
                # drugai's `evaluate_epoch`: `self.model.eval()`, then `self.evaluate_step(batch)` runs it
                runs = [r for c in m.calls if c.receiver == "self" and c.method in cls.methods and cls.methods[c.method] is not m
                        for r in judge.model_runs(cls.methods[c.method])]
            if m is skip or runs and m.name != "__init__" and (
                _EVAL_NAME.search(m.name) or any(r.model and within(r.model, model) for r in runs)
            ):
                # another evaluation pass (`predict()` beside `test()`) runs after, not before; so does a
                # method that switches this very model and runs it (rlkit's `dump_samples()`, called after
                # `test_epoch()`): its switch serves its own pass. (`__init__` runs before everything, even
                # when it warms the model up: face-alignment's compile run)
                continue
            for c in m.calls:
                # (`net = getattr(self, "net" + name); net.eval()` for every name: a GAN zoo's `eval()`)
                every = (not by_name_only and c.method == "eval" and model.startswith("self.")
                         and judge._picked_by_name(c.receiver or "", m, c.context.order))
                receiver = c.receiver or _moved_receiver(c)  # (`self.model.to(self.device).eval()` in `__init__`)
                # (`self.model.eval_mode()`: a wrapper's own switch, ns_vqa's attribute network in rl-bullet)
                switch = c.method == "eval" or bool(c.method and _EVAL_MODE_API.match(c.method)) and not c.node.args
                # (`self.models = [self.netG1, self.netG2]` ... `self.models[i].eval()`: an element of a list holding it)
                listed = switch and model.startswith("self.") and _switches_listed_element(c, cls, model)
                # (`self.edge_model.generator.eval()`: the part of the model that has a mode, switched by choice,
                # as `_last_mode` takes a child's eval() within one function)
                child = c.method == "eval" and receiver is not None and receiver != model and within(receiver, model)
                # (`self.G.freeze()` on a LightningModule: Lightning's freeze() is `eval()` plus requires_grad off)
                frozen = c.method == "freeze" and not c.node.args and receiver in holders and judge._lightning_instance(receiver, c)
                if every or listed or child or frozen or (switch and receiver in holders) or (c.method == "train" and _is_false_arg(c.node)):
                    if judge._last_mode(m, model, 1 << 62) != "train":
                        return True
            for a in m.assigns:  # `self.inception, self.deeplab = create_metric_models(opt)`, each in eval mode
                if len(a.targets) > 1 and model in a.targets and isinstance(a.value, cst.Call) and judge._made_in_eval_mode(a.value, m):
                    return True
            assigned = [a for a in m.assigns if a.targets == (model,)]
            left = judge._last_mode(m, model, 1 << 62) if assigned else None  # the mode the method leaves it in
            for a in assigned if left != "train" else []:  # `model.eval(); self.model = model.to(device)` in `__init__`
                # (`self.net = torch.compile(net) if mode else net`: the model either way)
                sides = [a.value.body, a.value.orelse] if isinstance(a.value, cst.IfExp) else [a.value]
                held = {judge._wrapped_by(side) for side in sides}
                if len(held) == 1 and None not in held and judge._last_mode(m, held.pop(), a.context.order) == "eval":
                    return True
                if a.value is not None and left in ("eval", None) and judge._made_in_eval_mode(a.value, m):
                    # `self.model = InceptionV3().cuda().eval()`, then maybe wrapped in DDP; `self.net =
                    # self._load_native(...)`, a loader that ends with `net.eval(); return net` (face-alignment)
                    return True
        project = self.training.project
        for base, written in zip(cls.bases, cls.written_bases):
            if base in ("object", "") or base.startswith(("typing.", "abc.")) or depth > 4:
                continue  # Protocol, ABC, Generic: no behaviour of their own
            if base.startswith("torch.nn.") and _switches_itself(cls):
                continue  # nn.Module switches nothing by itself in a module that trains itself (ECAPA-TDNN)
            found = lookup_class(project, facts, written)
            if found is None:
                # a base class from a library (a serving handler's base sets eval itself); not when this class
                # trains the model itself (pytvision's `NeuralNetAbstract` subclass: `training()` switches
                # `self.net.train()` and steps, and `evaluate()` runs after it)
                return not _trains_model(cls, holders - {"self"})
            if self._class_sets_eval(found[0], found[1], model, skip, depth + 1, by_name_only):
                return True
        return False

    def _constructed_in_eval(self, cls, model: str, depth: int) -> bool:
        """`self.model = model` in `__init__`, and every `Predictor(model, ...)` is built after
        `model.eval()` (or hands in something that is no model: `decoder = None` /
        `decoder = model.head.decode_outputs`)."""
        init = cls.methods.get("__init__")
        if init is None or depth > 3:
            return False
        param = cls.stored_params().get(model)  # (`model` is always a `self.` attribute here)
        if param is None and model.startswith("self.") and model.count(".") == 1:
            # `super().__init__(model=model)`: the base class stores it (pytorch-ood's `RMD(Mahalanobis)`)
            param = next(
                (a.value.value for c in init.calls if c.method == "__init__" and calls_on_super(c.node)
                 for a in c.node.args if a.keyword is not None and a.keyword.value == model[5:]
                 and isinstance(a.value, cst.Name) and a.value.value in init.params),
                None,
            ) or self.flow.param_stored_by_base(cls, model)  # `super().__init__(model, device, ...)`
        if param is None:
            return False
        sites = [(self, site) for site in self.flow.call_sites(init)]
        project = self.training.project
        if not sites and project is not None:
            # `RayEvalRuntime(env, policy)` built in another file of the project, or by a framework we cannot
            # see: with no construction anywhere, the model handed in is the constructor's caller's to set
            sites = [(self.for_file(o), site) for o, site in project.callers_elsewhere(self.facts, cls.name)
                     if not is_test_file(o.path)]
            if not sites:
                return True
        if not sites:
            return False
        for judge, site in sites:
            arg = self.flow.argument_for(init, param, site)
            name = _model_named(arg)
            if name is None:
                return False
            values = judge.flow.reaching_candidates(name, site.function, site.context.order)
            if values and all(is_none(v.value) or isinstance(v.value, cst.Attribute) for v in values):
                continue  # not a model at all
            # (what counts is the mode where the object is used: `softmax = MaxSoftmax(model)`, then
            # `model.eval()`, then `softmax(x)` per batch)
            if not all(judge.eval_mode_set_before(name, point, depth + 1) for point in _uses_of_built(site) or [site]):
                return False
        return True

    def for_file(self, facts) -> "Evaluation":
        """The judge of another file of the project (this one, for this file's own facts)."""
        if facts is self.facts:
            return self
        from torchdoctor.context import LintContext

        return LintContext(facts, self.training.project).evaluation

    @staticmethod
    def _within_loop_of(switch: CallInfo, fn: FunctionInfo, at: int) -> bool:
        """The statement numbered `at` runs inside the loop that holds `switch` (the same iteration's name)."""
        loop = switch.context.loop
        here = next((c for c in fn.calls if c.context.order == at), None)
        return loop is not None and here is not None and here.context.loop is not None and loop.encloses(here.context.loop)

    def _last_mode(self, fn: FunctionInfo, model: str, before: int) -> str | None:
        """"eval" or "train": the mode the last switches of `model` (or a parent) in fn leave it in at
        `before`, if any. Path by path: after `if warm_up: warmup(net1) else: train(net2, net1)` (the
        helper evals its second model), net1 is training on the warm-up path, so the answer is "train"."""
        events = []  # (order, mode, branches)
        # (`encoder = self.encoder.module if multi_gpu else self.encoder`: the run's name is an alias)
        names = {model, self.training.canonical(model, fn) or model}
        # (`encoder = self.encoder[0].module if multi_gpu else self.encoder[0]`: an element of a list of models)
        names |= self._element_holders(model, fn, before) or set()
        inner = self._wrapped_attribute(fn, model)
        if inner is not None:  # `self.model_dp`, a DataParallel around `self.model`: one network, one mode
            names.add(inner)
        names |= self._kept_by_objects(fn, model, before)
        names |= _kept_from_same_parameter(fn, model)
        walked = self._walked_containers(fn)
        for c in fn.calls:
            receiver = walked.get(id(c.node)) or c.receiver or _switched_item(c) or _moved_receiver(c)
            if c.context.order >= before or receiver is None:
                continue
            receivers = {receiver, self.training.canonical(receiver, fn) or receiver}  # (`model = model.module` aliases model to itself)
            if c.receiver and receiver != c.receiver and self._within_loop_of(c, fn, before):
                receivers.add(c.receiver)  # `for model in models: model.eval(); ...; model(image)`: the loop's own name too
            wrapped = self.wrapped_module(receiver, fn, c.context.order)
            if wrapped is not None:  # `ddp_model = DDP(model)` ... `ddp_model.eval()` switches `model` too
                receivers.add(wrapped)
            # (`self.modules.netG.eval()` before running `self.modules`: the author switched the part
            # that has a mode, by choice; a child switched back to training says nothing of the rest)
            child = c.method == "eval" and any(within(r, m) for r in receivers for m in names)
            if not (child or any(within(m, r) or r == "self" for r in receivers for m in names)):
                continue
            if not self._switch_reaches(c, model):
                continue
            mode = _switch_mode(c, fn)
            if mode is not None:
                events.append((c.context.order, mode, c.context.branches))
        use = self.facts.branches_at.get(before, ())
        for c in fn.calls:  # `with inference_context(model):` / `set_eval(model)`: a helper that calls eval()
            # (only on the use's own path: `if report_cosine: report_cosine_sims(trainer)` evals as a side
            # effect, and says nothing of the mode when that report is skipped; an explicit `model.eval()`
            # under a flag such as `if not retain_dropout:` is a choice, and is taken as one)
            if c.context.order < before and self._on_path_for(model, c.context.branches, use) and (
                any(self._helper_evals(c, m) for m in names) or _asked_for_evaluation(c) and self._returned_callable(c, names)
            ):
                events.append((c.context.order, "eval", c.context.branches))
        for a in fn.assigns:  # `net = DataParallel(net).eval().to(d)`, `model = load_model(cfg)` that evals it
            covers = [i for i, t in enumerate(a.targets) if within(model, t)]
            value = a.value
            if isinstance(value, cst.Tuple) and len(value.elements) == len(a.targets) and covers:
                value = value.elements[covers[0]].value  # `netg, netd = NetG(opt).eval(), NetD(opt).eval()`
            if a.context.order < before and covers and value is not None and (
                self._made_in_eval_mode(value, fn) or self._wraps_evaluated(value, fn, a.context.order)
            ):
                events.append((a.context.order, "eval", a.context.branches))
        for a in fn.assigns:  # `self.training = False` on a class whose `training` setter switches its modules
            mode = _training_property_mode(fn, a, model)
            if mode is not None and a.context.order < before:
                events.append((a.context.order, mode, a.context.branches))
        # (an eval under an `if` the place is not in leaves the path around it open: `train_a_epoch()`, then
        # `if dataset == "Human36M": evaluation_withgt()` in the epoch loop, and `evaluation()` after it)
        latest = max((e[0] for e in events if all(b in use for b in e[2])), default=-1)
        for c in fn.calls:  # a helper that puts the model back into training mode
            if c.context.order < before and (c.context.order > latest or c.context.branches):
                callee = self._callee(c)
                if callee is not None and self._helper_trains(callee, c, model):
                    events.append((c.context.order, "train", c.context.branches))
        if before < 1 << 62 and _mode_chosen_by_parameter(fn, events, self.facts.if_tests):
            # `if train_mode: net.train() else: net.eval()` before the pass: the caller asks for the mode it
            # wants (not what the method leaves behind: RIFE's `update(training=...)` may leave it training)
            return "eval"
        if _saved_mode_restored(events, self.facts.if_tests):
            return "eval"  # the mode the model had, restored: no claim is made
        return _mode_on_every_path(events, use)


# the functions whose model runs are being found (`Evaluation.model_runs`), across files
_RUNS_BEING_FOUND: set = set()


def _place_of(facts, fn: FunctionInfo) -> tuple:
    """Where fn is written: the same function whichever parse of its file is asking (the linted file's
    own, or the project index's, under a relative or a resolved path)."""
    return _resolved(facts.path), fn.defined_at, fn.name


@lru_cache(maxsize=4096)
def _resolved(path: str) -> str:
    return os.path.realpath(path)


_SAMPLING_FLAG = re.compile(r"sampl|mc_|bayes", re.I)  # `if return_samples:`: draws in training mode on purpose
_VERSION_NAME = re.compile(r"(^|[._])(__version__|torch_ver|torch_version|TORCH_VERSION)$")


# bases that say nothing about what a class is
_PLAIN_BASES = {"object", "ABC", "abc.ABC", "Generic", "typing.Generic", "Protocol", "typing.Protocol"}
# a torch.nn layer class (`torch.nn.Linear`, `torch.nn.Sequential`), not a function of torch.nn
_TORCH_LAYER = re.compile(r"^torch\.nn\.(modules\.\w+\.)?[A-Z]\w*$")


def _kept_from_same_parameter(fn: FunctionInfo, model: str) -> set[str]:
    """`{"model"}` for `self.model` in MMSA's `do_test(self, model, ...)`, which calls `model.eval()` and runs
    `self.model`, where `do_train(self, model, ...)` of the same class kept `self.model = model`: the caller
    hands both methods the same network under the parameter's name."""
    cls = fn.cls
    if cls is None or not model.startswith("self.") or model.count(".") != 1:
        return set()
    return {
        a.value.value for m in cls.methods.values() if m is not fn for a in m.assigns
        if a.targets == (model,) and isinstance(a.value, cst.Name) and a.value.value in m.params and a.value.value in fn.params
    }


def _getattr_built_parameter(fn: FunctionInfo) -> str | None:
    """`module` for a function whose every return is `getattr(module, module_name)(*args, **kwargs)`."""
    params = set(fn.params) - {"self", "cls"}
    found = set()
    for ret, _ in fn.returns:
        value = ret.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Call) and dotted_name(value.func.func) == "getattr"
                and value.func.args and isinstance(value.func.args[0].value, cst.Name)):
            return None
        found.add(value.func.args[0].value.value)
    return found.pop() if len(found) == 1 and found <= params else None


def _params_kept_on_self(init: FunctionInfo) -> dict[str, str]:
    """`self.model = model` (or `model.to(self.args.device)`) in `__init__`: attribute -> the parameter it keeps."""
    kept = {}
    for a in init.assigns:
        target = a.targets[0] if len(a.targets) == 1 else ""
        param = under_moves(a.value) if a.value is not None else None
        if target.startswith("self.") and target.count(".") == 1 and isinstance(param, cst.Name) and param.value in init.params:
            kept[target] = param.value
    return kept


def _moves_itself(value: cst.BaseExpression | None, attribute: str) -> bool:
    """`self.model.cuda(device)`, `self.model.to(device)`: the attribute's own value, moved."""
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("cuda", "to", "cpu")
            and dotted_name(value.func.value) == attribute)


def _comprehension_walk(fn: FunctionInfo, name: str) -> str | None:
    """The list a comprehension of fn walks with `name` as its variable (`models` for `[model(x) for model
    in models]`, also through `enumerate(...)`), when `name` is no variable of fn itself."""
    if fn.node is None or name in fn.params or name in fn.assigned_names():
        return None
    found: list[str] = []

    class _V(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fn.node  # (not the comprehensions of nested functions)

        def visit_CompFor(self, node: cst.CompFor) -> None:
            target, walked = node.target, node.iter
            if isinstance(walked, cst.Call) and dotted_name(walked.func) == "enumerate" and walked.args and isinstance(target, cst.Tuple):
                walked = walked.args[0].value
                target = target.elements[-1].value if target.elements else target
            if isinstance(target, cst.Name) and target.value == name and isinstance(walked, cst.Name):
                found.append(walked.value)

    fn.node.visit(_V())
    return found[0] if len(set(found)) == 1 else None


def _legacy_volatile_branch(call: CallInfo) -> bool:
    """`if torch_ver == "0.3": image = Variable(image, volatile=True); eval_batch(model, image)`: the branch
    for PyTorch 0.3, where `volatile=True` was the way to turn gradients off (the other branch uses no_grad)."""
    if not any(_VERSION_NAME.search(n) for test in call.context.conditions for n in names_in(test)):
        return False
    branches = call.context.branches
    return any(
        (c.dotted or "").rsplit(".", 1)[-1] == "Variable" and c.context.branches == branches
        and any(a.keyword is not None and a.keyword.value == "volatile" for a in c.node.args)
        for c in call.function.calls
    )


def _tests_choosing_mode(events: list, if_tests: dict) -> list:
    """The tests of the `if`s that set training mode in one branch and eval mode in the other."""
    trains = {b for _, mode, branches in events if mode == "train" for b in branches}
    evals = {b for _, mode, branches in events if mode == "eval" for b in branches}
    return [if_tests[i] for i, branch in trains if (i, 1 - branch) in evals and if_tests.get(i) is not None]


def _mode_chosen_by_parameter(fn: FunctionInfo, events: list, if_tests: dict) -> bool:
    """Both modes set explicitly, in the two branches of an `if` on one of the function's parameters
    (OFA's `validate(..., train_mode=False)`): a mode the caller picks, not one left behind."""
    return any(names_in(test) <= set(fn.params) for test in _tests_choosing_mode(events, if_tests))


def _saved_mode_restored(events: list, if_tests: dict) -> bool:
    """Both modes set explicitly, in the two branches of an `if` on a mode kept from before (torchattacks'
    `if self.training: self.model.train() else: self.model.eval()`, with `self.training = model.training`
    from construction): the mode the model had, restored."""
    return any(_SAVED_MODE.search(dotted_name(test) or "") for test in _tests_choosing_mode(events, if_tests))


_SAVED_MODE = re.compile(r"^self\.\w*(training|train_mode|mode)\w*$", re.I)  # `self.training`, `self.was_training`


def _mode_on_every_path(events: list, use: tuple) -> str | None:
    """The mode that `events` (order, mode, branches) leave at a place inside the branches `use`:
    the last event's, unless it sits in a branch of an `if` the place is not in; then every branch of
    that `if` is followed (and the path around it, when one branch has no event), and any path that
    ends in "train" makes the answer "train"."""
    events = [e for e in events if not exclusive_branches(e[2], use)]
    if not events:
        return None
    last = max(events, key=lambda e: e[0])
    open_branch = next((b for b in last[2] if b not in use), None)
    if open_branch is None:
        return last[1]
    if_id = open_branch[0]
    inside = [e for e in events if any(b[0] == if_id for b in e[2])]
    indices = {b[1] for e in inside for b in e[2] if b[0] == if_id}
    modes = {_mode_on_every_path([e for e in inside if (if_id, j) in e[2]], use + ((if_id, j),)) for j in indices}
    if len(indices) < 2:  # the path that takes no branch with an event
        first = min(e[0] for e in inside)
        modes.add(_mode_on_every_path([e for e in events if e not in inside and e[0] < first], use))
    if "train" in modes:
        return "train"
    return "eval" if "eval" in modes else None


def _holders_of_method_value(method: FunctionInfo) -> list[FunctionInfo]:
    """The methods of its class that take `self.<method>` as a value, uncalled (`eval_func =
    self._neg_sample_batch_eval`)."""
    cls = method.cls
    holders = []
    for other in cls.methods.values():
        if other is method or other.node is None:
            continue
        called = {id(c.node.func) for c in other.calls}
        found = []

        class _Refs(cst.CSTVisitor):
            def visit_Attribute(self, node: cst.Attribute) -> None:
                if node.attr.value == method.name and isinstance(node.value, cst.Name) and node.value.value == "self" and id(node) not in called:
                    found.append(node)

        other.node.body.visit(_Refs())
        if found:
            holders.append(other)
    return holders


def calls_in_loader_comprehensions(fn: FunctionInfo) -> set[int]:
    """Ids of the calls inside comprehensions that iterate a loader or held-out data, run once per batch like
    a loop's: `outputs = [model.validation_step(b) for b in val_loader]` (the Jovian-style `evaluate`),
    `[(torch.argmax(self.model(x)), y) for (x, y) in test_data]` (Nielsen-style trainers)."""
    if fn.node is None:
        return set()
    found: set[int] = set()

    class _Finder(cst.CSTVisitor):
        def _comprehension(self, node) -> None:
            loader = (dotted_name(unwrap_iter(node.for_in.iter)) or "").rsplit(".", 1)[-1]
            if _ANY_LOADER.search(loader) or _EVAL_LOADER.search(loader):
                found.update(id(c) for c in calls_within(node))

        def visit_ListComp(self, node: cst.ListComp) -> None:
            self._comprehension(node)

        def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
            self._comprehension(node)

    fn.node.body.visit(_Finder())
    return found


def _returns_first(fn: FunctionInfo) -> bool:
    """The function's first statement (after its docstring) is a bare `return`: the rest is dead code."""
    body = fn.node.body.body if fn.node is not None and isinstance(fn.node.body, cst.IndentedBlock) else []
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue
            return isinstance(small, cst.Return) and small.value is None
        return False
    return False


def _drawn_from_loader(fn: FunctionInfo) -> list[int]:
    """Where fn takes one batch from a loader: `batch = next(iter(dataloader))`."""
    found = []
    for a in fn.assigns:
        value = a.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "next" and value.args):
            continue
        inner = value.args[0].value
        if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "iter" and inner.args:
            inner = inner.args[0].value
        source = (dotted_name(inner) or "").rsplit(".", 1)[-1]
        if _ANY_LOADER.search(source) or _EVAL_LOADER.search(source) and "load" in source.lower():
            found.append(a.context.order)
    return found


def _paired_names(evaluating: str, training: str) -> bool:
    """`fullsubnet_validate` and `fullsubnet_train`: the same name with its evaluation word for "train"."""
    stem = re.sub(r"(validate|validation|valid|val|evaluate|evaluation|eval|test)", "", evaluating, count=1)
    return stem != evaluating and stem.strip("_") != "" and stem == training.replace("train", "", 1)


def _no_grad_at(helper: FunctionInfo, call: CallInfo) -> bool:
    """Gradients are off where `call` runs in helper: a no_grad decorator or `with` block around it."""
    return any(is_no_grad_name(d) for d in helper.decorators) or any(is_no_grad_name(w) for w in call.context.withs)


def _calls_param(helper: FunctionInfo, param: str) -> bool:
    """The helper runs what arrives as `param`: `def greedy_generate(model, ...): model(ids)`."""
    return any(inner.dotted == param for inner in helper.calls)


def _unwrap_call_model(call: CallInfo) -> str | None:
    """`model` in `accelerator.unwrap_model(model)(x)`: a model called through the call that unwraps it."""
    return _unwrapped_model(call.node.func)


def _unwrapped_model(inner: cst.BaseExpression) -> str | None:
    """`model` in `accelerator.unwrap_model(model)`."""
    if not isinstance(inner, cst.Call) or not inner.args or inner.args[0].keyword is not None:
        return None
    if "unwrap" not in (dotted_name(inner.func) or "").rsplit(".", 1)[-1]:
        return None
    return dotted_name(inner.args[0].value)


def _hugging_face_loader(qualified: str | None) -> bool:
    """`X.from_pretrained(...)` by transformers, diffusers or peft, which return the model in eval mode;
    also `text_encoder_cls.from_pretrained(...)` on a class a helper picked (qualified None)."""
    return qualified is None or qualified.split(".", 1)[0] in ("transformers", "diffusers", "peft")


def _never_held(cls, model: str) -> bool:
    """No method of a class without base classes assigns `self.encoder`: a helper asking for
    `model.encoder` of whatever it is handed means some other class (FastChat's RWKV wrapper hands
    itself to a generate loop written for encoder-decoder models), so nothing is known of its mode."""
    attr = ".".join(model.split(".")[:2])
    if cls.written_bases and cls.written_bases != ("object",):
        return False
    return not any(attr in a.targets for m in cls.methods.values() for a in m.assigns)


_DRAWING = frozenset({"sample", "rsample", "randn", "rand", "randint", "normal", "randn_like", "rand_like"})


def _all_work_without_grad(method: FunctionInfo) -> bool:
    """The forward is decorated with no_grad, or runs every layer and method of its own under it: not
    VICRegL's, which computes only its logged metrics under no_grad."""
    if any(is_no_grad_name(d) for d in method.decorators):
        return True
    work = [c for c in method.calls if (c.dotted or "").startswith("self.")]
    return bool(work) and all(any(is_no_grad_name(w) for w in c.context.withs) for c in work)


_MODULE_UTILITIES = frozenset({
    "eval", "train", "to", "cuda", "cpu", "float", "half", "double", "parameters", "named_parameters", "modules",
    "children", "apply", "state_dict", "load_state_dict", "register_buffer", "zero_grad", "requires_grad_",
})


def _weights_loaded(fn: FunctionInfo, model: str) -> bool:
    """The function loads weights: into the model (`load_state_dict`, `load_weights`) or with `torch.load`."""
    return any(c.method == "load" or c.receiver == model and c.method in ("load_state_dict", "load_weights") for c in fn.calls)


def _branch_without_grad(method: FunctionInfo, param: str, value: str) -> bool | None:
    """The method's `if <param> == '<value>':` branch turns gradients off, and calls nothing of its own
    object outside no_grad; None when the method has no such branch."""
    found = []

    class _Branches(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            test = node.test
            if (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == param
                    and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal)
                    and isinstance(test.comparisons[0].comparator, cst.SimpleString)
                    and test.comparisons[0].comparator.evaluated_value == value):
                found.append(node.body)

    if method.node is None:
        return None
    method.node.visit(_Branches())
    if len(found) != 1:
        return None if not found else False
    inside = {id(node) for node in calls_within(found[0])}
    calls = [c for c in method.calls if id(c.node) in inside]
    off = [any(is_no_grad_name(w) for w in c.context.withs) for c in calls]
    return any(off) and all(
        grad_off for c, grad_off in zip(calls, off) if (c.dotted or "").startswith("self.") or c.receiver == "self"
    )


def _keeps_torch_layers(facts, cls) -> bool:
    """`__init__` stores a torch.nn layer on self (`self.embed = torch.nn.Sequential(...)`), or some
    method registers a buffer or parameter, which only an nn.Module can (NBFNet's torchdrug tasks:
    `self.register_buffer("fact_graph", dataset.graph)` in `preprocess`)."""
    init = cls.methods.get("__init__")
    return init is not None and any(
        len(a.targets) == 1 and a.targets[0].startswith("self.") and isinstance(a.value, cst.Call)
        and bool(_TORCH_LAYER.match(facts.qualify(a.value.func) or ""))
        for a in init.assigns
    ) or any(c.receiver == "self" and c.method in _MODULE_REGISTRATION for m in cls.methods.values() for c in m.calls)


def _runs_own_layers_with_grad(cls, method: FunctionInfo) -> bool:
    """The method calls one of its module's layers outside no_grad, with no decorator turning gradients
    off: `self.encoder(x)`, where the class stores a module as `self.encoder` (not a method, inherited ones
    included, nor a function kept on self such as nnU-Net's `self.inference_apply_nonlin = softmax_helper`)."""
    if cls is None or any(is_no_grad_name(d) for d in method.decorators):
        return False
    built = {  # built, taken from another module (`vt_model.encoder`) or a module handed in (`self.encoder = encoder`)
        a.targets[0] for m in cls.methods.values() for a in m.assigns
        if len(a.targets) == 1 and a.targets[0].startswith("self.") and (
            isinstance(a.value, (cst.Call, cst.Attribute))
            or isinstance(a.value, cst.Name) and a.value.value in m.params and bool(MODEL_NAME.search(a.value.value))
        )
    }
    return any(
        c.dotted in built and c.method not in cls.methods and c.method not in _MODULE_UTILITIES
        and not any(is_no_grad_name(w) for w in c.context.withs)
        for c in method.calls
    )


_TRAINING_FLAG = re.compile(r"^(is_?)?(training|train)$", re.IGNORECASE)


def _gated_by_training_flag(call: CallInfo) -> bool:
    """The call runs only under a test of some module's `.training` flag (or a trainer's own
    `self.isTraining`, which its `eval()` clears)."""
    return any(
        isinstance(n, cst.Attribute) and (n.attr.value == "training" or _TRAINING_FLAG.match(n.attr.value))
        for test in call.context.conditions for n in _attributes_in(test)
    )


def _attributes_in(node: cst.CSTNode) -> list[cst.Attribute]:
    found: list[cst.Attribute] = []

    class _V(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> None:
            found.append(n)

    node.visit(_V())
    return found


def _drawn_in_loop(value: cst.BaseExpression, call: CallInfo) -> bool:
    """`z = self.zdist.sample((b,))` or `z = torch.randn(b, nz)` in the loop of `call`: a latent drawn for
    each batch of samples, not data."""
    if not isinstance(value, cst.Name) or not call.context.loops:
        return False
    loop = call.context.loops[-1]
    return any(
        a.targets == (value.value,) and isinstance(a.value, cst.Call) and loop in a.context.loops
        and (dotted_name(a.value.func) or "").rsplit(".", 1)[-1] in _DRAWING
        for a in call.function.assigns
    )


def _sliced_per_iteration(value: cst.BaseExpression, call: CallInfo) -> bool:
    """The argument is, or is assigned in the call's loop from, a subscript of data by the loop's own
    variable: `x = torch.from_numpy(seis_norm[i:i+1])` in `for i in range(n):`."""
    loop = call.context.loops[-1]
    targets = set(loop.targets)
    values = [value] + [
        a.value for a in call.function.assigns
        if isinstance(value, cst.Name) and a.targets == (value.value,) and a.value is not None and loop in a.context.loops
    ]

    class _Slices(cst.CSTVisitor):
        found = False

        def visit_Subscript(self, node: cst.Subscript) -> None:
            if any(names_in(element.slice) & targets for element in node.slice):
                self.found = True

    finder = _Slices()
    for v in values:
        v.visit(finder)
    return finder.found


def _model_named(arg: cst.BaseExpression | None) -> str | None:
    """The model an argument names: `model`, or `model.module if isinstance(model, DDP) else model`
    (the wrapped model either way, whose mode is the wrapper's)."""
    if isinstance(arg, cst.IfExp):
        return unwrapped_either_way(arg)
    if isinstance(arg, cst.Call) and (dotted_name(arg.func) or "") in ("copy.deepcopy", "deepcopy") and arg.args:
        arg = arg.args[0].value  # (`copy.deepcopy(model)`: a copy keeps the mode of what it copies)
    # (`test(cfg, model.to(device))`: the same module, in the mode it was in)
    return dotted_name(under_moves(arg)) if arg is not None else None


def _one_training_batch(fn: FunctionInfo) -> bool:
    """`batch = next(iter(train_loader)); model(batch.x)` under no_grad: one training batch to set up
    lazy parameters or shapes, not an evaluation."""
    for a in fn.assigns:
        value = a.value
        if isinstance(value, cst.Call) and dotted_name(value.func) == "next" and value.args:
            inner = value.args[0].value
            if isinstance(inner, cst.Call) and dotted_name(inner.func) == "iter" and inner.args:
                if "train" in (dotted_name(inner.args[0].value) or "").lower():
                    return True
    return False


def _loop_source(loop) -> str:
    """What a loop walks, by name: `loader`, or `data_iterator.iterate_ds_data` for a method's batches."""
    if loop.iter_name:
        return loop.iter_name
    it = unwrap_iter(loop.node.iter) if isinstance(loop.node, cst.For) else None
    if isinstance(it, cst.Call) and dotted_name(it.func) == "range" and 1 <= len(it.args) <= 3:
        # `for i in range(len(self.val_loader)): sample = self.val_loader[i]`; in batches,
        # `for i in range(0, len(test_dataset), args.batch_size): cur = test_dataset[i: i + bs]`
        bound = it.args[0].value if len(it.args) == 1 else it.args[1].value
        if isinstance(bound, cst.Call) and dotted_name(bound.func) == "len" and bound.args:
            return dotted_name(bound.args[0].value) or ""
    walked = []  # `sorted(os.listdir(opt.test_data_path))`: the listing and the folder it reads
    while isinstance(it, cst.Call):
        walked.append(dotted_name(it.func) or "")
        it = it.args[0].value if it.args else None
    return " ".join(walked + [dotted_name(it) or ""] if it is not None else walked)


def _walk_of(loop, head: str) -> str | None:
    """The name a `for` loop walks with `head` as its variable: `encoders` for `for i, enc in
    enumerate(encoders)`, for `for p, tok, enc in zip(prompts, tokenizers, encoders)` and for
    `for name, enc in encoders.items()`."""
    it, target = loop.node.iter, loop.node.target
    while isinstance(it, cst.Call) and dotted_name(it.func) == "enumerate" and it.args and isinstance(target, cst.Tuple):
        it, target = it.args[0].value, target.elements[-1].value
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in ("items", "values"):
        # `for name, model in target_models.items()`: the dict's values
        value = target.elements[-1].value if isinstance(target, cst.Tuple) and it.func.attr.value == "items" else target
        walked = dotted_name(it.func.value)
        return walked if dotted_name(value) == head and walked != "self" else None
    if isinstance(it, cst.Call) and dotted_name(it.func) == "zip" and isinstance(target, cst.Tuple):
        names = [dotted_name(e.value) for e in target.elements]
        if head not in names or len(it.args) != len(names):
            return None
        it = it.args[names.index(head)].value
    walked = dotted_name(unwrap_iter(it))
    return walked if walked != "self" else None


def _keyed_loader(loop) -> str:
    """The key of a loader taken from a dict by a literal: `val` in `for batch in tqdm(dataloaders['val'])`."""
    it = unwrap_iter(loop.node.iter) if isinstance(loop.node, cst.For) else None
    if isinstance(it, cst.Subscript) and dotted_name(it.value) and len(it.slice) == 1:
        key = it.slice[0].slice
        if isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString):
            return f"{dotted_name(it.value)}_{key.value.evaluated_value}"
    return ""


def iterates_data(loop) -> bool:
    """`for x, y in loader` or `range(0, n, batch_size)`, not `for _ in range(2): model(im)` (warm-up runs)
    or a `while` of retries."""
    if not isinstance(loop.node, cst.For):
        return False
    it = loop.node.iter
    while isinstance(it, cst.Call) and dotted_name(it.func) in ("enumerate", "tqdm", "tqdm.tqdm", "iter") and it.args:
        it = it.args[0].value
    if isinstance(it, cst.Call) and dotted_name(it.func) == "range":
        return len(it.args) == 3  # `range(0, len(x), batch_size)` walks data in batches; `range(2)` repeats
    return True


def walks_data(loop) -> bool:
    """`iterates_data`, or a range as long as some data: `for k in range(len(dataset_val))`,
    `range(x_valid.shape[0] // batch_size)` (not `range(n_classes)`)."""
    if iterates_data(loop):
        return True
    it = loop.node.iter if isinstance(loop.node, cst.For) else None
    if not (isinstance(it, cst.Call) and dotted_name(it.func) == "range"):
        return False
    sized = [c for a in it.args for c in calls_within(a.value) if dotted_name(c.func) == "len"]
    shaped = [n for a in it.args for n in names_in(a.value) if n.endswith((".shape", ".size"))]
    return bool(sized or shaped)


def _counts_steps(loop) -> bool:
    """`for t in range(self.T)`, `for step in reversed(range(steps))`: a loop over step numbers."""
    it = loop.node.iter if isinstance(loop.node, cst.For) else None
    if isinstance(it, cst.Call) and dotted_name(it.func) == "reversed" and it.args:
        it = it.args[0].value
    return isinstance(it, cst.Call) and dotted_name(it.func) == "range"


def repeats_one_input(call: CallInfo) -> bool:
    """`for i in range(0, 3): _ = model(x)`: warm-up runs before timing, the same input again and
    again, not a pass over data (the loop only counts repetitions: its body never reads the counter,
    and the call reads nothing the loop changes)."""
    loop = call.context.loop
    if loop is None or not isinstance(loop.node, cst.For) or iterates_data(loop):
        return False  # (`for x in loader`, `range(0, n, batch_size)`: data; a `for _ in range(k)` is left)
    if names_in(loop.node.body) & set(loop.targets):
        return False  # `for i in range(num_batches): batch = images[i * b:(i + 1) * b]`: walks the data
    changed = {t for a in loop.assigns for t in a.targets}
    return not any(names_in(a.value) & changed for a in call.node.args)


def _rooted_at_self(func: cst.BaseExpression) -> bool:
    """`self._models[name].eval`, `self.model.eval`: a method of something the instance holds."""
    node = func.value if isinstance(func, cst.Attribute) else func
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return isinstance(node, cst.Name) and node.value == "self"


def _is_eval_word(value: cst.BaseExpression) -> bool:
    return (isinstance(value, cst.SimpleString) and value.evaluated_value in ("eval", "test")) or (
        isinstance(value, cst.Name) and value.value == "False"
    )


def _unpacked_literal(assign, name: str):
    """`net, proj = unwrapped.net, unwrapped.proj`: the element of the literal that `name` receives."""
    node = getattr(assign, "node", None)
    if not isinstance(node, cst.Assign) or len(node.targets) != 1 or not isinstance(node.value, cst.Tuple):
        return None
    target = node.targets[0].target
    if not isinstance(target, cst.Tuple) or len(target.elements) != len(node.value.elements):
        return None
    for t, v in zip(target.elements, node.value.elements):
        if dotted_name(t.value) == name:
            return v.value
    return None


def _holds(value: cst.BaseExpression | None, call: cst.Call) -> bool:
    """`out, y = self.predict(b)`, `return self.predict(b)[0]`: the value is the call's result."""
    while isinstance(value, (cst.Subscript, cst.Attribute)):
        value = value.value
    return value is call


def _sets_own_eval(method: FunctionInfo) -> bool:
    """`def predict(self, imgs): self.eval() ...`: a model method that switches itself to eval mode,
    so its callers need not. (One that only disables gradients still runs in the caller's mode.)"""
    return any(c.method == "eval" and c.receiver == "self" for c in method.calls)


def _enters_no_grad(call: cst.Call) -> bool:
    """`stack.enter_context(torch.no_grad())`."""
    return any(
        isinstance(a.value, cst.Call) and is_no_grad_name(dotted_name(a.value.func)) for a in call.args
    )


def _trains_receiver(callee: FunctionInfo, receiver: str | None) -> bool:
    return any(
        i.method == "train" and not _is_false_arg(i.node) and i.receiver is not None
        and (receiver is None or within(i.receiver, receiver))
        for i in callee.calls
    )


def _moved_receiver(call: CallInfo) -> str | None:
    """`model.to(device).eval()`: the model switched at the end of a chain of moves."""
    if call.method not in ("eval", "train") or not isinstance(call.node.func, cst.Attribute):
        return None
    inner = call.node.func.value
    return dotted_name(under_moves(inner)) if isinstance(inner, cst.Call) else None


def _switched_item(call: CallInfo) -> str | None:
    """The receiver of a switch on an item of a dict of models (StyleTTS2's Munch of networks, read back
    as `model.text_encoder`): `model` for `[model[key].eval() for key in model]` or
    `for k in nets: nets[k].train()`, every network it holds; `model.decoder` for `model["decoder"].eval()`."""
    func = call.node.func
    if call.method not in ("eval", "train") or not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Subscript):
        return None
    index = func.value.slice[0].slice if len(func.value.slice) == 1 else None
    held = dotted_name(func.value.value)
    if held is None or not isinstance(index, cst.Index):
        return None
    if isinstance(index.value, cst.Name):
        return held
    key = index.value.evaluated_value if isinstance(index.value, cst.SimpleString) else None
    return f"{held}.{key}" if isinstance(key, str) and key.isidentifier() else None


def _values_of(node: cst.BaseExpression) -> str | None:
    """`self.networks.values()` (or `.items()`) -> `self.networks`."""
    node = unwrap_iter(node)
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("values", "items"):
        return dotted_name(node.func.value)
    return None


def _walked_containers(fn: FunctionInfo) -> dict[int, str]:
    """id(switch call) -> the container it walks, for `.eval()`/`.train()` on the variable of a loop or
    comprehension over a list of models: `for enc in self.encoders: enc.eval()`,
    `[dec.eval() for dec in self.decoder]`."""
    found: dict[int, str] = {}
    for c in fn.calls:
        if c.method not in ("eval", "train") or not isinstance(c.node.func, cst.Attribute):
            continue
        var = c.node.func.value
        if not isinstance(var, cst.Name):
            continue
        for loop in reversed(c.context.loops):
            walked = loop.iter_name or (_values_of(loop.node.iter) if isinstance(loop.node, cst.For) else None)
            if isinstance(loop.node, cst.For) and var.value in loop.targets and walked:
                found[id(c.node)] = walked  # (`for model in self.networks.values(): model.eval()`: OLTR's dict)
                break

    class _Comprehensions(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fn.node

        def _comprehension(self, node) -> None:
            elt = node.elt
            target, it = node.for_in.target, dotted_name(node.for_in.iter)
            if (isinstance(elt, cst.Call) and isinstance(elt.func, cst.Attribute) and elt.func.attr.value in ("eval", "train")
                    and isinstance(elt.func.value, cst.Name) and isinstance(target, cst.Name)
                    and elt.func.value.value == target.value and it):
                found[id(elt)] = it

        visit_ListComp = visit_GeneratorExp = visit_SetComp = _comprehension

    if not fn.is_module and any(c.method in ("eval", "train") for c in fn.calls):
        fn.node.visit(_Comprehensions())
    return found


_ACTOR_NAME = re.compile(r"^(act|actor|policy|pi|agent)(_\w+)?$")
_ENVIRONMENT = re.compile(r"(^|_)envs?(_\w+)?$|^environment$")


def _environment_rollout(call: CallInfo) -> bool:
    """The run acts in an environment: it hands one to a helper (`get_rewards_and_steps(env, actor)`), or
    its function steps one (`state = env.step(action)[0]`)."""
    if any(_ENVIRONMENT.search((dotted_name(a.value) or "").rsplit(".", 1)[-1]) for a in call.node.args):
        return True
    return any(
        c.method == "step" and _ENVIRONMENT.search((c.receiver or "").rsplit(".", 1)[-1]) for c in call.function.calls
    )


def _switches_others_only(fn: FunctionInfo, model: str, before: int, heads: set[str]) -> bool:
    """fn switches other networks rooted at `heads` to eval mode before the pass, but neither `model` nor
    anything holding it: networks of its object (`self.netG_B.eval()` while `self.netG_A` runs in training
    mode; `self` itself does not count), or models it is handed (`model_mlp.eval()` while `model_bilstm`
    runs: Text-Mining's vote over four taggers)."""
    switched = []
    for c in fn.calls:
        if c.method != "eval" or c.node.args or not c.receiver or c.context.order >= before:
            continue
        head, dot, _ = c.receiver.partition(".")
        if head in heads and (dot or head != "self"):
            switched.append(c.receiver)
    return bool(switched) and not any(within(model, r) or within(r, model) for r in switched)


def _takes_gradients(method: FunctionInfo) -> bool:
    """(A backward only under a test, DALLE2's `if self.training: self.accelerator.backward(loss)`, is
    training's; evaluation gets no use from the graph.)"""
    return any(
        (c.qualname or "").startswith(("higher.", "torch.autograd.grad", "torch.enable_grad"))
        or c.method == "backward" and not c.context.conditions
        for c in method.calls
    )


_TRAIN_FLAG = {"is_train", "train", "training", "is_training", "train_mode"}


def _asked_for_evaluation(call: CallInfo) -> bool:
    """`train_val_loop(is_train=False, ...)` where the loop is a closure handed back by a factory, out of
    sight: a shared train/validation loop asked for its evaluation mode switches the model itself."""
    return any(
        arg.keyword is not None and arg.keyword.value in _TRAIN_FLAG and _is_false_literal(arg.value)
        for arg in call.node.args
    )


def _is_false_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def _lightning_class(project, facts, cls, depth: int = 0) -> bool:
    """cls derives from LightningModule, directly or through bases of the project."""
    for base, written in zip(cls.bases, cls.written_bases):
        if base.endswith("LightningModule"):
            return True
        found = lookup_class(project, facts, written) if depth < 5 else None
        if found is not None and found[1] is not cls and _lightning_class(project, found[0], found[1], depth + 1):
            return True
    return False


def _set_by_computed_name(cls, model: str) -> bool:
    """`self.str_encoder` is never assigned by name, and the class sets attributes by computed names
    (`setattr(self, models_name[i], m)`): it is one of those."""
    if not model.startswith("self.") or model.count(".") != 1:
        return False
    methods = cls.methods.values()
    if any(a.targets and model in a.targets for m in methods for a in m.assigns):
        return False
    return any(
        c.dotted == "setattr" and len(c.node.args) >= 2 and dotted_name(c.node.args[0].value) == "self"
        and not isinstance(c.node.args[1].value, cst.SimpleString)
        for m in methods for c in m.calls
    )


def _switches_listed_element(call: CallInfo, cls, model: str) -> bool:
    """`self.models[i].eval()` where some method of the class sets `self.models = [..., model, ...]`."""
    receiver = call_receiver(call.node)
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
        receiver = receiver.func.value  # (`self.models[i].to(device).eval()`)
    if not isinstance(receiver, cst.Subscript):
        return False
    held = dotted_name(receiver.value)
    if held is None or not held.startswith("self."):
        return False
    return any(
        a.targets == (held,) and isinstance(a.value, cst.List) and any(dotted_name(e.value) == model for e in a.value.elements)
        for m in cls.methods.values() for a in m.assigns
    )


def _holders_of(facts, cls, model: str) -> set[str]:
    """`self.model`, `self`, and the attributes that wrap it: `self.network = Network(self.model,
    self.loss)` (a class of this file that keeps what it is given), then `self.network =
    DataParallel(self.network)`; switching a holder switches the model. (Not `ModelEMA(self.model)`,
    which keeps a copy.)"""
    holders = {model, "self"}
    assigns = [a for m in cls.methods.values() for a in m.assigns
               if len(a.targets) == 1 and a.targets[0].startswith("self.") and isinstance(a.value, cst.Call)]
    for _ in range(3):
        for a in assigns:
            if a.targets[0] not in holders and _wraps_argument(facts, a.value, holders - {"self"}):
                holders.add(a.targets[0])
    return holders


def _wraps_argument(facts, call: cst.Call, names: set[str]) -> bool:
    """`DataParallel(net)`, or `Network(net, loss)` whose `__init__` stores the parameter as it is."""
    callee = dotted_name(call.func) or ""
    if "Parallel" in callee:
        return any(dotted_name(arg.value) in names for arg in call.args[:1])
    local = facts.classes.get(callee)
    init = local.methods.get("__init__") if local is not None else None
    if init is None:
        return False
    params = [p for p in init.params if p != "self"]
    kept = {a.value.value for a in init.assigns if isinstance(a.value, cst.Name) and any(t.startswith("self.") for t in a.targets)}
    return any(
        dotted_name(arg.value) in names and arg.keyword is None and i < len(params) and params[i] in kept
        for i, arg in enumerate(call.args)
    )


def _mode_passed_in(call: CallInfo, fn: FunctionInfo) -> bool:
    """`model.train(training)`: the mode is a parameter of the function, so its caller chooses it."""
    args = call.node.args
    return len(args) == 1 and isinstance(args[0].value, cst.Name) and args[0].value.value in fn.params and args[0].value.value != "self"


def _is_false_arg(call: cst.Call) -> bool:
    return bool(call.args) and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False"


_MODE_API = re.compile(r"(^|_)modes?($|_)")
_EVAL_MODE_API = re.compile(r"^(set_|to_|enable_|switch_to_)?(eval|evaluation|inference|test)_mode$")


# Inference runtimes of other frameworks: what they load has no mode and builds no autograd graph.
_FOREIGN_RUNTIMES = OTHER_FRAMEWORKS | {
    "openvino", "onnxruntime", "tensorrt", "tflite_runtime", "cv2", "ncnn", "coremltools", "tritonclient",
    "sklearn", "xgboost", "lightgbm",
}

_DECODER_NAME = re.compile(r"(^|[._])decoders?$")


def _decodes_model_output(call: CallInfo) -> bool:
    """The call's first argument is computed from what a whole model (`model`, `self.net`) returned
    earlier in the function: `outs = model(images)` ... `decoder(outs, sizes)` turns a detector's raw
    outputs into boxes, and a CTC decoder turns `torch.log(ys_hat)` into words. A network named
    decoder takes an encoder's output, not a whole model's."""
    args = [a for a in call.node.args if a.keyword is None and not a.star]
    first = dotted_name(args[0].value) if args else None
    if first is None or _part_of_a_model(call.dotted or ""):
        return False  # (`model.decoder(h)`: a network of the model, fed by its other parts)
    fn = call.function
    derived: set[str] = set()
    for a in sorted(fn.assigns, key=lambda a: a.context.order):
        if a.context.order >= call.context.order or a.value is None:
            continue
        from_model = any(
            (c := dotted_name(inner.func)) is not None and _PLAIN_MODEL_NAME.search(c.rsplit(".", 1)[-1]) is not None
            and not _part_of_a_model(c)
            for inner in calls_within(a.value)
        ) or bool(names_in(a.value) & derived)
        if from_model:
            derived.update(a.targets)
    return first in derived


def _part_of_a_model(name: str) -> bool:
    """`model.decoder`, `self.net.policy_net`: an attribute of something named as a whole model."""
    owner = name.rsplit(".", 1)[0] if "." in name else ""
    return bool(owner) and _PLAIN_MODEL_NAME.search(owner.rsplit(".", 1)[-1]) is not None


def _switch_mode(c: CallInfo, fn: FunctionInfo) -> str | None:
    """"eval" or "train" for a mode switch (`m.eval()`, `m.train()`, `m.train(False)`); None for any other
    call, including `learner.train(loader, epochs)`, a training routine (judged as a helper). A mode the
    caller passes in (`self.network.train(training)` in JORLDY's `act(state, training=True)`) counts as
    eval: an evaluation passes False, and no claim is made for it."""
    if c.method not in ("eval", "train") or len(c.node.args) > 1:
        return None
    return "eval" if c.method == "eval" or _is_false_arg(c.node) or _mode_passed_in(c, fn) else "train"


def _training_property_mode(fn: FunctionInfo, a, model: str) -> str | None:
    """"eval" or "train" for `self.training = False/True` in a plain class whose `training` property setter
    switches the modules it holds (wl-coref's `CorefModel`: `module.train(value)` for each); None otherwise,
    as for an `nn.Module`, where the assignment sets only the module's own flag and leaves its children."""
    if a.augmented or len(a.targets) != 1 or a.targets[0] != "self.training" or not within(model, "self"):
        return None
    cls = fn.self_class()
    setter = cls.methods.get("training") if cls is not None else None
    if setter is None or "training.setter" not in setter.decorators or not _switches_modules(cls, setter):
        return None
    if isinstance(a.value, cst.Name) and a.value.value in ("False", "True"):
        return "eval" if a.value.value == "False" else "train"
    return None


def _switches_modules(cls, method: FunctionInfo, depth: int = 0) -> bool:
    """The method calls `.train(...)`/`.eval()` on something, itself or through a method of its class."""
    for c in method.calls:
        if c.method in ("train", "eval") and c.receiver and len(c.node.args) <= 1:
            return True
        callee = cls.methods.get(c.method) if c.receiver == "self" and depth < 2 else None
        if callee is not None and callee is not method and _switches_modules(cls, callee, depth + 1):
            return True
    return False


def _uses_of_built(site: CallInfo) -> list[CallInfo]:
    """The calls that use the object `site` builds into a local name, later in the same function:
    `softmax(x)` and `softmax.fit(loader)` after `softmax = MaxSoftmax(model)`."""
    fn = site.function
    bound = next((a for a in fn.assigns if a.value is site.node and len(a.targets) == 1 and a.targets[0].isidentifier()), None)
    if bound is None:
        return []
    name = bound.targets[0]
    return [c for c in fn.calls if c.context.order > site.context.order and (c.dotted == name or c.receiver == name)]


def _switches_held_networks(cls) -> bool:
    """Some method of a plain object's class switches the networks it holds (`self.model.eval()`,
    `self.policy.train(mode)`), or the class offers a mode API of its own (skrl's
    `Agent.enable_training_mode`, `set_running_mode`, a `train()`/`eval()` pair): their modes are the
    object's business, not its callers'."""
    if any(_MODE_API.search(name) for name in cls.methods) or {"train", "eval"} <= set(cls.methods):
        return True  # (a lone `train(self, env, episodes)` is a training routine, not a mode switch)
    return any(
        c.method in ("eval", "train") and ((c.receiver or "").startswith("self.") or c.receiver in method.params[1:])
        for method in cls.methods.values() for c in method.calls
    )  # (or the network it is handed and keeps: TextSnake's `self.model = model; model.eval()`)


def _detector_losses_read(fn: FunctionInfo, call: CallInfo) -> bool:
    """`def evaluate_loss(model, ...): model.train()` ... `loss_dict = model(images, targets)`: torchvision's
    detectors return their losses only in training mode, so a validation loss needs it."""
    named = [a.targets[0] for a in fn.assigns if a.value is call.node and len(a.targets) == 1]
    return "loss" in fn.name.lower() and len(call.node.args) >= 2 and any("loss" in t.lower() for t in named)


def _stands_for_subclasses(inst) -> bool:
    """`net: BaseNet`: known only from an annotation naming an abstract base, so the value is one of its
    subclasses, which hold the layers."""
    return inst.declared and inst.cls is not None and _abstract_forward(inst.facts, inst.cls)


def _runs_itself(method: FunctionInfo) -> bool:
    """A module's method that calls `self(img)` or `self.forward(img)` (a detector's `get_test_predict`)."""
    return any(c.dotted in ("self", "self.forward") for c in method.calls)


def _abstract_forward(facts, cls) -> bool:
    """The class's own forward only raises NotImplementedError (Deep SVDD's `BaseNet`), or is an
    abstractmethod: the networks passed as this type are its subclasses. So is an interface with no
    forward whose every method but `__init__` is abstract (FaKnow's `AbstractModel`: `calculate_loss`
    and `predict`)."""
    forward = cls.methods.get("forward")
    if forward is not None:
        return _abstract_method(facts, forward, bare_body=False)
    declared = [m for name, m in cls.methods.items() if name != "__init__"]
    return bool(declared) and all(_abstract_method(facts, m, bare_body=False) for m in declared)


def _class_from_module(facts, fn: FunctionInfo, value: cst.BaseExpression | None) -> bool:
    """`getattr(module, name)` with `module = import_module(...)`: a class looked up by its name."""
    if not (isinstance(value, cst.Call) and dotted_name(value.func) == "getattr" and value.args):
        return False
    held = value.args[0].value
    if isinstance(held, cst.Name):
        assigned = [a.value for a in fn.assigns if a.targets == (held.value,)]
        held = assigned[0] if len(assigned) == 1 else None
    return isinstance(held, cst.Call) and (facts.qualify(held.func) or "") == "importlib.import_module"


def _abstract_method(facts, method: FunctionInfo, bare_body: bool = True) -> bool:
    """An abstractmethod, or a method that only raises NotImplementedError (with `bare_body`, also one
    whose body is only `pass`, `...` or its docstring): the subclasses say what it does."""
    if method.node is None:
        return False
    if any(d.rsplit(".", 1)[-1] == "abstractmethod" for d in method.decorators):
        return True
    body = [s for s in method.node.body.body if not (
        isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Expr) and isinstance(x.value, cst.SimpleString) for x in s.body)
    )]
    if not body:
        return bare_body
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    only = body[0].body[0]
    if isinstance(only, cst.Raise):
        return "NotImplementedError" in facts.module.code_for_node(body[0])
    return bare_body and (isinstance(only, cst.Pass) or isinstance(only, cst.Expr) and isinstance(only.value, cst.Ellipsis))


def _trains_model(cls, holders: set[str]) -> bool:
    """Some method of the class switches one of `holders` to training mode and backpropagates or steps."""
    return _trains_after_switching(cls, lambda receiver, method: receiver in holders)


def _trains_after_switching(cls, switched) -> bool:
    """Some method of the class calls `.train()` on a receiver `switched(receiver, method)` accepts, and
    backpropagates or steps."""
    return any(
        any(c.method == "train" and not c.node.args and switched(c.receiver, m) for c in m.calls)
        and any(c.method in ("backward", "step") for c in m.calls)
        for m in cls.methods.values()
    )


def _switches_itself(cls) -> bool:
    """An nn.Module that trains itself: some method calls `self.train()` (or its networks' `train()`, or
    that of the model it is handed: Text-Mining's `BaseModel.run_train(self, model, data_path)`) and
    steps or backpropagates (ECAPA-TDNN's `ECAPAModel.train_network`, SEGAN's `train(opts, dloader, ...)`).
    Its evaluation methods are passes like a trainer's."""
    return _trains_after_switching(cls, lambda receiver, method: (
        receiver == "self" or (receiver or "").startswith("self.") or receiver in _handed_in(method)
    ))


def _handed_in(method) -> list[str]:
    """The parameters a method is handed: all of a staticmethod's (RotatE's `KGEModel.train_step(model,
    optimizer, ...)`), the rest after `self` or `cls` otherwise."""
    return list(method.params) if "staticmethod" in method.decorators else list(method.params[1:])


def _trains_by_name(name: str) -> bool:
    """A helper named for training (`train_epoch`, `update_params`); one named for reporting (nnU-Net's
    `log_losses`, `plot_train_curve`) only reports on it, and `run_iteration_overfitting` checks the
    overfitting batches."""
    plain = _OVERFIT.sub("", name)
    return bool(_TRAINING_NAME.search(plain)) and not _REPORTING_NAME.match(name)
