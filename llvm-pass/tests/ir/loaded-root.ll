; A pointer loaded by a checked load and then used as the root of another checked
; access: in recover mode the first load's value flows through a phi, and the second
; check must read the phi (the verifier rejects the original value there).
; RUN: env CUSAFE_PASS_RECOVER=1 %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %spans, i64 %i) {
  %slot = getelementptr inbounds ptr, ptr %spans, i64 %i
  %data = load ptr, ptr %slot, align 8
  %p = getelementptr inbounds float, ptr %data, i64 3
  store float 1.0, ptr %p, align 4
  ret void
}
; CHECK: %data = load ptr, ptr
; CHECK: [[PHI:%cusafe.val.*]] = phi ptr [ %data, %{{.*}} ], [ null, %{{.*}} ]
; The root half may come before %p (it is built as early as the root allows).
; CHECK-DAG: %p = getelementptr inbounds float, ptr [[PHI]], i64 3
; CHECK-DAG: ptrtoint ptr [[PHI]] to i64
; CHECK: store float 1.000000e+00, ptr
