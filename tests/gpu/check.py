"""One prepared check of gpumon on a real NVIDIA GPU, under five minutes, without network.

    PYTHONPATH=. timeout 300 python tests/gpu/check.py --out gpu-check-results

runs, in this order: ``--once`` and ``--once --json`` beside nvidia-smi (and the compute
processes, while a playground kernel holds memory on cuda:0), the exporter beside
``--json``, ``gpumon dmon``'s GPM activity beside ``nvidia-smi dmon --gpm-metrics`` while
matrix products load cuda:0, ``gpumon lesson``, the playground kernel on cuda:0 with the four
memory lines after every step, cuda:1 alone and CUDA_VISIBLE_DEVICES reordered (two GPUs or
more), and finally pytest on tests/gpu, tests/telemetry and tests/playground. Each check is
PASS, FAIL or SKIP with its reason in ``summary.md``; the exit status is 1 when any check
failed.

``--dry-run`` runs the same code without a GPU (the fake NVML library, a stand-in nvidia-smi,
the kernel on cpu, Qt hidden) and reports every GPU-only check as SKIP; tests/gpu/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import platform
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script, from anywhere

from gpumon import __version__
from tests.gpu.gpucheck import activity, kernel_checks, outputs, runs
from tests.gpu.gpucheck import kernel_walk as kw
from tests.gpu.gpucheck.context import (
    FAKE_SMI,
    REPO,
    Context,
    child_env,
    environ,
    fake_nvml_opener,
    torch_facts,
)
from tests.gpu.gpucheck.results import (
    FAIL,
    SKIP,
    Known,
    Result,
    exit_status,
    write_summary,
)

PYTEST_DIRS = ("tests/gpu", "tests/telemetry", "tests/playground")
CHECKS = ("outputs", "exporter", "activity", "lesson", "kernel", "pytest")
MIN_SECONDS = 15.0  # a check does not start with less time than this left


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="check.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "gpu-check-results",
                        help="folder for the summary and every table (default "
                             "gpu-check-results/; its old contents are replaced)")
    parser.add_argument("--dry-run", action="store_true",
                        help="no GPU: fake NVML, stand-in nvidia-smi, kernel on cpu, Qt hidden")
    parser.add_argument("--only", default=",".join(CHECKS),
                        help=f"comma-separated subset of {','.join(CHECKS)}")
    parser.add_argument("--pytest-dirs", default=",".join(PYTEST_DIRS),
                        help="what the pytest check runs (comma-separated)")
    parser.add_argument("--budget", type=float, default=280.0, metavar="SECONDS",
                        help="stop starting checks after this long (default 280)")
    parser.add_argument("--smi", default="nvidia-smi", help="the nvidia-smi to compare with")
    return parser


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # the dry run's blocker raises for hidden packages
        return False


def _facts(ctx: Context) -> tuple[int, list[str]]:
    """The machine for the summary; returns torch's CUDA device count and NVML's UUIDs."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ctx.facts.update({"date": now.strftime("%Y-%m-%d %H:%M UTC"), "host": platform.node(),
                      "gpumon": __version__, "python": platform.python_version()})
    uuids: list[str] = []
    try:
        reader = kernel_checks.NvmlReader(ctx)
        try:
            machine = reader.source.machine()
            gpus = reader.source.gpus()
            uuids = [g.uuid for g in gpus]
            ctx.facts["GPUs (NVML)"] = "; ".join(f"{g.index}: {g.name} {g.uuid}" for g in gpus)
            ctx.facts["driver"] = f"{machine.driver_version} (CUDA {machine.cuda_driver_version}" \
                                  f", NVML {machine.nvml_version})"
        finally:
            reader.close()
    except Exception as exc:  # the summary says what went wrong
        ctx.facts["GPUs (NVML)"] = f"NVML unusable: {exc}"
    ctx.torch = torch_facts(ctx)
    t = ctx.torch
    ctx.facts["torch"] = t.get("error") or \
        f"{t['torch']} (CUDA {t['cuda']}; {t['count']} CUDA devices: {', '.join(t['names'])})"
    ctx.facts["packages (as the checks' children see them)"] = ", ".join(t.get("packages", []))
    return int(t.get("count", 0)), uuids


Plan = list[tuple[str, Callable[[], Result]]]


def _plan(ctx: Context, only: set[str], cuda_count: int, uuids: list[str],
          pytest_dirs: list[str]) -> tuple[Plan, Callable[[], None]]:
    """The checks in order (a name "" is a hidden step), and how to end the holding kernel."""
    plan: Plan = []
    holder: list[kw.KernelSession] = []

    def hold() -> int | None:
        """A kernel holding 64 MiB on cuda:0 while outputs are compared (a compute process
        for the process lists); none in a dry run."""
        if ctx.dry_run or cuda_count == 0:
            return None
        with environ(ctx.child_env):
            session = kw.KernelSession(ctx.deadline)
            holder.append(session)
            out = session.run("hold = torch.empty(64 * 2**20, dtype=torch.uint8, "
                              "device='cuda:0')")
        if not out.ok:
            raise RuntimeError(f"the holding kernel failed: {out.error}")
        return session.pid

    def release() -> None:
        while holder:
            holder.pop().close()

    if "outputs" in only:
        plan.append(("--once, --json vs nvidia-smi",
                     lambda: outputs.check_outputs(ctx, hold())))
    if "exporter" in only:
        plan.append(("exporter vs --once --json", lambda: outputs.check_exporter(ctx)))
    def released() -> Result:
        release()
        return Result("", SKIP, "")

    plan.append(("", released))  # a hidden step: the holding kernel ends here
    if "activity" in only:
        plan.append(activity.planned(ctx, cuda_count, uuids))
    if "lesson" in only:
        plan.append(("gpumon lesson", lambda: runs.check_lesson(ctx, cuda_count)))
    if "kernel" in only:
        plan += kernel_checks.gpu_checks(ctx, cuda_count, uuids)
    if "pytest" in only:
        qt = _has("PySide6") and _has("pytestqt") and not ctx.dry_run
        name = "pytest " + " ".join(pytest_dirs)
        plan.append((name, lambda: runs.check_pytest(ctx, pytest_dirs, qt,
                                                     gpu_expected=cuda_count > 0)))
    return plan, release


def _run_one(ctx: Context, name: str, check: Callable[[], Result]) -> Result:
    if name and ctx.left() < MIN_SECONDS and not isinstance(check, Known):
        return Result(name, SKIP, f"out of time: {ctx.left():.0f} s left of the budget")
    start = time.monotonic()
    try:
        result = check()
    except Exception as exc:  # a check that breaks is a FAIL with its story
        stem = "".join(c if c.isalnum() else "-" for c in name).strip("-")
        path = ctx.save(f"error-{stem}.txt", traceback.format_exc())
        result = Result(name, FAIL, f"{type(exc).__name__}: {exc}", [path])
    result.seconds = time.monotonic() - start
    return result


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.monotonic()
    only = {c.strip() for c in args.only.split(",") if c.strip()}
    if not only <= set(CHECKS):
        print(f"check.py: --only takes {','.join(CHECKS)}, got {args.only!r}", file=sys.stderr)
        return 2
    out: Path = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    fake_lib = None
    smi = [args.smi]
    if args.dry_run:
        sys.path.insert(0, str(REPO / "tests" / "telemetry"))
        from fakenvml import FakeNvmlUnavailable, build_fake_nvml

        (out / "fakenvml").mkdir()
        try:
            fake_lib = build_fake_nvml(out / "fakenvml")
        except FakeNvmlUnavailable as exc:
            print(f"check.py: the dry run needs the fake NVML library: {exc}", file=sys.stderr)
            return 2
        smi = [sys.executable, str(FAKE_SMI)]
    elif shutil.which(args.smi) is None:
        print(f"check.py: {args.smi} not found: this is no NVIDIA GPU machine. "
              "Use --dry-run to check the script itself.", file=sys.stderr)
        return 2
    ctx = Context(out, args.dry_run, started + args.budget, child_env(args.dry_run, fake_lib),
                  smi)
    if fake_lib is not None:
        ctx.open_nvml = fake_nvml_opener(fake_lib)
    cuda_count, uuids = _facts(ctx)
    if args.dry_run:
        cuda_count = 0  # whatever torch says, a dry run has no GPU to match it with
    dirs = [d for d in args.pytest_dirs.split(",") if d]
    results = []
    plan, release = _plan(ctx, only, cuda_count, uuids, dirs)
    try:
        for name, check in plan:
            result = _run_one(ctx, name, check)
            if name:
                results.append(result)
                print(f"{result.outcome}  {name}: {result.reason}", flush=True)
                write_summary(out, ctx.facts, results, args.dry_run)  # kept if killed later
    finally:
        release()
    ctx.facts["torch imported by the check itself"] = "yes" if "torch" in sys.modules else "no"
    ctx.facts["total seconds"] = f"{time.monotonic() - started:.0f}"
    write_summary(out, ctx.facts, results, args.dry_run)
    print(f"summary: {out / 'summary.md'}")
    return exit_status(results)


if __name__ == "__main__":
    sys.exit(main())
