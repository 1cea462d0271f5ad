// cuda_std's `#[kernel]` above or below `#[sector_estimate]`: both analyse the function as
// written. `kernel` here is a stand-in that makes what cuda_std's does (attributes,
// `extern "C"`, parameter checks at the body's top), so the budget error shows the analysis
// ran on the user's lines in both orders.
use estimator_macros::sector_estimate;
use user_crate_kernel_stand_in::kernel;

mod thread {
    pub fn index_1d() -> u32 {
        0
    }
}

#[kernel]
#[sector_estimate(grid = 4, block = 256, stride = 2, max_sectors_per_request = 4)]
pub unsafe fn above(a: &[f32], out: &mut [f32], stride: usize) {
    let i = thread::index_1d() as usize;
    out[i] = a[i * stride];
}

#[sector_estimate(grid = 4, block = 256, stride = 2, max_sectors_per_request = 4)]
#[kernel]
pub unsafe fn below(a: &[f32], out: &mut [f32], stride: usize) {
    let i = thread::index_1d() as usize;
    out[i] = a[i * stride];
}

fn main() {}
