// A value the analysis needs and the attribute does not give: the error names the parameter,
// points at the construct that needs it and says what to add. An unknown name is an error too.
use estimator_macros::sector_estimate;

mod thread {
    pub fn index_1d() -> u32 {
        0
    }
}

#[sector_estimate(grid = 4096, block = 256)]
pub unsafe fn vec_add(a: &[f32], b: &[f32], c: *mut f32, n: usize) {
    let i = thread::index_1d() as usize;
    if i < n {
        *c.add(i) = a[i] + b[i];
    }
}

#[sector_estimate(grid = 4, block = 256, len = 1024)]
pub unsafe fn copy(a: &[f32], b: &mut [f32]) {
    let i = thread::index_1d() as usize;
    b[i] = a[i];
}

fn main() {
    // The modules exist even when the analysis failed: no cascade of unresolved names.
    let _ = vec_add_sector_estimate::LOAD_SECTORS;
    let _ = copy_sector_estimate::SHEET;
}
