//! Launch geometry: the `u32` sizes Level Zero takes and the group count that covers a range.

use crate::runtime::RuntimeError;
use level_zero_sys as sys;

/// Work-group size in the range Level Zero takes (`u32` per dimension, none zero).
pub fn dims_u32(what: &'static str, dims: [usize; 3]) -> Result<[u32; 3], RuntimeError> {
    let mut out = [0u32; 3];
    for (o, &d) in out.iter_mut().zip(&dims) {
        *o = u32::try_from(d)
            .ok()
            .filter(|&d| d > 0)
            .ok_or_else(|| RuntimeError::Invalid {
                what,
                detail: format!(
                    "{dims:?}: every dimension must be between 1 and {}",
                    u32::MAX
                ),
            })?;
    }
    Ok(out)
}

/// Groups that cover `global` with groups of `local`. Level Zero has no partial groups, so the
/// last group of a dimension that `local` does not divide runs past `global`: kernels guard
/// their global id, as the codegen's kernels do.
pub fn group_count(global: [u32; 3], local: [u32; 3]) -> sys::ze_group_count_t {
    sys::ze_group_count_t {
        groupCountX: global[0].div_ceil(local[0]),
        groupCountY: global[1].div_ceil(local[1]),
        groupCountZ: global[2].div_ceil(local[2]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_count_rounds_up() {
        let groups = group_count([1000, 3, 1], [256, 2, 1]);
        assert_eq!(
            (groups.groupCountX, groups.groupCountY, groups.groupCountZ),
            (4, 2, 1)
        );
        let exact = group_count([512, 1, 1], [256, 1, 1]);
        assert_eq!(exact.groupCountX, 2);
    }

    #[test]
    fn sizes_must_fit_level_zero() {
        assert_eq!(dims_u32("global size", [4, 1, 1]).unwrap(), [4, 1, 1]);
        assert!(matches!(
            dims_u32("global size", [4, 0, 1]),
            Err(RuntimeError::Invalid { .. })
        ));
        assert!(matches!(
            dims_u32("work-group size", [1 << 33, 1, 1]),
            Err(RuntimeError::Invalid { .. })
        ));
    }
}
