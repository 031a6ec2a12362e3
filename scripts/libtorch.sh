# Source this file: it makes sure libtorch 2.11.0 (the one tch 0.24.0 needs) is installed in a
# cache directory outside the clone, and exports LIBTORCH pointing at it.
#
# libtorch comes from PyPI's torch==2.11.0 wheel (with its NVIDIA runtime wheels, so the same
# build uses CUDA where a GPU exists). It is installed once; later builds and CI runs reuse it.
# Override the location with ZERO_CACHE_DIR.
_zero_torch_version="2.11.0"
_zero_cache="${ZERO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zero}"
_zero_torch_dir="$_zero_cache/torch-$_zero_torch_version"

if [ ! -f "$_zero_torch_dir/torch/lib/libtorch.so" ]; then
    _zero_python="${PYTHON:-$(command -v python3 || command -v python)}"
    if [ -z "$_zero_python" ]; then
        echo "zero: python3 with pip is needed once, to fetch libtorch from PyPI" >&2
        return 1 2>/dev/null || exit 1
    fi
    echo "zero: installing torch==$_zero_torch_version from PyPI into $_zero_torch_dir (once; about 4.6 GB)" >&2
    mkdir -p "$_zero_cache"
    _zero_tmp="$_zero_torch_dir.partial.$$"
    rm -rf "$_zero_tmp"
    # --target keeps it out of every Python environment; the rename makes the install atomic,
    # so an interrupted download is never mistaken for a finished one.
    if "$_zero_python" -m pip install --progress-bar on --no-cache-dir --disable-pip-version-check \
        --target "$_zero_tmp" "torch==$_zero_torch_version" >&2; then
        rm -rf "$_zero_torch_dir"
        mv "$_zero_tmp" "$_zero_torch_dir"
    else
        rm -rf "$_zero_tmp"
        echo "zero: pip could not install torch==$_zero_torch_version" >&2
        return 1 2>/dev/null || exit 1
    fi
fi

export LIBTORCH="$_zero_torch_dir/torch"
unset LIBTORCH_USE_PYTORCH
