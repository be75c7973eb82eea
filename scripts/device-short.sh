#!/usr/bin/env bash
# The short device check, for a session with little device time left (scripts/device-check.sh is the
# whole one, about ten minutes): make run's job timed with every verdict, the GPU test suites named, and
# the SASS of the depthwise and grouped kernels. Run from the repository root with a carried build.
# usage: scripts/device-short.sh BUILD_DIR [TEST_PROGRAM...]   (programs under BUILD_DIR/tests)
# environment: OUT, the log folder (default ./device-short-out); C1D_DEPS_PREFIX, a prefix holding
#              Criterion's env.sh (../shared/device/setup-deps.sh).
# The tests find the build where it was made (C1D_BINARY_DIR is compiled in): link it there first.
# Exit status 0 only when every step passed; one line per step closes the output.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: scripts/device-short.sh BUILD_DIR [TEST_PROGRAM...]}
shift
out=${OUT:-$PWD/device-short-out}
mkdir -p "$out"
if [ -n "${C1D_DEPS_PREFIX:-}" ]; then
  # shellcheck disable=SC1091
  source "$C1D_DEPS_PREFIX/env.sh"
fi
results=()
failed=0
step() { # step NAME LOG CMD...
  local name=$1 log=$2 t0=$SECONDS rc
  shift 2
  "$@" >"$log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] && results+=("$name: passed ($((SECONDS - t0)) s)") || { results+=("$name: FAILED (exit $rc)"); failed=1; }
}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $(nproc)"

# 1. make run's job: every verdict it prints is in run.txt.
rm -rf "$out/run"
step "make run's job" "$out/run.txt" "$build/harness/convlab" run --out "$out/run" --html
awk '{ v = $2; sub(/:$/, "", v) }
     v ~ /^(fp32-rounding|tf32-inputs|reduced-precision|bug-localized|bug-global|non-finite|inconclusive)$/ { n[v]++ }
     END { for (v in n) printf "make run verdicts: %s %d\n", v, n[v] }' "$out/run.txt"

# 2. the test suites named.
for t in "$@"; do
  step "$t" "$out/$t.log" "$build/tests/$t" --jobs 4 --verbose=0
  grep -E 'Synthesis|FAIL|Assertion' "$out/$t.log" | head -20
done

# 3. the SASS of the depthwise and grouped kernels (16-byte vectors, no local memory).
if command -v cuobjdump >/dev/null; then
  step "sass_dw" "$out/sass_dw.txt" bash scripts/sass_dw.sh "$build/harness/convlab"
  grep -v '^ok' "$out/sass_dw.txt"
fi

printf '%s\n' "${results[@]}"
exit "$failed"
