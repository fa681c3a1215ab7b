; The root half of a heap check, built in the function for a root the launch gives no
; window (docs/formats.md, "The check"): the class from the tag; for a power-of-two
; block its base, header (at the base, or for slotted classes, blocks of 4 MiB and up,
; in the base's 16-byte slot of the shared header granule) and payload start (base +
; 256, or base + 2 MiB for slotted classes); for a packed block (docs/formats.md,
; "Packed blocks") its index in the slab, its payload and the header below it.
; RUN: %calls %opt_noelim %s | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define i32 @get(ptr addrspace(1) %a, i64 %i) {
  %p = getelementptr inbounds i32, ptr addrspace(1) %a, i64 %i
  %v = load i32, ptr addrspace(1) %p, align 4
  ret i32 %v
}
; CHECK-LABEL: define i32 @get(
; CHECK: [[T:%.*]] = lshr i64 [[RI:%.*]], 41
; CHECK-NEXT: [[T1:%.*]] = sub i64 [[T]], 1
; CHECK-NEXT: [[IN:%.*]] = icmp ult i64 [[T1]], 35
; CHECK-NEXT: [[SH:%.*]] = add i64 [[T]], 3
; CHECK-NEXT: [[SHM:%.*]] = and i64 [[SH]], 63
; CHECK-NEXT: [[SIZE:%.*]] = shl i64 1, [[SHM]]
; CHECK-NEXT: [[MASK:%.*]] = sub i64 0, [[SIZE]]
; CHECK-NEXT: [[BASE:%.*]] = and i64 [[RI]], [[MASK]]
; Packed: tags 13..18, field (bits 33..40) below 255.
; CHECK-NEXT: [[F0:%.*]] = lshr i64 [[RI]], 33
; CHECK-NEXT: [[F:%.*]] = and i64 [[F0]], 255
; CHECK-NEXT: [[PT0:%.*]] = sub i64 [[T]], 13
; CHECK-NEXT: [[PT:%.*]] = icmp ult i64 [[PT0]], 6
; CHECK-NEXT: [[PF:%.*]] = icmp ne i64 [[F]], 255
; CHECK-NEXT: [[PACKED:%.*]] = and i1 [[PT]], [[PF]]
; The step e = t - 5; the slab is 2^(e + 14) bytes; x = (offset + 255) >> e.
; CHECK-NEXT: [[E0:%.*]] = sub i64 [[T]], 5
; CHECK-NEXT: [[E:%.*]] = and i64 [[E0]], 63
; CHECK-NEXT: [[SS0:%.*]] = add i64 [[E]], 14
; CHECK-NEXT: [[SS:%.*]] = and i64 [[SS0]], 63
; CHECK-NEXT: [[SB:%.*]] = shl i64 1, [[SS]]
; CHECK-NEXT: [[SM:%.*]] = sub i64 [[SB]], 1
; CHECK-NEXT: [[OFF:%.*]] = and i64 [[RI]], [[SM]]
; CHECK-NEXT: [[SLAB:%.*]] = xor i64 [[RI]], [[OFF]]
; CHECK-NEXT: [[X0:%.*]] = add i64 [[OFF]], 255
; CHECK-NEXT: [[X:%.*]] = lshr i64 [[X0]], [[E]]
; CHECK-NEXT: [[U:%.*]] = add i64 [[F]], 1
; k = trunc((x - 0.5) / (f + 1)), the division approximate (exact here).
; CHECK-NEXT: [[X32:%.*]] = trunc i64 [[X]] to i32
; CHECK-NEXT: [[XF:%.*]] = uitofp i32 [[X32]] to float
; CHECK-NEXT: [[XM:%.*]] = fsub float [[XF]], 5.000000e-01
; CHECK-NEXT: [[U32:%.*]] = trunc i64 [[U]] to i32
; CHECK-NEXT: [[UF:%.*]] = uitofp i32 [[U32]] to float
; CHECK-NEXT: [[Q:%.*]] = call float @llvm.nvvm.div.approx.f(float [[XM]], float [[UF]])
; CHECK-NEXT: [[K32:%.*]] = call i32 @llvm.nvvm.f2ui.rz(float [[Q]])
; CHECK-NEXT: [[K:%.*]] = zext i32 [[K32]] to i64
; payload = slab + ((k (f + 1) + 1) << e)
; CHECK-NEXT: [[KU:%.*]] = mul i64 [[K]], [[U]]
; CHECK-NEXT: [[KU1:%.*]] = add i64 [[KU]], 1
; CHECK-NEXT: [[PO:%.*]] = shl i64 [[KU1]], [[E]]
; CHECK-NEXT: [[PPAY:%.*]] = add i64 [[SLAB]], [[PO]]
; CHECK: [[SLOTTED:%.*]] = icmp uge i64 [[T]], 19
; Slotted from class 19; slot = (base >> 22) mod 2^17, 16 bytes each.
; CHECK-NEXT: [[S1:%.*]] = lshr i64 [[BASE]], 18
; CHECK-NEXT: [[S2:%.*]] = and i64 [[S1]], 2097136
; CHECK-NEXT: [[AT:%.*]] = or i64 [[BASE]], [[S2]]
; CHECK-NEXT: [[HDR2:%.*]] = select i1 [[SLOTTED]], i64 [[AT]], i64 [[BASE]]
; CHECK-NEXT: [[PRE:%.*]] = select i1 [[SLOTTED]], i64 2097152, i64 256
; CHECK-NEXT: [[PAY2:%.*]] = add i64 [[BASE]], [[PRE]]
; A packed header is 16 bytes below the payload.
; CHECK-NEXT: [[PHDR:%.*]] = sub i64 [[PPAY]], 16
; CHECK-NEXT: [[HDR:%.*]] = select i1 [[PACKED]], i64 [[PHDR]], i64 [[HDR2]]
; CHECK-NEXT: [[PAY:%.*]] = select i1 [[PACKED]], i64 [[PPAY]], i64 [[PAY2]]
; CHECK-NEXT: [[HA:%.*]] = select i1 [[IN]], i64 [[HDR]], i64 ptrtoint (ptr addrspace(1) @__cusafe_no_header to i64)
; CHECK-NEXT: %cusafe.hdr = inttoptr i64 [[HA]] to ptr addrspace(1)
; CHECK-NEXT: %cusafe.size = load i64, ptr addrspace(1) %cusafe.hdr, align 8
; CHECK: [[START:%.*]] = select i1 [[IN]], i64 [[PAY]], i64 {{%.*}}
; CHECK: [[SL:%.*]] = sub i64 [[START]], 3
; CHECK: [[LIMIT:%.*]] = select i1 [[IN]], i64 %cusafe.size, i64 {{%.*}}
; The offset the report passes, then the last byte's, compared against the limit.
; CHECK: [[A0:%.*]] = ptrtoint ptr addrspace(1) %p to i64
; CHECK-NEXT: sub i64 [[A0]], [[START]]
; CHECK-NEXT: [[LAST:%.*]] = sub i64 [[A0]], [[SL]]
; CHECK: icmp ult i64 [[LAST]], [[LIMIT]]

; A root that can only be a __shared__ address seen through the generic space (a phi
; of two arrays' generic views) has no tag and no header: its checks take the foreign
; window as constants, with no header load and no block computed.
@sa = internal addrspace(3) global [64 x float] undef
@sb = internal addrspace(3) global [64 x float] undef

define float @pick(i1 %c, i64 %i) {
entry:
  br i1 %c, label %a, label %b
a:
  br label %m
b:
  br label %m
m:
  %p = phi ptr [ addrspacecast (ptr addrspace(3) @sa to ptr), %a ], [ addrspacecast (ptr addrspace(3) @sb to ptr), %b ]
  %q = getelementptr inbounds float, ptr %p, i64 %i
  %v = load float, ptr %q, align 4
  ret float %v
}
; CHECK-LABEL: define float @pick(
; CHECK-NOT: %cusafe.size
; CHECK-NOT: div.approx
; CHECK: [[A:%.*]] = ptrtoint ptr %q to i64
; CHECK: [[L:%.*]] = sub i64 {{%.*}}, 65533
; CHECK-NEXT: icmp ult i64 [[L]], 140737488289792
; CHECK: ret float
