//! Lane values: what one lane holds ([`V`]), a warp's values of one expression in their
//! compact forms ([`Vals`]), the buffer pool, and C's integer and float arithmetic on them.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum K {
    Int(i128),
    Float(f64),
    Ptr(Base, i64),
    /// Pointer into `Base` at an unknown (data-dependent) offset.
    PtrUnknown(Base),
    /// Data read from memory that the analysis does not know.
    Unknown,
    /// Depends on a parameter that has no value.
    Missing(ParamId),
    Undef,
}

/// A lane's value; `data` marks values derived from memory contents.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct V {
    pub(super) k: K,
    pub(super) data: bool,
}

pub(super) const UNDEF: V = V { k: K::Undef, data: false };

pub(super) type Lanes = [V; WARP];

/// Whether two lane values are identical, floats compared by their bits: a lane holding `-0.0`
/// (or one NaN) is not interchangeable with one holding `0.0` (or another NaN).
pub(super) fn same(a: V, b: V) -> bool {
    a.data == b.data
        && match (a.k, b.k) {
            (K::Float(x), K::Float(y)) => x.to_bits() == y.to_bits(),
            (x, y) => x == y,
        }
}

pub(super) type Ints = [i128; WARP];
pub(super) type Offsets = [i64; WARP];

/// A warp's values of one expression, for the lanes of the mask it was evaluated under; lanes
/// outside that mask hold anything, and nothing reads them.
///
/// Most values of a kernel are the same in every lane (constants, parameters, `blockIdx`, a loop
/// counter all lanes share, data nobody knows), and most of the others are plain integers (an
/// index built from `threadIdx`). Both get a compact form, so that they are computed once, or in
/// a tight loop, instead of as 32 general lane values. The forms are only shorthands: every
/// operation gives each lane exactly what computing that lane's [`V`] alone would give.
pub(super) enum Vals {
    /// Every lane of the mask holds this value.
    Same(V),
    /// Every lane of the mask holds `V { k: K::Int(ints[lane]), data }`.
    Ints(Box<Ints>, bool),
    /// Every lane of the mask holds `V { k: K::Ptr(base, offsets[lane]), data }`.
    Ptrs(Base, Box<Offsets>, bool),
    /// Any values.
    Lanes(Box<Lanes>),
}

impl Vals {
    #[inline]
    pub(super) fn at(&self, l: usize) -> V {
        match self {
            Vals::Same(v) => *v,
            Vals::Ints(x, data) => V { k: K::Int(x[l]), data: *data },
            Vals::Ptrs(base, o, data) => V { k: K::Ptr(*base, o[l]), data: *data },
            Vals::Lanes(b) => b[l],
        }
    }
}

/// Buffers handed back after use, so that evaluating per-lane expressions allocates only until
/// the deepest expression has been seen once. They stay boxed: a [`Vals`] takes one over
/// without copying it.
#[derive(Default)]
#[allow(clippy::vec_box)]
pub(super) struct Pool {
    pub(super) lanes: Vec<Box<Lanes>>,
    pub(super) ints: Vec<Box<Ints>>,
    pub(super) offsets: Vec<Box<Offsets>>,
}

impl Pool {
    pub(super) fn lanes(&mut self) -> Box<Lanes> {
        self.lanes.pop().unwrap_or_else(|| Box::new([UNDEF; WARP]))
    }
    pub(super) fn ints(&mut self) -> Box<Ints> {
        self.ints.pop().unwrap_or_else(|| Box::new([0; WARP]))
    }
    pub(super) fn offsets(&mut self) -> Box<Offsets> {
        self.offsets.pop().unwrap_or_else(|| Box::new([0; WARP]))
    }
    pub(super) fn put(&mut self, v: Vals) {
        match v {
            Vals::Same(_) => {}
            Vals::Ints(b, _) => self.ints.push(b),
            Vals::Ptrs(_, b, _) => self.offsets.push(b),
            Vals::Lanes(b) => self.lanes.push(b),
        }
    }

    /// The most compact form of the values `b` holds in lanes `m` (not empty).
    pub(super) fn pack(&mut self, m: u32, b: Box<Lanes>) -> Vals {
        let first = b[m.trailing_zeros() as usize];
        if lanes(m).all(|l| same(b[l], first)) {
            self.lanes.push(b);
            return Vals::Same(first);
        }
        match first.k {
            K::Int(_) => {
                let mut x = self.ints();
                for l in lanes(m) {
                    match b[l] {
                        V { k: K::Int(i), data } if data == first.data => x[l] = i,
                        _ => {
                            self.ints.push(x);
                            return Vals::Lanes(b);
                        }
                    }
                }
                self.lanes.push(b);
                Vals::Ints(x, first.data)
            }
            K::Ptr(base, _) => {
                let mut o = self.offsets();
                for l in lanes(m) {
                    match b[l] {
                        V { k: K::Ptr(bl, off), data } if bl == base && data == first.data => o[l] = off,
                        _ => {
                            self.offsets.push(o);
                            return Vals::Lanes(b);
                        }
                    }
                }
                self.lanes.push(b);
                Vals::Ptrs(base, o, first.data)
            }
            _ => Vals::Lanes(b),
        }
    }

    /// `f` of each lane of `m`; once when the operand is uniform.
    #[inline]
    pub(super) fn map1(&mut self, m: u32, a: Vals, mut f: impl FnMut(V) -> V) -> Vals {
        if let Vals::Same(x) = a {
            return Vals::Same(f(x));
        }
        let mut out = self.lanes();
        for l in lanes(m) {
            out[l] = f(a.at(l));
        }
        self.put(a);
        self.pack(m, out)
    }

    /// `f` of each lane of `m`, lanes in order so that the first failing lane reports; once when
    /// both operands are uniform.
    #[inline]
    pub(super) fn map2(&mut self, m: u32, a: Vals, b: Vals, mut f: impl FnMut(V, V) -> Result<V>) -> Result<Vals> {
        if let (Vals::Same(x), Vals::Same(y)) = (&a, &b) {
            return Ok(Vals::Same(f(*x, *y)?));
        }
        let mut out = self.lanes();
        for l in lanes(m) {
            out[l] = f(a.at(l), b.at(l))?;
        }
        self.put(a);
        self.put(b);
        Ok(self.pack(m, out))
    }

    /// Integer arithmetic: [`int_op`] in a tight loop when both sides are integers in every
    /// lane, which is what [`int_binary`] would do lane by lane.
    pub(super) fn int_binary(&mut self, m: u32, op: BinOp, ty: IntTy, a: Vals, b: Vals, span: Span) -> Result<Vals> {
        Ok(match (a, b) {
            (Vals::Ints(mut x, dx), Vals::Ints(y, dy)) => {
                int_lanes(m, op, ty, span, &mut x, |x, l| (x, y[l]))?;
                self.ints.push(y);
                Vals::Ints(x, dx || dy)
            }
            (Vals::Ints(mut x, dx), Vals::Same(V { k: K::Int(y), data: dy })) => {
                int_lanes(m, op, ty, span, &mut x, |x, _| (x, y))?;
                Vals::Ints(x, dx || dy)
            }
            (Vals::Same(V { k: K::Int(x), data: dx }), Vals::Ints(mut y, dy)) => {
                int_lanes(m, op, ty, span, &mut y, |y, _| (x, y))?;
                Vals::Ints(y, dx || dy)
            }
            (a, b) => self.map2(m, a, b, |x, y| int_binary(op, ty, x, y, span))?,
        })
    }

    /// A pointer plus a byte offset: in a tight loop when the pointers lie in one object and the
    /// offsets are integers, which is what the general case does lane by lane.
    pub(super) fn ptr_offset(&mut self, m: u32, p: Vals, b: Vals) -> Result<Vals> {
        let add = |o: i64, d: i128| o.wrapping_add(d as i64);
        Ok(match (p, b) {
            (Vals::Same(V { k: K::Ptr(base, o), data: dp }), Vals::Ints(d, db)) => {
                let mut out = self.offsets();
                for l in lanes(m) {
                    out[l] = add(o, d[l]);
                }
                self.ints.push(d);
                Vals::Ptrs(base, out, dp || db)
            }
            (Vals::Ptrs(base, mut o, dp), Vals::Same(V { k: K::Int(d), data: db })) => {
                for l in lanes(m) {
                    o[l] = add(o[l], d);
                }
                Vals::Ptrs(base, o, dp || db)
            }
            (Vals::Ptrs(base, mut o, dp), Vals::Ints(d, db)) => {
                for l in lanes(m) {
                    o[l] = add(o[l], d[l]);
                }
                self.ints.push(d);
                Vals::Ptrs(base, o, dp || db)
            }
            (p, b) => self.map2(m, p, b, |p, b| {
                let data = p.data || b.data;
                Ok(match (p.k, b.k) {
                    (K::Ptr(base, o), K::Int(d)) => V { k: K::Ptr(base, add(o, d)), data },
                    (K::Ptr(base, _), K::Unknown) | (K::PtrUnknown(base), _) => V { k: K::PtrUnknown(base), data },
                    (K::Missing(p), _) | (_, K::Missing(p)) => V { k: K::Missing(p), data },
                    (K::Undef, _) | (_, K::Undef) => UNDEF,
                    _ => V { k: K::Unknown, data: true },
                })
            })?,
        })
    }

    /// A copy of `v`'s values.
    pub(super) fn copy(&mut self, v: &Vals) -> Vals {
        match v {
            Vals::Same(x) => Vals::Same(*x),
            Vals::Ints(src, data) => {
                let mut b = self.ints();
                *b = **src;
                Vals::Ints(b, *data)
            }
            Vals::Ptrs(base, src, data) => {
                let mut b = self.offsets();
                *b = **src;
                Vals::Ptrs(*base, b, *data)
            }
            Vals::Lanes(src) => {
                let mut b = self.lanes();
                *b = **src;
                Vals::Lanes(b)
            }
        }
    }
}

/// The lanes of mask `m`, lowest first.
#[inline]
pub(crate) fn lanes(m: u32) -> impl Iterator<Item = usize> {
    let mut m = m;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

pub(super) fn int_binary(op: BinOp, ty: IntTy, a: V, b: V, span: Span) -> Result<V> {
    let data = a.data || b.data;
    let (x, y) = match (a.k, b.k) {
        (K::Int(x), K::Int(y)) => (x, y),
        (K::Missing(p), _) | (_, K::Missing(p)) => return Ok(V { k: K::Missing(p), data }),
        (K::Undef, _) | (_, K::Undef) => return Ok(UNDEF),
        // Pointer comparisons against pointers of the same base (loop bounds like p < end).
        (K::Ptr(ba, oa), K::Ptr(bb, ob)) if ba == bb => (oa as i128, ob as i128),
        // A pointer into a buffer is never null (`p == nullptr ? 0 : p[i]`, `if (!p) return`).
        (K::Ptr(..), K::Int(0)) | (K::Int(0), K::Ptr(..)) if matches!(op, BinOp::Eq | BinOp::Ne) => {
            return Ok(V { k: K::Int((op == BinOp::Ne) as i128), data });
        }
        _ => return Ok(V { k: K::Unknown, data: true }),
    };
    Ok(V { k: K::Int(int_op(op, ty, x, y, span)?), data })
}

/// `out[l] = x op y` for the lanes `l` of `m` in order, where `(x, y) = operands(out[l], l)`.
/// The loop is written out once per operator, so that the operator is decided once per warp
/// instead of in every lane.
#[inline(always)]
pub(super) fn int_lanes(
    m: u32,
    op: BinOp,
    ty: IntTy,
    span: Span,
    out: &mut Ints,
    operands: impl Fn(i128, usize) -> (i128, i128),
) -> Result<()> {
    macro_rules! each_op {
        ($($op:ident)*) => {
            match op {
                $(BinOp::$op => {
                    for l in lanes(m) {
                        let (x, y) = operands(out[l], l);
                        out[l] = int_op(BinOp::$op, ty, x, y, span)?;
                    }
                })*
            }
        };
    }
    each_op!(Add Sub Mul Div Rem Shl Shr And Or Xor Lt Le Gt Ge Eq Ne Min Max);
    Ok(())
}

/// The value of a math function that is exact in floating point (`ceil`, `floor`, `trunc`,
/// `fabs`, `rint`, and their `f` forms) of a known argument; `None` for any other function.
/// A grid-size computation such as `ceil((double)n / 512)` then stays known.
pub(crate) fn exact_float_fn(what: &str, x: f64) -> Option<f64> {
    Some(match what {
        "ceil()" | "ceilf()" => x.ceil(),
        "floor()" | "floorf()" => x.floor(),
        "trunc()" | "truncf()" => x.trunc(),
        "fabs()" | "fabsf()" => x.abs(),
        // Round half to even, as the GPU's `rint` does.
        "rint()" | "rintf()" => x.round_ties_even(),
        // IEEE square roots, correctly rounded, as nvcc compiles them by default (not under
        // --use_fast_math): `(int)sqrtf(float(k))` of a perfect square is its root.
        "sqrt()" => x.sqrt(),
        "sqrtf()" => (x as f32).sqrt() as f64,
        _ => return None,
    })
}

/// A shift by a constant amount outside the width, as written (`x << 32`): C++ leaves it
/// undefined and nvcc folds it to an unspecified value, so it is an error when it runs. A
/// run-time amount is the hardware's ([`int_op`]).
pub(crate) fn constant_shift(op: BinOp, ty: IntTy, rhs: &Expr, span: Span) -> Result<()> {
    fn literal(e: &Expr) -> Option<i128> {
        match e {
            Expr::Int(v, _) => Some(*v),
            Expr::ToInt { ty, arg } => literal(arg).map(|v| ty.wrap(v)),
            _ => None,
        }
    }
    let (BinOp::Shl | BinOp::Shr, Some(y)) = (op, literal(rhs)) else { return Ok(()) };
    let w = ty.bits.max(32) as i128;
    if y < 0 || y >= w {
        return Err(Diagnostic::at(
            ErrorKind::Arithmetic,
            span,
            format!("shift by the constant {y} is outside 0..{w} for {}", ty.name()),
        )
        .note("C++ leaves it undefined and nvcc folds it to an unspecified value; a shift by a run-time amount is counted as the GPU does it (clamped to the width)"));
    }
    Ok(())
}

/// `x op y` in type `ty`; comparisons give 0 or 1. A shift by an amount outside the width is
/// the GPU's: clamped (see [`constant_shift`] for one written as a constant).
#[inline(always)]
pub(crate) fn int_op(op: BinOp, ty: IntTy, x: i128, y: i128, span: Span) -> Result<i128> {
    let cmp = |c: bool| Ok(c as i128);
    let v = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div | BinOp::Rem => {
            if y == 0 {
                return Err(Diagnostic::at(ErrorKind::Arithmetic, span, "integer division by zero in this expression"));
            }
            if op == BinOp::Div {
                x.wrapping_div(y)
            } else {
                x.wrapping_rem(y)
            }
        }
        BinOp::Shl | BinOp::Shr => {
            let w = ty.bits.max(32) as i128;
            if y < 0 || y >= w {
                // The GPU's shift (PTX `shl`/`shr`, SASS `SHF` in clamp mode) reads its amount
                // as unsigned and clamps it to the width: a left shift and a logical right shift
                // give 0, an arithmetic right shift the sign.
                return Ok(match op {
                    BinOp::Shr if ty.signed => wrap(ty, x) >> (w - 1),
                    _ => 0,
                });
            }
            if op == BinOp::Shl {
                x << y
            } else {
                x >> y
            }
        }
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Lt => return cmp(x < y),
        BinOp::Le => return cmp(x <= y),
        BinOp::Gt => return cmp(x > y),
        BinOp::Ge => return cmp(x >= y),
        BinOp::Eq => return cmp(x == y),
        BinOp::Ne => return cmp(x != y),
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
    };
    Ok(wrap(ty, v))
}

/// [`IntTy::wrap`], computed on the low 64 bits for types up to 64 bits wide: C's conversion
/// keeps the type's low bits and sign- or zero-extends them, which two word shifts do without
/// the masks and branches on `i128`.
#[inline(always)]
pub(super) fn wrap(ty: IntTy, v: i128) -> i128 {
    if !(2..=64).contains(&ty.bits) {
        return ty.wrap(v);
    }
    let unused = 64 - ty.bits as u32;
    // The type's bits at the top of a word, then shifted back down, extending the sign or not.
    let top = (v as i64) << unused;
    if ty.signed {
        (top >> unused) as i128
    } else {
        ((top as u64) >> unused) as i128
    }
}

pub(super) fn float_binary(op: BinOp, a: V, b: V) -> V {
    let data = a.data || b.data;
    let f = |v: V| match v.k {
        K::Float(f) => Some(f),
        K::Int(i) => Some(i as f64),
        _ => None,
    };
    match (a.k, b.k) {
        (K::Missing(p), _) | (_, K::Missing(p)) => return V { k: K::Missing(p), data },
        (K::Undef, _) | (_, K::Undef) => return UNDEF,
        _ => {}
    }
    let (Some(x), Some(y)) = (f(a), f(b)) else { return V { k: K::Unknown, data: true } };
    let c = |c: bool| V { k: K::Int(c as i128), data };
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
        BinOp::Lt => return c(x < y),
        BinOp::Le => return c(x <= y),
        BinOp::Gt => return c(x > y),
        BinOp::Ge => return c(x >= y),
        BinOp::Eq => return c(x == y),
        BinOp::Ne => return c(x != y),
        _ => return V { k: K::Unknown, data: true },
    };
    V { k: K::Float(r), data }
}

pub(super) fn unary(op: UnOp, ty: IntTy, a: V) -> V {
    let k = match (op, a.k) {
        (UnOp::Neg, K::Int(x)) => K::Int(ty.wrap(-x)),
        (UnOp::Neg, K::Float(f)) => K::Float(-f),
        (UnOp::Not, K::Int(x)) => K::Int(ty.wrap(!x)),
        (UnOp::LogicalNot, K::Int(x)) => K::Int((x == 0) as i128),
        (UnOp::LogicalNot, K::Float(f)) => K::Int((f == 0.0) as i128),
        (UnOp::LogicalNot, K::Ptr(..)) => K::Int(0),
        (_, K::Missing(p)) => K::Missing(p),
        (_, K::Undef) => K::Undef,
        _ => K::Unknown,
    };
    V { k, data: a.data || k == K::Unknown }
}

pub(super) fn to_int(ty: IntTy, a: V, s: &Setup) -> V {
    let k = match a.k {
        K::Int(x) => K::Int(wrap(ty, x)),
        K::Float(f) if f.is_finite() => K::Int(ty.wrap(f.trunc() as i128)),
        K::Ptr(b, off) => K::Int(ty.wrap(absolute(s, b, off) as i128)),
        K::Float(_) | K::PtrUnknown(_) | K::Unknown => K::Unknown,
        other => other,
    };
    V { k, data: a.data || k == K::Unknown }
}

/// `a && b` (`and`) or `a || b` of a lane whose left side did not decide. An unknown left side
/// with a right side that decides alone (`data && false`, `data || true`) is that value: the
/// guard `is_valid[t] && t < n` is false wherever `t < n` is.
pub(super) fn logical_combine(and: bool, a: V, b: V) -> V {
    let data = a.data || b.data;
    let truth = |v: V| match v.k {
        K::Int(x) => Some(x != 0),
        K::Float(f) => Some(f != 0.0),
        K::Ptr(..) => Some(true),
        _ => None,
    };
    match (a.k, b.k) {
        (K::Missing(p), _) | (_, K::Missing(p)) => V { k: K::Missing(p), data },
        (K::Undef, _) | (_, K::Undef) => UNDEF,
        _ => match truth(b) {
            // Only reached when the left side did not decide, so the right side decides.
            Some(t) if truth(a).is_some() => V { k: K::Int(t as i128), data },
            Some(t) if t != and => V { k: K::Int(t as i128), data: b.data },
            _ => V { k: K::Unknown, data: true },
        },
    }
}
