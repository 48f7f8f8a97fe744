//! PyTorch's intermediate roundings, tie rules and result dtypes, each checked against values
//! PyTorch 2.15 recorded for its OpInfo samples (`tests/data/opinfo`): a slice of a sample —
//! one output element with just the inputs it reads — and the output PyTorch gave for it.

use super::testing::*;
use crate::exec::tensor::Tensor;
use crate::ir::{Arg, DType};

fn typed(shape: &[usize], v: &[f64], dtype: DType) -> A {
    A::T(Tensor::from_vec(shape, v.to_vec()).expect("shape").cast(dtype).expect("cast"))
}

fn out(target: &str, args: Vec<(&str, A)>) -> Vec<f64> {
    call1(target, args).to_f64_vec()
}

#[test]
fn logit_rounds_every_step_in_the_dtype() {
    let x = [0.40771484375, 0.469970703125];
    assert_eq!(out("aten.logit.default", vec![("self", typed(&[2], &x, DType::F16))]), vec![-0.373291015625, -0.12078857421875]);
    let x = [0.40234375, 0.46875];
    assert_eq!(out("aten.logit.default", vec![("self", typed(&[2], &x, DType::BF16))]), vec![-0.3984375, -0.12451171875]);
}

#[test]
fn ndtr_is_a_chain_of_rounded_tensor_ops() {
    // The lower tail cancels to 0 as in PyTorch (the exact value is 7.6e-6).
    let x = [-1.765625, -4.32421875];
    assert_eq!(out("aten.special_ndtr.default", vec![("self", typed(&[2], &x, DType::F16))]), vec![0.038818359375, 0.0]);
    assert_eq!(out("aten.special_ndtr.default", vec![("self", typed(&[1], &[-2.40625], DType::BF16))]), vec![0.0078125]);
}

#[test]
fn trigamma_follows_single_precision() {
    let r = out("aten.polygamma.default", vec![("n", int(1)), ("self", t32(&[1], &[-7.950_587]))]);
    assert_eq!(r, vec![412.7525939941406]);
    // At a pole float32 gives a huge finite number, not infinity.
    let r = out("aten.polygamma.default", vec![("n", int(1)), ("self", typed(&[1], &[-8.0], DType::I8))]);
    assert_eq!(r, vec![20177651499008.0]);
}

#[test]
fn hermite_he_uses_fused_multiply_adds() {
    let x = t32(&[2], &[3.764_482_5, -3.327_921]);
    let n = t32(&[2], &[7.958_866, 6.791_782_4]);
    assert_eq!(out("aten.special_hermite_polynomial_he.default", vec![("x", x), ("n", n)]), vec![43.709285736083984, 1.956298828125]);
}

#[test]
fn addbmm_stores_the_running_sum_after_every_batch() {
    // Element [3, 5] of the float16 sample: 5 batches of a 5-long dot product.
    #[rustfmt::skip]
    let a = [-2.1171875, 5.4765625, -3.265625, -3.765625, -1.447265625, 0.4931640625, 2.384765625, -7.36328125, -4.8203125,
        4.08203125, 8.53125, -0.84130859375, -2.703125, 4.37109375, -0.71826171875, -7.88671875, 5.78125, -2.705078125,
        -1.8310546875, 4.28125, -7.6015625, -5.60546875, -5.828125, 4.23828125, 2.78515625];
    #[rustfmt::skip]
    let b = [-7.9453125, 2.794921875, -2.126953125, 3.099609375, -2.140625, 3.052734375, -8.5546875, 4.62890625, 4.28125,
        -3.4296875, -1.921875, -4.5234375, -0.5263671875, -3.341796875, 2.689453125, 1.5859375, 7.4375, -6.37109375,
        -1.2451171875, 8.0078125, -7.82421875, 2.345703125, 2.41015625, -0.54833984375, -2.107421875];
    let args = vec![("self", typed(&[1, 1], &[3.0390625], DType::F16)), ("batch1", typed(&[5, 1, 5], &a, DType::F16)), ("batch2", typed(&[5, 5, 1], &b, DType::F16))];
    assert_eq!(out("aten.addbmm.default", args), vec![26.5625]);
}

#[test]
fn bilinear_stores_both_products() {
    let w = [0.5673828125, -0.8095703125, 0.83056640625, -0.32421875, -1.73828125, 1.53515625, 1.2333984375, 1.0107421875, 1.595703125, 0.7353515625, 1.0634765625, 1.6591796875];
    let args = vec![
        ("input1", typed(&[3], &[-1.8837890625, -0.392333984375, -0.96044921875], DType::F16)),
        ("input2", typed(&[4], &[-0.533203125, -1.7666015625, 0.802734375, -1.79296875], DType::F16)),
        ("weight", typed(&[1, 3, 4], &w, DType::F16)),
        ("bias", typed(&[1], &[-0.5087890625], DType::F16)),
    ];
    assert_eq!(out("aten.bilinear.default", args), vec![0.14013671875]);
}

#[test]
fn accumulating_puts_round_after_every_source() {
    // The sources that land on element 2 of the float16 `_unsafe_masked_index_put_accumulate`
    // sample, in PyTorch's order.
    #[rustfmt::skip]
    let vals = [2.328125, 4.3203125, 5.1171875, -6.25390625, 4.78515625, -1.8134765625, -1.201171875, -0.98876953125,
        -4.8203125, -6.86328125, 4.671875, 0.5595703125, -2.458984375, 8.7734375, -7.828125, -8.8828125];
    // They all land on one element: `index_add` accumulates the same way, one source a step.
    let args = vec![("self", typed(&[1], &[8.6171875], DType::F16)), ("dim", int(0)), ("index", ti(&[16], &[0; 16])), ("source", typed(&[16], &vals, DType::F16))];
    let got = out("aten.index_add.default", args);
    assert_eq!(got, vec![-1.953125]);
}

#[test]
fn flash_attention_stores_its_softmax_weights_in_float16() {
    // Query row 2 of head (1, 2) of the causal float16 sample: keys 0..=2 only.
    let q = [4.9609375, -0.712890625, -7.53125, 4.04296875, 4.28125, -4.9296875, -6.05859375, -1.5703125];
    #[rustfmt::skip]
    let k = [7.203125, 7.36328125, -2.544921875, 6.00390625, -5.36328125, -0.56640625, 8.1484375, -1.53125, 4.6796875, 8.984375,
        -3.837890625, 3.837890625, -3.537109375, -2.478515625, 6.671875, 2.8515625, -7.82421875, 8.4375, 6.36328125,
        4.99609375, 1.0205078125, 4.140625, -2.814453125, -3.140625];
    #[rustfmt::skip]
    let v = [-1.548828125, 1.70703125, -0.013214111328125, -4.76171875, -3.23046875, 7.06640625, 6.27734375, -1.3330078125,
        -6.5859375, 7.20703125, -5.25390625, 0.39501953125, 2.880859375, -0.16845703125, -2.580078125, 7.375, 5.203125,
        -8.6796875, -4.9140625, 0.2496337890625, 3.681640625, 3.669921875, -2.32421875, -6.515625];
    let args = vec![("query", typed(&[1, 1, 1, 8], &q, DType::F16)), ("key", typed(&[1, 1, 3, 8], &k, DType::F16)), ("value", typed(&[1, 1, 3, 8], &v, DType::F16))];
    let got = out("aten._scaled_dot_product_flash_attention_for_cpu.default", args);
    assert_eq!(got, vec![-6.14453125, 6.72265625, -4.79296875, -0.058807373046875, 2.34375, 0.46826171875, -1.80078125, 6.609375]);
}

#[test]
fn result_dtypes_follow_pytorch() {
    // `sum_to_size(x, [])` is `x.sum()`: int64 for integer and bool inputs.
    let r = call1("aten.sum_to_size.default", vec![("self", A::T(Tensor::scalar(-8i32))), ("size", ints(&[]))]);
    assert_eq!((r.dtype(), r.to_f64_vec()), (DType::I64, vec![-8.0]));
    let r = call1("aten.sum_to_size.default", vec![("self", A::T(Tensor::scalar(true))), ("size", ints(&[]))]);
    assert_eq!((r.dtype(), r.to_f64_vec()), (DType::I64, vec![1.0]));
    // `any` keeps uint8; `square` of bool is `pow(x, 2)`, int64.
    assert_eq!(call1("aten.any.default", vec![("self", A::T(Tensor::scalar(3u8)))]).dtype(), DType::U8);
    assert_eq!(call1("aten.square.default", vec![("self", A::T(Tensor::from_vec(&[2], vec![true, false]).expect("shape")))]).dtype(), DType::I64);
    // `scalar_tensor(-5, dtype=uint8)` wraps around.
    let r = call1("aten.scalar_tensor.default", vec![("s", int(-5)), ("dtype", A::L(Arg::ScalarType(DType::U8)))]);
    assert_eq!(r.to_f64_vec(), vec![251.0]);
}
