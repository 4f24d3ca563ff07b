"""The environment variables that change what PyTorch sees or how it is installed.

Values go through the one secret masker (:func:`app.core.base.secrets.mask`): ``user:secret@``
becomes ``***@``, token-looking query values ``***``, device UUIDs ``<uuid>``, because reports
get shared; variables named like a secret are never copied at all.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from app.core.base.secrets import hide_ids, mask
from app.core.base.text import Text, msg
from app.core.base.visible import VISIBLE_VARS, Visibility, parse_visible

NAMES = (
    # which devices torch can see
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
    "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "HSA_OVERRIDE_GFX_VERSION", "ZE_AFFINITY_MASK", "ONEAPI_DEVICE_SELECTOR",
    # libraries a wheel may pick up instead of its own
    "LD_LIBRARY_PATH", "LD_PRELOAD", "DYLD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH",
    "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDNN_HOME", "ROCM_PATH", "ROCM_HOME", "HIP_PATH",
    # behaviour
    "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING", "TORCH_CUDA_ARCH_LIST", "TORCH_HOME",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    # which Python / env is active
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONPATH", "PYTHONHOME",
    # how packages would be fetched
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CONFIG_FILE",
    "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX", "UV_TORCH_BACKEND",
    "UV_PYTHON_INSTALL_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
    "no_proxy", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "PIP_CERT",
)
PREFIXES = ("PYTORCH_", "HSA_", "CUDA_", "NCCL_", "TORCHINDUCTOR_")
# Anything with these words may carry a secret: never copied, whatever the prefix.
_SECRET_WORDS = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|CREDENTIAL|AUTH", re.IGNORECASE)


def hide_uuids(value: str) -> str:
    """Device UUIDs (``CUDA_VISIBLE_DEVICES=GPU-8932f937-...``) and serials never go into a report."""
    return hide_ids(value)


def collect(environ: Mapping[str, str]) -> dict[str, str]:
    """The relevant variables that are set (an empty value is kept: it matters)."""
    out: dict[str, str] = {}
    for key in sorted(environ):
        if _SECRET_WORDS.search(key):
            continue
        if key in NAMES or key.startswith(PREFIXES):
            out[key] = mask(str(environ[key]))
    # A frozen (PyInstaller) assistant keeps the user's own value in NAME_ORIG.
    for var in ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"):
        orig = environ.get(var + "_ORIG")
        if orig is not None:
            out[var] = mask(orig)
    return out


_WHO = {"CUDA_VISIBLE_DEVICES": lambda: msg("detect.who_cuda", "PyTorch (CUDA and ROCm builds)"),
        "HIP_VISIBLE_DEVICES": lambda: msg("detect.who_hip", "PyTorch ROCm builds"),
        "ROCR_VISIBLE_DEVICES": lambda: msg("detect.who_rocr", "the ROCm runtime")}


def _visible_note(var: str, value: str) -> Text | None:
    """A note when ``var=value`` hides GPUs (app.core.base.visible's reading of the value)."""
    who = _WHO[var]()
    vis = parse_visible(value)
    shown = hide_uuids(value.strip())
    if vis.state is Visibility.EMPTY:
        return msg("detect.visible_empty", "{var} is set but empty: {who} will see no GPU. Unset it (unset {var}) "
                   "unless that is what you want.", var=var, who=who)
    if vis.state is Visibility.DISABLED:
        return msg("detect.visible_disabled", "{var}={value} hides every GPU from {who}.", var=var, value=shown,
                   who=who)
    if vis.state is Visibility.NONE_VALID:
        return msg("detect.visible_none_valid", "{var}={value} names no GPU, so {who} will see none.", var=var,
                   value=shown, who=who)
    if vis.state is Visibility.PARTIAL:
        return msg("detect.visible_partial", "{var}={value}: '{bad}' is not a GPU, so {who} will see only the "
                   "entries before it.", var=var, value=shown, bad=hide_uuids(vis.invalid or ""), who=who)
    return None


def visible_devices_note(env: Mapping[str, str]) -> list[Text]:
    """Plain-words warnings about device-hiding variables."""
    notes: list[Text] = []
    for var in VISIBLE_VARS:
        if var in env:
            note = _visible_note(var, env[var])
            if note is not None:
                notes.append(note)
    if env.get("NVIDIA_VISIBLE_DEVICES", "").strip() in ("void", "none"):
        notes.append(msg("detect.container_no_gpu", "NVIDIA_VISIBLE_DEVICES={value}: this container was started "
                         "without GPU access.", value=env["NVIDIA_VISIBLE_DEVICES"].strip()))
    override = env.get("HSA_OVERRIDE_GFX_VERSION", "").strip()
    if override:
        m = re.fullmatch(r"(\d{1,4})\.(\d{1,4})\.(\d{1,4})", override)
        if m and int(m.group(2)) < 16 and int(m.group(3)) < 16:
            target = f"gfx{int(m.group(1))}{int(m.group(2)):x}{int(m.group(3)):x}"
            notes.append(msg("detect.hsa_override", "HSA_OVERRIDE_GFX_VERSION={value} is set: ROCm will treat your AMD "
                             "GPU as {target} (a workaround for cards ROCm does not officially support; it can crash "
                             "if the cards differ too much).", value=override, target=target))
        else:
            notes.append(msg("detect.hsa_override_bad", "HSA_OVERRIDE_GFX_VERSION={value} is not of the form 10.3.0: "
                             "ROCm may refuse to start.", value=override))
    if env.get("CUDA_LAUNCH_BLOCKING", "").strip() == "1":
        notes.append(msg("detect.launch_blocking", "CUDA_LAUNCH_BLOCKING=1 makes every GPU call wait: fine for "
                         "debugging, very slow otherwise."))
    if env.get("PYTHONPATH"):
        notes.append(msg("detect.pythonpath", "PYTHONPATH is set: a new environment may import packages from {path} "
                         "instead of its own.", path=env["PYTHONPATH"]))
    return notes
