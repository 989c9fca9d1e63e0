"""The runtime checks, one module each. Their ids are fixed: users filter by them."""

from torchdoctor.runtime.checks.device_mismatch import DeviceMismatch
from torchdoctor.runtime.checks.eval_graph_built import EvalGraphBuilt
from torchdoctor.runtime.checks.grad_norms import GradNorms
from torchdoctor.runtime.checks.grad_not_reset import GradNotReset
from torchdoctor.runtime.checks.graph_retention import GraphRetention
from torchdoctor.runtime.checks.memory_growth import MemoryGrowth
from torchdoctor.runtime.checks.non_contiguous_input import NonContiguousInput
from torchdoctor.runtime.checks.non_finite import NonFinite
from torchdoctor.runtime.checks.parameters import ParameterCoverage
from torchdoctor.runtime.checks.sampler_epoch import SamplerEpoch
from torchdoctor.runtime.checks.train_mode_eval import TrainModeEval
from torchdoctor.runtime.checks.unregistered_module import UnregisteredModule

ALL_CHECKS = (
    DeviceMismatch,
    UnregisteredModule,
    ParameterCoverage,
    GradNotReset,
    GradNorms,
    NonFinite,
    NonContiguousInput,
    TrainModeEval,
    EvalGraphBuilt,
    MemoryGrowth,
    GraphRetention,
    SamplerEpoch,
)


def check_ids() -> set[str]:
    return {i for cls in ALL_CHECKS for i in cls.all_ids()}
