#!/usr/bin/env bash
# Build "Torch Setup.app" with PyInstaller and wrap it in a drag-to-Applications disk image.
#
#   installer/macos/build_dmg.sh                       # dist/TorchSetup-<ver>-macos-<arch>.dmg
#   installer/macos/build_dmg.sh --bundle DIR          # offline edition: the wheel bundle goes into
#                                                      # the .app (Contents/Resources/torch-bundle)
#   CODESIGN_IDENTITY="Developer ID Application: …" installer/macos/build_dmg.sh   # signed
#   NOTARY_PROFILE=my-profile (with CODESIGN_IDENTITY)  # also notarised and stapled
#   (or NOTARY_KEY/NOTARY_KEY_ID/NOTARY_ISSUER, or APPLE_ID/APPLE_TEAM_ID/APPLE_APP_PASSWORD:
#   installer/macos/package_app.sh, which signs, self-tests, notarises and makes the image)
#
# Needs macOS 12+ (hdiutil, codesign) and a Python 3.10+ (PYTHON=python3.12 to choose one).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
[ "$(uname -s)" = Darwin ] || { echo "build_dmg.sh runs on macOS only" >&2; exit 2; }

BUNDLE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) BUNDLE="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "build_dmg.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -n "$BUNDLE" ] && [ ! -f "$BUNDLE/manifest.json" ]; then
  echo "build_dmg.sh: $BUNDLE is not a wheel bundle (no manifest.json); make one with 'torch-setup bundle'" >&2
  exit 2
fi

PYTHON="${PYTHON:-python3}"
VENV="${BUILD_VENV:-$ROOT/build/venv}"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[build]"
"$VENV/bin/python" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" "$ROOT/build.spec"

APP="$ROOT/dist/Torch Setup.app"
[ -d "$APP" ] || { echo "build_dmg.sh: PyInstaller made no $APP" >&2; exit 1; }
/usr/libexec/PlistBuddy -c "Print :LSMinimumSystemVersion" "$APP/Contents/Info.plist"

if [ -n "$BUNDLE" ]; then
  rm -rf "$APP/Contents/Resources/torch-bundle"
  cp -R "$BUNDLE" "$APP/Contents/Resources/torch-bundle"
fi

VERSION=$("$APP/Contents/MacOS/torch-setup" --version | awk '{print $2}')
ARCH=$(uname -m)
SUFFIX=""; [ -n "$BUNDLE" ] && SUFFIX="-offline"
DMG="$ROOT/dist/TorchSetup-$VERSION-macos-$ARCH$SUFFIX.dmg"
# sign (CODESIGN_IDENTITY), --self-test the signed app, notarise + staple, the .dmg
bash "$ROOT/installer/macos/package_app.sh" "$APP" "$DMG"
