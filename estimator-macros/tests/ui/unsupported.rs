// A construct outside the Rust kernel subset is an error at that construct.
use estimator_macros::sector_estimate;

mod thread {
    pub fn index_1d() -> u32 {
        0
    }
}

#[sector_estimate(grid = 4, block = 256)]
pub unsafe fn scale(a: &mut [f32]) {
    let i = thread::index_1d() as usize;
    let twice = |x: f32| 2.0 * x;
    a[i] = twice(a[i]);
}

fn main() {}
