; Index groups (launch.rs add_index_groups, elim/index.rs): a kernel whose block
; outside loops loads through two or more windowed parameters at one index and element
; size
; takes two more hidden i64 parameters per group, `lo` and `span` (the runtime works
; them out at launch from the members' windows), and marker globals whose sizes name
; the group's element size and members (parameter index + 1). The block's loads then
; take one compare of the index, `x - lo <u span`; its cold path compares each member
; against its own window, in program order, and reports the one that fails.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: env CUSAFE_PASS_INDEX_GROUPS=0 %opt %s | FileCheck %s --check-prefix=OFF
; RUN: %calls %opt %s | FileCheck %s --check-prefix=OFF
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Ends the thread.
define void @opaque() noinline {
  call void asm sideeffect "exit;", ""()
  ret void
}

; The markers: @three's group has 4-byte elements and members 0, 1 and 3 (%n has no
; window); @narrow's has members 0 and 1.
; CHECK-DAG: @__cusafe_index0_three = addrspace(1) constant [4 x i8] zeroinitializer
; CHECK-DAG: @__cusafe_index0m0_three = addrspace(1) constant [1 x i8] zeroinitializer
; CHECK-DAG: @__cusafe_index0m1_three = addrspace(1) constant [2 x i8] zeroinitializer
; CHECK-DAG: @__cusafe_index0m2_three = addrspace(1) constant [4 x i8] zeroinitializer
; CHECK-DAG: @__cusafe_index0_narrow = addrspace(1) constant [8 x i8] zeroinitializer
; No group: different indices, element sizes, an access in a loop, one parameter,
; stores only.
; CHECK-NOT: @__cusafe_index0_two_indices
; CHECK-NOT: @__cusafe_index0_two_sizes
; CHECK-NOT: @__cusafe_index0_in_loop
; CHECK-NOT: @__cusafe_index0_one_param
; CHECK-NOT: @__cusafe_index0_stores

; srad_2's shape: loads of a[i], b[i] and c[i], a store to d[i]. One compare of %i
; stands for the three loads, and shares one branch with the store's own check (a
; batch, batch.ll) before the first load. The cold path checks a[i] against a's window,
; then b[i] against b's, c[i] against c's, and reports d[i] last without a compare (the
; batch's or fails only when some member does).
; The kernel, replaced this late, says it is one by its calling convention too: NVPTX's
; annotation cache may hold a freed function's entry at its address (launch.rs).
; CHECK-LABEL: define ptx_kernel void @three(ptr %a, ptr %b, i32 %n, ptr %c, ptr %d, i64 %i, i64 %cusafe.start.0, i64 %cusafe.limit.0, i64 %cusafe.start.1, i64 %cusafe.limit.1, i64 %cusafe.start.3, i64 %cusafe.limit.3, i64 %cusafe.start.4, i64 %cusafe.limit.4, i64 %cusafe.start.5, i64 %cusafe.limit.5, i64 %cusafe.index.lo.0, i64 %cusafe.index.span.0)
; CHECK: [[D:%.*]] = sub i64 %i, %cusafe.index.lo.0
; CHECK-NEXT: icmp ult i64 [[D]], %cusafe.index.span.0
; CHECK: icmp ult i64 {{%.*}}, %cusafe.limit.4
; CHECK: br i1 {{%.*}}, label {{%.*}}, label {{%.*}}, !prof
; CHECK: %cusafe.start.0
; CHECK: @__cusafe_site.0
; CHECK: %cusafe.start.1
; CHECK: @__cusafe_site.1
; CHECK: %cusafe.start.3
; CHECK: @__cusafe_site.2
; CHECK-NOT: br i1
; CHECK: @__cusafe_site.3
; CHECK-NEXT: unreachable
; CHECK: load float, ptr %pa
; CHECK-NOT: br i1 {{.*}}!prof
; CHECK: load float, ptr %pb
; CHECK-NOT: br i1 {{.*}}!prof
; CHECK: load float, ptr %pc
; CHECK-NOT: br i1 {{.*}}!prof
; CHECK: store float {{.*}}, ptr %pd
; CHECK: ret void
; STATS: kernel three: 2 checks {{.*}} 2 merged (neighbouring), 2 of them by index {{.*}} 1 batched
define void @three(ptr %a, ptr %b, i32 %n, ptr %c, ptr %d, i64 %i) {
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  %pc = getelementptr inbounds float, ptr %c, i64 %i
  %pd = getelementptr inbounds float, ptr %d, i64 %i
  %va = load float, ptr %pa, align 4
  %vb = load float, ptr %pb, align 4
  %vc = load float, ptr %pc, align 4
  %s = fadd float %va, %vb
  %t = fadd float %s, %vc
  store float %t, ptr %pd, align 4
  ret void
}

; A 32-bit index: the getelementptr sign-extends it, so does the compare.
; CHECK-LABEL: define ptx_kernel void @narrow(
; CHECK: [[X:%.*]] = sext i32 %n to i64
; CHECK: sub i64 [[X]], %cusafe.index.lo.0
; STATS: kernel narrow: 2 checks {{.*}} 1 of them by index
define void @narrow(ptr %a, ptr %b, ptr %c, i32 %n) {
  %pa = getelementptr inbounds double, ptr %a, i32 %n
  %pb = getelementptr inbounds double, ptr %b, i32 %n
  %v = load double, ptr %pa, align 8
  %w = load double, ptr %pb, align 8
  %s = fadd double %v, %w
  store double %s, ptr %c, align 8
  ret void
}

; Must not fire: a call that may stop the thread between the two (the second load may
; never run: its report must not come before the call). The group was taken from the
; block, so the kernel has its bounds, but the two keep their own checks.
; CHECK-LABEL: define ptx_kernel void @call_between(
; CHECK-NOT: sub i64 %i, %cusafe.index.lo.0
; CHECK: call void @opaque()
; CHECK: ret void
; STATS: kernel call_between: 2 checks {{.*}} 0 of them by index
define void @call_between(ptr %a, ptr %b, i64 %i) {
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %pa, align 4
  call void @opaque()
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  %w = load float, ptr %pb, align 4
  %s = fadd float %v, %w
  store float %s, ptr %pa, align 4
  ret void
}

; Must not fire: two indices; two element sizes; an access in a loop; one parameter
; twice (the recurring rule's, not a group); stores only (one branch before a block's
; stores cost srad_1 registers and time, launch.rs).
; CHECK-LABEL: define void @two_indices(
; STATS: kernel two_indices: 2 checks {{.*}} 0 of them by index
define void @two_indices(ptr %a, ptr %b, i64 %i, i64 %j) {
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %pb = getelementptr inbounds float, ptr %b, i64 %j
  %v = load float, ptr %pa, align 4
  %w = load float, ptr %pb, align 4
  %s = fadd float %v, %w
  store float %s, ptr %pa, align 4
  ret void
}

; STATS: kernel two_sizes: 2 checks {{.*}} 0 of them by index
define void @two_sizes(ptr %a, ptr %b, i64 %i) {
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %pb = getelementptr inbounds double, ptr %b, i64 %i
  %v = load float, ptr %pa, align 4
  %w = load double, ptr %pb, align 8
  %x = fpext float %v to double
  %s = fadd double %x, %w
  store double %s, ptr %pb, align 8
  ret void
}

; STATS: kernel stores: 2 checks {{.*}} 0 of them by index
define void @stores(ptr %a, ptr %b, i64 %i) {
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  store float 1.0, ptr %pa, align 4
  store float 2.0, ptr %pb, align 4
  ret void
}

; STATS: kernel in_loop: {{.*}} 0 of them by index
define void @in_loop(ptr %a, ptr %b, ptr %idx, i64 %n) {
entry:
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %loop ]
  %pi = getelementptr inbounds i64, ptr %idx, i64 %k
  %i = load i64, ptr %pi, align 8
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  %v = load float, ptr %pa, align 4
  %w = load float, ptr %pb, align 4
  %s = fadd float %v, %w
  store float %s, ptr %pa, align 4
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

; STATS: kernel one_param: {{.*}} 0 of them by index
define void @one_param(ptr %a, i64 %i) {
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %pa, align 4
  %w = fadd float %v, 1.0
  store float %w, ptr %pa, align 4
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3, !4, !5, !6, !7}
!0 = !{ptr @three, !"kernel", i32 1}
!1 = !{ptr @narrow, !"kernel", i32 1}
!2 = !{ptr @call_between, !"kernel", i32 1}
!3 = !{ptr @two_indices, !"kernel", i32 1}
!4 = !{ptr @two_sizes, !"kernel", i32 1}
!5 = !{ptr @in_loop, !"kernel", i32 1}
!6 = !{ptr @one_param, !"kernel", i32 1}
!7 = !{ptr @stores, !"kernel", i32 1}

; The markers are visible globals the runtime finds with cuModuleGetGlobal, and the
; bounds the kernel's last parameters.
; PTX-DAG: .visible .global .align 1 .b8 __cusafe_index0_three[4]
; PTX-DAG: .visible .global .align 1 .b8 __cusafe_index0m2_three[4]
; PTX-LABEL: .entry three(
; PTX: .param .u64 three_param_17
; PTX-NEXT: )

; Off (the switch, or a recover-mode build): no markers, no bounds, no compare of an
; index.
; OFF-NOT: __cusafe_index
; OFF-NOT: cusafe.index
