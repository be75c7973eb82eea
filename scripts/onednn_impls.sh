#!/usr/bin/env bash
# Every oneDNN convolution implementation, one at a time (C1D_ONEDNN_IMPL), through convlab's onednn_fp32
# row, each output explained: issue 21's point 3 for oneDNN on the CPU, as scripts/cudnn_algorithms.sh is
# for cuDNN. oneDNN's primitive-descriptor iterator lists what it offers for each problem on this CPU
# (C1D_ONEDNN_IMPL=list, on the problem with N=1); each is forced in turn, and the winograd algorithm kind
# too where the list has it (auto and direct name implementations the list has). One oneDNN does not
# offer is a "not offered" line, not a failure. fp32 math stays strict throughout.
# No implementation's correct output may be called a bug.
# usage: scripts/onednn_impls.sh BUILD_DIR
#   OUT                  the log folder (default ./onednn-impls-out)
#   C1D_ONEDNN_CASES     problem:L[:N],... (default dense:1024,dense:8192,dilated:1024,dilated:8192,
#                        grouped:1024,grouped:8192): N (default 8) C=O=256 K=4 with a bias, L=1024 (2.1 M
#                        outputs at N=8) or 8192 (16.8 M); dilated: D=2; grouped: G=4
#   C1D_ONEDNN_IMPLS     the implementations to force (default: every one oneDNN lists, then winograd)
#   C1D_ONEDNN_REF_MAX   the most outputs at which ref:any runs (default 2200000: oneDNN's reference loop
#                        does about 0.2 GFLOP/s, 160 s for one 16.8 M-output dense problem on 2 cores;
#                        0: no limit). Beyond it the line says "not run".
# Prints one line per (problem, outputs, implementation): the verdict (or "not offered"), seconds, and the
# row's algo (the implementation used, its layouts). Exit 0 when none is a bug, non-finite, inconclusive or
# failed; 1 when one is; 2 on a usage error; 77 when convlab has no oneDNN here (the reason printed).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${1:?usage: scripts/onednn_impls.sh BUILD_DIR}
convlab=$build/harness/convlab
[ -x "$convlab" ] || { echo "onednn_impls: no $convlab (build first)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "onednn_impls: python3 reads convlab's CSV report; none here" >&2; exit 2; }
out=${OUT:-$PWD/onednn-impls-out}
mkdir -p "$out"
rm -rf "$out/offers.txt" "$out/probe"
cases=${C1D_ONEDNN_CASES:-dense:1024,dense:8192,dilated:1024,dilated:8192,grouped:1024,grouped:8192}

field() { # report.csv FIELD: the first row's field
  python3 -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(r.get(sys.argv[2]) or "")' "$1" "$2"
}

# oneDNN here at all? (the row's reason when not: libdnnl absent, or a build without its header)
probe=$(C1D_ONEDNN_IMPL=list "$convlab" run --impl onednn_fp32 --batch 1 --cin 16 --cout 16 --length 64 \
  --taps 4 --out "$out/probe" 2>&1)
reason=$(field "$out/probe/report.csv" skip_reason 2>/dev/null)
case $reason in
  *"oneDNN offers"*) ;;
  "") echo "onednn_impls: convlab run failed: $probe" >&2; exit 1 ;;
  *) echo "onednn_impls: SKIP: oneDNN is unavailable here: $reason"; exit 77 ;;
esac
isa=$(ONEDNN_VERBOSE=1 DNNL_VERBOSE=1 "$convlab" run --impl onednn_fp32 --batch 1 --cin 16 --cout 16 --length 64 \
  --taps 4 2>&1 | grep -m2 -E 'onednn_verbose,info,(oneDNN|cpu,isa)' | cut -d, -f3- | paste -sd' ' -)
echo "oneDNN: ${isa:-(no verbose line)}; ONEDNN_MAX_CPU_ISA=${ONEDNN_MAX_CPU_ISA:-${DNNL_MAX_CPU_ISA:-unset}}"

rc=0
printf '%-8s %-9s %-20s %-18s %7s  %s\n' problem outputs implementation verdict seconds algo
for c in ${cases//,/ }; do
  IFS=: read -r prob L N <<<"$c"
  N=${N:-8}
  args=(--cin 256 --cout 256 --length "$L" --taps 4 --bias --repeats 1)
  case $prob in
    dense) ;;
    dilated) args+=(--dilation 2) ;;
    grouped) args+=(--groups 4) ;;
    *) echo "onednn_impls: unknown problem $prob (dense, dilated, grouped)" >&2; exit 2 ;;
  esac
  n_out=$((N * 256 * L))
  rm -rf "$out/$prob-$L-$N-list"
  C1D_ONEDNN_IMPL=list "$convlab" run --impl onednn_fp32 "${args[@]}" --batch 1 --out "$out/$prob-$L-$N-list" \
    >/dev/null 2>&1
  listed=$(field "$out/$prob-$L-$N-list/report.csv" skip_reason | sed -n 's/.*oneDNN offers for this problem: //p')
  offered=${listed%%; algorithm kinds:*} kinds=${listed##*algorithm kinds: }
  echo "$prob L=$L N=$N: oneDNN offers ${listed:-nothing}" >>"$out/offers.txt"
  printf '%-8s %-9s oneDNN offers: %s\n' "$prob" "$n_out" "${listed:-nothing}"
  impls=${C1D_ONEDNN_IMPLS:-${offered//, /,},winograd}
  for impl in ${impls//,/ }; do
    if [ -z "${C1D_ONEDNN_IMPLS:-}" ] && [ "$impl" = winograd ] && [[ " $kinds " != *" winograd "* ]]; then
      printf '%-8s %-9s %-20s %-18s %7s  %s\n' "$prob" "$n_out" "$impl" "not offered" - \
        "(no winograd in oneDNN's list for this problem: C1D_ONEDNN_IMPL=winograd would skip the row)"
      continue
    fi
    dir="$out/$prob-$L-$N-${impl//[:@]/_}"
    ref_max=${C1D_ONEDNN_REF_MAX:-2200000}
    if [ "$impl" = ref:any ] && [ "$ref_max" -gt 0 ] && [ "$n_out" -gt "$ref_max" ]; then
      printf '%-8s %-9s %-20s %-18s %7s  %s\n' "$prob" "$n_out" "$impl" "not run" - \
        "(beyond C1D_ONEDNN_REF_MAX=$ref_max outputs: oneDNN's reference loop is slow)"
      continue
    fi
    rm -rf "$dir"
    t0=$EPOCHREALTIME
    C1D_ONEDNN_IMPL=$impl "$convlab" run --impl onednn_fp32 --batch "$N" "${args[@]}" --out "$dir" >"$dir.txt" 2>&1
    secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    status=$(field "$dir/report.csv" status 2>/dev/null)
    case $status in
      ok) v=$(field "$dir/report.csv" verdict) algo=$(field "$dir/report.csv" algo) ;;
      skipped)
        why=$(field "$dir/report.csv" skip_reason)
        case $why in *"does not offer"*) v="not offered" ;; *) v="skipped" ;; esac
        algo="($why)" ;;
      *) v=FAILED algo="($(field "$dir/report.csv" error 2>/dev/null || tail -1 "$dir.txt"))" ;;
    esac
    printf '%-8s %-9s %-20s %-18s %7s  %s\n' "$prob" "$n_out" "$impl" "$v" "$secs" "${algo:0:110}"
  done
done | tee "$out/table.txt"
grep -qE ' (bug-localized|bug-global|non-finite|inconclusive|FAILED|skipped) ' "$out/table.txt" && rc=1
exit $rc
