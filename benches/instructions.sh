#!/usr/bin/env bash
# Instructions per iteration of the engine's hot paths (examples/engine_cost.rs under valgrind's
# cachegrind, which counts instructions exactly even where `perf stat` has no hardware counters, as
# in VMs): stable on a loaded machine where criterion's wall times are not. Each scenario runs with N and
# with 0 iterations (both after one warm-up iteration); the difference divided by N is the cost of one iteration.
#
# Usage: benches/instructions.sh [SCENARIO...]   (default: get post1k post100k sigs_get body100k)
# Env:   N=200 (iterations; post100k and body100k use N/20), PROBE=path/to/engine_cost (skips the build)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-200}
PROBE=${PROBE:-}
if [ -z "$PROBE" ]; then
  (cd "$ROOT" && cargo build --profile dist --quiet --example engine_cost)
  PROBE=${CARGO_TARGET_DIR:-$ROOT/target}/dist/examples/engine_cost
fi
count() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$PROBE" "$1" "$2" 2>&1 >/dev/null |
    awk '/I *refs:/ {gsub(",", "", $4); print $4}'
}
for s in "${@:-get post1k post100k sigs_get body100k}"; do
  for scenario in $s; do
    n=$N
    case $scenario in post100k | body100k) n=$((N / 20)) ;; esac
    base=$(count "$scenario" 0)
    total=$(count "$scenario" "$n")
    echo "$scenario: $(((total - base) / n)) instructions/iteration ($n iterations)"
  done
done
