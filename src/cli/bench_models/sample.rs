//! `bench models --sample N --seed S`: which models of the corpus a run measures, chosen by a
//! seeded generator rather than by us, and the same on every machine: the candidates are sorted
//! by file stem (then folder) before drawing, and the generator is SplitMix64, whose output is a
//! pure function of the seed (no platform RNG, no dependency whose stream may change).

use std::path::PathBuf;

/// One `.pt2` the run may measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub dir: PathBuf,
    pub file: PathBuf,
    pub stem: String,
}

/// SplitMix64 (Steele, Lea and Flood 2014; the seeder of xoshiro): 64 bits of state, every seed
/// valid, and well mixed even for the small consecutive seeds users type.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (`n > 0`) by multiply-shift: integer arithmetic only, so identical
    /// everywhere; its bias (at most n / 2^64) is far below anything a corpus of hundreds sees.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// `n` of `candidates` drawn without replacement with seed `seed`, in stem order (so a run
/// reads like an unsampled one); all of them when `n` is at least their number. The draw is a
/// partial Fisher–Yates shuffle over the candidates sorted by (stem, folder), so neither the
/// order `read_dir` returned nor the order of `--dir` flags changes the sample.
pub fn sample(candidates: &[Candidate], n: usize, seed: u64) -> Vec<Candidate> {
    let mut sorted = candidates.to_vec();
    sorted.sort_by(|a, b| a.stem.cmp(&b.stem).then_with(|| a.dir.cmp(&b.dir)));
    sorted.dedup();
    if n >= sorted.len() {
        return sorted;
    }
    let mut rng = SplitMix64(seed);
    let mut idx: Vec<usize> = (0..sorted.len()).collect();
    for i in 0..n {
        let j = i + rng.below(idx.len() - i);
        idx.swap(i, j);
    }
    let mut chosen = idx[..n].to_vec();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| sorted[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(n: usize) -> Vec<Candidate> {
        (0..n)
            .map(|i| {
                let stem = format!("model_{i:03}");
                Candidate { dir: "corpus".into(), file: format!("corpus/{stem}.pt2").into(), stem }
            })
            .collect()
    }

    fn stems(c: &[Candidate]) -> Vec<&str> {
        c.iter().map(|c| c.stem.as_str()).collect()
    }

    #[test]
    fn the_generator_is_splitmix64() {
        // The first outputs for seed 0 of the reference implementation (Vigna's splitmix64.c):
        // a change here changes every published sample.
        let mut r = SplitMix64(0);
        assert_eq!(r.next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn a_seed_gives_the_same_sample_whatever_the_input_order() {
        let c = corpus(238);
        let a = sample(&c, 20, 1);
        let mut reversed = c.clone();
        reversed.reverse();
        assert_eq!(a, sample(&reversed, 20, 1));
        assert_eq!(a.len(), 20);
        assert_ne!(stems(&a), stems(&sample(&c, 20, 2)), "another seed, another sample");
        let mut sorted = stems(&a);
        sorted.sort_unstable();
        assert_eq!(stems(&a), sorted, "listed in stem order");
    }

    #[test]
    fn a_sample_has_no_duplicates_and_comes_from_the_set() {
        let c = corpus(50);
        for seed in 0..200 {
            let s = sample(&c, 17, seed);
            let mut names = stems(&s);
            names.dedup();
            assert_eq!(names.len(), 17, "seed {seed}");
            assert!(s.iter().all(|m| c.contains(m)), "seed {seed}");
        }
    }

    #[test]
    fn every_model_is_drawn_over_many_seeds() {
        // A broken draw (an index never reached, the last one say) shows up as a model never chosen.
        let c = corpus(10);
        let mut seen = std::collections::HashSet::new();
        for seed in 0..100 {
            seen.extend(sample(&c, 3, seed).into_iter().map(|m| m.stem));
        }
        assert_eq!(seen.len(), 10);
    }

    #[test]
    fn n_at_least_the_set_takes_all_of_it_once() {
        let mut c = corpus(5);
        c.push(c[2].clone());
        assert_eq!(stems(&sample(&c, 5, 7)), stems(&corpus(5)));
        assert_eq!(stems(&sample(&c, 1000, 7)), stems(&corpus(5)));
        assert!(sample(&c, 0, 7).is_empty());
        assert!(sample(&[], 3, 7).is_empty());
    }

    #[test]
    fn the_same_stem_in_two_folders_is_two_models() {
        let mut c = corpus(3);
        c.push(Candidate { dir: "other".into(), file: "other/model_001.pt2".into(), stem: "model_001".into() });
        let all = sample(&c, 10, 3);
        assert_eq!(all.len(), 4);
        assert_eq!(all[1].dir, PathBuf::from("corpus"));
        assert_eq!(all[2].dir, PathBuf::from("other"));
    }
}
