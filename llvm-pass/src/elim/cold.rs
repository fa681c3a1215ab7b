//! Which cold path a check gets, as far as planning cares: whether the cold path can
//! return and skip the access. The emitter (`check.rs`) builds the cold call these say.

use crate::classify::may_be_pseudo;
use crate::collect::{Access, Range, Target};
use inkwell::values::{FunctionValue, PointerValue};

/// What decides a check's cold path, module-wide.
#[derive(Clone, Debug)]
pub struct ColdPaths<'ctx> {
    /// Whether the module makes pseudo-pointers (escaping locals or `__shared__` arrays).
    pub pseudo: bool,
    /// The module's kernels.
    pub kernels: Vec<FunctionValue<'ctx>>,
    /// A recover build: cold paths return and the access is skipped.
    pub recover: bool,
}

impl ColdPaths<'_> {
    /// Whether the check of range `r` (its root before recover-mode phis: `root`) goes to
    /// `__cusafe_slow`, which finishes pseudo-pointer checks and may return "skip".
    pub fn out_of_line(&self, r: &Range, root: PointerValue) -> bool {
        self.pseudo && matches!(r.target, Target::Heap) && may_be_pseudo(root, &self.kernels)
    }

    /// Whether a check of `acc` can return from its cold path and skip the access (a
    /// recover-mode build, or an out-of-line pseudo-pointer check): code between such a
    /// check and its access does not dominate what follows the access.
    pub fn may_skip(&self, acc: &Access) -> bool {
        self.recover || acc.ranges.iter().any(|r| self.out_of_line(r, r.root))
    }
}
