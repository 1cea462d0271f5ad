//! Deterministic contents for index arrays. The analyzer reads them to make data-dependent
//! addresses exact; `sector-validate` writes the very same values into the GPU's buffers.

use crate::diag::{Diagnostic, ErrorKind, Result};
use std::fmt;

/// How a pointer parameter's elements are filled, element `k` getting [`Fill::value`]`(k)`.
#[derive(Clone, Debug, PartialEq)]
pub enum Fill {
    /// Every element 0.
    Zero,
    /// Element k holds k.
    Identity,
    /// Every element holds `v`.
    Constant(i64),
    /// A permutation of `0..len` drawn with `seed` (Fisher-Yates over splitmix64).
    Permutation { len: u64, seed: u64 },
    /// Independent uniform integers in `lo..hi` (half-open) drawn with `seed`.
    Uniform { lo: i64, hi: i64, seed: u64 },
    /// The row offsets of a sparse matrix in CSR form (`row_ptr`): `rows + 1` non-decreasing
    /// elements, the first 0 and the last `nnz`. The `rows - 1` inner offsets are independent
    /// uniform draws from `0..=nnz` (splitmix64 from `seed`), sorted: row `r` has
    /// `offsets[r + 1] - offsets[r]` nonzeros, `nnz / rows` on average.
    Csr { rows: u64, nnz: u64, seed: u64 },
}

/// splitmix64: tiny, well known, identical on host and in tests.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Most elements a permutation may have (it is materialised).
pub const MAX_PERMUTATION: u64 = 1 << 28;

impl Fill {
    /// Parses `zero`, `identity`, `constant:V`, `permutation:LEN:SEED`, `uniform:LO:HI:SEED`,
    /// `csr:ROWS:NNZ:SEED`.
    pub fn parse(s: &str) -> Result<Fill> {
        let parts: Vec<&str> = s.trim().split(':').collect();
        let bad = || {
            Diagnostic::new(
                ErrorKind::Usage,
                format!(
                    "bad fill `{s}`: expected zero, identity, constant:V, permutation:LEN:SEED, uniform:LO:HI:SEED or csr:ROWS:NNZ:SEED"
                ),
            )
        };
        let int = |t: &str| t.trim().parse::<i64>().map_err(|_| bad());
        let uint = |t: &str| t.trim().parse::<u64>().map_err(|_| bad());
        Ok(match parts.as_slice() {
            ["zero"] => Fill::Zero,
            ["identity"] => Fill::Identity,
            ["constant", v] => Fill::Constant(int(v)?),
            ["permutation", len, seed] => {
                let len = uint(len)?;
                if len == 0 || len > MAX_PERMUTATION {
                    return Err(bad().note(format!("a permutation has 1 to {MAX_PERMUTATION} elements")));
                }
                Fill::Permutation { len, seed: uint(seed)? }
            }
            ["uniform", lo, hi, seed] => {
                let (lo, hi) = (int(lo)?, int(hi)?);
                if hi <= lo {
                    return Err(bad().note("uniform needs LO < HI"));
                }
                Fill::Uniform { lo, hi, seed: uint(seed)? }
            }
            ["csr", rows, nnz, seed] => {
                let (rows, nnz) = (uint(rows)?, uint(nnz)?);
                if rows == 0 || rows >= MAX_PERMUTATION {
                    return Err(bad().note(format!("a CSR fill has 1 to {} rows", MAX_PERMUTATION - 1)));
                }
                if nnz > u32::MAX as u64 {
                    return Err(bad().note(format!("a CSR fill has at most {} nonzeros", u32::MAX)));
                }
                Fill::Csr { rows, nnz, seed: uint(seed)? }
            }
            _ => return Err(bad()),
        })
    }

    /// How many elements the fill gives, for those that end (a permutation, CSR offsets);
    /// `None` for fills of any length.
    pub fn elements(&self) -> Option<u64> {
        match *self {
            Fill::Permutation { len, .. } => Some(len),
            Fill::Csr { rows, .. } => Some(rows + 1),
            _ => None,
        }
    }

    /// Materialises what must be (a permutation, CSR offsets); cheap fills need nothing.
    pub fn table(&self) -> Option<Vec<u32>> {
        self.table_until(None).flatten()
    }

    /// [`Fill::table`], given up (`None`) once `deadline` has passed; `Some(None)` for fills
    /// that need no table.
    pub fn table_until(&self, deadline: Option<std::time::Instant>) -> Option<Option<Vec<u32>>> {
        let late = || deadline.is_some_and(|d| std::time::Instant::now() > d);
        match *self {
            Fill::Permutation { len, seed } => {
                let len = len.min(MAX_PERMUTATION) as u32;
                let mut v: Vec<u32> = Vec::new();
                for chunk in (0..len).step_by(1 << 20) {
                    if late() {
                        return None;
                    }
                    v.extend(chunk..len.min(chunk.saturating_add(1 << 20)));
                }
                let mut st = seed;
                for i in (1..v.len()).rev() {
                    if i % (1 << 20) == 0 && late() {
                        return None;
                    }
                    let j = (splitmix64(&mut st) % (i as u64 + 1)) as usize;
                    v.swap(i, j);
                }
                Some(Some(v))
            }
            Fill::Csr { rows, nnz, seed } => {
                let rows = rows.min(MAX_PERMUTATION - 1) as usize;
                let mut v: Vec<u32> = Vec::with_capacity(rows + 1);
                v.push(0);
                let mut st = seed;
                for i in 1..rows {
                    if i % (1 << 20) == 0 && late() {
                        return None;
                    }
                    v.push((splitmix64(&mut st) % (nnz + 1)) as u32);
                }
                if late() {
                    return None;
                }
                v.sort_unstable();
                v.push(nnz as u32);
                Some(Some(v))
            }
            _ => Some(None),
        }
    }

    /// Value of element `k`; `table` is what [`Fill::table`] returned. `None` past a
    /// permutation's end.
    pub fn value(&self, k: i64, table: Option<&[u32]>) -> Option<i64> {
        match *self {
            Fill::Zero => Some(0),
            Fill::Identity => Some(k),
            Fill::Constant(v) => Some(v),
            Fill::Permutation { .. } | Fill::Csr { .. } => {
                let t = table?;
                usize::try_from(k).ok().and_then(|k| t.get(k)).map(|&v| v as i64)
            }
            Fill::Uniform { lo, hi, seed } => {
                // Element-addressable: hash the index with the seed, no table needed.
                let mut st = seed ^ (k as u64).wrapping_mul(0xD129_0F4B_8E31_5A27);
                let r = splitmix64(&mut st);
                let span = (hi as i128 - lo as i128) as u128;
                Some((lo as i128 + (r as u128 % span) as i128) as i64)
            }
        }
    }
}

impl fmt::Display for Fill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fill::Zero => write!(f, "zero"),
            Fill::Identity => write!(f, "identity"),
            Fill::Constant(v) => write!(f, "constant:{v}"),
            Fill::Permutation { len, seed } => write!(f, "permutation:{len}:{seed}"),
            Fill::Uniform { lo, hi, seed } => write!(f, "uniform:{lo}:{hi}:{seed}"),
            Fill::Csr { rows, nnz, seed } => write!(f, "csr:{rows}:{nnz}:{seed}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_permutation() {
        let f = Fill::parse("permutation:1000:7").unwrap();
        let mut t = f.table().unwrap();
        t.sort();
        assert_eq!(t, (0..1000).collect::<Vec<u32>>());
    }

    #[test]
    fn csr_offsets_are_sorted_from_zero_to_nnz() {
        // 5 rows: 6 offsets, 0 first and 100 last, never decreasing; the same seed the same.
        let f = Fill::parse("csr:5:100:3").unwrap();
        assert_eq!(f.to_string(), "csr:5:100:3");
        let t = f.table().unwrap();
        assert_eq!(t.len(), 6);
        assert_eq!((t[0], t[5]), (0, 100));
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
        assert_eq!(Fill::parse("csr:5:100:3").unwrap().table().unwrap(), t);
        assert_eq!(f.value(6, Some(&t)), None);
        // One row: [0, nnz].
        assert_eq!(Fill::parse("csr:1:7:9").unwrap().table().unwrap(), vec![0, 7]);
        // The inner offsets are the seed's splitmix64 draws mod (nnz + 1), sorted.
        let mut st = 3u64;
        let mut inner: Vec<u32> = (0..4).map(|_| (splitmix64(&mut st) % 101) as u32).collect();
        inner.sort_unstable();
        assert_eq!(&t[1..5], inner.as_slice());
    }

    #[test]
    fn uniform_stays_in_range() {
        let f = Fill::parse("uniform:-5:5:1").unwrap();
        for k in 0..1000 {
            let v = f.value(k, None).unwrap();
            assert!((-5..5).contains(&v));
        }
    }

    #[test]
    fn bad_fills_are_refused() {
        for s in ["", "perm", "permutation:0:1", "uniform:5:5:1", "constant:x", "csr:0:5:1", "csr:4:5", "csr:4:-1:1"] {
            assert!(Fill::parse(s).is_err(), "{s}");
        }
    }
}
