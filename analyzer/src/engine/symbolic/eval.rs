//! Expressions: a warp's abstract values of an expression in the lanes of a mask.

use super::*;

impl SymbolicRun<'_> {
    pub(super) fn param_value(&self, p: ParamId) -> LaneValue {
        match &self.k.param(p).ty {
            Ty::Ptr(_) => LaneValue { k: ValueKind::Ptr(Base::Param(p), Form::constant(0)), data: false },
            // A vector (`float3` passed by value, or held in `__constant__` memory) takes no
            // `--arg`: its value is data.
            Ty::Vector { .. } => UNKNOWN,
            _ => match self.s.values[p.0 as usize] {
                Some(ParamValue::Int(i)) => int(Form::constant(i)),
                Some(ParamValue::Float(f)) => LaneValue { k: ValueKind::Float(f), data: false },
                None => LaneValue { k: ValueKind::Missing(p), data: false },
            },
        }
    }

    pub(super) fn builtin(&self, b: Builtin, l: usize) -> Form {
        let s = self.s;
        match b {
            Builtin::ThreadIdx(d) => self.tid[l][d as usize],
            Builtin::BlockIdx(d) => self.blk[d as usize],
            Builtin::BlockDim(d) => Form::constant(s.block[d as usize] as i128),
            Builtin::GridDim(d) => Form::constant(s.grid[d as usize] as i128),
            Builtin::WarpSize => Form::constant(WARP as i128),
        }
    }

    pub(super) fn eval(&mut self, e: &Expr, m: u32, st: &mut AbstractWarp) -> Outcome<WarpValues> {
        let mut out = [UNDEF; WARP];
        if m == 0 {
            return Ok(out);
        }
        match e {
            Expr::Int(v, _) => fill(&mut out, m, int(Form::constant(*v))),
            Expr::Float(f) => fill(&mut out, m, LaneValue { k: ValueKind::Float(*f), data: false }),
            Expr::Local(id) => {
                let src = &st.vars[id.0 as usize];
                for l in lanes(m) {
                    out[l] = src[l];
                }
            }
            Expr::Param(p) => fill(&mut out, m, self.param_value(*p)),
            Expr::Builtin(b) => {
                for l in lanes(m) {
                    out[l] = int(self.builtin(*b, l));
                }
            }
            Expr::SharedBase(id) => fill(
                &mut out,
                m,
                LaneValue {
                    k: ValueKind::Ptr(Base::Shared(*id), Form::constant(self.shared_base[id.0 as usize] as i128)),
                    data: false,
                },
            ),
            Expr::Binary { op, ty, lhs, rhs, span } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                constant_shift(*op, *ty, rhs, *span)?;
                for l in lanes(m) {
                    out[l] = self.int_binary(*op, *ty, a[l], b[l], *span)?;
                }
            }
            Expr::FloatBinary { op, lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                for l in lanes(m) {
                    out[l] = float_binary(*op, a[l], b[l])?;
                }
            }
            Expr::Unary { op, ty, arg } => {
                let a = self.eval(arg, m, st)?;
                for l in lanes(m) {
                    out[l] = self.unary(*op, *ty, a[l])?;
                }
            }
            Expr::ToInt { ty, arg } => {
                let a = self.eval(arg, m, st)?;
                for l in lanes(m) {
                    out[l] = self.to_int(*ty, a[l])?;
                }
            }
            Expr::ToFloat(arg) => {
                let a = self.eval(arg, m, st)?;
                for l in lanes(m) {
                    let x = a[l];
                    out[l] = match x.k {
                        ValueKind::Int(f) if f.is_const() => {
                            LaneValue { k: ValueKind::Float(f.c as f64), data: x.data }
                        }
                        ValueKind::Int(f) => LaneValue { k: ValueKind::FloatSym(var_mask(&f)), data: x.data },
                        _ => x,
                    };
                }
            }
            Expr::Logical { and, lhs, rhs } => {
                let and = *and;
                let a = self.eval(lhs, m, st)?;
                let mut need = 0u32;
                for l in lanes(m) {
                    let v = a[l];
                    out[l] = match self.decided(v, and)? {
                        Some(r) => r,
                        None => {
                            need |= 1 << l;
                            v
                        }
                    };
                }
                if need != 0 {
                    let b = self.eval(rhs, need, st)?;
                    for l in lanes(need) {
                        out[l] = self.logical_combine(and, out[l], b[l])?;
                    }
                }
            }
            Expr::Select { cond, then, els } => {
                let c = self.eval(cond, m, st)?;
                let span = match &**cond {
                    Expr::Binary { span, .. } => *span,
                    _ => self.k.span,
                };
                let t = self.truth(&c, m, span)?;
                let f = m & !t;
                if t != 0 {
                    let a = self.eval(then, t, st)?;
                    for l in lanes(t) {
                        out[l] = a[l];
                    }
                }
                if f != 0 {
                    let b = self.eval(els, f, st)?;
                    for l in lanes(f) {
                        out[l] = b[l];
                    }
                }
            }
            Expr::PtrOffset { ptr, bytes } => {
                let p = self.eval(ptr, m, st)?;
                let b = self.eval(bytes, m, st)?;
                for l in lanes(m) {
                    let (p, b) = (p[l], b[l]);
                    let data = p.data || b.data;
                    out[l] = match (p.k, b.k) {
                        (ValueKind::Ptr(base, o), ValueKind::Int(d)) => {
                            LaneValue { k: ValueKind::Ptr(base, self.wrap64(o.add(&d).ok_or_else(overflow)?)?), data }
                        }
                        (ValueKind::Ptr(base, _), ValueKind::Unknown) | (ValueKind::PtrUnknown(base), _) => {
                            LaneValue { k: ValueKind::PtrUnknown(base), data }
                        }
                        (ValueKind::Missing(q), _) | (_, ValueKind::Missing(q)) => {
                            LaneValue { k: ValueKind::Missing(q), data }
                        }
                        (ValueKind::Undef, _) | (_, ValueKind::Undef) => UNDEF,
                        _ => UNKNOWN,
                    };
                }
            }
            Expr::PtrDiff { lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                for l in lanes(m) {
                    out[l] = match (a[l].k, b[l].k) {
                        (ValueKind::Ptr(x, o1), ValueKind::Ptr(y, o2)) if x == y => LaneValue {
                            k: ValueKind::Int(o1.sub(&o2).ok_or_else(overflow)?),
                            data: a[l].data || b[l].data,
                        },
                        _ => UNKNOWN,
                    };
                }
            }
            Expr::SharedAddress { addr, .. } => {
                let a = self.eval(addr, m, st)?;
                for l in lanes(m) {
                    let v = a[l];
                    out[l] = match v.k {
                        ValueKind::Ptr(Base::Shared(_), _) | ValueKind::PtrUnknown(Base::Shared(_)) => v,
                        ValueKind::Int(x) => {
                            // One array must hold the address at every point of the box.
                            let (lo, hi) = self.scope.range(&x);
                            let layout = &self.shared_base;
                            match (shared_array_at(self.k, layout, lo), shared_array_at(self.k, layout, hi)) {
                                (Some(a), Some(b)) if a == b => {
                                    LaneValue { k: ValueKind::Ptr(Base::Shared(a), x), data: v.data }
                                }
                                _ => {
                                    return give_up("a shared-memory address of inline assembly in more than one array")
                                }
                            }
                        }
                        ValueKind::Missing(_) | ValueKind::Undef => v,
                        _ => return Err(Stop::Error),
                    };
                }
            }
            Expr::Load { op, addr } => {
                let m = count::address_lanes(self.k.mem_op(*op), m);
                let a = self.eval(addr, m, st)?;
                self.access(*op, &a, m, st)?;
                fill(&mut out, m, UNKNOWN);
            }
            Expr::Opaque { args, what } if args.len() == 1 && exact_float_fn(what, 0.0).is_some() => {
                let v = self.eval(&args[0], m, st)?;
                for l in lanes(m) {
                    out[l] = match v[l].k {
                        ValueKind::Float(f) => {
                            LaneValue { k: ValueKind::Float(exact_float_fn(what, f).unwrap_or(f)), data: v[l].data }
                        }
                        ValueKind::FloatSym(vars) => return Err(points(vars)),
                        ValueKind::Missing(_) => v[l],
                        _ => LaneValue { k: ValueKind::Unknown, data: true },
                    };
                }
            }
            Expr::Opaque { args, .. } => {
                let mut data = false;
                let mut missing = None;
                for a in args {
                    let v = self.eval(a, m, st)?;
                    for l in lanes(m) {
                        data |= v[l].data;
                        if let ValueKind::Missing(p) = v[l].k {
                            missing = Some(p);
                        }
                    }
                }
                let k = match missing {
                    Some(p) => ValueKind::Missing(p),
                    None => ValueKind::Unknown,
                };
                fill(&mut out, m, LaneValue { k, data: data || missing.is_none() });
            }
            Expr::Warp { op, ty, args, .. } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, m, st)?);
                }
                out = super::warp::warp_op(*op, *ty, m, &vals, &SymLanes, UNDEF)?;
            }
        }
        Ok(out)
    }
}

/// The symbolic engine's lane values for the warp intrinsics: an integer that varies over the
/// box cannot be decided once for every point, so the engine gives up (the reference engine
/// then enumerates).
pub(super) struct SymLanes;

impl super::warp::LaneValues<LaneValue, Stop> for SymLanes {
    fn read(&self, v: &LaneValue) -> Outcome<super::warp::Lane<LaneValue>> {
        use super::warp::Lane;
        Ok(match v.k {
            ValueKind::Int(f) if f.is_const() => Lane::Int(f.c, v.data),
            ValueKind::Int(_) => return give_up("a warp intrinsic of a value that varies between warps or iterations"),
            ValueKind::Missing(_) | ValueKind::Undef => Lane::Other(*v),
            _ => Lane::Unknown,
        })
    }
    fn int(&self, x: i128, data: bool) -> LaneValue {
        LaneValue { k: ValueKind::Int(Form::constant(x)), data }
    }
    fn unknown(&self) -> LaneValue {
        UNKNOWN
    }
}
