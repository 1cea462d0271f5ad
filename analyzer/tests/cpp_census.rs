//! C++ constructs the census of public CUDA code (scripts/census.py) met: each test's numbers
//! are worked out by hand in its comment.

use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};

fn opts(grid: &str, block: &str, args: &[(&str, &str)]) -> AnalyzeOptions {
    AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    }
}

fn run_with(src: &str, o: AnalyzeOptions) -> Sheet {
    analyze_source("m.cu", src, &o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
}

fn run(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    run_with(src, opts(grid, block, args))
}

fn fail(src: &str, args: &[(&str, &str)]) -> String {
    match analyze_source("m.cu", src, &opts("1", "32", args)) {
        Ok(_) => panic!("expected an error"),
        Err(f) => f.one_line(),
    }
}

/// (requests, sectors) of the rows with this op and space.
fn total(s: &Sheet, space: &str, op: &str) -> (u64, u64) {
    s.instructions
        .iter()
        .filter(|r| r.space == space && r.op == op)
        .fold((0, 0), |(a, b), r| (a + r.requests, b + r.sectors))
}

/// (requests, wavefronts) of the shared rows with this op.
fn shared(s: &Sheet, op: &str) -> (u64, u64) {
    s.instructions
        .iter()
        .filter(|r| r.space == "shared" && r.op == op)
        .fold((0, 0), |(a, b), r| (a + r.requests, b + r.wavefronts.unwrap_or(0)))
}

/// cuda-samples' reduction: a class template whose conversion operator returns an
/// `extern __shared__` array, with an explicit specialization for `double`.
const SHARED_MEMORY: &str = r#"
template <class T> struct SharedMemory {
    __device__ inline operator T *() {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
    __device__ inline operator const T *() const {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};
template <> struct SharedMemory<double> {
    __device__ inline operator double *() {
        __shared__ double fixed[64];
        return fixed;
    }
};
template <class T> __global__ void k(const T *in, T *out) {
    T *s = SharedMemory<T>();
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[31 - threadIdx.x];
}
"#;

#[test]
fn a_class_converted_to_a_pointer_keeps_the_shared_origin() {
    // One warp of floats: in[t] and out[t] are 128 bytes each, 4 sectors, global; s[t] and
    // s[31 - t] are shared (one request, one wavefront each: 32 distinct banks), not global.
    let mut o = opts("1", "32", &[("T", "float")]);
    o.shared_bytes = 128;
    let s = run_with(SHARED_MEMORY, o);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    assert_eq!(shared(&s, "store"), (1, 1));
    assert_eq!(shared(&s, "load"), (1, 1));
}

#[test]
fn an_explicit_specialization_of_the_class_is_the_one_used() {
    // T = double takes `SharedMemory<double>`, whose static array needs no dynamic shared
    // memory (the generic one's `extern` array would ask for --shared-bytes). 32 doubles are
    // 256 bytes: 8 global sectors each way, two shared wavefronts (128 bytes each) per access.
    let s = run(SHARED_MEMORY, "1", "32", &[("T", "double")]);
    assert_eq!(total(&s, "global", "load"), (1, 8));
    assert_eq!(total(&s, "global", "store"), (1, 8));
    assert_eq!(shared(&s, "store"), (1, 2));
    assert_eq!(shared(&s, "load"), (1, 2));
    // The generic template with T = double would need dynamic shared memory: asked for.
    let e = match analyze_source(
        "m.cu",
        &SHARED_MEMORY
            .replace("SharedMemory<double>", "Other<double>")
            .replace("template <> struct Other<double>", "template <class T> struct Other"),
        &opts("1", "32", &[("T", "double")]),
    ) {
        Ok(_) => panic!("the extern array needs --shared-bytes"),
        Err(f) => f.one_line(),
    };
    assert!(e.contains("shared"), "{e}");
}

const DEVICE_VARIABLES: &str = r#"
__device__ int flag;
__device__ unsigned int counts[64];
__device__ float table[4][32];
__global__ void k(const float *a, float *b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i];
    b[i] = v * (float)flag;
    table[blockIdx.x][threadIdx.x % 32] = v;
    if (threadIdx.x % 32 == 0) atomicAdd(&counts[threadIdx.x / 32], 1);
}
"#;

#[test]
fn device_variables_are_global_memory_of_their_own() {
    // 4 blocks of 64 threads: 8 warps.
    // a[i], b[i]: 8 requests x 128 bytes = 4 sectors each.
    // flag: every lane reads the same 4 bytes: 8 requests of 1 sector.
    // table[blockIdx.x][t % 32]: row blockIdx.x (128 bytes at 128 x blockIdx.x from a 256-byte
    // aligned base): 8 requests of 4 sectors.
    // atomicAdd(&counts[t / 32]): lane 0 of each warp, result unused: 8 RED of 1 sector.
    let s = run(DEVICE_VARIABLES, "4", "64", &[]);
    assert_eq!(total(&s, "global", "load"), (8 + 8, 32 + 8));
    assert_eq!(total(&s, "global", "store"), (8 + 8, 32 + 32));
    assert_eq!(total(&s, "global", "red"), (8, 8));
    let fp = |name: &str| s.footprints.iter().find(|f| f.param == name).unwrap_or_else(|| panic!("{name}"));
    // Bytes touched: flag 0..4; counts[0] and counts[1]: 0..8; table's 4 rows: 0..512.
    assert!(fp("flag").device_variable && fp("flag").loaded && !fp("flag").stored);
    assert_eq!((fp("flag").min_byte, fp("flag").end_byte), (0, 4));
    assert_eq!((fp("counts").min_byte, fp("counts").end_byte), (0, 8));
    assert_eq!((fp("table").min_byte, fp("table").end_byte), (0, 512));
    assert!(!fp("a").device_variable);
    assert!(s.assumptions.iter().any(|a| a.contains("`flag` is a `__device__` variable")));
}

#[test]
fn a_device_variable_unused_by_a_kernel_gives_it_no_row() {
    let src = "__device__ int unused;\n__global__ void k(float *b) { b[threadIdx.x] = 1.0f; }\n";
    let s = run(src, "1", "32", &[]);
    assert_eq!(s.footprints.len(), 1);
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn texture_references_are_refused_as_textures_by_name() {
    let src = "texture<float, 1, cudaReadModeElementType> t_features;\n__global__ void k(float *o) {\n    o[threadIdx.x] = tex1Dfetch(t_features, threadIdx.x);\n}\n";
    let e = fail(src, &[]);
    assert!(e.contains("m.cu:3:"), "{e}");
    assert!(e.contains("`t_features` is a texture reference") && e.contains("not modelled"), "{e}");
}

#[test]
fn warp_matrix_fragments_are_refused_deliberately_at_their_first_use() {
    let src = "__global__ void k(half *a, float *c) {\n    typedef int4 copy_t;\n    nvcuda::wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> f;\n    wmma::load_matrix_sync(f, a, 16);\n}\n";
    let e = fail(src, &[]);
    assert!(e.contains("m.cu:3:"), "{e}");
    assert!(e.contains("deliberately not modelled") && e.contains("wmma"), "{e}");
}

#[test]
fn a_typedef_inside_a_body_names_its_type() {
    // One warp copies 32 int4 (16 bytes a lane): one request of 512 bytes = 16 sectors each way.
    let src = r#"
    __global__ void k(const int *in, int *out) {
        typedef int4 copy_t;
        using ptr_t = const copy_t *;
        *((copy_t *)out + threadIdx.x) = *((ptr_t)in + threadIdx.x);
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 16));
    assert_eq!(total(&s, "global", "store"), (1, 16));
}
