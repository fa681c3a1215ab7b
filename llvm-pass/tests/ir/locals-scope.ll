; Use after scope: an escaping local array's header is marked out of scope (bit 63 set
; over its size) where its lifetime ends and marked live again where it restarts, so a
; pointer kept past the end of its block fails device-rt's pseudo-pointer check
; (stack-use-after-scope). The lifetime markers themselves go: they must name an
; alloca, and the re-laid-out block is not one.
; RUN: %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @fill(ptr %p, i64 %n) {
  %q = getelementptr inbounds float, ptr %p, i64 %n
  store float 1.0, ptr %q, align 4
  ret void
}

define void @k(i1 %c, i64 %i, ptr %out) {
entry:
  %taps = alloca [8 x float], align 4
  br i1 %c, label %scope, label %join
scope:
  call void @llvm.lifetime.start.p0(i64 32, ptr %taps)
  call void @fill(ptr %taps, i64 3)
  call void @llvm.lifetime.end.p0(i64 32, ptr %taps)
  br label %join
join:
  %p = phi ptr [ %taps, %scope ], [ %out, %entry ]
  %g = getelementptr inbounds float, ptr %p, i64 %i
  %v = load float, ptr %g, align 4
  store float %v, ptr %out, align 4
  ret void
}
declare void @llvm.lifetime.start.p0(i64, ptr)
declare void @llvm.lifetime.end.p0(i64, ptr)
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

; CHECK-LABEL: define void @k(
; CHECK: %cusafe.local = alloca [49 x i8], align 64
; Prologue: the header holds the size.
; CHECK: store i64 32, ptr %cusafe.local, align 8
; CHECK-LABEL: scope:
; CHECK-NEXT: store i64 32, ptr %cusafe.local, align 8
; CHECK-NEXT: call void @fill(ptr %cusafe.tagged
; 32 | 1 << 63:
; CHECK-NEXT: store i64 -9223372036854775776, ptr %cusafe.local, align 8
; CHECK-NEXT: br label %join
; The load after the scope goes through the pseudo-pointer's out-of-line check.
; CHECK-LABEL: join:
; CHECK: call i32 @__cusafe_slow(i64
; CHECK-NOT: call void @llvm.lifetime
