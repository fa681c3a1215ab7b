# Sourced by the scripts: where things are. No side effects beyond variables.
CUSAFE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CUSAFE_ROOT
export CUSAFE_TC="$CUSAFE_ROOT/.toolchain"
export CUSAFE_CUDA="$CUSAFE_TC/cuda"
export CUSAFE_LLVM_BIN=/usr/lib/llvm-19/bin
export CUSAFE_BIN="$CUSAFE_ROOT/target/release"
# nvdisasm, which scripts/sass.sh installs from PyPI on first use.
export CUSAFE_NVDISASM="$CUSAFE_TC/nvdisasm/nvidia/cu13/bin/nvdisasm"
export PYTHONPATH="$CUSAFE_TC/py${PYTHONPATH:+:$PYTHONPATH}"
# Scripted builds run the LLVM verifier after the pass.
export CUSAFE_PASS_VERIFY=1
