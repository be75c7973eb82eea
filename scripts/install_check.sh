#!/usr/bin/env bash
# libconvlab as a user gets it: installs the build tree BUILD (`cmake --install`, no second build) into a
# temporary prefix, checks the layout and that libconvlab.so exports convlab_ symbols only, then builds
# examples/criterion-user against that prefix alone, once through pkg-config (its Makefile) and once
# through CMake (find_package(convlab CONFIG)), and runs its tests: the correct kernel must pass (linked
# with the shared library and with the static one), the planted bug must fail with convlab's message
# (the bug verdict's first line). Where nvcc is, the example's CUDA kernel too, its device pointers given
# to convlab as they are: with a GPU it must pass and its planted bug fail as above; without one both
# must build and skip.
# Usage: scripts/install_check.sh [BUILD]      (default: build; ctest's library_install_check passes its own)
# Exit status 0 when every check holds, else 1 (the failing check is said on stderr).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd) || exit 1
tmp=$(mktemp -d /tmp/convlab_install_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
failed=0
fail() { echo "install_check: FAIL: $*" >&2; failed=1; }

# --- install and layout ------------------------------------------------------------------------
if ! cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" 2>&1; then
  cat "$tmp/install.log" >&2
  fail "cmake --install $build"
  exit 1
fi
for f in include/convlab/convlab.h include/convlab/criterion.h lib/libconvlab.so lib/libconvlab.a \
         lib/pkgconfig/convlab.pc lib/cmake/convlab/convlabConfig.cmake lib/cmake/convlab/convlabConfigVersion.cmake; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done
so=$(readlink -f "$prefix/lib/libconvlab.so")
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -e "$prefix/lib/$soname" ] || fail "no $soname beside $so"
echo "install_check: installed $(cd "$prefix" && find . -type f -o -type l | sort | sed 's|^\./||' | tr '\n' ' ')"
echo "install_check: SONAME $soname"

# --- exports -----------------------------------------------------------------------------------
nm -D --defined-only "$so" > "$tmp/nm.txt"
echo "install_check: nm -D --defined-only $(basename "$so"):"
sed 's/^/  /' "$tmp/nm.txt"
others=$(awk '$NF !~ /^convlab_/' "$tmp/nm.txt")
[ -z "$others" ] || fail "libconvlab.so exports symbols other than convlab_*: $others"
[ -s "$tmp/nm.txt" ] || fail "libconvlab.so exports nothing"

# --- the user's project, built twice against the prefix only -----------------------------------
# A copy, so that nothing is written into the source tree; the environment names the prefix and no
# other place convlab could be found (the source tree's include/ is not on any path here).
cp -r "$src/examples/criterion-user" "$tmp/make"
cp -r "$src/examples/criterion-user" "$tmp/cmake-src"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
echo "install_check: nvcc: ${nvcc:-none (the CUDA variant is not built)}"
unset CPATH C_INCLUDE_PATH LIBRARY_PATH CMAKE_PREFIX_PATH
if ! make -C "$tmp/make" -s > "$tmp/make.log" 2>&1; then
  cat "$tmp/make.log" >&2
  fail "the example's Makefile (pkg-config) did not build"
fi
if ! { cmake -S "$tmp/cmake-src" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$tmp/cmake-build" -j 2; } > "$tmp/cmake.log" 2>&1; then
  cat "$tmp/cmake.log" >&2
  fail "the example's CMake project (find_package(convlab CONFIG)) did not build"
fi

# One test program: the correct ones must pass, the bug must fail with the bug verdict's first line.
# A CUDA program that skipped for want of a device passes as skipped (it was built and linked).
run() { # run DIR PROGRAM EXPECT(pass|bug)
  local dir=$1 prog=$2 expect=$3 log="$tmp/$(basename "$1")-$2.log" rc
  [ -x "$dir/$prog" ] || { fail "$dir/$prog was not built"; return; }
  (cd "$dir" && "./$prog" --jobs 2 --verbose) > "$log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ] && grep -q 'no CUDA device' "$log" && [[ "$prog" == *cuda* ]]; then
    echo "install_check: $(basename "$dir")/$prog built, skipped: no CUDA device"
    return
  fi
  if [ "$expect" = pass ]; then
    if [ "$rc" -eq 0 ]; then echo "install_check: $(basename "$dir")/$prog passes: $(grep -o 'Tested: .*' "$log")"
    else cat "$log" >&2; fail "$(basename "$dir")/$prog failed (exit $rc), a correct kernel"; fi
  else
    local line allclose
    line=$(grep -o 'convlab: A bug in .*(bug-localized)\.' "$log" | head -n 1)
    allclose=0 # the CPU variant carries the same bug and shows that allclose passes it
    if [[ "$prog" != *cuda* ]]; then
      (cd "$dir" && "./$prog" --filter='conv1d/passes_allclose') > "$log.allclose" 2>&1
      allclose=$?
    else
      : > "$log.allclose"
    fi
    if [ "$rc" -ne 0 ] && [ -n "$line" ] && [ "$allclose" -eq 0 ]; then
      echo "install_check: $(basename "$dir")/$prog fails as it must$([[ "$prog" == *cuda* ]] || echo ', and passes allclose'): $(grep -o 'Tested: .*' "$log")"
      echo "  $line"
    else
      cat "$log" "$log.allclose" >&2
      fail "$(basename "$dir")/$prog: expected convlab's bug verdict (exit $rc) and allclose passing (exit $allclose)"
    fi
  fi
}
for dir in "$tmp/make" "$tmp/cmake-build"; do
  run "$dir" test_conv1d pass
  run "$dir" test_conv1d_static pass
  run "$dir" test_conv1d_bug bug
  if [ -n "$nvcc" ]; then
    run "$dir" test_conv1d_cuda pass
    run "$dir" test_conv1d_cuda_bug bug
  fi
done
# The bug's message as Criterion prints it, once (the Makefile's build).
echo "install_check: the bug variant's failure, as Criterion prints it:"
grep -A4 'convlab: A bug' "$tmp/make-test_conv1d_bug.log" | sed 's/^/  /'

if [ "$failed" -eq 0 ]; then echo "install_check: PASS"; else echo "install_check: FAIL" >&2; fi
exit "$failed"
