//! C++ constructs the census of public CUDA code (scripts/census.py) met: each test's numbers
//! are worked out by hand in its comment.

use crate::support::{failure, options as opts, sheet_with, total};
use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};

fn run_with(src: &str, o: AnalyzeOptions) -> Sheet {
    sheet_with(src, &o)
}

fn run(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    run_with(src, opts(grid, block, args))
}

fn fail(src: &str, args: &[(&str, &str)]) -> String {
    failure(src, &opts("1", "32", args))
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
fn a_texture_reference_read_outside_a_fetch_is_refused_by_name() {
    // A texture reference is only a fetch's handle (`tex1Dfetch(t_features, i)`, counted in
    // tests/texture.rs); read as a value it has none.
    let src = "texture<float, 1, cudaReadModeElementType> t_features;\n__global__ void k(float *o) {\n    o[threadIdx.x] = t_features;\n}\n";
    let e = fail(src, &[]);
    assert!(e.contains("m.cu:3:"), "{e}");
    assert!(e.contains("`t_features` is a texture or surface reference"), "{e}");
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

#[test]
fn a_method_of_an_explicit_specialization_and_a_prototype_in_a_body() {
    // simpleTemplates: `SharedMemory<T> smem; T *s = smem.getPointer();`, the primary template
    // declaring `extern __device__ void error(void);` so that it cannot be used. With
    // T = float: one warp, g[t] one request of 4 sectors, s[t] one shared store.
    let src = r#"
    template <typename T> struct SM {
        __device__ T *get() { extern __device__ void error(void); error(); return NULL; }
    };
    template <> struct SM<float> {
        __device__ float *get() { extern __shared__ float s_f[]; return s_f; }
    };
    template <class T> __global__ void k(T *g) {
        SM<T> sm;
        T *s = sm.get();
        s[threadIdx.x] = g[threadIdx.x];
    }"#;
    let mut o = opts("1", "32", &[("T", "float")]);
    o.shared_bytes = 128;
    let s = run_with(src, o);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(shared(&s, "store"), (1, 1));
}

#[test]
fn a_parenthesised_variable_before_and_is_not_a_cast() {
    // Rodinia's IN_RANGE: `((t)>=(lo) && (t)<=(hi))`, which the grammar reads as a cast of
    // `&&(t)` unless told `lo` is a variable. lo = 8, hi = 39, 64 threads: warp 0 lanes 8..31
    // (bytes 32..128: sectors 1..3), warp 1 lanes 32..39 (bytes 128..160: sector 4): two
    // requests of 4 sectors in all, each way. Read as a cast, every lane would be in range (8
    // sectors).
    let src = r#"
    #define IN_RANGE(x, min, max) ((x)>=(min) && (x)<=(max))
    __global__ void k(const float *a, float *b, int lo, int hi) {
        int t = threadIdx.x;
        if (IN_RANGE(t, lo, hi)) b[t] = a[t];
    }"#;
    let s = run(src, "1", "64", &[("lo", "8"), ("hi", "39")]);
    assert_eq!(total(&s, "global", "load"), (2, 4));
    assert_eq!(total(&s, "global", "store"), (2, 4));
}

#[test]
fn assignments_to_memory_used_as_values() {
    // One warp. `x[i] = y[i] = v4`: two 16-byte stores, 512 bytes each = 16 sectors.
    // `out[i] = cnt[i]++`: cnt[i] loaded once (4 sectors) and stored (4); out[i] stored (4).
    let src = r#"
    __global__ void k(float4 *x, float4 *y, float v, int *cnt, int *out) {
        int i = threadIdx.x;
        const float4 v4 = make_float4(v, v, v, v);
        x[i] = y[i] = v4;
        out[i] = cnt[i]++;
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (4, 16 + 16 + 4 + 4));
}

#[test]
fn memcpy_from_a_thread_array_default_parameters_and_fast_math() {
    // One warp. in[t] and out[t] are uint4: 512 bytes = 16 sectors each; the memcpy between
    // a thread's array and a register moves no memory. partial[t] copies data[t] (4 sectors
    // each way); a[t] is loaded once for both intrinsics (4 sectors), b[t] stored (4).
    let src = r#"
    __global__ void k(const uint4 *in, uint4 *out, int *data, const float *a, float *b, int *partial = NULL) {
        unsigned int r[4];
        uint4 v = in[threadIdx.x];
        r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
        uint4 o;
        memcpy(&o, r, sizeof(o));
        out[threadIdx.x] = o;
        partial[threadIdx.x] = data[threadIdx.x];
        b[threadIdx.x] = __log2f(a[threadIdx.x]) + __fdiv_rn(a[threadIdx.x], 2.0f);
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (3, 16 + 4 + 4));
    assert_eq!(total(&s, "global", "store"), (3, 16 + 4 + 4));
}

#[test]
fn device_heap_and_virtual_functions_are_refused_deliberately() {
    let heap = "__global__ void k(int **p) {\n    *p = (int *)malloc(16);\n}\n";
    let e = fail(heap, &[]);
    assert!(e.contains("m.cu:2:") && e.contains("device-heap") && e.contains("deliberately"), "{e}");
    let new = "__global__ void k(int **p) {\n    *p = new int[4];\n}\n";
    let e = fail(new, &[]);
    assert!(e.contains("m.cu:2:") && e.contains("device-heap"), "{e}");
    let virt = "class Shape { public: __device__ virtual float area() const = 0; };\n__global__ void k(Shape **s, float *o) {\n    o[threadIdx.x] = (*s)->area();\n}\n";
    let e = fail(virt, &[]);
    assert!(e.contains("m.cu:2:") && e.contains("virtual functions") && e.contains("deliberately"), "{e}");
}

#[test]
fn a_static_member_function_of_a_class_template() {
    // dwt2d's `FDWT53<WIN_SX, WIN_SY>::run(...)`: W = 2 binds inside. One warp: in[t] 4
    // sectors; out[2t] every other float, 256 bytes: 8 sectors.
    let src = r#"
    template <int W> struct Tile {
        __device__ static void run(const float *in, float *out) { out[threadIdx.x * W] = in[threadIdx.x]; }
    };
    __global__ void k(const float *in, float *out) { Tile<2>::run(in, out); }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 8));
}

#[test]
fn an_array_member_of_a_structure_passed_by_value() {
    // LargeKernelParameter: `p.param[i]` reads the kernel's parameter space, not global
    // memory. One warp: only result[t] is global, 4 sectors.
    let src = r#"
    typedef struct { int param[64]; } param_t;
    __global__ void k(__grid_constant__ const param_t p, int *result) {
        int tmp = 0;
        for (int i = 0; i < 64; i++) tmp += p.param[i];
        result[threadIdx.x] = tmp;
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (0, 0));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}
