; The stack marker (stack.rs): a module whose functions recurse (here through two
; functions) or call through a pointer gets the weak marker __cusafe_dynamic_stack,
; by which the runtime raises the stack limit that ptxas cannot size; a module whose
; call graph is acyclic and direct gets none.
; RUN: %opt %s -o %t.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: %opt %S/dynamic-stack-acyclic.ll.in -o %t.acyclic.ll
; RUN: %not grep __cusafe_dynamic_stack %t.acyclic.ll
; RUN: %opt %S/dynamic-stack-indirect.ll.in -o %t.indirect.ll
; RUN: FileCheck %s < %t.indirect.ll

; CHECK: @__cusafe_dynamic_stack = weak_odr addrspace(1) constant i8 1
; PTX: .weak .global .align 1 .u8 __cusafe_dynamic_stack = 1;
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define i32 @even(i32 %n) noinline {
  %z = icmp eq i32 %n, 0
  br i1 %z, label %yes, label %down
yes:
  ret i32 1
down:
  %m = sub i32 %n, 1
  %r = call i32 @odd(i32 %m)
  ret i32 %r
}

define i32 @odd(i32 %n) noinline {
  %z = icmp eq i32 %n, 0
  br i1 %z, label %no, label %down
no:
  ret i32 0
down:
  %m = sub i32 %n, 1
  %r = call i32 @even(i32 %m)
  ret i32 %r
}

define void @parity(ptr addrspace(1) %out, i32 %n) {
  %r = call i32 @even(i32 %n)
  store i32 %r, ptr addrspace(1) %out
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @parity, !"kernel", i32 1}
