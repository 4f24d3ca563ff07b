#!/usr/bin/env bash
# "Torch Setup.app" -> a drag-to-Applications disk image: sign (when an identity is configured),
# self-test the signed app, notarise and staple (when credentials are configured), make the .dmg,
# sign, notarise and staple it too. installer/macos/build_dmg.sh calls it after PyInstaller.
#
#   installer/macos/package_app.sh APP DMG
#
# Signing: CODESIGN_IDENTITY="Developer ID Application: Name (TEAMID)" (a certificate in the
# keychain). Hardened runtime with installer/macos/entitlements.plist (notarization requires it).
# Notarization (needs signing), the first that is set:
#   NOTARY_PROFILE=name                                  xcrun notarytool store-credentials name
#   NOTARY_KEY=AuthKey.p8 NOTARY_KEY_ID=... NOTARY_ISSUER=...   an App Store Connect API key
#   APPLE_ID=... APPLE_TEAM_ID=... APPLE_APP_PASSWORD=...       an app-specific password
# Without an identity the app and the image are unsigned: macOS then asks the user to allow the
# app once (docs/packaging.md "Unsigned builds"). Secrets are passed to notarytool, never printed.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: package_app.sh APP DMG" >&2; exit 2; }
APP=$1
DMG=$2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ENTITLEMENTS="$HERE/entitlements.plist"
[ -d "$APP/Contents/MacOS" ] || { echo "package_app.sh: $APP is not an app bundle" >&2; exit 2; }

notary_args=()
if [ -n "${NOTARY_PROFILE:-}" ]; then
  notary_args=(--keychain-profile "$NOTARY_PROFILE")
elif [ -n "${NOTARY_KEY:-}" ]; then
  notary_args=(--key "$NOTARY_KEY" --key-id "${NOTARY_KEY_ID:?NOTARY_KEY needs NOTARY_KEY_ID}"
               --issuer "${NOTARY_ISSUER:?NOTARY_KEY needs NOTARY_ISSUER}")
elif [ -n "${APPLE_ID:-}" ]; then
  notary_args=(--apple-id "$APPLE_ID" --team-id "${APPLE_TEAM_ID:?APPLE_ID needs APPLE_TEAM_ID}"
               --password "${APPLE_APP_PASSWORD:?APPLE_ID needs APPLE_APP_PASSWORD}")
fi
identity=${CODESIGN_IDENTITY:-}
if [ -z "$identity" ] && [ ${#notary_args[@]} -gt 0 ]; then
  echo "package_app.sh: notarization needs a signed app: set CODESIGN_IDENTITY too" >&2
  exit 2
fi

# notarise FILE: submit, wait, fail with Apple's log unless it was accepted (notarytool's exit
# status alone does not say so: an "Invalid" submission can still exit 0)
notarise() {
  local file=$1 out id
  echo "-- notarising $(basename "$file") (waits for Apple)"
  out=$(xcrun notarytool submit "$file" "${notary_args[@]}" --wait --output-format json) || {
    echo "package_app.sh: notarytool submit failed for $file" >&2; return 1; }
  id=$(printf '%s' "$out" | sed -n 's/.*"id" *: *"\([^"]*\)".*/\1/p' | head -n1)
  if ! printf '%s' "$out" | grep -q '"status" *: *"Accepted"'; then
    echo "package_app.sh: Apple did not accept $(basename "$file") (submission ${id:-?}): $out" >&2
    [ -z "$id" ] || xcrun notarytool log "$id" "${notary_args[@]}" >&2 || true
    return 1
  fi
}

if [ -n "$identity" ]; then
  echo "-- signing $APP (hardened runtime, $(basename "$ENTITLEMENTS"))"
  codesign --force --deep --options runtime --timestamp --entitlements "$ENTITLEMENTS" \
    --sign "$identity" "$APP"
  codesign --verify --deep --strict --verbose=2 "$APP"
else
  echo "-- not signing: CODESIGN_IDENTITY is not set (an unsigned build; see docs/packaging.md)"
fi

# the self-test runs the app as a user would: signed, under the hardened runtime
"$APP/Contents/MacOS/torch-setup" --self-test

if [ ${#notary_args[@]} -gt 0 ]; then
  # the app itself is notarised and stapled too, so that a copy taken off the image opens on a
  # Mac with no network (offline sites): a ticket stapled only to the .dmg stays with the .dmg
  zip="$(dirname "$DMG")/.notarise-$$.zip"
  trap 'rm -f -- "$zip"' EXIT
  ditto -c -k --keepParent "$APP" "$zip"
  notarise "$zip"
  rm -f -- "$zip"
  xcrun stapler staple "$APP"
elif [ -n "$identity" ]; then
  echo "-- not notarising: no NOTARY_PROFILE, NOTARY_KEY or APPLE_ID (Gatekeeper will ask users to allow the app once)"
fi

STAGE=$(mktemp -d)
trap 'rm -rf -- "$STAGE"; rm -f -- "${zip:-}"' EXIT
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
rm -f -- "$DMG"
hdiutil create -volname "Torch Setup" -srcfolder "$STAGE" -ov -format UDZO "$DMG"

if [ -n "$identity" ]; then
  codesign --force --timestamp --sign "$identity" "$DMG"
  if [ ${#notary_args[@]} -gt 0 ]; then
    notarise "$DMG"
    xcrun stapler staple "$DMG"
    xcrun stapler validate "$DMG"
    spctl --assess --type open --context context:primary-signature --verbose=2 "$DMG"
  fi
fi
echo "$DMG"
