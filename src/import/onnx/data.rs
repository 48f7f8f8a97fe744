//! Tensor payloads: ONNX element types, inline data (`raw_data` or the typed fields) and external
//! data files, bounds-checked and confined to the model's folder.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path};

use super::proto::{TensorProto, DATA_LOCATION_EXTERNAL};
use crate::ir::DType;

/// ONNX `TensorProto.DataType` code → our dtype; `None` for types the IR has no name for
/// (string, 4-bit types).
pub fn dtype(code: i32) -> Option<DType> {
    Some(match code {
        1 => DType::F32,
        2 => DType::U8,
        3 => DType::I8,
        4 => DType::U16,
        5 => DType::I16,
        6 => DType::I32,
        7 => DType::I64,
        9 => DType::Bool,
        10 => DType::F16,
        11 => DType::F64,
        12 => DType::U32,
        13 => DType::U64,
        14 => DType::Complex64,
        15 => DType::Complex128,
        16 => DType::BF16,
        17 => DType::F8E4M3FN,
        18 => DType::F8E4M3FNUZ,
        19 => DType::F8E5M2,
        20 => DType::F8E5M2FNUZ,
        _ => return None,
    })
}

/// Element count of `dims`, `None` on a negative dim or overflow.
pub fn numel(dims: &[i64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |acc, &d| u64::try_from(d).ok().and_then(|d| acc.checked_mul(d)))
}

/// The tensor's bytes in little-endian element order, from wherever the file keeps them.
/// `dir` is the model's folder (external data); `budget` is what may still be read from outside.
pub fn tensor_bytes(t: &TensorProto, dtype: DType, dir: Option<&Path>, budget: &mut u64) -> Result<Vec<u8>, String> {
    let n = numel(&t.dims).ok_or("dims are negative or their product overflows")?;
    let want = n.checked_mul(dtype.size_bytes() as u64).ok_or("byte size overflows")?;
    if t.data_location == Some(DATA_LOCATION_EXTERNAL) {
        return external(t, want, dir, budget);
    }
    if let Some(raw) = &t.raw_data {
        if raw.len() as u64 != want {
            return Err(format!("raw_data holds {} bytes; {n} elements of {dtype} need {want}", raw.len()));
        }
        return Ok(raw.clone());
    }
    let mut out = Vec::with_capacity(want.min(1 << 30) as usize);
    let count = match dtype {
        DType::F32 => {
            t.float_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            t.float_data.len()
        }
        DType::F64 => {
            t.double_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            t.double_data.len()
        }
        DType::I64 => {
            t.int64_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            t.int64_data.len()
        }
        // int32_data holds every type of 32 bits or fewer, one element per entry.
        DType::I32 => {
            t.int32_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            t.int32_data.len()
        }
        DType::I16 | DType::U16 | DType::F16 | DType::BF16 => {
            t.int32_data.iter().for_each(|v| out.extend_from_slice(&(*v as u16).to_le_bytes()));
            t.int32_data.len()
        }
        DType::I8 | DType::U8 | DType::Bool | DType::F8E4M3FN | DType::F8E4M3FNUZ | DType::F8E5M2 | DType::F8E5M2FNUZ => {
            t.int32_data.iter().for_each(|v| out.push(*v as u8));
            t.int32_data.len()
        }
        DType::Complex64 => {
            t.float_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            t.float_data.len() / 2
        }
        DType::Complex128 => {
            t.double_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            t.double_data.len() / 2
        }
        // uint64_data holds uint32 and uint64, one element per entry.
        DType::U32 => {
            t.uint64_data.iter().for_each(|v| out.extend_from_slice(&(*v as u32).to_le_bytes()));
            t.uint64_data.len()
        }
        DType::U64 => {
            t.uint64_data.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            t.uint64_data.len()
        }
        DType::Complex32 => return Err("complex32 has no ONNX typed-data field".into()),
    };
    if count as u64 != n {
        return Err(format!("holds {count} elements; dims {:?} need {n}", t.dims));
    }
    Ok(out)
}

fn external(t: &TensorProto, want: u64, dir: Option<&Path>, budget: &mut u64) -> Result<Vec<u8>, String> {
    let entry = |k: &str| t.external_data.iter().find(|e| e.key.as_deref() == Some(k)).and_then(|e| e.value.clone());
    let location = entry("location").ok_or("external data without a `location` entry")?;
    let offset = match entry("offset") {
        Some(s) => s.trim().parse::<u64>().map_err(|_| format!("external data offset `{s}` is not a byte count"))?,
        None => 0,
    };
    let length = match entry("length") {
        Some(s) => Some(s.trim().parse::<u64>().map_err(|_| format!("external data length `{s}` is not a byte count"))?),
        None => None,
    };
    if let Some(len) = length.filter(|l| *l != want) {
        return Err(format!("external data length {len} does not match the {want} bytes its dims and type need"));
    }
    let rel = Path::new(&location);
    if rel.is_absolute() || rel.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(format!("external data location `{location}` leaves the model's folder; refused"));
    }
    let dir = dir.ok_or("external data, but the model was not loaded from a file")?;
    let path = dir.join(rel);
    // A symlink could still point outside: compare the resolved paths.
    let (real_dir, real) = (dir.canonicalize(), path.canonicalize());
    match (real_dir, real) {
        (Ok(d), Ok(p)) if p.starts_with(&d) => {}
        (_, Err(e)) => return Err(format!("external data file `{}`: {e}", path.display())),
        _ => return Err(format!("external data file `{}` resolves outside the model's folder; refused", path.display())),
    }
    if want > *budget {
        return Err(format!("external data would exceed the {}-byte total limit", super::MAX_EXTERNAL_BYTES));
    }
    let mut f = std::fs::File::open(&path).map_err(|e| format!("external data file `{}`: {e}", path.display()))?;
    let size = f.metadata().map_err(|e| e.to_string())?.len();
    let end = offset.checked_add(want).ok_or("external data offset + length overflows")?;
    if end > size {
        return Err(format!(
            "external data `{location}` bytes {offset}..{end} lie beyond its end ({size} bytes; truncated?)"
        ));
    }
    f.seek(SeekFrom::Start(offset)).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; want as usize];
    f.read_exact(&mut buf).map_err(|e| format!("external data `{location}`: {e}"))?;
    *budget -= want;
    Ok(buf)
}

/// Small integer tensors (shapes, axes, indices) as values, for shape inference.
pub fn int_values(bytes: &[u8], dtype: DType) -> Option<Vec<i64>> {
    match dtype {
        DType::I64 => Some(bytes.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()),
        DType::I32 => Some(bytes.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as i64).collect()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::onnx::proto::StringStringEntryProto;

    fn ext(location: &str, offset: &str, length: &str) -> TensorProto {
        let kv = |k: &str, v: &str| StringStringEntryProto { key: Some(k.into()), value: Some(v.into()) };
        TensorProto {
            dims: vec![2],
            data_type: Some(1),
            data_location: Some(DATA_LOCATION_EXTERNAL),
            external_data: vec![kv("location", location), kv("offset", offset), kv("length", length)],
            ..TensorProto::default()
        }
    }

    #[test]
    fn external_data_stays_inside_the_model_folder_and_its_bounds() {
        let dir = std::env::temp_dir().join(format!("xpu-wb-onnx-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("w.bin"), [0u8; 12]).unwrap();
        let mut budget = 1 << 20;
        assert_eq!(tensor_bytes(&ext("w.bin", "4", "8"), DType::F32, Some(&dir), &mut budget).unwrap().len(), 8);
        for (loc, off, len, why) in [
            ("../w.bin", "0", "8", "leaves"),
            ("/etc/passwd", "0", "8", "leaves"),
            ("w.bin", "8", "8", "beyond its end"),
            ("w.bin", "x", "8", "not a byte count"),
            ("w.bin", "0", "4", "does not match"),
            ("missing.bin", "0", "8", "missing.bin"),
        ] {
            let e = tensor_bytes(&ext(loc, off, len), DType::F32, Some(&dir), &mut budget).unwrap_err();
            assert!(e.contains(why), "{loc} {off} {len}: {e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn inline_data_must_match_its_dims() {
        let t = TensorProto { dims: vec![3], data_type: Some(7), int64_data: vec![1, 2, 3], ..TensorProto::default() };
        let b = tensor_bytes(&t, DType::I64, None, &mut 0).unwrap();
        assert_eq!(int_values(&b, DType::I64), Some(vec![1, 2, 3]));
        let t = TensorProto { dims: vec![4], ..t };
        assert!(tensor_bytes(&t, DType::I64, None, &mut 0).is_err());
        let t = TensorProto { dims: vec![-1], ..t };
        assert!(tensor_bytes(&t, DType::I64, None, &mut 0).is_err());
    }
}
