# Source this file: it makes sure Chromium is installed for the browser tests of `zero serve`
# (Debian's `chromium` package, through apt-get, once) and exports CHROME pointing at it.
# An existing browser is used as it is: $CHROME if set, else chromium, chromium-browser,
# google-chrome or google-chrome-stable from PATH.
_zero_find_chrome() {
    if [ -n "${CHROME:-}" ] && [ -x "$CHROME" ]; then
        echo "$CHROME"
        return 0
    fi
    for _zero_name in chromium chromium-browser google-chrome google-chrome-stable; do
        if command -v "$_zero_name" > /dev/null 2>&1; then
            command -v "$_zero_name"
            return 0
        fi
    done
    return 1
}

if ! _zero_chrome="$(_zero_find_chrome)"; then
    if ! command -v apt-get > /dev/null 2>&1; then
        echo "zero: Chromium is needed for the browser tests and apt-get is not here: install Chromium or Chrome and set CHROME" >&2
        return 1 2>/dev/null || exit 1
    fi
    _zero_sudo=""
    if [ "$(id -u)" != 0 ]; then
        _zero_sudo="sudo"
    fi
    echo "zero: installing Debian's chromium for the browser tests (once)" >&2
    if ! { $_zero_sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $_zero_sudo apt-get install -y -qq chromium; } >&2; then
        echo "zero: apt-get could not install chromium" >&2
        return 1 2>/dev/null || exit 1
    fi
    if ! _zero_chrome="$(_zero_find_chrome)"; then
        echo "zero: chromium was installed but is not in PATH" >&2
        return 1 2>/dev/null || exit 1
    fi
fi
export CHROME="$_zero_chrome"
