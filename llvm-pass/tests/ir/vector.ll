; Vector accesses are checked with their full width, so one crossing the end is caught.
; RUN: %opt_noelim %s | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %a, i64 %i) {
  %p = getelementptr inbounds <4 x float>, ptr %a, i64 %i
  %v = load <4 x float>, ptr %p, align 16
  store <2 x double> zeroinitializer, ptr %p, align 16
  ret void
}
; CHECK: add i64 {{%.*}}, 16
; CHECK: call i32 @__cusafe_slow({{.*}}, i32 16, i32 0,
; CHECK: load <4 x float>
; CHECK: call i32 @__cusafe_slow({{.*}}, i32 16, i32 1,
; CHECK: store <2 x double>
