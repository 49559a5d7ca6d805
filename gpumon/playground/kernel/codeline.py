"""The code line: Python typed by the user, run in the kernel's workspace like a notebook cell.

``torch``, ``nn`` and ``F`` are already imported; the workspace's names are variables. The
last line's value is the result when it is an expression (``y + x.cpu()``), or the assigned
name's value when it is ``name = ...``. The card says which tensors the code made or changed
and where they live; only the CUDA devices holding those are synchronised, so a context is
never created on a GPU the code did not use. Typed code has no size guard: the kernel's
isolation is its guard. What the code prints is kept for its card (printed.py).

``exit()``, ``quit()`` and ``sys.exit()`` end a notebook cell, not the kernel: as in Jupyter
they become a card and the workspace is kept (``os._exit`` cannot be caught;
docs/playground-and-lesson.md says so).
"""

from __future__ import annotations

import ast
import builtins
import time
import types
from typing import Any

from gpumon.i18n import ntr, sentences, tr
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.errors import ErrorInfo
from gpumon.playground.kernel.action_run import ActionRun, synchronize
from gpumon.playground.kernel.describe import ReprFailed, model_devices
from gpumon.playground.kernel.explain import qualified_type_name
from gpumon.playground.kernel.memory import torch_memory_counters
from gpumon.playground.kernel.printed import printed

#: Names the card lists under "made or changed"; the rest are counted.
MADE_LISTED = 20
#: The longest message of a failed __repr__ kept for its card.
MAX_REPR_ERROR_CHARS = 2000


def syntax_error(exc: SyntaxError) -> ErrorInfo:
    """A typing mistake, in Python's words; never labelled as torch's."""
    where = f" (line {exc.lineno})" if exc.lineno else ""  # as Python words it: stays English
    return ErrorInfo("SyntaxError", f"{exc.msg}{where}",
                     tr("Python could not read this line; nothing ran."), by_torch=False)


def repr_error(failed: ReprFailed) -> ErrorInfo:
    """The card of a result whose own ``__repr__`` failed: its error, as Python wrote it,
    attributed to the user's object; never a bug of gpumon's or an error of torch's."""
    error = failed.error
    return ErrorInfo(qualified_type_name(error), str(error)[:MAX_REPR_ERROR_CHARS],
                     tr("The __repr__ of your {type} object raised this error, so its value "
                        "cannot be shown; the error is in that __repr__, not in gpumon or "
                        "torch. The code ran, and what it assigned is kept.",
                        type=failed.type_name), by_torch=False)


def exit_refused(exc: SystemExit) -> ErrorInfo:
    """The card of ``exit()``, ``quit()``, ``sys.exit()`` or ``raise SystemExit`` in typed code:
    the kernel goes on, with its workspace (what ran before the call is kept)."""
    message = tr("exit() would end the playground's kernel: the kernel goes on and the "
                 "workspace is kept.")
    if exc.code is not None and exc.code != 0:
        message = sentences(message, tr("Exit status asked for: {code}.",
                                        code=repr(exc.code)[:80]))
    return ErrorInfo("SystemExit", message,
                     tr("Typed code runs like a notebook cell: exit(), quit() and sys.exit() "
                        "stop the code at that line, as in Jupyter, and the lines before it "
                        "ran. os._exit() cannot be stopped: it ends the kernel."),
                     by_torch=False)


def _no_exit(code: object = None) -> None:
    """``exit``/``quit`` for typed code: site's versions also close sys.stdin (fd 0)."""
    raise SystemExit(code)


#: The builtins typed code sees: Python's, with an exit() and quit() that leave stdin open.
_BUILTINS = {**vars(builtins), "exit": _no_exit, "quit": _no_exit}


def _fingerprint(value: Any, torch: Any) -> tuple[int, int]:
    """Identity plus a tensor's version counter, which in-place operations bump."""
    version = int(value._version) if isinstance(value, torch.Tensor) else 0
    return id(value), version


def _devices_of(value: Any, torch: Any) -> list[str]:
    if isinstance(value, torch.Tensor):
        return [str(value.device)]
    if isinstance(value, torch.nn.Module):
        return [d for d in model_devices(value).split(", ") if d and d != "mixed"] or \
            [str(p.device) for p in value.parameters()][:1]
    return []


def run_code(values: dict[str, Any], action: RunCode, torch: Any, run: ActionRun) -> None:
    """Execute ``action.source`` on ``values`` (updated in place), filling ``run``.

    Raises SyntaxError before anything runs, or whatever the code raised (after the workspace
    has kept what the lines before the error assigned, as Python would); SystemExit too, which
    the engine turns into the card of :func:`exit_refused`.
    """
    tree = ast.parse(action.source, "<code line>", "exec")
    last_expr: ast.expr | None = None
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        last_expr = last.value
        tree.body.pop()
    assigned = None
    if tree.body and isinstance(tree.body[-1], ast.Assign) and len(tree.body[-1].targets) == 1 \
            and isinstance(tree.body[-1].targets[0], ast.Name):
        assigned = tree.body[-1].targets[0].id
    body = compile(tree, "<code line>", "exec")
    tail = compile(ast.Expression(last_expr), "<code line>", "eval") if last_expr else None
    provided = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional}
    ns: dict[str, Any] = {**provided, **values, "__builtins__": _BUILTINS}
    before = {name: _fingerprint(v, torch) for name, v in values.items()}
    cuda_now = [f"cuda:{i}" for i in torch_memory_counters()]
    run.begin(["cpu", *cuda_now])
    memory_before = run.memory_before
    run.executed = True
    value: Any = None
    start = time.perf_counter()
    changed: list[str] = []
    try:
        try:
            with printed() as out:  # print() goes to the card, not the terminal
                try:
                    exec(body, ns)  # the user's own code, in the kernel process
                    if tail is not None:
                        value = eval(tail, ns)
                    elif assigned is not None:
                        value = ns.get(assigned)
                finally:
                    run.output = out.text()
        finally:  # what ran before an error stays, as in Python
            changed = _keep(values, ns, provided, before, torch)
        for name in changed:
            run.hold(*_devices_of(values[name], torch))
        run.hold(*_devices_of(value, torch))
        synchronize(run.held)  # only devices holding what the code made or changed
    finally:
        run.duration_s = time.perf_counter() - start
        if not run.devices:
            run.touch("cpu")
        run.memory_before = tuple(r for r in memory_before if r.device in run.devices)
    run.value = value
    run.result_name = assigned if tail is None else None
    if tail is None and assigned is None:
        run.kind = "none"
    elif not isinstance(value, (torch.Tensor, torch.nn.Module)):
        run.kind = "value"
    not_a_tensor = tr("not a tensor")
    made = [f"{n} ({', '.join(_devices_of(values[n], torch)) or not_a_tensor})"
            for n in changed[:MADE_LISTED]]
    if len(changed) > MADE_LISTED:  # a loop that made 200,000 names: the card stays short
        rest = len(changed) - MADE_LISTED
        made.append(ntr("… and {count} more name", "… and {count} more names", rest,
                        count=f"{rest:,}"))
    if made:
        run.details = ((tr("made or changed"), "; ".join(made)),)


def _keep(values: dict[str, Any], ns: dict[str, Any], provided: dict[str, Any],
          before: dict[str, tuple[int, int]], torch: Any) -> list[str]:
    """Copy the code's names back into the workspace; the names it made or changed."""
    changed = []
    for name, value in ns.items():
        if name.startswith("__") or isinstance(value, types.ModuleType) \
                or provided.get(name) is value:
            continue
        if before.get(name) != _fingerprint(value, torch):
            changed.append(name)
        values[name] = value
    for name in [n for n in values if n not in ns]:  # ``del x`` in the code
        del values[name]
    return changed
