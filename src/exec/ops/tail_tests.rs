//! Hand-computed checks of the long-tail families (losses, contractions, random supports,
//! decompositions); OpInfo's cases in `tests/opinfo.rs` cover them against PyTorch.

use super::testing::*;
use super::OpError;
use crate::ir::Arg;

fn v(t: &crate::exec::tensor::Tensor) -> Vec<f64> {
    t.to_f64_vec()
}

#[test]
fn cross_entropy_smooths_labels_and_weights_the_mean() {
    // Two classes, equal logits: log-softmax is ln(1/2) for both, whatever the smoothing.
    let x = || t32(&[2, 2], &[0., 0., 0., 0.]);
    let ln2 = std::f64::consts::LN_2;
    let plain = call1("aten.cross_entropy_loss.default", vec![("self", x()), ("target", ti(&[2], &[0, 1]))]);
    assert!(close(&v(&plain), &[ln2], 1e-6));
    let smooth = call1("aten.cross_entropy_loss.default", vec![("self", x()), ("target", ti(&[2], &[0, 1])), ("label_smoothing", float(0.2))]);
    assert!(close(&v(&smooth), &[ln2], 1e-6), "uniform predictions lose ln 2 under any smoothing");
    // An ignored target drops out of the mean.
    let ign = call1("aten.nll_loss_nd.default", vec![("self", t32(&[2, 2], &[-1., -2., -3., -4.])), ("target", ti(&[2], &[0, -100]))]);
    assert_eq!(v(&ign), vec![1.0]);
}

#[test]
fn einsum_handles_ellipsis_and_implicit_output() {
    let m = crate::exec::tensor::Tensor::from_vec(&[2, 2], vec![1f32, 2., 3., 4.]).unwrap();
    let eq = |e: &str| A::L(Arg::String(e.into()));
    let one = |r: super::OpResult<Vec<crate::exec::value::RtValue>>| v(r.unwrap()[0].as_tensor().unwrap());
    assert_eq!(one(call_list("aten.einsum.default", vec![m.clone()], vec![("equation", eq("ii"))])), vec![5.]);
    assert_eq!(one(call_list("aten.einsum.default", vec![m.clone()], vec![("equation", eq("ij->ji"))])), vec![1., 3., 2., 4.]);
    assert_eq!(one(call_list("aten.einsum.default", vec![m.clone(), m.clone()], vec![("equation", eq("...j,...j"))])), vec![5., 25.]);
    let a = || t32(&[2, 2], &[1., 2., 3., 4.]);
    let r = call1("aten.tensordot.default", vec![("self", a()), ("other", a()), ("dims_self", ints(&[1])), ("dims_other", ints(&[0]))]);
    assert_eq!(v(&r), vec![7., 10., 15., 22.]);
}

#[test]
fn random_samplers_stay_in_their_support() {
    let r = call1("aten.randint.low", vec![("low", int(3)), ("high", int(7)), ("size", ints(&[200]))]);
    assert!(v(&r).iter().all(|&x| (3.0..7.0).contains(&x) && x.fract() == 0.0));
    let b = call1("aten.bernoulli.p", vec![("self", t32(&[100], &[0.; 100])), ("p", float(0.5))]);
    let ones = v(&b).iter().filter(|&&x| x == 1.0).count();
    assert!(v(&b).iter().all(|&x| x == 0.0 || x == 1.0) && (20..80).contains(&ones));
    let u = call1("aten.uniform_.default", vec![("self", t32(&[100], &[0.; 100])), ("from", float(-2.0)), ("to", float(-1.0))]);
    assert!(v(&u).iter().all(|&x| (-2.0..-1.0).contains(&x)));
    let g = call1("aten.geometric_.default", vec![("self", t32(&[50], &[0.; 50])), ("p", float(0.3))]);
    assert!(v(&g).iter().all(|&x| x >= 1.0 && x.fract() == 0.0));
}

#[test]
fn decompositions_solve_and_invert() {
    let a = || t64(&[2, 2], &[4., 7., 2., 6.]);
    let inv = call1("aten.linalg_inv.default", vec![("A", a())]);
    assert!(close(&v(&inv), &[0.6, -0.7, -0.2, 0.4], 1e-12));
    let det = call1("aten.linalg_det.default", vec![("A", a())]);
    assert!(close(&v(&det), &[10.0], 1e-12));
    let not_square = call("aten.linalg_inv.default", vec![("A", t64(&[2, 3], &[0.; 6]))]);
    assert!(matches!(not_square, Err(OpError::Shape(_))));
}

#[test]
fn resize_keeps_the_leading_elements_and_zero_fills_growth() {
    let grown = call1("aten.resize.default", vec![("self", t32(&[2], &[1., 2.])), ("size", ints(&[2, 2]))]);
    assert_eq!((grown.shape().to_vec(), v(&grown)), (vec![2, 2], vec![1., 2., 0., 0.]));
    let shrunk = call1("aten.resize_.default", vec![("self", t32(&[2, 2], &[1., 2., 3., 4.])), ("size", ints(&[3]))]);
    assert_eq!(v(&shrunk), vec![1., 2., 3.]);
    let big = crate::exec::tensor::Tensor::from_vec(&[2], vec![i64::MAX, -3]).unwrap();
    let exact = call1("aten.resize.default", vec![("self", A::T(big)), ("size", ints(&[1]))]);
    assert_eq!(exact.to_i64_vec(), vec![i64::MAX], "integers are not rounded through f64");
    let as_ = call1("aten.resize_as.default", vec![("self", t32(&[4], &[1., 2., 3., 4.])), ("the_template", t32(&[1, 2], &[0., 0.]))]);
    assert_eq!((as_.shape().to_vec(), v(&as_)), (vec![1, 2], vec![1., 2.]));
    assert!(call("aten.resize.default", vec![("self", t32(&[2], &[1., 2.])), ("size", ints(&[-1]))]).is_err());
}

#[test]
fn triangle_indices_list_cells_row_by_row() {
    let tri = |t: &str, offset: i64| v(&call1(t, vec![("row", int(3)), ("col", int(4)), ("offset", int(offset))]));
    assert_eq!(tri("aten.tril_indices.default", 0), vec![0., 1., 1., 2., 2., 2., 0., 0., 1., 0., 1., 2.]);
    assert_eq!(tri("aten.triu_indices.default", 1), vec![0., 0., 0., 1., 1., 2., 1., 2., 3., 2., 3., 3.]);
    assert_eq!(tri("aten.tril_indices.default", -2), vec![2., 0.]);
}
