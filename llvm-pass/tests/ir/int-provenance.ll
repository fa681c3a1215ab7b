; Pointers carved out of an object through integers ((p + 15) & ~15, as dynamic shared
; pools are split into aligned buffers) keep the object as their root: the store is
; checked against the dynamic shared window, and a constant offset from a carved
; pointer proves nothing (the alignment moved it). An integer mixed from two pointers
; has no single provenance and is checked as an ordinary pointer.
; RUN: %opt %s -o %t.ll
; RUN: %calls %opt %s -o %t.calls.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.calls.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@pool = external addrspace(3) global [0 x i8], align 16
@arr = addrspace(3) global [64 x i8] undef, align 16

; Sites (format::report::SITE_*): state 0, the site's flags, its text.
; CHECK: @__cusafe_site.0 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 33,
; CHECK: @__cusafe_site.1 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 17,
; CHECK-LABEL: define void @carved(
; CHECK: call i32 asm "mov.u32 $0, %dynamic_smem_size;"
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 16, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
define void @carved(i64 %n, i64 %i) {
  %a = getelementptr inbounds i32, ptr addrspacecast (ptr addrspace(3) @pool to ptr), i64 %n
  %ai = ptrtoint ptr %a to i64
  %up = add i64 %ai, 15
  %al = and i64 %up, -16
  %f = inttoptr i64 %al to ptr
  %p = getelementptr inbounds <4 x float>, ptr %f, i64 %i
  store <4 x float> zeroinitializer, ptr %p, align 16
  ret void
}

; A constant offset through the integers is not a proof: 48 + up to 15 + 16 > 64.
; CHECK-LABEL: define void @carved_const(
; CHECK: call i32 @__cusafe_fail({{.*}}, i64 64, i32 16, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
define void @carved_const() {
  %b = getelementptr inbounds i8, ptr addrspacecast (ptr addrspace(3) @arr to ptr), i64 41
  %bi = ptrtoint ptr %b to i64
  %up = add i64 %bi, 15
  %al = and i64 %up, -16
  %f = inttoptr i64 %al to ptr
  store <4 x float> zeroinitializer, ptr %f, align 16
  ret void
}

; Two pointers mixed: no single provenance, no object check (heap rule on the result).
; CHECK-LABEL: define void @mixed(
; CHECK-NOT: dynamic_smem_size
; CHECK: ret void
define void @mixed(ptr %q, ptr %r) {
  %a = ptrtoint ptr addrspacecast (ptr addrspace(3) @pool to ptr) to i64
  %qi = ptrtoint ptr %q to i64
  %ri = ptrtoint ptr %r to i64
  %d = sub i64 %qi, %ri
  %s = add i64 %a, %d
  %f = inttoptr i64 %s to ptr
  store i32 0, ptr %f, align 4
  ret void
}
!nvvm.annotations = !{!0, !1, !2}
!0 = !{ptr @carved, !"kernel", i32 1}
!1 = !{ptr @carved_const, !"kernel", i32 1}
!2 = !{ptr @mixed, !"kernel", i32 1}
