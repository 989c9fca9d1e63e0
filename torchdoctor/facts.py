"""Shared facts about one parsed file, computed in a single pass.

Every rule reads these instead of walking the tree again: imports with their
aliases resolved, the function and class tables, loops, calls, assignments and
the `with` contexts each of them sits in. libcst's generic metadata providers
(scope, qualified names) cost several times the parse; this visitor computes
only what the rules need, once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Iterator

import libcst as cst


def is_test_file(path: str) -> bool:
    """pytest files: their tiny models and doubles run on the CPU and in whatever mode a test wants."""
    p = PurePath(path)
    return (p.name.startswith("test_") or p.name.endswith("_test.py") or p.name == "conftest.py"
            or not {"tests", "testing"}.isdisjoint(p.parts))  # (`allennlp/common/testing/`: test-case helpers)


def import_heads(facts: "FileFacts") -> set[str]:
    """The top-level packages a file imports: `torch`, `tensorflow`, `pytest`, the project's own."""
    return {q.split(".", 1)[0] for q in facts.imports.values()}


def is_test_module(facts: "FileFacts") -> bool:
    """A test file by its path, unless its name is all that says so: `u2net_test.py` or `test_net.py`
    with a `__main__` block and no test functions is an evaluation script, and is checked as one."""
    p = PurePath(facts.path)
    if not is_test_file(facts.path):
        return False
    if not {"tests", "testing"}.isdisjoint(p.parts) or p.name == "conftest.py":
        return True
    heads = import_heads(facts)
    tests_inside = any(n.startswith("test") for n in facts.toplevel_functions) or any(
        n.startswith("Test") for n in facts.classes
    )
    script = "__name__ == \"__main__\"" in facts.source or "__name__ == '__main__'" in facts.source
    return tests_inside or bool(heads & {"pytest", "unittest"}) or not script


def dotted_name(node: cst.CSTNode | None) -> str | None:
    """`self.opt.step` -> "self.opt.step"; anything that is not a plain chain -> None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def call_receiver(call: cst.Call) -> cst.BaseExpression | None:
    """The object a method is called on: `opt` in `opt.step()`."""
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def method_name(call: cst.Call) -> str | None:
    """`step` in `opt.step()`, `backward` in `(a + b).backward()`."""
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    if isinstance(call.func, cst.Name):
        return call.func.value
    return None


def partial_of(value: cst.BaseExpression | None) -> str | None:
    """`evaluate` for `partial(evaluate, model=model)` (or `functools.partial`): the function it binds."""
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("partial", "functools.partial") and value.args:
        first = value.args[0]
        return dotted_name(first.value) if first.keyword is None and not first.star else None
    return None


def partial_binding(call: "CallInfo") -> cst.Call | None:
    """`eval_function = partial(evaluate, model=model, ...)` earlier in the same function, then
    `eval_function()`: the `partial(...)` call whose arguments the call completes."""
    if not call.dotted or "." in call.dotted:
        return None
    found = None
    for a in call.function.assigns:
        if a.targets == (call.dotted,) and a.context.order < call.context.order:
            found = a.value if partial_of(a.value) else None  # (the latest binding decides)
    return found


def calls_on_super(call: cst.Call) -> bool:
    """`super().forward(x)`, `super(Net, self).__init__(model=model)`: a method of the base class."""
    func = call.func
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and dotted_name(func.value.func) == "super"


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """An argument given by keyword or by position: `loss(input, target)` / `loss(target=y, input=x)`."""
    named = keyword_arg(call, keyword)
    if named is not None:
        return named.value
    args = positional_args(call)
    return args[position] if len(args) > position else None


def positional_args(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def repeated_sequence(node: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The list a repetition repeats (`[0.0] * n`, `k * [None]`), or the node itself: what the sequence
    holds, element by element."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        return node.left if isinstance(node.left, (cst.List, cst.Tuple)) else node.right
    return node


def names_in(node: cst.CSTNode) -> set[str]:
    """Every dotted name read inside an expression (`a.b(c)` -> {"a.b", "a", "c"})."""
    found: set[str] = set()

    class _Collect(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> None:
            d = dotted_name(n)
            if d:
                found.add(d)

    node.visit(_Collect())
    return found


def calls_within(node: cst.CSTNode) -> list[cst.Call]:
    """Every call inside a node (the node itself included), in source order."""
    found: list[cst.Call] = []

    class _Collect(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            found.append(n)

    node.visit(_Collect())
    return found


def within(name: str, owner: str) -> bool:
    """`name` is `owner` or one of its attributes: `model.encoder` is within `model`."""
    return name == owner or name.startswith(owner + ".")


@dataclass(eq=False)
class LoopInfo:
    """A `for`/`while` statement (comprehensions are not loops here)."""

    node: cst.For | cst.While
    function: "FunctionInfo"
    parent: "LoopInfo | None"
    order: int
    targets: tuple[str, ...] = ()
    iter_name: str | None = None
    calls: list["CallInfo"] = field(default_factory=list)
    assigns: list["AssignInfo"] = field(default_factory=list)
    condition_depth: int = 0  # how many `if` tests enclose the loop itself

    def encloses(self, other: "LoopInfo") -> bool:
        loop: LoopInfo | None = other
        while loop is not None:
            if loop is self:
                return True
            loop = loop.parent
        return False


@dataclass(eq=False)
class Context:
    """Where a call or assignment sits: loops, `with` items, `if` tests, all inside one function."""

    loops: tuple[LoopInfo, ...]
    withs: tuple[str, ...]
    conditions: tuple[cst.BaseExpression, ...]
    order: int
    in_lambda: bool = False  # runs when the lambda is called, not where it is written
    branches: tuple[tuple[int, int], ...] = ()  # (id of an enclosing If, 0 for its body / 1 for its else)

    @property
    def loop(self) -> LoopInfo | None:
        return self.loops[-1] if self.loops else None


def ends_in_jump(block) -> bool:
    """`if torch.isnan(loss): optimizer.zero_grad(); continue`: the branch leaves the iteration."""
    body = getattr(block, "body", None)
    last = body[-1] if isinstance(body, (list, tuple)) and body else None
    if isinstance(last, cst.SimpleStatementLine) and last.body:
        return isinstance(last.body[-1], (cst.Continue, cst.Break, cst.Return, cst.Raise))
    return False


def exclusive_branches(a: tuple, b: tuple) -> bool:
    """Two places in different branches of one `if`: one never runs before the other."""
    where = dict(a)
    return any(node in where and where[node] != branch for node, branch in b)


@dataclass(eq=False)
class CallInfo:
    node: cst.Call
    function: "FunctionInfo"
    context: Context
    qualname: str | None  # resolved through imports: "torch.nn.CrossEntropyLoss"
    dotted: str | None  # as written: "self.opt.step"
    method: str | None  # last name: "step"
    receiver: str | None  # dotted receiver: "self.opt"


@dataclass(eq=False)
class AssignInfo:
    node: cst.CSTNode
    function: "FunctionInfo"
    context: Context
    targets: tuple[str, ...]  # dotted targets; tuple unpacking flattened
    value: cst.BaseExpression | None
    augmented: str | None = None  # "+=" etc. for AugAssign


@dataclass(eq=False)
class FunctionInfo:
    """A function or method; the module body itself is the function named "<module>"."""

    node: cst.FunctionDef | None
    name: str
    qualname: str
    cls: "ClassInfo | None"
    parent: "FunctionInfo | None"
    params: tuple[str, ...] = ()
    decorators: tuple[str, ...] = ()
    calls: list[CallInfo] = field(default_factory=list)
    loops: list[LoopInfo] = field(default_factory=list)
    assigns: list[AssignInfo] = field(default_factory=list)
    returns: list[tuple[cst.Return, int]] = field(default_factory=list)  # with their order
    nested: dict[str, "FunctionInfo"] = field(default_factory=dict)
    # Every def of a nested name in source order: `def closure():` written anew in each of two loops.
    nested_versions: dict[str, list["FunctionInfo"]] = field(default_factory=dict)
    defined_at: int = 0
    declared_global: set[str] = field(default_factory=set)  # `global _model`: its assignments are the module's

    @property
    def is_module(self) -> bool:
        return self.node is None

    def self_class(self) -> "ClassInfo | None":
        """The class whose `self` this function sees: its own, or, for a closure defined in a method,
        the method's."""
        fn: FunctionInfo | None = self
        while fn is not None and fn.cls is None and not fn.is_module:
            fn = fn.parent
        return fn.cls if fn is not None else None

    def assigned_names(self) -> set[str]:
        """Every name this function assigns (a local unless declared global or nonlocal)."""
        return {t for a in self.assigns for t in a.targets}


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    name: str
    bases: tuple[str, ...]  # qualified where imports resolve them, else as written
    written_bases: tuple[str, ...] = ()  # as written in the source: "BaseBlock", "nn.Module"
    methods: dict[str, FunctionInfo] = field(default_factory=dict)

    def stored_params(self) -> dict[str, str]:
        """`self.<attr> = <param>` in `__init__`: attribute -> the constructor parameter it keeps (the
        first such assignment of each attribute)."""
        init = self.methods.get("__init__")
        stored: dict[str, str] = {}
        for a in init.assigns if init is not None else ():
            if len(a.targets) == 1 and a.targets[0].startswith("self.") and isinstance(a.value, cst.Name) \
                    and a.value.value in init.params:
                stored.setdefault(a.targets[0], a.value.value)
        return stored


@dataclass(frozen=True)
class ImportedName:
    """`from .models import Net` -> module ".models", name "Net"."""

    module: str
    name: str | None  # None for `import a.b as c`


class FileFacts:
    """Everything the rules may ask about one file."""

    def __init__(self, module: cst.Module, source: str, path: str = "<string>") -> None:
        self.module = module
        self.source = source
        self.path = path
        self.imports: dict[str, str] = {}  # local name -> qualified name
        self.imported: dict[str, ImportedName] = {}
        # every import in order, also those a later import of the same local name hides
        # (`if dense: from train import evaluate_dense as evaluate` ... `else: ... evaluate_sparse as evaluate`)
        self.all_imports: list[tuple[str, ImportedName]] = []
        # id(ImportedName) -> the function an import is written in (absent: a module-level import)
        self.import_scope: dict[int, FunctionInfo] = {}
        self._calls_of: dict[int, list[CallInfo]] | None = None
        self.star_imports: list[str] = []  # modules of `from utils import *`, as written
        self.functions: list[FunctionInfo] = []
        self.classes: dict[str, ClassInfo] = {}
        # Every top-level class, in source order, with both versions of `if cuda: class WKV ... else: class WKV`
        # (`classes` keeps the last one, as a name lookup at run time would).
        self.all_classes: list[ClassInfo] = []
        # Classes defined inside a function (sniklaus' networks define `class Matching(torch.nn.Module)` in
        # `__init__` and build it there), by name
        self.function_classes: dict[str, list[ClassInfo]] = {}
        self.nested_classes: list[ClassInfo] = []  # classes written directly in another class's body
        self.toplevel_functions: dict[str, FunctionInfo] = {}
        self.calls: list[CallInfo] = []
        self.loops: list[LoopInfo] = []
        self.assigns: list[AssignInfo] = []
        self.module_function = FunctionInfo(None, "<module>", "<module>", None, None)
        self.functions.append(self.module_function)
        self._calls_by_node: dict[int, CallInfo] = {}
        self.branches_at: dict[int, tuple[tuple[int, int], ...]] = {}  # order -> enclosing if-branches
        self.if_tests: dict[int, cst.BaseExpression] = {}  # id of an `if` -> its test
        self.exiting_branches: set[tuple[int, int]] = set()  # if-branches that end in continue/break/return/raise
        _FactsVisitor(self).walk(module)
        # `import model` ... `model = model.RNNModel(...)`: inside functions, which run after the module
        # body, the name is the variable, not the imported module
        # (but not `F = None` in the `except ImportError:` of an optional import: the fallback when torch is missing)
        rebound = {t for a in self.module_function.assigns for t in a.targets if t in self.imports
                   and not (isinstance(a.value, cst.Name) and a.value.value == "None")}
        for call in self.calls:
            self._calls_by_node[id(call.node)] = call
            if rebound and call.qualname and not call.function.is_module and call.dotted.split(".", 1)[0] in rebound:
                call.qualname = None

    # -- names -------------------------------------------------------------
    def qualify(self, node: cst.CSTNode | str | None) -> str | None:
        """The import-resolved name of a dotted expression, or None if it is not imported."""
        dotted = node if isinstance(node, str) or node is None else dotted_name(node)
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def is_torch_name(self, node: cst.CSTNode | str | None, *names: str) -> bool:
        q = self.qualify(node)
        return q is not None and q in names

    def torch_nn_prefix(self) -> str | None:
        """How this file can spell `torch.nn` in a fix: "nn", "torch.nn" or None."""
        for local, target in sorted(self.imports.items()):
            if target == "torch.nn":
                return local
        for local, target in sorted(self.imports.items()):
            if target == "torch":
                return f"{local}.nn"
        return None

    # -- lookups -------------------------------------------------------------
    def module_value(self, name: str) -> cst.BaseExpression | None:
        """The value a module-level assignment gives `name` (`registry = {"conv": ConvKernel, ...}`)."""
        return next((a.value for a in self.module_function.assigns if a.targets == (name,) and a.value is not None), None)

    def call_info(self, node: cst.Call) -> CallInfo | None:
        return self._calls_by_node.get(id(node))

    def global_setters(self, name: str) -> list[FunctionInfo]:
        """The functions that declare `global name` and assign it (`def load_model(): global _model; ...`)."""
        return [f for f in self.functions if name in f.declared_global and name in f.assigned_names()]

    def calls_named(self, *qualnames: str) -> Iterator[CallInfo]:
        wanted = set(qualnames)
        return (c for c in self.calls if c.qualname in wanted)

    def method_calls(self, *methods: str) -> Iterator[CallInfo]:
        wanted = set(methods)
        return (c for c in self.calls if c.method in wanted and c.receiver is not None)

    def calls_of(self, fn: FunctionInfo) -> list[CallInfo]:
        """The calls in this file that run `fn` (each call resolved once per file)."""
        if self._calls_of is None:
            self._calls_of = {}
            for call in self.calls:
                callee = self.resolve_function(call)
                if callee is not None:
                    self._calls_of.setdefault(id(callee), []).append(call)
        return self._calls_of.get(id(fn), [])

    def resolve_function(self, call: CallInfo) -> FunctionInfo | None:
        """The local function or method a call runs, when this file defines it."""
        return self.resolve_callee(call.node.func, call.function, call.context.order)

    def resolve_callee(
        self, func: cst.BaseExpression, scope: FunctionInfo | None, at: int | None = None
    ) -> FunctionInfo | None:
        """The local function `func` (a name or `self.method`) refers to, seen from `scope` (at the
        statement numbered `at`, when a name is defined more than once there)."""
        current = scope
        if isinstance(func, cst.Name):
            name = func.value
            while current is not None:
                if name in current.nested:
                    versions = current.nested_versions[name]
                    if at is not None and current is scope and len(versions) > 1:
                        before = [v for v in versions if v.defined_at < at]
                        return before[-1] if before else versions[0]
                    return current.nested[name]
                current = current.parent
            return self.toplevel_functions.get(name)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            owner = func.value.value
            owning = scope.self_class() if scope is not None else None
            if owner in ("self", "cls") and owning is not None:
                return self.find_method(owning, func.attr.value)
        return None

    def find_method(self, cls: ClassInfo, name: str, _seen: frozenset = frozenset()) -> FunctionInfo | None:
        """A method of a class or of its local base classes."""
        if name in cls.methods:
            return cls.methods[name]
        for base in cls.written_bases:
            local = self.classes.get(base)
            if local is not None and local.name not in _seen:
                found = self.find_method(local, name, _seen | {cls.name})
                if found:
                    return found
        return None

    def class_of(self, name: str) -> ClassInfo | None:
        return self.classes.get(name)


_LOOP_TYPES = (cst.For, cst.While)


# Fields that never hold anything the facts need: whitespace, punctuation, comments.
_SKIPPED_FIELDS = frozenset({
    "lpar", "rpar", "comma", "dot", "semicolon", "equal", "colon", "leading_lines", "lines_after_decorators",
    "header", "footer", "newline", "trailing_whitespace", "first_line", "empty_lines", "last_line", "indent",
    "operator", "star", "asynchronous", "lbracket", "rbracket", "lbrace", "rbrace", "arrow", "default_indent",
    "default_newline", "encoding", "has_trailing_newline", "whitespace", "comment", "value_whitespace",
})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = tuple(
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELDS[node_type] = fields
    return fields


class _FactsVisitor:
    """Fills a FileFacts in one walk of the tree.

    It drives the walk itself instead of using libcst's visitor machinery: that machinery
    calls attribute hooks for every field of every node, which cost as much as the parse.
    This walk skips whitespace and punctuation and dispatches on a per-type table.
    """

    def __init__(self, facts: FileFacts) -> None:
        self.f = facts
        self.functions: list[FunctionInfo] = [facts.module_function]
        self.classes: list[ClassInfo] = []
        self.loops: list[list[LoopInfo]] = [[]]
        self.withs: list[list[str]] = [[]]
        self.conditions: list[list[cst.BaseExpression]] = [[]]
        self.branches: list[list[tuple[int, int]]] = [[]]
        self.order = 0
        self.class_body_depth: dict[int, int] = {}  # id(ClassInfo) -> function-stack depth of its body
        self.with_sizes: list[int] = []
        self.lambdas = 0

    # -- the walk --------------------------------------------------------------
    def walk(self, node: cst.CSTNode) -> None:
        node_type = type(node)
        handlers = _HANDLERS.get(node_type)
        if handlers is None:
            name = node_type.__name__
            handlers = (
                getattr(self.__class__, f"visit_{name}", None),
                getattr(self.__class__, f"leave_{name}", None),
                getattr(self.__class__, f"visit_{name}_body", None),
                getattr(self.__class__, f"leave_{name}_body", None),
            )
            _HANDLERS[node_type] = handlers
        enter, leave, enter_body, leave_body = handlers
        if node_type is cst.If:  # branches are tracked so a body's assignment never reaches its else
            self._walk_if(node)
            return
        if enter is not None and enter(self, node) is False:
            return
        for field in _child_fields(node_type):
            value = getattr(node, field)
            if field == "body" and enter_body is not None:
                enter_body(self, node)
                self._walk_value(value)
                if leave_body is not None:
                    leave_body(self, node)
            else:
                self._walk_value(value)
        if leave is not None:
            leave(self, node)

    def _walk_if(self, node: cst.If) -> None:
        self.f.if_tests[id(node)] = node.test
        self.visit_If(node)
        self._walk_value(node.test)
        for branch, part in ((0, node.body), (1, node.orelse)):
            if part is None:
                continue
            self.branches[-1].append((id(node), branch))
            if ends_in_jump(part):
                self.f.exiting_branches.add((id(node), branch))
            self._walk_value(part)
            self.branches[-1].pop()
        self.leave_If(node)

    def _walk_value(self, value) -> None:
        if isinstance(value, cst.CSTNode):
            self.walk(value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    self.walk(item)

    # -- helpers -------------------------------------------------------------
    def _context(self) -> Context:
        self.order += 1
        branches = tuple(self.branches[-1])
        self.f.branches_at[self.order] = branches
        return Context(
            tuple(self.loops[-1]), tuple(self.withs[-1]), tuple(self.conditions[-1]), self.order, self.lambdas > 0,
            branches,
        )

    def _decorator_name(self, decorator: cst.BaseExpression) -> str:
        """`@torch.no_grad()` -> "torch.no_grad"; `@torch.no_grad() if TORCH_AVAILABLE else (lambda fn: fn)`
        (a guard for installs without torch) -> its torch side."""
        if isinstance(decorator, cst.IfExp):
            decorator = decorator.body if not isinstance(decorator.body, cst.Lambda) else decorator.orelse
        return self._name_for(decorator.func if isinstance(decorator, cst.Call) else decorator) or ""

    def _name_for(self, node: cst.BaseExpression) -> str | None:
        return self.f.qualify(node) or dotted_name(node)

    # -- imports -------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
                self.f.imports[local] = full
                self.f.imported[local] = ImportedName(full, None)
                self.f.all_imports.append((local, self.f.imported[local]))
            else:
                head = full.split(".")[0]
                self.f.imports[head] = head
                if head == full:  # `import inference` ... `inference.run(model)`: a module of the project, maybe
                    self.f.imported[head] = ImportedName(full, None)
                    self.f.all_imports.append((head, self.f.imported[head]))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        base = dotted_name(node.module) if node.module is not None else ""
        dots = "." * len(node.relative)
        module = f"{dots}{base or ''}"
        if isinstance(node.names, cst.ImportStar):
            self.f.star_imports.append(module)
            return False
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.f.imports[local] = f"{module}.{name}" if not dots or base else f"{module}{name}"
            if module == "torch" and name == "torch":
                self.f.imports[local] = "torch"  # `from torch import torch` (shap-e): the package itself
            self.f.imported[local] = ImportedName(module, name)
            self.f.all_imports.append((local, self.f.imported[local]))
            if not self.functions[-1].is_module:  # `def get_coco_scores(...): from .coco_scores import test`
                self.f.import_scope[id(self.f.imported[local])] = self.functions[-1]
        return False

    # -- scopes ----------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # (`class Sam(ONNXExportMixin, ModelBase[SamConfig])`: a generic base is the class it subscripts)
        plain = [b.value.value if isinstance(b.value, cst.Subscript) else b.value for b in node.bases if b.keyword is None]
        bases = tuple(self._name_for(b) or "" for b in plain)
        info = ClassInfo(node, node.name.value, bases, tuple(dotted_name(b) or "" for b in plain))
        if not self.classes and self.functions[-1].is_module:
            self.f.classes[info.name] = info
            self.f.all_classes.append(info)
        elif not self.functions[-1].is_module and not (self.classes and self._directly_in_class(node)):
            self.f.function_classes.setdefault(info.name, []).append(info)  # innermost scope: a function
        elif self.classes and self._directly_in_class(node):
            self.f.nested_classes.append(info)  # `class TDCN(nn.Module): class TCN(nn.Module): ...`
        self.classes.append(info)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = self.functions[-1]
        cls = self.classes[-1] if self.classes and self._directly_in_class(node) else None
        name = node.name.value
        if cls is not None:
            qualname = f"{cls.name}.{name}"
        elif parent.is_module:
            qualname = name
        else:
            qualname = f"{parent.qualname}.<locals>.{name}"
        params = tuple(p.name.value for p in _all_params(node.params))
        decorators = tuple(self._decorator_name(d.decorator) for d in node.decorators)
        info = FunctionInfo(node, name, qualname, cls, parent, params, decorators, defined_at=self.order)
        if cls is not None:
            cls.methods[name] = info
        elif parent.is_module:
            self.f.toplevel_functions[name] = info
        else:
            parent.nested[name] = info
            parent.nested_versions.setdefault(name, []).append(info)
        self.f.functions.append(info)
        self.functions.append(info)
        self.loops.append([])
        self.withs.append([])
        self.conditions.append([])
        self.branches.append([])

    def visit_Global(self, node: cst.Global) -> None:
        self.functions[-1].declared_global.update(item.name.value for item in node.names)

    def _directly_in_class(self, node: cst.FunctionDef) -> bool:
        # A def is a method when the innermost enclosing scope is the class body.
        cls = self.classes[-1]
        return self.class_body_depth.get(id(cls), -1) == len(self.functions)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.pop()
        self.loops.pop()
        self.withs.pop()
        self.conditions.pop()
        self.branches.pop()

    # The class body's depth is recorded on entry so nested defs know whether they are methods.
    def visit_ClassDef_body(self, node: cst.ClassDef) -> None:
        self.class_body_depth[id(self.classes[-1])] = len(self.functions)

    # -- loops, withs, ifs ---------------------------------------------------
    # A for-loop's iterable is evaluated once, outside the loop: enter it at its body.
    def visit_For_body(self, node: cst.For) -> None:
        self._enter_loop(node)

    def leave_For_body(self, node: cst.For) -> None:
        self.loops[-1].pop()

    def visit_While(self, node: cst.While) -> None:
        self._enter_loop(node)

    def leave_While(self, node: cst.While) -> None:
        self.loops[-1].pop()

    def _enter_loop(self, node: cst.For | cst.While) -> None:
        function = self.functions[-1]
        stack = self.loops[-1]
        self.order += 1
        loop = LoopInfo(node, function, stack[-1] if stack else None, self.order)
        loop.condition_depth = len(self.conditions[-1])
        if isinstance(node, cst.For):
            loop.targets = tuple(sorted(_target_names(node.target)))
            loop.iter_name = dotted_name(unwrap_iter(node.iter))
            wrapped = _progress_wrapped(loop.iter_name, function)
            if wrapped is not None:  # `lp = self.log_progress("valid", loader, ...)`, then `for batch in lp`
                loop.iter_name = wrapped
        self.f.branches_at[self.order] = tuple(self.branches[-1])
        stack.append(loop)
        function.loops.append(loop)
        self.f.loops.append(loop)

    # The context managers themselves run outside their own block: enter it at its body.
    def visit_With_body(self, node: cst.With) -> None:
        for item in node.items:  # `with tqdm(loader) as batches:` binds what the manager enters (itself, mostly)
            if item.asname is not None and isinstance(item.asname.name, cst.Name):
                self._record_assign(item, [item.asname.name.value], item.item)
        names = []
        for item in node.items:
            expr = item.item
            target = expr.func if isinstance(expr, cst.Call) else expr
            names.append(self._name_for(target) or "")
        self.withs[-1] = self.withs[-1] + names
        self.with_sizes.append(len(names))

    def leave_With_body(self, node: cst.With) -> None:
        n = self.with_sizes.pop()
        self.withs[-1] = self.withs[-1][: len(self.withs[-1]) - n]

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.lambdas += 1

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.lambdas -= 1

    def visit_If(self, node: cst.If) -> None:
        self.conditions[-1].append(node.test)

    def leave_If(self, node: cst.If) -> None:
        self.conditions[-1].pop()

    # -- calls and assignments ------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        function = self.functions[-1]
        ctx = self._context()
        dotted = dotted_name(node.func)
        receiver_node = call_receiver(node)
        info = CallInfo(
            node=node,
            function=function,
            context=ctx,
            qualname=self.f.qualify(dotted) if dotted and not self._shadowed(dotted) else None,
            dotted=dotted,
            method=method_name(node),
            receiver=dotted_name(receiver_node) if receiver_node is not None else None,
        )
        function.calls.append(info)
        self.f.calls.append(info)
        for loop in ctx.loops:
            loop.calls.append(info)

    def _shadowed(self, dotted: str) -> bool:
        """The head of a called name is a parameter of the function (or of one enclosing it), not the module
        imported under that name: `import model` ... `def predict_ab(model, L): model(L)`."""
        head = dotted.partition(".")[0]
        return head in self.f.imports and any(head in fn.params for fn in self.functions if not fn.is_module)

    def _record_assign(self, node: cst.CSTNode, targets: list[str], value, augmented=None) -> None:
        function = self.functions[-1]
        info = AssignInfo(node, function, self._context(), tuple(targets), value, augmented)
        function.assigns.append(info)
        self.f.assigns.append(info)
        for loop in info.context.loops:
            loop.assigns.append(info)

    # Assignments are recorded on leaving: the name is bound after its value is evaluated, so a use
    # inside the value (`ddp = ddp.to(rank)`) still sees the previous binding.
    def leave_Assign(self, node: cst.Assign) -> None:
        targets: list[str] = []
        for t in node.targets:
            targets.extend(_flat_targets(t.target))
        self._record_assign(node, targets, node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._record_assign(node, _flat_targets(node.target), node.value)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._record_assign(node, _flat_targets(node.target), node.value, node.operator.__class__.__name__)

    def visit_Return(self, node: cst.Return) -> None:
        self.order += 1
        self.f.branches_at[self.order] = tuple(self.branches[-1])
        self.functions[-1].returns.append((node, self.order))


_HANDLERS: dict[type, tuple] = {}


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def _target_names(node: cst.CSTNode) -> set[str]:
    """The names a target binds: `x`, and each of `x, (y, z)`."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, (cst.Tuple, cst.List)):
        out: set[str] = set()
        for el in node.elements:
            out |= _target_names(el.value)
        return out
    return set()


def _flat_targets(node: cst.CSTNode) -> list[str]:
    if isinstance(node, (cst.Tuple, cst.List)):
        out: list[str] = []
        for el in node.elements:
            out.extend(_flat_targets(el.value))
        return out
    if isinstance(node, cst.Subscript):
        base = dotted_name(node.value)
        return [f"{base}[]"] if base else []
    d = dotted_name(node)
    return [d] if d else []


def _progress_wrapped(name: str | None, function: "FunctionInfo") -> str | None:
    """The loader a local progress bar wraps: `pbar = tqdm(loader)`, `lp = self.log_progress(stage, loader)`."""
    if not name or "." in name:
        return None
    value = next((a.value for a in reversed(function.assigns) if a.targets == (name,)), None)
    if not isinstance(value, cst.Call):
        return None
    callee = (dotted_name(value.func) or "").rsplit(".", 1)[-1]
    if callee not in _ITER_WRAPPERS and "progress" not in callee.lower():
        return None
    return next((dotted_name(a.value) for a in value.args if a.keyword is None and dotted_name(a.value)), None)


def default_of(fn: "FunctionInfo", param: str) -> cst.BaseExpression | None:
    """The default value a parameter is declared with (`is_probe=False` -> the `False` Name), or None."""
    declared = fn.node.params if fn.node is not None else None
    for p in (*declared.posonly_params, *declared.params, *declared.kwonly_params) if declared is not None else ():
        if p.name.value == param:
            return p.default
    return None


def annotation_of(fn: "FunctionInfo", param: str) -> str | None:
    """The dotted name a parameter is annotated with: `def trainer(manager: SnapshotManager)` -> "SnapshotManager",
    also as a forward reference (`player: "PlayerDV3"`, a class imported only under TYPE_CHECKING)."""
    for p in (*fn.node.params.params, *fn.node.params.kwonly_params) if fn.node is not None else ():
        if p.name.value == param and p.annotation is not None:
            return _annotated_name(p.annotation.annotation)
    return None


def _annotated_name(written: cst.BaseExpression) -> str | None:
    """The class an annotation names; of a union, its first class (`agents: Agent | MultiAgent |
    list[Agent]`, `Optional[Encoder]`, `Union[Encoder, None]`)."""
    if isinstance(written, cst.SimpleString):
        text = written.evaluated_value
        return text if isinstance(text, str) and all(part.isidentifier() for part in text.split(".")) else None
    if isinstance(written, cst.BinaryOperation) and isinstance(written.operator, cst.BitOr):
        return _annotated_name(written.left) or _annotated_name(written.right)
    if isinstance(written, cst.Subscript) and dotted_name(written.value) in _UNION_TYPES:
        members = [e.slice.value for e in written.slice if isinstance(e.slice, cst.Index)]
        return next((n for n in map(_annotated_name, members) if n), None)
    name = dotted_name(written)
    return None if name == "None" else name


_UNION_TYPES = {"Optional", "Union", "typing.Optional", "typing.Union"}


def unwrap_iter(node: cst.BaseExpression) -> cst.BaseExpression:
    """`enumerate(loader)`, `tqdm(loader)` -> `loader`."""
    while isinstance(node, cst.Call) and node.args and dotted_name(node.func) in _ITER_WRAPPERS:
        node = node.args[0].value
    return node


_ITER_WRAPPERS = {"enumerate", "tqdm", "tqdm.tqdm", "zip", "iter", "progress_bar", "track"}
