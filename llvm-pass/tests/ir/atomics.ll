; atomicrmw and cmpxchg are checked as atomic writes (flags 3 = write|atomic).
; RUN: %calls %opt_noelim %s | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %a, ptr addrspace(1) %g) {
  %old = atomicrmw add ptr %a, i32 1 monotonic, align 4
  %pair = cmpxchg ptr addrspace(1) %g, i64 0, i64 1 monotonic monotonic, align 8
  %x = extractvalue { i64, i1 } %pair, 0
  %y = add i32 %old, 1
  ret void
}
; Sites (format::report::SITE_*): state 0, the site's flags, its text.
; CHECK: @__cusafe_site.0 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 3,
; CHECK: @__cusafe_site.1 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 3,
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; CHECK: atomicrmw add ptr %cusafe.strip,
; CHECK: phi i32
; CHECK: ptrtoint ptr addrspace(1) %g to i64
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 8, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; CHECK: cmpxchg ptr addrspace(1) %cusafe.strip
; CHECK: phi { i64, i1 } [ %pair, {{.*}} ], [ zeroinitializer,
