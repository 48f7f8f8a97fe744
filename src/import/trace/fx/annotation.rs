//! Torch's annotation strings: `"f32[s77, 64][64, 1]cuda:0"` (dtype, sizes, strides, device) and
//! `"Sym(s77)"`. Their grammar is torch's, not Python's; the sizes are SymPy's infix form.

use crate::import::trace::python::lex::{leading_group, split_top};
use crate::ir::{DType, TensorMeta, ValueKind};
use crate::sym::{parse_infix, Expr, Func};

/// `"f32[s77, 64][64, 1]cuda:0"` → a tensor; `"Sym(s77)"` → a symbolic int (float, bool).
pub fn parse_annotation(text: &str) -> Result<ValueKind, String> {
    if let Some(inner) = text.strip_prefix("Sym(").and_then(|s| s.strip_suffix(')')) {
        let e = parse_infix(inner).map_err(|e| e.to_string())?;
        return Ok(if is_bool(&e) {
            ValueKind::SymBool(e)
        } else if is_float(&e) {
            ValueKind::SymFloat(e)
        } else {
            ValueKind::SymInt(e)
        });
    }
    let open = text.find('[').ok_or("expected `dtype[sizes][strides]device` or `Sym(expr)`")?;
    let dtype = DType::from_name(&text[..open]).ok_or_else(|| format!("unknown dtype `{}`", &text[..open]))?;
    let (sizes, rest) = bracket_list(&text[open..])?;
    let (strides, device) = if rest.starts_with('[') { bracket_list(rest)? } else { (Vec::new(), rest) };
    let sizes = sizes.iter().map(|s| parse_infix(s).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?;
    let strides = if strides.is_empty() && !sizes.is_empty() {
        TensorMeta::contiguous_strides(&sizes)
    } else {
        strides.iter().map(|s| parse_infix(s).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?
    };
    if strides.len() != sizes.len() {
        return Err(format!("{} sizes but {} strides", sizes.len(), strides.len()));
    }
    Ok(ValueKind::Tensor(TensorMeta {
        dtype,
        sizes,
        strides,
        storage_offset: Expr::int(0),
        device: device.trim().to_string(),
        requires_grad: false,
    }))
}

fn is_bool(e: &Expr) -> bool {
    match e {
        Expr::Bool(_) => true,
        Expr::Call(f, _) => f.is_relation() || matches!(f, Func::And | Func::Or | Func::Not),
        _ => false,
    }
}

fn is_float(e: &Expr) -> bool {
    match e {
        Expr::Float(_) => true,
        Expr::Symbol(s) => s.starts_with("zf"),
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().any(is_float),
        Expr::Call(Func::ToFloat | Func::FloatTrueDiv | Func::Sqrt | Func::Exp | Func::Log, _) => true,
        Expr::Call(_, xs) => xs.iter().any(is_float),
        Expr::Pow(p) => is_float(&p.0) || is_float(&p.1),
        _ => false,
    }
}

/// `[a, b][c]rest` → (`["a", "b"]`, `"[c]rest"`), splitting at top-level commas.
fn bracket_list(text: &str) -> Result<(Vec<String>, &str), String> {
    let (group, rest) = leading_group(text).ok_or("expected `[...]`: the `[` is never closed, or the text in it is no Python")?;
    let inner = &group[1..group.len() - 1];
    let items = split_top(inner, ",").map_err(|e| e.to_string())?;
    Ok((items.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(), rest))
}
