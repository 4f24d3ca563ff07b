#!/usr/bin/env bash
# Turn the PyInstaller onedir into a double-clickable Linux download:
#   torch-setup-<version>-linux-<arch>.tar.gz
#     torch-setup/            the app (run ./torch-setup/torch-setup directly, no install needed)
#     install.sh              per-user install: menu entry + icon + ~/.local/bin/torch-setup
#     torch-setup.desktop     the menu entry template
#     torch-setup.svg         the icon
# Usage: installer/linux/make_tarball.sh [dist/torch-setup] [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
APP="${1:-$ROOT/dist/torch-setup}"
OUT="${2:-$(dirname "$APP")}"
[ -x "$APP/torch-setup" ] || { echo "make_tarball.sh: $APP/torch-setup not found; build it first (installer/build_linux.sh)" >&2; exit 2; }
VERSION=$("$APP/torch-setup" --version | awk '{print $2}')
ARCH=$(uname -m)
NAME="torch-setup-$VERSION-linux-$ARCH"
STAGE=$(mktemp -d)
trap 'rm -rf -- "$STAGE"' EXIT
mkdir -p "$STAGE/$NAME"
cp -a "$APP" "$STAGE/$NAME/torch-setup"
cp "$ROOT/installer/linux/install.sh" "$ROOT/installer/linux/torch-setup.desktop" "$STAGE/$NAME/"
cp "$ROOT/resources/icons/app.svg" "$STAGE/$NAME/torch-setup.svg"
chmod +x "$STAGE/$NAME/install.sh"
mkdir -p "$OUT"
tar -C "$STAGE" -czf "$OUT/$NAME.tar.gz" "$NAME"
echo "$OUT/$NAME.tar.gz"
