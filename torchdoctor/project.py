"""The project index: lets a rule see the other files of the user's project.

A model class defined in `models.py` and trained in `train.py` must be
understood from `train.py`. The index resolves an imported name to the file
that defines it (absolute imports from the project root or the file's folder,
relative imports from the file's package), parses that file once per process,
and records which files each lint depended on so the result cache can be
invalidated when one of them changes.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchdoctor.decorators import resolve_no_grad_decorators
from torchdoctor.facts import ClassInfo, FileFacts, FunctionInfo, is_test_file, partial_binding, partial_of
from torchdoctor.results import content_hash
from torchdoctor.sources import read_source

if TYPE_CHECKING:
    from torchdoctor.facts import CallInfo

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _has_marker(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in PROJECT_MARKERS)


def find_project_root(path: Path) -> Path:
    """The nearest folder above `path` holding a project marker, else the file's own folder."""
    start = path.parent if path.is_file() or path.suffix == ".py" else path
    for folder in (start, *start.parents):
        if _has_marker(folder):
            return folder
    return start


class ProjectIndex:
    """Parses project files on demand, at most once each per process."""

    MAX_FILES_SEARCHED = 3000  # a project bigger than this is not searched for callers

    def __init__(self) -> None:
        self._facts: dict[Path, FileFacts | None] = {}
        self._roots: dict[Path, Path] = {}
        self._texts: dict[Path, list[tuple[Path, str]]] = {}  # project root -> its files' text
        self.consulted: dict[Path, str] = {}  # path -> content hash, for the cache
        self._callers: dict[tuple[Path, str], list] = {}
        self._searched: dict[tuple[Path, str], list[Path]] = {}  # the files each caller search read
        # (project root, pattern) -> (whether a file shows it, the files the answer rests on)
        self._text_answers: dict[tuple[Path, str], tuple[bool | None, dict[Path, str]]] = {}
        self._sys_paths: dict[Path, list[Path]] = {}  # importer -> folders it puts on sys.path

    def root_for(self, path: Path) -> Path:
        folder = path.parent
        if folder not in self._roots:
            self._roots[folder] = find_project_root(path)
        return self._roots[folder]

    def facts_for_path(self, path: Path) -> FileFacts | None:
        path = path.resolve()
        if path not in self._facts:
            self._facts[path] = _parse_quietly(path)
            if self._facts[path] is not None:
                resolve_no_grad_decorators(self._facts[path], self)
        facts = self._facts[path]
        if facts is not None:
            self.consulted[path] = content_hash(facts.source)
        return facts

    @contextmanager
    def lending(self, facts: FileFacts):
        """While `facts` is linted, the project answers for its path with this very object: every
        lookup that comes back to the file (a worker handed to `mp.spawn`, a caller search) then sees
        the same functions, whichever files this process read before. The cached entry is restored
        after (the linted text may differ from the file on disk: a fix, a seeded mutation)."""
        if facts.path == "<string>":
            yield
            return
        path = Path(facts.path).resolve()
        missing = object()
        previous = self._facts.get(path, missing)
        self._facts[path] = facts
        try:
            yield
        finally:
            if previous is missing:
                del self._facts[path]
            else:
                self._facts[path] = previous

    def module_facts(self, importer: Path, module: str) -> FileFacts | None:
        """The parsed facts of `module` as imported from `importer`, if it is a file of the project."""
        file = self.module_file(importer, module)
        return self.facts_for_path(file) if file is not None else None

    def _sys_path_entries(self, importer: Path, root: Path) -> list[Path]:
        """The folders a script puts on sys.path by literal name (`sys.path.insert(1, 'siamese_fcn')`,
        `sys.path.append("../models")`), taken from its own folder and from the project root."""
        if importer not in self._sys_paths:
            facts = self.facts_for_path(importer)  # (already parsed: its imports are being resolved)
            written = _SYS_PATH_ENTRY.findall(facts.source) if facts is not None and "sys.path" in facts.source else []
            self._sys_paths[importer] = [
                base / entry for entry in written for base in (importer.parent, root)
                if entry not in (".", "") and (base / entry).is_dir()
            ]
        return self._sys_paths[importer]

    def module_file(self, importer: Path, module: str) -> Path | None:
        """Where `module` (as written in an import inside `importer`) lives, if in the project."""
        importer = importer.resolve()
        if module.startswith("."):
            level = len(module) - len(module.lstrip("."))
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            parts = [p for p in module.lstrip(".").split(".") if p]
            return _module_at(base, parts)
        parts = module.split(".")
        root = self.root_for(importer)
        # (`import _init_paths` / `init_paths` put a `lib/` folder on sys.path: detectron-era repositories)
        # (and a `lib/` beside the script's folder: PubMedCLIP's `main/_init_paths.py` adds `../lib`)
        bases = [importer.parent, root, root / "src", importer.parent / "lib", root / "lib", importer.parent.parent / "lib"]
        if importer.parent != root and root in importer.parent.parents:
            bases.append(importer.parent.parent)  # `eval/metrics.py` that puts its parent folder on sys.path
        for base in bases:
            found = _module_at(base, parts)
            if found is not None:
                return found
        # `from zoedepth.models.layers import X` inside metric_depth/zoedepth/...: the package's own folder
        # sits in a sub-folder of the repository, which its scripts put on sys.path
        folder = importer.parent
        while folder != root and root in folder.parents:
            if folder.name == parts[0] and folder.parent not in bases:
                found = _module_at(folder.parent, parts)
                if found is not None:
                    return found
            folder = folder.parent
        if root == importer.parent and not _has_marker(root):
            # no project marker anywhere (a downloaded archive): `from models.blocks import *` inside
            # `models/` names the package this file sits in, whose parent is then on sys.path
            for folder in (importer.parent, *importer.parent.parents[:3]):
                if folder.name == parts[0]:
                    return _module_at(folder.parent, parts)
        for folder in self._sys_path_entries(importer, root):
            # `sys.path.insert(1, 'evaluation')` ... `from metrics import evaluate_net_predictions`
            found = _module_at(folder, parts)
            if found is not None:
                return found
        inside = importer.relative_to(root).parts if root in importer.parents else ()
        if len(parts) >= 3 and len(inside) >= 2 and inside[0] == parts[1] and not (root / parts[0]).exists():
            # `from project.src.infer import infer` in src/visualize/: the repository itself is the package
            # `project`, checked out under another folder name; its own top folder comes second
            return _module_at(root, parts[1:])
        return None

    def resolve_imported(self, facts: FileFacts, local_name: str) -> tuple[FileFacts, ClassInfo | FunctionInfo] | None:
        """The class or function that `local_name` was imported as, in the file that defines it."""
        if facts.path == "<string>":
            return None
        imported = facts.imported.get(local_name)
        if imported is not None:
            if imported.name is None:
                return None
            return self._definition_in(Path(facts.path), imported.module, imported.name, depth=0)
        if local_name in facts.classes or local_name in facts.toplevel_functions or "." in local_name:
            return None
        for module in reversed(facts.star_imports):  # `from utils import *`: the last one wins
            found = self._definition_in(Path(facts.path), module, local_name, depth=0)
            if found is not None:
                return found
        return None

    def module_value(self, facts: FileFacts, local_name: str) -> tuple[FileFacts, cst.BaseExpression] | None:
        """The value a module-level name imported from another file of the project was assigned there:
        `from .kernels import registry as kernel_registry`, where `registry = {"s4": SSKernel, ...}`."""
        imported = facts.imported.get(local_name)
        if imported is None or imported.name is None or facts.path == "<string>":
            return None
        other = self.module_facts(Path(facts.path), imported.module)
        if other is None:
            return None
        value = other.module_value(imported.name)
        return (other, value) if value is not None else None

    def function_named(self, facts: FileFacts, name: str | None) -> tuple[FileFacts, FunctionInfo] | None:
        """(facts, function) for a function, `module.function` or `Class.method` imported from another
        file of the project: `import auxiliaries as aux` ... `aux.eval_metrics(model, loader)`."""
        if not name:
            return None
        if name.count(".") > 1:  # `import pfrl` ... `pfrl.utils.evaluating(model)`: a function of a package module
            return self._function_in_module_path(facts, name)
        if "." not in name:
            found = self.resolve_imported(facts, name)
            return found if found is not None and isinstance(found[1], FunctionInfo) else None
        owner, method = name.split(".")
        imported = facts.imported.get(owner)
        module = None
        if imported is not None and facts.path != "<string>":
            # `import aux` ... `aux.f()`, or `from src.models import utils` ... `utils.get_logits()` (a submodule)
            module = imported.module if imported.name is None else _submodule(imported.module, imported.name)
        if module is not None and (imported.name is None or imported.name not in facts.classes and self.module_file(Path(facts.path), module)):
            return self._function_of_module(facts, module, method)
        found = lookup_class(self, facts, owner)
        if found is None or method not in found[1].methods:
            return None
        return found[0], found[1].methods[method]

    def _function_in_module_path(self, facts: FileFacts, name: str) -> tuple[FileFacts, FunctionInfo] | None:
        """`pkg.sub.function` after `import pkg`: the function the project's `pkg/sub` module defines or
        re-exports."""
        path, function_name = name.rsplit(".", 1)
        head, _, rest = path.partition(".")
        imported = facts.imported.get(head)
        if imported is None or imported.name is not None or facts.path == "<string>":
            return None
        return self._function_of_module(facts, f"{imported.module}.{rest}", function_name)

    def _function_of_module(self, facts: FileFacts, module: str, name: str) -> tuple[FileFacts, FunctionInfo] | None:
        """(facts, function) for the function `name` that a module of the project defines, or re-exports as
        a package does (`from .optim_util import clip_grad_norm`, `from pfrl.utils.contexts import evaluating`)."""
        other = self.module_facts(Path(facts.path), module)
        if other is None:
            return None
        function = other.toplevel_functions.get(name)
        if function is not None:
            return other, function
        found = self.resolve_imported(other, name)
        return found if found is not None and isinstance(found[1], FunctionInfo) else None

    def inherit_star_imports(self, facts: FileFacts) -> None:
        """`from .network_utils import *` where network_utils says `import torch.nn as nn`: the star
        brings `nn` too, so `nn.Linear` here qualifies to `torch.nn.Linear`. Names the file defines or
        imports itself win."""
        if facts.path == "<string>" or not facts.star_imports:
            return
        here = Path(facts.path)
        pending = [(here, module, 0) for module in facts.star_imports]
        added: set[str] = set()
        while pending:
            importer, module, depth = pending.pop()
            other = self.module_facts(importer, module) if depth <= 3 else None
            if other is None:
                continue
            for local, target in other.imports.items():
                if local not in facts.classes and local not in facts.toplevel_functions and local not in facts.imports:
                    facts.imports[local] = target
                    added.add(local)
            pending.extend((Path(other.path), star, depth + 1) for star in other.star_imports)
        if added:  # what the parse could not resolve: `torch.softmax(x)` with `torch` from the star
            for call in facts.calls:
                if call.qualname is None and call.dotted and call.dotted.partition(".")[0] in added:
                    call.qualname = facts.qualify(call.dotted)
            for cls in facts.all_classes:
                cls.bases = tuple(
                    facts.qualify(w) or b if w.partition(".")[0] in added else b for b, w in zip(cls.bases, cls.written_bases)
                )

    def _definition_in(self, importer: Path, module: str, name: str, depth: int):
        if depth > 3:
            return None
        other = self.module_facts(importer, module)
        if other is None:
            return None
        file = Path(other.path)
        if name in other.classes:
            return other, other.classes[name]
        if name in other.toplevel_functions:
            return other, other.toplevel_functions[name]
        reexport = other.imported.get(name)  # `from .model import Net` in a package __init__
        if reexport is not None and reexport.name is not None:
            return self._definition_in(file, reexport.module, reexport.name, depth + 1)
        for star in other.star_imports:  # `from .models import *` in a package __init__
            found = self._definition_in(file, star, name, depth + 1)
            if found is not None:
                return found
        return None

    def qualified_alias(self, facts: FileFacts, local_name: str) -> str | None:
        """`from .wrappers import BatchNorm2d` where wrappers.py says `BatchNorm2d = torch.nn.BatchNorm2d`:
        the qualified name the alias stands for."""
        found = self.module_value(facts, local_name)
        return found[0].qualify(found[1]) if found is not None else None

    def callers_elsewhere(self, facts: FileFacts, function_name: str) -> list[tuple[FileFacts, "CallInfo"]]:
        """Calls of a top-level function of `facts` made from other files of the project
        (`from train_utils import validation` ... `validation(model, ...)`)."""
        if facts.path == "<string>":
            return []
        here = Path(facts.path).resolve()
        return self._remembered((here, function_name), lambda: self._find_callers(here, function_name))

    def _remembered(self, key, find) -> list[tuple[FileFacts, "CallInfo"]]:
        """A search of other files, done once per process; a remembered answer still records the
        files it read, so each cache entry lists what it depended on."""
        if key not in self._callers:
            # (and every file the search itself read to resolve imports: a package `__init__` re-exporting it)
            outer, self.consulted = self.consulted, {}
            try:
                self._callers[key] = find()
            finally:
                searched, self.consulted = self.consulted, outer
                outer.update(searched)
            self._searched[key] = list(searched)
        for path in self._searched[key]:  # (the callers' files among them: the search read each one)
            self.facts_for_path(path)
        return self._callers[key]

    def _find_callers(self, here: Path, function_name: str) -> list[tuple[FileFacts, "CallInfo"]]:
        found = []
        module = here.parent.name if here.stem == "__init__" else here.stem  # named by any import of it
        for path, text in self._project_texts(self.root_for(here)):
            if path == here or (module not in text and "import *" not in text) or (
                f"{function_name}(" not in text and f"{function_name} as " not in text and f"partial({function_name}," not in text
            ):
                continue  # (called by name, or imported under an alias: `evaluate_network_sparse as evaluate_network`)
            if is_test_file(str(path)) and not is_test_file(str(here)):
                continue  # a unit test calls it with stand-ins (`predict_embeddings(loader, nn.Identity())`)
            other = self.facts_for_path(path)
            if other is None:
                continue
            names = set()
            scoped: dict[str, list] = {}  # name -> functions whose own import binds it (None: the module's)
            for local, imported in other.all_imports:
                if imported.name == function_name:
                    if local in other.toplevel_functions:
                        continue  # dino's eval_copy_detection imports extract_features, then defines its own
                    if self._exports(path, imported.module, here, function_name):
                        names.add(local)  # from train_utils import validation (as val)
                        scoped.setdefault(local, []).append(other.import_scope.get(id(imported)))
                elif f"{local}.{function_name}(" in text:
                    whole = imported.module if imported.name is None else _submodule(imported.module, imported.name)
                    if self._exports(path, whole, here, function_name):
                        # import inference ... inference.inference(...); or `from utils import pipeline` ...
                        # `pipeline.test_aug(...)`, re-exported by utils/pipeline/__init__.py
                        names.add(f"{local}.{function_name}")
            if function_name not in other.toplevel_functions and function_name not in other.imported and any(
                self._exports(path, star, here, function_name) for star in other.star_imports
            ):
                # from utils import *  ...  test(epoch, model, loader); or a package re-exporting it
                # (`from nnflow import *`, with `from .inference import eval_model` in nnflow/__init__.py)
                names.add(function_name)
            found.extend((other, c) for c in other.calls if c.dotted in names and _bound_where(c, scoped.get(c.dotted)))
            # `eval_function = partial(evaluate, model=model, ...)`, then `eval_function()` after each epoch
            bound = {a.targets[0] for a in other.assigns if len(a.targets) == 1 and partial_of(a.value) in names}
            found.extend((other, c) for c in other.calls if c.dotted in bound and partial_of(partial_binding(c)) in names)
        return found

    def handed_on_elsewhere(self, facts: FileFacts, function_name: str) -> bool:
        """Another file imports the top-level function and stores it as a value, uncalled: `self.eval_func =
        evaluation` (a model class of vilmedic, whose validator calls it under no_grad through the model);
        it runs where that value is called, which cannot be followed by name."""
        if facts.path == "<string>":
            return False
        here = Path(facts.path).resolve()
        module = here.parent.name if here.stem == "__init__" else here.stem
        for path, text in self._project_texts(self.root_for(here)):
            if path == here or module not in text or function_name not in text or is_test_file(str(path)):
                continue
            other = self.facts_for_path(path)
            if other is None:
                continue
            for local, imported in other.all_imports:
                if imported.name != function_name or not self._exports(path, imported.module, here, function_name):
                    continue
                if stored_as_value(other, local):
                    return True
        return False

    def _exports(self, importer: Path, module: str, here: Path, name: str) -> bool:
        """`module` (imported in `importer`) is `here`, or a package whose `__init__` re-exports `name`
        from `here` (`from core.utils import eval_tasks`, with `from .utils import *` in core/utils/__init__.py)."""
        target = self.module_file(importer, module)
        if target == here:
            return True
        if target is None or target.name != "__init__.py":
            return False
        init = self.facts_for_path(target)
        if init is None:
            return False
        if any(self.module_file(target, star) == here for star in init.star_imports):
            return True
        imported = init.imported.get(name)
        return imported is not None and imported.name == name and self.module_file(target, imported.module) == here

    def method_callers(self, facts: FileFacts, method_name: str) -> list[tuple[FileFacts, "CallInfo"]]:
        """Calls `self.<method_name>(...)` anywhere in the project, this file included: a mixin's
        `training_loss` calling `self.predict(batch)`, whatever class ends up defining `predict`."""
        dotted = f"self.{method_name}"
        here_calls = [(facts, c) for c in facts.calls if c.dotted == dotted]
        if facts.path == "<string>":
            return here_calls
        here = Path(facts.path).resolve()
        return here_calls + self._remembered(
            (here, dotted), lambda: self._calls_elsewhere(here, f"{dotted}(", lambda c: c.dotted == dotted)
        )

    def outside_callers(self, facts: FileFacts, method_name: str) -> list[tuple[FileFacts, "CallInfo"]]:
        """Calls `<obj>.<method_name>(...)` on some object other than `self` in the other files of the
        project: a training script calling `model.forward_test_wikikg(...)`."""
        if facts.path == "<string>":
            return []
        here = Path(facts.path).resolve()
        return self._remembered(
            (here, "." + method_name),
            lambda: self._calls_elsewhere(
                here, f".{method_name}(", lambda c: c.method == method_name and c.receiver not in (None, "self")
            ),
        )

    def methods_named(self, facts: FileFacts, method_name: str) -> list[tuple[FileFacts, "FunctionInfo"]]:
        """Every method `def <method_name>(self, ...)` of a class in the project, this file included."""
        return self._definitions(facts, f"def {method_name}(", lambda other: [
            (other, m) for cls in other.all_classes for m in cls.methods.values() if m.name == method_name
        ])

    def classes_named(self, facts: FileFacts, class_name: str) -> list[tuple[FileFacts, ClassInfo]]:
        """Every class `class <class_name>` of the project, this file included."""
        return self._definitions(facts, f"class {class_name}", lambda other: [
            (other, cls) for cls in other.all_classes if cls.name == class_name
        ])

    def subclasses_of(self, facts: FileFacts, cls: ClassInfo) -> list[tuple[FileFacts, ClassInfo]]:
        """The project's classes written on `cls` (directly), in any file: a base class's attributes that
        its subclasses fill."""
        def written_on(other: FileFacts) -> list[tuple[FileFacts, ClassInfo]]:
            found = []
            for sub in other.all_classes:
                for written in sub.written_bases:
                    base = lookup_class(self, other, written) if written.rsplit(".", 1)[-1] == cls.name else None
                    if base is not None and base[1].name == cls.name and base[0].path == facts.path:
                        found.append((other, sub))
                        break
            return found
        return self._definitions(facts, cls.name, written_on)

    def _definitions(self, facts: FileFacts, needle: str, defined_in) -> list:
        """What `defined_in` finds in each file of the project whose text holds `needle`, searched once."""
        if facts.path == "<string>":
            return defined_in(facts)
        root = self.root_for(Path(facts.path).resolve())

        def find():
            found = []
            for path, text in self._project_texts(root):
                other = self.facts_for_path(path) if needle in text else None
                if other is not None:
                    found.extend(defined_in(other))
            return found

        return self._remembered((root, needle), find)

    def _calls_elsewhere(self, here: Path, needle: str, keep) -> list[tuple[FileFacts, "CallInfo"]]:
        """The calls `keep` accepts in the project's other files whose text holds `needle`."""
        found = []
        for path, text in self._project_texts(self.root_for(here)):
            if path != here and needle in text:
                other = self.facts_for_path(path)
                if other is not None:
                    found.extend((other, c) for c in other.calls if keep(c))
        return found

    def _project_texts(self, root: Path) -> list[tuple[Path, str]]:
        if root not in self._texts:
            from torchdoctor.discovery import SKIPPED_FOLDERS

            texts: list[tuple[Path, str]] = []
            for folder, dirnames, filenames in os.walk(root):
                # (a folder with a marker of its own is another project: a fixture, a vendored package)
                dirnames[:] = sorted(
                    d for d in dirnames if d not in SKIPPED_FOLDERS and not d.startswith(".")
                    and not any(Path(folder, d, marker).exists() for marker in PROJECT_MARKERS)
                )
                for name in sorted(filenames):
                    if name.endswith(".py"):
                        path = Path(folder, name).resolve()
                        try:
                            texts.append((path, read_source(path)[0]))
                        except (OSError, UnicodeDecodeError, SyntaxError):
                            continue
                if len(texts) > self.MAX_FILES_SEARCHED:
                    texts = []
                    break
            self._texts[root] = texts
        return self._texts[root]

    def writes_no_modes(self, facts: FileFacts) -> bool:
        """No file of the project writes anything that acts on train/eval mode (Dropout, BatchNorm,
        spectral norm, RReLU, a transformer layer, a `self.training` test) or imports a model library
        that could bring one (rlpyt, mbrl-lib): a model of a class we cannot trace there computes the
        same in both modes. False when the project is unknown or too big to read."""
        own: set[str] | None = None

        def shows(path, text) -> bool:
            nonlocal own
            zoo = [m.group(1) or m.group(2) for m in _MODEL_ZOO.finditer(text)]
            if zoo and own is None:
                own = self._own_packages(facts)  # (only asked when some file imports a `models` package)
            return bool(_MODE_TEXT.search(text)) or any(name not in own for name in zoo)

        return self._some_file_shows(facts, "modes", shows) is False

    def _own_packages(self, facts: FileFacts) -> set[str]:
        """The folder and module names inside the project: what `from <name>.models import ...` may name."""
        if facts.path == "<string>":
            return set()
        root = self.root_for(Path(facts.path).resolve())
        names = {root.name}
        for path, _ in self._project_texts(root):
            resolved = Path(path).resolve()
            if resolved.is_relative_to(root):
                names.update(resolved.relative_to(root).with_suffix("").parts)
        return names

    def sets_cuda_default(self, facts: FileFacts) -> bool:
        """Some file of the project makes CUDA the default device of new tensors
        (`torch.set_default_tensor_type('torch.cuda.FloatTensor')`, `torch.set_default_device("cuda")`),
        as NeuS and YOLACT do before training: a factory without `device=` then lands on the GPU. (The
        text only picks the files to parse: a docstring that names the call sets nothing.)"""
        return self._some_file_shows(
            facts, "cuda default",
            lambda path, text: bool(_CUDA_DEFAULT_TEXT.search(text)) and _calls_cuda_default(self.facts_for_path(path)),
        ) is True

    def mentions(self, facts: FileFacts, text: str) -> bool | None:
        """Whether the linted source or another file of the project holds `text` (`.set_epoch(`); None
        when the project is unknown or too big to read. (The linted text, not its file on disk: a fix or
        a seeded mutation may differ from it.)"""
        if text in facts.source:
            return True
        if facts.path == "<string>":
            return None
        here = Path(facts.path).resolve()
        if all(path == here for path, _ in self._project_texts(self.root_for(here))):
            return None  # (no other file to read)
        return self._some_file_shows(facts, f"text:{here}:{text}", lambda path, content: path != here and text in content)

    def _some_file_shows(self, facts: FileFacts, question: str, shows) -> bool | None:
        """Whether `shows(path, text)` holds for a file of the project; None when the project is unknown
        or too big to read. The files the answer rests on are recorded for the result cache: a "yes"
        rests on the first file that shows it, a "no" on every file of the project."""
        if facts.path == "<string>":
            return None
        root = self.root_for(Path(facts.path).resolve())
        key = (root, question)
        if key not in self._text_answers:
            texts = self._project_texts(root)
            showing = next(((path, text) for path, text in texts if shows(path, text)), None)
            read = [showing] if showing is not None else texts
            answer = (showing is not None) if texts else None
            self._text_answers[key] = (answer, {path: content_hash(text) for path, text in read})
        answer, hashes = self._text_answers[key]
        self.consulted.update(hashes)
        return answer

    def _class_in(self, facts: FileFacts, module: str, name: str) -> tuple[FileFacts, ClassInfo] | None:
        """Class `name` of a project module as `facts` imports it: defined there, or re-exported by it
        (`utils/__init__.py`'s `from .loss import FocalLoss`, reached as `utils.FocalLoss`)."""
        found = self._definition_in(Path(facts.path), module, name, depth=0)
        return found if found is not None and isinstance(found[1], ClassInfo) else None

    def find_class(self, facts: FileFacts, name: str) -> tuple[FileFacts, ClassInfo] | None:
        """A class by the name used in `facts`: defined there, imported from the project, or
        reached through an imported project module (`import seq2seq_models as sm` ... `sm.Decoder`)."""
        if name in facts.classes:
            return facts, facts.classes[name]
        head, dot, tail = name.partition(".")
        if dot and "." not in tail:
            module = facts.imported.get(head)
            if module is None or facts.path == "<string>":
                return None
            # `import common as c` ... `c.Upsampler`, or `from model import common` ... `common.Upsampler`
            path = module.module if module.name is None else _submodule(module.module, module.name)
            return self._class_in(facts, path, tail)
        plain_import = head in facts.imported and facts.imported[head].name is None or facts.imports.get(head) == head
        if dot and facts.path != "<string>" and plain_import:
            # `import patchcore.common` ... `patchcore.common.NetworkFeatureAggregator(...)` (PatchCore), or
            # `import flair.nn` ... `flair.nn.Classifier`, re-exported by flair/nn/__init__.py
            module, _, cls_name = name.rpartition(".")
            return self._class_in(facts, module, cls_name)
        found = self.resolve_imported(facts, name)
        if found is not None and isinstance(found[1], ClassInfo):
            return found[0], found[1]
        return None


def _calls_cuda_default(facts: FileFacts | None) -> bool:
    """`torch.set_default_tensor_type('torch.cuda.FloatTensor')`, `torch.set_default_device("cuda")`."""
    if facts is None:
        return False
    for call in facts.calls:
        if call.qualname in ("torch.set_default_tensor_type", "torch.set_default_device") and call.node.args:
            arg = call.node.args[0].value
            text = arg.evaluated_value if isinstance(arg, cst.SimpleString) else facts.module.code_for_node(arg)
            if "cuda" in str(text):
                return True
    return False


_CUDA_DEFAULT_TEXT = re.compile(  # (a commented-out line does not count)
    r"^[^#\n]*(set_default_tensor_type\(\s*['\"]?torch\.cuda\.|set_default_device\(\s*(['\"]cuda|torch\.device\(\s*['\"]cuda))",
    re.M,
)

# Text that shows a project can hold a layer acting on train/eval mode, or models from a library
_MODE_TEXT = re.compile(
    r"Dropout|BatchNorm|\bdropout\b|spectral_norm|RReLU|nn\.Transformer|self\.training\b(?!\s*=(?!=))"
    r"|torch\.nn\.modules\.transformer\b|^\s*from\s+torch\.nn\s+import\s[^\n]*\bTransformer"  # (layers with dropout 0.1)
    r"|^\s*(from|import)\s+(timm|transformers|diffusers|torch_geometric|dgl|pretrainedmodels|torchaudio"
    r"|fairseq|detectron2|mmcv|mmdet|open_clip|clip|segmentation_models_pytorch|lightning|pytorch_lightning)\b"
    # torchvision only through its models: IQ-Learn's `from torchvision.utils import save_image` brings none
    r"|torchvision\.models\b|^\s*from\s+torchvision\s+import\s[^\n]*\bmodels\b"
    r"|^\s*import\s+torchvision\s+as\s+(\w+)\b[\s\S]*\b\3\.models\b",
    re.M,
)
# `sys.path.insert(1, 'siamese_fcn')`, `sys.path.append("../models")`: a folder named by a literal
_SYS_PATH_ENTRY = re.compile(r"""^[ \t]*sys\.path\.(?:insert\(\s*-?\d+\s*,|append\()\s*r?['"]([^'"\n]+)['"]\s*\)""", re.M)
# Another package's model zoo (sota3d's `import torch3d.models as models`); the group is the package, which
# counts only when it is not the project's own (mbrl-lib's `from mbrl.models import ...`)
_MODEL_ZOO = re.compile(r"^\s*(?:import\s+([A-Za-z]\w*)\.models\b|from\s+([A-Za-z]\w*)(?:\.models\s+import|\s+import\s+models)\b)", re.M)


def stored_as_value(facts: FileFacts, name: str) -> bool:
    """The file stores `name` itself, uncalled, in an attribute, a variable or a collection literal:
    `self.eval_func = evaluation`, `EVALUATORS = {"cls": evaluation}`. (Handing it to a call, such as a
    search engine's callback argument, is not storing it: where it runs is that call's business.)
    Assignments inside a function that binds a local of that name (`fpnd = _frechet(...); return fpnd`
    inside `def fpnd`), or inside one nested in it, are passed over."""
    for a in facts.assigns:
        value = a.value
        if not isinstance(a.node, cst.Assign) or value is None:
            continue
        parts = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple, cst.Set)) else [value]
        if isinstance(value, cst.Dict):
            parts = [e.value for e in value.elements if isinstance(e, cst.DictElement)]
        if any(isinstance(p, cst.Name) and p.value == name for p in parts) and not _bound_locally(a.function, name):
            return True
    return False


def _bound_locally(fn: FunctionInfo, name: str) -> bool:
    """`name` is a parameter or a local of fn or of a function around it (not the module's own)."""
    while fn is not None and not fn.is_module:
        if name in fn.params or name in fn.assigned_names() or any(name in loop.targets for loop in fn.loops):
            return True
        fn = fn.parent
    return False


def _bound_where(call, scopes: list | None) -> bool:
    """The call sees the import: a module-level one, or one written in the function it is in
    (`get_cityscapes_mIoU`'s own `from .cityscapes_mIoU import test` is another `test`)."""
    if not scopes or None in scopes:
        return True
    fn = call.function
    while fn is not None:
        if any(fn is s for s in scopes):
            return True
        fn = fn.parent
    return False


def _submodule(package: str, name: str) -> str:
    """`from . import inference` names module `.inference`; `from pkg import utils`, `pkg.utils`."""
    return f"{package}{name}" if package.endswith(".") else f"{package}.{name}"


def _module_at(base: Path, parts: list[str]) -> Path | None:
    if not parts:
        init = base / "__init__.py"
        return init if init.is_file() else None
    candidate = base.joinpath(*parts)
    as_file = candidate.with_suffix(".py")
    if as_file.is_file():
        return as_file
    init = candidate / "__init__.py"
    return init if init.is_file() else None


def _parse_quietly(path: Path) -> FileFacts | None:
    try:
        source, _ = read_source(path)
        return FileFacts(cst.parse_module(source), source, str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, cst.ParserSyntaxError, RecursionError):
        return None


def lookup_class(project: "ProjectIndex | None", facts: FileFacts, name: str | None) -> tuple[FileFacts, ClassInfo] | None:
    """A class by the name a call uses: in this file, or (with a project) imported from another file."""
    if not name:
        return None
    if project is not None:
        return project.find_class(facts, name)
    return (facts, facts.classes[name]) if name in facts.classes else None


def method_and_file(project: "ProjectIndex | None", facts: FileFacts, cls: ClassInfo, name: str,
                    depth: int = 0) -> tuple[FileFacts, FunctionInfo] | None:
    """(facts, method): a method of a class or of its base classes, with the file it is written in
    (this one, or another of the project)."""
    if name in cls.methods:
        return facts, cls.methods[name]
    for written in cls.written_bases if depth < 4 else ():
        found = lookup_class(project, facts, written)
        if found is not None and found[1] is not cls:
            method = method_and_file(project, found[0], found[1], name, depth + 1)
            if method is not None:
                return method
    return None
