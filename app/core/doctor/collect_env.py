"""Facts from ``python -m torch.utils.collect_env`` output, so the doctor can reason about a
machine someone pasted into an issue."""
from __future__ import annotations

import re

from app.core.detection.system import GPU, OSInfo, SystemReport
from app.core.measure.verify import BackendState, Interpreter, TorchBuild, VerifyReport

__all__ = ["from_collect_env"]

_NONE = (None, "", "N/A", "None", "Could not collect", "No CUDA")


def _field(text: str, name: str) -> str | None:
    m = re.search(rf"^{re.escape(name)}:\s*(.*)$", text, re.M)
    v = m.group(1).strip() if m else None
    return None if v in _NONE else v


def _gpu_names(text: str) -> list[str]:
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if not ln.startswith("GPU models and configuration:"):
            continue
        rest = ln.split(":", 1)[1].strip()
        block = [rest] if rest else []
        for nxt in lines[i + 1:]:
            if not re.match(r"GPU \d+:", nxt.strip()):
                break
            block.append(nxt.strip())
        names = [re.sub(r"^GPU \d+:\s*", "", b) for b in block]
        return [n for n in names if n and n not in ("No CUDA", "Could not collect", "N/A")]
    return []


def from_collect_env(text: str) -> tuple[VerifyReport, SystemReport]:
    """(VerifyReport, SystemReport) from ``python -m torch.utils.collect_env`` output."""
    torch_v = _field(text, "PyTorch version")
    cuda_v = _field(text, "CUDA used to build PyTorch")
    rocm_v = _field(text, "ROCM used to build PyTorch")
    os_line = _field(text, "OS") or ""
    available = (_field(text, "Is CUDA available") or "").lower() == "true"
    driver = _field(text, "Nvidia driver version")
    names = _gpu_names(text)
    vendor = "amd" if rocm_v else ("nvidia" if names and not re.search(r"AMD|Radeon|Instinct", names[0]) else "amd")
    family = "macos" if os_line.startswith("macOS") else ("windows" if "Windows" in os_line else "linux")
    arch = "arm64" if "arm64" in os_line else ("x86_64" if "x86_64" in os_line else None)
    gpus = [GPU(vendor=vendor, name=n, driver_version=driver if vendor == "nvidia" else None, index=i,
                source="collect_env") for i, n in enumerate(names)]
    mac = re.search(r"macOS ([\d.]+)", os_line)
    report = SystemReport(os=OSInfo(family=family, version=mac.group(1) if mac else os_line), arch=arch, gpus=gpus)
    local = torch_v.split("+", 1)[1] if torch_v and "+" in torch_v else None
    hip = _field(text, "HIP runtime version") if rocm_v else None
    backends = {"cpu": BackendState(built=True, available=True),
                "cuda": BackendState(built=bool(cuda_v), available=bool(cuda_v) and available),
                "rocm": BackendState(built=bool(rocm_v), available=bool(rocm_v) and available),
                "mps": BackendState(built=family == "macos" and arch == "arm64", available=False),
                "xpu": BackendState(built=False, available=False)}
    verify = VerifyReport(python="", torch_version=torch_v,
                          build=TorchBuild(cuda=cuda_v, hip=hip or rocm_v, local_tag=local),
                          backends=backends,
                          interpreter=Interpreter(system="Darwin" if family == "macos" else family.capitalize(),
                                                  machine=arch or "", mac_ver=mac.group(1) if mac else None))
    return verify, report
