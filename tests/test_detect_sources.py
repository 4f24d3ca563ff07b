"""Detection sources end to end in-process: NVML (the real library, and a stand-in module at
the GPU edge), fake ROCm tools on PATH, and the whole ``detect()`` on this machine."""
from __future__ import annotations

import os
import sys
import time
import types
from pathlib import Path

import pytest

from app.core.base.text import render_all
from app.core.detection import nvidia
from app.core.detection.detect import detect, explain

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ROCM_FAKES = pytest.mark.posix_only("Linux's ROCm tools (family='linux'), faked as shell scripts")


def _tool(bindir: Path, name: str, body: str) -> None:
    bindir.mkdir(exist_ok=True)
    p = bindir / name
    p.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    p.chmod(0o755)


@pytest.mark.skipif(Path("/proc/driver/nvidia").exists(), reason="this machine has an NVIDIA driver")
def test_real_nvml_without_driver_is_not_found(monkeypatch):
    monkeypatch.delenv("TORCH_SETUP_NO_NVML", raising=False)
    f = nvidia.NvidiaFindings()
    assert nvidia.probe_nvml(f) is False
    rec = f.records[-1]
    assert rec.name == "nvml" and rec.status == "not-found"
    assert "no NVIDIA driver" in rec.detail


class _NVMLError(Exception):
    pass


def _fake_pynvml(devices, *, init_error=None):
    """A stand-in for the pynvml module (the GPU edge), answering like NVML does."""
    m = types.ModuleType("pynvml")

    def init():
        if init_error is not None:
            raise init_error

    m.nvmlInit = init
    m.nvmlShutdown = lambda: None
    m.nvmlSystemGetDriverVersion = lambda: "550.90.07"
    m.nvmlSystemGetCudaDriverVersion_v2 = lambda: 12040
    m.nvmlDeviceGetCount = lambda: len(devices)
    m.nvmlDeviceGetHandleByIndex = lambda i: devices[i]
    m.nvmlDeviceGetName = lambda h: h["name"].encode()  # older bindings return bytes
    m.nvmlDeviceGetCudaComputeCapability = lambda h: h["cc"]
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=h["mem"] * 1024 * 1024)
    m.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=h["bus"], pciDeviceId=h["dev"])
    m.nvmlDeviceGetUUID = lambda h: "GPU-must-never-be-read"
    return m


def test_nvml_source_two_gpus(monkeypatch):
    monkeypatch.delenv("TORCH_SETUP_NO_NVML", raising=False)
    devs = [{"name": "NVIDIA H100 80GB HBM3", "cc": (9, 0), "mem": 81559, "bus": b"00000000:53:00.0", "dev": 0x233010DE},
            {"name": "NVIDIA H100 80GB HBM3", "cc": (9, 0), "mem": 81559, "bus": b"00000000:64:00.0", "dev": 0x233010DE}]
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(devs))
    f = nvidia.detect_nvidia(3.0, family="linux")
    assert f.driver_version == "550.90.07" and f.cuda_version == "12.4"
    assert [(g.name, g.compute_capability, g.memory_mb, g.pci_id, bus) for g, bus in f.gpus] == [
        ("NVIDIA H100 80GB HBM3", "9.0", 81559, "10de:2330", "0000:53:00.0"),
        ("NVIDIA H100 80GB HBM3", "9.0", 81559, "10de:2330", "0000:64:00.0")]
    assert [r.name for r in f.records] == ["nvml"]  # nvidia-smi was not needed


def test_nvml_mismatch_then_falls_back(monkeypatch, tmp_path):
    monkeypatch.delenv("TORCH_SETUP_NO_NVML", raising=False)
    err = type("NVMLError_LibRmVersionMismatch", (_NVMLError,), {})()
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml([], init_error=err))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    f = nvidia.detect_nvidia(3.0, family="linux")
    assert f.records[0].status == "error" and "do not match" in f.records[0].detail
    assert [r.name for r in f.records] == ["nvml", "nvidia-smi", "nvidia-driver-file"]
    assert f.gpus == []


@ROCM_FAKES
def test_fake_rocminfo_and_enumerator(monkeypatch, tmp_path):
    from app.core.detection.amd import detect_amd

    bindir = tmp_path / "bin"
    fx = FIXTURES / "rocminfo" / "radeon-rx7900xtx-gfx1100-rocm6.2.2-ubuntu24.04.txt"
    _tool(bindir, "rocminfo", f"cat '{fx}'\n")
    _tool(bindir, "rocm_agent_enumerator", "echo gfx000; echo gfx1100\n")
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    f = detect_amd(3.0, family="linux")
    assert [(g.name, g.gfx_target, g.memory_mb, g.integrated, bus) for g, bus in f.gpus] == [
        ("Radeon RX 7900 XTX", "gfx1100", 24560, False, "0000:03:00.0")]
    assert {r.name: r.status for r in f.records}["rocminfo"] == "ok"
    assert f.tool_versions.get("rocminfo") == "ROCk 6.8.5"


@ROCM_FAKES
def test_hanging_rocminfo_times_out(monkeypatch, tmp_path):
    from app.core.detection.amd import detect_amd

    bindir = tmp_path / "bin"
    _tool(bindir, "rocminfo", "exec sleep 60\n")
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    t0 = time.monotonic()
    f = detect_amd(1.0, family="linux")
    assert time.monotonic() - t0 < 30  # not a speed limit: a wait for the tool would take its whole 60 s
    assert {r.name: r.status for r in f.records}["rocminfo"] == "timeout"
    assert f.gpus == []


@pytest.mark.posix_only("a script whose #! interpreter is missing")
def test_broken_tool_is_an_error_not_a_crash(monkeypatch, tmp_path):
    """A tool that cannot be executed (bad interpreter line) becomes an error record."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    p = bindir / "nvidia-smi"
    p.write_text("#!/nonexistent/interpreter\n", encoding="utf-8")
    p.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TORCH_SETUP_NO_NVML", "1")
    f = nvidia.detect_nvidia(3.0, family="linux")
    smi = [r for r in f.records if r.name == "nvidia-smi"]
    assert smi and smi[0].status in ("error", "not-found")
    assert f.gpus == []


def test_detect_in_process(tmp_path):
    r = detect(tmp_path / "new-env", timeout_s=99)  # clamped to 3 s
    assert r.schema_version == 1
    assert r.target == str(tmp_path)
    assert r.os.family in ("linux", "macos", "windows")
    assert r.python.source == "running" and r.python.version
    assert r.cpu.threads and r.memory_mb and r.disk_free_mb is not None
    names = {p.name for p in r.probes}
    assert {"os", "cpu", "memory", "disk", "pythons"} <= names
    assert all(p.status in ("ok", "not-found", "timeout", "error", "garbage", "empty", "skipped") for p in r.probes)
    # interpreters: the running one first, no duplicates
    assert r.interpreters[0].source == "running"
    exes = [p.executable for p in r.interpreters]
    assert len(exes) == len(set(exes))


def test_hung_nvml_call_cannot_stall_detection(monkeypatch, tmp_path):
    """NVML runs in-process: a driver call that never returns is abandoned at the deadline."""
    import threading

    monkeypatch.delenv("TORCH_SETUP_NO_NVML", raising=False)
    release = threading.Event()
    fake = _fake_pynvml([])
    fake.nvmlInit = lambda: release.wait(120)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    try:
        t0 = time.monotonic()
        r = detect(tmp_path, timeout_s=3.0)
        wall = time.monotonic() - t0
    finally:
        release.set()
    assert wall < 60, wall  # not a speed limit: a wait for the call would take its whole 120 s
    late = [p for p in r.probes if p.name == "nvidia"]
    assert late and late[0].status == "timeout" and "did not finish" in late[0].detail
    assert r.cpu.threads and r.interpreters  # everything else still arrived
    assert any("nvidia" in p for p in render_all(explain(r).problems))


@pytest.mark.posix_only("WSL2's /usr/lib/wsl/lib/nvidia-smi, faked as a shell script")
def test_wsl2_nvidia_smi_outside_path(monkeypatch, tmp_path):
    """On WSL2 nvidia-smi lives in /usr/lib/wsl/lib, often not on PATH: it is tried anyway."""
    wsl_dir = tmp_path / "wsl-lib"
    fx = FIXTURES / "nvidia-smi" / "wsl2-rtx3070-530.47-driver-531.68.txt"
    _tool(wsl_dir, "nvidia-smi",
          'case "$*" in *--query-gpu*) echo "0, NVIDIA GeForce RTX 3070, 531.68, 8.6, 8192, 00000000:2B:00.0, 0x248410DE";;\n'
          f"*) /bin/cat '{fx}';; esac\n")
    monkeypatch.setattr(nvidia, "WSL_SMI", str(wsl_dir / "nvidia-smi"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("TORCH_SETUP_NO_NVML", "1")
    f = nvidia.detect_nvidia(3.0, wsl=True, family="linux")
    assert [(g.name, g.driver_version, g.compute_capability, bus) for g, bus in f.gpus] == [
        ("NVIDIA GeForce RTX 3070", "531.68", "8.6", "0000:2b:00.0")]
    assert f.cuda_version == "12.1" and f.smi_version == "530.47"
    f2 = nvidia.detect_nvidia(3.0, wsl=False, family="linux")
    assert f2.gpus == []  # not on WSL: that path is not tried


@pytest.mark.posix_only("the Linux interpreter layouts (pyenv, uv, conda bin/ folders) as shell scripts; Windows's are in tests/test_win_pythons.py")
def test_python_discovery_sources_and_cache(monkeypatch, tmp_path):
    """pyenv, uv-managed, conda env and PATH interpreters are found, asked once, then cached."""
    from app.core.detection.cache import StampCache
    from app.core.detection.pythons import detect_pythons

    home = tmp_path / "home"
    calls = tmp_path / "calls.log"

    def fake_python(folder: Path, name: str, version: str, venv_ok: int = 1) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        p = folder / name
        p.write_text(f"#!/bin/sh\necho x >> '{calls}'\necho 'TSA-PY {version} cpython {venv_ok} 64 linux'\n",
                     encoding="utf-8")
        p.chmod(0o755)
        return p

    pyenv = fake_python(home / ".pyenv" / "versions" / "3.12.9" / "bin", "python3.12", "3.12.9")
    fake_python(home / ".pyenv" / "shims", "python3", "0.0.0")  # a shim: never listed
    uvpy = fake_python(home / ".local" / "share" / "uv" / "python" / "cpython-3.13.5-linux-x86_64-gnu" / "bin",
                       "python3.13", "3.13.5")
    conda = home / "miniforge3"
    (conda / "conda-meta").mkdir(parents=True)
    conda_py = fake_python(conda / "envs" / "ml" / "bin", "python3.10", "3.10.14")
    onpath = fake_python(tmp_path / "bin", "python3.9", "3.9.20", venv_ok=0)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("UV_PYTHON_INSTALL_DIR", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.delenv("CONDA_EXE", raising=False)
    environ = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{home / '.pyenv' / 'shims'}"}
    cache = StampCache(str(tmp_path / "cache.json"))
    running, found, _recs = detect_pythons(3.0, cache, family="linux", arch="x86_64", environ=environ)
    ours = str(tmp_path)  # a CI machine may also have /opt/conda etc.
    got = {(p.executable, p.version, p.source, p.can_venv) for p in found[1:] if p.executable.startswith(ours)}
    assert got == {(str(onpath), "3.9.20", "path", False), (str(pyenv), "3.12.9", "pyenv", True),
                   (str(conda_py), "3.10.14", "conda", True), (str(uvpy), "3.13.5", "uv", True)}
    assert found[0] is running and running.source == "running"
    assert len(calls.read_text(encoding="utf-8").splitlines()) == 4
    cache.save()
    cache2 = StampCache(str(tmp_path / "cache.json"))
    _, again, _ = detect_pythons(3.0, cache2, family="linux", arch="x86_64", environ=environ)
    assert {(p.executable, p.version) for p in again[1:] if p.executable.startswith(ours)} == \
        {(e, v) for e, v, _, _ in got}
    assert len(calls.read_text(encoding="utf-8").splitlines()) == 4  # nothing was started the second time


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_sysfs_pci_and_kfd_readers(tmp_path):
    """The sysfs readers on a recorded-shape tree: an RX 7900 XTX, a Raphael iGPU, a NIC."""
    from app.core.detection.amd import read_kfd_topology
    from app.core.detection.pci import scan_sysfs

    pcidir = tmp_path / "sys" / "bus" / "pci" / "devices"
    for bus, cls, vendor, device in (("0000:03:00.0", "0x030000", "0x1002", "0x744c"),
                                     ("0000:12:00.0", "0x038000", "0x1002", "0x164e"),
                                     ("0000:05:00.0", "0x020000", "0x8086", "0x1533")):
        _write(pcidir / bus / "class", cls + "\n")
        _write(pcidir / bus / "vendor", vendor + "\n")
        _write(pcidir / bus / "device", device + "\n")
    devs = scan_sysfs(str(tmp_path))
    assert [(d.bus, d.pci_id, d.class_code, d.vendor) for d in devs] == [
        ("0000:03:00.0", "1002:744c", "0300", "amd"), ("0000:12:00.0", "1002:164e", "0380", "amd")]
    nodes = tmp_path / "sys" / "class" / "kfd" / "kfd" / "topology" / "nodes"
    _write(nodes / "0" / "properties", "cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n")
    _write(nodes / "1" / "properties", "cpu_cores_count 0\nsimd_count 192\ngfx_target_version 110000\n"
                                       "location_id 768\ndomain 0\ndevice_id 29772\n")
    _write(nodes / "2" / "properties", "cpu_cores_count 0\nsimd_count 4\ngfx_target_version 110003\n"
                                       "location_id 4608\ndomain 0\ndevice_id 5710\n")
    kfd = read_kfd_topology(str(tmp_path))
    assert kfd == {"0000:03:00.0": {"gfx": "gfx1100", "device_id": "744c"},
                   "0000:12:00.0": {"gfx": "gfx1103", "device_id": "164e"}}
    from app.core.detection.detect import merge_gpus

    gpus = merge_gpus([], devs, kfd={k: v["gfx"] for k, v in kfd.items()})
    assert [(g.gfx_target, g.integrated) for g in gpus] == [("gfx1100", False), ("gfx1103", True)]
    assert scan_sysfs(str(tmp_path / "nowhere")) == [] and read_kfd_topology(str(tmp_path / "nowhere")) == {}
