# lit configuration for the pass's IR tests (run by scripts/test.sh).
import os
import lit.formats

config.name = "cusafe-pass"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".ll", ".cu"]
config.test_source_root = os.path.dirname(__file__)
llvm_bin = os.environ.get("CUSAFE_LLVM_BIN", "/usr/lib/llvm-19/bin")
plugin = os.environ["CUSAFE_PASS_PLUGIN"]
# %opt_noelim: check elimination off (tests of one check's shape); listed first so
# that %opt does not match its prefix.
config.substitutions.append(("%opt_noelim", f"env CUSAFE_PASS_OPT=0 {llvm_bin}/opt -load-pass-plugin={plugin} -passes=cusafe -S"))
# %calls before an opt command: recover-mode cold paths (`--cusafe-recover`), kept as
# calls (not inlined) so that tests
# can read their arguments.
config.substitutions.append(("%calls", "env CUSAFE_PASS_INLINE_COLD=0 CUSAFE_PASS_RECOVER=1"))
config.substitutions.append(("%opt", f"{llvm_bin}/opt -load-pass-plugin={plugin} -passes=cusafe -S"))
config.substitutions.append(("%llc", f"{llvm_bin}/llc -march=nvptx64 -mcpu=sm_90 -mattr=+ptx85"))
config.substitutions.append(("%ptxas", os.environ.get("CUSAFE_PTXAS", "ptxas") + " -arch=sm_90"))
config.substitutions.append(("FileCheck", f"{llvm_bin}/FileCheck"))
# %not CMD: succeeds when CMD fails (LLVM's `not`).
config.substitutions.append(("%not", f"{llvm_bin}/not"))
config.substitutions.append(("%verify", f"{llvm_bin}/opt -passes=verify -disable-output"))
config.substitutions.append(("%llvm_as", f"{llvm_bin}/llvm-as"))
config.substitutions.append(("%llvm_link", f"{llvm_bin}/llvm-link"))
# %fold: inlining and constant folding, which evaluate an instrumented kernel's checks
# for a call on constants (verdicts.ll).
config.substitutions.append(("%fold", f"{llvm_bin}/opt -S -passes=inline,instcombine,simplifycfg,instcombine"))
# %llvm_o3: LLVM's full -O3 pipeline without the pass (what may run after it).
config.substitutions.append(("%llvm_o3", f"{llvm_bin}/opt -O3 -S"))
config.environment["CUSAFE_PASS_STATS"] = "1"
config.environment["CUSAFE_PASS_VERIFY"] = "1"
# Whole-compiler tests (.cu) drive the real cusafe-clang++ next to the plugin.
config.substitutions.append(("%cusafe_clangxx", os.path.join(os.path.dirname(plugin), "cusafe-clang++")))
