; Bad input to the pass (issue 19, part 5): a garbage value of any CUSAFE_PASS_*
; switch stops the compile with one line naming the variable and its accepted values
; (exit 64; before, anything but 0 counted as on, so CUSAFE_PASS_CHECKS=off built the
; checks), and corrupt IR is opt's own error, before the pass runs. Never a crash:
; LLVM's `not` fails when the command dies of a signal.
; RUN: %not env CUSAFE_PASS_CHECKS=off %opt %s -o /dev/null 2>%t.checks
; RUN: FileCheck %s --check-prefix=CHECKS --implicit-check-not='Stack dump' < %t.checks
; RUN: %not env CUSAFE_PASS_OPT=no %opt %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPT
; RUN: %not env CUSAFE_PASS_RECOVER=2 %opt %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=RECOVER
; RUN: %not env CUSAFE_PASS_STATS=yes %opt %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
; RUN: %not env CUSAFE_PASS_LAUNCH_BOUNDS=x %opt %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOUNDS
; RUN: %not env CUSAFE_PASS_VERIFY=always %opt %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=VERIFY
; RUN: %not env CUSAFE_PASS_INLINE_COLD=-1 %opt %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=INLINE
; A variable the pass does not read (a switch that is gone, or a misspelling).
; RUN: %not env CUSAFE_PASS_BATCH_MOVE=1 %opt %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
; Accepted spellings, and empty = unset.
; RUN: env CUSAFE_PASS_CHECKS=true CUSAFE_PASS_OPT=false CUSAFE_PASS_RECOVER=skip CUSAFE_PASS_STATS= %opt %s -o /dev/null
; Corrupt input: text that is not IR, truncated bitcode, a bitcode magic and garbage.
; RUN: printf 'this is not IR\n' > %t.junk.ll
; RUN: %not %opt %t.junk.ll -o /dev/null 2>&1 | FileCheck %s --check-prefix=JUNK --implicit-check-not='Stack dump'
; RUN: %llvm_as %s -o %t.bc
; RUN: head -c 200 %t.bc > %t.trunc.bc
; RUN: %not %opt %t.trunc.bc -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRUNC --implicit-check-not='Stack dump'
; RUN: printf 'BC\300\336\065\024\000\000\005\000\000\000\142\014\060\044' > %t.magic.bc
; RUN: %not %opt %t.magic.bc -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRUNC --implicit-check-not='Stack dump'
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %a, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  store float %v, ptr %p, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

; CHECKS: cusafe: error: CUSAFE_PASS_CHECKS=off: accepted values are 0 and 1 (also false, true; unset or empty: 1); 0 leaves the memory checks out (coverage only)
; OPT: cusafe: error: CUSAFE_PASS_OPT=no: accepted values are 0 and 1 (also false, true; unset or empty: 1); 0 turns check elimination off
; RECOVER: cusafe: error: CUSAFE_PASS_RECOVER=2: accepted values are 0 and 1 (also false, true, skip; unset or empty: 0)
; STATS: cusafe: error: CUSAFE_PASS_STATS=yes: accepted values are 0 and 1
; BOUNDS: cusafe: error: CUSAFE_PASS_LAUNCH_BOUNDS=x: accepted values are 0 and 1
; VERIFY: cusafe: error: CUSAFE_PASS_VERIFY=always: accepted values are 0 and 1
; INLINE: cusafe: error: CUSAFE_PASS_INLINE_COLD=-1: accepted values are 0 and 1
; UNKNOWN: cusafe: error: CUSAFE_PASS_BATCH_MOVE is not a variable the pass reads (it reads CUSAFE_PASS_STATS, {{.*}}); unset it
; JUNK: error: expected top-level entity
; TRUNC: error:
