"""``torch-setup detect`` as a real process: this machine, and fake ``nvidia-smi`` programs first on PATH.

The fakes are the only fake part (the GPU edge): they answer like recorded real nvidia-smi
output (tests/fixtures/nvidia-smi/), hang, print garbage or print a real error text. NVML is
turned off with TORCH_SETUP_NO_NVML=1 so the nvidia-smi path runs even where NVML exists.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from app.core.detection.system import SystemReport
from tests.helpers import WINDOWS, fake_program

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"

def run_cli(*args: str, path_prefix: Path | None = None, extra_env: dict | None = None, timeout: float = 60):
    env = dict(os.environ)
    env["TORCH_SETUP_NO_NVML"] = "1"
    env.pop("CUDA_VISIBLE_DEVICES", None)
    if path_prefix is not None:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra_env or {})
    env["PYTHONIOENCODING"] = "utf-8"  # read back as UTF-8 below, whatever the console's code page
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "app", "detect", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=timeout)
    return proc, time.monotonic() - started


def fake_smi(tmp_path: Path, query_body: str, plain_body: str = "", *, query_rc: int = 0, plain_rc: int = 0,
             old_driver_body: str | None = None) -> Path:
    """Write an ``nvidia-smi`` into tmp_path/bin answering by its arguments (Python, started by a
    POSIX script, or by a .cmd on Windows)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "query.txt").write_text(query_body, encoding="utf-8")
    (bindir / "plain.txt").write_text(plain_body, encoding="utf-8")
    cases = []  # (a word in the arguments, the file printed, the exit code): the first match answers
    if old_driver_body is not None:
        (bindir / "query_old.txt").write_text(old_driver_body, encoding="utf-8")
        cases += [("compute_cap", str(bindir / "query.txt"), query_rc), ("--query-gpu", str(bindir / "query_old.txt"), 0)]
    cases += [("--query-gpu", str(bindir / "query.txt"), query_rc), ("", str(bindir / "plain.txt"), plain_rc)]
    fake_program(bindir, "nvidia-smi", (
        "import sys\n"
        "args = ' '.join(sys.argv[1:])\n"
        f"file, rc = next((f, rc) for word, f, rc in {cases!r} if word in args)\n"
        "with open(file, 'rb') as fh:\n"
        "    sys.stdout.buffer.write(fh.read())\n"
        "sys.exit(rc)\n"))
    return bindir


def hanging_smi(tmp_path: Path) -> Path:
    bindir = tmp_path / "bin"
    fake_program(bindir, "nvidia-smi", "import time\ntime.sleep(60)\n")
    return bindir


def smi_path(bindir: Path) -> str:
    """Where PATH finds the fake: ``nvidia-smi``, or ``nvidia-smi.cmd`` on Windows."""
    return str(bindir / ("nvidia-smi.cmd" if WINDOWS else "nvidia-smi"))


def _no_gpu_here() -> bool:
    """True on a Linux machine like this one: no NVIDIA/AMD driver, no GPU-vendor display device."""
    from app.core.detection.pci import scan_sysfs

    return (sys.platform.startswith("linux") and not Path("/proc/driver/nvidia").exists()
            and not Path("/sys/class/kfd").exists() and not any(d.vendor for d in scan_sysfs()))


def probes(report: dict, name: str) -> list[dict]:
    return [p for p in report["probes"] if p["name"] == name]


# ---------------------------------------------------------------- this machine (no GPU)

def test_detect_json_on_this_machine():
    # its speed (issue 2: under 1 s) is benchmarks/detect_speed.py's, against a baseline of the same run
    for _ in range(2):  # without the interpreter cache, then from it
        proc, _wall = run_cli("--json")
        assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["schema_version"] == 1
    assert data["cpu"]["model"] and data["cpu"]["threads"] >= 1
    assert data["memory_mb"] > 0 and data["disk_free_mb"] > 0
    assert data["python"]["executable"] and data["python"]["version"].startswith(f"{sys.version_info[0]}.")
    assert any(p["source"] == "running" for p in data["interpreters"])
    assert all(p["version"] for p in data["interpreters"] if p["source"] == "running")
    if _no_gpu_here():
        assert data["gpus"] == []
    SystemReport.from_dict(data)  # the contract reads it back


def test_detect_human_summary_and_out_file(tmp_path):
    out = tmp_path / "system.json"
    proc, _ = run_cli("--out", str(out), "--target", str(tmp_path / "not" / "yet" / "there"))
    assert proc.returncode == 0, proc.stderr
    assert "What this machine has:" in proc.stdout and "What it means:" in proc.stdout
    assert f"Report written to {out}" in proc.stdout
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["target"] == str(tmp_path)  # nearest existing parent of --target
    assert data["schema_version"] == 1


def test_detect_bad_out_folder_is_bad_input(tmp_path):
    proc, _ = run_cli("--json", "--out", str(tmp_path / "missing" / "x.json"))
    assert proc.returncode == 2
    err = json.loads(proc.stdout)
    assert "does not exist" in err["message"]


def test_empty_cuda_visible_devices_is_called_out():
    proc, _ = run_cli(extra_env={"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0
    assert "CUDA_VISIBLE_DEVICES is set but empty" in proc.stdout and "see no GPU" in proc.stdout


def test_detect_imports_neither_torch_nor_qt():
    """The detect process (CLI entry point and detection) never imports torch or PySide6."""
    code = ("import sys, json, io, contextlib\n"
            "sys.argv = ['torch-setup', 'detect', '--json']\n"
            "from app.cli import main\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    rc = main()\n"
            "json.loads(buf.getvalue())\n"
            "print(json.dumps({'rc': rc, 'mods': sorted(sys.modules)}))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0
    bad = [m for m in res["mods"] if m.split(".")[0] in ("torch", "PySide6", "shiboken6")]
    assert bad == []
    assert "app.core.detection.detect" in res["mods"]  # detection really ran in this process
    # and the same, seen by the interpreter's own import log of `python -m app detect --json`
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "app", "detect", "--json"], cwd=REPO,
                          capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert proc.returncode == 0
    imported = {ln.rsplit("|", 1)[-1].strip() for ln in proc.stderr.splitlines() if ln.startswith("import time:")}
    assert "app.core.detection.detect" in imported
    assert not {m for m in imported if m.split(".")[0] in ("torch", "PySide6", "shiboken6")}


# ---------------------------------------------------------------- fake nvidia-smi

TWO_GPUS_CSV = ("0, NVIDIA GeForce GTX 1050 Ti, 535.183.01, 6.1, 4096, 00000000:03:00.0, 0x1C8210DE\n"
                "1, NVIDIA GeForce GTX 1060 6GB, 535.183.01, 6.1, 6144, 00000000:04:00.0, 0x1C0310DE\n")


def test_fake_nvidia_smi_two_gpus(tmp_path):
    plain = (FIXTURES / "nvidia-smi" / "multi-gtx1050ti-gtx1060-535.183.01-debian12.txt").read_text(encoding="utf-8")
    bindir = fake_smi(tmp_path, TWO_GPUS_CSV, plain)
    proc, _ = run_cli("--json", path_prefix=bindir)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    nv = [g for g in data["gpus"] if g["vendor"] == "nvidia" and g["source"] != "pci"]
    assert [(g["name"], g["driver_version"], g["compute_capability"], g["memory_mb"]) for g in nv] == [
        ("NVIDIA GeForce GTX 1050 Ti", "535.183.01", "6.1", 4096),
        ("NVIDIA GeForce GTX 1060 6GB", "535.183.01", "6.1", 6144)]
    assert data["nvidia_cuda_version"] == "12.2"  # from the plain table's header
    assert data["tools"]["nvidia-smi"]["path"] == smi_path(bindir)
    rec = probes(data, "nvidia-smi")
    assert rec and rec[-1]["status"] == "ok"
    assert probes(data, "nvml")[0]["status"] == "skipped"
    assert "uuid" not in proc.stdout.lower()
    # the human summary says the same in words
    proc, _ = run_cli(path_prefix=bindir)
    assert "NVIDIA GPU: NVIDIA GeForce GTX 1060 6GB (compute capability 6.1" in proc.stdout
    assert "supports CUDA up to 12.2" in proc.stdout


def test_fake_nvidia_smi_that_hangs(tmp_path):
    bindir = hanging_smi(tmp_path)
    proc, wall = run_cli("--json", path_prefix=bindir)
    assert proc.returncode == 0, proc.stderr
    # not a speed limit (benchmarks/detect_speed.py measures the hung-smi case against a baseline):
    # a detection that waited for the tool would take its whole 60 s
    assert wall < 30, f"detection took {wall:.1f} s with a hung nvidia-smi"
    data = json.loads(proc.stdout)
    rec = probes(data, "nvidia-smi")
    assert rec and rec[-1]["status"] == "timeout"
    assert "timed out" in rec[-1]["detail"]
    assert [g for g in data["gpus"] if g["vendor"] == "nvidia" and g["source"] != "pci"] == []
    proc, wall = run_cli(path_prefix=bindir)
    assert "nvidia-smi timed out" in proc.stdout
    assert wall < 30


def test_fake_nvidia_smi_that_prints_garbage(tmp_path):
    bindir = fake_smi(tmp_path, "<<<%%% this is not a GPU list \x7f at all >>>\n", "random words\n")
    proc, _ = run_cli("--json", path_prefix=bindir)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    rec = probes(data, "nvidia-smi")[-1]
    assert rec["status"] == "garbage"
    assert "not a GPU list" in rec["detail"]
    assert [g for g in data["gpus"] if g["vendor"] == "nvidia" and g["source"] != "pci"] == []
    proc, _ = run_cli(path_prefix=bindir)
    assert "nvidia-smi printed something unexpected" in proc.stdout


def test_fake_nvidia_smi_driver_library_mismatch(tmp_path):
    text = (FIXTURES / "nvidia-smi" / "error-driver-library-mismatch-550.144.txt").read_text(encoding="utf-8")
    bindir = fake_smi(tmp_path, text, text, query_rc=18, plain_rc=18)
    proc, _ = run_cli("--json", path_prefix=bindir)
    data = json.loads(proc.stdout)
    rec = probes(data, "nvidia-smi")[-1]
    assert rec["status"] == "error" and "do not match" in rec["detail"]
    proc, _ = run_cli(path_prefix=bindir)
    assert "the NVIDIA driver and its library do not match" in proc.stdout and "reboot" in proc.stdout


def test_fake_old_driver_without_compute_cap_field(tmp_path):
    bindir = fake_smi(
        tmp_path,
        'Field "compute_cap" is not a valid field to query.\n\n',
        (FIXTURES / "nvidia-smi" / "single-titan-v-515.65.01.txt").read_text(encoding="utf-8"),
        query_rc=2,
        old_driver_body="0, NVIDIA TITAN V, 470.82.01, 12288, 00000000:AF:00.0, 0x1D8110DE\n")
    proc, _ = run_cli("--json", path_prefix=bindir)
    data = json.loads(proc.stdout)
    nv = [g for g in data["gpus"] if g["vendor"] == "nvidia" and g["source"] != "pci"]
    assert [(g["name"], g["driver_version"], g["compute_capability"]) for g in nv] == \
        [("NVIDIA TITAN V", "470.82.01", "7.0")]
    rec = probes(data, "nvidia-smi")[-1]
    # this driver does not report it: told from the PCI device id nvidia-smi gives (10de:1d81, GV100 in pci.ids)
    assert rec["status"] == "ok" and "does not report the compute capability" in rec["detail"]
    assert "7.0 from its PCI id 10de:1d81 (GV100)" in rec["detail"] and "pci.ids" in rec["detail"]


def test_fake_nvidia_smi_with_one_lost_gpu(tmp_path):
    """One GPU answers, the other has fallen off the bus: the good one is listed, the problem said."""
    body = ("0, NVIDIA GeForce RTX 3090, 550.54.14, 8.6, 24576, 00000000:05:00.0, 0x220410DE\n"
            "Unable to determine the device handle for GPU0000:0A:00.0: Unknown Error\n")
    bindir = fake_smi(tmp_path, body, "", query_rc=15)
    proc, _ = run_cli("--json", path_prefix=bindir)
    data = json.loads(proc.stdout)
    assert [(g["name"], g["compute_capability"]) for g in data["gpus"] if g["source"] == "nvidia-smi"] == \
        [("NVIDIA GeForce RTX 3090", "8.6")]
    rec = probes(data, "nvidia-smi")[-1]
    assert rec["status"] == "ok" and "fallen off the bus" in rec["detail"]
    proc, _ = run_cli(path_prefix=bindir)
    assert "! nvidia-smi: a GPU is present but the driver cannot reach it" in proc.stdout


def test_importing_detection_is_cheap():
    """Other commands import app.core.detection.detect for its types; psutil and pynvml load only in detect()."""
    code = ("import sys, json, app.core.detection.detect, app.commands.detect\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('psutil', 'pynvml', 'torch', 'PySide6'))))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_fake_nvidia_smi_query_broken_but_table_fine(tmp_path):
    plain = (FIXTURES / "nvidia-smi" / "multi-p100-gtx1070-580.82.07-cuda13.txt").read_text(encoding="utf-8")
    bindir = fake_smi(tmp_path, "?? unexpected ??\n", plain)
    proc, _ = run_cli("--json", path_prefix=bindir)
    data = json.loads(proc.stdout)
    nv = [g for g in data["gpus"] if g["source"] == "nvidia-smi"]
    assert [(g["name"], g["driver_version"], g["compute_capability"], g["memory_mb"]) for g in nv] == [
        ("Tesla P100-PCIE-16GB", "580.82.07", "6.0", 16384), ("NVIDIA GeForce GTX 1070", "580.82.07", "6.1", 8192)]
    assert data["nvidia_cuda_version"] == "13.0"
    assert probes(data, "nvidia-smi-query")[0]["status"] == "garbage"
    assert probes(data, "nvidia-smi")[-1]["status"] == "ok"
