"""A stand-in for PyInstaller's dist/torch-setup folder, for compiling the Inno Setup script in the
Windows lane (scripts/wine-lane-checks, step inno), where the real Windows build cannot be made.

Run by the lane's Windows Python:

    python scripts/inno_stand_in.py DIST

DIST gets torch-setup.exe and torch-setup-gui.exe (copies of the venv's own torch-setup.exe
launcher, a real Windows executable) carrying the version resource build.spec gives the real ones
(installer/app_info.py, written by PyInstaller's own writer), and a small data folder, so the
script's [Files] sections, its version lookup (GetStringFileInfo) and its output name are all
exercised. It prints the version the setup must carry.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "installer")]

from PyInstaller.utils.win32 import versioninfo  # noqa: E402

import app_info  # noqa: E402  (installer/app_info.py)
from app import __version__  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/inno_stand_in.py DIST", file=sys.stderr)
        return 2
    dist = Path(argv[0])
    dist.mkdir(parents=True, exist_ok=True)
    launcher = Path(sys.executable).with_name("torch-setup.exe")
    if not launcher.is_file():
        print(f"no {launcher}: run this with the Windows lane's Python (the project installed)", file=sys.stderr)
        return 2
    files = app_info.write_version_files(__version__, dist.parent / "version-info")
    for exe, version_file in files.items():
        target = dist / exe
        shutil.copyfile(launcher, target)
        versioninfo.write_version_info_to_executable(
            str(target), versioninfo.load_version_info_from_text_file(version_file))
        got = versioninfo.read_version_info_from_executable(str(target))
        if got is None or __version__ not in str(got):
            print(f"{target}: the version resource did not take", file=sys.stderr)
            return 1
    internal = dist / "_internal"
    internal.mkdir(exist_ok=True)
    (internal / "README.txt").write_text("stand-in for the PyInstaller runtime folder\n", encoding="utf-8")
    print(__version__)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
