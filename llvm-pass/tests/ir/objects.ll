; Accesses whose root is an object known at compile time are checked against the
; object's size, with no header load: local arrays, __shared__ arrays and __device__
; globals (the static fast path). Constant offsets that fit are proven and not checked.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %calls %opt %s -o %t.calls.ll
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.calls.ll
; RUN: FileCheck %s --check-prefix=LOC < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@_ZZ1kE4tile = internal addrspace(3) global [32 x float] undef
@dev = addrspace(1) global [8 x i32] zeroinitializer

define void @k(i64 %i) {
  %arr = alloca [4 x i32], align 4
  %pa = getelementptr inbounds [4 x i32], ptr %arr, i64 0, i64 %i
  store i32 1, ptr %pa, align 4
  %ps = getelementptr inbounds [32 x float], ptr addrspace(3) @_ZZ1kE4tile, i64 0, i64 %i
  store float 1.0, ptr addrspace(3) %ps, align 4
  %pg = getelementptr inbounds [32 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ1kE4tile to ptr), i64 0, i64 %i
  %v = load float, ptr %pg, align 4
  %pd = getelementptr inbounds [8 x i32], ptr addrspace(1) @dev, i64 0, i64 %i
  %w = load i32, ptr addrspace(1) %pd, align 4
  ; Proven: constant offsets inside the objects.
  %c1 = getelementptr inbounds [4 x i32], ptr %arr, i64 0, i64 3
  store i32 2, ptr %c1, align 4
  %c2 = getelementptr inbounds i8, ptr addrspace(1) @dev, i64 28
  %x = load i32, ptr addrspace(1) %c2, align 4
  ; A constant offset past the end is checked (and fails when it runs).
  %c3 = getelementptr inbounds i8, ptr addrspace(1) @dev, i64 30
  %y = load i32, ptr addrspace(1) %c3, align 4
  ret void
}
; Sites (format::report::SITE_*): state 0, the site's flags, its text.
; CHECK: @__cusafe_site.0 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 9,
; CHECK: @__cusafe_site.1 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 17,
; CHECK: @__cusafe_site.2 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 16,
; CHECK: @__cusafe_site.3 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 64,
; CHECK: @__cusafe_site.4 = internal addrspace(1) global { i32, i32, ptr } { i32 0, i32 64,
; CHECK-LABEL: define void @k(
; Local array: offset from the alloca as arithmetic on the GEP's indices (a GEP on
; null: no address of the object needed), size 16, local flag (8) | write (1).
; CHECK: [[OG:%.*]] = getelementptr [4 x i32], ptr null, i64 0, i64 %i
; CHECK: [[OFF:%.*]] = ptrtoint ptr [[OG]] to i64
; A 4-byte access in 16 bytes: offsets below 13 (one compare, the bound folded).
; CHECK: icmp ult i64 [[OFF]], 13
; CHECK-NOT: load i64
; CHECK: call i32 @__cusafe_fail({{.*}}, i64 16, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; Shared array in its own address space: size 128, shared flag (16) | write; the
; cold path still gets the object's address.
; CHECK: getelementptr [32 x float], ptr addrspace(3) null, i64 0, i64 %i
; CHECK: icmp ult i64 {{%.*}}, 125
; CHECK: call i32 @__cusafe_fail({{.*}}, i64 ptrtoint (ptr addrspace(3) @_ZZ1kE4tile to i64), i64 128, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; The same array through a generic pointer: the same index arithmetic.
; CHECK: getelementptr [32 x float], ptr null, i64 0, i64 %i
; CHECK: call i32 @__cusafe_fail({{.*}}, i64 ptrtoint (ptr addrspacecast (ptr addrspace(3) @_ZZ1kE4tile to ptr) to i64), i64 128, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.2 to ptr))
; __device__ array: size 32, global-variable flag (64).
; CHECK: call i32 @__cusafe_fail({{.*}}, i64 32, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.3 to ptr))
; CHECK: store i32 2, ptr %c1
; CHECK-NEXT: getelementptr inbounds i8, ptr addrspace(1) @dev, i64 28
; CHECK-NEXT: load i32, ptr addrspace(1) %c2
; CHECK: call i32 @__cusafe_fail({{.*}}, i64 32, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.4 to ptr))
; CHECK: load i32, ptr addrspace(1) %c3
; The site text names the object (mangled; the runtime demangles).
; LOC: c"k\1F<unknown: compile with -g or -gline-tables-only>\1F0\1F0\1F_ZZ1kE4tile\00"
; STATS: device function k: 5 checks (3 loads, 2 stores, 0 atomics, 0 ranges; 5 against known objects), 0 arithmetic rules, 2 proven in bounds, 0 removed (dominated), 0 merged (neighbouring), 0 of them by index (one compare for several parameters), 0 loop ranges (one check per loop, in the preheader), 0 batched (sharing a branch), 0 hoisted (loop header loads), 0 header loads shared, 0 unchecked
