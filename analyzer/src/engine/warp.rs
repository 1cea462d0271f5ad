//! Warp-level intrinsics lane by lane: shuffles, votes, reductions and a lane's bit counts.
//!
//! Both engines call [`warp_op`] with their own lane values; the semantics live here once.
//! They move no memory, but their values feed addresses and branches: a shuffle of a computable
//! value is computable, of a loaded value it is data.

use super::{lanes, WARP};
use crate::ir::{IntTy, ReduceOp, WarpOp};

/// What an engine knows of one lane's operand.
pub(crate) enum Lane<T> {
    /// A known integer (booleans, lane numbers, masks) and whether it came from memory.
    Int(i128, bool),
    /// Data read from memory that nobody knows.
    Unknown,
    /// A value the operation passes on unchanged (a missing parameter, an undefined local).
    Other(T),
}

/// The engine's side: reading an operand (`Err`: the engine cannot tell, it gives up) and
/// making a result.
pub(crate) trait LaneValues<T: Copy, E> {
    fn read(&self, v: &T) -> Result<Lane<T>, E>;
    fn int(&self, x: i128, data: bool) -> T;
    fn unknown(&self) -> T;
}

/// Every lane of `m` of one operand as an integer, and whether any came from memory; `None`
/// when a lane's value is not an integer, with `out` already holding the whole result (unknown
/// data, or the value passed on unchanged) for every lane of `m`.
fn ints<T: Copy, E>(
    e: &impl LaneValues<T, E>,
    arg: &[T; WARP],
    m: u32,
    out: &mut [T; WARP],
) -> Result<Option<([i128; WARP], bool)>, E> {
    let mut vals = [0i128; WARP];
    let mut data = false;
    for l in lanes(m) {
        let whole = match e.read(&arg[l])? {
            Lane::Int(x, d) => {
                vals[l] = x;
                data |= d;
                continue;
            }
            Lane::Unknown => e.unknown(),
            Lane::Other(t) => t,
        };
        for l in lanes(m) {
            out[l] = whole;
        }
        return Ok(None);
    }
    Ok(Some((vals, data)))
}

/// `op` for the lanes of `m`; `args[i][l]` is operand `i` in lane `l`. Lanes outside `m` of
/// the result are left as `fill`.
pub(crate) fn warp_op<T: Copy, E>(
    op: WarpOp,
    ty: IntTy,
    m: u32,
    args: &[[T; WARP]],
    e: &impl LaneValues<T, E>,
    fill: T,
) -> Result<[T; WARP], E> {
    let mut out = [fill; WARP];
    let wrap = |x: i128| ty.wrap(x);
    match op {
        WarpOp::Shfl | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => {
            for l in lanes(m) {
                let (b, bd) = match e.read(&args[1][l])? {
                    Lane::Int(x, d) => (x, d),
                    Lane::Unknown => {
                        out[l] = e.unknown();
                        continue;
                    }
                    Lane::Other(t) => {
                        out[l] = t;
                        continue;
                    }
                };
                let w = match e.read(&args[2][l])? {
                    Lane::Int(x, _) if x > 0 && x <= WARP as i128 && x & (x - 1) == 0 => x as i64,
                    Lane::Other(t) => {
                        out[l] = t;
                        continue;
                    }
                    _ => WARP as i64,
                };
                let li = l as i64;
                let seg = li & !(w - 1);
                let b = b as i64;
                // CUDA's rules: out of the lane's segment, a lane gets its own value back
                // (`__shfl_sync` wraps the source modulo the width instead).
                let src = match op {
                    WarpOp::Shfl => seg + (b & (w - 1)),
                    WarpOp::ShflUp => {
                        let s = li - b;
                        if s < seg {
                            li
                        } else {
                            s
                        }
                    }
                    WarpOp::ShflDown => {
                        let s = li + b;
                        if s >= seg + w {
                            li
                        } else {
                            s
                        }
                    }
                    _ => {
                        let s = li ^ b;
                        if s >= seg + w {
                            li
                        } else {
                            s
                        }
                    }
                };
                // Reading a lane that does not run the shuffle gives an undefined value.
                out[l] = if (0..WARP as i64).contains(&src) && m >> src & 1 == 1 {
                    args[0][src as usize]
                } else {
                    e.unknown()
                };
                if bd {
                    // The source lane came from memory: the value is data too.
                    out[l] = match e.read(&out[l])? {
                        Lane::Int(x, _) => e.int(x, true),
                        _ => e.unknown(),
                    };
                }
            }
        }
        WarpOp::Ballot | WarpOp::BallotRanks | WarpOp::Any | WarpOp::All => {
            let Some((vals, data)) = ints(e, &args[0], m, &mut out)? else { return Ok(out) };
            let bits = lanes(m).filter(|&l| vals[l] != 0).fold(0u32, |b, l| b | 1 << l);
            let v = match op {
                WarpOp::Ballot => bits as i128,
                // Rank r is the r-th active lane: its bit moves down to position r.
                WarpOp::BallotRanks => {
                    lanes(m).enumerate().filter(|&(_, l)| vals[l] != 0).fold(0u32, |b, (r, _)| b | 1 << r) as i128
                }
                WarpOp::Any => (bits != 0) as i128,
                _ => (bits == m) as i128,
            };
            for l in lanes(m) {
                out[l] = e.int(wrap(v), data);
            }
        }
        WarpOp::MatchAny => {
            let Some((vals, data)) = ints(e, &args[0], m, &mut out)? else { return Ok(out) };
            for l in lanes(m) {
                let same = lanes(m).filter(|&k| vals[k] == vals[l]).fold(0u32, |a, k| a | 1 << k);
                out[l] = e.int(wrap(same as i128), data);
            }
        }
        WarpOp::ActiveMask => {
            for l in lanes(m) {
                out[l] = e.int(wrap(m as i128), false);
            }
        }
        WarpOp::Reduce(r) => {
            for l in lanes(m) {
                let w = match e.read(&args[1][l])? {
                    Lane::Int(x, _) if x > 0 && x <= WARP as i128 && x & (x - 1) == 0 => x as usize,
                    _ => WARP,
                };
                let seg = l & !(w - 1);
                let mut acc: Option<i128> = None;
                let mut data = false;
                let mut res = None;
                for s in lanes(m).filter(|s| (seg..seg + w).contains(s)) {
                    match e.read(&args[0][s])? {
                        Lane::Int(x, d) => {
                            data |= d;
                            let x = wrap(x);
                            acc = Some(match acc {
                                None => x,
                                Some(a) => wrap(match r {
                                    ReduceOp::Add => a + x,
                                    ReduceOp::Min => a.min(x),
                                    ReduceOp::Max => a.max(x),
                                    ReduceOp::And => a & x,
                                    ReduceOp::Or => a | x,
                                    ReduceOp::Xor => a ^ x,
                                }),
                            });
                        }
                        Lane::Unknown => {
                            res = Some(e.unknown());
                            break;
                        }
                        Lane::Other(t) => {
                            res = Some(t);
                            break;
                        }
                    }
                }
                out[l] = res.unwrap_or_else(|| e.int(acc.unwrap_or(0), data));
            }
        }
        WarpOp::Popc(bits) | WarpOp::Ffs(bits) | WarpOp::Clz(bits) | WarpOp::Brev(bits) => {
            for l in lanes(m) {
                out[l] = match e.read(&args[0][l])? {
                    Lane::Int(x, d) => {
                        let x = (x as u128) & if bits >= 64 { u64::MAX as u128 } else { (1u128 << bits) - 1 };
                        let v = match op {
                            WarpOp::Popc(_) => x.count_ones() as i128,
                            WarpOp::Ffs(_) => {
                                if x == 0 {
                                    0
                                } else {
                                    x.trailing_zeros() as i128 + 1
                                }
                            }
                            WarpOp::Clz(_) => bits as i128 - (128 - x.leading_zeros() as i128),
                            _ => (x.reverse_bits() >> (128 - bits as u32)) as i128,
                        };
                        e.int(wrap(v), d)
                    }
                    Lane::Unknown => e.unknown(),
                    Lane::Other(t) => t,
                };
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lanes as plain optional integers: `None` is unknown data.
    struct Plain;
    impl LaneValues<Option<i128>, ()> for Plain {
        fn read(&self, v: &Option<i128>) -> Result<Lane<Option<i128>>, ()> {
            Ok(match v {
                Some(x) => Lane::Int(*x, false),
                None => Lane::Unknown,
            })
        }
        fn int(&self, x: i128, _: bool) -> Option<i128> {
            Some(x)
        }
        fn unknown(&self) -> Option<i128> {
            None
        }
    }

    fn run(op: WarpOp, m: u32, args: &[[Option<i128>; WARP]]) -> [Option<i128>; WARP] {
        warp_op(op, IntTy::I32, m, args, &Plain, None).unwrap()
    }

    fn lane_ids() -> [Option<i128>; WARP] {
        std::array::from_fn(|l| Some(l as i128))
    }

    #[test]
    fn shuffles_follow_cuda() {
        let k = |x: i128| [Some(x); WARP];
        let down = run(WarpOp::ShflDown, u32::MAX, &[lane_ids(), k(4), k(32)]);
        assert_eq!(down[0], Some(4));
        assert_eq!(down[29], Some(29), "past the end: own value");
        let down8 = run(WarpOp::ShflDown, u32::MAX, &[lane_ids(), k(4), k(8)]);
        assert_eq!(down8[5], Some(5), "past the segment of 8: own value");
        assert_eq!(down8[3], Some(7));
        let up = run(WarpOp::ShflUp, u32::MAX, &[lane_ids(), k(1), k(32)]);
        assert_eq!((up[0], up[1]), (Some(0), Some(0)));
        let x = run(WarpOp::ShflXor, u32::MAX, &[lane_ids(), k(16), k(32)]);
        assert_eq!((x[0], x[17]), (Some(16), Some(1)));
        let b = run(WarpOp::Shfl, u32::MAX, &[lane_ids(), k(35), k(16)]);
        assert_eq!((b[0], b[20]), (Some(3), Some(19)), "source taken modulo the width");
        let inactive = run(WarpOp::ShflDown, 0xFFFF, &[lane_ids(), k(1), k(32)]);
        assert_eq!(inactive[15], None, "lane 16 does not run the shuffle");
    }

    #[test]
    fn votes_and_counts() {
        let odd: [Option<i128>; WARP] = std::array::from_fn(|l| Some((l % 2) as i128));
        assert_eq!(run(WarpOp::Ballot, u32::MAX, &[odd])[0], Some(0xAAAA_AAAAu32 as i32 as i128));
        assert_eq!(run(WarpOp::Any, 0x5555_5555, &[odd])[0], Some(0));
        assert_eq!(run(WarpOp::All, 0xAAAA_AAAA, &[odd])[1], Some(1));
        let seg = [Some(8); WARP];
        assert_eq!(
            run(WarpOp::Reduce(ReduceOp::Add), u32::MAX, &[lane_ids(), seg])[9],
            Some(8 + 9 + 10 + 11 + 12 + 13 + 14 + 15)
        );
        assert_eq!(run(WarpOp::Popc(32), 1, &[[Some(0xF0); WARP]])[0], Some(4));
        // Active lanes 1, 3, 4, 6 (ranks 0..3); the predicate holds in lanes 3 and 6: ranks 1 and 3.
        let p: [Option<i128>; WARP] = std::array::from_fn(|l| Some((l == 3 || l == 6) as i128));
        assert_eq!(run(WarpOp::BallotRanks, 0b101_1010, &[p])[4], Some(0b1010));
        assert_eq!(run(WarpOp::BallotRanks, u32::MAX, &[odd])[0], Some(0xAAAA_AAAAu32 as i32 as i128));
        let label: [Option<i128>; WARP] = std::array::from_fn(|l| Some((l % 3) as i128));
        assert_eq!(run(WarpOp::MatchAny, 0xFF, &[label])[4], Some(0b1001_0010), "lanes 1, 4 and 7 hold 1");
        assert_eq!(run(WarpOp::Ffs(32), 1, &[[Some(0x10); WARP]])[0], Some(5));
        assert_eq!(run(WarpOp::Clz(32), 1, &[[Some(1); WARP]])[0], Some(31));
        assert_eq!(run(WarpOp::Brev(32), 1, &[[Some(1); WARP]])[0], Some(i32::MIN as i128));
        let mut some = lane_ids();
        some[3] = None;
        assert_eq!(run(WarpOp::Reduce(ReduceOp::Max), u32::MAX, &[some, [Some(32); WARP]])[0], None);
    }
}
