; memcpy/memmove check both ranges, memset the destination; run-time lengths are
; widened to i64 and a zero length never reports.
; RUN: %calls %opt_noelim %s | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %d, ptr %s, i32 %n) {
  call void @llvm.memcpy.p0.p0.i32(ptr %d, ptr %s, i32 %n, i1 false)
  call void @llvm.memset.p0.i64(ptr %d, i8 0, i64 64, i1 false)
  call void @llvm.memmove.p0.p0.i64(ptr %d, ptr %s, i64 8, i1 false)
  ret void
}
declare void @llvm.memcpy.p0.p0.i32(ptr, ptr, i32, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)
; Sites (format::report::SITE_*): state 0, the site's flags, its text.
; CHECK: @__cusafe_site.0 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 5,
; CHECK: @__cusafe_site.1 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 4,
; CHECK: @__cusafe_site.2 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 5,
; CHECK: @__cusafe_site.3 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 5,
; CHECK: @__cusafe_site.4 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 4,
; CHECK: [[LEN:%.*]] = zext i32 %n to i64
; CHECK: icmp eq i64 [[LEN]], 0
; CHECK: call i32 @__cusafe_fail({{.*}}, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; CHECK: call i32 @__cusafe_fail({{.*}}, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; CHECK: call void @llvm.memcpy
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 64, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.2 to ptr))
; CHECK: call void @llvm.memset
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 8, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.3 to ptr))
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 8, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.4 to ptr))
; CHECK: call void @llvm.memmove
