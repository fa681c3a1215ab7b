//! Per-check-site data in the module: the site text (kernel, file, line, column) the
//! report record carries, and the site itself (state word so that each site reports
//! once, the site's flags, a pointer to the text).

use crate::ir::{name, space, Ir, AS_GLOBAL};
use crate::sys::debug_chain;
use cusafe_format::report::{encode_loc, SITE_LOC_OFFSET};
use inkwell::module::Linkage;
use inkwell::values::{BasicValueEnum, FunctionValue, GlobalValue, InstructionValue, PointerValue};
use std::collections::HashMap;

/// Creates and de-duplicates site globals for one module.
#[derive(Default)]
pub struct Sites<'ctx> {
    texts: HashMap<String, PointerValue<'ctx>>,
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

/// Source position of an instruction: the innermost debug location that is not in a
/// compiler or CUDA header (`atomicAdd` is inlined from clang's wrappers; the report
/// should name the user's line that called it).
pub fn source_pos(inst: InstructionValue) -> (String, u32, u32) {
    let Some(loc) = inst.get_debug_location() else {
        return (
            "<unknown: compile with -g or -gline-tables-only>".into(),
            0,
            0,
        );
    };
    let chain = debug_chain(&loc);
    let last = chain.len() - 1;
    for (k, (file, line, col)) in chain.into_iter().enumerate() {
        let file = file.unwrap_or_else(|| "<unknown>".to_string());
        if !is_system_header(&file) || k == last {
            return (file, line, col);
        }
    }
    unreachable!("a location's chain holds the location")
}

impl<'ctx> Sites<'ctx> {
    /// The generic-address-space pointer to the site text for `inst` in `func`
    /// (`object`: the name of the object an object check is about, else empty).
    pub fn text(
        &mut self,
        ir: &Ir<'ctx>,
        func: FunctionValue,
        inst: InstructionValue,
        object: &str,
    ) -> PointerValue<'ctx> {
        let (file, line, col) = source_pos(inst);
        let text = encode_loc(&name(func), &file, line, col, object);
        if let Some(&g) = self.texts.get(&text) {
            return g;
        }
        let init = ir.ctx.const_string(text.as_bytes(), true);
        let g = global(
            ir,
            init.into(),
            &format!("__cusafe_loc.{}", self.texts.len()),
        );
        g.set_constant(true);
        g.set_linkage(Linkage::Private);
        g.set_unnamed_address(inkwell::values::UnnamedAddress::Global);
        let g = generic(ir, g);
        self.texts.insert(text, g);
        g
    }

    /// A fresh site for one check (generic pointer): `{ state = 0, flags, text }`
    /// (`format::report::SITE_*`, device-rt's `struct site`).
    pub fn site(
        &mut self,
        ir: &Ir<'ctx>,
        flags: u32,
        text: PointerValue<'ctx>,
    ) -> PointerValue<'ctx> {
        let name = format!("__cusafe_site.{}", self.count);
        self.count += 1;
        let fields: [BasicValueEnum; 3] = [ir.c32(0).into(), ir.c32(flags).into(), text.into()];
        let init = ir.ctx.const_struct(&fields, false);
        let g = global(ir, init.into(), &name);
        g.set_linkage(Linkage::Internal);
        debug_assert_eq!(
            ir.layout().offset_of_element(&init.get_type(), 2),
            Some(u64::from(SITE_LOC_OFFSET))
        );
        generic(ir, g)
    }
}

/// A new global `name` in global memory initialized with `init`.
fn global<'ctx>(ir: &Ir<'ctx>, init: BasicValueEnum<'ctx>, name: &str) -> GlobalValue<'ctx> {
    assert!(!name.contains('\0'), "no NUL in a global's name");
    let g = ir
        .module()
        .add_global(init.get_type(), Some(space(AS_GLOBAL)), name);
    g.set_initializer(&init);
    g
}

/// `g` cast to a generic pointer (a constant expression).
fn generic<'ctx>(ir: &Ir<'ctx>, g: GlobalValue<'ctx>) -> PointerValue<'ctx> {
    g.as_pointer_value().const_address_space_cast(ir.ptr)
}
