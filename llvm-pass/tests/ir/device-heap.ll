; The device heap (heap.rs): every call of malloc becomes a call of device-rt's
; __cusafe_malloc (a tagged arena block), every call of free one of __cusafe_free with a
; check site naming the line, and a module that allocates gets the weak marker
; __cusafe_device_heap that the runtime looks for at a kernel's first launch. The block
; is then an ordinary root: its accesses get the heap check.
; RUN: %calls %opt %s -o %t.ll 2>%t.stats
; RUN: %verify %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: %llc %t.ll -o %t.ptx
; RUN: %ptxas %t.ptx -o %t.cubin
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; A module that frees but never allocates gets no marker.
; RUN: %opt %S/device-heap-free-only.ll.in -o %t.free.ll
; RUN: %not grep __cusafe_device_heap %t.free.ll

; The free's site text names the line.
; CHECK: @[[LOC:__cusafe_loc.[0-9]+]] = {{.*}} c"scratch\1Fheap.cu\1F7\1F3\1F\00"
; CHECK: @[[SITE:__cusafe_site.[0-9]+]] = {{.*}} @[[LOC]]
; CHECK: @__cusafe_device_heap = weak_odr addrspace(1) constant i8 1
; CHECK-LABEL: define void @scratch(
; CHECK: %buf = call ptr @__cusafe_malloc(i64 %bytes)
; CHECK-NOT: call ptr @malloc(
; The block's store is checked against the block's header (a heap check).
; CHECK: load i64, ptr addrspace(1)
; CHECK: call i32 @__cusafe_fail(
; free's pointer leaves instrumented code like any argument of a function without a
; body (bits 47..63 stripped: a pseudo-pointer arrives as its real address), and so
; does the site.
; CHECK: and i64 ptrtoint (ptr addrspacecast (ptr addrspace(1) @[[SITE]] to ptr) to i64)
; CHECK: call void @__cusafe_free(ptr {{%.*}}, ptr {{%.*}})

; CHECK-NOT: call void @free(
; The real allocator stays reachable from device-rt only.
; CHECK-LABEL: define internal ptr @__cusafe_malloc(
; CHECK: call ptr @malloc(
; CHECK-LABEL: define internal void @__cusafe_free(
; CHECK: call void @free(
; PTX: .extern .func (.param .b64 func_retval0) malloc
; PTX: .weak .global .align 1 .u8 __cusafe_device_heap = 1;

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare ptr @malloc(i64)
declare void @free(ptr)

define void @scratch(ptr %out, i64 %bytes) !dbg !5 {
  %buf = call ptr @malloc(i64 %bytes), !dbg !8
  store float 1.0, ptr %buf, align 4, !dbg !9
  call void @free(ptr %buf), !dbg !10
  ret void
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus, file: !1, producer: "clang", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "heap.cu", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "scratch", linkageName: "_Z7scratchPfl", scope: !1, file: !1, line: 3, type: !6, scopeLine: 3, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{}
!8 = !DILocation(line: 5, column: 3, scope: !5)
!9 = !DILocation(line: 6, column: 3, scope: !5)
!10 = !DILocation(line: 7, column: 3, scope: !5)
