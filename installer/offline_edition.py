"""Make the "offline edition": the app plus a wheel bundle for one target, as one archive.

The bundle goes into ``torch-setup/torch-bundle/``, next to the executable, where the
assistant finds it on its own (``app.core.install.bundle.find_bundle``): the wizard offers it on the
Welcome page and ``bundle = "auto"`` in an answer file uses it. Nothing needs the network.

Examples (from the repository root, after ``bash installer/build_linux.sh``)::

    # an existing bundle (made with `torch-setup bundle --out DIR ...`)
    python installer/offline_edition.py --bundle DIR

    # build the bundle on the way; the arguments after -- go to `torch-setup bundle`
    python installer/offline_edition.py -- --backend cpu --python 3.11 \\
        --packages torch==2.13.0 --find-links /opt/wheels

    # a Windows edition from a Windows onedir copied here (zip, as Windows users expect)
    python installer/offline_edition.py --app win/torch-setup --bundle bundles/cu126-cp312

The archive is ``dist/torch-setup-<version>-offline-<abi>-<platform>.tar.gz`` (``.zip`` for a
Windows app or with ``--format zip``). Every wheel's SHA-256 is checked against the manifest
before it is packed, so a damaged bundle never ships.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BUNDLE_DIR_NAME = "torch-bundle"  # inside the app folder, next to the executable


class EditionError(Exception):
    pass


def _app_executable(app: Path) -> Path:
    for name in ("torch-setup", "torch-setup.exe"):
        if (app / name).is_file():
            return app / name
    raise EditionError(f"{app} is not a built app folder (no torch-setup executable in it); "
                       "build it first: bash installer/build_linux.sh")


def check_bundle_files(bundle: Path) -> dict:
    """The manifest, after proving every wheel is present with its recorded size and hash."""
    from app.core.install.bundle import MANIFEST, load_manifest, sha256_of

    manifest = load_manifest(bundle)
    wheels = bundle / manifest.wheels_dir
    for f in manifest.files:
        path = wheels / f.name
        if not path.is_file():
            raise EditionError(f"the bundle is incomplete: {f.name} is missing")
        if path.stat().st_size != f.size or sha256_of(path) != f.sha256:
            raise EditionError(f"the bundle is damaged: {f.name} does not match its manifest")
    if not (bundle / manifest.requirements_file).is_file():
        raise EditionError(f"the bundle has no {manifest.requirements_file}")
    return json.loads((bundle / MANIFEST).read_text(encoding="utf-8"))


def build_bundle_with_cli(out: Path, bundle_args: list[str]) -> None:
    """Run ``torch-setup bundle --out OUT <bundle_args>`` from this source tree."""
    from app.core.proc.runner import run

    argv = [sys.executable, "-m", "app", "bundle", "--out", str(out), *bundle_args]
    print("$ " + " ".join(argv), flush=True)
    res = run(argv, cwd=ROOT, on_line=lambda _stream, line: print("  " + line, flush=True))
    if not res.ok:
        raise EditionError(f"torch-setup bundle failed ({res.describe()})")


def edition_name(app_exe: Path, manifest: dict) -> str:
    from app import __version__

    platforms = manifest.get("platforms") or ["any"]
    abi = manifest.get("abi") or "py"
    return f"torch-setup-{__version__}-offline-{abi}-{platforms[0]}"


def make_edition(app: Path, bundle: Path | None, out_dir: Path, *, fmt: str | None = None,
                 bundle_args: list[str] | None = None) -> Path:
    app = app.resolve()
    exe = _app_executable(app)
    windows_app = exe.suffix == ".exe"
    fmt = fmt or ("zip" if windows_app else "tar.gz")
    with tempfile.TemporaryDirectory(prefix="torch-setup-edition-") as tmp:
        stage_root = Path(tmp)
        if bundle is None:
            bundle = stage_root / "built-bundle"
            build_bundle_with_cli(bundle, bundle_args or [])
        manifest = check_bundle_files(bundle)
        name = edition_name(exe, manifest)
        stage = stage_root / name
        shutil.copytree(app, stage / "torch-setup", symlinks=True)
        target = stage / "torch-setup" / BUNDLE_DIR_NAME
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(bundle, target)
        linux_files = ROOT / "installer" / "linux"
        if not windows_app and (linux_files / "install.sh").is_file() and sys.platform.startswith("linux"):
            for f in ("install.sh", "torch-setup.desktop"):
                shutil.copy2(linux_files / f, stage / f)
            shutil.copy2(ROOT / "resources" / "icons" / "app.svg", stage / "torch-setup.svg")
        (stage / "README-OFFLINE.txt").write_text(_readme(manifest, windows_app), encoding="utf-8")
        out_dir.mkdir(parents=True, exist_ok=True)
        archive = out_dir / f"{name}.{fmt}"
        tmp_archive = archive.with_name(archive.name + ".part")
        if fmt == "zip":
            with zipfile.ZipFile(tmp_archive, "w", zipfile.ZIP_DEFLATED) as zf:
                for path in sorted(stage.rglob("*")):
                    rel = path.relative_to(stage_root).as_posix()
                    if path.is_file():
                        # wheels are already compressed: store them
                        kind = zipfile.ZIP_STORED if path.suffix == ".whl" else zipfile.ZIP_DEFLATED
                        zf.write(path, rel, compress_type=kind)
        elif fmt == "tar.gz":
            with tarfile.open(tmp_archive, "w:gz", compresslevel=6) as tf:
                tf.add(stage, arcname=name)
        else:
            raise EditionError(f"unknown archive format {fmt!r} (tar.gz or zip)")
        os.replace(tmp_archive, archive)
    return archive


def _readme(manifest: dict, windows: bool) -> str:
    pkgs = ", ".join(f"{f['package']} {f['version']}" for f in manifest.get("files", [])
                     if f.get("package") in ("torch", "torchvision", "torchaudio")) or "torch"
    run = r"torch-setup\torch-setup-gui.exe" if windows else "torch-setup/torch-setup"
    return (
        "Torch Setup Assistant: offline edition\n"
        "======================================\n\n"
        f"This archive holds the assistant and every wheel it needs to install {pkgs}\n"
        f"for Python {manifest.get('python_version')} on {', '.join(manifest.get('platforms') or [])},\n"
        "without any network access. The wheels are checked against their SHA-256 hashes\n"
        "before anything is installed.\n\n"
        f"Start it: {run}\n"
        "The wizard finds the bundle (torch-setup/torch-bundle) on its own.\n\n"
        "Unattended: put  bundle = \"auto\"  in the [sources] section of an answer file, then\n"
        f"  {run.replace('-gui.exe', '.exe')} install --config answers.toml --yes\n"
        + ("" if windows else "\nInstall it for this user (menu entry + ~/.local/bin/torch-setup): ./install.sh\n")
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    bundle_args: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, bundle_args = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(prog="offline_edition.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--app", type=Path, default=ROOT / "dist" / "torch-setup",
                   help="the PyInstaller onedir folder (default: dist/torch-setup)")
    p.add_argument("--bundle", type=Path, help="an existing bundle folder (else one is built "
                   "with the `torch-setup bundle` arguments given after --)")
    p.add_argument("--out", type=Path, default=ROOT / "dist", help="where the archive goes")
    p.add_argument("--format", choices=("tar.gz", "zip"), help="default: zip for a Windows app")
    args = p.parse_args(argv)
    if args.bundle is None and not bundle_args:
        p.error("give --bundle DIR, or the `torch-setup bundle` arguments after --")
    try:
        archive = make_edition(args.app, args.bundle, args.out, fmt=args.format, bundle_args=bundle_args)
    except EditionError as exc:
        print(f"offline_edition.py: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a UserError/BadInput from the core carries its own hint
        render = getattr(exc, "render", None)
        print(f"offline_edition.py: {render() if render else exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 1)
    size = archive.stat().st_size / 1e6
    print(f"{archive} ({size:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
