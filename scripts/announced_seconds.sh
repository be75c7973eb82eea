# Sourced by the scripts that check convlab's announced times (estimate_check.sh, readme_usage_check.sh,
# estimate_gpu_check.sh). seconds_of [DECIMALS]: the first "NAME: about ... here" line on stdin in seconds
# ("about 2 min 05 s here" / "about 41 s" / "about 7.5 s" / "about 1 h 12 min" -> seconds; default 3
# decimals), nothing when there is none.
seconds_of() {
  sed -n 's/.*: about \([^:]*\) here.*/\1/p' | head -1 |
    awk -v d="${1:-3}" '{ s = 0; for (i = 1; i < NF; i += 2) { v = $i; u = $(i + 1);
           if (u == "h") s += 3600 * v; else if (u == "min") s += 60 * v; else s += v }
           if (NF) printf "%.*f\n", d, s }'
}
