// A key that is neither an option of the attribute nor a parameter of the kernel: the error
// names it and lists both. `gpu` is an option.
use estimator_macros::sector_estimate;

mod thread {
    pub fn index_1d() -> u32 {
        0
    }
}

#[sector_estimate(grid = 4, block = 256, gpu = "a100", gpus = "h100")]
pub unsafe fn copy(a: &[f32], b: &mut [f32]) {
    let i = thread::index_1d() as usize;
    b[i] = a[i];
}

fn main() {}
