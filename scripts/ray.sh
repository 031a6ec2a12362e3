# Source this file: it makes sure a Python environment with Ray 2.60.0 (what `zero cycle
# --cluster` and scripts/zero-ray drive the cluster with) exists in a cache directory outside
# the clone, and exports ZERO_RAY_PYTHON (its python) and puts its bin/ (`ray`) first on PATH.
#
# Every node of a cluster needs the same Ray version (and Python minor version) as the driver:
# source this script on each node before `ray start`, or build the nodes' image from it.
# Installed once; later runs reuse it. Override the location with ZERO_CACHE_DIR.
_zero_ray_version="2.60.0"
_zero_cache="${ZERO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zero}"
_zero_ray_dir="$_zero_cache/ray-$_zero_ray_version"

if [ ! -f "$_zero_ray_dir/.complete" ]; then
    _zero_python="${PYTHON:-$(command -v python3 || command -v python)}"
    if [ -z "$_zero_python" ]; then
        echo "zero: python3 (3.9 to 3.13, with venv) is needed once, to install Ray from PyPI" >&2
        return 1 2>/dev/null || exit 1
    fi
    echo "zero: installing ray==$_zero_ray_version from PyPI into $_zero_ray_dir (once; about 250 MB)" >&2
    mkdir -p "$_zero_cache"
    # A virtual environment of its own. A venv cannot be moved once made (its scripts name
    # their interpreter by absolute path), so it is made in place and marked complete last:
    # an interrupted install is never mistaken for a finished one.
    rm -rf "$_zero_ray_dir"
    if "$_zero_python" -m venv "$_zero_ray_dir" >&2 \
        && "$_zero_ray_dir/bin/python" -m pip install --no-cache-dir --disable-pip-version-check \
            --quiet "ray==$_zero_ray_version" >&2 \
        && [ -x "$_zero_ray_dir/bin/ray" ]; then
        touch "$_zero_ray_dir/.complete"
    else
        rm -rf "$_zero_ray_dir"
        echo "zero: pip could not install ray==$_zero_ray_version (python: $_zero_python)" >&2
        return 1 2>/dev/null || exit 1
    fi
fi

export ZERO_RAY_PYTHON="$_zero_ray_dir/bin/python"
case ":$PATH:" in
    *":$_zero_ray_dir/bin:"*) ;;
    *) export PATH="$_zero_ray_dir/bin:$PATH" ;;
esac
