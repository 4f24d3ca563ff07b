#!/usr/bin/env bash
# Build the Linux app (PyInstaller onedir) from a fresh clone, in one command:
#
#   bash installer/build_linux.sh            # -> dist/torch-setup/torch-setup
#   bash installer/build_linux.sh --onefile  # -> dist/torch-setup (one file)
#   bash installer/build_linux.sh --package  # also dist/torch-setup-<ver>-linux-<arch>.tar.gz
#
# It makes its own build venv (build/venv; PYTHON=python3.X picks the interpreter, BUILD_VENV
# moves it), installs the project with its [build] extra into it, runs PyInstaller on
# build.spec, and finishes with the frozen app's --self-test (offscreen).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON="${PYTHON:-python3}"
VENV="${BUILD_VENV:-$ROOT/build/venv}"
ONEFILE=0
PACKAGE=0
for arg in "$@"; do
  case "$arg" in
    --onefile) ONEFILE=1 ;;
    --package) PACKAGE=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "build_linux.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

t0=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating the build venv $VENV"
  "$PYTHON" -m venv "$VENV"
fi
echo "==> installing the project and PyInstaller into it"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[build]"

echo "==> PyInstaller"
if [ "$ONEFILE" = 1 ]; then export TORCH_SETUP_ONEFILE=1; fi
"$VENV/bin/python" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" "$ROOT/build.spec"

if [ "$ONEFILE" = 1 ]; then APP="$ROOT/dist/torch-setup"; else APP="$ROOT/dist/torch-setup/torch-setup"; fi
echo "==> self-test of the frozen app"
QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}" "$APP" --self-test

if [ "$PACKAGE" = 1 ] && [ "$ONEFILE" = 0 ]; then
  bash "$ROOT/installer/linux/make_tarball.sh" "$ROOT/dist/torch-setup"
fi
size=$(du -sh "$( [ "$ONEFILE" = 1 ] && echo "$APP" || echo "$ROOT/dist/torch-setup")" | cut -f1)
echo "==> built $APP ($size) in $(( $(date +%s) - t0 )) s"
