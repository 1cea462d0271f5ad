//! Expression evaluation: a warp's values of an expression in the lanes of a mask.

use super::*;

impl Engine<'_> {
    pub(super) fn missing(&self, p: ParamId, span: Span, what: &str) -> Diagnostic {
        let param = self.k.param(p);
        let name = &param.name;
        let d = if param.constant_variable {
            Diagnostic::at(
                ErrorKind::MissingArgument,
                span,
                format!("{what} depends on `__constant__` variable `{name}`, which has no value (the host sets it with cudaMemcpyToSymbol)"),
            )
        } else {
            Diagnostic::at(
                ErrorKind::MissingArgument,
                span,
                format!("{what} depends on parameter `{name}`, which has no value"),
            )
        };
        d.note(format!("pass --arg {name}=VALUE"))
    }

    pub(super) fn param_value(&self, p: ParamId) -> V {
        let param = self.k.param(p);
        match &param.ty {
            Ty::Ptr(_) => V { k: K::Ptr(Base::Param(p), 0), data: false },
            // A vector (`float3` passed by value, or held in `__constant__` memory) takes no
            // `--arg`: its value is data.
            Ty::Vector { .. } => V { k: K::Unknown, data: true },
            _ => match self.s.values[p.0 as usize] {
                Some(ParamValue::Int(i)) => V { k: K::Int(i), data: false },
                Some(ParamValue::Float(f)) => V { k: K::Float(f), data: false },
                None => V { k: K::Missing(p), data: false },
            },
        }
    }

    pub(super) fn builtin(&self, b: Builtin, st: &WarpState, l: usize) -> i128 {
        let s = self.s;
        (match b {
            Builtin::ThreadIdx(d) => st.tid[l][d as usize],
            Builtin::BlockIdx(d) => self.block_idx[d as usize],
            Builtin::BlockDim(d) => s.block[d as usize],
            Builtin::GridDim(d) => s.grid[d as usize],
            Builtin::WarpSize => WARP as u32,
        }) as i128
    }

    /// The values of `e` in lanes `m`. Operands are evaluated in the same order, lanes in the
    /// same order, as a lane-by-lane evaluation would, so errors and counts do not depend on
    /// which lanes share a value.
    pub(super) fn eval(&mut self, e: &Expr, m: u32, st: &mut WarpState) -> Result<Vals> {
        if m == 0 {
            // No lane computes anything: no error, no access (a loop test after every lane left).
            return Ok(Vals::Same(UNDEF));
        }
        let int = |v: i128| V { k: K::Int(v), data: false };
        let pool = &mut self.pool;
        Ok(match e {
            Expr::Int(v, _) => Vals::Same(int(*v)),
            Expr::Float(f) => Vals::Same(V { k: K::Float(*f), data: false }),
            Expr::Local(id) => pool.copy(&st.vars[id.0 as usize]),
            Expr::Param(p) => Vals::Same(self.param_value(*p)),
            Expr::Builtin(b) => match b {
                Builtin::ThreadIdx(d) if !st.tid_uniform[*d as usize] => {
                    let mut out = pool.ints();
                    for l in lanes(m) {
                        out[l] = st.tid[l][*d as usize] as i128;
                    }
                    Vals::Ints(out, false)
                }
                _ => Vals::Same(int(self.builtin(*b, st, m.trailing_zeros() as usize))),
            },
            Expr::SharedBase(id) => {
                let a = self.shared_base[id.0 as usize];
                Vals::Same(V { k: K::Ptr(Base::Shared(*id), a - SHARED_WINDOW), data: false })
            }
            Expr::Binary { op, ty, lhs, rhs, span } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                constant_shift(*op, *ty, rhs, *span)?;
                self.pool.int_binary(m, *op, *ty, a, b, *span)?
            }
            Expr::FloatBinary { op, lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                self.pool.map2(m, a, b, |x, y| Ok(float_binary(*op, x, y)))?
            }
            Expr::Unary { op, ty, arg } => {
                let a = self.eval(arg, m, st)?;
                self.pool.map1(m, a, |x| unary(*op, *ty, x))
            }
            Expr::ToInt { ty, arg } => match self.eval(arg, m, st)? {
                // What `to_int` does to an integer, lane by lane.
                Vals::Ints(mut x, data) => {
                    for l in lanes(m) {
                        x[l] = wrap(*ty, x[l]);
                    }
                    Vals::Ints(x, data)
                }
                a => {
                    let s = self.s;
                    self.pool.map1(m, a, |x| to_int(*ty, x, s))
                }
            },
            Expr::ToFloat(arg) => {
                let a = self.eval(arg, m, st)?;
                self.pool.map1(m, a, |x| match x.k {
                    K::Int(v) => V { k: K::Float(v as f64), data: x.data },
                    _ => x,
                })
            }
            Expr::Logical { and, lhs, rhs } => {
                let and = *and;
                // The lane's result when the left side decides it; `None`: the right side decides.
                let decided = |v: V| match v.k {
                    K::Int(x) if (x != 0) != and => Some(V { k: K::Int(!and as i128), data: v.data }),
                    K::Float(f) if (f != 0.0) != and => Some(V { k: K::Int(!and as i128), data: v.data }),
                    K::Ptr(..) | K::PtrUnknown(_) if !and => Some(int(1)),
                    // Unknown data: assume the side that evaluates the right operand.
                    _ => None,
                };
                let a = self.eval(lhs, m, st)?;
                if let Vals::Same(a) = a {
                    if let Some(v) = decided(a) {
                        return Ok(Vals::Same(v));
                    }
                    let b = self.eval(rhs, m, st)?;
                    return Ok(self.pool.map1(m, b, |y| logical_combine(and, a, y)));
                }
                // Lanes whose result the left side does not decide evaluate the right side.
                let mut out = self.pool.lanes();
                let mut need = 0u32;
                for l in lanes(m) {
                    let v = a.at(l);
                    out[l] = match decided(v) {
                        Some(r) => r,
                        None => {
                            need |= 1 << l;
                            v
                        }
                    };
                }
                self.pool.put(a);
                if need != 0 {
                    let b = self.eval(rhs, need, st)?;
                    for l in lanes(need) {
                        out[l] = logical_combine(and, out[l], b.at(l));
                    }
                    self.pool.put(b);
                }
                self.pool.pack(m, out)
            }
            Expr::Select { cond, then, els } => {
                let c = self.eval(cond, m, st)?;
                let span = expr_span(cond).unwrap_or(self.k.span);
                let t = self.truth(&c, m, span)?;
                self.pool.put(c);
                let f = m & !t;
                if f == 0 {
                    self.eval(then, t, st)?
                } else if t == 0 {
                    self.eval(els, f, st)?
                } else {
                    let a = self.eval(then, t, st)?;
                    let b = self.eval(els, f, st)?;
                    let mut out = self.pool.lanes();
                    for l in lanes(m) {
                        out[l] = if t >> l & 1 == 1 { a.at(l) } else { b.at(l) };
                    }
                    self.pool.put(a);
                    self.pool.put(b);
                    self.pool.pack(m, out)
                }
            }
            Expr::PtrOffset { ptr, bytes } => {
                let p = self.eval(ptr, m, st)?;
                let b = self.eval(bytes, m, st)?;
                self.pool.ptr_offset(m, p, b)?
            }
            Expr::PtrDiff { lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                self.pool.map2(m, a, b, |a, b| {
                    Ok(match (a.k, b.k) {
                        (K::Ptr(x, o1), K::Ptr(y, o2)) if x == y => {
                            V { k: K::Int((o1 - o2) as i128), data: a.data || b.data }
                        }
                        _ => V { k: K::Unknown, data: true },
                    })
                })?
            }
            Expr::SharedAddress { addr, span } => {
                let a = self.eval(addr, m, st)?;
                let layout: Vec<i64> = self.shared_base.iter().map(|b| b - SHARED_WINDOW).collect();
                let mut out = self.pool.lanes();
                for l in lanes(m) {
                    let v = a.at(l);
                    out[l] = match v.k {
                        K::Ptr(Base::Shared(_), _) | K::PtrUnknown(Base::Shared(_)) => v,
                        K::Int(x) => match shared_array_at(self.k, &layout, x) {
                            Some(id) => V { k: K::Ptr(Base::Shared(id), x as i64), data: v.data },
                            None => return Err(not_shared(self.k, *span, None, Some(x))),
                        },
                        K::Ptr(b, _) | K::PtrUnknown(b) => return Err(not_shared(self.k, *span, Some(b), None)),
                        K::Float(_) | K::Unknown => return Err(not_shared(self.k, *span, None, None)),
                        K::Missing(_) | K::Undef => v,
                    };
                }
                self.pool.put(a);
                self.pool.pack(m, out)
            }
            Expr::Load { op, addr } => {
                let m = count::address_lanes(self.k.mem_op(*op), m);
                let a = self.eval(addr, m, st)?;
                self.access(*op, &a, m, st)?;
                let v = self.loaded(&a, m, self.k.mem_op(*op).width);
                self.pool.put(a);
                v
            }
            Expr::Opaque { args, what } if args.len() == 1 && exact_float_fn(what, 0.0).is_some() => {
                let v = self.eval(&args[0], m, st)?;
                self.pool.map1(m, v, |x| match x.k {
                    K::Float(f) => V { k: K::Float(exact_float_fn(what, f).unwrap_or(f)), data: x.data },
                    K::Missing(_) => x,
                    _ => V { k: K::Unknown, data: true },
                })
            }
            Expr::Opaque { args, .. } => {
                let mut data = false;
                let mut missing = None;
                for a in args {
                    let v = self.eval(a, m, st)?;
                    let mut see = |v: V| {
                        data |= v.data;
                        if let K::Missing(p) = v.k {
                            missing = Some(p);
                        }
                    };
                    match &v {
                        Vals::Same(v) => see(*v),
                        _ => lanes(m).for_each(|l| see(v.at(l))),
                    }
                    self.pool.put(v);
                }
                let k = match missing {
                    Some(p) => K::Missing(p),
                    None => K::Unknown,
                };
                Vals::Same(V { k, data: data || missing.is_none() })
            }
            Expr::Warp { op, ty, args, .. } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    let v = self.eval(a, m, st)?;
                    let mut b = [UNDEF; WARP];
                    for l in lanes(m) {
                        b[l] = v.at(l);
                    }
                    self.pool.put(v);
                    vals.push(b);
                }
                let out = warp::warp_op(*op, *ty, m, &vals, &RefLanes, UNDEF)
                    .unwrap_or_else(|never: std::convert::Infallible| match never {});
                let mut b = self.pool.lanes();
                *b = out;
                self.pool.pack(m, b)
            }
        })
    }
}

/// The reference engine's lane values for [`warp::warp_op`].
struct RefLanes;

impl warp::LaneValues<V, std::convert::Infallible> for RefLanes {
    fn read(&self, v: &V) -> std::result::Result<warp::Lane<V>, std::convert::Infallible> {
        Ok(match v.k {
            K::Int(x) => warp::Lane::Int(x, v.data),
            K::Missing(_) | K::Undef => warp::Lane::Other(*v),
            _ => warp::Lane::Unknown,
        })
    }
    fn int(&self, x: i128, data: bool) -> V {
        V { k: K::Int(x), data }
    }
    fn unknown(&self) -> V {
        V { k: K::Unknown, data: true }
    }
}
