"""What a rule's check receives: the file's facts, the training semantics, the project."""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from torchdoctor.dataflow import DataFlow
from torchdoctor.decorators import resolve_no_grad_decorators
from torchdoctor.evaluation import Evaluation
from torchdoctor.facts import FileFacts
from torchdoctor.project import ProjectIndex
from torchdoctor.rule import Report
from torchdoctor.training import TrainingFacts


class LintContext:
    def __init__(self, facts: FileFacts, project: ProjectIndex | None = None) -> None:
        self.facts = facts
        self.project = project
        if project is not None:
            project.inherit_star_imports(facts)
        resolve_no_grad_decorators(facts, project)

    @cached_property
    def training(self) -> TrainingFacts:
        """Computed on first use and shared by every rule that runs on this file."""
        return TrainingFacts(self.facts, self.project)

    @cached_property
    def dataflow(self) -> DataFlow:
        """Where values come from (assignments, returns, parameters, model classes), on demand."""
        return DataFlow(self.facts, self.project)

    @cached_property
    def evaluation(self) -> Evaluation:
        """The file's evaluation passes and the grad/eval mode where they run."""
        return Evaluation(self)

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        replace: tuple[cst.CSTNode, cst.CSTNode] | None = None,
    ) -> Report:
        return Report(node, message, replace)

    def code(self, node: cst.CSTNode) -> str:
        """The source text of a node, for messages."""
        return self.facts.module.code_for_node(node)
