; extern __shared__ arrays (size 0 in IR) are bounded by the launch's dynamic shared
; memory size, read from %dynamic_smem_size.
; RUN: %opt %s -o %t.ll
; RUN: %calls %opt %s -o %t.calls.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.calls.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@smem = external addrspace(3) global [0 x float], align 4

define void @k(i64 %i) {
  %p = getelementptr inbounds float, ptr addrspacecast (ptr addrspace(3) @smem to ptr), i64 %i
  store float 0.0, ptr %p, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
; Sites (format::report::SITE_*): state 0, the site's flags, its text.
; CHECK: @__cusafe_site.0 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 33,
; CHECK: [[SZ:%.*]] = call i32 asm "mov.u32 $0, %dynamic_smem_size;", "=r"()
; CHECK: [[SZ64:%.*]] = zext i32 [[SZ]] to i64
; CHECK: [[BOUND:%cusafe.bound[0-9]*]] = select i1 {{%.*}}, i64 {{%.*}}, i64 0
; CHECK: icmp ult i64 {{%.*}}, [[BOUND]]
; CHECK: call i32 @__cusafe_fail({{.*}}, i64 [[SZ64]], i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; PTX: %dynamic_smem_size
