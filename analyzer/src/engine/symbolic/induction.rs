//! Loop summaries by induction: the change of a warp's state over one iteration, read off two
//! iterations, and the check that one abstract iteration maps the state at `t` to `t + 1`.

use super::*;

/// Per-iteration change of a loop's state: one constant per lane of every value that moves.
pub(super) struct Delta {
    pub(super) vars: Vec<[i128; WARP]>,
    pub(super) held: Vec<[i128; WARP]>,
    pub(super) promoted: Vec<i128>,
}

/// How one value moved from `p` to `c`: a constant per lane, or `None` when not by a constant.
pub(super) fn moved(p: &LaneValue, c: &LaneValue) -> Option<i128> {
    if p.data != c.data {
        return None;
    }
    match (p.k, c.k) {
        (ValueKind::Int(x), ValueKind::Int(y)) if x.a == y.a => Some(y.c - x.c),
        (ValueKind::Ptr(b1, x), ValueKind::Ptr(b2, y)) if b1 == b2 && x.a == y.a => Some(y.c - x.c),
        _ if same(p, c) => Some(0),
        _ => None,
    }
}

pub(super) fn fits(d: i128) -> Option<i128> {
    i64::try_from(d).ok().map(|_| d)
}

/// The change of a loop's state over one iteration, from state `p` (lanes `plm` in the loop)
/// to state `c`; `None` when something other than values moved by constants.
pub(super) fn delta(p: &AbstractWarp, plm: u32, c: &AbstractWarp, clm: u32) -> Option<Delta> {
    if plm != clm || p.mask != c.mask || p.returned != c.returned || p.loops != c.loops {
        return None;
    }
    let alive = c.alive();
    let mut d = Delta { vars: Vec::with_capacity(c.vars.len()), held: Vec::new(), promoted: Vec::new() };
    for (pv, cv) in p.vars.iter().zip(&c.vars) {
        let mut row = [0i128; WARP];
        for l in lanes(alive) {
            row[l] = fits(moved(&pv[l], &cv[l])?)?;
        }
        d.vars.push(row);
    }
    if p.held.len() != c.held.len() || p.promoted.len() != c.promoted.len() {
        return None;
    }
    for (pr, cr) in p.held.rows.iter().zip(&c.held.rows) {
        if (pr.key, pr.base, pr.lanes) != (cr.key, cr.base, cr.lanes) {
            return None;
        }
        let mut row = [0i128; WARP];
        for l in lanes(cr.lanes) {
            if pr.offset[l].a != cr.offset[l].a {
                return None;
            }
            row[l] = fits(cr.offset[l].c - pr.offset[l].c)?;
        }
        d.held.push(row);
    }
    for (pp, cp) in p.promoted.iter().zip(&c.promoted) {
        if (pp.depth, pp.op, pp.lane, pp.base) != (cp.depth, cp.op, cp.lane, cp.base) || pp.off.a != cp.off.a {
            return None;
        }
        d.promoted.push(fits(cp.off.c - pp.off.c)?);
    }
    Some(d)
}

/// Applies `f` to every value of the state that `delta` moves.
pub(super) fn each_moving(st: &mut AbstractWarp, d: &Delta, mut f: impl FnMut(&mut Form, i128)) {
    let alive = st.alive();
    for (vals, row) in st.vars.iter_mut().zip(&d.vars) {
        for l in lanes(alive) {
            if row[l] != 0 {
                match &mut vals[l].k {
                    ValueKind::Int(x) | ValueKind::Ptr(_, x) => f(x, row[l]),
                    _ => {}
                }
            }
        }
    }
    for (r, row) in st.held.rows.iter_mut().zip(&d.held) {
        for l in lanes(r.lanes) {
            if row[l] != 0 {
                f(&mut r.offset[l], row[l]);
            }
        }
    }
    for (p, &dd) in st.promoted.iter_mut().zip(&d.promoted) {
        if dd != 0 {
            f(&mut p.off, dd);
        }
    }
}

/// The state `n` iterations on.
pub(super) fn advance(st: &mut AbstractWarp, d: &Delta, n: i128) {
    each_moving(st, d, |x, dd| x.c += dd * n);
}

/// The state at iteration `t` of a summary: each moving value gets `t` with its step.
pub(super) fn vary(st: &mut AbstractWarp, d: &Delta, v: usize) {
    each_moving(st, d, |x, dd| x.a[v] = dd as i64);
}

/// Whether the state after one abstract iteration (`after`) is the state at `t + 1`, that is
/// the start state (`start`) moved by one step plus `t` steps.
pub(super) fn follows(after: &AbstractWarp, start: &AbstractWarp, d: &Delta, v: usize) -> bool {
    let mut want = start.clone();
    vary(&mut want, d, v);
    advance(&mut want, d, 1);
    if (after.mask, after.returned, &after.loops) != (want.mask, want.returned, &want.loops) {
        return false;
    }
    let alive = want.alive();
    let vars_ok = after.vars.iter().zip(&want.vars).all(|(a, w)| lanes(alive).all(|l| same(&a[l], &w[l])));
    let held_ok = after.held.len() == want.held.len()
        && after.held.rows.iter().zip(&want.held.rows).all(|(a, w)| {
            (a.key, a.base, a.lanes) == (w.key, w.base, w.lanes) && lanes(w.lanes).all(|l| a.offset[l] == w.offset[l])
        });
    let promoted_ok = after.promoted.len() == want.promoted.len()
        && after
            .promoted
            .iter()
            .zip(&want.promoted)
            .all(|(a, w)| (a.depth, a.op, a.lane, a.base, a.off) == (w.depth, w.op, w.lane, w.base, w.off));
    vars_ok && held_ok && promoted_ok
}
