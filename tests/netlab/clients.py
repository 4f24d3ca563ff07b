"""Run real installers (uv, pip) against netlab servers, isolated from this machine's settings.

:func:`clean_env` is the environment to give them: every ``PIP_*``/``UV_*`` variable, proxy
variable and CA-bundle variable of this machine removed (so pip's configured find-links or a
system proxy can never serve what a test says came from its server), then ``extra`` set.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

_DROP_PREFIXES = ("PIP_", "UV_", "CONDA_")
_DROP = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ssl_cert_file", "ssl_cert_dir",
         "requests_ca_bundle", "curl_ca_bundle", "pythonpath", "pythonhome", "virtual_env"}


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES) and k.lower() not in _DROP}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env.update(extra)
    return env


def uv_bin() -> str:
    from uv import find_uv_bin  # the uv package of this venv

    return str(find_uv_bin())


def env_python(env_dir: Path) -> Path:
    return env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def make_venv(env_dir: Path) -> Path:
    """A fresh, empty venv (uv venv, this interpreter); returns its python."""
    subprocess.run([uv_bin(), "venv", "--quiet", "--clear", "--python", sys.executable, str(env_dir)],
                   check=True, env=clean_env(), capture_output=True, timeout=120)
    return env_python(env_dir)


def uv_install(python: Path, index_url: str, requirements: Sequence[str], *, extra_args: Sequence[str] = (),
               env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``uv pip install --index-url URL`` only (no find-links, no other index, no config, no cache)."""
    cmd = [uv_bin(), "pip", "install", "--no-config", "--no-cache", "--python", str(python),
           "--index-url", index_url, *extra_args, *requirements]
    return subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", timeout=timeout,
                          env=env if env is not None else clean_env())


def pip_install(python: Path, index_url: str, requirements: Sequence[str], *, extra_args: Sequence[str] = (),
                env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``pip --isolated --python ENV install --index-url URL`` (pip's configuration and cache unused;
    no retries, so a refusal shows at once)."""
    cmd = [sys.executable, "-m", "pip", "--isolated", "--python", str(python), "install", "--no-cache-dir",
           "--retries", "0", "--timeout", "30", "--index-url", index_url, *extra_args, *requirements]
    return subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", timeout=timeout,
                          env=env if env is not None else clean_env())
