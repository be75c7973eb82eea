#!/usr/bin/env bash
# Installs the Debian packages convlab needs for a purpose ("run", "test", "power" or "fuzz"), when they are
# missing.
# As root it runs apt-get; otherwise it prints the one apt-get line needed and fails.
set -euo pipefail
purpose=${1:-run}

# What each package is for:
#   cmake, gcc, make         the build
#   libcjson-dev             JSON reports (cJSON)
#   libopenblas-dev          the oracle benchmark's im2col + DGEMM comparison
#   libdnnl-dev              oneDNN's header for the onednn_fp32 row (the CPU library baseline; libdnnl2,
#                            which it brings, is opened at run time) and the power benchmark's oneDNN output
#   libblis-dev              BLIS, a second BLAS (its own SGEMM kernels per CPU): one of the power benchmark's
#                            and the CPU real corpus's correct outputs (opened at run time, beside OpenBLAS)
#   libcriterion-dev         the unit tests (Criterion)
#   python3-numpy            .npy interoperability tests and the notebooks
#   python3-nbconvert, python3-ipykernel, python3-matplotlib   executing the notebooks in the tests
#   chromium, fonts-dejavu-core  rendering the HTML report headless in the tests (with a font for its text)
#   python3-torch            PyTorch's CPU conv1d, one of the power benchmark's correct outputs (make power,
#                            tests/test_power.c)
#   python3-pytest           pytest, for the Python helper's use in a test suite (convlab.assert_rounding_only
#                            in a pytest test, as the README shows)
#   pkg-config               the install check (scripts/install_check.sh): the example user project
#                            (examples/criterion-user) finds the installed libconvlab through convlab.pc
#   clang, libclang-rt-dev, libomp-dev   the fuzz targets (libFuzzer and the sanitizers' runtimes come
#                            with clang's runtime libraries; clang's OpenMP for the code they link)
packages=(cmake gcc g++ make libcjson-dev libopenblas-dev libdnnl-dev libblis-dev libcriterion-dev)
if [ "$purpose" = test ]; then
  packages+=(python3-numpy python3-nbconvert python3-ipykernel python3-matplotlib chromium fonts-dejavu-core
             python3-torch python3-pytest pkg-config)
elif [ "$purpose" = power ]; then
  packages+=(python3-numpy python3-torch)
fi
if [ "$purpose" = fuzz ]; then
  packages+=(clang libclang-rt-dev libomp-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "convlab needs Debian packages; run as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "convlab: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
