#!/usr/bin/env python3
"""Fast on the links our users really have: raw uv, pip and ours over paced, capped and failing links.

A generated CUDA-like wheel set (tests/netlab/wheelset.py: a torch-like wheel of 500 MB and twelve
library wheels of 20 to 200 MB at ``--scale 1``, 1.3 GB in all) is served on 127.0.0.1 through a
paced link (tests/netlab/link.py; the kernel has no netem, the server paces). For each profile,
in one run, each round times the three sides in rotating order, each into a fresh environment
with empty caches:

* **raw uv**: ``uv venv`` + ``uv pip install --index-url <mirror>/whl/cu132/ torch==2.13.0+cu132``;
* **pip**: ``python -m venv --without-pip`` + pip (the newest in the local package folder, run
  with ``--python`` on the new env, ``--isolated --no-cache-dir``) with the same index;
* **ours**: the assistant's install path (``benchmarks/links_ours.py``, a child process that
  imports the product and not the lab, as the CLI would run it): the
  recommendation for a CUDA machine pinned to torch 2.13.0, the PyTorch server unreachable and
  the lab's index as the mirror (as ``--mirrors URL``), the lab's ``/simple/`` as the package
  index (``--default-index-url``), then plan, pre-flight (verified routing) and install
  (uv venv, resolve, our own downloads into the wheelhouse, ``uv pip install --no-index
  --require-hashes``). Its time is to the moment the install returned (the CLI's "Installed"):
  freeing its downloads goes on after that, and the note says when the process ended.

Printed per sample and per profile: the time to installed (median), the bytes the servers sent
(their own count: a restart shows here), what failed and how, and ours / raw uv (median of the
paired per-round ratios). The profiles (``--profiles``; tests/netlab/link.py ``PROFILES``):

* ``clean``: 100 Mbit/s for the line, 40 ms per request;
* ``capped``: 10 Mbit/s per connection, 200 Mbit/s in all, 40 ms (a CDN that caps each connection);
* ``drop``: capped as above, and the first answer for the large wheel closes at 70 % of it;
* ``drop-clean`` (not in the default list): the clean link with the same drop;
* ``stall``: the clean link and two mirrors of one line; the first stops sending (no error, no
  close) at 25 % of every file over 1 MB. Ours should finish within 10 s of its clean time.

A sample that runs past ``--limit`` seconds is stopped and shown as ``>LIMIT``. ``--pip-rounds``
(default 1) limits the slow pip side to the first rounds.

    .venv/bin/python benchmarks/links.py [--scale 1] [--rounds 2] [--profiles clean,capped,drop,stall]
        [--limit 900] [--pip-rounds 1] [--json-out FILE]
    .venv/bin/python benchmarks/links.py --scale 0.02 --rounds 1     # a quick run (about 2 minutes)
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.netlab import PROFILES, IndexServer, LinkProfile, WheelSet, cuda_like_set  # noqa: E402
from tests.netlab.behaviours import Drop, Stall  # noqa: E402
from tests.netlab.clients import clean_env, uv_bin  # noqa: E402
from tests.netlab.unreachable import Unreachable  # noqa: E402

SIDES = ("uv", "pip", "ours")
SEED_WHEELS = Path("/opt/pypi/files")


def _env_python(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


# --------------------------------------------------------------------------- the lab
@dataclass
class Lab:
    """The servers of one profile (one line: they share its pacing)."""

    profile: LinkProfile
    servers: list[IndexServer]
    wheels: WheelSet

    @property
    def bytes_out(self) -> int:
        return sum(s.bytes_out for s in self.servers)

    def mirror(self, i: int) -> str:
        return self.servers[i].whl_url("cu132")

    def stop(self) -> None:
        for s in self.servers:
            s.stop()


def _seeds() -> list[Path]:
    """pip and wheel for the new environments' seeding (every package index has them)."""
    if not SEED_WHEELS.is_dir():
        return []
    return sorted(p for p in SEED_WHEELS.glob("*.whl") if p.name.split("-")[0].lower() in ("pip", "wheel"))


def start_lab(profile: LinkProfile, wheels: WheelSet, lifetime_s: float) -> Lab:
    link = profile.link()
    files = [*wheels.files, *_seeds()]
    big = wheels.torch.name
    first: dict = {}  # type: ignore[type-arg]
    if profile.drop_at is not None:
        first[big] = Drop(after=int(wheels.torch.stat().st_size * profile.drop_at), times=1)
    servers = []
    if profile.stall_at is not None:
        stalls = {p.name: Stall(after=int(p.stat().st_size * profile.stall_at), hold_s=lifetime_s)
                  for p in wheels.files if p.stat().st_size > 1 << 20}
        servers.append(IndexServer(files, link=link, behaviours=stalls, lifetime_s=lifetime_s))
    servers.append(IndexServer(files, link=link, behaviours=first, lifetime_s=lifetime_s))
    for s in servers:
        s.start()
    return Lab(profile, servers, wheels)


def reset_drops(lab: Lab) -> None:
    """Each sample meets the same failures: the drop counters start again."""
    for s in lab.servers:
        s.reset_drops()


# --------------------------------------------------------------------------- the sides
@dataclass
class Sample:
    side: str
    seconds: float
    ok: bool
    bytes: int
    note: str = ""
    timed_out: bool = False


def _last_lines(text: str, n: int = 2) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " / ".join(lines[-n:])[-300:]


def _run(argv: Sequence[str], env: dict[str, str], limit: float) -> tuple[int | None, str, str]:
    try:
        done = subprocess.run(list(argv), env=env, capture_output=True, text=True, encoding="utf-8",
                              errors="replace", timeout=limit, stdin=subprocess.DEVNULL)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return None, out, err


def raw_uv(work: Path, lab: Lab, limit: float) -> tuple[int | None, str]:
    env = clean_env(UV_CACHE_DIR=str(work / "uv-cache"))
    target = work / "env"
    code, _, err = _run([uv_bin(), "venv", str(target), "--python", sys.executable, "--quiet"], env, limit)
    if code != 0:
        return code, err
    # uv asks an --extra-index-url before the --index-url: the first mirror (the one that stalls) goes there
    indexes = ["--index-url", lab.mirror(0)] if len(lab.servers) == 1 else \
        ["--index-url", lab.mirror(1), "--extra-index-url", lab.mirror(0)]
    code, _, err = _run([uv_bin(), "pip", "install", "--no-config", "--python", str(_env_python(target)), *indexes,
                         lab.wheels.requirement], env, limit)
    return code, err


def raw_pip(work: Path, lab: Lab, limit: float, pip_wheel: Path | None) -> tuple[int | None, str]:
    env = clean_env()
    target = work / "env"
    code, _, err = _run([sys.executable, "-m", "venv", "--without-pip", str(target)], env, limit)
    if code != 0:
        return code, err
    runner = [sys.executable, str(pip_wheel / "pip")] if pip_wheel is not None else [sys.executable, "-m", "pip"]
    indexes = ["--index-url", lab.mirror(0)] + (["--extra-index-url", lab.mirror(1)] if len(lab.servers) > 1 else [])
    code, _, err = _run([*runner, "--isolated", "--disable-pip-version-check", "--python", str(_env_python(target)),
                         "install", "--no-cache-dir", *indexes, lab.wheels.requirement], env, limit)
    return code, err


def ours(work: Path, lab: Lab, limit: float, refused: str) -> tuple[int | None, str]:
    mirrors = [s.whl_url("cu132").replace("/cu132/", "/{variant}/") for s in lab.servers]
    env = clean_env(UV_CACHE_DIR=str(work / "uv-cache"), TORCH_SETUP_HOME=str(work / "home"),
                    TORCH_SETUP_TORCH_INDEX=refused)
    code, out, err = _run([sys.executable, str(Path(__file__).with_name("links_ours.py")), str(work / "env"),
                           lab.servers[-1].simple_url(),
                           *mirrors], env, limit)
    return code, (err + out)  # its JSON line last


class LinkWatch:
    """When the link was busy during a sample: the first moment a MB of files had gone out (the
    index pages before it are small) and the last moment a byte went out (polled every 10 ms)."""

    def __init__(self, lab: Lab, began: float) -> None:
        self.lab, self.began, self.before = lab, began, lab.bytes_out
        self.busy_at: float | None = None
        self.last_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        seen = self.before
        while not self._stop.wait(0.01):
            now, out = time.perf_counter() - self.began, self.lab.bytes_out
            if out != seen:
                seen, self.last_at = out, now
            if self.busy_at is None and out - self.before > 1 << 20:
                self.busy_at = now

    def close(self) -> str:
        self._stop.set()
        self._thread.join()
        if self.busy_at is None or self.last_at is None:
            return ""
        return f"link busy {self.busy_at:.2f}-{self.last_at:.2f} s"


def sample(side: str, lab: Lab, limit: float, refused: str, pip_wheel: Path | None) -> Sample:
    work = Path(tempfile.mkdtemp(prefix=f"links-{side}-"))
    reset_drops(lab)
    before = lab.bytes_out
    began, began_wall = time.perf_counter(), time.time()
    watch = LinkWatch(lab, began)
    try:
        if side == "uv":
            code, text = raw_uv(work, lab, limit)
        elif side == "pip":
            code, text = raw_pip(work, lab, limit, pip_wheel)
        else:
            code, text = ours(work, lab, limit, refused)
        took = time.perf_counter() - began
    finally:
        busy = watch.close()
        shutil.rmtree(work, ignore_errors=True)
    sent = lab.bytes_out - before
    if code is None:
        return Sample(side, took, False, sent, f"stopped at the {limit:.0f} s limit: {_last_lines(text)}", True)
    if code != 0:
        return Sample(side, took, False, sent, f"failed (exit {code}): {_last_lines(text)}")
    note = ""
    if side == "ours":
        try:
            info = json.loads(text.strip().splitlines()[-1])
            note = "; ".join(info.get("switched") or [])
            if info.get("installed_at"):  # the moment it said "Installed" (the process then frees its downloads)
                note = "; ".join(x for x in (note, f"process ended after {took:.1f} s") if x)
                took = float(info["installed_at"]) - began_wall
        except (ValueError, IndexError):
            note = ""
    elif "retry" in text.lower() or "retrying" in text.lower():
        note = _last_lines([ln for ln in text.splitlines() if "retr" in ln.lower()][-1] if text else "", 1)
    return Sample(side, took, True, sent, "; ".join(x for x in (note, busy) if x))


# --------------------------------------------------------------------------- the report
@dataclass
class ProfileResult:
    profile: LinkProfile
    samples: dict[str, list[Sample]] = field(default_factory=dict)

    def ok_times(self, side: str) -> list[float]:
        return [s.seconds for s in self.samples.get(side, []) if s.ok]

    def median(self, side: str) -> float | None:
        t = self.ok_times(side)
        return statistics.median(t) if t else None

    def paired_ratio(self) -> float | None:
        pairs = [(o.seconds, u.seconds) for o, u in zip(self.samples.get("ours", []), self.samples.get("uv", []),
                                                         strict=False) if o.ok and u.ok]
        return statistics.median(o / u for o, u in pairs) if pairs else None


def _cell(samples: list[Sample]) -> str:
    if not samples:
        return "-"
    ok = [s for s in samples if s.ok]
    gb = statistics.median(s.bytes for s in samples) / 1e9
    if ok:
        return f"{statistics.median(s.seconds for s in ok):7.1f} s {gb:5.2f} GB"
    if any(s.timed_out for s in samples):
        return f"   >{max(s.seconds for s in samples):4.0f} s {gb:5.2f} GB"
    return f" failed {statistics.median(s.seconds for s in samples):4.0f} s {gb:4.2f} GB"


def report(results: list[ProfileResult], wheels: WheelSet) -> dict:  # type: ignore[type-arg]
    print()
    torch_mb = wheels.torch.stat().st_size / 1e6
    print(f"set: {len(wheels.files)} wheels, {wheels.total_bytes / 1e9:.2f} GB (torch {torch_mb:.0f} MB), scale "
          f"{wheels.scale:g}; times to installed (median), bytes the servers sent")
    print(f"{'profile':11} {'raw uv':>18} {'pip':>18} {'ours':>18}  {'ours/uv':>7}")
    summary = {}
    clean_ours = next((r.median("ours") for r in results if r.profile.name == "clean"), None)
    for r in results:
        ratio = r.paired_ratio()
        print(f"{r.profile.name:11} {_cell(r.samples.get('uv', [])):>18} {_cell(r.samples.get('pip', [])):>18} "
              f"{_cell(r.samples.get('ours', [])):>18}  {f'{ratio:.2f}' if ratio else '-':>7}")
        summary[r.profile.name] = {"title": r.profile.title, "paired_ratio": ratio,
                                   "samples": {k: [s.__dict__ for s in v] for k, v in r.samples.items()}}
    print()
    for r in results:
        for side in SIDES:
            notes = sorted({s.note for s in r.samples.get(side, []) if s.note})
            for n in notes:
                print(f"  {r.profile.name} / {side}: {n}")
    stall = next((r for r in results if r.profile.name == "stall"), None)
    if stall is not None and clean_ours and stall.median("ours"):
        extra = (stall.median("ours") or 0) - clean_ours
        print(f"stall: ours took {extra:+.1f} s against its clean time (goal: within 10 s)")
        summary["stall_extra_s"] = extra
    return summary


# --------------------------------------------------------------------------- main
def _pip_wheel() -> Path | None:
    found = sorted(SEED_WHEELS.glob("pip-*.whl")) if SEED_WHEELS.is_dir() else []
    from packaging.version import Version

    found.sort(key=lambda p: Version(p.name.split("-")[1]))
    return found[-1] if found else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="sizes of the wheel set (1: 1.3 GB)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--pip-rounds", type=int, default=1)
    ap.add_argument("--profiles", default="clean,capped,drop,stall")
    ap.add_argument("--sides", default=",".join(SIDES))
    ap.add_argument("--limit", type=float, default=900.0, help="seconds one sample may take")
    ap.add_argument("--cache", help="where the generated wheel set is kept (default: the netlab cache)")
    ap.add_argument("--json-out")
    args = ap.parse_args(argv)
    names = [p.strip() for p in args.profiles.split(",") if p.strip()]
    unknown = [n for n in names if n not in PROFILES]
    if unknown:
        print(f"unknown profile(s) {unknown}; known: {', '.join(PROFILES)}", file=sys.stderr)
        return 2
    sides = [s for s in args.sides.split(",") if s in SIDES]
    began = time.monotonic()
    wheels = cuda_like_set(Path(args.cache) if args.cache else None, scale=args.scale)
    print(f"wheel set ready in {time.monotonic() - began:.1f} s: {wheels.folder} "
          f"({wheels.total_bytes / 1e9:.2f} GB); load average {os.getloadavg()[0]:.2f}", flush=True)
    pip_wheel = _pip_wheel()
    results = []
    with Unreachable() as gone:
        refused = gone.refused_url.replace("/simple/", "/whl/")
        for name in names:
            profile = PROFILES[name]
            print(f"== {name}: {profile.title}", flush=True)
            lab = start_lab(profile, wheels, lifetime_s=args.limit * len(sides) * args.rounds + 600)
            res = ProfileResult(profile)
            try:
                for r in range(args.rounds):
                    order = sides[r % len(sides):] + sides[:r % len(sides)]
                    for side in order:
                        if side == "pip" and r >= args.pip_rounds:
                            continue
                        s = sample(side, lab, args.limit, refused, pip_wheel)
                        res.samples.setdefault(side, []).append(s)
                        print(f"round {r + 1}  {side:4}  {'ok    ' if s.ok else 'FAILED'} {s.seconds:7.1f} s  "
                              f"{s.bytes / 1e9:5.2f} GB  {s.note}", flush=True)
            finally:
                lab.stop()
            results.append(res)
    summary = report(results, wheels)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(summary, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
