"""What the wizard's pages share: one object, owned by the wizard, read in initializePage.

Every result is the core's own type (or None before the step ran). The types are imported
for the type checker only: the wizard must not load the core's larger modules before its
first paint.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.bench import BenchReport
    from app.core.doctor import Diagnosis
    from app.core.install import InstallRequest, InstallResult
    from app.core.recommend import Choices, Recommendation
    from app.core.system import SystemReport
    from app.core.verify import VerifyReport


@dataclass
class WizardState:
    language: str = "en"
    bundle_dir: Path | None = None  # an offline bundle found next to the app or chosen
    report: SystemReport | None = None
    choices: Choices | None = None  # the user's overrides
    recommendation: Recommendation | None = None
    install_request: InstallRequest | None = None
    install_result: InstallResult | None = None
    verify_report: VerifyReport | None = None
    diagnosis: Diagnosis | None = None
    bench_report: BenchReport | None = None  # possibly partial: see BenchReport.status
    saved_reports: list[Path] = field(default_factory=list)
    log_paths: list[Path] = field(default_factory=list)
    # Where the torch wheels come from when the user set it (Environment page, "Advanced"):
    index_url: str | None = None
    extra_index_urls: list[str] = field(default_factory=list)
    find_links: list[str] = field(default_factory=list)
    # Speed test (Speed test page): None means the page's defaults; tests set tiny sweeps.
    bench_sizes: list[int] | None = None
    bench_dtypes: list[str] | None = None
    bench_budget_s: float | None = None
    bench_device: str = "auto"
    skip_bench: bool = False
