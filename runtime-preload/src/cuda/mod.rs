//! Everything that talks to CUDA: the real runtime functions behind the hooks, the
//! driver VMM backend, write ordering, and the device-visible pages.

pub mod driver;
pub mod kernels;
pub mod ordering;
pub mod real;
pub mod rtpage;
pub mod vmm;
