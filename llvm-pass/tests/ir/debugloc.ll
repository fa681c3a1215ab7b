; Each site carries "kernel<US>file<US>line<US>col" from the access's debug location.
; RUN: %opt %s | FileCheck %s
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @kern(ptr %a) !dbg !5 {
  store i32 7, ptr %a, align 4, !dbg !8
  ret void
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus, file: !1, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "examples/overflow.cu", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 7, !"Dwarf Version", i32 2}
!5 = distinct !DISubprogram(name: "kern", scope: !1, file: !1, line: 10, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{}
!8 = !DILocation(line: 12, column: 9, scope: !5)
; CHECK: @__cusafe_loc.0 = private unnamed_addr addrspace(1) constant [{{[0-9]+}} x i8] c"kern\1Fexamples/overflow.cu\1F12\1F9\1F\00"
