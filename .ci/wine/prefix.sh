# Sourced by .ci/wine-smoke and .ci/wine-test: a fresh wine prefix in $work
# (which the caller makes and removes), console only: no X server, no xvfb
# (taikai and Go's tests open no window). Sets $wine and $wineserver.
wine=/usr/lib/wine/wine64
[ -x "$wine" ] || wine="$(command -v wine64 || command -v wine)"
wineserver="$(dirname "$wine")/wineserver"; [ -x "$wineserver" ] || wineserver=wineserver
export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
timeout 300 "$wine" wineboot -i >/dev/null 2>&1 || true
timeout 120 "$wineserver" -w || true  # the prefix is complete once its wineserver is done
# Go 1.24+ needs ProcessPrng from bcryptprimitives.dll, which wine 8.0 lacks:
# a stand-in built from .ci/wine/bcryptprimitives.c (Windows 10+ has its own).
x86_64-w64-mingw32-gcc -O2 -shared -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
  "$(dirname "${BASH_SOURCE[0]}")/bcryptprimitives.c" -lbcrypt
