; Vector accesses are checked with their full width, so one crossing the end is caught.
; RUN: %calls %opt_noelim %s | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %a, i64 %i) {
  %p = getelementptr inbounds <4 x float>, ptr %a, i64 %i
  %v = load <4 x float>, ptr %p, align 16
  store <2 x double> zeroinitializer, ptr %p, align 16
  ret void
}
; Sites (format::report::SITE_*): state 0, the site's flags, its text.
; CHECK: @__cusafe_site.0 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 0,
; CHECK: @__cusafe_site.1 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 1,
; A 16-byte access: offsets below limit - 15.
; CHECK: sub i64 {{%.*}}, 15
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 16, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; CHECK: load <4 x float>
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 16, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; CHECK: store <2 x double>
