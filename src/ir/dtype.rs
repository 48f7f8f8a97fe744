use std::fmt;

/// Tensor element types, numbered as torch.export's schema numbers them (`ScalarType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    U8,
    I8,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
    Complex32,
    Complex64,
    Complex128,
    Bool,
    BF16,
    U16,
    F8E4M3FN,
    F8E5M2,
    F8E4M3FNUZ,
    F8E5M2FNUZ,
    U32,
    U64,
}

impl DType {
    /// The torch.export schema's `ScalarType` code; `None` for codes this build does not know.
    pub fn from_schema_code(code: i64) -> Option<DType> {
        Some(match code {
            1 => DType::U8,
            2 => DType::I8,
            3 => DType::I16,
            4 => DType::I32,
            5 => DType::I64,
            6 => DType::F16,
            7 => DType::F32,
            8 => DType::F64,
            9 => DType::Complex32,
            10 => DType::Complex64,
            11 => DType::Complex128,
            12 => DType::Bool,
            13 => DType::BF16,
            28 => DType::U16,
            29 => DType::F8E4M3FN,
            30 => DType::F8E5M2,
            31 => DType::F8E4M3FNUZ,
            32 => DType::F8E5M2FNUZ,
            34 => DType::U32,
            35 => DType::U64,
            _ => return None,
        })
    }

    /// PyTorch's name without the `torch.` prefix (`float32`), as `str(tensor.dtype)` prints it.
    pub fn name(self) -> &'static str {
        match self {
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F16 => "float16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::Complex32 => "complex32",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::Bool => "bool",
            DType::BF16 => "bfloat16",
            DType::U16 => "uint16",
            DType::F8E4M3FN => "float8_e4m3fn",
            DType::F8E5M2 => "float8_e5m2",
            DType::F8E4M3FNUZ => "float8_e4m3fnuz",
            DType::F8E5M2FNUZ => "float8_e5m2fnuz",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
        }
    }

    /// Parses PyTorch's dtype name, with or without `torch.`; also the FX dump short forms (`f32`).
    pub fn from_name(name: &str) -> Option<DType> {
        let name = name.strip_prefix("torch.").unwrap_or(name);
        let all = [
            DType::U8,
            DType::I8,
            DType::I16,
            DType::I32,
            DType::I64,
            DType::F16,
            DType::F32,
            DType::F64,
            DType::Complex32,
            DType::Complex64,
            DType::Complex128,
            DType::Bool,
            DType::BF16,
            DType::U16,
            DType::F8E4M3FN,
            DType::F8E5M2,
            DType::F8E4M3FNUZ,
            DType::F8E5M2FNUZ,
            DType::U32,
            DType::U64,
        ];
        if let Some(d) = all.iter().find(|d| d.name() == name || d.short_name() == name) {
            return Some(*d);
        }
        Some(match name {
            "float" => DType::F32,
            "double" => DType::F64,
            "half" => DType::F16,
            "long" => DType::I64,
            "int" => DType::I32,
            _ => return None,
        })
    }

    /// The short form FX graph dumps use in annotations (`f32[s0, 64]`).
    pub fn short_name(self) -> &'static str {
        match self {
            DType::U8 => "u8",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::Complex32 => "c32",
            DType::Complex64 => "c64",
            DType::Complex128 => "c128",
            DType::Bool => "b8",
            DType::BF16 => "bf16",
            DType::U16 => "u16",
            DType::F8E4M3FN => "f8e4m3fn",
            DType::F8E5M2 => "f8e5m2",
            DType::F8E4M3FNUZ => "f8e4m3fnuz",
            DType::F8E5M2FNUZ => "f8e5m2fnuz",
            DType::U32 => "u32",
            DType::U64 => "u64",
        }
    }

    /// Bytes per element.
    pub fn size_bytes(self) -> usize {
        match self {
            DType::U8 | DType::I8 | DType::Bool => 1,
            DType::F8E4M3FN | DType::F8E5M2 | DType::F8E4M3FNUZ | DType::F8E5M2FNUZ => 1,
            DType::I16 | DType::F16 | DType::BF16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 | DType::Complex32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }

    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex32 | DType::Complex64 | DType::Complex128)
    }

    /// torch's `is_integer_dtype`: signed and unsigned integers, not `bool`.
    pub fn is_integer(self) -> bool {
        matches!(self, DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64 | DType::U16 | DType::U32 | DType::U64)
    }

    pub fn is_floating(self) -> bool {
        matches!(
            self,
            DType::F16
                | DType::F32
                | DType::F64
                | DType::BF16
                | DType::F8E4M3FN
                | DType::F8E5M2
                | DType::F8E4M3FNUZ
                | DType::F8E5M2FNUZ
        )
    }
}

impl DType {
    /// `torch.finfo(dtype).eps`: the gap above 1.0, for floating dtypes (what `rms_norm` adds when
    /// its `eps` is None).
    pub fn finfo_eps(self) -> Option<f64> {
        Some(match self {
            DType::F16 => 0.0009765625,
            DType::BF16 => 0.0078125,
            DType::F32 => f32::EPSILON as f64,
            DType::F64 => f64::EPSILON,
            DType::F8E4M3FN | DType::F8E4M3FNUZ => 0.125,
            DType::F8E5M2 | DType::F8E5M2FNUZ => 0.25,
            _ => return None,
        })
    }

    /// The dtype PyTorch computes reductions in (`opmath`): float32 for the half types.
    pub fn opmath(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            d => d,
        }
    }

    /// `torch.promote_types` over the real dtypes: bool < integers < floats; uint8 with a signed
    /// integer needs the next wider signed type; float16 with bfloat16 meets at float32. `None`
    /// for pairs PyTorch does not promote here (complex, float8, uint16 with another type).
    pub fn promote_types(a: DType, b: DType) -> Option<DType> {
        use DType::*;
        fn int_rank(d: DType) -> Option<u8> {
            Some(match d {
                I8 => 0,
                I16 => 1,
                I32 => 2,
                I64 => 3,
                _ => return None,
            })
        }
        let plain = |d: DType| matches!(d, U8 | I8 | I16 | I32 | I64 | F16 | BF16 | F32 | F64 | Bool);
        Some(match (a, b) {
            _ if a == b => a,
            _ if !plain(a) || !plain(b) => return None,
            (Bool, o) | (o, Bool) => o,
            (U8, I8) | (I8, U8) => I16,
            (U8, o) | (o, U8) if int_rank(o).is_some() => o,
            (x, y) if int_rank(x).is_some() && int_rank(y).is_some() => {
                if int_rank(x) > int_rank(y) {
                    x
                } else {
                    y
                }
            }
            (x, y) if x.is_floating() && !y.is_floating() => x,
            (x, y) if y.is_floating() && !x.is_floating() => y,
            (F16, BF16) | (BF16, F16) => F32,
            (F64, _) | (_, F64) => F64,
            _ => F32,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_codes_round_trip_through_names() {
        for code in 0..40 {
            if let Some(d) = DType::from_schema_code(code) {
                assert_eq!(DType::from_name(d.name()), Some(d));
                assert_eq!(DType::from_name(d.short_name()), Some(d));
            }
        }
        assert_eq!(DType::from_schema_code(7), Some(DType::F32));
        assert_eq!(DType::from_name("torch.float32"), Some(DType::F32));
        assert_eq!(DType::from_schema_code(35), Some(DType::U64));
        assert_eq!(DType::from_schema_code(99), None);
    }
}
