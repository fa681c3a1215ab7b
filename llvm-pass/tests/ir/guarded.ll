; Neighbours under an assumption (base.rs: Assumed, Guard): `sext (x - 1)`, `sext x`,
; `sext (x + 1)` with plain i32 adds (conv3d's rows: the optimizer drops `nsw`) are one
; check of [a + 4 (x - 1), + 12), valid only when neither add wraps; the guard
; `x + (2^31 - 1) >u 2^32 - 3` (x - 1 or x + 1 wraps) makes the check fail, and the cold
; path then checks each member at its real address (`sext (x + 1)` rebuilt with the
; program's own i32 add), never at the base plus an offset. Must not fire: assumptions on
; two different values, constants half the type apart.
; RUN: %opt %s -o %t.ll 2>%t.stats
; RUN: %calls %opt %s -o %t.calls.ll
; RUN: %verify %t.ll
; RUN: %verify %t.calls.ll
; RUN: FileCheck %s < %t.calls.ll
; RUN: FileCheck %s --check-prefix=TRAP < %t.ll
; RUN: FileCheck %s --check-prefix=STATS < %t.stats
; RUN: %llc %t.ll -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: define void @row(
; The union starts at the first load's own address (the lowest member's: the base
; sext x, 4 bytes down, where nothing wraps; the guard covers the rest).
; CHECK: [[SHIFTED:%.*]] = add i32 %x, 2147483647
; CHECK: [[WRAPS:%.*]] = icmp ugt i32 [[SHIFTED]], -3
; CHECK: ptrtoint ptr %pm to i64
; CHECK: [[BAD:%.*]] = or i1 {{%.*}}, [[WRAPS]]
; CHECK: br i1 [[BAD]]
; The cold path: the members' real addresses, rebuilt before the first access from an
; opaque copy of x (so codegen's GVN does not compute them before the branch for the
; hot path too and carry them into the join through phis).
; CHECK: [[XC:%.*]] = call i32 asm "mov.b32 $0, $1;", "=r,r"(i32 %x)
; CHECK: [[X0:%.*]] = sext i32 [[XC]] to i64
; CHECK: [[P0:%.*]] = getelementptr inbounds float, ptr %a, i64 [[X0]]
; CHECK: [[XP:%.*]] = add i32 [[XC]], 1
; CHECK: [[IP:%.*]] = sext i32 [[XP]] to i64
; CHECK: [[PP:%.*]] = getelementptr inbounds float, ptr %a, i64 [[IP]]
; CHECK: ptrtoint ptr %pm to i64
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.0 to ptr))
; CHECK: ptrtoint ptr [[P0]] to i64
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.1 to ptr))
; CHECK: ptrtoint ptr [[PP]] to i64
; CHECK: call i32 @__cusafe_fail({{.*}}, i32 4, ptr addrspacecast (ptr addrspace(1) @__cusafe_site.2 to ptr))
; CHECK-NOT: call i32 @__cusafe_fail(
; CHECK: ret void
; In a trap-mode build the three loads follow with no conditional branch between them.
; TRAP-LABEL: define void @row(
; TRAP: load float
; TRAP-NOT: br i1
; TRAP: load float
; TRAP-NOT: br i1
; TRAP: load float
; TRAP: ret void
; STATS: kernel row: 1 checks {{.*}} 2 merged (neighbouring)
; Codegen: with the cold path's copies built from the opaque x, GVN's PRE has nothing
; to hoist, and the hot path computes 4 * sext x only after the group's branch, next to
; its loads. Built from x itself, the copies made codegen compute it before the branch
; for both paths (conv3d: 17 such 64-bit values, through phis, 40 registers -> 32).
; PTX-LABEL: .entry row(
; PTX: add.s32 [[X:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
; PTX-NOT: mul.wide.s32 {{%rd[0-9]+}}, [[X]], 4;
; PTX: @%p{{[0-9]+}} bra
; PTX: ld.global.f32
; PTX: mul.wide.s32 {{%rd[0-9]+}}, [[X]], 4;
; PTX: ld.global.f32
define void @row(ptr %a, ptr addrspace(3) %out, i32 %r, i32 %k) {
  %x = add i32 %r, %k
  %xm = add i32 %x, -1
  %im = sext i32 %xm to i64
  %pm = getelementptr inbounds float, ptr %a, i64 %im
  %vm = load float, ptr %pm, align 4
  %i = sext i32 %x to i64
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %xp = add i32 %x, 1
  %ip = sext i32 %xp to i64
  %pp = getelementptr inbounds float, ptr %a, i64 %ip
  %vp = load float, ptr %pp, align 4
  %s1 = fadd float %vm, %v
  %s2 = fadd float %s1, %vp
  store float %s2, ptr addrspace(3) %out, align 4
  ret void
}

; `sext (x1 + 1)` and `sext (x2 - 1)` share a base (x1 and x2 are both r + k, split into
; the terms r, k), but their assumptions are on two different values: no group.
; STATS: kernel two_values: 2 checks {{.*}} 0 merged (neighbouring)
define void @two_values(ptr %a, i32 %r, i32 %k) {
  %x1 = add nsw i32 %r, %k
  %x2 = add nsw i32 %k, %r
  %y1 = add i32 %x1, 1
  %y2 = add i32 %x2, -1
  %i1 = sext i32 %y1 to i64
  %i2 = sext i32 %y2 to i64
  %p1 = getelementptr inbounds float, ptr %a, i64 %i1
  %p2 = getelementptr inbounds float, ptr %a, i64 %i2
  store float 0.0, ptr %p1, align 4
  store float 1.0, ptr %p2, align 4
  ret void
}

; Constants 2^31 apart: no 32-bit value has both x - 2^30 and x + 2^30 in range and
; the guard's compare could not say so: no group.
; STATS: kernel half_apart: 2 checks {{.*}} 0 merged (neighbouring)
define void @half_apart(ptr %a, i32 %x) {
  %y1 = add i32 %x, 1073741824
  %y2 = add i32 %x, -1073741824
  %i1 = sext i32 %y1 to i64
  %i2 = sext i32 %y2 to i64
  %p1 = getelementptr inbounds float, ptr %a, i64 %i1
  %p2 = getelementptr inbounds float, ptr %a, i64 %i2
  store float 0.0, ptr %p1, align 4
  store float 1.0, ptr %p2, align 4
  ret void
}

!nvvm.annotations = !{!0, !1, !2}
!0 = !{ptr @row, !"kernel", i32 1}
!1 = !{ptr @two_values, !"kernel", i32 1}
!2 = !{ptr @half_apart, !"kernel", i32 1}
