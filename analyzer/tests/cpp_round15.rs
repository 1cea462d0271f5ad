//! Round 15 of the census: HeCBench's sample `NR%13==10` and what the round before left. Each
//! test's numbers are worked out by hand in its comment (a warp is 32 lanes; a sector 32 bytes;
//! pointer parameters start 256-byte aligned).

use crate::support::{options, sheet_with, total};
use sector_analyzer::{AnalyzeOptions, Sheet};

fn kernel(src: &str, k: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet_with(src, &AnalyzeOptions { kernel: Some(k.into()), ..options(grid, block, args) })
}

/// tsne's broadcast kernels: a function object whose type is a template parameter, defined out
/// of line in a namespace.
const FUNCTOR_PARAM: &str = r#"
namespace ns {
template <typename Op, typename T>
__global__ void bcast(T *__restrict__ m, const T *__restrict__ v, const int N, const int M, Op op, const T alpha);
}
template <typename Op, typename T>
__global__ void ns::bcast(T *__restrict__ m, const T *__restrict__ v, const int N, const int M, Op op, const T alpha) {
  const int tid = threadIdx.x + blockIdx.x * blockDim.x;
  const int i = tid % N;
  const int j = tid / N;
  if (j < M) m[j * N + i] = op(m[j * N + i], alpha * v[j]);
}
"#;

#[test]
fn a_toolkit_function_object_as_a_template_argument_moves_no_memory() {
    // 4 blocks of 256 threads, N = 256: thread t reads and writes m[t] (32 warps of 128
    // contiguous bytes: 4 sectors each) and reads v[t / 256], one value a warp (1 sector).
    // `--kernel bcast` names `ns::bcast`, as its declaration and the profiler do.
    let args = [("N", "256"), ("M", "4"), ("Op", "thrust::divides<float>"), ("T", "float")];
    let s = kernel(FUNCTOR_PARAM, "bcast", "4", "256", &args);
    assert_eq!(total(&s, "global", "load"), (64, 32 * 4 + 32));
    assert_eq!(total(&s, "global", "store"), (32, 128));
}
