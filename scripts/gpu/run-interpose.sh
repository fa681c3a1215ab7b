#!/usr/bin/env bash
# Runs on the GPU machine, from the bundle scripts/build-interpose.sh made: existing
# binaries under `cusafe run` (nothing of theirs rebuilt by cusafe).
#
# Usage: run-interpose.sh suite|frameworks OUT_DIR
#   suite       the security suite's host-API bug programs and correct programs, built
#               here with nvcc (static cudart, nvcc's default; and -cudart shared), and
#               compute-sanitizer on the static builds; the driver-API program (three
#               ways of reaching libcuda); instrumented objects linked with static and
#               shared cudart and run linked with the runtime (no preload).
#   frameworks  PyTorch (caching allocator, and backend:cudaMallocAsync), CuPy and JAX
#               workloads, plain and under `cusafe run`: output equal, exit status,
#               report lines, wall time.
# Writes OUT_DIR/PART.tsv (one row per run) and OUT_DIR/logs/.
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
part=${1:?suite or frameworks}
out=${2:?output directory}
mkdir -p "$out/logs"
export CUSAFE_RT_LIB=$B/libcusafe_rt.so
cusafe=$B/cusafe
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
cat "$B/COMMIT" > "$out/commit.txt"

# The first report's kind in a log ("none" without one).
first_kind() { grep -m1 -oE 'ERROR: cusafe: [a-z-]+' "$1" | sed 's/ERROR: cusafe: //' || true; }
kind_or_none() { local k; k=$(first_kind "$1"); echo "${k:-none}"; }
reports() { grep -cE '^(==[0-9]+==)?ERROR: cusafe|^SUMMARY: cusafe|^cusafe: (error|warning|note)' "$1" || true; }
expected() { grep -m1 -oE 'cusafe-expect: [a-z-]+' "$1" | sed 's/cusafe-expect: //' || echo none; }

if [ "$part" = suite ]; then
  w=$B/work
  mkdir -p "$w"
  nvcc --version | tail -2 > "$out/nvcc.txt"
  src=$B/src/security-suite/programs
  build() {
    local name=$1 src=$2 w=$3
    nvcc -O2 -arch=sm_90 -o "$w/$name.static" "$src/$name.cu" > "$w/$name.build" 2>&1 &&
      nvcc -O2 -arch=sm_90 -cudart shared -o "$w/$name.shared" "$src/$name.cu" >> "$w/$name.build" 2>&1 ||
      echo "build failed: $name"
  }
  export -f build
  ls "$src" | sed 's/\.cu$//' | xargs -P 16 -I{} bash -c "build {} $src $w"
  inc=$(dirname "$(command -v nvcc)")/../include
  lib=$(dirname "$(command -v nvcc)")/../lib64
  gcc -O1 -I"$inc" -o "$w/driver_app" "$B/src/driver_app.c" -ldl
  stubs=$lib/stubs
  gcc -O1 -DLINKED -I"$inc" -o "$w/driver_app_linked" "$B/src/driver_app.c" -L"$stubs" -lcuda
  for o in "$B"/obj/*.o; do
    n=$(basename "$o" .o)
    g++ -o "$w/$n.istatic" "$o" -L"$B" -Wl,--no-as-needed -lcusafe_rt -Wl,--undefined=__cusafe_rt_present \
      "$lib/libcudart_static.a" -ldl -lpthread -lrt -Wl,-rpath,"$B" || echo "link failed: $n.istatic"
    g++ -o "$w/$n.ishared" "$o" -L"$B" -Wl,--no-as-needed -lcusafe_rt -Wl,--undefined=__cusafe_rt_present \
      -l:libcudart.so.12 -Wl,-rpath,"$B" || echo "link failed: $n.ishared"
  done
  tsv=$out/suite.tsv
  printf 'program\tbuild\texpected\tfound\texit\treport_lines\tcompute_sanitizer\tplain_exit\toutput_equal\n' > "$tsv"
  cp "$w"/*.build "$out/logs/" 2>/dev/null
  cd "$w"
  for f in "$src"/*.cu; do
    name=$(basename "$f" .cu)
    exp=$(expected "$f")
    for how in static shared; do
      [ -x "$name.$how" ] || { printf '%s\t%s\t%s\tbuild-failed\t-\t-\t-\t-\t-\n' "$name" "$how" "$exp" >> "$tsv"; continue; }
      log=$out/logs/$name.$how.log
      timeout 120 "./$name.$how" > "$log.plain" 2>&1
      prc=$?
      timeout 120 "$cusafe" run -- "./$name.$how" > "$log.out" 2> "$log"
      rc=$?
      same=no
      cmp -s "$log.plain" "$log.out" && same=yes
      cs=-
      if [ "$how" = static ]; then
        timeout 300 compute-sanitizer --error-exitcode 99 "./$name.$how" > "$out/logs/$name.cs.log" 2>&1
        csrc=$?
        case $csrc in 99) cs=reported ;; 0) cs=clean ;; *) cs="exit-$csrc" ;; esac
      fi
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$how" "$exp" "$(kind_or_none "$log")" "$rc" "$(reports "$log")" "$cs" "$prc" "$same" >> "$tsv"
    done
  done
  for how in procaddr dlsym linked; do
    exe=./driver_app
    [ "$how" = linked ] && exe=./driver_app_linked
    for s in ok range htod-overflow dtoh-overflow memset-overflow double-free interior-free async; do
      case $s in
        ok|range) exp=none ;; double-free) exp=double-free ;; interior-free) exp=invalid-free ;;
        async) exp=use-after-free ;; *) exp=api-out-of-bounds ;;
      esac
      log=$out/logs/driver.$how.$s.log
      timeout 60 "$cusafe" run -- "$exe" "$how" "$s" > "$log.out" 2> "$log"
      rc=$?
      printf 'driver_app %s\tdriver-%s\t%s\t%s\t%s\t%s\t-\t-\t-\n' "$s" "$how" "$exp" "$(kind_or_none "$log")" "$rc" "$(reports "$log")" >> "$tsv"
    done
  done
  for o in "$B"/obj/*.o; do
    n=$(basename "$o" .o)
    exp=$(cat "$B/obj/$n.expect")
    for how in istatic ishared; do
      log=$out/logs/$n.$how.log
      timeout 120 "./$n.$how" > /dev/null 2> "$log"
      rc=$?
      printf '%s\tinstrumented-%s\t%s\t%s\t%s\t%s\t-\t-\t-\n' "$n" "${how#i}" "$exp" "$(kind_or_none "$log")" "$rc" "$(reports "$log")" >> "$tsv"
    done
  done
fi

if [ "$part" = frameworks ]; then
  tsv=$out/frameworks.tsv
  printf 'workload\tplain_exit\tcusafe_exit\toutput_equal\treport_lines\tplain_s\tcusafe_s\tallocs_tagged\n' > "$tsv"
  python3 -c 'import torch; torch.zeros(1, device="cuda")' > /dev/null 2>&1
  for wl in torch torch-async cupy jax; do
    script=$B/frameworks/${wl%-async}_workload.py
    envs=()
    [ "$wl" = torch-async ] && envs=(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync)
    [ "$wl" = torch ] && envs=(CUBLAS_WORKSPACE_CONFIG=:4096:8)
    t0=$EPOCHREALTIME
    env "${envs[@]}" timeout 300 python3 "$script" > "$out/logs/$wl.plain.out" 2> "$out/logs/$wl.plain.err"
    prc=$?
    t1=$EPOCHREALTIME
    env "${envs[@]}" CUSAFE_OPTIONS=verbosity=1 timeout 300 "$cusafe" run -- python3 "$script" \
      > "$out/logs/$wl.cusafe.out" 2> "$out/logs/$wl.cusafe.err"
    crc=$?
    t2=$EPOCHREALTIME
    same=no
    cmp -s "$out/logs/$wl.plain.out" "$out/logs/$wl.cusafe.out" && same=yes
    allocs=$(grep -oE 'allocs: [0-9]+' "$out/logs/$wl.cusafe.err" | tail -1 | sed 's/allocs: //')
    printf '%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\n' "$wl" "$prc" "$crc" "$same" "$(reports "$out/logs/$wl.cusafe.err")" \
      "$(python3 -c "print($t1 - $t0)")" "$(python3 -c "print($t2 - $t1)")" "${allocs:-0}" >> "$tsv"
  done
fi
echo "done: $part"
