; Every load and store through a kernel pointer gets the inline check, with the
; report call in a cold (unlikely) block and the access skipped in recover mode.
; RUN: %opt_noelim %s -o %t.ll 2>%t.stats
; RUN: %calls %opt_noelim %s -o %t.calls.ll
; RUN: FileCheck %s < %t.calls.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %verify %t.ll
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr %a, i64 %i) {
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %w = fadd float %v, 1.0
  store float %w, ptr %p, align 4
  ret void
}
define void @unaligned(ptr %a, i64 %i) {
  %p = getelementptr inbounds i8, ptr %a, i64 %i
  %v = load float, ptr %p, align 1
  store float %v, ptr %a, align 4
  ret void
}
!nvvm.annotations = !{!0, !1}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{ptr @unaligned, !"kernel", i32 1}

; Sites: the load's (flags 0) and the store's (flag 1: a write).
; CHECK: @__cusafe_site.0 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 0,
; CHECK: @__cusafe_site.1 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 1,
; CHECK-LABEL: define void @k(
; The root is stripped of tag bits once, at its definition; accesses use it.
; CHECK: %cusafe.strip = getelementptr i8, ptr %a, i64
; The root (%a) names the block; the tag picks the class.
; CHECK: [[RI:%.*]] = ptrtoint ptr %a to i64
; The whole high part is the class: a root with bits 47..63 is never in range.
; CHECK: [[T:%.*]] = lshr i64 [[RI]], 41
; CHECK-NOT: and i64 [[T]], 63
; CHECK: [[TM1:%.*]] = sub i64 [[T]], 1
; CHECK: [[IN:%.*]] = icmp ult i64 [[TM1]], 35
; CHECK: [[SIZE:%.*]] = load i64, ptr addrspace(1)
; Poisoned or pseudo-pointer roots (bits 47..63): start = the root, limit = 0, so every
; access goes out of line; foreign roots: the foreign window, start 64 KiB (below is
; the null page) and limit 2^47 - 64 KiB (every real address after the null page).
; CHECK: [[TAGGED:%.*]] = icmp uge i64 [[RI]], 140737488355328
; CHECK: [[OS:%.*]] = select i1 [[TAGGED]], i64 [[RI]], i64 65536
; CHECK: [[OL:%.*]] = select i1 [[TAGGED]], i64 0, i64 140737488289792
; CHECK: [[START:%.*]] = select i1 [[IN]], i64 {{%.*}}, i64 [[OS]]
; A 4-byte access aligned to 4 is in the window when its last byte is: the start less
; 3 is built once, right after the start.
; CHECK-NEXT: [[SL:%.*]] = sub i64 [[START]], 3
; CHECK-NEXT: [[LIMIT:%.*]] = select i1 [[IN]], i64 [[SIZE]], i64 [[OL]]
; The address half, after the root half: one subtraction, one compare against the
; limit itself.
; CHECK: [[AI:%.*]] = ptrtoint ptr %p to i64
; CHECK-NEXT: [[OFF:%.*]] = sub i64 [[AI]], [[START]]
; CHECK-NEXT: [[LAST:%.*]] = sub i64 [[AI]], [[SL]]
; CHECK: icmp ult i64 [[LAST]], [[LIMIT]]
; CHECK: br i1 {{%.*}}, label %[[REPORT:.*]], label %[[ACCESS:.*]], !prof [[COLD:![0-9]+]]
; The cold block passes what the check saw; device-rt works out the kind. The address
; is rebuilt there from the window's start and the offset (the fast path keeps neither
; the address nor anything else alive for the report alone).
; CHECK: [[REPORT]]:
; CHECK-NEXT: [[ADDR:%.*]] = add i64 [[START]], [[OFF]]
; CHECK-NEXT: call i32 @__cusafe_fail(i64 [[ADDR]], i64 [[START]], i64 [[LIMIT]], i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; CHECK: [[ACCESS]]:
; CHECK-NEXT: [[PS:%.*]] = getelementptr inbounds float, ptr %cusafe.strip, i64 %i
; CHECK-NEXT: [[V:%.*]] = load float, ptr [[PS]]
; CHECK: phi float [ [[V]], %[[ACCESS]] ], [ 0.000000e+00, %[[REPORT]] ]
; The store: with elimination off (this test), its own root half and check.
; CHECK: load i64
; CHECK: call i32 @__cusafe_fail(i64 {{%.*}}, i64 {{%.*}}, i64 {{%.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; CHECK: store float
; An access the IR does not say is aligned (align 1) compares its first byte against
; limit - 3 (0 when the window is smaller, as a freed block's zero header or a
; poisoned root's zero limit), built once, right after the limit.
; CHECK-LABEL: define void @unaligned(
; CHECK: [[ULIMIT:%.*]] = select i1 {{%.*}}, i64 %cusafe.size, i64 {{%.*}}
; CHECK-NEXT: [[GE:%.*]] = icmp uge i64 [[ULIMIT]], 3
; CHECK-NEXT: [[REST:%.*]] = sub i64 [[ULIMIT]], 3
; CHECK-NEXT: [[BOUND:%.*]] = select i1 [[GE]], i64 [[REST]], i64 0
; CHECK: [[UOFF:%.*]] = sub i64 {{%.*}}, {{%.*}}
; CHECK: icmp ult i64 [[UOFF]], [[BOUND]]
; The runtime is linked in and internal.
; CHECK: define internal noundef i32 @__cusafe_fail(
; CHECK: [[COLD]] = !{!"branch_weights", i32 1, i32 1048575}
; STATS: cusafe: kernel k: 2 checks (1 loads, 1 stores, 0 atomics, 0 ranges; 0 against known objects), 0 arithmetic rules
