//! Per-check-site data in the module: the site text (kernel, file, line, column) the
//! report record carries, and the site itself (state word so that each site reports
//! once, the site's flags, a pointer to the text).

use crate::ir::{name, Ir, AS_GLOBAL};
use cusafe_format::report::{encode_loc, SITE_LOC_OFFSET};
use inkwell::types::AsTypeRef;
use llvm_sys::core::*;
use llvm_sys::debuginfo::*;
use llvm_sys::prelude::*;
use llvm_sys::LLVMLinkage;
use std::collections::HashMap;
use std::ffi::CString;

/// Creates and de-duplicates site globals for one module.
#[derive(Default)]
pub struct Sites {
    texts: HashMap<String, LLVMValueRef>,
    count: u32,
}

/// Whether `file` is a compiler or CUDA header (clang's CUDA wrappers, the CUDA
/// toolkit's headers): accesses inlined from there are reported at their caller.
fn is_system_header(file: &str) -> bool {
    [
        "__clang_cuda",
        "/lib/clang/",
        "/cuda/include/",
        "/nvidia/cuda_",
    ]
    .iter()
    .any(|p| file.contains(p))
}

fn file_of(loc: LLVMMetadataRef) -> String {
    unsafe {
        let file = LLVMDIScopeGetFile(LLVMDILocationGetScope(loc));
        let mut len = 0u32;
        let f = if file.is_null() {
            std::ptr::null()
        } else {
            LLVMDIFileGetFilename(file, &mut len)
        };
        if f.is_null() {
            "<unknown>".to_string()
        } else {
            String::from_utf8_lossy(std::slice::from_raw_parts(f as *const u8, len as usize))
                .into_owned()
        }
    }
}

/// Source position of an instruction: the innermost debug location that is not in a
/// compiler or CUDA header (`atomicAdd` is inlined from clang's wrappers; the report
/// should name the user's line that called it).
pub fn source_pos(inst: LLVMValueRef) -> (String, u32, u32) {
    unsafe {
        let mut loc = LLVMInstructionGetDebugLoc(inst);
        if loc.is_null() {
            return (
                "<unknown: compile with -g or -gline-tables-only>".into(),
                0,
                0,
            );
        }
        loop {
            let file = file_of(loc);
            let outer = LLVMDILocationGetInlinedAt(loc);
            if !is_system_header(&file) || outer.is_null() {
                return (
                    file,
                    LLVMDILocationGetLine(loc),
                    LLVMDILocationGetColumn(loc),
                );
            }
            loc = outer;
        }
    }
}

impl Sites {
    /// The generic-address-space pointer to the site text for `inst` in `func`
    /// (`object`: the name of the object an object check is about, else empty).
    pub fn text(
        &mut self,
        ir: &Ir,
        func: LLVMValueRef,
        inst: LLVMValueRef,
        object: &str,
    ) -> LLVMValueRef {
        let (file, line, col) = source_pos(inst);
        let text = encode_loc(&name(func), &file, line, col, object);
        if let Some(&g) = self.texts.get(&text) {
            return g;
        }
        let g = unsafe {
            let init =
                LLVMConstStringInContext2(ir.raw_ctx(), text.as_ptr() as *const _, text.len(), 0);
            let gname = CString::new(format!("__cusafe_loc.{}", self.texts.len())).expect("no NUL");
            let g = LLVMAddGlobalInAddressSpace(
                ir.raw_module(),
                LLVMTypeOf(init),
                gname.as_ptr(),
                AS_GLOBAL,
            );
            LLVMSetInitializer(g, init);
            LLVMSetGlobalConstant(g, 1);
            LLVMSetLinkage(g, LLVMLinkage::LLVMPrivateLinkage);
            LLVMSetUnnamedAddress(g, llvm_sys::LLVMUnnamedAddr::LLVMGlobalUnnamedAddr);
            LLVMConstAddrSpaceCast(g, ir.ptr.as_type_ref())
        };
        self.texts.insert(text, g);
        g
    }

    /// A fresh site for one check (generic pointer): `{ state = 0, flags, text }`
    /// (`format::report::SITE_*`, device-rt's `struct site`).
    pub fn site(&mut self, ir: &Ir, flags: u32, text: LLVMValueRef) -> LLVMValueRef {
        unsafe {
            let gname = CString::new(format!("__cusafe_site.{}", self.count)).expect("no NUL");
            self.count += 1;
            let mut fields = [ir.c32(0), ir.c32(flags), text];
            let init = LLVMConstStructInContext(ir.raw_ctx(), fields.as_mut_ptr(), 3, 0);
            let g = LLVMAddGlobalInAddressSpace(
                ir.raw_module(),
                LLVMTypeOf(init),
                gname.as_ptr(),
                AS_GLOBAL,
            );
            LLVMSetInitializer(g, init);
            LLVMSetLinkage(g, LLVMLinkage::LLVMInternalLinkage);
            debug_assert_eq!(
                llvm_sys::target::LLVMOffsetOfElement(ir.td(), LLVMTypeOf(init), 2),
                u64::from(SITE_LOC_OFFSET)
            );
            LLVMConstAddrSpaceCast(g, ir.ptr.as_type_ref())
        }
    }
}
