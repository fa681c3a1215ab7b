; A __shared__ array whose generic pointer escapes into a function with a body gets a
; shared pseudo-pointer there (pseudo bit 47, space bit 53, the array's index in bits
; 48..52); accesses in the function that names the array keep their static check. The
; module defines the bounds functions device-rt calls, one case per tagged array.
; RUN: %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [64 x float] undef, align 4
@other = internal addrspace(3) global [8 x float] undef, align 4

define void @fill(ptr %p, i64 %i) {
  %q = getelementptr inbounds float, ptr %p, i64 %i
  store float 1.0, ptr %q, align 4
  ret void
}

define void @k(i64 %i) {
  %g = getelementptr inbounds [64 x float], ptr addrspacecast (ptr addrspace(3) @tile to ptr), i64 0, i64 16
  call void @fill(ptr %g, i64 %i)
  %o = getelementptr inbounds [8 x float], ptr addrspacecast (ptr addrspace(3) @other to ptr), i64 0, i64 %i
  store float 2.0, ptr %o, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

; CHECK-LABEL: define void @k(
; 1 << 47 | 1 << 53 | index 0:
; CHECK: [[G:%.*]] = ptrtoint ptr %g to i64
; CHECK: [[T:%.*]] = or i64 [[G]], 9147936743096320
; CHECK: %cusafe.shared = inttoptr i64 [[T]] to ptr
; CHECK: call void @fill(ptr %cusafe.shared, i64 %i)
; The array that does not escape keeps its static check (no tag).
; CHECK-NOT: cusafe.shared
; CHECK: store float 2.0
; CHECK-LABEL: define internal i64 @__cusafe_shared_start(i32 %0)
; CHECK: switch i32 %0, label %other [
; CHECK-NEXT: i32 0, label %object
; CHECK-NEXT: ]
; CHECK: ret i64 ptrtoint (ptr addrspacecast (ptr addrspace(3) @tile to ptr) to i64)
; CHECK-LABEL: define internal i64 @__cusafe_shared_size(i32 %0)
; CHECK: ret i64 256
