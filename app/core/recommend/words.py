"""The small words the recommendation's sentences are made of: backend and platform names,
build labels, GPU descriptions, lists ("A, B and C"), and the sentence's own punctuation."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.core.base.text import Text, join, msg, render
from app.core.compat.data import Variant
from app.core.recommend.facts import GpuView, version_of

__all__ = [
    "and_list",
    "arch_span",
    "backend_words",
    "build_label",
    "cuda_versions",
    "gpu_words",
    "platform_words",
    "semicolons",
    "sentence",
    "sorted_texts",
]


def and_list(items: Iterable[Text]) -> Text:
    """``A``, ``A and B``, ``A, B and C`` (repeats dropped)."""
    uniq = list(dict.fromkeys(items))
    if not uniq:
        return ""
    if len(uniq) == 1:
        return uniq[0]
    return msg("rec.and_list", "{items} and {last}", items=tuple(uniq[:-1]), last=uniq[-1])


def semicolons(parts: Sequence[Text]) -> Text:
    """Clauses of one sentence, separated by semicolons."""
    return join(parts, msg("rec.semicolon", "; "))


def sentence(text: Text) -> Text:
    """``text`` as a sentence of its own: a capital first letter (in English) and a full stop."""
    return msg("rec.sentence", "{text:cap}.", text=text)  # types.SENTENCE: code_of looks through it


def sorted_texts(items: Iterable[Text]) -> list[Text]:
    """Distinct texts in a stable, language-independent order (their English words)."""
    return sorted(set(items), key=render)


def backend_words(backend: str) -> Text:
    """``"cuda"`` -> "CUDA (NVIDIA GPU)"."""
    if backend == "cuda":
        return msg("rec.backend_cuda", "CUDA (NVIDIA GPU)")
    if backend == "rocm":
        return msg("rec.backend_rocm", "ROCm (AMD GPU)")
    if backend == "xpu":
        return msg("rec.backend_xpu", "XPU (Intel GPU)")
    if backend == "mps":
        return msg("rec.backend_mps", "MPS (Metal GPU)")
    if backend == "cpu":
        return msg("rec.backend_cpu", "CPU only")
    return backend


def platform_words(platform: str | None) -> Text:
    """``"macos-arm64"`` -> "Apple Silicon Macs"."""
    if platform == "linux-x86_64":
        return "Linux x86_64"
    if platform == "linux-aarch64":
        return msg("rec.platform_linux_arm", "Linux on ARM (aarch64)")
    if platform == "windows-x86_64":
        return "Windows x64"
    if platform == "windows-arm64":
        return "Windows on Arm"
    if platform == "macos-arm64":
        return msg("rec.platform_apple_silicon", "Apple Silicon Macs")
    if platform == "macos-x86_64":
        return msg("rec.platform_intel_mac", "Intel Macs")
    return platform or msg("rec.platform_unknown", "this platform")


def build_label(v: Variant) -> Text:
    """A build's name in sentences: "CUDA 12.6", "ROCm 6.4", "CPU-only"."""
    if v.backend == "cpu":
        return msg("rec.build_cpu", "CPU-only")
    return v.label()


def gpu_words(g: GpuView) -> Text:
    """A GPU in sentences: "GTX 1080 Ti (compute capability 6.1)", "RX 7900 XTX (gfx1100)"."""
    if g.vendor == "nvidia" and g.cc_text:
        return msg("rec.gpu_cc", "{name} (compute capability {cc})", name=g.name, cc=g.cc_text)
    if g.vendor == "amd" and g.gfx:
        return f"{g.name} ({g.gfx})"
    return g.name


def arch_span(v: Variant) -> str:
    """A CUDA build's compute capabilities: "7.5–12.0"."""
    return f"{v.arch[0]}–{v.arch[-1]}" if len(v.arch) > 1 else v.arch[0]


def cuda_versions(variants: Iterable[Variant], keep: str | None = None) -> Text:
    """"CUDA 12.8, 12.9 and 13.x": a major collapses to N.x unless it is ``keep``'s major."""
    vers = sorted({v.cuda for v in variants if v.cuda}, key=lambda s: version_of(s) or (0,))
    by_major: dict[str, list[str]] = {}
    for ver in vers:
        by_major.setdefault(ver.split(".")[0], []).append(ver)
    keep_major = keep.split(".")[0] if keep else None
    parts: list[Text] = []
    for maj, vs in by_major.items():
        parts.extend(vs if (len(vs) == 1 or maj == keep_major) else [f"{maj}.x"])
    return join(("CUDA ", and_list(parts)))
