//! Issue 27, round 4 of the census: ordinary C found in Rodinia, cuda-samples and the modern
//! trees. Each test's numbers are worked out by hand in its comment (a warp is 32 lanes; a
//! sector 32 bytes; pointer parameters start 256-byte aligned).

use crate::support::{sheet, total};
use sector_analyzer::Sheet;

fn run(src: &str, grid: &str, block: &str) -> Sheet {
    sheet(src, grid, block, &[])
}

#[test]
fn a_member_of_an_element_of_an_array_member_in_memory() {
    // lavaMD's `d_box_gpu[bx].nei[k-1].number`: `nei` is an array of structures inside a
    // structure in memory, read (not an `operator[]` call). nei_str is 4 ints (16 B) and a long
    // at 16: 24 bytes. box_str: 4 ints, a long at 16, `nn` at 24, `nei` at 32 (aligned 8):
    // 32 + 26 * 24 = 656 bytes. `number` of nei[k-1] in box bx is at bx*656 + 32 + (k-1)*24 + 12:
    // bytes 44, 68 (box 0) and 700, 724 (box 1), 4 bytes each inside one sector; every lane the
    // same address. Two warps, k = 1, 2: 4 requests, 4 sectors.
    // out[k*64 + bx*32 + t] for k = 0..2: 128 contiguous bytes from a 128-byte boundary, 4
    // sectors; 3 stores per warp, 2 warps: 6 requests, 24 sectors.
    let src = r#"
    typedef struct nei_str { int x, y, z; int number; long offset; } nei_str;
    typedef struct box_str { int x, y, z; int number; long offset; int nn; nei_str nei[26]; } box_str;
    __global__ void k(box_str *d_box_gpu, int *out) {
        int bx = blockIdx.x;
        int pointer;
        for (int k = 0; k < 3; k++) {
            if (k == 0) pointer = bx;
            else pointer = d_box_gpu[bx].nei[k-1].number;
            out[k * 64 + bx * 32 + threadIdx.x] = pointer;
        }
    }"#;
    let s = run(src, "2", "32");
    assert_eq!(total(&s, "global", "load"), (4, 4));
    assert_eq!(total(&s, "global", "store"), (6, 24));
}

#[test]
fn a_class_with_operator_subscript_is_still_called_and_one_without_is_indexed() {
    // `w[t]` on a class with `operator[]` calls it (it reads p[t]); `v.nei[t & 3]` on a structure
    // without one is its member array (a thread's own values, no memory).
    // Loads: p[t] (operator[]) and q[t]: 128 contiguous bytes each, 4 sectors, one warp: 2
    // requests, 8 sectors. Store out[t]: 1 request, 4 sectors.
    let src = r#"
    struct Row { const float *p; __device__ float operator[](int i) const { return p[i]; } };
    struct Box { int nei[4]; };
    __global__ void k(const float *p, const float *q, float *out) {
        Row w{p};
        Box v{{0, 1, 2, 3}};
        int t = threadIdx.x;
        out[t] = w[t] + q[t] + v.nei[t & 3];
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (2, 8));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_pointer_member_of_a_constant_structure_is_a_pointer() {
    // heartwall's `&d_unique[bx].d_T[d_unique[bx].in_pointer]` on a `__constant__` array of
    // structures: the members are values read through the constant cache (no global traffic),
    // and `d_T` is a global pointer whose value the analysis does not know. The store
    // out[bx*32 + t]: 4 sectors per warp, 2 warps: 2 requests, 8 sectors, exact. The load
    // d_in[t] is one request per warp (2), its sectors an assumption stated on the sheet.
    let src = r#"
    struct params_unique { int point_no; float *d_T; int in_pointer; };
    __constant__ params_unique d_unique[4];
    __global__ void k(float *out) {
        int bx = blockIdx.x;
        float *d_in = &d_unique[bx].d_T[d_unique[bx].in_pointer];
        out[bx * 32 + threadIdx.x] = d_in[threadIdx.x];
    }"#;
    let s = run(src, "2", "32");
    assert_eq!(total(&s, "global", "store"), (2, 8));
    let load = s.instructions.iter().find(|r| r.op == "load").expect("the load of d_in[t]");
    assert_eq!(load.requests, 2);
    assert!(
        !load.exact && load.assumptions.iter().any(|a| a.contains("data read from memory")),
        "{:?}",
        load.assumptions
    );
    assert!(s.assumptions.iter().any(|a| a.contains("__constant__")), "{:?}", s.assumptions);
}

#[test]
fn a_range_check_indented_with_tabs_is_no_template() {
    // heartwall's `if(\trow > (a-1) &&\n\t\trow < (a+b) && \n\t\tcol > (c-1) && ...)`: tabs
    // around the variable, as around spaces, keep `row < (...) && col > (...)` a comparison.
    // r in 8..15 (r > 7 and r < 16): 8 lanes, a[8..15] is bytes 32..63, one sector; out alike.
    let src = "__global__ void k(const float *a, float *out) {\n\tint r = threadIdx.x;\n\tconst int n = 16;\n\tif(\tr > (7) &&\n\t\tr < (n+0) && \n\t\tr > (7)){\n\t\tout[r] = a[r];\n\t}\n}\n";
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (1, 1));
    assert_eq!(total(&s, "global", "store"), (1, 1));
}
