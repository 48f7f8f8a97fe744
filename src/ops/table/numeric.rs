//! Numerical integration, histograms and other small numeric routines.

use super::prelude::*;

#[rustfmt::skip]
pub(super) const OPS: &[OpDef] = &[
    op("aten.trapz.x").run(x::numeric::trapz).core(r::numeric::trapezoid_x),
    op("aten.trapz.dx").run(x::numeric::trapz).core(r::numeric::trapezoid_dx),
    op("aten.trapezoid.x").run(x::numeric::trapz).core(r::numeric::trapezoid_x),
    op("aten.trapezoid.dx").run(x::numeric::trapz).core(r::numeric::trapezoid_dx),
    op("aten.cumulative_trapezoid.x").run(x::numeric::cumulative_trapezoid).core(r::numeric::cumulative_trapezoid_x),
    op("aten.cumulative_trapezoid.dx").run(x::numeric::cumulative_trapezoid).core(r::numeric::cumulative_trapezoid_dx),
    op("aten.gradient.scalarint").run(x::numeric::gradient).core(r::gradient::gradient),
    op("aten.gradient.scalararray").run(x::numeric::gradient).core(r::gradient::gradient),
    op("aten.gradient.scalarrayint").run(x::numeric::gradient).core(r::gradient::gradient),
    op("aten.gradient.scalarrayarray").run(x::numeric::gradient).core(r::gradient::gradient),
    op("aten.gradient.array").run(x::numeric::gradient).core(r::gradient::gradient),
    op("aten.linalg_vander.default").run(x::numeric::linalg_vander).core(r::numeric::linalg_vander),
    op("aten.histc.default").run(x::numeric::histc).lower(K::Heavy, l::histogram::histc),
    op("aten.histogram.bin_ct").run(x::numeric::histogram).lower(K::Heavy, l::histogram::histogram),
    op("aten.histogramdd.default").run(x::numeric::histogramdd).lower(K::Heavy, l::histogram::histogram),
    op("aten.histogramdd.int_bins").run(x::numeric::histogramdd).lower(K::Heavy, l::histogram::histogram),
    // Given edges: binary searches Inductor leaves to ATen; a plan runs them as host steps.
    op("aten.histogram.bins_tensor").run(x::numeric::histogram_edges).eager(),
    op("aten.histogramdd.TensorList_bins").run(x::numeric::histogramdd_edges).eager(),
    op("aten.bincount.default").run(x::numeric::bincount).lower(K::Heavy, l::compact::bincount).sizes(l::compact::bincount_sizes),
    op("aten.isin.Tensor_Tensor").run(x::numeric::isin).core(r::search::isin),
    op("aten.isin.Tensor_Scalar").run(x::numeric::isin).core(r::search::isin_scalar),
    op("aten.isin.Scalar_Tensor").run(x::numeric::isin).core(r::search::isin),
    op("aten.gcd.default").run(x::numeric::gcd).lower(K::Pointwise, l::numeric::gcd),
    op("aten.lcm.default").run(x::numeric::lcm).lower(K::Pointwise, l::numeric::lcm),
    op("aten.frexp.Tensor").run(x::numeric::frexp).lower(K::Pointwise, l::numeric::frexp),
    op("aten.quantile.scalar").run(x::numeric::quantile).core(r::search::quantile),
    op("aten.quantile.default").run(x::numeric::quantile).core(r::search::quantile),
    op("aten.nanquantile.scalar").run(x::numeric::nanquantile).core(r::search::nanquantile),
    op("aten.nanquantile.default").run(x::numeric::nanquantile).core(r::search::nanquantile),
    op("aten.gradient.tensorarrayint").run(x::numeric::gradient).core(r::gradient::gradient),
    op("aten.gradient.tensorarray").run(x::numeric::gradient).core(r::gradient::gradient),
];
