//! Affine forms over the variables of a box of warp executions, and the arithmetic the symbolic
//! engine needs on them: ranges over the box, where a sign changes, and how the values of a
//! form are spread over the residues of a period.

/// The most variables a box has: block x, y, z, the warp, and four nested loops.
pub const NV: usize = 8;

/// `c + Σ a[v]·t[v]`, where variable `v` runs over `0..n[v]` in the box.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Form {
    pub c: i128,
    pub a: [i64; NV],
}

impl Form {
    pub const fn constant(c: i128) -> Form {
        Form { c, a: [0; NV] }
    }
    pub fn is_const(&self) -> bool {
        self.a == [0; NV]
    }
    pub fn add(&self, o: &Form) -> Option<Form> {
        let mut a = [0; NV];
        for (v, x) in a.iter_mut().enumerate() {
            *x = self.a[v].checked_add(o.a[v])?;
        }
        Some(Form { c: self.c.checked_add(o.c)?, a })
    }
    pub fn sub(&self, o: &Form) -> Option<Form> {
        self.add(&o.scale(-1)?)
    }
    pub fn scale(&self, k: i128) -> Option<Form> {
        let mut a = [0; NV];
        for (v, x) in a.iter_mut().enumerate() {
            *x = i64::try_from((self.a[v] as i128).checked_mul(k)?).ok()?;
        }
        Some(Form { c: self.c.checked_mul(k)?, a })
    }
    pub fn plus(&self, k: i128) -> Option<Form> {
        Some(Form { c: self.c.checked_add(k)?, a: self.a })
    }
    /// The innermost variable the form depends on.
    pub fn last_var(&self) -> Option<usize> {
        (0..NV).rev().find(|&v| self.a[v] != 0)
    }
}

/// The variables in scope and their extents.
#[derive(Clone, Copy, Debug)]
pub struct Scope {
    pub n: [i128; NV],
    /// Variables `0..used` are in scope.
    pub used: usize,
}

impl Scope {
    /// Lowest and highest value of `f` over the box.
    pub fn range(&self, f: &Form) -> (i128, i128) {
        self.range_without(f, NV)
    }
    /// The same with variable `skip` left out.
    pub fn range_without(&self, f: &Form, skip: usize) -> (i128, i128) {
        let (mut lo, mut hi) = (f.c, f.c);
        for v in 0..self.used {
            if v == skip || f.a[v] == 0 {
                continue;
            }
            let span = f.a[v] as i128 * (self.n[v] - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        (lo, hi)
    }
    /// Points in the box.
    pub fn volume(&self) -> u128 {
        self.n[..self.used].iter().fold(1u128, |p, &n| p.saturating_mul(n as u128))
    }

    /// Where to cut the box so that the sign of `e` (negative or not) is the same over each
    /// piece: the first point along the innermost variable where it may change, else the
    /// middle of the widest variable. Only asked when the sign is not decided.
    pub fn sign_cut(&self, e: &Form) -> (usize, i128) {
        for v in (0..self.used).rev() {
            let (a, n) = (e.a[v] as i128, self.n[v]);
            if a == 0 || n <= 1 {
                continue;
            }
            let (rmin, rmax) = self.range_without(e, v);
            // t1: the first t where the sign may stop being all negative (or all non-negative);
            // t2: the first t where it is decided the other way for every other variable.
            let (t1, t2) = if a > 0 {
                (ceil_div(-rmax, a), ceil_div(-rmin, a))
            } else {
                (rmin.div_euclid(-a) + 1, rmax.div_euclid(-a) + 1)
            };
            for t in [t1, t2] {
                if t > 0 && t < n {
                    return (v, t);
                }
            }
        }
        let v = (0..self.used).filter(|&v| e.a[v] != 0 && self.n[v] > 1).max_by_key(|&v| self.n[v]).unwrap_or(0);
        (v, (self.n[v] / 2).max(1))
    }

    /// How many points of the box give `Σ a[v]·t[v] ≡ r (mod p)`, for each `r` in `0..p`.
    pub fn residues(&self, a: &[i64; NV], p: i64) -> Vec<u128> {
        let p128 = p as i128;
        let mut dist = vec![0u128; p as usize];
        dist[0] = 1;
        let mut next = vec![0u128; p as usize];
        for (&n, &av) in self.n[..self.used].iter().zip(a) {
            let step = (av as i128).rem_euclid(p128);
            if step == 0 {
                dist.iter_mut().for_each(|d| *d = d.saturating_mul(n as u128));
                continue;
            }
            // t·step mod p repeats with period q.
            let q = p128 / gcd(step, p128);
            next.iter_mut().for_each(|x| *x = 0);
            for j in 0..q.min(n) {
                let count = (n / q + (j < n % q) as i128) as u128;
                let shift = ((j * step) % p128) as usize;
                for (r, &d) in dist.iter().enumerate() {
                    if d != 0 {
                        let to = (r + shift) % p as usize;
                        next[to] = next[to].saturating_add(d.saturating_mul(count));
                    }
                }
            }
            std::mem::swap(&mut dist, &mut next);
        }
        dist
    }
}

pub(super) fn ceil_div(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

pub(super) fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(n: &[i128]) -> Scope {
        let mut s = Scope { n: [1; NV], used: n.len() };
        s.n[..n.len()].copy_from_slice(n);
        s
    }

    fn form(c: i128, a: &[i64]) -> Form {
        let mut f = Form::constant(c);
        f.a[..a.len()].copy_from_slice(a);
        f
    }

    #[test]
    fn residues_count_every_point_once() {
        let s = scope(&[10, 3]);
        let d = s.residues(&form(0, &[4, 32]).a, 32);
        assert_eq!(d.iter().sum::<u128>(), 30);
        // t0 = 0..10 times 4 mod 32: residues 0,4,..,28,0,4 -> 0 and 4 twice, the rest once; times 3.
        assert_eq!(d[0], 6);
        assert_eq!(d[4], 6);
        assert_eq!(d[8], 3);
        assert_eq!(d[1], 0);
    }

    #[test]
    fn residues_brute_force() {
        let s = scope(&[7, 5, 3]);
        let a = form(0, &[12, -20, 7]).a;
        let d = s.residues(&a, 32);
        let mut want = [0u128; 32];
        for x in 0..7i64 {
            for y in 0..5i64 {
                for z in 0..3i64 {
                    want[(12 * x - 20 * y + 7 * z).rem_euclid(32) as usize] += 1;
                }
            }
        }
        assert_eq!(d, want.to_vec());
    }

    #[test]
    fn sign_cut_finds_the_crossing() {
        // 256 t + 17 - 1000 < 0 for t < 3.83: cut at t = 4? No: the first t with e >= 0 is 4.
        let s = scope(&[100]);
        assert_eq!(s.sign_cut(&form(17 - 1000, &[256])), (0, 4));
        // Decreasing: 1000 - 256 t >= 0 for t <= 3.
        assert_eq!(s.sign_cut(&form(1000, &[-256])), (0, 4));
    }

    #[test]
    fn ranges_over_the_box() {
        let s = scope(&[4, 3]);
        assert_eq!(s.range(&form(10, &[2, -5])), (0, 16));
        assert_eq!(s.volume(), 12);
    }
}
