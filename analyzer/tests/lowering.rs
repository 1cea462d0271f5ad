//! The front end tested on its own: the IR it makes of small kernels, printed (`--emit ir`), and
//! the address numbers load removal uses. Expected texts are written by hand from the C rules.

use sector_analyzer::analyze::lower;
use sector_analyzer::ir::{print, vn, Kernel};
use sector_analyzer::source::NoFiles;
use sector_analyzer::{AnalyzeOptions, Input, SourceFiles};

fn kernel(src: &str) -> Kernel {
    let mut files = SourceFiles::default();
    let m = lower(&Input::Source { name: "l.cu", text: src }, &AnalyzeOptions::default(), &NoFiles, &mut files)
        .unwrap_or_else(|d| panic!("{}", d.message));
    m.kernels.into_iter().next().expect("one kernel")
}

fn body(k: &Kernel) -> String {
    let ir = print::kernel(k);
    ir[ir.find("\n{").unwrap() + 1..].to_string()
}

#[test]
fn commuted_operands_are_two_operations_with_one_address() {
    let k = kernel(
        "__global__ void k(const float* a, float* o) {\n    int i = threadIdx.x;\n    o[i] = a[i + 1] * a[1 + i];\n}\n",
    );
    assert_eq!(
        body(&k),
        "{\n  l0 = i32(threadIdx.x)\n  store#2[(p1 +B (i64(l0) *.i64 4i64))] = (load#0[(p0 +B (i64((l0 +.i32 1i32)) *.i64 4i64))] *.f load#1[(p0 +B (i64((1i32 +.i32 l0)) *.i64 4i64))])\n}\n"
    );
    let n = vn::address_numbers(&k);
    assert_eq!(n[0], n[1], "i + 1 and 1 + i");
    assert_ne!(n[0], n[2], "o[i] is another address");
}

#[test]
fn addresses_differ_by_operand_order_only_where_the_operator_does_not_commute() {
    let k = kernel(
        "__global__ void k(const int* a, int* o, int j) {\n    int i = threadIdx.x;\n    o[i] = a[i - j] + a[j - i] + a[(i * 2) * j] + a[i * (j * 2)];\n}\n",
    );
    let n = vn::address_numbers(&k);
    assert_ne!(n[0], n[1], "i - j is not j - i");
    assert_eq!(n[2], n[3], "(i * 2) * j is i * (j * 2)");
}

#[test]
fn dead_loads_leave_the_ir_with_a_note() {
    let k = kernel("__global__ void k(const float* in, float* out) {\n    int t = threadIdx.x;\n    float unused = in[t];\n    in[t + 32];\n    out[t] = 1.0f;\n}\n");
    assert_eq!(body(&k), "{\n  l0 = i32(threadIdx.x)\n  store#2[(p1 +B (i64(l0) *.i64 4i64))] = 1.0f\n}\n");
    assert_eq!(k.notes.len(), 2);
    assert!(k.notes[0].starts_with("`in[t]` at 3:20: its value is never used"), "{}", k.notes[0]);
    assert!(k.notes[1].starts_with("`in[t + 32]` at 4:5:"), "{}", k.notes[1]);
}
