#!/usr/bin/env bash
# Install Torch Setup Assistant for this user (no root needed):
#   ./install.sh             -> ~/.local/opt/torch-setup, a menu entry and ~/.local/bin/torch-setup
#   ./install.sh --uninstall -> removes all three
# PREFIX=/opt/torch-setup ./install.sh (as root) installs for everyone instead.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
PREFIX="${PREFIX:-$HOME/.local/opt/torch-setup}"
BIN="${BINDIR:-$HOME/.local/bin}"
if [ "$(id -u)" = 0 ] && [ "${PREFIX#/opt}" != "$PREFIX" ]; then
  DATA=/usr/local/share; BIN=/usr/local/bin
fi
DESKTOP="$DATA/applications/torch-setup.desktop"
ICON="$DATA/icons/hicolor/scalable/apps/torch-setup.svg"

if [ "${1:-}" = "--uninstall" ]; then
  rm -rf -- "$PREFIX"; rm -f -- "$DESKTOP" "$ICON" "$BIN/torch-setup"
  echo "Torch Setup Assistant removed."; exit 0
fi

mkdir -p "$PREFIX" "$BIN" "$(dirname "$DESKTOP")" "$(dirname "$ICON")"
# Replace an older copy completely, but keep an offline bundle the admin put there.
if [ -d "$PREFIX/torch-bundle" ] && [ ! -d "$HERE/torch-setup/torch-bundle" ]; then
  mv "$PREFIX/torch-bundle" "$PREFIX.bundle.keep"
fi
rm -rf -- "$PREFIX"; mkdir -p "$PREFIX"
cp -a "$HERE/torch-setup/." "$PREFIX/"
[ -d "$PREFIX.bundle.keep" ] && mv "$PREFIX.bundle.keep" "$PREFIX/torch-bundle"
ln -sf "$PREFIX/torch-setup" "$BIN/torch-setup"
cp "$HERE/torch-setup.svg" "$ICON"
exec_path=$(printf '%s' "$PREFIX/torch-setup" | sed 's/[\\"`$]/\\&/g')
sed "s|@EXEC@|\"$exec_path\"|" "$HERE/torch-setup.desktop" > "$DESKTOP"
chmod 644 "$DESKTOP"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$(dirname "$DESKTOP")" || true
echo "Installed Torch Setup Assistant in $PREFIX"
echo "Start it from your application menu, or run: $BIN/torch-setup"
case ":$PATH:" in *":$BIN:"*) ;; *) echo "(add $BIN to your PATH to run torch-setup by name)";; esac
