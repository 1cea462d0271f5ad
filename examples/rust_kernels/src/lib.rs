//! A user's crate: `#[sector_estimate]` on Rust kernels and on CUDA source kept in constants,
//! depending on nothing but `estimator-macros`. Building it runs the analysis; the `const`
//! assertions below are checked by the compiler, so `cargo build` alone proves the numbers
//! (they are the hand-worked numbers of `examples/vec_add.cu`, `strided.cu` and
//! `transpose_naive.cu`).
//!
//! The kernels are written against cuda_std's `thread` functions; the host build here has a
//! stand-in module with the same names, so the crate compiles without a GPU toolchain.

use estimator_macros::sector_estimate;

/// Host stand-ins for `cuda_std::thread` (only the signatures matter here).
pub mod thread {
    pub fn index_1d() -> u32 {
        0
    }
    pub fn thread_idx_x() -> u32 {
        0
    }
    pub fn thread_idx_y() -> u32 {
        0
    }
    pub fn block_idx_x() -> u32 {
        0
    }
    pub fn block_idx_y() -> u32 {
        0
    }
    pub fn block_dim_x() -> u32 {
        1
    }
    pub fn block_dim_y() -> u32 {
        1
    }
}

/// `c[i] = a[i] + b[i]`, one element per thread.
///
/// # Safety
/// `c` must point to `n` writable floats; `a` and `b` hold at least `n` elements.
#[sector_estimate(grid = 4096, block = 256, n = 1048576, max_sectors_per_request = 4)]
pub unsafe fn vec_add(a: &[f32], b: &[f32], c: *mut f32, n: usize) {
    let i = thread::index_1d() as usize;
    if i < n {
        *c.add(i) = a[i] + b[i];
    }
}

/// The same kernel as CUDA source, the way `cudarc` users keep kernels.
#[sector_estimate(kernel = "vec_add", grid = 4096, block = 256, n = 1048576, min_efficiency = 1.0)]
pub const VEC_ADD_CU: &str = r#"
extern "C" __global__ void vec_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"#;

/// `out[i] = a[i * stride]`: with stride 2 each warp's load spans 8 sectors.
///
/// # Safety
/// `a` must hold `stride * (grid * block)` elements.
#[sector_estimate(grid = 256, block = 256, stride = 2, max_sectors_per_request = 8)]
pub unsafe fn strided(a: &[f32], out: &mut [f32], stride: usize) {
    let i = thread::index_1d() as usize;
    out[i] = a[i * stride];
}

/// A 2-D launch: a tuple for `grid` and `block`.
#[sector_estimate(kernel = "transpose_naive", grid = (32, 125), block = (32, 8), rows = 1000, cols = 1000)]
pub const TRANSPOSE_CU: &str = r#"
__global__ void transpose_naive(const float *in, float *out, int rows, int cols)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols) {
        out[col * rows + row] = in[row * cols + col];
    }
}
"#;

/// The Rust twin of `TRANSPOSE_CU`.
///
/// # Safety
/// `input` and `out` must hold `rows * cols` floats.
#[sector_estimate(grid = (32, 125), block = (32, 8), rows = 1000, cols = 1000)]
pub unsafe fn transpose_naive(input: *const f32, out: *mut f32, rows: i32, cols: i32) {
    let row = (thread::block_idx_y() * thread::block_dim_y() + thread::thread_idx_y()) as i32;
    let col = (thread::block_idx_x() * thread::block_dim_x() + thread::thread_idx_x()) as i32;
    if row < rows && col < cols {
        *out.add((col * rows + row) as usize) = *input.add((row * cols + col) as usize);
    }
}

// Checked at compile time: the hand-worked numbers of examples/vec_add.cu (vec_add_1m).
const _: () = {
    assert!(vec_add_sector_estimate::LOAD_REQUESTS == 65_536);
    assert!(vec_add_sector_estimate::LOAD_SECTORS == 262_144);
    assert!(vec_add_sector_estimate::STORE_REQUESTS == 32_768);
    assert!(vec_add_sector_estimate::STORE_SECTORS == 131_072);
    assert!(vec_add_sector_estimate::LOGICAL_BYTES == 12_582_912);
    // The Rust kernel and its CUDA twin: the same accounting.
    assert!(vec_add_cu_sector_estimate::LOAD_REQUESTS == vec_add_sector_estimate::LOAD_REQUESTS);
    assert!(vec_add_cu_sector_estimate::LOAD_SECTORS == vec_add_sector_estimate::LOAD_SECTORS);
    assert!(vec_add_cu_sector_estimate::STORE_REQUESTS == vec_add_sector_estimate::STORE_REQUESTS);
    assert!(vec_add_cu_sector_estimate::STORE_SECTORS == vec_add_sector_estimate::STORE_SECTORS);
    assert!(vec_add_cu_sector_estimate::LOGICAL_BYTES == vec_add_sector_estimate::LOGICAL_BYTES);
    // strided_2 of examples/strided.cu: 2,048 warps, 8 sectors per load, 4 per store.
    assert!(strided_sector_estimate::LOAD_SECTORS == 16_384);
    assert!(strided_sector_estimate::STORE_SECTORS == 8_192);
    // transpose_naive_1000: 32,000 warps (8-lane warps at the right edge); reads 125,000
    // sectors, writes 1,000,000 (every lane its own sector).
    assert!(transpose_cu_sector_estimate::LOAD_REQUESTS == 32_000);
    assert!(transpose_cu_sector_estimate::LOAD_SECTORS == 125_000);
    assert!(transpose_cu_sector_estimate::STORE_SECTORS == 1_000_000);
    assert!(transpose_naive_sector_estimate::LOAD_SECTORS == transpose_cu_sector_estimate::LOAD_SECTORS);
    assert!(transpose_naive_sector_estimate::STORE_SECTORS == transpose_cu_sector_estimate::STORE_SECTORS);
    assert!(transpose_naive_sector_estimate::LOGICAL_BYTES == 8_000_000);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_the_hand_worked_numbers() {
        assert_eq!(vec_add_sector_estimate::LOAD_REQUESTS, 65_536);
        assert_eq!(vec_add_sector_estimate::LOAD_SECTORS, 262_144);
        assert_eq!(vec_add_sector_estimate::STORE_REQUESTS, 32_768);
        assert_eq!(vec_add_sector_estimate::STORE_SECTORS, 131_072);
        assert_eq!(vec_add_sector_estimate::LOGICAL_BYTES, 12_582_912);
        assert_eq!(vec_add_sector_estimate::GRID, [4096, 1, 1]);
        assert_eq!(transpose_cu_sector_estimate::BLOCK, [32, 8, 1]);
    }

    #[test]
    fn rust_and_cuda_sheets_agree() {
        // The per-access table and totals of the two sheets are the same numbers; only the
        // file, the line numbers and the access texts differ.
        let numbers = |sheet: &str| -> Vec<String> {
            sheet
                .lines()
                .filter(|l| l.trim_start().starts_with("global "))
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect()
        };
        assert_eq!(numbers(vec_add_sector_estimate::SHEET), numbers(vec_add_cu_sector_estimate::SHEET));
        assert!(vec_add_sector_estimate::SHEET.contains("kernel `vec_add`"));
        assert!(vec_add_cu_sector_estimate::JSON.contains("\"kernel\": \"vec_add\""));
    }

    #[test]
    fn sheet_lines_point_into_this_file() {
        // The Rust kernel's rows carry this file's line numbers.
        let sheet = vec_add_sector_estimate::SHEET;
        let src = include_str!("lib.rs");
        let access = src.lines().position(|l| l.contains("*c.add(i) = a[i] + b[i];")).unwrap() + 1;
        assert!(sheet.contains(&format!("{access}:9 ")), "{sheet}");
    }
}
