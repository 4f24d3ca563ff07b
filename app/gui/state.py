"""What the wizard's pages share: one object, owned by the wizard, read in initializePage."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class WizardState:
    language: str = "en"
    bundle_dir: Path | None = None  # an offline bundle found next to the app or chosen
    report: Any = None  # app.core.system.SystemReport
    choices: Any = None  # app.core.recommend.Choices (the user's overrides)
    recommendation: Any = None  # app.core.recommend.Recommendation
    install_request: Any = None  # app.core.install.InstallRequest
    install_result: Any = None  # app.core.install.InstallResult
    verify_report: Any = None  # app.core.verify.VerifyReport
    diagnosis: Any = None  # app.core.doctor.Diagnosis
    bench_report: Any = None  # app.core.bench.BenchReport
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
