; Loop-clean kernels (CUSAFE_PASS_LOOP_CLEAN=FILE): the pass appends each kernel that
; has a loop and whose loops run no check after instrumenting (its loop's access is a
; loop range, checked in the preheader), one mangled name a line; cusafe-clang++ caps
; the registers of such kernels (docs/pass.md, "Loop-clean kernels"). Must not be
; listed: a kernel with a check in its loop (a loaded index), a kernel without a loop,
; a device function, a kernel that calls a function with a body; nothing in a recover
; build (its cold paths rejoin the loop).
; RUN: rm -f %t.clean %t.recover
; RUN: env CUSAFE_PASS_LOOP_CLEAN=%t.clean %opt %s -o %t.ll 2>/dev/null
; RUN: %verify %t.ll
; RUN: FileCheck %s --check-prefix=LIST < %t.clean
; A second compile of the same module (another GPU architecture) appends.
; RUN: env CUSAFE_PASS_LOOP_CLEAN=%t.clean %opt %s -o /dev/null 2>/dev/null
; RUN: FileCheck %s --check-prefix=TWICE < %t.clean
; RUN: env CUSAFE_PASS_LOOP_CLEAN=%t.recover CUSAFE_PASS_RECOVER=1 %opt %s -o /dev/null 2>/dev/null
; RUN: %not test -s %t.recover
; A file that cannot be written is said, and the compile goes on.
; RUN: env CUSAFE_PASS_LOOP_CLEAN=%t.missing/dir/list %opt %s -o /dev/null 2>%t.err
; RUN: FileCheck %s --check-prefix=WARN < %t.err
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; LIST: {{^}}clean{{$}}
; LIST-NOT: checked
; LIST-NOT: flat
; LIST-NOT: helper
; LIST-NOT: calls_helper
; TWICE: {{^}}clean{{$}}
; TWICE-NEXT: {{^}}clean{{$}}
; WARN: cusafe: warning: cannot append to CUSAFE_PASS_LOOP_CLEAN={{.*}}missing/dir/list: {{.*}}; no kernel of this compile gets a register cap

; n trips over a[0..n): one loop range in the preheader, nothing in the loop.
define void @clean(ptr %a, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; a[idx[i]]: the index is loaded in the loop, so its check stays there.
define void @checked(ptr %a, ptr %idx, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %q = getelementptr inbounds i32, ptr %idx, i64 %i
  %k = load i32, ptr %q, align 4
  %k64 = sext i32 %k to i64
  %p = getelementptr inbounds float, ptr %a, i64 %k64
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

; No loop: the check runs once anyway.
define void @flat(ptr %a, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  ret void
}

; A device function with a clean loop (not a kernel) and a kernel calling it.
define void @helper(ptr %a, i64 %n) noinline {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  store float 0.0, ptr %p, align 4
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}

define void @calls_helper(ptr %a, i64 %n) {
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %i1 = add nuw nsw i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  call void @helper(ptr %a, i64 %n)
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3}
!0 = !{ptr @clean, !"kernel", i32 1}
!1 = !{ptr @checked, !"kernel", i32 1}
!2 = !{ptr @flat, !"kernel", i32 1}
!3 = !{ptr @calls_helper, !"kernel", i32 1}
