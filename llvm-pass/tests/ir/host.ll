; Host modules pass through untouched.
; RUN: %opt %s | FileCheck %s
target triple = "x86_64-pc-linux-gnu"

define void @h(ptr %a) {
  store i32 0, ptr %a, align 4
  ret void
}
; CHECK-NOT: __cusafe
