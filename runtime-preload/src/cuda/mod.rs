//! Everything that talks to CUDA: the real runtime functions behind the hooks, libcuda
//! as the dynamic linker sees it (`libcuda.rs`), the
//! driver VMM backend, write ordering, the device-visible pages and the device coverage
//! map.

pub mod coverage;
pub mod driver;
pub mod kernels;
pub mod libcuda;
pub mod ordering;
pub mod real;
pub mod rtpage;
pub mod vmm;
