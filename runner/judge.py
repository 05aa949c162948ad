"""Turn what a job measured into a verdict for one expectation on one target. Pure: no processes.

Failure kinds name what went wrong the way a compiler engineer triages it: CRASH, TIMEOUT,
OUT_OF_RESOURCES, COMPILE_ERROR, RUNTIME_ERROR, WRONG_RESULT, OVER_LIMIT, IR_MISMATCH, TOO_SLOW,
ARTIFACT_MISMATCH.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from kregress.jobs import JobOutcome
from kregress.manifest import Artifact, Compiles, Expectation, Ir, Numerics, Perf, Resource
from kregress.matrix import Target
from kregress.timing import median_interval

MAX_LINES_SHOWN = 10


class Outcome(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    XFAIL = "XFAIL"
    XPASS = "XPASS"
    UNSTABLE = "UNSTABLE"  # perf timings that cannot tell PASS from FAIL: reported, never bisected
    SKIP = "SKIP"
    ERROR = "ERROR"


@dataclass
class Verdict:
    outcome: Outcome
    message: str
    failure_kind: str | None = None
    measured: dict[str, Any] = field(default_factory=dict)
    limit: Any = None
    detail: str = ""

    @classmethod
    def skip(cls, reason: str) -> Verdict:
        return cls(Outcome.SKIP, reason)

    @classmethod
    def error(cls, reason: str, detail: str = "") -> Verdict:
        return cls(Outcome.ERROR, reason, detail=detail)


def failure_kind_of(error_type: str | None) -> str:
    return "OUT_OF_RESOURCES" if error_type and "OutOfResources" in error_type else "COMPILE_ERROR"


def job_level(outcome: JobOutcome, compile_job: bool) -> Verdict | None:
    """A verdict that follows from how the child ended, before looking at any measurement."""
    if outcome.status == "ok":
        return None
    if outcome.status == "unsupported":
        return Verdict.skip(outcome.reason)
    if outcome.status == "case_error":
        return Verdict.error(outcome.reason, outcome.log_tail)
    if outcome.status == "compiler_broken":
        return Verdict.error(
            f"the compiler does not work here: {outcome.reason}", outcome.result.get("traceback", "")
        )
    if outcome.status == "harness_error":
        return Verdict.error(outcome.reason, outcome.result.get("traceback", outcome.log_tail))
    if outcome.status == "timeout":
        return Verdict(Outcome.FAIL, f"TIMEOUT: {outcome.reason}", "TIMEOUT", detail=outcome.log_tail)
    if outcome.status == "crash":
        return Verdict(Outcome.FAIL, f"CRASH: {outcome.reason}", "CRASH", detail=outcome.log_tail)
    # "raised": the compiler or kernel raised outside a per-config compile.
    detail = outcome.result.get("traceback", outcome.log_tail)
    if compile_job:
        return Verdict.error(f"the case's compile setup raised: {outcome.reason}", detail)
    kind = (
        "OUT_OF_RESOURCES" if "OutOfResources" in str(outcome.result.get("error_type")) else "RUNTIME_ERROR"
    )
    return Verdict(Outcome.FAIL, f"{kind}: {outcome.reason}", kind, detail=detail)


def compile_failures(configs: list[dict[str, Any]]) -> Verdict | None:
    broken = [c for c in configs if c["status"] == "compile_error"]
    if not broken:
        return None
    kinds = {failure_kind_of(c["error_type"]) for c in broken}
    kind = "OUT_OF_RESOURCES" if "OUT_OF_RESOURCES" in kinds else "COMPILE_ERROR"
    lines = [f"[{c['label']}] {c['error_type']}: {last_line(c['message'])}" for c in broken]
    return Verdict(
        Outcome.FAIL,
        f"{kind}: {len(broken)} of {len(configs)} configs did not compile\n" + "\n".join(lines),
        kind,
        measured={"failed_configs": [c["label"] for c in broken]},
        detail="\n\n".join(f"[{c['label']}]\n{c['message']}" for c in broken),
    )


def last_line(text: str | None) -> str:
    """Compiler errors put the source excerpt first and the diagnosis last."""
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""


def judge_compiles(configs: list[dict[str, Any]]) -> Verdict:
    failed = compile_failures(configs)
    if failed:
        return failed
    unbuilt = [c for c in configs if c["status"] == "source_only"]
    if unbuilt:
        first = unbuilt[0]
        return Verdict.skip(
            "the compiler generated source, but the native build failed here, which says more about this "
            f"machine's toolkit than the compiler: {first['error_type']}: {last_line(first['message'])}"
        )
    labels = ", ".join(c["label"] for c in configs)
    return Verdict(
        Outcome.PASS,
        f"{len(configs)} config(s) compiled: {labels}",
        measured={"configs": [c["label"] for c in configs]},
    )


def judge_resource(exp: Resource, target: Target, configs: list[dict[str, Any]]) -> Verdict:
    limit = exp.max if exp.max is not None else target.limits.get(exp.metric)
    failed = compile_failures(configs)
    if failed:
        # A compiler that refused a config for this very resource (IGC's PTSS error) said how much.
        refused = {c["label"]: c["metrics"][exp.metric] for c in configs
                   if c["status"] == "compile_error" and exp.metric in c.get("metrics", {})}  # fmt: skip
        if refused:
            failed.measured[exp.metric] = refused
            failed.limit = limit
        return failed
    if limit is None:
        return Verdict.skip(
            f"no {exp.metric} limit for {target.name}: set `max` in case.toml or add it "
            "to the target's limits in matrix.toml"
        )
    values = {c["label"]: c["metrics"].get(exp.metric) for c in configs}
    if any(v is None for v in values.values()):
        reasons = {c.get("unavailable", {}).get(exp.metric) for c in configs} - {None}
        if reasons:
            return Verdict.skip(f"{target.name}: " + "; ".join(sorted(reasons)))
        return Verdict.skip(f"{target.name} does not report {exp.metric} with this toolchain")
    over = {label: v for label, v in values.items() if v > limit}
    shown = ", ".join(f"[{label}] {v}" for label, v in values.items())
    if over:
        worst = max(over.values())
        return Verdict(
            Outcome.FAIL,
            f"OVER_LIMIT: {exp.metric} {worst} > limit {limit} on {target.name} in {len(over)} of "
            f"{len(values)} configs ({', '.join(f'[{k}] {v}' for k, v in over.items())})",
            "OVER_LIMIT",
            measured={exp.metric: values},
            limit=limit,
        )
    return Verdict(
        Outcome.PASS,
        f"{exp.metric} ≤ {limit} on {target.name}: {shown}",
        measured={exp.metric: values},
        limit=limit,
    )


def judge_ir(exp: Ir, target: Target, configs: list[dict[str, Any]], folder: Path) -> Verdict:
    failed = compile_failures(configs)
    if failed:
        return failed
    if any(exp.stage not in c["ir"] for c in configs):
        return Verdict.skip(f"{target.name} produces no {exp.stage} with this toolchain")
    pattern = re.compile(exp.pattern)
    counts: dict[str, int] = {}
    offending: list[str] = []
    for config in configs:
        lines = (folder / config["ir"][exp.stage]).read_text().splitlines()
        hits = [(n, line) for n, line in enumerate(lines, 1) if pattern.search(line)]
        counts[config["label"]] = len(hits)
        offending += [
            f"[{config['label']}] {exp.stage}:{n}: {line.strip()}" for n, line in hits[:MAX_LINES_SHOWN]
        ]
    bound = " and ".join(
        part
        for part in (
            f"≥ {exp.min_count}" if exp.min_count is not None else "",
            f"≤ {exp.max_count}" if exp.max_count is not None else "",
        )
        if part
    )
    bad = {
        label: n
        for label, n in counts.items()
        if (exp.max_count is not None and n > exp.max_count)
        or (exp.min_count is not None and n < exp.min_count)
    }
    counted = ", ".join(f"[{k}] {v}" for k, v in counts.items())
    limit = {"min_count": exp.min_count, "max_count": exp.max_count}
    if bad:
        return Verdict(
            Outcome.FAIL,
            f"IR_MISMATCH: {len(bad)} of {len(counts)} configs have a count of /{exp.pattern}/ in "
            f"{exp.stage} outside {bound}: {counted}",
            "IR_MISMATCH",
            measured={"count": counts},
            limit=limit,
            detail="\n".join(offending) or "(no matching lines)",
        )
    return Verdict(
        Outcome.PASS,
        f"/{exp.pattern}/ in {exp.stage}: {counted} (bound {bound})",
        measured={"count": counts},
        limit=limit,
    )


def judge_artifact(exp: Artifact, target: Target, configs: list[dict[str, Any]]) -> Verdict:
    if exp.where:
        configs = [c for c in configs if all(c.get("options", {}).get(k) == v for k, v in exp.where.items())]
        if not configs:
            wanted = ", ".join(f"{k}={v}" for k, v in exp.where.items())
            return Verdict.skip(f"no config of {exp.kernel} on {target.name} has {wanted}")
    failed = compile_failures(configs)
    if failed:
        return failed
    values = {c["label"]: c["artifacts"].get(exp.property) for c in configs}
    missing = [c for c in configs if c["artifacts"].get(exp.property) is None]
    if missing:
        reasons = {c.get("unavailable", {}).get(exp.property) for c in missing} - {None}
        if reasons:
            return Verdict.skip(f"{target.name}: " + "; ".join(sorted(reasons)))
        known = sorted({k for c in configs for k, v in c["artifacts"].items() if v is not None})
        return Verdict.skip(
            f"{target.name} does not report {exp.property!r} with this toolchain "
            f"(it reports: {', '.join(known)})"
        )
    checks = [("equals", exp.equals), ("contains", exp.contains), ("not_contains", exp.not_contains)]
    problems, limits = [], {}
    for config in configs:
        label, value = config["label"], config["artifacts"][exp.property]
        text = " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        for check, wanted in checks:
            if wanted is None:
                continue
            resolved, unknown = resolve_template(wanted, target, config["artifacts"])
            if unknown:
                return Verdict.error(
                    f"expectation {check} = {wanted!r} names {unknown}, which is neither {{arch}} nor an "
                    f"artifact property of {label} (it has: {', '.join(sorted(config['artifacts']))})"
                )
            limits.setdefault(check, {})[label] = resolved
            shown = f"{resolved!r}" + (f" (= {wanted})" if resolved != wanted else "")
            if check == "equals" and value != resolved and text != str(resolved):
                problems.append(f"[{label}] {exp.property} is {value!r}, expected {shown}")
            if check == "contains" and str(resolved) not in text:
                problems.append(f"[{label}] {exp.property} {text!r} does not contain {shown}")
            if check == "not_contains" and str(resolved) in text:
                problems.append(f"[{label}] {exp.property} {text!r} contains {shown}")
    limit = {check: next(iter(v.values())) if len(set(map(str, v.values()))) == 1 else v
             for check, v in limits.items()}  # fmt: skip
    if problems:
        return Verdict(
            Outcome.FAIL,
            "ARTIFACT_MISMATCH: " + "; ".join(problems),
            "ARTIFACT_MISMATCH",
            measured={exp.property: values},
            limit=limit,
        )
    return Verdict(
        Outcome.PASS,
        f"{exp.property}: " + ", ".join(f"[{k}] {v}" for k, v in values.items()),
        measured={exp.property: values},
        limit=limit,
    )


def resolve_template(wanted: Any, target: Target, artifacts: dict[str, Any]) -> tuple[Any, str | None]:
    """Fill `{arch}` and `{property}` placeholders; the name of an unknown one comes back instead."""
    if not isinstance(wanted, str) or "{" not in wanted:
        return wanted, None
    arch = target.arch or artifacts.get("device_arch")  # a device target: the device's own arch
    fields = {**{k: v for k, v in artifacts.items() if v is not None}, "arch": arch}
    names = [name for _, name, _, _ in string.Formatter().parse(wanted) if name is not None]
    unknown = next((f"{{{n}}}" for n in names if n not in fields), None)
    if unknown:
        return wanted, unknown
    if len(names) == 1 and wanted == f"{{{names[0]}}}":
        return fields[names[0]], None
    return wanted.format_map(fields), None


def judge_numerics(exp: Numerics, folder: Path, arrays_file: str) -> Verdict:
    import numpy as np

    with np.load(folder / arrays_file) as data:
        arrays = {name: data[name] for name in data.files}
    outputs = sorted(name.split(".", 1)[1] for name in arrays if name.startswith("actual."))
    measured: dict[str, Any] = {}
    problems = []
    for name in outputs:
        actual, expected = arrays[f"actual.{name}"], arrays[f"expected.{name}"]
        if actual.shape != expected.shape:
            problems.append(f"{name}: shape {actual.shape} != expected {expected.shape}")
            continue
        actual64, expected64 = actual.astype(np.float64), expected.astype(np.float64)
        abs_err = np.abs(actual64 - expected64)
        rel_err = abs_err / np.maximum(np.abs(expected64), np.finfo(np.float64).tiny)
        close = np.isclose(actual64, expected64, rtol=exp.rtol, atol=exp.atol, equal_nan=False)
        finite_abs = np.where(np.isfinite(abs_err), abs_err, np.inf)
        max_abs = float(finite_abs.max()) if finite_abs.size else 0.0
        max_rel = float(np.where(np.isfinite(rel_err), rel_err, np.inf).max()) if rel_err.size else 0.0
        bad = int((~close).sum())
        measured[name] = {
            "max_abs_err": max_abs,
            "max_rel_err": max_rel,
            "mismatched": bad,
            "elements": int(actual.size),
        }
        if bad:
            worst = np.unravel_index(int(np.argmax(np.where(close, -1.0, finite_abs))), actual.shape)
            problems.append(
                f"{name}: {bad} of {actual.size} elements outside rtol={exp.rtol:g} atol={exp.atol:g}; "
                f"max abs err {max_abs:.3g}, max rel err {max_rel:.3g}; worst at {tuple(map(int, worst))}: "
                f"got {actual64[worst]:.6g}, expected {expected64[worst]:.6g}"
            )
    limit = {"rtol": exp.rtol, "atol": exp.atol}
    if problems:
        return Verdict(Outcome.FAIL, "WRONG_RESULT: " + "; ".join(problems), "WRONG_RESULT", measured, limit)
    summary = ", ".join(f"{k}: max abs err {v['max_abs_err']:.3g}" for k, v in measured.items())
    return Verdict(
        Outcome.PASS, f"within rtol={exp.rtol:g} atol={exp.atol:g} ({summary})", None, measured, limit
    )


def judge_perf(exp: Perf, perf: dict[str, Any]) -> Verdict:
    """FAIL only when the whole interval of the median ratio lies below min_ratio, PASS when it lies
    at or above; straddling it, or wider than max_spread, is UNSTABLE: noise, not a verdict."""
    ratio = median_interval(perf["ratios"])
    subject_ms, baseline_ms = (median_interval(perf[f"{role}_ms"]).median for role in ("subject", "baseline"))
    flops = perf.get("flops") or {}

    def shown(role: str, ms: float) -> str:
        tflops = f", {flops[role] / ms / 1e9:.1f} TFLOPS" if flops.get(role) else ""
        return f"{perf['names'][role]} {ms:.4g} ms{tflops}"

    rounds = perf["rounds"]
    interval = (
        f"median of {rounds} rounds {ratio.median:.3f}, {ratio.confidence:.0%} interval "
        f"[{ratio.low:.3f}, {ratio.high:.3f}], spread {ratio.spread:.1%}"
        if rounds > 1
        else f"{ratio.median:.3f} (one round: no noise model)"
    )
    text = f"{shown('subject', subject_ms)} vs {shown('baseline', baseline_ms)}: throughput ratio {interval}"
    measured = {
        "ratio": ratio.median,
        "ratio_low": ratio.low,
        "ratio_high": ratio.high,
        "confidence": ratio.confidence,
        "spread": ratio.spread,
        "rounds": rounds,
        "ratios": perf["ratios"],
        "subject_ms": subject_ms,
        "baseline_ms": baseline_ms,
        "subject_tflops": flops["subject"] / subject_ms / 1e9 if flops.get("subject") else None,
        "baseline_tflops": flops["baseline"] / baseline_ms / 1e9 if flops.get("baseline") else None,
        "timing": perf.get("method"),
    }
    limit = {"min_ratio": exp.min_ratio, "max_spread": exp.max_spread}
    if rounds > 1 and ratio.spread > exp.max_spread:
        return Verdict(
            Outcome.UNSTABLE, f"UNSTABLE: {text} > max_spread {exp.max_spread:.1%}", None, measured, limit
        )
    if ratio.high < exp.min_ratio:
        return Verdict(Outcome.FAIL, f"TOO_SLOW: {text} < {exp.min_ratio}", "TOO_SLOW", measured, limit)
    if ratio.low >= exp.min_ratio:
        return Verdict(Outcome.PASS, f"{text} ≥ {exp.min_ratio}", None, measured, limit)
    return Verdict(Outcome.UNSTABLE, f"UNSTABLE: {text} straddles {exp.min_ratio}", None, measured, limit)


def judge(exp: Expectation, target: Target, outcome: JobOutcome) -> Verdict:
    compile_job = isinstance(exp, (Compiles, Resource, Ir, Artifact))
    early = job_level(outcome, compile_job)
    if early:
        return early
    assert outcome.folder is not None
    if isinstance(exp, Numerics):
        return judge_numerics(exp, outcome.folder, outcome.result["numerics"]["arrays"])
    if isinstance(exp, Perf):
        return judge_perf(exp, outcome.result["perf"])
    configs = outcome.result["configs"]
    if isinstance(exp, Compiles):
        return judge_compiles(configs)
    if isinstance(exp, Resource):
        return judge_resource(exp, target, configs)
    if isinstance(exp, Ir):
        return judge_ir(exp, target, configs, outcome.folder)
    return judge_artifact(exp, target, configs)
