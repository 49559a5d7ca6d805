"""What the check found: one outcome per check, the tables behind them, and the summary.

Everything goes under one folder: ``summary.md`` (the machine, then each check's outcome
and reason), ``results.json`` (the same, for a program) and one file or more per check.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"


@dataclass
class Result:
    """One check's outcome and why, with the files it wrote (relative to the folder)."""

    name: str
    outcome: str
    reason: str
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Known:
    """A check whose outcome is known before it runs (a SKIP: one GPU only, a dry run); it is
    reported with its own reason even when the time is up."""

    def __init__(self, result: Result) -> None:
        self.result = result

    def __call__(self) -> Result:
        return self.result


def verdict(problems: Sequence[str], passed: str) -> tuple[str, str]:
    """FAIL with the problems (the first five), or PASS with ``passed``."""
    if not problems:
        return PASS, passed
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return FAIL, "; ".join(problems[:5]) + more


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def write_table(out: Path, stem: str, rows: Sequence[object],
                columns: Sequence[str] | None = None) -> list[str]:
    """Rows (dataclasses or dicts; keys starting with '_' are left out) as ``stem.csv`` and
    ``stem.md``; the two file names."""
    dicts: list[Mapping[str, object]] = [
        asdict(r) if is_dataclass(r) and not isinstance(r, type) else r  # type: ignore[misc]
        for r in rows]
    if columns is None:
        first = rows[0] if rows else None
        if first is not None and is_dataclass(first):
            columns = [f.name for f in fields(first)]
        else:
            columns = [k for k in (dicts[0] if dicts else {}) if not k.startswith("_")]
    with open(out / f"{stem}.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for d in dicts:
            writer.writerow([_cell(d.get(c)) for c in columns])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for d in dicts:
        cells = (_cell(d.get(c)).replace("|", "\\|").replace("\n", " ") for c in columns)
        lines.append("| " + " | ".join(cells) + " |")
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [f"{stem}.csv", f"{stem}.md"]


def summary_text(facts: Mapping[str, str], results: Iterable[Result], dry_run: bool) -> str:
    """The summary in markdown: a dry-run warning, the machine, then every check."""
    results = list(results)
    lines = ["# gpumon GPU check", ""]
    if dry_run:
        lines += ["**DRY RUN, no GPU.** NVML is the fake library built from "
                  "tests/telemetry/fakenvml, nvidia-smi is a stand-in that reads that library "
                  "(tests/gpu/dryrun/fake_smi.py), and the kernel runs on cpu. This proves the "
                  "check's own plumbing, not gpumon on hardware: every GPU-only check is SKIP.",
                  ""]
    lines += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in facts.items()] + [""]
    counts = {o: sum(r.outcome == o for r in results) for o in (PASS, FAIL, SKIP)}
    lines += [f"**{counts[PASS]} PASS, {counts[FAIL]} FAIL, {counts[SKIP]} SKIP**", "",
              "| check | outcome | reason | seconds | files |", "|---|---|---|---|---|"]
    for r in results:
        reason = r.reason.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r.name} | {r.outcome} | {reason} | {r.seconds:.1f} | "
                     f"{', '.join(r.files)} |")
    return "\n".join(lines) + "\n"


def write_summary(out: Path, facts: Mapping[str, str], results: Sequence[Result],
                  dry_run: bool) -> None:
    (out / "summary.md").write_text(summary_text(facts, results, dry_run), encoding="utf-8")
    doc = {"dry_run": dry_run, "facts": dict(facts), "results": [asdict(r) for r in results]}
    (out / "results.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def exit_status(results: Iterable[Result]) -> int:
    """1 when any check failed, else 0 (SKIP is not a failure: the summary says why)."""
    return 1 if any(r.outcome == FAIL for r in results) else 0
