#!/usr/bin/env bash
# gpumem's commands on a Debian bookworm machine. Each one first runs .ci/bootstrap (idempotent:
# it installs only what is missing, from Debian's archive and npm).
#
#   ./make.sh serve [--port N]   build the WebAssembly site and serve it at http://127.0.0.1:N/ (8000)
#   ./make.sh test               every test: native, WebAssembly, CLI, native-vs-WASM parity, browser
#   ./make.sh site               only build the site into build/wasm/site (what Pages deploys)
#   ./make.sh bench              benchmarks: accuracy against measured peaks, speed, page budgets
#   ./make.sh bands              regenerate presets/error_bands.json (the error band's runs) after a memory-model change
#
# `test` keeps going after a failed stage, prints a summary and ends with the line
# "N passed, N failed" (counting stages); it exits non-zero when any stage failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$root"

jobs=$(nproc 2>/dev/null || echo 2)
# Debian's emscripten runs its JS optimizer with node and needs Debian's `acorn` module.
export NODE_PATH=/usr/share/nodejs

usage() {
  cat <<'EOF'
usage: ./make.sh COMMAND [OPTIONS]

commands:
  serve [--port N]   install what is missing, build the WebAssembly site into build/wasm/site
                     and serve it at http://127.0.0.1:N/ (default port 8000)
  test               install what is missing, then build and run every test stage:
                     the C++ format check (clang-format), native build + ctest, WebAssembly build + GoogleTest under node,
                     CLI tests, native-vs-WASM parity, browser tests, the suite under
                     ASan + UBSan, and libFuzzer: the saved regressions, then a fixed number
                     of runs from a fixed seed per fuzz target (the same inputs every time)
  site               install what is missing and only build build/wasm/site
  fuzz [SECONDS]     libFuzzer on the scenario and config.json readers and the CLI's command
                     line, the saved regressions first, then SECONDS per target (600) from a
                     random seed; each input within 10 s and 2048 MiB, or it is a finding
  bench              build, then print the benchmarks: accuracy against the published measured
                     peaks (tests/bench/validation.mjs), the KV pool and the rest of vLLM's
                     budget against its start-up log (serving.mjs), throughput against published tokens/s
                     (throughput.mjs), estimates per second (speed.mjs), parse and
                     near-miss times against input size (input.mjs), the
                     planner's evaluations per second and plan times (planner.mjs), and
                     the page's budgets: transfer size, time to first frame, memory (page.mjs)
  bands              build the CLI, then regenerate presets/error_bands.json: measured / estimated of each
                     validation case, the runs every estimate's error band is drawn from
                     (tests/bench/bands.mjs --write; tests/cli/bands.test.mjs fails while it is stale)
  -h, --help         this text
EOF
}

banner() {
  printf '\n==================================================================\n'
  printf '== %s\n' "$*"
  printf '==================================================================\n'
}

bootstrap() {  # $1: "" (everything) or "--site" (only what building the site needs)
  bash .ci/bootstrap "$@"
}

# --- build steps -----------------------------------------------------------------------------

build_site() {
  emcmake cmake -S . -B build/wasm -DGPUMEM_BUILD_TESTS=OFF
  cmake --build build/wasm --target site -j"$jobs"
  local f
  for f in index.html gpumem-offline.html; do
    [ -f "build/wasm/site/$f" ] || { echo "make.sh: build/wasm/site/$f was not built" >&2; return 1; }
  done
}

# Each build stage builds what the stages after it need, so a test suite that fails to compile
# does not keep the CLI, parity or browser tests from running; the test stages build the rest.
format_check() {  # every tracked C++ file as .clang-format has it (clang-format 14), lines at most 120
  local files bad=0
  files=$(git ls-files '*.cpp' '*.h')
  # shellcheck disable=SC2086
  clang-format --dry-run --Werror $files || bad=1
  # shellcheck disable=SC2086
  if awk 'length > 120 { print FILENAME ":" FNR ": " length " columns (at most 120)"; found = 1 } END { exit found }' $files; then :; else bad=1; fi
  [ "$bad" = 0 ] || { echo "make.sh: format: run clang-format -i on the files named above" >&2; return 1; }
}

native_build() {  # the core and the CLI
  cmake -S . -B build/native -DGPUMEM_WERROR=ON
  cmake --build build/native --target gpumem -j"$jobs"
}

native_tests() {  # everything else (the GoogleTest suite), then ctest
  cmake --build build/native -j"$jobs"
  ctest --test-dir build/native --output-on-failure --no-tests=error
}

wasm_build() {  # the node module, its npm package and the served site
  emcmake cmake -S . -B build/wasm -DGPUMEM_BUILD_TESTS=ON -DGPUMEM_WERROR=ON
  cmake --build build/wasm --target gpumem_wasm -j"$jobs"
  cmake --build build/wasm --target npm_package -j"$jobs"
  cmake --build build/wasm --target site -j"$jobs"
}

wasm_tests() {  # everything else (the same GoogleTest suite as one JS file), run by node
  cmake --build build/wasm -j"$jobs"
  node build/wasm/tests/gpumem_tests.js
}

cli_tests() {
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" node --test tests/cli/ tests/compat/
}

parity_tests() {
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" GPUMEM_WASM="$root/build/wasm/wasm/gpumem.js" \
    node --test tests/parity/
}

package_tests() {  # the npm package packed, installed offline in a scratch project, used and type-checked
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" GPUMEM_NPM_DIR="$root/build/wasm/npm" node --test tests/package/
}

browser_tests() {  # the offline bundle's test compares with the CLI when native-build made it
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" node --test tests/browser/
}

# The GoogleTest suite again, built with clang under AddressSanitizer + UndefinedBehaviorSanitizer.
sanitizer_tests() {
  cmake -S . -B build/asan -DCMAKE_CXX_COMPILER=clang++ -DGPUMEM_SANITIZE=ON -DGPUMEM_WERROR=ON
  cmake --build build/asan --target gpumem_tests -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build/asan/tests/gpumem_tests
}

# libFuzzer over the scenario reader, the config.json reader, the CLI's command line and the tools'
# configs and commands that gpumem check reads. Every
# input has a budget: -timeout seconds and -rss_limit_mb of memory; one that runs past either is a
# finding, so a super-linear path shows as one. Seed corpora: the test scenarios, the presets'
# configs, wide JSON documents of 1 MiB ([{}, {}, ...] and {"k0": {}, ...}: a parse quadratic in
# their objects takes minutes on them) and tests/fuzz/cli_seeds (one command line per file, a word
# per line) and the real configs of tests/data/realconfigs. The JSON targets take inputs up to the
# wide documents' size, the CLI's up to 16 KiB, the configs' up to 256 KiB.
fuzz_targets=(scenario config cli formats)
fuzz_timeout=10     # seconds per input (the slowest input the targets run, a plan of 64 GPUs, takes ~2 s)
fuzz_rss_mb=2048    # MiB per process
declare -A fuzz_max_len=([scenario]=1100000 [config]=1100000 [cli]=16384 [formats]=262144)
# fuzz_check's fixed number of inputs per target, from seed 1: together about as long as the
# 3 x 60 s of random search this stage ran before (measured on 2 busy cores: about 3 min).
declare -A fuzz_runs=([scenario]=7000 [config]=16000 [cli]=25000 [formats]=12000)

fuzz_build() {  # the three targets; $1: a folder to fill with their seed corpora
  local corpus=$1 f
  cmake -S . -B build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DGPUMEM_FUZZ=ON -DGPUMEM_BUILD_TESTS=OFF -DGPUMEM_WERROR=ON
  cmake --build build/fuzz --target gpumem_scenario_fuzz gpumem_config_fuzz gpumem_cli_fuzz gpumem_formats_fuzz -j"$jobs"
  mkdir -p "$corpus/scenario" "$corpus/config" "$corpus/cli" "$corpus/formats"
  cp tests/data/scenarios/*.json "$corpus/scenario/"
  for f in presets/models/*.json; do
    node -e 'const fs=require("fs"); process.stdout.write(JSON.stringify(JSON.parse(fs.readFileSync(process.argv[1])).config))' "$f" \
      > "$corpus/config/$(basename "$f")"
  done
  node -e '
    const fs = require("fs"), [dir, size] = [process.argv[1], Number(process.argv[2])];
    let array = "[{}", object = "{\"k0\":{}";
    while (array.length < size) array += ",{}";
    for (let i = 1; object.length < size; i++) object += `,"k${i}":{}`;
    for (const t of ["scenario", "config"]) {
      fs.writeFileSync(`${dir}/${t}/wide-array.json`, array + "]");
      fs.writeFileSync(`${dir}/${t}/wide-object.json`, object + "}");
    }' "$corpus" $((1 << 20))
  cp tests/fuzz/cli_seeds/* "$corpus/cli/"
  # The tools' real configs and commands (tests/data/realconfigs), each under a name of its own.
  find tests/data/realconfigs -type f ! -name '*.md' ! -name SOURCES.json | while read -r f; do
    cp "$f" "$corpus/formats/$(echo "$f" | tr '/' '_')"
  done
}

fuzz_replay() {  # every file in tests/fuzz/regressions through every target (each takes any bytes)
  local target
  for target in "${fuzz_targets[@]}"; do
    build/fuzz/tests/fuzz/gpumem_${target}_fuzz -timeout="$fuzz_timeout" -rss_limit_mb="$fuzz_rss_mb" \
      -max_len="${fuzz_max_len[$target]}" tests/fuzz/regressions/*
  done
}

# fuzz_search TARGET CORPUS OPTIONS...: libFuzzer on the corpus with the per-input budgets; its
# progress lines go to build/fuzz/TARGET.log. A finding makes it exit non-zero: the report is
# printed and the input is in build/fuzz/ (crash-*, timeout-*, oom-*, leak-*).
fuzz_search() {
  local target=$1 corpus=$2
  shift 2
  if ! build/fuzz/tests/fuzz/gpumem_${target}_fuzz -timeout="$fuzz_timeout" -rss_limit_mb="$fuzz_rss_mb" \
       -max_len="${fuzz_max_len[$target]}" -print_final_stats=1 -artifact_prefix=build/fuzz/ "$@" "$corpus" \
       > "build/fuzz/$target.log" 2>&1; then
    tail -n 60 "build/fuzz/$target.log"
    echo "make.sh: the $target fuzzer found a failing input (build/fuzz/crash-*, timeout-*, oom-*)"
    return 1
  fi
  echo "$target: $(grep -E '^(Done|stat::number_of_executed_units)' "build/fuzz/$target.log" | tr '\n' ' ')"
}

# ./make.sh test's stage: the same inputs every time. The saved regressions, then from each seed
# corpus a fixed number of runs from a fixed seed (libFuzzer's mutations follow its seed). Two of
# libFuzzer's inputs are not the seed's and are turned off: -reload (it rereads the corpus folder
# on a timer) and -use_cmp (it feeds the values of compared operands, addresses among them, which
# differ from run to run, back into the mutations).
fuzz_check() {
  local corpus target
  corpus=$(mktemp -d)
  fuzz_build "$corpus"
  fuzz_replay
  for target in "${fuzz_targets[@]}"; do
    fuzz_search "$target" "$corpus/$target" -seed=1 -runs="${fuzz_runs[$target]}" -reload=0 -use_cmp=0
  done
  rm -rf "$corpus"
}

# ./make.sh fuzz [SECONDS]: the open-ended search. The saved regressions, then SECONDS per target
# from a random seed (a new one each run).
fuzz_run() {
  local seconds=${1:-600} corpus target
  case $seconds in ''|*[!0-9]*) echo "make.sh fuzz: SECONDS must be a number, got '$seconds'" >&2; return 2 ;; esac
  corpus=$(mktemp -d)
  fuzz_build "$corpus"
  fuzz_replay
  for target in "${fuzz_targets[@]}"; do
    fuzz_search "$target" "$corpus/$target" -max_total_time="$seconds"
  done
  rm -rf "$corpus"
}

# --- stages ----------------------------------------------------------------------------------

stage_names=()
stage_results=()
stage_seconds=()
declare -A stage_ok=()

# run_stage NAME NEEDS FUNCTION: runs FUNCTION in a subshell with errexit on (so the first failing
# command ends the stage), logging to build/logs/NAME.log. NEEDS is a space-separated list of
# stages that must have passed first; otherwise the stage is not run and counts as failed.
run_stage() {
  local name=$1 needs=$2 fn=$3 dep rc start
  banner "stage: $name"
  stage_names+=("$name")
  for dep in $needs; do
    if [ "${stage_ok[$dep]:-0}" != 1 ]; then
      echo "make.sh: not run: stage '$dep' did not pass"
      stage_results+=("FAIL (not run: $dep failed)")
      stage_seconds+=(0)
      stage_ok[$name]=0
      return 0
    fi
  done
  mkdir -p build/logs
  start=$SECONDS
  set +e
  ( set -euo pipefail; "$fn" ) 2>&1 </dev/null | tee "build/logs/$name.log"
  rc=${PIPESTATUS[0]}
  set -e
  stage_seconds+=($((SECONDS - start)))
  if [ "$rc" = 0 ]; then
    stage_results+=("PASS")
    stage_ok[$name]=1
  else
    stage_results+=("FAIL (exit $rc, log: build/logs/$name.log)")
    stage_ok[$name]=0
  fi
}

cmd_bench() {
  bootstrap
  native_build
  # Tests on, as the test stages configure it (only the named targets are built here).
  emcmake cmake -S . -B build/wasm -DGPUMEM_BUILD_TESTS=ON >/dev/null
  cmake --build build/wasm --target gpumem_wasm -j"$jobs"
  cmake --build build/wasm --target site -j"$jobs"
  # The planner's benchmark program (tests/bench/planner_bench.cpp), native and WebAssembly.
  cmake --build build/native --target gpumem_planner_bench -j"$jobs"
  cmake --build build/wasm --target gpumem_planner_bench -j"$jobs"
  banner "accuracy: tests/bench/validation.mjs"
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" node tests/bench/validation.mjs
  banner "error band: held-out coverage (tests/bench/band_coverage.mjs)"
  local band_ok=1
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" node tests/bench/band_coverage.mjs || band_ok=0
  banner "serving: tests/bench/serving.mjs"
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" node tests/bench/serving.mjs
  banner "throughput: tests/bench/throughput.mjs"
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" node tests/bench/throughput.mjs
  banner "speed: tests/bench/speed.mjs"
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" GPUMEM_WASM="$root/build/wasm/wasm/gpumem.js" node tests/bench/speed.mjs
  banner "input sizes: tests/bench/input.mjs"
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" GPUMEM_WASM="$root/build/wasm/wasm/gpumem.js" node tests/bench/input.mjs
  banner "planner: tests/bench/planner.mjs"
  GPUMEM_PLANNER_BENCH="$root/build/native/tests/gpumem_planner_bench" \
    GPUMEM_PLANNER_BENCH_WASM="$root/build/wasm/tests/gpumem_planner_bench.js" \
    GPUMEM_WASM="$root/build/wasm/wasm/gpumem.js" node tests/bench/planner.mjs
  banner "page: tests/bench/page.mjs"
  GPUMEM_SITE_DIR="$root/build/wasm/site" node tests/bench/page.mjs
  [ "$band_ok" = 1 ] || { echo "make.sh bench: the error band's held-out coverage is outside 70-90 % (above)" >&2; return 1; }
}

cmd_test() {
  [ $# -eq 0 ] || { echo "make.sh test: unexpected argument '$1'" >&2; usage >&2; exit 2; }
  local total_start=$SECONDS
  run_stage bootstrap      ""                      bootstrap
  run_stage format         "bootstrap"             format_check
  run_stage native-build   "bootstrap"             native_build
  run_stage native-tests   "native-build"          native_tests
  run_stage wasm-build     "bootstrap"             wasm_build
  run_stage wasm-tests     "wasm-build"            wasm_tests
  run_stage cli-tests      "native-build"          cli_tests
  run_stage parity-tests   "native-build wasm-build" parity_tests
  run_stage package-tests  "native-build wasm-build" package_tests
  run_stage browser-tests  "wasm-build"            browser_tests
  run_stage sanitizers     "bootstrap"             sanitizer_tests
  run_stage fuzz           "bootstrap"             fuzz_check

  local i passed=0 failed=0
  banner "summary ($((SECONDS - total_start)) s)"
  for i in "${!stage_names[@]}"; do
    printf '  %-15s %5ss  %s\n' "${stage_names[$i]}" "${stage_seconds[$i]}" "${stage_results[$i]}"
    if [ "${stage_results[$i]}" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  done
  echo
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}

cmd_bands() {
  [ $# -eq 0 ] || { echo "make.sh bands: unexpected argument '$1'" >&2; usage >&2; exit 2; }
  bootstrap
  native_build
  GPUMEM_CLI="$root/build/native/core/cli/gpumem" node tests/bench/bands.mjs --write
}

cmd_site() {
  [ $# -eq 0 ] || { echo "make.sh site: unexpected argument '$1'" >&2; usage >&2; exit 2; }
  banner "bootstrap"
  bootstrap --site
  banner "build the WebAssembly site"
  build_site
  echo "make.sh: site built in build/wasm/site"
}

cmd_serve() {
  local port=8000
  while [ $# -gt 0 ]; do
    case $1 in
      --port) [ $# -ge 2 ] || { echo "make.sh serve: --port needs a value" >&2; exit 2; }
              port=$2; shift 2 ;;
      --port=*) port=${1#--port=}; shift ;;
      -h|--help) usage; exit 0 ;;
      *) echo "make.sh serve: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
  done
  case $port in ''|*[!0-9]*) echo "make.sh serve: --port must be a number, got '$port'" >&2; exit 2 ;; esac
  cmd_site
  banner "serve"
  echo "gpumem: http://127.0.0.1:$port/   (Ctrl-C stops the server)"
  exec node web/serve.mjs --root build/wasm/site --port "$port" --host 127.0.0.1
}

case ${1:-} in
  serve) shift; cmd_serve "$@" ;;
  test)  shift; cmd_test "$@" ;;
  site)  shift; cmd_site "$@" ;;
  bench) shift; cmd_bench "$@" ;;
  bands) shift; cmd_bands "$@" ;;
  fuzz)  shift; bootstrap; fuzz_run "${1:-600}" ;;
  -h|--help|help) usage ;;
  "") usage >&2; exit 2 ;;
  *) echo "make.sh: unknown command '$1'" >&2; usage >&2; exit 2 ;;
esac
