//! What resampling ops (`upsample_*`, `_upsample_*_aa`, `grid_sample`'s relatives) compute per
//! axis, written once for the decomposition rules, the interpreter and the lowering.

/// PyTorch's `area_pixel_compute_scale`: input pixels per output pixel along one axis. With
/// `align_corners` the corner pixels of input and output coincide; otherwise a given
/// `scale_factor` (the user's, not recomputed from the sizes) wins. An empty output has no
/// pixel to sample, and the scale is taken against one pixel rather than dividing by zero.
pub fn area_pixel_scale(input: usize, output: usize, align_corners: bool, scale_factor: Option<f64>) -> f64 {
    if align_corners {
        if output > 1 {
            (input as f64 - 1.0) / (output as f64 - 1.0)
        } else {
            0.0
        }
    } else {
        scale_factor.filter(|s| *s > 0.0).map_or(input as f64 / output.max(1) as f64, |s| 1.0 / s)
    }
}

#[cfg(test)]
mod tests {
    use super::area_pixel_scale;

    #[test]
    fn corners_sizes_and_given_factors() {
        assert_eq!(area_pixel_scale(4, 3, true, None), 1.5);
        assert_eq!(area_pixel_scale(4, 1, true, None), 0.0);
        assert_eq!(area_pixel_scale(4, 8, false, None), 0.5);
        // A given factor wins over the sizes' ratio (torch's `recompute_scale_factor=False`).
        assert_eq!(area_pixel_scale(5, 10, false, Some(2.5)), 0.4);
        assert_eq!(area_pixel_scale(5, 0, false, None), 5.0);
    }
}
