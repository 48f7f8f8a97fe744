//! Overloads that real graphs reach but their everyday siblings do not cover: `roll` and
//! `take_along_dim` without a dim (both work on the flattened tensor), `repeat_interleave` with
//! per-element counts, `nonzero_numpy`'s one tensor per dim, `atleast_*d` of a sequence, and
//! `masked_scatter` whose mask is larger than `self`.
//! Expected values are PyTorch's (worked by hand from its documented semantics).

use super::testing::*;
use crate::exec::value::RtValue;

fn shapes_and_values(out: Vec<RtValue>) -> Vec<(Vec<usize>, Vec<f64>)> {
    out.iter().map(|r| r.as_tensor().expect("tensor output")).map(|t| (t.shape().to_vec(), t.to_f64_vec())).collect()
}

#[test]
fn roll_without_dims_shifts_the_flattened_tensor_and_keeps_the_shape() {
    // torch.roll(tensor([[1, 2], [3, 4]]), 1) == [[4, 1], [2, 3]]; a negative shift the other way.
    let r = call1("aten.roll.default", vec![("self", t32(&[2, 2], &[1., 2., 3., 4.])), ("shifts", ints(&[1])), ("dims", ints(&[]))]);
    assert_eq!((r.shape().to_vec(), r.to_f64_vec()), (vec![2, 2], vec![4., 1., 2., 3.]));
    let r = call1("aten.roll.default", vec![("self", t32(&[2, 2], &[1., 2., 3., 4.])), ("shifts", ints(&[-5]))]);
    assert_eq!(r.to_f64_vec(), vec![2., 3., 4., 1.], "shifts wrap modulo numel");
}

#[test]
fn take_along_dim_without_dim_gathers_from_the_flattened_tensor() {
    // torch.take_along_dim(t, idx) == t.view(-1).gather(0, idx.view(-1)): 1-D, idx's numel.
    let r = call1("aten.take_along_dim.default", vec![("self", t32(&[2, 2], &[10., 30., 20., 40.])), ("indices", ti(&[2, 1], &[3, 0]))]);
    assert_eq!((r.shape().to_vec(), r.to_f64_vec()), (vec![2], vec![40., 10.]));
}

#[test]
fn repeat_interleave_with_counts_repeats_each_slice_its_own_times() {
    // Along dim 0: row 0 once, row 1 twice.
    let r = call1("aten.repeat_interleave.self_Tensor", vec![("self", t32(&[2, 2], &[1., 2., 3., 4.])), ("repeats", ti(&[2], &[1, 2])), ("dim", int(0))]);
    assert_eq!((r.shape().to_vec(), r.to_f64_vec()), (vec![3, 2], vec![1., 2., 3., 4., 3., 4.]));
    // No dim: the flattened tensor, zero counts dropping elements.
    let r = call1("aten.repeat_interleave.self_Tensor", vec![("self", t32(&[3], &[1., 2., 3.])), ("repeats", ti(&[3], &[0, 2, 1]))]);
    assert_eq!(r.to_f64_vec(), vec![2., 2., 3.]);
    // A single count applies to every element; an output_size that disagrees is an error.
    let r = call1("aten.repeat_interleave.self_Tensor", vec![("self", t32(&[2], &[5., 6.])), ("repeats", ti(&[1], &[2]))]);
    assert_eq!(r.to_f64_vec(), vec![5., 5., 6., 6.]);
    let bad = call("aten.repeat_interleave.self_Tensor", vec![("self", t32(&[2], &[5., 6.])), ("repeats", ti(&[1], &[2])), ("output_size", int(3))]);
    assert!(bad.is_err(), "output_size 3 where the counts sum to 4");
}

#[test]
fn nonzero_numpy_returns_one_coordinate_tensor_per_dim() {
    // numpy.nonzero([[0, 1], [2, 0]]) == ([0, 1], [1, 0]).
    let out = call("aten.nonzero_numpy.default", vec![("self", t32(&[2, 2], &[0., 1., 2., 0.]))]).expect("runs");
    assert_eq!(shapes_and_values(out), vec![(vec![2], vec![0., 1.]), (vec![2], vec![1., 0.])]);
}

#[test]
fn atleast_nd_of_a_sequence_reshapes_each_tensor_as_pytorch_does() {
    let x0 = || crate::exec::tensor::Tensor::from_vec(&[], vec![7f32]).expect("0-d");
    let x1 = || crate::exec::tensor::Tensor::from_vec(&[3], vec![1f32, 2., 3.]).expect("1-d");
    let x2 = || crate::exec::tensor::Tensor::from_vec(&[2, 3], vec![0f32; 6]).expect("2-d");
    let shapes = |target: &str| -> Vec<Vec<usize>> {
        let out = call_list(target, vec![x0(), x1(), x2()], vec![]).expect("runs");
        shapes_and_values(out).into_iter().map(|(s, _)| s).collect()
    };
    assert_eq!(shapes("aten.atleast_1d.Sequence"), vec![vec![1], vec![3], vec![2, 3]]);
    assert_eq!(shapes("aten.atleast_2d.Sequence"), vec![vec![1, 1], vec![1, 3], vec![2, 3]]);
    // A 1-D tensor becomes [1, n, 1] and a 2-D one [m, n, 1] (not [1, m, n]).
    assert_eq!(shapes("aten.atleast_3d.Sequence"), vec![vec![1, 1, 1], vec![1, 3, 1], vec![2, 3, 1]]);
}

#[test]
fn masked_scatter_broadcasts_self_and_mask_together() {
    // torch.zeros(3).masked_scatter(tensor([[True, False, True], [False, True, False]]),
    // arange(1., 7.)) == [[1, 0, 2], [0, 3, 0]]: the output has the mask's larger shape.
    let mask = crate::exec::tensor::Tensor::from_vec(&[2, 3], vec![1i64, 0, 1, 0, 1, 0]).expect("mask").cast(crate::ir::DType::Bool).expect("bool");
    let r = call1("aten.masked_scatter.default", vec![("self", t32(&[3], &[0., 0., 0.])), ("mask", A::T(mask)), ("source", t32(&[6], &[1., 2., 3., 4., 5., 6.]))]);
    assert_eq!((r.shape().to_vec(), r.to_f64_vec()), (vec![2, 3], vec![1., 0., 2., 0., 3., 0.]));
}

#[test]
fn circular_padding_wraps_around_what_cropping_leaves() {
    // F.pad(arange(4.), (-1, 1), mode="circular") == [1, 2, 3, 1]: the left crop drops 0, and
    // the right border wraps to the first kept element, not to the input's first.
    let r = call1("aten.pad.default", vec![("self", t32(&[1, 1, 4], &[0., 1., 2., 3.])), ("pad", ints(&[-1, 1])), ("mode", A::L(crate::ir::Arg::String("circular".into())))]);
    assert_eq!(r.to_f64_vec(), vec![1., 2., 3., 1.]);
    let r = call1("aten.pad.default", vec![("self", t32(&[1, 1, 4], &[0., 1., 2., 3.])), ("pad", ints(&[2, -1])), ("mode", A::L(crate::ir::Arg::String("circular".into())))]);
    assert_eq!(r.to_f64_vec(), vec![1., 2., 0., 1., 2.], "right crop, left wrap over [0, 1, 2]");
}

#[test]
fn searchsorted_takes_a_scalar_value_and_a_sorter() {
    // torch.searchsorted(tensor([1., 3., 5.]), 4.0) == tensor(2), a 0-dim result; right=True
    // puts an equal value after its match.
    let seq = || t32(&[3], &[1., 3., 5.]);
    let r = call1("aten.searchsorted.Scalar", vec![("sorted_sequence", seq()), ("self", float(4.0))]);
    assert_eq!((r.shape().to_vec(), r.to_f64_vec()), (vec![], vec![2.]));
    let r = call1("aten.searchsorted.Scalar", vec![("sorted_sequence", seq()), ("self", float(3.0)), ("right", boolean(true))]);
    assert_eq!(r.to_f64_vec(), vec![2.]);
    // Unsorted [5, 1, 3] read through sorter [1, 2, 0] is [1, 3, 5].
    let r = call1(
        "aten.searchsorted.Tensor",
        vec![("sorted_sequence", t32(&[3], &[5., 1., 3.])), ("self", t32(&[2], &[0., 4.])), ("sorter", ti(&[3], &[1, 2, 0]))],
    );
    assert_eq!(r.to_f64_vec(), vec![0., 2.]);
}

#[test]
fn one_hot_marks_each_class_and_refuses_values_out_of_range() {
    // F.one_hot(tensor([2, 0]), 3) == [[0, 0, 1], [1, 0, 0]]; without num_classes, max + 1.
    let r = call1("aten.one_hot.default", vec![("self", ti(&[2], &[2, 0])), ("num_classes", int(3))]);
    assert_eq!((r.shape().to_vec(), r.to_f64_vec()), (vec![2, 3], vec![0., 0., 1., 1., 0., 0.]));
    let r = call1("aten.one_hot.default", vec![("self", ti(&[2], &[1, 0]))]);
    assert_eq!(r.shape(), &[2, 2]);
    assert!(call("aten.one_hot.default", vec![("self", ti(&[1], &[3])), ("num_classes", int(3))]).is_err());
    assert!(call("aten.one_hot.default", vec![("self", ti(&[1], &[-1]))]).is_err());
}

#[test]
fn histogram_over_given_edges_closes_the_last_bin() {
    // torch.histogram(tensor([0., 1., 2.5, 3., 4.]), bins=tensor([0., 1., 3.])) ==
    // ([1, 3], edges): 3 sits on the last edge and counts, 4 lies outside.
    let out = call("aten.histogram.bins_tensor", vec![("self", t32(&[5], &[0., 1., 2.5, 3., 4.])), ("bins", t32(&[3], &[0., 1., 3.]))]).expect("runs");
    assert_eq!(shapes_and_values(out), vec![(vec![2], vec![1., 3.]), (vec![3], vec![0., 1., 3.])]);
    // density=True: counts over (total · bin width): 1/(4·1), 3/(4·2).
    let out = call("aten.histogram.bins_tensor", vec![("self", t32(&[5], &[0., 1., 2.5, 3., 4.])), ("bins", t32(&[3], &[0., 1., 3.])), ("density", boolean(true))]).expect("runs");
    assert_eq!(shapes_and_values(out)[0].1, vec![0.25, 0.375]);
}

#[test]
fn stft_of_one_frame_is_its_dft() {
    // torch.stft(arange(4.), 4, center=False, return_complex=False): one frame, bins 0..=2 of
    // [0, 1, 2, 3]:
    // 6, -2 + 2i, -2.
    let r = call1("aten.stft.default", vec![("self", t32(&[4], &[0., 1., 2., 3.])), ("n_fft", int(4)), ("return_complex", boolean(false))]);
    assert_eq!(r.shape(), &[3, 1, 2]);
    assert!(close(&r.to_f64_vec(), &[6., 0., -2., 2., -2., 0.], 1e-6), "{:?}", r.to_f64_vec());
}

#[test]
fn edge_values_follow_pytorch() {
    // median.dim of a 0-dim tensor is 0-dim, keepdim or not.
    let x = || A::T(crate::exec::tensor::Tensor::from_vec(&[], vec![3f32]).expect("0-d"));
    let out = call("aten.median.dim", vec![("self", x()), ("dim", int(0)), ("keepdim", boolean(true))]).expect("runs");
    assert_eq!(shapes_and_values(out), vec![(vec![], vec![3.]), (vec![], vec![0.])]);
    // soft_margin_loss in float16: exp(12) overflows half, so the loss is infinite as in PyTorch.
    let h = |v: f64| A::T(crate::exec::tensor::Tensor::from_vec(&[1], vec![v as f32]).expect("t").cast(crate::ir::DType::F16).expect("half"));
    let r = call1("aten.soft_margin_loss.default", vec![("self", h(-12.0)), ("target", h(1.0))]);
    assert_eq!(r.to_f64_vec(), vec![f64::INFINITY]);
    // An integer arange truncates its step (-0.5 → 0) but is as long as the scalars say.
    let r = call1("aten.arange.start_step", vec![("start", int(5)), ("end", int(0)), ("step", float(-0.5)), ("dtype", A::L(crate::ir::Arg::ScalarType(crate::ir::DType::I64)))]);
    assert_eq!(r.to_f64_vec(), vec![5.; 10]);
}

/// `polar(abs, angle)` is `abs·e^{i·angle}` (torch.polar: `polar(2, π/2)` = 2i), complex64 of
/// float32 operands; operands of different shapes are refused, not broadcast silently.
#[test]
fn polar_builds_complex_values_from_magnitude_and_angle() {
    let half_pi = std::f32::consts::FRAC_PI_2;
    let out = call("aten.polar.default", vec![("abs", t32(&[2], &[2.0, 1.0])), ("angle", t32(&[2], &[half_pi, 0.0]))]).unwrap();
    let RtValue::Complex(c) = &out[0] else { panic!("expected a complex output, got {out:?}") };
    assert_eq!((c.dtype, c.shape.clone()), (crate::ir::DType::Complex64, vec![2]));
    assert!((c.re[0]).abs() < 1e-6 && (c.im[0] - 2.0).abs() < 1e-6, "{:?} {:?}", c.re, c.im);
    assert!((c.re[1] - 1.0).abs() < 1e-12 && c.im[1].abs() < 1e-12);
    assert!(call("aten.polar.default", vec![("abs", t32(&[2], &[1.0, 1.0])), ("angle", t32(&[1], &[0.0]))]).is_err());
}
