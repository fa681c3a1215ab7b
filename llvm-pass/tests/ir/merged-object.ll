; Phis and selects of pointers that all point into one local array (an unrolled
; insertion loop writing bd[p] for the p it stopped at, a loop walking a pointer)
; do not make the array escape: it keeps its layout, and accesses through the merged
; pointer get object checks against the array's size, not the heap path (which would
; have sent every access out of line through a pseudo-pointer). A phi of two different
; arrays has no single object: those arrays escape and are re-laid-out.
; RUN: %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: %calls %opt %s | FileCheck %s
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @same(i64 %i, i1 %c, ptr %out) {
entry:
  %arr = alloca [10 x float], align 4
  %a0 = getelementptr inbounds [10 x float], ptr %arr, i64 0, i64 %i
  %a1 = getelementptr inbounds [10 x float], ptr %arr, i64 0, i64 3
  br i1 %c, label %left, label %join
left:
  br label %join
join:
  %p = phi ptr [ %a0, %entry ], [ %a1, %left ]
  %q = select i1 %c, ptr %p, ptr %arr
  store float 1.0, ptr %q, align 4
  br label %walk
walk:
  %w = phi ptr [ %arr, %join ], [ %w.next, %walk ]
  %v = load float, ptr %w, align 4
  store float %v, ptr %out, align 4
  %w.next = getelementptr inbounds float, ptr %w, i64 1
  %done = icmp eq ptr %w.next, %a0
  br i1 %done, label %exit, label %walk
exit:
  ret void
}

define void @two(i64 %i, i1 %c) {
  %x = alloca [4 x i32], align 4
  %y = alloca [4 x i32], align 4
  %px = getelementptr inbounds [4 x i32], ptr %x, i64 0, i64 %i
  %py = getelementptr inbounds [4 x i32], ptr %y, i64 0, i64 %i
  %p = select i1 %c, ptr %px, ptr %py
  store i32 1, ptr %p, align 4
  ret void
}

; CHECK-LABEL: define void @same(
; CHECK-NOT: cusafe.local
; CHECK: %arr = alloca [10 x float], align 4
; The store through the select: against %arr, 40 bytes, an object site.
; CHECK: ptrtoint ptr %arr to i64
; CHECK: call i32 @__cusafe_fail({{.*}}, i64 40, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; CHECK: store float 1.000000e+00, ptr %q
; The load through the loop phi: against %arr too, for the whole loop (its trip count
; is known) in the preheader.
; CHECK: call i32 @__cusafe_fail({{.*}}, i64 40, i32 {{%.*}}, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.{{[0-9]+}} to ptr))
; CHECK-LABEL: walk:
; CHECK-NOT: call
; CHECK: load float, ptr %w
; CHECK-LABEL: define void @two(
; CHECK: %cusafe.local
; CHECK: %cusafe.local
