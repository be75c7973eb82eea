#!/usr/bin/env bash
# The oracle's bits on every kernel set and across CPU architectures: tests/oracle_hash.c built for this
# x86 machine and run with each kernel set it has, then cross-built for aarch64 (the portable set,
# vectorised with NEON) and run under qemu. Every line must show the same hash. Needs, as root:
#   apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross libgomp1-arm64-cross qemu-user
# Not part of make test (those packages are large); run it after changing reference/oracle*.c.
# Exit status 0 when every hash agrees.
set -euo pipefail
cd "$(dirname "$0")/.."
src="tests/oracle_hash.c reference/oracle.c reference/oracle_portable.c reference/oracle_avx2.c
     reference/oracle_avx512.c reference/problem.c reference/status.c"
flags="-O3 -std=gnu11 -ffp-contract=off -fno-fast-math -fopenmp -I."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
gcc $flags $src -lm -o "$tmp/x86"
hashes=()
for k in avx512 avx2 portable; do
  if out=$(C1D_ORACLE_KERNEL=$k "$tmp/x86" 2>/dev/null); then echo "x86-64:  $out"; hashes+=("${out%% *}"); fi
done
# shellcheck disable=SC2086
aarch64-linux-gnu-gcc $flags $src -lm -o "$tmp/a64"
out=$(qemu-aarch64 -L /usr/aarch64-linux-gnu "$tmp/a64")
echo "aarch64: $out (qemu)"
hashes+=("${out%% *}")
[ "$(printf '%s\n' "${hashes[@]}" | sort -u | wc -l)" -eq 1 ] && echo "oracle_cross_arch: the same bits everywhere" ||
  { echo "oracle_cross_arch: the bits differ" >&2; exit 1; }
