//! Host tensors into device buffers: a weight uploaded once ([`super::Resident`]), a forward's
//! inputs and host-step results into buffers of its pool, in the layout the kernel reads.

use super::plan::RunError;
use super::pool::BufferPool;
use super::{BufferId, Device, RuntimeError};
use crate::exec::Tensor;
use crate::lower::kernel::Layout;

pub(super) fn upload(dev: &mut dyn Device, t: &Tensor, kernel: &str) -> Result<BufferId, RunError> {
    // Buffers hold the tensor's own dtype; the kernel converts on load.
    let bytes = t.to_le_bytes();
    let b = dev.alloc(bytes.len()).map_err(|e| with_kernel(e, kernel))?;
    if let Err(e) = dev.write(b, &bytes) {
        let _ = dev.free(b);
        return Err(e.into());
    }
    Ok(b)
}

/// Tensor `t` as a buffer of `layout` stores it: itself, or a 2-D weight transposed (element
/// `(r, c)` of `[R, C]` at `c · R + r`), or a 3-D one transposed per leading index (`(g, r, c)`
/// of `[G, R, C]` at `g · C · R + c · R + r`), or one of two or more dims with its first dim
/// last ([`Layout::LeadingLast`]: the matrix `[R, C]` of its first dim by the rest, transposed).
pub(super) fn stored(t: &Tensor, layout: Layout) -> Result<std::borrow::Cow<'_, Tensor>, String> {
    match (layout, t.shape()) {
        (Layout::Plain, _) => Ok(std::borrow::Cow::Borrowed(t)),
        (Layout::Transposed, &[r, c]) => Tensor::from_le_strided(t.dtype(), &[c, r], &[1, c], 0, &t.to_le_bytes()).map(std::borrow::Cow::Owned),
        (Layout::Transposed, &[g, r, c]) => {
            let plane = r.checked_mul(c).ok_or_else(|| format!("shape {:?} overflows", t.shape()))?;
            Tensor::from_le_strided(t.dtype(), &[g, c, r], &[plane, 1, c], 0, &t.to_le_bytes()).map(std::borrow::Cow::Owned)
        }
        (Layout::LeadingLast, [r, rest @ ..]) if !rest.is_empty() => {
            let (r, c) = (*r, rest.iter().product());
            Tensor::from_le_strided(t.dtype(), &[c, r], &[1, c], 0, &t.to_le_bytes()).map(std::borrow::Cow::Owned)
        }
        (Layout::Transposed, shape) => Err(format!("a transposed layout needs 2 or 3 dims, not shape {shape:?}")),
        (Layout::LeadingLast, shape) => Err(format!("a first-dim-last layout needs 2 or more dims, not shape {shape:?}")),
    }
}

/// [`upload`] into a buffer of the run's pool.
pub(super) fn upload_pooled(dev: &mut dyn Device, pool: &mut BufferPool, t: &Tensor, kernel: &str) -> Result<BufferId, RunError> {
    let bytes = t.to_le_bytes();
    let b = pool.take(dev, bytes.len()).map_err(|e| with_kernel(e, kernel))?;
    match dev.write(b, &bytes) {
        Ok(()) => Ok(b),
        Err(e) => {
            let _ = pool.give_back(b);
            Err(e.into())
        }
    }
}

/// Names the kernel in an out-of-memory error raised while preparing its launch.
pub(super) fn with_kernel(e: RuntimeError, kernel: &str) -> RuntimeError {
    match e {
        RuntimeError::OutOfMemory { bytes, kernel: None } => RuntimeError::OutOfMemory { bytes, kernel: Some(kernel.to_string()) },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[G, R, C]` with element `(g, r, c)` = `100 g + 10 r + c`.
    fn experts(g: usize, r: usize, c: usize) -> Tensor {
        let values = (0..g * r * c).map(|i| (100 * (i / (r * c)) + 10 * (i / c % r) + i % c) as f32).collect();
        Tensor::from_vec(&[g, r, c], values).expect("shape and values agree")
    }

    #[test]
    fn a_3d_weight_is_transposed_per_leading_index() {
        let (g, r, c) = (2, 3, 4);
        let t = experts(g, r, c);
        let packed = stored(&t, Layout::Transposed).expect("3 dims");
        assert_eq!(packed.shape(), &[g, c, r]);
        let got = packed.to_f64_vec();
        for (gi, ri, ci) in (0..g).flat_map(|gi| (0..r).flat_map(move |ri| (0..c).map(move |ci| (gi, ri, ci)))) {
            // `(g, r, c)` at `g · C · R + c · R + r`, as `lower::ops::grouped_columns` reads it.
            assert_eq!(got[gi * c * r + ci * r + ri], (100 * gi + 10 * ri + ci) as f64, "element ({gi}, {ri}, {ci})");
        }
        assert!(stored(&t, Layout::Plain).is_ok_and(|p| p.to_f64_vec() == t.to_f64_vec()));
    }

    #[test]
    fn leading_last_puts_the_first_dim_innermost_over_the_rest_flattened() {
        // A `[Cout 3, Cin 2, kh 1, kw 2]` convolution weight: `(o, rest)` at `rest · 3 + o`.
        let (o, rest) = (3, 4);
        let t = Tensor::from_vec(&[o, 2, 1, 2], (0..o * rest).map(|i| i as f32).collect()).expect("shape and values agree");
        let packed = stored(&t, Layout::LeadingLast).expect("4 dims");
        assert_eq!(packed.shape(), &[rest, o]);
        let got = packed.to_f64_vec();
        for (oi, ri) in (0..o).flat_map(|oi| (0..rest).map(move |ri| (oi, ri))) {
            assert_eq!(got[ri * o + oi], (oi * rest + ri) as f64, "element ({oi}, {ri})");
        }
        // A 3-D weight: not the per-leading-index transpose of `Layout::Transposed`.
        let e = experts(2, 3, 4);
        assert_ne!(stored(&e, Layout::LeadingLast).map(|p| p.to_f64_vec()), stored(&e, Layout::Transposed).map(|p| p.to_f64_vec()));
        assert!(stored(&Tensor::from_vec(&[4], vec![0f32; 4]).expect("shape"), Layout::LeadingLast).is_err());
    }

    #[test]
    fn a_transposed_layout_of_other_ranks_is_an_error() {
        let t = Tensor::from_vec(&[2, 2, 2, 2], vec![0f32; 16]).expect("shape and values agree");
        assert!(stored(&t, Layout::Transposed).is_err_and(|m| m.contains("2 or 3 dims")));
    }
}
