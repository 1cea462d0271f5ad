// An access over budget fails the build, spanned at that access: in a Rust kernel, and inside
// CUDA source (the string literal, naming the line in it).
use estimator_macros::sector_estimate;

mod thread {
    pub fn index_1d() -> u32 {
        0
    }
}

#[sector_estimate(grid = 256, block = 256, stride = 32, max_sectors_per_request = 4)]
pub unsafe fn gather(a: &[f32], out: &mut [f32], stride: usize) {
    let i = thread::index_1d() as usize;
    out[i] = a[i * stride];
}

#[sector_estimate(kernel = "column", grid = 64, block = 256, n = 4096, min_efficiency = 0.5)]
const COLUMN_CU: &str = r#"
__global__ void column(const float *m, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = m[i * n];
}
"#;

fn main() {}
