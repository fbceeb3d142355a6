#!/usr/bin/env bash
# The stored runs benchmarks/regimes.py reads: every baseline in each actuation regime (the
# default is simulated by benchmarks/regimes.py itself). About 5-8 minutes per regime on 2 cores;
# with --quick the synthetic workloads only (what `benchmarks.regimes --quick` reads), about 75 s.
set -u
cd "$(dirname "$0")/.."
traces=(--trace ../shared/data/traces/*.csv)
[ "${1:-}" = "--quick" ] && traces=()
mkdir -p out/regimes
for r in 8:0 8:30 20:30 30:60 4:0 12:0 8:5 60:120; do
  p=${r%%:*}; d=${r##*:}
  echo "== pause $p delay $d $(date +%T)"
  .venv/bin/steadyscale compare "${traces[@]}" --seeds 6 --pause $p --delay $d \
    --policy 'threshold (raw)' 'steadyscale tvd' 'steadyscale tvd + hysteresis' 'steadyscale median w=120 + hysteresis' 'steadyscale tvd + stabilization 300 s @ 70%' 'steadyscale tvd + stabilization 300 s @ 80%' hpa ds2 dhalion varga 'rules (seed 000)' streamcloud elysium flink 'flink (tuned)' \
    --out out/regimes/p${p}_d${d} > out/regimes/p${p}_d${d}.log 2>&1
  echo "rc $? $(date +%T)"
done
