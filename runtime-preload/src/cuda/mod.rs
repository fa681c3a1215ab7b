//! Everything that talks to CUDA: the real runtime functions behind the hooks, the
//! driver VMM backend, write ordering, the device-visible pages and the device coverage
//! map.

pub mod coverage;
pub mod driver;
pub mod kernels;
pub mod ordering;
pub mod real;
pub mod rtpage;
pub mod vmm;
