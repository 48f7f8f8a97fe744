//! NumPy `.npy` files (format versions 1.0, 2.0 and 3.0): the exchange format for interpreter
//! inputs and outputs, and for the reference outputs PyTorch saved next to each sample.
//!
//! Only what the interpreter computes with is read: little-endian (or byte-order-free) `f2`, `f4`,
//! `f8`, `i1`, `i2`, `i4`, `i8`, `u1`, `u2`, `u4`, `u8` and `b1` arrays in C order (bfloat16, which NumPy
//! lacks, travels as its `u2` bit pattern). Everything else is a [`NpyError`] naming the file.

use std::path::Path;

use crate::ir::DType;

const MAGIC: &[u8] = b"\x93NUMPY";

/// A dense array as stored: element type, C-order shape and little-endian element bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// `shape.product() * dtype.size_bytes()` bytes, little-endian, C order.
    pub data: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("{file}: cannot read or write: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: not a supported .npy file: {message}")]
    Format { file: String, message: String },
}

impl NpyArray {
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Reads a `.npy` file from disk.
pub fn read(path: &Path) -> Result<NpyArray, NpyError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| NpyError::Io { file: file.clone(), source })?;
    parse(&file, &bytes)
}

/// Writes `array` as a version 1.0 file (2.0 when the header would not fit in 64 KiB).
pub fn write(path: &Path, array: &NpyArray) -> Result<(), NpyError> {
    let file = path.display().to_string();
    let bytes = to_bytes(array).map_err(|message| NpyError::Format { file: file.clone(), message })?;
    std::fs::write(path, bytes).map_err(|source| NpyError::Io { file, source })
}

/// Parses `.npy` bytes; `file` names them in errors.
pub fn parse(file: &str, bytes: &[u8]) -> Result<NpyArray, NpyError> {
    let err = |message: String| NpyError::Format { file: file.to_string(), message };
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(err("missing the `\\x93NUMPY` magic string".into()));
    }
    let major = bytes[6];
    let (header_len, start): (usize, usize) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(err("truncated header length".into()));
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        v => return Err(err(format!("format version {v}.{} (this reader knows 1.0, 2.0 and 3.0)", bytes[7]))),
    };
    let end = start.checked_add(header_len).filter(|&e| e <= bytes.len()).ok_or_else(|| {
        err(format!("header claims {header_len} bytes but the file holds {}", bytes.len().saturating_sub(start)))
    })?;
    let header = std::str::from_utf8(&bytes[start..end]).map_err(|_| err("header is not text".into()))?;
    let (dtype, shape, fortran) = parse_header(header).map_err(err)?;
    let numel = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| err(format!("shape {shape:?} overflows")))?;
    let need = numel.checked_mul(dtype.size_bytes()).ok_or_else(|| err(format!("shape {shape:?} overflows")))?;
    let have = bytes.len() - end;
    if have != need {
        return Err(err(format!("{} {shape:?} needs {need} data bytes, the file holds {have}", dtype.name())));
    }
    let data = if fortran { fortran_to_c(&bytes[end..], &shape, dtype.size_bytes()) } else { bytes[end..].to_vec() };
    Ok(NpyArray { dtype, shape, data })
}

/// The C-order bytes of an array stored in Fortran order: element `(i0, …, in-1)` sits at
/// `Σ ik·(s0·…·sk-1)` in `data`, the first index varying fastest.
fn fortran_to_c(data: &[u8], shape: &[usize], elem: usize) -> Vec<u8> {
    let numel: usize = shape.iter().product();
    let mut strides = Vec::with_capacity(shape.len());
    let mut s = 1usize;
    for &d in shape {
        strides.push(s);
        s *= d;
    }
    let mut out = Vec::with_capacity(data.len());
    let mut index = vec![0usize; shape.len()];
    for _ in 0..numel {
        let at = index.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>() * elem;
        out.extend_from_slice(&data[at..at + elem]);
        // The next C-order index: the last dim varies fastest.
        for k in (0..shape.len()).rev() {
            index[k] += 1;
            if index[k] < shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
    out
}

/// The dictionary literal: `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
/// The element type, the shape, and whether the data is in Fortran order.
fn parse_header(h: &str) -> Result<(DType, Vec<usize>, bool), String> {
    let descr = dict_value(h, "descr")?;
    let descr = descr.trim();
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.strip_suffix('\''))
        .ok_or_else(|| format!("descr {descr} is not a simple type string (structured or object arrays are not supported)"))?;
    let dtype = match descr {
        "<f4" => DType::F32,
        "<f8" => DType::F64,
        "<i8" => DType::I64,
        "<i4" => DType::I32,
        "<i2" => DType::I16,
        "|i1" | "<i1" => DType::I8,
        "|u1" | "<u1" => DType::U8,
        "<u2" => DType::U16,
        "<u4" => DType::U32,
        "<u8" => DType::U64,
        "<f2" => DType::F16,
        "|b1" | "<b1" | "=b1" | "?" => DType::Bool,
        d if d.starts_with('>') => return Err(format!("big-endian dtype `{d}` is not supported")),
        d if d.contains('O') => return Err(format!("object arrays (`{d}`) are not supported")),
        d => return Err(format!("dtype `{d}` is not supported (float16/32/64, int8/16/32/64, uint8/16/32/64, bool)")),
    };
    let fortran = match dict_value(h, "fortran_order")?.trim() {
        "False" => false,
        "True" => true,
        other => return Err(format!("fortran_order is `{other}`, expected True or False")),
    };
    let shape_text = dict_value(h, "shape")?;
    let inner = shape_text
        .trim()
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| format!("shape `{shape_text}` is not a tuple"))?;
    let mut shape = Vec::new();
    for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        shape.push(part.trim_end_matches('L').parse::<usize>().map_err(|_| format!("shape entry `{part}` is not a size"))?);
    }
    Ok((dtype, shape, fortran))
}

/// The text of one value of the header dictionary, up to the next top-level comma or brace.
fn dict_value<'a>(h: &'a str, key: &str) -> Result<&'a str, String> {
    let pat = format!("'{key}'");
    let at = h.find(&pat).ok_or_else(|| format!("header has no `{key}` entry"))?;
    let rest = h[at + pat.len()..].trim_start();
    let rest = rest.strip_prefix(':').ok_or_else(|| format!("header entry `{key}` has no value"))?;
    let mut depth = 0i32;
    let mut in_str = false;
    for (i, c) in rest.char_indices() {
        match c {
            '\'' => in_str = !in_str,
            '(' | '[' if !in_str => depth += 1,
            ')' | ']' if !in_str => depth -= 1,
            ',' | '}' if !in_str && depth == 0 => return Ok(&rest[..i]),
            _ => {}
        }
    }
    Err(format!("header entry `{key}` is not terminated"))
}

/// The bytes of a `.npy` file holding `array`.
pub fn to_bytes(array: &NpyArray) -> Result<Vec<u8>, String> {
    let descr = match array.dtype {
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::I64 => "<i8",
        DType::I32 => "<i4",
        DType::I16 => "<i2",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::Bool => "|b1",
        d => return Err(format!("cannot write dtype {d} to .npy (float16/32/64, int8/16/32/64, uint8/16/32/64, bool)")),
    };
    if array.data.len() != array.numel() * array.dtype.size_bytes() {
        return Err(format!("{} bytes do not hold {} {:?}", array.data.len(), array.dtype, array.shape));
    }
    let shape = match array.shape.as_slice() {
        [d] => format!("({d},)"),
        dims => format!("({})", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // NumPy pads the header with spaces so the data starts on a 64-byte boundary.
    let v1 = dict.len() + 11 < 65536;
    let prefix = if v1 { 10 } else { 12 };
    let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
    dict.push_str(&" ".repeat(total - prefix - dict.len() - 1));
    dict.push('\n');
    let mut out = Vec::with_capacity(total + array.data.len());
    out.extend_from_slice(MAGIC);
    if v1 {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&[2, 0]);
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.extend_from_slice(&array.data);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn round_trips_every_supported_dtype() {
        for (dtype, shape) in [
            (DType::F32, vec![2, 3]),
            (DType::F64, vec![4]),
            (DType::I64, vec![]),
            (DType::I32, vec![1, 0, 2]),
            (DType::Bool, vec![3, 1]),
            (DType::F16, vec![2]),
            (DType::U8, vec![3]),
            (DType::I8, vec![1, 2]),
            (DType::I16, vec![2]),
            (DType::U64, vec![2, 1]),
        ] {
            let n: usize = shape.iter().product();
            let data: Vec<u8> = (0..n * dtype.size_bytes()).map(|i| if dtype == DType::Bool { (i % 2) as u8 } else { i as u8 }).collect();
            let a = NpyArray { dtype, shape, data };
            let bytes = to_bytes(&a).unwrap();
            assert_eq!((bytes.len() - a.data.len()) % 64, 0, "data is 64-byte aligned");
            assert_eq!(parse("mem.npy", &bytes).unwrap(), a);
        }
    }

    #[test]
    fn reads_what_numpy_wrote() {
        let a = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/mlp.in0.npy")).unwrap();
        assert_eq!(a.dtype, DType::F32);
        assert_eq!(a.data.len(), a.numel() * 4);
        assert!(!a.shape.is_empty());
    }

    /// Every pair `scripts/gen_npy_fortran.py` wrote: NumPy's Fortran-order file reads as the
    /// same array as its C-order twin, and writing it back gives NumPy's C-order bytes exactly.
    #[test]
    fn reads_fortran_order_files_numpy_wrote_as_c_order() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/npy_fortran");
        let mut pairs = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".f.npy")) else { continue };
            let c_path = dir.join(format!("{name}.c.npy"));
            let (f, c) = (read(&path).unwrap(), read(&c_path).unwrap());
            assert_eq!(f, c, "{name}: Fortran order read as C order");
            assert!(f.shape.len() >= 2, "{name}");
            assert_eq!(to_bytes(&f).unwrap(), std::fs::read(&c_path).unwrap(), "{name}: written as NumPy writes C order");
            pairs += 1;
        }
        assert_eq!(pairs, 7);
        // Independently of the twin: a[i, j, k] = 6k + 2j + i.
        let a = read(&dir.join("transposed_i64_2x3x4.f.npy")).unwrap();
        assert_eq!(a.shape, [2, 3, 4]);
        let got: Vec<i64> = a.data.chunks(8).map(|b| i64::from_le_bytes(b.try_into().unwrap())).collect();
        let want: Vec<i64> = (0..2).flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| 6 * k + 2 * j + i))).collect();
        assert_eq!(got, want);
    }

    /// A hand-made Fortran header: the 2×3 matrix [[1, 2, 3], [4, 5, 6]] is stored column by
    /// column; a 1-d or 0-d array reads the same in either order.
    #[test]
    fn fortran_order_is_the_transposed_layout() {
        let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let a = parse("m.npy", &with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", &f32s(&[1., 4., 2., 5., 3., 6.]))).unwrap();
        assert_eq!((a.shape.as_slice(), a.data), ([2usize, 3].as_slice(), f32s(&[1., 2., 3., 4., 5., 6.])));
        for (shape, n) in [("(3,)", 3), ("()", 1), ("(0, 2)", 0)] {
            let data = f32s(&[7., 8., 9.][..n]);
            let a = parse("v.npy", &with_header(&format!("{{'descr': '<f4', 'fortran_order': True, 'shape': {shape}, }}"), &data)).unwrap();
            assert_eq!(a.data, data, "{shape}");
        }
    }

    fn with_header(header: &str, data: &[u8]) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        b.extend_from_slice(header.as_bytes());
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn rejects_objects_big_endian_and_short_data_naming_the_file() {
        let cases = [
            ("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", "fortran_order"),
            ("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "object"),
            ("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "big-endian"),
            ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "needs 8 data bytes"),
        ];
        for (h, want) in cases {
            let e = parse("x.npy", &with_header(h, &[0; 4])).unwrap_err().to_string();
            assert!(e.contains("x.npy") && e.contains(want), "{e}");
        }
    }

    #[test]
    fn random_and_mutated_bytes_never_panic() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let good = to_bytes(&NpyArray { dtype: DType::F32, shape: vec![2, 2], data: vec![0; 16] }).unwrap();
        for _ in 0..5000 {
            let mut b = if rng.gen_bool(0.5) {
                let n = rng.gen_range(0..200);
                let mut v: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                if rng.gen_bool(0.5) && v.len() > 10 {
                    v[..6].copy_from_slice(MAGIC);
                    v[6] = rng.gen_range(1..4);
                }
                v
            } else {
                good.clone()
            };
            for _ in 0..rng.gen_range(0..4) {
                if b.is_empty() {
                    break;
                }
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
            }
            if rng.gen_bool(0.2) {
                b.truncate(rng.gen_range(0..b.len() + 1));
            }
            let _ = parse("fuzz.npy", &b);
        }
    }
}
