; Accesses to objects known at compile time (allocas, globals, shared/local/constant
; memory) are not heap-checked; their tags would be foreign anyway.
; RUN: %opt %s 2>%t.stats | FileCheck %s
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@shared = internal addrspace(3) global [32 x float] undef
@dev = addrspace(1) global [8 x i32] zeroinitializer

define void @k(i64 %i) {
  %arr = alloca [4 x i32], align 4
  %pa = getelementptr inbounds [4 x i32], ptr %arr, i64 0, i64 %i
  store i32 1, ptr %pa, align 4
  %ps = getelementptr inbounds [32 x float], ptr addrspace(3) @shared, i64 0, i64 %i
  store float 1.0, ptr addrspace(3) %ps, align 4
  %pg = getelementptr inbounds [32 x float], ptr addrspacecast (ptr addrspace(3) @shared to ptr), i64 0, i64 %i
  %v = load float, ptr %pg, align 4
  %pd = getelementptr inbounds [8 x i32], ptr addrspace(1) @dev, i64 0, i64 %i
  %w = load i32, ptr addrspace(1) %pd, align 4
  ret void
}
; CHECK-LABEL: define void @k(
; CHECK-NOT: call void @__cusafe_report
; CHECK: ret void
; STATS: device function k:
; STATS-SAME: 0 checks
