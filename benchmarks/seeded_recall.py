"""Recall on real code, measured by seeding bugs: undo each fix a real project made and see if we notice.

    python benchmarks/seeded_recall.py /path/to/corpus [--rule TD001] [--per-file 3] [--show-misses]
                                       [--not-bugs benchmarks/seeded_not_bugs.tsv]

For every file of a corpus of real PyTorch projects, each mutation below removes one
correct-code idiom (one site at a time), which plants exactly the bug a rule exists for:

    TD001  delete an `x.zero_grad()` / `p.grad = None` statement inside a loop
    TD002  feed softmax output to a CrossEntropyLoss call (`out = torch.softmax(out, dim=-1)` before it)
    TD003  unwrap `nn.ModuleList([...])` / `nn.ModuleDict({...})` in a module class
    TD004  drop `device=` from a tensor factory inside a module's forward
    TD005  delete a `model.eval()` statement that precedes an evaluation pass
    TD006  unwrap a `with torch.no_grad():` block (or drop the decorator) of an evaluation function
    TD007  delete a `sampler.set_epoch(epoch)` statement

A seeded site counts as found when the mutated file gets more findings of that rule than
the original, or one with a new message. Misses are listed for review with --show-misses:
some mutations are not bugs (removing eval() before a model without Dropout or BatchNorm
changes nothing; removing one of two resets leaves the other). Sites judged so by hand are
listed, with the reason, in benchmarks/seeded_not_bugs.tsv; with --not-bugs the report adds
the recall over the sites that do plant a bug. The raw rate is the floor.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

import libcst as cst

from torchdoctor.discovery import discover
from torchdoctor.config import ConfigFinder
from torchdoctor.engine import lint_source
from torchdoctor.facts import calls_within, dotted_name
from torchdoctor.project import ProjectIndex
from torchdoctor.rule import rules_by_code


def _expr_call(stmt: cst.BaseSmallStatement) -> cst.Call | None:
    if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
        return stmt.value
    return None


def _method(call: cst.Call | None) -> str | None:
    return call.func.attr.value if call is not None and isinstance(call.func, cst.Attribute) else None


EVALUATION_NAME = re.compile(r"eval|valid|test|predict|infer|score|accuracy|estimate_loss", re.I)


class _Mutation(cst.CSTTransformer):
    """Applies the mutation only at the `target`-th matching site; counts the sites."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.sites = 0
        self.done = False
        self.depth = {"loop": 0, "forward": 0, "module_class": 0}
        self.functions: list[str] = []

    def visit_FunctionDef(self, node):
        self.functions.append(node.name.value)

    def leave_FunctionDef(self, original, updated):
        self.functions.pop()
        return updated

    def in_evaluation_function(self) -> bool:
        """Only evaluation code is seeded for TD005/TD006: removing eval() or no_grad elsewhere
        (RL action selection, EMA updates, target networks) plants no evaluation bug."""
        return bool(self.functions) and bool(EVALUATION_NAME.search(self.functions[-1]))

    def _hit(self) -> bool:
        self.sites += 1
        if self.sites - 1 == self.target:
            self.done = True
            return True
        return False

    def visit_For(self, node):
        self.depth["loop"] += 1

    def leave_For(self, original, updated):
        self.depth["loop"] -= 1
        return updated

    def visit_While(self, node):
        self.depth["loop"] += 1

    def leave_While(self, original, updated):
        self.depth["loop"] -= 1
        return updated


class DeleteStatement(_Mutation):
    """TD001, TD005, TD007: delete one statement (replaced by `pass` to keep blocks valid)."""

    def __init__(self, target, matches, need_loop=False, need_eval_function=False):
        super().__init__(target)
        self.matches = matches
        self.need_loop = need_loop
        self.need_eval_function = need_eval_function

    def leave_SimpleStatementLine(self, original, updated):
        if self.need_eval_function and not self.in_evaluation_function():
            return updated
        if len(updated.body) == 1 and self.matches(updated.body[0]) and (self.depth["loop"] or not self.need_loop):
            if self._hit():
                return updated.with_changes(body=[cst.Pass()])
        return updated


def _is_reset(stmt) -> bool:
    call = _expr_call(stmt)
    if _method(call) == "zero_grad":
        return True
    if isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Name) and stmt.value.value == "None":
        return any(dotted_name(t.target) and dotted_name(t.target).endswith(".grad") for t in stmt.targets)
    return False


def _is_eval_call(stmt) -> bool:
    call = _expr_call(stmt)
    return _method(call) == "eval" and not call.args


def _is_set_epoch(stmt) -> bool:
    return _method(_expr_call(stmt)) == "set_epoch"


class SoftmaxBeforeCrossEntropy(_Mutation):
    """TD002: `loss = criterion(out, y)` -> `out = torch.softmax(out, dim=-1); loss = criterion(out, y)`."""

    def __init__(self, target, ce_names):
        super().__init__(target)
        self.ce_names = ce_names

    def leave_SimpleStatementLine(self, original, updated):
        for call in calls_within(updated):
            name = dotted_name(call.func)
            if name in self.ce_names and call.args and isinstance(call.args[0].value, cst.Name):
                if self._hit():
                    arg = call.args[0].value.value
                    pre = cst.parse_statement(f"{arg} = torch.softmax({arg}, dim=-1)\n")
                    return cst.FlattenSentinel([pre, updated])
                return updated
        return updated


class UnwrapModuleContainer(_Mutation):
    """TD003: `nn.ModuleList([...])` -> `[...]` for an attribute assignment."""

    def leave_Assign(self, original, updated):
        value = updated.value
        if (
            isinstance(value, cst.Call)
            and dotted_name(value.func) in ("nn.ModuleList", "torch.nn.ModuleList", "nn.ModuleDict", "torch.nn.ModuleDict")
            and len(value.args) == 1
            and isinstance(value.args[0].value, (cst.List, cst.ListComp, cst.Dict, cst.DictComp))
            and any((dotted_name(t.target) or "").startswith("self.") for t in updated.targets)
        ):
            if self._hit():
                return updated.with_changes(value=value.args[0].value)
        return updated


class DropDevice(_Mutation):
    """TD004: drop `device=` from a torch factory call inside `def forward`."""

    FACTORIES = {"zeros", "ones", "arange", "full", "empty", "rand", "randn", "randint", "linspace", "eye", "tensor"}

    def visit_FunctionDef(self, node):
        super().visit_FunctionDef(node)
        if node.name.value == "forward":
            self.depth["forward"] += 1

    def leave_FunctionDef(self, original, updated):
        if original.name.value == "forward":
            self.depth["forward"] -= 1
        return super().leave_FunctionDef(original, updated)

    def leave_Call(self, original, updated):
        name = dotted_name(updated.func) or ""
        if self.depth["forward"] and name.startswith("torch.") and name[6:] in self.FACTORIES:
            kept = [a for a in updated.args if not (a.keyword is not None and a.keyword.value == "device")]
            if len(kept) != len(updated.args) and self._hit():
                if kept:
                    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                return updated.with_changes(args=kept)
        return updated


class RemoveNoGrad(_Mutation):
    """TD006: `with torch.no_grad(): body` -> `if True: body`; `@torch.no_grad()` dropped."""

    def leave_With(self, original, updated):
        names = [dotted_name(i.item.func if isinstance(i.item, cst.Call) else i.item) or "" for i in updated.items]
        if not self.in_evaluation_function():
            return updated
        if len(names) == 1 and names[0].endswith(("no_grad", "inference_mode")) and self._hit():
            return cst.If(test=cst.Name("True"), body=updated.body)
        return updated

    def leave_FunctionDef(self, original, updated):
        in_eval = self.in_evaluation_function()
        updated = super().leave_FunctionDef(original, updated)
        if not in_eval:
            return updated
        kept = [
            d for d in updated.decorators
            if not (dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "").endswith(("no_grad", "inference_mode"))
        ]
        if len(kept) != len(updated.decorators) and self._hit():
            return updated.with_changes(decorators=kept)
        return updated


def mutations_for(rule: str, source: str):
    if rule == "TD001":
        return (lambda t: DeleteStatement(t, _is_reset, need_loop=True)) if "backward" in source else None
    if rule == "TD002":
        names = {"F.cross_entropy", "torch.nn.functional.cross_entropy", "nn.functional.cross_entropy"}
        module = cst.parse_module(source)
        for stmt in calls_within(module):
            if (dotted_name(stmt.func) or "").endswith("CrossEntropyLoss"):
                names |= _assigned_names_of(module, stmt)
        return lambda t: SoftmaxBeforeCrossEntropy(t, names)
    if rule == "TD003":
        return UnwrapModuleContainer
    if rule == "TD004":
        return DropDevice
    if rule == "TD005":
        return lambda t: DeleteStatement(t, _is_eval_call, need_eval_function=True)
    if rule == "TD006":
        return RemoveNoGrad
    if rule == "TD007":
        return lambda t: DeleteStatement(t, _is_set_epoch)
    return None


def _assigned_names_of(module, call):
    names = set()

    class V(cst.CSTVisitor):
        def visit_Assign(self, node):
            if node.value is call:
                for t in node.targets:
                    n = dotted_name(t.target)
                    if n:
                        names.add(n)

    module.visit(V())
    return names


def code_is_test(path: Path) -> bool:
    return path.name.startswith("test_") or path.name.endswith("_test.py") or "tests" in path.parts


def findings(rule_cls, source: str, path: str, index: ProjectIndex) -> list[str]:
    """The messages of the rule's findings (lines shift with a mutation; messages do not)."""
    result = lint_source(source, path, [rule_cls], index)
    return [f.message for f in result.findings if f.code == rule_cls.code and not f.suppressed]


def noticed(before: list[str], after: list[str]) -> bool:
    """More findings, or one that says something new (a softmax seeded where a log_softmax was already flagged)."""
    return len(after) > len(before) or bool(set(after) - set(before))


def load_reviewed(path: Path | None) -> dict[tuple[str, str, int], str]:
    """Seeded sites judged by hand to plant no bug: `rule<TAB>repo/path<TAB>site<TAB>reason` per line."""
    reviewed = {}
    if path is None:
        return reviewed
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            rule, where, site, reason = line.split("\t", 3)
            reviewed[(rule, where, int(site))] = reason
    return reviewed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rule", action="append")
    parser.add_argument("--per-file", type=int, default=3)
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--not-bugs", type=Path, help="reviewed sites that plant no bug (benchmarks/seeded_not_bugs.tsv)")
    args = parser.parse_args()
    reviewed = load_reviewed(args.not_bugs)
    excluded, excluded_found = collections.Counter(), collections.Counter()
    rules = args.rule or ["TD001", "TD002", "TD003", "TD004", "TD005", "TD006", "TD007"]
    files = discover([args.folder], ConfigFinder())
    index = ProjectIndex()
    seeded, found = collections.Counter(), collections.Counter()
    misses = collections.defaultdict(list)
    for path in files:
        if code_is_test(path):
            continue  # pytest functions are not training or evaluation code
        try:
            source = path.read_text(encoding="utf-8")
            module = cst.parse_module(source)
        except (UnicodeDecodeError, cst.ParserSyntaxError):
            continue
        for code in rules:
            make = mutations_for(code, source)
            if make is None:
                continue
            rule_cls = rules_by_code()[code]
            baseline = None
            for target in range(args.per_file):
                mutation = make(target)
                mutated = module.visit(mutation)
                if not mutation.done:
                    break
                if baseline is None:
                    baseline = findings(rule_cls, source, str(path), index)
                seeded[code] += 1
                where = path.relative_to(args.folder).as_posix()
                reason = reviewed.get((code, where, target))
                if noticed(baseline, findings(rule_cls, mutated.code, str(path), index)):
                    found[code] += 1
                    if reason is not None:  # reported, though it plants no bug: out of the reviewed rate too
                        excluded_found[code] += 1
                    continue
                if reason is not None:
                    excluded[code] += 1
                misses[code].append(f"{where} (site {target})" + (f": not a bug, {reason}" if reason else ""))
    for code in rules:
        n = seeded[code]
        rate = f"{found[code] / n:.2f}" if n else "n/a"
        line = f"{code}: seeded {n}, found {found[code]}, recall {rate}"
        if args.not_bugs is not None:
            bugs = n - excluded[code] - excluded_found[code]
            real = found[code] - excluded_found[code]
            line += (
                f"; reviewed: {excluded[code] + excluded_found[code]} plant no bug, recall {real / bugs:.2f} ({real}/{bugs})"
                if bugs else "; reviewed: n/a"
            )
        print(line)
        if args.show_misses:
            for m in misses[code]:
                print("   miss:", m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
