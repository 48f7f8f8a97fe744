//! Per-family op tests: small hand-computed cases, and invariants on random data.

use super::testing::*;
use super::OpError;
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::{Arg, DType};

fn v(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec()
}

fn tensors(r: Vec<RtValue>) -> Vec<Tensor> {
    r.into_iter().map(|x| x.as_tensor().unwrap().clone()).collect()
}

mod pointwise {
    use super::*;

    #[test]
    fn add_sub_broadcast_and_apply_alpha() {
        let r = call1("aten.add.Tensor", vec![("self", t32(&[2, 1], &[1., 2.])), ("other", t32(&[3], &[10., 20., 30.])), ("alpha", int(2))]);
        assert_eq!(r.shape(), &[2, 3]);
        assert_eq!(v(&r), vec![21., 41., 61., 22., 42., 62.]);
        let r = call1("aten.sub.Tensor", vec![("self", t32(&[2], &[1., 2.])), ("other", float(0.5))]);
        assert_eq!(v(&r), vec![0.5, 1.5]);
        let r = call1("aten.rsub.Scalar", vec![("self", t32(&[2], &[1., 2.])), ("other", int(1))]);
        assert_eq!(v(&r), vec![0., -1.]);
        let e = super::super::testing::call("aten.add.Tensor", vec![("self", t32(&[2], &[1., 2.])), ("other", t32(&[3], &[1., 2., 3.]))]);
        assert!(matches!(e, Err(OpError::Shape(_))), "{e:?}");
    }

    #[test]
    fn integer_scalars_wrap_into_narrow_dtypes() {
        // PyTorch: uint8 5 + (-3)·2 = -1, which wraps to 255; alpha -3 is 253 in uint8.
        let u8s = |v: &[i64]| A::T(Tensor::from_vec(&[v.len()], v.to_vec()).unwrap().cast(DType::U8).unwrap());
        let r = call1("aten.add.Tensor", vec![("self", u8s(&[5, 0])), ("other", u8s(&[2, 9])), ("alpha", int(-3))]);
        assert_eq!((r.dtype(), v(&r)), (DType::U8, vec![255., 229.]));
        let r = call1("aten.add.Tensor", vec![("self", u8s(&[1, 200])), ("other", int(-2))]);
        assert_eq!((r.dtype(), v(&r)), (DType::U8, vec![255., 198.]));
    }

    #[test]
    fn type_promotion_follows_pytorch() {
        // int tensor * python float → float32; int * int stays int64.
        let r = call1("aten.mul.Tensor", vec![("self", ti(&[2], &[1, 2])), ("other", float(0.5))]);
        assert_eq!((r.dtype(), v(&r)), (DType::F32, vec![0.5, 1.0]));
        let r = call1("aten.mul.Tensor", vec![("self", ti(&[2], &[3, 4])), ("other", int(3))]);
        assert_eq!((r.dtype(), v(&r)), (DType::I64, vec![9., 12.]));
        // A 0-dim float64 tensor does not widen a float32 tensor with dims.
        let r = call1("aten.add.Tensor", vec![("self", t32(&[1], &[1.])), ("other", t64(&[], &[2.]))]);
        assert_eq!(r.dtype(), DType::F32);
        // ...but a float 0-dim tensor does promote an int tensor (a higher category).
        let r = call1("aten.add.Tensor", vec![("self", ti(&[1], &[1])), ("other", t64(&[], &[2.]))]);
        assert_eq!(r.dtype(), DType::F64);
        // True division of ints is float32; floor division keeps int64 and rounds down.
        let r = call1("aten.div.Tensor", vec![("self", ti(&[2], &[7, -7])), ("other", int(2))]);
        assert_eq!((r.dtype(), v(&r)), (DType::F32, vec![3.5, -3.5]));
        let r = call1(
            "aten.div.Tensor_mode",
            vec![("self", ti(&[2], &[7, -7])), ("other", int(2)), ("rounding_mode", A::L(Arg::String("floor".into())))],
        );
        assert_eq!((r.dtype(), v(&r)), (DType::I64, vec![3., -4.]));
        let e = call("aten.div.Tensor_mode", vec![("self", ti(&[1], &[1])), ("other", int(0)), ("rounding_mode", A::L(Arg::String("trunc".into())))]);
        assert!(matches!(e, Err(OpError::Unsupported(_))));
    }

    #[test]
    fn activations_match_hand_values() {
        let x = [-3.0f32, -1.0, 0.0, 1.0, 3.0];
        let run = |op: &str, extra: Vec<(&'static str, A)>| {
            let mut args = vec![("self", t32(&[5], &x))];
            args.extend(extra);
            v(&call1(op, args))
        };
        let tol = 1e-6;
        assert!(close(&run("aten.gelu.default", vec![]), &[-0.0040496993, -0.15865526, 0.0, 0.8413447, 2.9959502], tol));
        assert!(close(
            &run("aten.gelu.default", vec![("approximate", A::L(Arg::String("tanh".into())))]),
            &[-0.0036373920, -0.15880801, 0.0, 0.84119199, 2.9963627],
            tol
        ));
        assert!(close(&run("aten.sigmoid.default", vec![]), &[0.047425873, 0.26894142, 0.5, 0.73105858, 0.95257413], tol));
        assert!(close(&run("aten.silu.default", vec![]), &[-0.14227762, -0.26894142, 0.0, 0.73105858, 2.8577223], tol));
        assert!(close(&run("aten.hardswish.default", vec![]), &[0.0, -1.0 / 3.0, 0.0, 2.0 / 3.0, 3.0], tol));
        assert!(close(&run("aten.hardsigmoid.default", vec![]), &[0.0, 1.0 / 3.0, 0.5, 2.0 / 3.0, 1.0], tol));
        assert_eq!(run("aten.relu6.default", vec![]), vec![0., 0., 0., 1., 3.]);
        assert_eq!(run("aten.hardtanh.default", vec![]), vec![-1., -1., 0., 1., 1.]);
        assert_eq!(run("aten.clamp.default", vec![("min", float(-2.0)), ("max", int(2))]), vec![-2., -1., 0., 1., 2.]);
        // min > max gives max everywhere, as in PyTorch.
        assert_eq!(run("aten.clamp.default", vec![("min", int(5)), ("max", int(1))]), vec![1.; 5]);
        assert!(close(&run("aten.erf.default", vec![]), &[-0.99997791, -0.84270079, 0.0, 0.84270079, 0.99997791], tol));
    }

    #[test]
    fn nan_propagates_through_relu_and_clamp() {
        let r = call1("aten.relu.default", vec![("self", t32(&[2], &[f32::NAN, -1.]))]);
        assert!(v(&r)[0].is_nan() && v(&r)[1] == 0.0);
        let r = call1("aten.clamp_min.default", vec![("self", t32(&[1], &[f32::NAN])), ("min", int(0))]);
        assert!(v(&r)[0].is_nan());
    }

    #[test]
    fn where_addcmul_and_comparisons() {
        let r = call1(
            "aten.where.self",
            vec![("condition", A::T(Tensor::from_vec(&[2], vec![true, false]).unwrap())), ("self", t32(&[2, 1], &[1., 2.])), ("other", t64(&[], &[9.]))],
        );
        assert_eq!((r.dtype(), r.shape().to_vec(), v(&r)), (DType::F32, vec![2, 2], vec![1., 9., 2., 9.]));
        let r = call1(
            "aten.addcmul.default",
            vec![("self", t32(&[2], &[1., 1.])), ("tensor1", t32(&[2], &[2., 3.])), ("tensor2", t32(&[2], &[4., 5.])), ("value", float(0.5))],
        );
        assert_eq!(v(&r), vec![5., 8.5]);
        let r = call1("aten.eq.Scalar", vec![("self", t32(&[3], &[f32::NEG_INFINITY, 0., 1.])), ("other", float(f64::NEG_INFINITY))]);
        assert_eq!((r.dtype(), v(&r)), (DType::Bool, vec![1., 0., 0.]));
        let r = call1("aten.logical_not.default", vec![("self", A::T(r))]);
        assert_eq!(v(&r), vec![0., 1., 1.]);
    }

    #[test]
    fn float_ops_round_like_single_precision() {
        // 0.1f32 + 0.2f32 in single precision, not the f64 sum rounded differently.
        let r = call1("aten.add.Tensor", vec![("self", t32(&[1], &[0.1])), ("other", t32(&[1], &[0.2]))]);
        assert_eq!(r.array::<f32>().unwrap()[[0]], 0.1f32 + 0.2f32);
    }
}

mod reduce {
    use super::*;

    #[test]
    fn histc_places_half_values_by_half_arithmetic() {
        // torch.histc(torch.tensor([-1.837], dtype=float16)) counts bin 49 (f64 would say 50):
        // the edges and `(x - lo) * bins / (hi - lo)` round to float16.
        let x = Tensor::from_vec(&[1], vec![-1.837f64]).unwrap().cast(DType::F16).unwrap();
        let r = call1("aten.histc.default", vec![("self", A::T(x))]);
        assert_eq!(r.dtype(), DType::F16);
        let h = v(&r);
        assert_eq!((h.len(), h[49], h.iter().sum::<f64>()), (100, 1.0, 1.0));
        // PyTorch: bin 49 in float64 too, and bin 50 for -1.5, whose arithmetic is exact.
        let bin = |x: f64| v(&call1("aten.histc.default", vec![("self", t64(&[1], &[x]))])).iter().position(|&c| c == 1.0);
        assert_eq!((bin(-1.837), bin(-1.5)), (Some(49), Some(50)));
    }

    #[test]
    fn sums_and_means_over_dims() {
        let x = || t32(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
        let r = call1("aten.sum.dim_IntList", vec![("self", x()), ("dim", ints(&[-1])), ("keepdim", boolean(true))]);
        assert_eq!((r.shape().to_vec(), v(&r)), (vec![2, 1], vec![6., 15.]));
        let r = call1("aten.sum.dim_IntList", vec![("self", x()), ("dim", ints(&[]))]);
        assert_eq!((r.shape().to_vec(), v(&r)), (vec![], vec![21.]));
        let r = call1("aten.mean.dim", vec![("self", x()), ("dim", ints(&[0]))]);
        assert_eq!(v(&r), vec![2.5, 3.5, 4.5]);
        let r = call1("aten.sum.dim_IntList", vec![("self", A::T(Tensor::from_vec(&[3], vec![true, true, false]).unwrap())), ("dim", ints(&[0]))]);
        assert_eq!((r.dtype(), v(&r)), (DType::I64, vec![2.]));
        let r = call1("aten.amax.default", vec![("self", t32(&[3], &[1., f32::NAN, 3.])), ("dim", ints(&[0]))]);
        assert!(v(&r)[0].is_nan());
        let r = call1("aten.any.dim", vec![("self", t32(&[2, 2], &[0., 0., 0., 2.])), ("dim", int(-1)), ("keepdim", boolean(true))]);
        assert_eq!((r.shape().to_vec(), v(&r)), (vec![2, 1], vec![0., 1.]));
    }

    #[test]
    fn prod_over_dim_of_a_0d_tensor_is_the_tensor() {
        // PyTorch: a 0-d tensor's dim 0 (or -1) is its one element; keepdim leaves it 0-d.
        for (dim, keep) in [(0, false), (-1, true)] {
            let r = call1("aten.prod.dim_int", vec![("self", t32(&[], &[-2.5])), ("dim", int(dim)), ("keepdim", boolean(keep))]);
            assert_eq!((r.shape(), v(&r)), (&[][..], vec![-2.5]));
        }
        let r = call1("aten.prod.dim_int", vec![("self", ti(&[], &[7])), ("dim", int(0))]);
        assert_eq!((r.dtype(), v(&r)), (DType::I64, vec![7.]));
        let e = super::super::testing::call("aten.prod.dim_int", vec![("self", t32(&[], &[1.])), ("dim", int(1))]);
        assert!(matches!(e, Err(OpError::Shape(_))), "{e:?}");
    }

    #[test]
    fn variance_follows_correction_and_matches_mean_of_squares() {
        let data = noise(4 * 9, 3);
        let x = || t32(&[4, 9], &data);
        let var = |c: A| v(&call1("aten.var.correction", vec![("self", x()), ("dim", ints(&[1])), ("correction", c)]));
        let (v0, v1) = (var(int(0)), var(int(1)));
        let mean = v(&call1("aten.mean.dim", vec![("self", x()), ("dim", ints(&[1]))]));
        for r in 0..4 {
            let row: Vec<f64> = data[r * 9..r * 9 + 9].iter().map(|&f| f as f64).collect();
            let ms = row.iter().map(|a| a * a).sum::<f64>() / 9.0;
            assert!((v0[r] - (ms - mean[r] * mean[r])).abs() < 1e-6, "population variance");
            assert!((v1[r] - v0[r] * 9.0 / 8.0).abs() < 1e-6, "Bessel's correction");
        }
        let vd = v(&call1("aten.var.dim", vec![("self", x()), ("dim", ints(&[1])), ("unbiased", boolean(true))]));
        assert_eq!(vd, v1);
        let sd = v(&call1("aten.std.dim", vec![("self", x()), ("dim", ints(&[1]))]));
        assert!(close(&sd, &v1.iter().map(|x| x.sqrt()).collect::<Vec<_>>(), 1e-6));
        let vm = tensors(call("aten.var_mean.correction", vec![("self", x()), ("dim", ints(&[1])), ("correction", int(0))]).unwrap());
        assert_eq!((v(&vm[0]), v(&vm[1])), (v0, mean));
    }

    #[test]
    fn softmax_rows_sum_to_one_and_log_softmax_is_its_log() {
        let data: Vec<f32> = noise(5 * 7, 9).iter().map(|x| x * 30.0).collect();
        for dim in [0, 1, -1] {
            let s = call1("aten._softmax.default", vec![("self", t32(&[5, 7], &data)), ("dim", int(dim)), ("half_to_float", boolean(false))]);
            let ls = call1("aten.log_softmax.int", vec![("self", t32(&[5, 7], &data)), ("dim", int(dim))]);
            let sums = v(&call1("aten.sum.dim_IntList", vec![("self", A::T(s.clone())), ("dim", ints(&[dim]))]));
            assert!(sums.iter().all(|x| (x - 1.0).abs() < 1e-6), "{sums:?}");
            assert!(close(&v(&ls), &v(&s).iter().map(|x| x.ln()).collect::<Vec<_>>(), 1e-5));
        }
        // Large logits do not overflow.
        let s = call1("aten.softmax.int", vec![("self", t32(&[2], &[1000., 1000.])), ("dim", int(0))]);
        assert_eq!(v(&s), vec![0.5, 0.5]);
    }
}

mod shape {
    use super::*;

    #[test]
    fn views_materialise_in_row_major_order() {
        let x = || t32(&[2, 3], &[0., 1., 2., 3., 4., 5.]);
        let r = call1("aten.permute.default", vec![("self", x()), ("dims", ints(&[1, 0]))]);
        assert_eq!((r.shape().to_vec(), v(&r)), (vec![3, 2], vec![0., 3., 1., 4., 2., 5.]));
        let r = call1("aten.transpose.int", vec![("self", x()), ("dim0", int(0)), ("dim1", int(-1))]);
        assert_eq!(v(&r), vec![0., 3., 1., 4., 2., 5.]);
        let r = call1("aten.view.default", vec![("self", x()), ("size", ints(&[-1, 2]))]);
        assert_eq!(r.shape(), &[3, 2]);
        let r = call1("aten.expand.default", vec![("self", t32(&[2, 1], &[1., 2.])), ("size", ints(&[3, -1, 2]))]);
        assert_eq!((r.shape().to_vec(), v(&r)[..4].to_vec()), (vec![3, 2, 2], vec![1., 1., 2., 2.]));
        let r = call1("aten.unflatten.int", vec![("self", x()), ("dim", int(-1)), ("sizes", ints(&[3, 1]))]);
        assert_eq!(r.shape(), &[2, 3, 1]);
        let r = call1("aten.flatten.using_ints", vec![("self", A::T(r)), ("start_dim", int(1))]);
        assert_eq!(r.shape(), &[2, 3]);
        assert!(matches!(call("aten.permute.default", vec![("self", x()), ("dims", ints(&[0, 0]))]), Err(OpError::Shape(_))));
        assert!(matches!(call("aten.view.default", vec![("self", x()), ("size", ints(&[4, -1]))]), Err(OpError::Shape(_))));
        assert!(matches!(call("aten.expand.default", vec![("self", x()), ("size", ints(&[3, 3]))]), Err(OpError::Shape(_))));
    }

    #[test]
    fn splits_slices_and_concatenation() {
        let x = || t32(&[5], &[0., 1., 2., 3., 4.]);
        let parts = tensors(call("aten.chunk.default", vec![("self", x()), ("chunks", int(3))]).unwrap());
        assert_eq!(parts.iter().map(|p| p.numel()).collect::<Vec<_>>(), vec![2, 2, 1]);
        let parts = tensors(call("aten.split.Tensor", vec![("self", x()), ("split_size", int(2))]).unwrap());
        assert_eq!(v(&parts[2]), vec![4.]);
        let parts = tensors(call("aten.split_with_sizes.default", vec![("self", x()), ("split_sizes", ints(&[1, 4]))]).unwrap());
        assert_eq!(v(&parts[1]), vec![1., 2., 3., 4.]);
        assert!(call("aten.split_with_sizes.default", vec![("self", x()), ("split_sizes", ints(&[1, 1]))]).is_err());
        let r = call1("aten.slice.Tensor", vec![("self", x()), ("dim", int(0)), ("start", int(-4)), ("end", int(100)), ("step", int(2))]);
        assert_eq!(v(&r), vec![1., 3.]);
    }

    #[test]
    fn factories_infer_dtypes_like_pytorch() {
        let r = call1("aten.arange.start_step", vec![("start", int(1)), ("end", int(7)), ("step", int(2))]);
        assert_eq!((r.dtype(), v(&r)), (DType::I64, vec![1., 3., 5.]));
        let r = call1("aten.arange.default", vec![("end", float(1.0)), ("dtype", A::L(Arg::ScalarType(DType::F64)))]);
        assert_eq!((r.dtype(), v(&r)), (DType::F64, vec![0.]));
        let r = call1("aten.full.default", vec![("size", ints(&[2])), ("fill_value", float(1.5))]);
        assert_eq!((r.dtype(), v(&r)), (DType::F32, vec![1.5, 1.5]));
        let r = call1("aten.full_like.default", vec![("self", ti(&[2], &[1, 2])), ("fill_value", float(2.7))]);
        assert_eq!((r.dtype(), v(&r)), (DType::I64, vec![2., 2.]));
        let r = call1("aten._to_copy.default", vec![("self", t32(&[2], &[1.5, -1.5])), ("dtype", A::L(Arg::ScalarType(DType::I32)))]);
        assert_eq!((r.dtype(), v(&r)), (DType::I32, vec![1., -1.]));
        // Training-mode dropout draws (`super::dropout` tests it): 0, or the input over 1 - p.
        let r = call1("aten.dropout.default", vec![("input", t32(&[1], &[1.])), ("p", float(0.1)), ("train", boolean(true))]);
        assert!(v(&r) == vec![0.0] || (v(&r)[0] - 1.0 / 0.9).abs() < 1e-6, "{:?}", v(&r));
    }
}

mod concat {
    use super::*;

    #[test]
    fn cat_promotes_and_stack_adds_a_dim() {
        let a = Tensor::from_vec(&[1, 2], vec![1i64, 2]).unwrap();
        let b = Tensor::from_vec(&[2, 2], vec![0.5f32, 1.5, 2.5, 3.5]).unwrap();
        let r = tensors(call_list("aten.cat.default", vec![a.clone(), b.clone()], vec![]).unwrap()).remove(0);
        assert_eq!((r.dtype(), r.shape().to_vec(), v(&r)), (DType::F32, vec![3, 2], vec![1., 2., 0.5, 1.5, 2.5, 3.5]));
        let r = tensors(call_list("aten.cat.default", vec![a.clone(), a.clone()], vec![("dim", int(-1))]).unwrap()).remove(0);
        assert_eq!(r.shape(), &[1, 4]);
        assert!(call_list("aten.cat.default", vec![a.clone(), b.clone()], vec![("dim", int(1))]).is_err());
        let r = tensors(call_list("aten.stack.default", vec![a.clone(), a], vec![("dim", int(1))]).unwrap()).remove(0);
        assert_eq!((r.shape().to_vec(), v(&r)), (vec![1, 2, 2], vec![1., 2., 1., 2.]));
    }
}

mod linalg {
    use super::*;

    #[test]
    fn products_match_hand_values() {
        let a = || t32(&[2, 2], &[1., 2., 3., 4.]);
        let b = || t32(&[2, 2], &[5., 6., 7., 8.]);
        assert_eq!(v(&call1("aten.mm.default", vec![("self", a()), ("mat2", b())])), vec![19., 22., 43., 50.]);
        let r = call1("aten.addmm.default", vec![("self", t32(&[2], &[1., -1.])), ("mat1", a()), ("mat2", b())]);
        assert_eq!(v(&r), vec![20., 21., 44., 49.]);
        // linear(x, W, b) = x Wᵀ + b
        let r = call1("aten.linear.default", vec![("input", a()), ("weight", b()), ("bias", t32(&[2], &[1., -1.]))]);
        assert_eq!(v(&r), vec![18., 22., 40., 52.]);
        // 1-D · 1-D is a dot product of rank 0; batch dims broadcast.
        let r = call1("aten.matmul.default", vec![("self", t32(&[2], &[1., 2.])), ("other", t32(&[2], &[3., 4.]))]);
        assert_eq!((r.shape().to_vec(), v(&r)), (vec![], vec![11.]));
        let r = call1("aten.matmul.default", vec![("self", t32(&[3, 1, 2, 2], &noise(12, 1))), ("other", t32(&[4, 2, 5], &noise(40, 2)))]);
        assert_eq!(r.shape(), &[3, 4, 2, 5]);
        assert!(call("aten.mm.default", vec![("self", a()), ("mat2", t32(&[3, 1], &[1., 2., 3.]))]).is_err());
        assert!(call("aten.mm.default", vec![("self", a()), ("mat2", t64(&[2, 2], &[1., 2., 3., 4.]))]).is_err());
    }

    #[test]
    fn bmm_agrees_with_per_batch_mm() {
        let (x, y) = (noise(3 * 4 * 5, 4), noise(3 * 5 * 2, 5));
        let r = call1("aten.bmm.default", vec![("self", t32(&[3, 4, 5], &x)), ("mat2", t32(&[3, 5, 2], &y))]);
        for b in 0..3 {
            let m = call1("aten.mm.default", vec![("self", t32(&[4, 5], &x[b * 20..b * 20 + 20])), ("mat2", t32(&[5, 2], &y[b * 10..b * 10 + 10]))]);
            assert_eq!(v(&r)[b * 8..b * 8 + 8].to_vec(), v(&m));
        }
    }
}

mod conv_pool {
    use super::*;

    fn conv(x: &[f32], xs: &[usize], w: &[f32], ws: &[usize], extra: Vec<(&'static str, A)>) -> Tensor {
        let mut args = vec![("input", t32(xs, x)), ("weight", t32(ws, w))];
        args.extend(extra);
        call1("aten.conv2d.default", args)
    }

    #[test]
    fn padded_convolution_counts_window_overlap() {
        // Ones 3×3 convolved with a ones 2×2 kernel, padding 1: each output counts the overlap.
        let r = conv(&[1.; 9], &[1, 1, 3, 3], &[1.; 4], &[1, 1, 2, 2], vec![("padding", ints(&[1, 1]))]);
        assert_eq!(r.shape(), &[1, 1, 4, 4]);
        assert_eq!(v(&r), vec![1., 2., 2., 1., 2., 4., 4., 2., 2., 4., 4., 2., 1., 2., 2., 1.]);
        // Stride 2, dilation 2 on a 5×5 ramp: taps at offsets 0 and 2.
        let ramp: Vec<f32> = (0..25).map(|i| i as f32).collect();
        let r = conv(&ramp, &[1, 1, 5, 5], &[1., 0., 0., 0.], &[1, 1, 2, 2], vec![("stride", ints(&[2, 2])), ("dilation", ints(&[2, 2]))]);
        assert_eq!((r.shape().to_vec(), v(&r)), (vec![1, 1, 2, 2], vec![0., 2., 10., 12.]));
    }

    #[test]
    fn one_by_one_convolution_is_a_channel_matmul_and_groups_split_channels() {
        let (x, w) = (noise(2 * 4 * 3 * 3, 6), noise(6 * 4, 7));
        let r = conv(&x, &[2, 4, 3, 3], &w, &[6, 4, 1, 1], vec![("bias", t32(&[6], &[0., 1., 2., 3., 4., 5.]))]);
        for (b, o, p) in [(0, 0, 0), (1, 5, 8), (1, 2, 4)] {
            let want: f64 = (0..4).map(|c| x[(b * 4 + c) * 9 + p] as f64 * w[o * 4 + c] as f64).sum::<f64>() + o as f64;
            assert!((v(&r)[(b * 6 + o) * 9 + p] - want).abs() < 1e-5);
        }
        // groups = 2: output channels 0..3 see input channels 0..2 only.
        let wg = noise(6 * 2 * 3 * 3, 8);
        let g = conv(&x, &[2, 4, 3, 3], &wg, &[6, 2, 3, 3], vec![("groups", int(2)), ("padding", ints(&[1]))]);
        let lower: Vec<f32> = x.chunks(18).step_by(2).flatten().copied().collect();
        let first = conv(&lower, &[2, 2, 3, 3], &wg[..3 * 18], &[3, 2, 3, 3], vec![("padding", ints(&[1]))]);
        for b in 0..2 {
            assert!(close(&v(&g)[b * 54..b * 54 + 27], &v(&first)[b * 27..b * 27 + 27], 1e-6));
        }
        let e = call("aten.conv2d.default", vec![("input", t32(&[1, 3, 2, 2], &[0.; 12])), ("weight", t32(&[2, 2, 1, 1], &[0.; 4]))]);
        assert!(matches!(e, Err(OpError::Shape(_))));
    }

    #[test]
    fn pooling_sizes_padding_and_indices() {
        let ramp: Vec<f32> = (0..25).map(|i| i as f32).collect();
        let x = || t32(&[1, 1, 5, 5], &ramp);
        let r = tensors(call("aten.max_pool2d_with_indices.default", vec![("self", x()), ("kernel_size", ints(&[2, 2]))]).unwrap());
        assert_eq!((r[0].shape().to_vec(), v(&r[0])), (vec![1, 1, 2, 2], vec![6., 8., 16., 18.]));
        assert_eq!(v(&r[1]), vec![6., 8., 16., 18.]);
        let r = call1("aten.max_pool2d.default", vec![("self", x()), ("kernel_size", ints(&[2, 2])), ("ceil_mode", boolean(true))]);
        assert_eq!((r.shape().to_vec(), v(&r)), (vec![1, 1, 3, 3], vec![6., 8., 9., 16., 18., 19., 21., 23., 24.]));
        let avg = |pad: bool, div: Option<i64>| {
            let mut a = vec![("self", t32(&[1, 1, 2, 2], &[1., 2., 3., 4.])), ("kernel_size", ints(&[2])), ("stride", ints(&[1])), ("padding", ints(&[1])), ("count_include_pad", boolean(pad))];
            if let Some(d) = div {
                a.push(("divisor_override", int(d)));
            }
            v(&call1("aten.avg_pool2d.default", a))
        };
        assert_eq!(avg(true, None)[0], 0.25, "corner window holds one real element of four");
        assert_eq!(avg(false, None)[0], 1.0);
        assert_eq!(avg(false, Some(2))[4], 5.0, "centre window sums 10, divided by the override");
        let r = call1("aten.adaptive_avg_pool2d.default", vec![("self", x()), ("output_size", ints(&[1, 1]))]);
        assert_eq!(v(&r), vec![12.]);
        let r = call1("aten.adaptive_avg_pool2d.default", vec![("self", x()), ("output_size", ints(&[2, 2]))]);
        // Windows rows/cols [0, 3) and [2, 5).
        assert_eq!(v(&r), vec![6., 8., 16., 18.]);
    }
}

mod norm {
    use super::*;

    #[test]
    fn layer_norm_normalises_rows_and_native_returns_statistics() {
        let data = noise(3 * 8, 10);
        let out = tensors(
            call(
                "aten.native_layer_norm.default",
                vec![("input", t32(&[3, 8], &data)), ("normalized_shape", ints(&[8])), ("weight", A::L(Arg::None)), ("bias", A::L(Arg::None)), ("eps", float(0.0))],
            )
            .unwrap(),
        );
        assert_eq!((out[1].shape().to_vec(), out[2].shape().to_vec()), (vec![3, 1], vec![3, 1]));
        for r in 0..3 {
            let row = &v(&out[0])[r * 8..r * 8 + 8];
            let m = row.iter().sum::<f64>() / 8.0;
            let var = row.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 8.0;
            assert!(m.abs() < 1e-6 && (var - 1.0).abs() < 1e-5, "{m} {var}");
            let raw: Vec<f64> = data[r * 8..r * 8 + 8].iter().map(|&x| x as f64).collect();
            assert!((v(&out[1])[r] - raw.iter().sum::<f64>() / 8.0).abs() < 1e-6);
        }
        let y = call1(
            "aten.layer_norm.default",
            vec![("input", t32(&[1, 2], &[1., 3.])), ("normalized_shape", ints(&[2])), ("weight", t32(&[2], &[2., 2.])), ("bias", t32(&[2], &[1., 1.])), ("eps", float(0.0))],
        );
        assert_eq!(v(&y), vec![-1., 3.]);
        assert!(call("aten.layer_norm.default", vec![("input", t32(&[1, 2], &[1., 3.])), ("normalized_shape", ints(&[3]))]).is_err());
    }

    #[test]
    fn inference_batch_norm_uses_running_statistics_per_channel() {
        let args = || {
            vec![
                ("input", t32(&[1, 2, 1, 2], &[1., 3., 10., 20.])),
                ("weight", t32(&[2], &[1., 2.])),
                ("bias", t32(&[2], &[0., 1.])),
                ("running_mean", t32(&[2], &[2., 10.])),
                ("running_var", t32(&[2], &[4., 25.])),
                ("eps", float(0.0)),
            ]
        };
        let want = vec![-0.5, 0.5, 1., 5.];
        let mut a = args();
        a.push(("training", boolean(false)));
        assert_eq!(v(&call1("aten.batch_norm.default", a)), want);
        let out = tensors(call("aten._native_batch_norm_legit_no_training.default", args()).unwrap());
        assert_eq!((v(&out[0]), out[1].shape().to_vec()), (want, vec![0]));
        let mut a = args();
        a.push(("training", boolean(true)));
        // Training mode normalises with the batch's own (biased) statistics per channel.
        assert_eq!(v(&call1("aten.batch_norm.default", a)), vec![-1., 1., -1., 3.]);
    }
}

mod attention {
    use super::*;

    #[test]
    fn sdpa_is_softmax_of_scaled_scores_times_values() {
        let (q, k, val) = (noise(2 * 3 * 4, 11), noise(2 * 5 * 4, 12), noise(2 * 5 * 6, 13));
        let args = |extra: Vec<(&'static str, A)>| {
            let mut a = vec![("query", t32(&[2, 3, 4], &q)), ("key", t32(&[2, 5, 4], &k)), ("value", t32(&[2, 5, 6], &val))];
            a.extend(extra);
            a
        };
        let out = call1("aten.scaled_dot_product_attention.default", args(vec![]));
        // The same through the op table: softmax(q kᵀ / 2) v.
        let kt = call1("aten.transpose.int", vec![("self", t32(&[2, 5, 4], &k)), ("dim0", int(1)), ("dim1", int(2))]);
        let s = call1("aten.bmm.default", vec![("self", t32(&[2, 3, 4], &q)), ("mat2", A::T(kt))]);
        let s = call1("aten.mul.Tensor", vec![("self", A::T(s)), ("other", float(0.5))]);
        let p = call1("aten.softmax.int", vec![("self", A::T(s)), ("dim", int(-1))]);
        let want = call1("aten.bmm.default", vec![("self", A::T(p)), ("mat2", t32(&[2, 5, 6], &val))]);
        assert!(close(&v(&out), &v(&want), 1e-6));
        // An all-true boolean mask changes nothing; causal row 0 attends to key 0 only.
        let all = A::T(Tensor::from_vec(&[3, 5], vec![true; 15]).unwrap());
        assert_eq!(v(&call1("aten.scaled_dot_product_attention.default", args(vec![("attn_mask", all)]))), v(&out));
        let c = call1("aten.scaled_dot_product_attention.default", args(vec![("is_causal", boolean(true))]));
        assert!(close(&v(&c)[..6], &val[..6].iter().map(|&x| x as f64).collect::<Vec<_>>(), 1e-7));
        let e = call("aten.scaled_dot_product_attention.default", args(vec![("dropout_p", float(0.1))]));
        assert!(matches!(e, Err(OpError::Unsupported(_))));
    }

    #[test]
    fn flash_for_cpu_returns_output_and_row_logsumexp() {
        let (q, k) = (noise(2 * 3 * 4, 14), noise(2 * 3 * 4, 15));
        let qa = || t32(&[1, 2, 3, 4], &q);
        let ka = || t32(&[1, 2, 3, 4], &k);
        let out = tensors(call("aten._scaled_dot_product_flash_attention_for_cpu.default", vec![("query", qa()), ("key", ka()), ("value", ka()), ("scale", float(1.0))]).unwrap());
        assert_eq!((out[0].shape().to_vec(), out[1].shape().to_vec()), (vec![1, 2, 3, 4], vec![1, 2, 3]));
        let scores: Vec<f64> = (0..3).map(|j| (0..4).map(|e| q[e] as f64 * k[j * 4 + e] as f64).sum()).collect();
        let lse = scores.iter().map(|s| s.exp()).sum::<f64>().ln();
        assert!((v(&out[1])[0] - lse).abs() < 1e-6);
    }
}

mod flat_writes {
    use super::*;

    #[test]
    fn put_keeps_the_last_duplicate_or_accumulates() {
        // torch.zeros(2, 2).put_(tensor([3, 0, 3]), tensor([1., 2., 5.])) and, accumulating,
        // with index tensor([3, 0, -1]).
        let r = call1("aten.put.default", vec![("self", t32(&[2, 2], &[0.; 4])), ("index", ti(&[3], &[3, 0, 3])), ("source", t32(&[3], &[1., 2., 5.]))]);
        assert_eq!(v(&r), vec![2., 0., 0., 5.]);
        let args = vec![("self", t32(&[2, 2], &[0.; 4])), ("index", ti(&[3], &[3, 0, -1])), ("source", t32(&[3], &[1., 2., 5.])), ("accumulate", boolean(true))];
        assert_eq!(v(&call1("aten.put.default", args)), vec![2., 0., 0., 6.]);
        let e = call("aten.put.default", vec![("self", t32(&[2], &[0.; 2])), ("index", ti(&[1], &[2])), ("source", t32(&[1], &[1.]))]);
        assert!(matches!(e, Err(OpError::Shape(_))), "{e:?}");
    }

    #[test]
    fn as_strided_scatter_writes_the_strided_view() {
        // torch.as_strided_scatter(torch.zeros(5), tensor([[1., 2.], [3., 4.]]), (2, 2), (2, 1), 1)
        let args = |off| {
            vec![("self", t32(&[5], &[0.; 5])), ("src", t32(&[2, 2], &[1., 2., 3., 4.])), ("size", ints(&[2, 2])), ("stride", ints(&[2, 1])), ("storage_offset", int(off))]
        };
        assert_eq!(v(&call1("aten.as_strided_scatter.default", args(1))), vec![0., 1., 2., 3., 4.]);
        let e = call("aten.as_strided_scatter.default", args(2));
        assert!(matches!(e, Err(OpError::Shape(_))), "{e:?}");
    }
}
