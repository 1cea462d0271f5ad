//! Abstract lane values ([`LaneValue`]: an affine [`Form`], a pointer into an object at a form, or
//! data) and the integer and float arithmetic on them, exact over the whole box or a [`Stop`].

use super::*;

/// What one lane's value is known to be over the whole box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum ValueKind {
    Int(Form),
    Float(f64),
    /// A float computed from a varying integer: fine as data, cut to points where it decides.
    FloatSym(u8),
    Ptr(Base, Form),
    PtrUnknown(Base),
    Unknown,
    Missing(ParamId),
    Undef,
}

/// One lane's abstract value; `data` marks a value read from memory (or computed from one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct LaneValue {
    pub(super) k: ValueKind,
    pub(super) data: bool,
}

pub(super) const UNDEF: LaneValue = LaneValue { k: ValueKind::Undef, data: false };
pub(super) const UNKNOWN: LaneValue = LaneValue { k: ValueKind::Unknown, data: true };

pub(super) fn int(f: Form) -> LaneValue {
    LaneValue { k: ValueKind::Int(f), data: false }
}

/// Identical values, floats by their bits.
pub(super) fn same(a: &LaneValue, b: &LaneValue) -> bool {
    a.data == b.data
        && match (a.k, b.k) {
            (ValueKind::Float(x), ValueKind::Float(y)) => x.to_bits() == y.to_bits(),
            (x, y) => x == y,
        }
}

/// A variable's values in the 32 lanes of a warp.
pub(super) type WarpValues = [LaneValue; WARP];

impl SymbolicRun<'_> {
    pub(super) fn wrap(&self, ty: IntTy, x: Form) -> Outcome<Form> {
        if x.is_const() {
            return Ok(Form::constant(ty.wrap(x.c)));
        }
        if ty.bits < 2 || ty.bits > 64 {
            return Err(points_of(&x));
        }
        let size = 1i128 << ty.bits;
        let min = if ty.signed { -(size / 2) } else { 0 };
        let (lo, hi) = self.scope.range(&x);
        // Which copy of the type's range `lo` falls in; the form wraps by that many sizes if
        // `hi` falls in the same one.
        let q = (lo - min).div_euclid(size);
        if (hi - min).div_euclid(size) == q {
            return x.plus(-q * size).ok_or_else(overflow);
        }
        let edge = x.plus(-(min + (q + 1) * size)).ok_or_else(overflow)?;
        let (v, t) = self.scope.sign_cut(&edge);
        Err(Stop::Split(v, Cut::At(t)))
    }

    /// `floor(x / d)` for `d > 0`, when it is affine.
    pub(super) fn floor_div(&self, x: &Form, d: i128) -> Outcome<Form> {
        let mut out = Form::constant(x.c.div_euclid(d));
        for v in 0..NV {
            let a = x.a[v] as i128;
            if a.rem_euclid(d) != 0 {
                return Err(Stop::Split(v, Cut::Mod(d / form::gcd(a.rem_euclid(d), d))));
            }
            out.a[v] = (a / d) as i64;
        }
        // The constant part's remainder is carried by `c`; exact because every other term is a
        // multiple of `d`.
        Ok(out)
    }

    /// C's truncating `x / d`.
    pub(super) fn trunc_div(&self, x: &Form, d: i128) -> Outcome<Form> {
        if d < 0 {
            return self.trunc_div(x, -d)?.scale(-1).ok_or_else(overflow);
        }
        if !self.negative(x)? {
            self.floor_div(x, d)
        } else {
            let neg = x.scale(-1).ok_or_else(overflow)?;
            self.floor_div(&neg, d)?.scale(-1).ok_or_else(overflow)
        }
    }

    /// `x & m`, `x | m`, `x ^ m` for a constant `m`, when affine.
    pub(super) fn bits(&self, op: BinOp, x: &Form, m: i128) -> Outcome<Form> {
        if m < 0 {
            return match op {
                // x & m = x - (x & !m): the bits outside m, taken away.
                BinOp::And => x.sub(&self.bits(BinOp::And, x, !m)?).ok_or_else(overflow),
                _ => Err(points_of(x)),
            };
        }
        let width = 128 - m.leading_zeros();
        let size = 1i128 << width;
        // The low `width` bits of x are constant when every variable's step is a multiple of
        // 2^width; otherwise cut by residue.
        for v in 0..NV {
            if (x.a[v] as i128).rem_euclid(size) != 0 {
                let a = (x.a[v] as i128).rem_euclid(size);
                return Err(Stop::Split(v, Cut::Mod(size / form::gcd(a, size))));
            }
        }
        let low = x.c.rem_euclid(size);
        let and = low & m;
        let r = match op {
            BinOp::And => Form::constant(and),
            BinOp::Or => x.plus(m - and).ok_or_else(overflow)?,
            _ => x.plus(m - 2 * and).ok_or_else(overflow)?,
        };
        Ok(r)
    }

    pub(super) fn int_op(&self, op: BinOp, ty: IntTy, x: Form, y: Form, span: Span) -> Outcome<Form> {
        if x.is_const() && y.is_const() {
            return Ok(Form::constant(int_op(op, ty, x.c, y.c, span)?));
        }
        let bool_of = |b: bool| Ok(Form::constant(b as i128));
        let d = || x.sub(&y).ok_or_else(overflow);
        match op {
            BinOp::Add => self.wrap(ty, x.add(&y).ok_or_else(overflow)?),
            BinOp::Sub => self.wrap(ty, d()?),
            BinOp::Mul if y.is_const() => self.wrap(ty, x.scale(y.c).ok_or_else(overflow)?),
            BinOp::Mul if x.is_const() => self.wrap(ty, y.scale(x.c).ok_or_else(overflow)?),
            BinOp::Div | BinOp::Rem if y.is_const() => {
                if y.c == 0 {
                    // The reference engine reports it.
                    return Err(Stop::Error);
                }
                let q = self.trunc_div(&x, y.c)?;
                let r = if op == BinOp::Div {
                    q
                } else {
                    x.sub(&q.scale(y.c).ok_or_else(overflow)?).ok_or_else(overflow)?
                };
                self.wrap(ty, r)
            }
            BinOp::Shl | BinOp::Shr if y.is_const() => {
                let w = ty.bits.max(32) as i128;
                if y.c < 0 || y.c >= w {
                    // Clamped as the GPU does it ([`int_op`]): the sign of a signed operand
                    // is its shift by the width less one.
                    if op == BinOp::Shl || !ty.signed {
                        return Ok(Form::constant(0));
                    }
                    return self.wrap(ty, self.floor_div(&x, 1i128 << (w - 1))?);
                }
                if op == BinOp::Shl {
                    self.wrap(ty, x.scale(1i128 << y.c).ok_or_else(overflow)?)
                } else {
                    self.wrap(ty, self.floor_div(&x, 1i128 << y.c)?)
                }
            }
            BinOp::And | BinOp::Or | BinOp::Xor if y.is_const() || x.is_const() => {
                let (v, m) = if y.is_const() { (x, y.c) } else { (y, x.c) };
                self.wrap(ty, self.bits(op, &v, m)?)
            }
            BinOp::Lt => bool_of(self.negative(&d()?)?),
            BinOp::Gt => bool_of(self.negative(&d()?.scale(-1).ok_or_else(overflow)?)?),
            BinOp::Le => bool_of(self.negative(&d()?.plus(-1).ok_or_else(overflow)?)?),
            BinOp::Ge => bool_of(self.negative(&d()?.scale(-1).ok_or_else(overflow)?.plus(-1).ok_or_else(overflow)?)?),
            BinOp::Eq => bool_of(self.zero(&d()?)?),
            BinOp::Ne => bool_of(!self.zero(&d()?)?),
            BinOp::Min | BinOp::Max => {
                let x_less = self.negative(&d()?)?;
                Ok(if x_less == (op == BinOp::Min) { x } else { y })
            }
            // A product, quotient or bit operation of two varying values: one of them point
            // by point.
            _ => Err(points_of(if y.is_const() { &x } else { &y })),
        }
    }

    pub(super) fn int_binary(
        &self,
        op: BinOp,
        ty: IntTy,
        a: LaneValue,
        b: LaneValue,
        span: Span,
    ) -> Outcome<LaneValue> {
        let data = a.data || b.data;
        let (x, y) = match (a.k, b.k) {
            (ValueKind::Int(x), ValueKind::Int(y)) => (x, y),
            (ValueKind::Missing(p), _) | (_, ValueKind::Missing(p)) => {
                return Ok(LaneValue { k: ValueKind::Missing(p), data })
            }
            (ValueKind::Undef, _) | (_, ValueKind::Undef) => return Ok(UNDEF),
            (ValueKind::Ptr(ba, oa), ValueKind::Ptr(bb, ob)) if ba == bb => (oa, ob),
            // A pointer into a buffer is never null (as the reference engine has it).
            (ValueKind::Ptr(..), ValueKind::Int(z)) | (ValueKind::Int(z), ValueKind::Ptr(..))
                if z == Form::constant(0) && matches!(op, BinOp::Eq | BinOp::Ne) =>
            {
                return Ok(LaneValue { k: ValueKind::Int(Form::constant((op == BinOp::Ne) as i128)), data });
            }
            _ => return Ok(UNKNOWN),
        };
        Ok(LaneValue { k: ValueKind::Int(self.int_op(op, ty, x, y, span)?), data })
    }

    /// Pointer offsets are 64-bit and wrap as the reference's `wrapping_add` does.
    pub(super) fn wrap64(&self, x: Form) -> Outcome<Form> {
        self.wrap(IntTy::I64, x)
    }

    /// The lane's `&&`/`||` result when the left side decides it.
    pub(super) fn decided(&self, v: LaneValue, and: bool) -> Outcome<Option<LaneValue>> {
        let r = |v: LaneValue| Some(LaneValue { k: ValueKind::Int(Form::constant(!and as i128)), data: v.data });
        Ok(match v.k {
            ValueKind::Int(x) if self.nonzero(&x)? != and => r(v),
            ValueKind::Float(f) if (f != 0.0) != and => r(v),
            ValueKind::FloatSym(vars) => return Err(points(vars)),
            ValueKind::Ptr(..) | ValueKind::PtrUnknown(_) if !and => Some(int(Form::constant(1))),
            _ => None,
        })
    }

    /// As the reference engine's `logical_combine`: an unknown left side with a deciding right side.
    pub(super) fn logical_combine(&self, and: bool, a: LaneValue, b: LaneValue) -> Outcome<LaneValue> {
        let data = a.data || b.data;
        let truth = |v: LaneValue| -> Outcome<Option<bool>> {
            Ok(match v.k {
                ValueKind::Int(x) => Some(self.nonzero(&x)?),
                ValueKind::Float(f) => Some(f != 0.0),
                ValueKind::FloatSym(vars) => return Err(points(vars)),
                ValueKind::Ptr(..) => Some(true),
                _ => None,
            })
        };
        Ok(match (a.k, b.k) {
            (ValueKind::Missing(p), _) | (_, ValueKind::Missing(p)) => LaneValue { k: ValueKind::Missing(p), data },
            (ValueKind::Undef, _) | (_, ValueKind::Undef) => UNDEF,
            _ => match truth(b)? {
                Some(t) if truth(a)?.is_some() => LaneValue { k: ValueKind::Int(Form::constant(t as i128)), data },
                Some(t) if t != and => LaneValue { k: ValueKind::Int(Form::constant(t as i128)), data: b.data },
                _ => UNKNOWN,
            },
        })
    }

    pub(super) fn unary(&self, op: UnOp, ty: IntTy, a: LaneValue) -> Outcome<LaneValue> {
        let k = match (op, a.k) {
            (UnOp::Neg, ValueKind::Int(x)) => ValueKind::Int(self.wrap(ty, x.scale(-1).ok_or_else(overflow)?)?),
            (UnOp::Neg, ValueKind::Float(f)) => ValueKind::Float(-f),
            (UnOp::Neg, ValueKind::FloatSym(v)) => ValueKind::FloatSym(v),
            (UnOp::Not, ValueKind::Int(x)) => {
                ValueKind::Int(self.wrap(ty, x.scale(-1).and_then(|x| x.plus(-1)).ok_or_else(overflow)?)?)
            }
            (UnOp::LogicalNot, ValueKind::Int(x)) => ValueKind::Int(Form::constant(self.zero(&x)? as i128)),
            (UnOp::LogicalNot, ValueKind::Float(f)) => ValueKind::Int(Form::constant((f == 0.0) as i128)),
            (UnOp::LogicalNot, ValueKind::FloatSym(v)) => return Err(points(v)),
            (UnOp::LogicalNot, ValueKind::Ptr(..)) => ValueKind::Int(Form::constant(0)),
            (_, ValueKind::Missing(p)) => ValueKind::Missing(p),
            (_, ValueKind::Undef) => ValueKind::Undef,
            _ => ValueKind::Unknown,
        };
        Ok(LaneValue { k, data: a.data || k == ValueKind::Unknown })
    }

    pub(super) fn to_int(&self, ty: IntTy, a: LaneValue) -> Outcome<LaneValue> {
        let k = match a.k {
            ValueKind::Int(x) => ValueKind::Int(self.wrap(ty, x)?),
            ValueKind::Float(f) if f.is_finite() => ValueKind::Int(Form::constant(ty.wrap(f.trunc() as i128))),
            ValueKind::FloatSym(v) => return Err(points(v)),
            ValueKind::Ptr(b, off) => {
                let at = absolute(self.s, b, 0) as i128;
                ValueKind::Int(self.wrap(ty, off.plus(at).ok_or_else(overflow)?)?)
            }
            ValueKind::Float(_) | ValueKind::PtrUnknown(_) | ValueKind::Unknown => ValueKind::Unknown,
            other => other,
        };
        Ok(LaneValue { k, data: a.data || k == ValueKind::Unknown })
    }
}

pub(super) fn fill(out: &mut WarpValues, m: u32, v: LaneValue) {
    for l in lanes(m) {
        out[l] = v;
    }
}

pub(super) fn overflow() -> Stop {
    Stop::GiveUp("an affine coefficient overflows".into())
}

pub(super) fn var_mask(f: &Form) -> u8 {
    (0..NV).filter(|&v| f.a[v] != 0).fold(0u8, |m, v| m | 1 << v)
}

/// Cut the innermost of `vars` into points.
pub(super) fn points(vars: u8) -> Stop {
    match (0..NV).rev().find(|&v| vars >> v & 1 == 1) {
        Some(v) => Stop::Split(v, Cut::Points),
        None => Stop::GiveUp("internal: a constant float marked varying".into()),
    }
}

pub(super) fn points_of(f: &Form) -> Stop {
    points(var_mask(f))
}

pub(super) fn float_binary(op: BinOp, a: LaneValue, b: LaneValue) -> Outcome<LaneValue> {
    let data = a.data || b.data;
    match (a.k, b.k) {
        (ValueKind::Missing(p), _) | (_, ValueKind::Missing(p)) => {
            return Ok(LaneValue { k: ValueKind::Missing(p), data })
        }
        (ValueKind::Undef, _) | (_, ValueKind::Undef) => return Ok(UNDEF),
        _ => {}
    }
    let f = |v: LaneValue| match v.k {
        ValueKind::Float(f) => Some(Ok(f)),
        ValueKind::Int(i) if i.is_const() => Some(Ok(i.c as f64)),
        ValueKind::Int(i) => Some(Err(var_mask(&i))),
        ValueKind::FloatSym(m) => Some(Err(m)),
        _ => None,
    };
    let (Some(x), Some(y)) = (f(a), f(b)) else { return Ok(UNKNOWN) };
    let (x, y) = match (x, y) {
        (Ok(x), Ok(y)) => (x, y),
        (x, y) => {
            let vars = x.err().unwrap_or(0) | y.err().unwrap_or(0);
            let arith = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max);
            return if arith {
                Ok(LaneValue { k: ValueKind::FloatSym(vars), data })
            } else if is_cmp(op) {
                Err(points(vars))
            } else {
                Ok(UNKNOWN)
            };
        }
    };
    let c = |c: bool| Ok(LaneValue { k: ValueKind::Int(Form::constant(c as i128)), data });
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
        _ => return Ok(UNKNOWN),
    };
    Ok(LaneValue { k: ValueKind::Float(r), data })
}

pub(super) fn is_cmp(op: BinOp) -> bool {
    matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne)
}
