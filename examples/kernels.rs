// kernels.rs -- Rust (cuda_std-style) twins of CUDA examples, for the Rust front end and the
// #[sector_estimate] attribute. Each kernel computes what its `.cu` twin computes, so the
// hand-worked numbers of the twin's header hold unchanged (see the `why` of each case):
//   vec_add           <-> vec_add.cu         (12 sectors per full warp)
//   vec_add_len       <-> vec_add.cu ragged  (the guard is `i < a.len()`: the launch gives a_len)
//   strided           <-> strided.cu         (lanes `stride` elements apart)
//   transpose_naive   <-> transpose_naive.cu (2-D block 32 x 8; writes 32 sectors per warp)
//   scale_grid_stride <-> grid_stride.cu     (`for i in (start..n).step_by(stride)`)
//   stencil1d         <-> stencil.cu         (`i > 0 && i < n - 1`, neighbours 5 sectors)
//
// Rust semantics the front end applies: `usize` is 64-bit and `u32`/`i32` 32-bit, arithmetic
// wraps as the GPU does, `thread::index_1d()` is blockIdx.x * blockDim.x + threadIdx.x as u32,
// slice bounds checks are assumed to pass (they are not memory accesses), slices alias nothing.

use cuda_std::*;

#[kernel]
pub unsafe fn vec_add(a: &[f32], b: &[f32], c: *mut f32, n: usize) {
    let i = thread::index_1d() as usize;
    if i < n {
        *c.add(i) = a[i] + b[i];
    }
}

#[kernel]
pub unsafe fn vec_add_len(a: &[f32], b: &[f32], c: &mut [f32]) {
    let i = thread::index_1d() as usize;
    if i < a.len() {
        c[i] = a[i] + b[i];
    }
}

#[kernel]
pub unsafe fn strided(a: &[f32], out: &mut [f32], stride: i32) {
    let i = thread::index_1d() as i32;
    out[i as usize] = a[(i * stride) as usize];
}

#[kernel]
pub unsafe fn transpose_naive(input: *const f32, out: *mut f32, rows: i32, cols: i32) {
    let row = (thread::block_idx_y() * thread::block_dim_y() + thread::thread_idx_y()) as i32;
    let col = (thread::block_idx_x() * thread::block_dim_x() + thread::thread_idx_x()) as i32;
    if row < rows && col < cols {
        out.add((col * rows + row) as usize).write(input.add((row * cols + col) as usize).read());
    }
}

#[kernel]
pub unsafe fn scale_grid_stride(input: &[f32], out: &mut [f32], n: usize) {
    let stride = thread::block_dim_x() as usize * thread::grid_dim_x() as usize;
    for i in (thread::index_1d() as usize..n).step_by(stride) {
        out[i] = 3.0 * input[i];
    }
}

#[kernel]
pub unsafe fn stencil1d(input: &[f32], out: &mut [f32], n: i32) {
    let i = thread::index_1d() as i32;
    if i > 0 && i < n - 1 {
        let i = i as usize;
        out[i] = input[i - 1] + input[i] + input[i + 1];
    }
}
