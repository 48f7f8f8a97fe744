use crate::sym::Expr;

/// NumPy/PyTorch broadcasting of symbolic shapes. A dimension of literal 1 stretches; two
/// symbolic dimensions must be the same expression (PyTorch would add a guard otherwise).
pub fn broadcast_shapes(a: &[Expr], b: &[Expr]) -> Result<Vec<Expr>, String> {
    let rank = a.len().max(b.len());
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let da = (i + a.len()).checked_sub(rank).map(|j| &a[j]);
        let db = (i + b.len()).checked_sub(rank).map(|j| &b[j]);
        let d = match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) if x == y => x.clone(),
            (Some(x), Some(y)) if x.as_int() == Some(1) => y.clone(),
            (Some(x), Some(y)) if y.as_int() == Some(1) => x.clone(),
            (Some(x), Some(y)) => return Err(format!("shapes do not broadcast: {x} vs {y} at dim {i}")),
            (None, None) => unreachable!("i < rank"),
        };
        out.push(d);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts_literal_ones_and_equal_symbols() {
        let s = Expr::symbol("s0");
        let a = vec![s.clone(), Expr::int(1), Expr::int(4)];
        let b = vec![Expr::int(3), Expr::int(1)];
        assert_eq!(broadcast_shapes(&a, &b).unwrap(), vec![s.clone(), Expr::int(3), Expr::int(4)]);
        assert!(broadcast_shapes(std::slice::from_ref(&s), &[Expr::symbol("s1")]).is_err());
        assert_eq!(broadcast_shapes(&[], std::slice::from_ref(&s)).unwrap(), vec![s]);
    }
}
