//! Where nvcc places a kernel's shared arrays in the block's shared window, as ptxas lays them
//! out: the static variables the kernel uses, each at the next multiple of its own alignment
//! (`__shared__ float a; __shared__ float b[64];` puts `b` at byte 4, not 16), in the order nvcc
//! emits them, then the dynamic (`extern`) array at a multiple of 16 bytes. A variable no
//! memory operation reaches takes no space (LLVM drops it). From nvcc 13.0's SASS:
//! `STS [UR4+0x104]` for a float declared after `float arr[64]` and a float.
//!
//! The emission order is clang's: the kernel's own variables in declaration order, those of
//! inlined functions and file scope as their definitions are emitted (a template or inline
//! helper after the kernel; a plain `__device__` function defined earlier, before it). The model
//! takes the kernel's first, then the others in the order the kernel first reaches them, and says
//! which places hold under every such order modulo 16 bytes: what merging shared loads into
//! 8- and 16-byte ones depends on ([`super::vector_loads`], [`super::unroll`]).

use super::*;

/// Each shared array's first byte in the window, and whether that byte's remainder modulo 16
/// is the same under every emission order the model admits.
#[derive(Clone, Debug)]
pub struct SharedLayout {
    pub base: Vec<i64>,
    pub certain: Vec<bool>,
    /// The places under the other emission orders the model admits.
    pub alternatives: Vec<Vec<i64>>,
}

impl SharedLayout {
    /// The largest power of two (up to 16) known to divide array `s`'s first byte; 16 for the
    /// start of the window.
    pub fn alignment(&self, s: SharedId) -> i128 {
        alignment_in(&self.base, s)
    }
}

/// [`SharedLayout::alignment`] in one of the layouts (`base` or an alternative).
pub fn alignment_in(bases: &[i64], s: SharedId) -> i128 {
    let b = bases[s.0 as usize];
    if b == 0 {
        16
    } else {
        (1i128 << b.trailing_zeros()).min(16)
    }
}

pub fn shared_layout(k: &Kernel) -> SharedLayout {
    let used = reached(k);
    let statics: Vec<usize> = (0..k.shared.len()).filter(|&i| !k.shared[i].is_extern).collect();
    let own: Vec<usize> = statics.iter().copied().filter(|&i| k.shared[i].in_kernel).collect();
    let others: Vec<usize> = statics.iter().copied().filter(|&i| !k.shared[i].in_kernel).collect();
    let reversed: Vec<usize> = others.iter().rev().copied().collect();
    let orders = [[&own, &others], [&others, &own], [&own, &reversed], [&reversed, &own]];
    let place = |order: [&Vec<usize>; 2]| {
        let mut at = vec![0i64; k.shared.len()];
        let mut off = 0i64;
        for &i in order.iter().flat_map(|o| o.iter()) {
            if !used[i] {
                continue;
            }
            let a = k.shared[i].align.max(1) as i64;
            off = (off + a - 1) / a * a;
            at[i] = off;
            off += k.shared[i].bytes() as i64;
        }
        // The dynamic array after the static ones, at a multiple of 16 bytes.
        for (i, a) in k.shared.iter().enumerate().filter(|(_, a)| a.is_extern) {
            let al = a.align.max(16) as i64;
            off = (off + al - 1) / al * al;
            at[i] = off;
        }
        at
    };
    let base = place(orders[0]);
    let mut certain = vec![true; k.shared.len()];
    let mut alternatives = Vec::new();
    for order in &orders[1..] {
        let other = place(*order);
        for i in 0..k.shared.len() {
            certain[i] &= other[i].rem_euclid(16) == base[i].rem_euclid(16);
        }
        if other != base && !alternatives.contains(&other) {
            alternatives.push(other);
        }
    }
    SharedLayout { base, certain, alternatives }
}

/// Which shared arrays an address in the kernel names.
fn reached(k: &Kernel) -> Vec<bool> {
    fn stmts(s: &[Stmt], used: &mut [bool]) {
        for s in s {
            match s {
                Stmt::Assign { value, .. } | Stmt::Eval(value) => expr(value, used),
                Stmt::Store { addr, value, .. } => {
                    expr(addr, used);
                    expr(value, used);
                }
                Stmt::If { cond, then, els, .. } => {
                    expr(cond, used);
                    stmts(then, used);
                    stmts(els, used);
                }
                Stmt::Loop { cond, body, step, .. } => {
                    if let Some(c) = cond {
                        expr(c, used);
                    }
                    stmts(body, used);
                    stmts(step, used);
                }
                _ => {}
            }
        }
    }
    fn expr(e: &Expr, used: &mut [bool]) {
        super::licm::walk(e, &mut |x| {
            if let Expr::SharedBase(s) = x {
                used[s.0 as usize] = true;
            }
        });
    }
    let mut used = vec![false; k.shared.len()];
    stmts(&k.body, &mut used);
    used
}
