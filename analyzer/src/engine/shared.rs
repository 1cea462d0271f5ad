//! Shared-memory wavefronts: 32 banks of 4 bytes (Hopper and earlier).

/// Wavefronts one shared-memory instruction needs, and the fewest it could need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wavefronts {
    pub wavefronts: u64,
    pub ideal: u64,
}

const BANKS: i64 = 32;
const WORD: i64 = 4;

/// `addrs` are the active lanes' byte addresses in lane order.
///
/// Model: a request is split into phases of 128 bytes worth of lanes (all 32 lanes for accesses
/// of up to 4 bytes, 16 for 8 bytes, 8 for 16 bytes). In a phase each bank serves one 4-byte word
/// per wavefront; lanes reading the same word share it (broadcast). A phase needs as many
/// wavefronts as its busiest bank has distinct words.
pub fn wavefronts(addrs: &[i64], width: u32) -> Wavefronts {
    if addrs.is_empty() {
        return Wavefronts { wavefronts: 0, ideal: 0 };
    }
    let width = width.max(1) as i64;
    let per_phase = (128 / width.max(WORD)).max(1) as usize;
    let mut total = 0u64;
    let mut words: Vec<i64> = Vec::with_capacity(128);
    for phase in addrs.chunks(per_phase) {
        words.clear();
        for &a in phase {
            let first = a.div_euclid(WORD);
            let last = (a + width - 1).div_euclid(WORD);
            words.extend(first..=last);
        }
        words.sort_unstable();
        words.dedup();
        let mut per_bank = [0u64; BANKS as usize];
        for &w in &words {
            per_bank[w.rem_euclid(BANKS) as usize] += 1;
        }
        total += per_bank.iter().copied().max().unwrap_or(0).max(1);
    }
    let bytes = addrs.len() as u64 * width as u64;
    Wavefronts { wavefronts: total, ideal: bytes.div_ceil(128).max(1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(f: impl Fn(i64) -> i64) -> Vec<i64> {
        (0..32).map(f).collect()
    }

    #[test]
    fn row_of_floats_is_one_wavefront() {
        assert_eq!(wavefronts(&lanes(|l| 4 * l), 4).wavefronts, 1);
    }

    #[test]
    fn column_of_unpadded_tile_conflicts_32_ways() {
        // tile[32][32] read by column: every lane in bank 0.
        assert_eq!(wavefronts(&lanes(|l| 4 * 32 * l), 4).wavefronts, 32);
    }

    #[test]
    fn column_of_padded_tile_is_conflict_free() {
        // tile[32][33]: lane l at word 33 l, bank l.
        assert_eq!(wavefronts(&lanes(|l| 4 * 33 * l), 4).wavefronts, 1);
    }

    #[test]
    fn broadcast_is_one_wavefront() {
        assert_eq!(wavefronts(&lanes(|_| 64), 4).wavefronts, 1);
    }

    #[test]
    fn stride_two_is_two_way() {
        assert_eq!(wavefronts(&lanes(|l| 8 * l), 4).wavefronts, 2);
    }

    #[test]
    fn float4_copy_takes_four() {
        let w = wavefronts(&lanes(|l| 16 * l), 16);
        assert_eq!((w.wavefronts, w.ideal), (4, 4));
    }
}
