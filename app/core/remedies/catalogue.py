"""The failure -> remedy catalogue: one :class:`Entry` per cause, tried in order.

Each entry names a cause by the output it leaves (``patterns``: regular expressions over the
failing tool's output, case-insensitive; any one marks it), says in words what happened
(``explain``) and what fixes it (``actions``), and cites where that output was seen
(``source``: the issue threads and the recorded outputs in ``tests/fixtures/failures/``, which
tests/test_remedies.py runs through this table). ``explain`` and ``actions`` read a
:class:`Found`: the match, the whole output and the caller's :class:`~app.core.remedies.types.Context`.

Entries belong to a ``group``; :func:`diagnose` keeps the first match per group, and a group
may ``suppress`` others (a network failure makes pip end with "No matching distribution",
which then says nothing about the packages).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.base.text import Msg, msg
from app.core.compat import cuda
from app.core.remedies.reasons import clean_req, explain_reasoning, suggested_torch
from app.core.remedies.types import Action, ActionKind, Context, Remedy

if TYPE_CHECKING:  # the compat data is read only when a suggestion needs it
    from app.core.compat.data import CompatData

__all__ = ["CATALOGUE", "Entry", "Found", "diagnose"]

A = ActionKind

#: Official pages the actions open (each cited where the user meets it).
VCREDIST_URL = "https://learn.microsoft.com/en-us/cpp/windows/latest-supported-vc-redist"
LONG_PATHS_URL = "https://learn.microsoft.com/en-us/windows/win32/fileio/maximum-file-path-limitation"
DRIVER_URL = "https://www.nvidia.com/Download/index.aspx"  # the page torch's own error names


@dataclass(frozen=True)
class Found:
    """One entry's match: ``m`` in ``text`` (the whole output), with the caller's ``ctx``."""

    m: re.Match[str]
    text: str
    lines: tuple[str, ...]
    ctx: Context

    def group(self, name: str) -> str:
        try:
            return self.m.group(name) or ""
        except IndexError:
            return ""

    def search(self, pattern: str) -> str:
        """The first group of ``pattern`` in the whole output ("" when it is not there)."""
        m = re.search(pattern, self.text, re.I | re.M)
        return (m.group(1) or "") if m else ""

    def host(self) -> str:
        """The server the output names: of the matched line first, else of the whole output
        (``host[:port]`` of a URL, or pip's ``host='…'``); "" when none is named."""
        start = self.text.rfind("\n", 0, self.m.start()) + 1
        end = self.text.find("\n", self.m.end())
        for where in (self.text[start:end if end >= 0 else None], self.text):
            m = re.search(r"https?://(?:[^/@\s]+@)?([^/\s'\"`)>]+)", where) or re.search(r"host='([^']+)'", where)
            if m:
                return m.group(1)
        return ""

    def server(self) -> Msg:
        """"the package server example.org", or without a name when the output gives none."""
        host = self.host()
        if host:
            return msg("remedy.server_named", "the package server {host}", host=host)
        return msg("remedy.server", "the package server")

    def path(self) -> str:
        """The folder the failure was about: the caller's, else the first quoted path in the output."""
        if self.ctx.path:
            return self.ctx.path
        m = re.search(r"['`]((?:[A-Za-z]:)?[\\/][^'`]+|<tmp>[^'`]*)['`]", self.text)
        return m.group(1) if m else ""


Explain = Callable[[Found], Msg]
Actions = Callable[[Found], tuple[Action, ...]]


@dataclass(frozen=True)
class Entry:
    code: str
    group: str
    patterns: tuple[str, ...]
    explain: Explain
    actions: Actions
    source: str
    suppresses: tuple[str, ...] = ()
    when: Callable[[Found], bool] | None = None  # a further condition on the match

    def match(self, text: str, lines: tuple[str, ...], ctx: Context) -> Found | None:
        for pattern in self.patterns:
            m = re.search(pattern, text, re.I | re.M)
            if m is not None:
                found = Found(m, text, lines, ctx)
                if self.when is None or self.when(found):
                    return found
        return None


# ------------------------------------------------------------------------------ suggestions

def _data(ctx: Context) -> CompatData | None:
    """The compat data the caller gave (suggestions need it; without it the actions stay general)."""
    return ctx.data


def _platform(ctx: Context) -> str:
    fam = ctx.os_family or "linux"
    return f"{fam}-"


def _minor(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else version


def build_for_gpu(ctx: Context, cc: str, driver_cuda: str | None = None) -> tuple[str, str] | None:
    """(torch version, variant) of the newest CUDA build whose compiled archs serve ``cc`` (and,
    with ``driver_cuda``, whose CUDA major the driver runs: minor-version compatibility, the rule
    the engine's driver floors follow), for this OS and Python; None if none."""
    data = _data(ctx)
    if data is None or not cc:
        return None
    limit = cuda.driver_tuple(driver_cuda) if driver_cuda else None  # the driver runs its CUDA major (minor compat)
    for rel in data.releases:
        if ctx.python and not rel.python_ok(_minor(ctx.python)):
            continue
        for v in rel.variants:
            if v.backend != "cuda" or not v.cuda or not any(p.startswith(_platform(ctx)) for p in v.platforms):
                continue
            if limit is not None and (cuda.driver_tuple(v.cuda) or (99,))[0] > limit[0]:
                continue
            if cuda.arch_covers(cc, v.arch, tegra=data.tegra):
                return rel.latest, v.name
    return None


def torch_for_python(ctx: Context) -> str | None:
    """The newest torch release whose wheels support the environment's Python."""
    data = _data(ctx)
    if data is None or not ctx.python:
        return None
    return next((r.latest for r in data.releases if r.python_ok(_minor(ctx.python))), None)


def driver_minimum(ctx: Context) -> str:
    """The lowest NVIDIA driver for the CUDA build asked for ("" when unknown)."""
    data = _data(ctx)
    if data is None or not ctx.variant.startswith("cu"):
        return ""
    digits = ctx.variant[2:]
    floor = cuda.driver_floor(f"{digits[:-1]}.{digits[-1]}", ctx.os_family or None, data) if digits else None
    return floor[0] if floor else ""


def _cuda_of_code(code: str) -> str:
    """torch's "found version 12040" -> "12.4"."""
    if not code.isdigit():
        return ""
    n = int(code)
    return f"{n // 1000}.{(n % 1000) // 10}"


def python_for(spec: str) -> str:
    """A Python minor that satisfies a ``Requires-Python`` like ">=3.10" or "<3.13,>=3.9" ("" if unsure)."""
    low = re.search(r">=?\s*(3\.\d+)", spec)
    if low:
        return low.group(1)
    high = re.search(r"<\s*3\.(\d+)", spec)
    if high and int(high.group(1)) > 0:
        return f"3.{int(high.group(1)) - 1}"
    return ""


def _gb(ctx: Context) -> float | None:
    if ctx.need_mb is None:
        return None
    short = ctx.need_mb - (ctx.free_mb or 0)
    return math.ceil((short if short > 0 else ctx.need_mb) / 1024 * 10) / 10


def _torch_pick(f: Found) -> tuple[Action, ...]:
    """Set the torch version the tool's reasoning points at (else one for this Python, if the
    version asked for is the problem)."""
    v = suggested_torch(f.lines) or (torch_for_python(f.ctx) if f.ctx.torch else None)
    if v and v.split("+")[0] != f.ctx.torch.split("+")[0]:
        return (Action(A.SET_TORCH_VERSION, v.split("+")[0]),)
    return (Action(A.SET_TORCH_VERSION, ""),) if f.ctx.torch else ()


# ------------------------------------------------------------------------------ the entries

def _net_actions(*first: Action) -> Actions:
    def actions(f: Found) -> tuple[Action, ...]:
        out = [*list(first), Action(A.SWITCH_SOURCE), Action(A.RETRY)]
        return tuple(out)
    return actions


# long: the catalogue is one table, read top to bottom
def _entries() -> tuple[Entry, ...]:
    return (
        # ----- the Python the environment is made with
        Entry("externally-managed", "python",
              (r"externally-managed-environment", r"This environment is externally managed"),
              lambda f: msg("remedy.externally_managed", "This Python belongs to the operating system, which does "
                            "not allow installing packages into it. A separate environment is needed."),
              lambda f: (Action(A.CHOOSE_OTHER_LOCATION, path=f.path()), Action(A.CHOOSE_PYTHON)),
              "Comfy-Org/ComfyUI#3554; pypa/pipx#1653; PEP 668", suppresses=("resolve",)),
        Entry("no-venv-module", "python",
              (r"ensurepip is not\s+available", r"install the python3-venv", r"No module named '?(?:venv|ensurepip)'?"),
              lambda f: msg("remedy.no_venv", "This Python cannot create environments: its venv part is not "
                            "installed (Debian and Ubuntu ship it separately as python3-venv)."),
              lambda f: (*((Action(A.USE_INSTALLER, "uv"),) if f.ctx.installer != "uv" else ()),
                         Action(A.CHOOSE_PYTHON)),
              "deadsnakes/issues#97; pyenv/pyenv-installer#125"),
        Entry("python-not-found", "python",
              (r"No interpreter found for Python (?P<want>[\w.+]+)", r"No interpreter found (?:in|for)",
               r"Python (?P<want2>\d+\.\d+\S*) (?:is )?not (?:found|installed)"),
              lambda f: msg("remedy.python_not_found", "Python {version} is not on this computer, and it could not "
                            "be downloaded.", version=f.group("want") or f.group("want2") or "?"),
              lambda f: (Action(A.CHOOSE_PYTHON),),
              "astral-sh/uv#16869; tests/fixtures/uv/fail-no-python-0.13.9.txt"),
        Entry("python-mismatch", "python",
              (r"the current Python version \((?P<have>[^)]+)\) does not satisfy Python(?P<spec>\S+)",
               r"Ignored the following versions that require a different python version: (?P<ver>\S+) "
               r"Requires-Python (?P<spec2>\S+)",
               r"requires a different Python: (?P<have3>[\d.]+) not in '(?P<spec3>[^']+)'"),
              lambda f: _python_mismatch(f, f.group("spec") or f.group("spec2") or f.group("spec3"),
                                           f.group("have") or f.group("have3") or f.ctx.python),
              lambda f: _python_actions(f, f.group("spec") or f.group("spec2") or f.group("spec3")),
              "astral-sh/uv#4303; tests/fixtures/failures/uv-requires-python-0.13.9.txt", suppresses=("resolve",)),

        # ----- the network (pip then ends with "No matching distribution": that says nothing more)
        Entry("proxy-auth", "network",
              (r"407 Proxy Authentication Required", r"407 Proxy Authori[sz]ation Required",
               r"Tunnel connection failed: 407"),
              lambda f: msg("remedy.proxy_auth", "The proxy server asks for a user name and password (HTTP 407)."),
              lambda f: (Action(A.SET_PROXY), Action(A.RETRY)),
              "pypa/pip#1805; tests/fixtures/failures/uv-proxy-407-0.13.9.txt", suppresses=("resolve",)),
        Entry("tls-untrusted", "network",
              (r"CERTIFICATE_VERIFY_FAILED", r"invalid peer certificate", r"certificate verify failed",
               r"SSLCertVerificationError", r"UnknownIssuer", r"self[- ]signed certificate in certificate chain"),
              lambda f: msg("remedy.tls_untrusted", "The secure connection to {server} could not be verified: its "
                            "certificate is not trusted here. On a company or campus network that inspects HTTPS, "
                            "the network's own certificate has to be trusted.", server=f.server()),
              lambda f: (Action(A.SET_CA_BUNDLE, "system"), Action(A.SET_CA_BUNDLE), Action(A.SWITCH_SOURCE)),
              "pytorch/pytorch#71545; astral-sh/uv#17355; tests/fixtures/failures/uv-tls-unknown-ca-0.13.9.txt",
              suppresses=("resolve",)),
        Entry("dns-failure", "network",
              (r"Name or service not known", r"failed to lookup address", r"getaddrinfo failed",
               r"Temporary failure in name resolution", r"No such host is known", r"Name does not resolve",
               r"nodename nor servname provided", r"\bdns error\b"),
              lambda f: msg("remedy.dns", "The name of {server} could not be looked up: this computer has no internet "
                            "connection, or its DNS does not work.", server=f.server()),
              _net_actions(Action(A.SET_PROXY)),
              "vladmandic/sdnext#683; astral-sh/uv#1971; pytorch/pytorch#51723", suppresses=("resolve",)),
        Entry("connection-refused", "network",
              (r"Connection refused", r"os error 111\b", r"Errno 111\b", r"WinError 10061", r"actively refused",
               r"Network is unreachable", r"CONNECTION FAILED"),
              lambda f: msg("remedy.refused", "{server:cap} could not be reached.", server=f.server()),
              _net_actions(Action(A.SET_PROXY)),
              "pytorch/pytorch#4532; tests/fixtures/uv/fail-connection-refused-0.13.9.txt", suppresses=("resolve",)),
        Entry("timeout", "network",
              (r"network timeout", r"ReadTimeoutError", r"Read timed out", r"operation timed out",
               r"ConnectTimeout", r"The read operation timed out", r"timed out"),
              lambda f: msg("remedy.timeout", "The download from {server} was too slow and timed out.",
                            server=f.server()),
              _net_actions(),
              "LykosAI/StabilityMatrix#1564; pytorch/pytorch#124566; tests/fixtures/failures/uv-timeout-0.13.9.txt",
              suppresses=("resolve",)),
        Entry("connection-reset", "network",
              (r"Connection reset by peer", r"os error 104\b", r"WinError 10054", r"forcibly closed by the remote host",
               r"ConnectionResetError", r"IncompleteRead", r"Connection broken"),
              lambda f: msg("remedy.reset", "The connection to {server} was cut while downloading.", server=f.server()),
              _net_actions(),
              "pfnet/pytorch-pfn-extras#243; astral-sh/uv#18735", suppresses=("resolve",)),
        Entry("http-403", "network",
              (r"\b403 Forbidden\b", r"HTTP error 403", r"403 Client Error", r"HTTP 403"),
              lambda f: msg("remedy.http_403", "{server:cap} refused the download (HTTP 403): a mirror that does not "
                            "carry the file, or a network that blocks it.", server=f.server()),
              _net_actions(),
              "Comfy-Org/ComfyUI#7103; pytorch/pytorch#81900; tests/fixtures/failures/uv-http-403-0.13.9.txt",
              suppresses=("resolve",)),
        Entry("http-404", "network",
              (r"\b404 Not Found\b", r"HTTP error 404", r"404 Client Error"),
              lambda f: msg("remedy.http_404", "{server:cap} does not have the file (HTTP 404).", server=f.server()),
              lambda f: (Action(A.SWITCH_SOURCE),),
              "oobabooga/textgen#7606", suppresses=("resolve",)),
        Entry("http-5xx", "network",
              (r"\b(?P<status>50[0-4]) (?:Internal Server Error|Bad Gateway|Service Unavailable|Gateway Time-?out)",
               r"HTTP status server error \((?P<status2>5\d\d)"),
              lambda f: msg("remedy.http_5xx", "{server:cap} had a fault (HTTP {status}); this is usually temporary.",
                            server=f.server(), status=f.group("status") or f.group("status2")),
              _net_actions(),
              "pytorch/pytorch#145983", suppresses=("resolve",)),

        # ----- the disk
        Entry("disk-full", "disk",
              (r"No space left on device", r"Errno 28\b", r"os error 28\b", r"\bENOSPC\b",
               r"not enough space on the disk", r"WinError 112\b", r"Disk quota exceeded"),
              lambda f: msg("remedy.disk_full", "The disk of {path} is full.", path=f.path() or "?"),
              lambda f: (Action(A.FREE_SPACE, path=f.path(), gb=_gb(f.ctx)),
                         Action(A.CHOOSE_OTHER_LOCATION, path=f.path())),
              "tests/fixtures/uv/fail-disk-full-0.13.9.txt; tests/fixtures/pip/fail-disk-full-23.2.1.txt",
              suppresses=("resolve", "permission")),
        Entry("read-only", "permission",
              (r"Read-only file system", r"os error 30\b", r"Errno 30\b", r"\bEROFS\b"),
              lambda f: msg("remedy.read_only", "The folder {path} is on a disk that cannot be written to "
                            "(read-only).", path=f.path() or "?"),
              lambda f: (Action(A.CHOOSE_OTHER_LOCATION, path=f.path()),),
              "tests/fixtures/uv/fail-venv-read-only-0.13.9.txt; tests/fixtures/pip/fail-venv-read-only-3.11.7.txt"),
        Entry("file-in-use", "permission",
              (r"WinError 32\b", r"being used by another process"),
              lambda f: msg("remedy.file_in_use", "Another program is using a file of the environment (often a "
                            "running Python, an editor or a virus scanner)."),
              lambda f: (Action(A.RETRY), Action(A.CHOOSE_OTHER_LOCATION, path=f.path())),
              "pytorch/pytorch#156413"),
        Entry("permission-denied", "permission",
              (r"Permission denied", r"Errno 13\b", r"os error 13\b", r"WinError 5\b", r"Access is denied",
               r"\bEACCES\b", r"PermissionError"),
              lambda f: msg("remedy.permission", "The assistant may not write to {path}.", path=f.path() or "?"),
              lambda f: (Action(A.CHOOSE_OTHER_LOCATION, path=f.path()),),
              "zalandoresearch/pytorch-ts#56; pytorch/pytorch#3222"),

        # ----- paths
        Entry("long-path", "path",
              (r"WinError 206\b", r"filename or extension is too long", r"ERROR_FILENAME_EXCED_RANGE",
               r"os error 206\b", r"Windows Long Path support", r"File name too long", r"\bENAMETOOLONG\b",
               r"Errno 36\b"),
              lambda f: msg("remedy.long_path_at", "A file path inside the environment is longer than Windows allows "
                            "(260 characters); the folder {path} adds its length to every one.", path=f.ctx.path)
              if f.ctx.path else msg("remedy.long_path", "A file path inside the environment is longer than Windows "
                                     "allows (260 characters)."),
              lambda f: (Action(A.CHOOSE_OTHER_LOCATION, path=f.path()),
                         Action(A.ENABLE_LONG_PATHS, url=LONG_PATHS_URL)),
              "pytorch/TensorRT#4288; heiheishuang/MuDG#4; voicepaw/so-vits-svc-fork#574",
              suppresses=("resolve", "permission")),

        # ----- damaged downloads
        Entry("hash-mismatch", "integrity",
              (r"do not match the hashes", r"Hash mismatch", r"hashes are required"),
              lambda f: msg("remedy.hash_bundle", "A file of the offline bundle is damaged: its checksum does not "
                            "match.") if f.ctx.bundle else
              msg("remedy.hash", "A downloaded file is damaged: its checksum does not match (a download cut short, "
                  "or a mirror serving another file)."),
              lambda f: (Action(A.RETRY), Action(A.SWITCH_SOURCE)),
              "pytorch/pytorch#110847; tests/fixtures/pip/fail-hash-mismatch-23.2.1.txt"),
        Entry("corrupt-archive", "integrity",
              (r"Bad uncompressed size", r"Bad CRC-32", r"BadZipFile", r"File is not a zip file", r"invalid zip"),
              lambda f: msg("remedy.corrupt", "A downloaded package is damaged and cannot be unpacked."),
              lambda f: (Action(A.RETRY), Action(A.SWITCH_SOURCE)),
              "pytorch/pytorch#40268; tests/fixtures/failures/uv-corrupt-wheel-0.13.9.txt"),

        # ----- what the package sources hold
        Entry("resolution-conflict", "resolve",
              (r"ResolutionImpossible", r"The conflict is caused by", r"have conflicting dependencies",
               r"depends on (?P<dep>\S+).*?we can conclude that (?P<cant>\S+) cannot be used"),
              lambda f: msg("remedy.conflict", "The packages asked for need different versions of each other, so "
                            "no combination of them can be installed."),
              lambda f: (*_torch_pick(f), Action(A.SWITCH_SOURCE)),
              "invoke-ai/InvokeAI#532; astral-sh/uv#10604"),
        Entry("version-not-found", "resolve",
              (r"there is no version of (?P<req>[A-Za-z0-9][\w.\-]*(?:\{[^}]*\})?==\S+?)(?=[\s,])",
               r"Could not find a version that satisfies the requirement (?P<req2>[^\s(]+) "
               r"\(from versions: (?!none\))[^)\s]"),
              lambda f: msg("remedy.no_version", "The package sources have no {req} for this Python and this "
                            "computer.", req=clean_req(f.group("req") or f.group("req2"))),
              lambda f: (*_torch_pick(f), Action(A.CHOOSE_PYTHON), Action(A.SWITCH_SOURCE)),
              "astral-sh/uv#1497; jgravelle/GroqCasters#1; tests/fixtures/failures/uv-no-version-torch-cpu-0.1.2.txt"),
        Entry("no-matching-build", "resolve",
              (r"no wheels (?:are |were )?available with a matching", r"has no wheels with a matching",
               r"not a supported wheel on this platform"),
              lambda f: msg("remedy.no_build", "There is no build of these packages for this Python version and "
                            "this computer."),
              lambda f: (Action(A.CHOOSE_PYTHON, torch_py(f)), *_torch_pick(f)),
              "astral-sh/uv#4303; astral-sh/uv#2538"),
        Entry("not-on-sources", "resolve",
              (r"(?P<name>\S+) was not found in the (?:package registry|provided package locations)",
               r"No matching distribution found for (?P<name2>\S+)", r"PackagesNotFoundError",
               r"we can conclude that (?:your|the) (?:project's )?requirements are unsatisfiable"),
              lambda f: msg("remedy.not_on_sources", "The package sources hold no {name} that fits this Python and "
                            "this computer.", name=(f.group("name") or f.group("name2") or "?").strip("`'")),
              lambda f: (Action(A.SWITCH_SOURCE), Action(A.CHOOSE_PYTHON)),
              "cedarconnor/SPAG4d#1; tests/fixtures/uv/fail-no-solution-0.13.9.txt"),

        # ----- PyTorch itself, once installed
        Entry("dll-load-failed", "runtime",
              (r"DLL load failed", r"WinError 126\b", r"WinError 1114\b", r"Error loading \"[^\"]*\.dll\"",
               r"libomp140\.x86_64\.dll", r"fbgemm\.dll", r"c10\.dll", r"动态链接库"),
              lambda f: msg("remedy.dll", "Windows could not load a library PyTorch needs ({dll}). The usual cause "
                            "is a missing or old Microsoft Visual C++ runtime.",
                            dll=f.search(r"([\w.\-]+\.dll)") or "DLL"),
              lambda f: (Action(A.INSTALL_VCREDIST, url=VCREDIST_URL), Action(A.RETRY)),
              "pytorch/pytorch#131662; pytorch/pytorch#129568; nagadomi/nunif#701; shiyu-coder/Kronos#166"),
        Entry("cpu-build", "runtime",
              (r"Torch not compiled with CUDA enabled",),
              lambda f: msg("remedy.cpu_build", "The PyTorch in this environment is a CPU-only build, so it cannot "
                            "use the NVIDIA GPU."),
              lambda f: (Action(A.SET_VARIANT),),
              "locuslab/TCN#67; Comfy-Org/desktop#1647"),
        Entry("arch-missing", "runtime",
              (r"no kernel image is available for execution on the device",
               r"with CUDA capability sm_(?P<sm>\d+) is not compatible with the current PyTorch installation"),
              lambda f: msg("remedy.arch_missing_cc", "This PyTorch build has no code for this GPU (compute capability "
                            "{cc}).", cc=_cc(f)) if _cc(f) else
              msg("remedy.arch_missing", "This PyTorch build has no code for this GPU's architecture."),
              lambda f: _arch_actions(f),
              "pytorch/pytorch#150733; Comfy-Org/ComfyUI#10326; pytorch/pytorch#53164"),
        Entry("driver-too-old", "runtime",
              (r"NVIDIA driver on your system is too old \(found version (?P<found>\d+)\)",),
              lambda f: msg("remedy.driver_old", "The NVIDIA driver supports CUDA up to {cuda}, which is older than "
                            "this PyTorch build needs.", cuda=_cuda_of_code(f.group("found")) or "?"),
              lambda f: _driver_actions(f),
              "lllyasviel/Fooocus#1313; zai-org/ChatGLM3#100"),
        Entry("visible-devices", "runtime",
              (r"no CUDA-capable device is detected", r"No CUDA GPUs are available",
               r"CUDA driver initialization failed"),
              lambda f: msg("remedy.visible_devices", "CUDA_VISIBLE_DEVICES={value} hides the GPU from PyTorch.",
                            value=_visible(f) or "''"),
              lambda f: (Action(A.UNSET_ENV, "CUDA_VISIBLE_DEVICES", path=_visible(f) or ""),),
              "pytorch/examples#115; pytorch/pytorch#1040",
              when=lambda f: _visible(f) is not None),
        Entry("no-cuda-device", "runtime",
              (r"no CUDA-capable device is detected", r"No CUDA GPUs are available",
               r"CUDA driver initialization failed", r"Found no NVIDIA driver on your system"),
              lambda f: msg("remedy.no_cuda_device", "PyTorch finds no usable NVIDIA GPU: the driver is not loaded, "
                            "or the GPU is not visible to this program."),
              lambda f: (Action(A.UPDATE_DRIVER, url=DRIVER_URL), Action(A.RETRY)),
              "pytorch/pytorch#5046"),
    )


def torch_py(f: Found) -> str:
    """A Python version the newest torch release supports, for "no build for this Python"."""
    data = _data(f.ctx)
    if data is None:
        return ""
    return data.python_preference[0] if data.python_preference else ""


def _python_mismatch(f: Found, spec: str, have: str) -> Msg:
    if have:
        return msg("remedy.python_mismatch", "The packages need Python {spec}, but the environment uses Python "
                   "{have}.", spec=spec, have=have)
    return msg("remedy.python_mismatch_any", "The packages need Python {spec}, which the environment's Python is "
               "not.", spec=spec)


def _python_actions(f: Found, spec: str) -> tuple[Action, ...]:
    out = [Action(A.CHOOSE_PYTHON, python_for(spec))]
    newer = torch_for_python(f.ctx)
    if f.ctx.torch and newer and newer != f.ctx.torch:
        out.append(Action(A.SET_TORCH_VERSION, newer))
    return tuple(out)


def _cc(f: Found) -> str:
    sm = f.group("sm") or f.search(r"CUDA capability sm_(\d+)")
    if sm:
        return f"{sm[:-1]}.{sm[-1]}"
    return f.ctx.compute_capability


def _arch_actions(f: Found) -> tuple[Action, ...]:
    found = build_for_gpu(f.ctx, _cc(f))
    if found:
        return (Action(A.SET_TORCH_VERSION, found[0], variant=found[1]),)
    return (Action(A.SET_VARIANT),)


def _driver_actions(f: Found) -> tuple[Action, ...]:
    out = [Action(A.UPDATE_DRIVER, driver_minimum(f.ctx), url=DRIVER_URL)]
    cuda_now = _cuda_of_code(f.group("found"))
    if f.ctx.compute_capability and cuda_now:
        found = build_for_gpu(f.ctx, f.ctx.compute_capability, cuda_now)
        if found:
            out.append(Action(A.SET_TORCH_VERSION, found[0], variant=found[1]))
    return tuple(out)


def _visible(f: Found) -> str | None:
    """CUDA_VISIBLE_DEVICES' value: the caller's environment, else the output's own command line."""
    value = f.ctx.env_value("CUDA_VISIBLE_DEVICES")
    if value is not None:
        return value
    m = re.search(r"CUDA_VISIBLE_DEVICES=(\S*)", f.text)
    return m.group(1).strip("'\"") if m else None


CATALOGUE: tuple[Entry, ...] = _entries()


def diagnose(lines: Sequence[str], ctx: Context | None = None) -> tuple[Remedy, ...]:
    """The remedies for a failure's output ``lines``: the first matching entry of each group, in
    catalogue order, without the groups an earlier match suppresses. Empty when nothing matches."""
    ctx = ctx or Context()
    kept = tuple(str(ln) for ln in lines)
    text = "\n".join(kept)
    out: list[Remedy] = []
    seen_groups: set[str] = set()
    suppressed: set[str] = set()
    details = explain_reasoning(kept)
    for entry in CATALOGUE:
        if entry.group in seen_groups or entry.group in suppressed:
            continue
        found = entry.match(text, kept, ctx)
        if found is None:
            continue
        seen_groups.add(entry.group)
        suppressed.update(entry.suppresses)
        evidence = tuple(ln.strip() for ln in kept if found.m.group(0) in ln)[:3] or (found.m.group(0),)
        out.append(Remedy(entry.code, entry.explain(found), _unique(entry.actions(found)),
                          details if entry.group in ("resolve", "python") else (), evidence, entry.source))
    group_of = {e.code: e.group for e in CATALOGUE}
    return tuple(r for r in out if group_of[r.code] not in suppressed)


def _unique(actions: Sequence[Action]) -> tuple[Action, ...]:
    out: list[Action] = []
    for a in actions:
        if a not in out:
            out.append(a)
    return tuple(out)
