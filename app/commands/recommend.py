"""``torch-setup recommend [--from-report FILE] [--json] [--backend B] [--variant V] [--torch VER]
[--python X.Y] [--packages P ...] [--compat DIR]``.

Kept light on purpose: importing this module costs nothing; ``run`` imports the engine (stdlib +
tomllib) and, only without ``--from-report``, the detector.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.commands._args import add_build_overrides, add_command, add_from_report, add_json, add_packages

if TYPE_CHECKING:  # the engine is imported by run(), not at start-up
    from app.core.recommend import Recommendation


def register(sub) -> None:
    p = add_command(sub, "recommend", "say which PyTorch build fits this machine (or a saved report) and why",
                    "Recommend the PyTorch build (CPU / CUDA cuXXX / ROCm / MPS / XPU), torch version and "
                    "Python for this machine, with the exact install command and the reasons. Checks both "
                    "the NVIDIA driver floor and the GPU's compute capability against each build.", run)
    add_from_report(p, "use a saved SystemReport (detect --json/--out) instead of detecting this machine; "
                       "a minimal one with only os, arch, python and gpus is accepted")
    add_json(p, "print the Recommendation as JSON")
    add_build_overrides(p)
    p.add_argument("--python", metavar="X.Y", help="the Python version for the new environment")
    add_packages(p, "P", "packages to install with torch: torchvision / torchaudio are pinned to match; "
                         "others come from your default index in a second step")
    p.add_argument("--verified-only", action="store_true",
                   help="use only the compatibility data: ignore newer releases that `torch-setup compat status` "
                        "found on the index (their facts are assumed)")
    p.add_argument("--compat", metavar="DIR", help=argparse_suppress())


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


def run(args) -> int:
    from app.core.compat.data import load_compat
    from app.core.recommend import Choices, recommend

    data = load_compat(args.compat) if getattr(args, "compat", None) else load_compat()
    if not getattr(args, "verified_only", False) and _status_cached():
        from app.core.compat.freshness import load_status, with_discovered  # start-up: only when a status is cached

        data = with_discovered(data, load_status())  # releases found by `compat status`, marked assumed
    if args.from_report:
        from app.core.detection.system import load_report

        report = load_report(args.from_report)
    else:
        from app.core.detection.detect import detect

        report = detect()
    choices = Choices(backend=args.backend, variant=args.variant, torch=args.torch, python=args.python,
                      packages=args.packages)
    rec = recommend(report, data, choices)
    if args.json:
        import json

        sys.stdout.write(json.dumps(rec.to_dict(), indent=2, ensure_ascii=False) + "\n")
        return 0
    sys.stdout.write(render(rec) + "\n")
    return 0


def _status_cached() -> bool:
    from app.core.base.paths import cache_dir
    from app.core.compat.data import STATUS_CACHE

    try:
        return (cache_dir() / STATUS_CACHE).is_file()
    except OSError:  # an unusable per-user cache folder: there is no cached status
        return False


def _quote(argv: Sequence[str]) -> str:
    """The command for the shell this command was typed into (:mod:`app.core.base.shells`)."""
    from app.core.base import shells

    return shells.join(argv, shells.current_shell())


def render(rec: Recommendation, lang: str = "en") -> str:
    """The human-readable answer: choice, command, reasons, warnings, alternatives (English by default)."""
    words = rec.texts(lang)
    out = [f"Recommended: {words.summary}"]
    if rec.served_gpus:
        out.append("Serves: " + ", ".join(f"GPU {g.index} {g.name}" for g in rec.served_gpus))
    if rec.env_python:
        out.append(f"Python for the new environment: {rec.env_python}")
    out.append("")
    out.append("Install (pip):  " + _quote(rec.command))
    if "uv" in rec.commands:
        out.append("Install (uv):   " + _quote(rec.commands["uv"]))
    if "pip_extra" in rec.commands:
        out.append("Then (pip):     " + _quote(rec.commands["pip_extra"]))
    if rec.env_vars:
        out.append("Set before running PyTorch: " + " ".join(f"{k}={v}" for k, v in rec.env_vars.items()))
    out.append("")
    out.append("Why:")
    out.extend(f"  - {r}" for r in words.reasons)
    if words.warnings:
        out.append("")
        out.append("Warnings:")
        out.extend(f"  ! {w}" for w in words.warnings)
    if rec.driver_upgrade:
        out.append("")
        out.append(f"Driver update: {rec.driver_upgrade.driver} or newer unlocks {rec.driver_upgrade.unlocks}.")
    if rec.alternatives:
        out.append("")
        out.append("Other choices:")
        for a, why in zip(rec.alternatives, words.alternatives, strict=True):
            tag = "ok " if a.valid else "no "
            what = f"{a.backend}/{a.variant or '-'}" + (f" torch {a.torch_version}" if a.torch_version else "")
            out.append(f"  {tag} {what}: {why}")
    out.append("")
    out.append(f"Compatibility data {rec.compat_data_version} ({rec.compat_data_date}).")
    return "\n".join(out)
