#!/usr/bin/env bash
# Build the one-folder app: dist/draftlight/draftlight (plus its _internal/ folder).
#
#   packaging/build.sh [DIST_DIR [WORK_DIR]]
#
# Uses .venv/bin/python when there is one (else $PYTHON, else python3), installs PyInstaller
# into it if missing, and prints the folder's size and the build time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dist="${1:-$root/dist}"
work="${2:-$root/build/pyinstaller}"
if [ -n "${PYTHON:-}" ]; then python="$PYTHON"
elif [ -x "$root/.venv/bin/python" ]; then python="$root/.venv/bin/python"
else python=python3; fi

if ! "$python" -c "import PyInstaller" 2>/dev/null; then
  "$python" -m pip install "pyinstaller>=6.10"
fi

start=$(date +%s)
"$python" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath "$work" "$root/packaging/draftlight.spec"
seconds=$(( $(date +%s) - start ))

size=$(du -sh "$dist/draftlight" | cut -f1)
echo "built $dist/draftlight in ${seconds}s, $size"
