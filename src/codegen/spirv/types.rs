//! Types and constants, each declared once per module.
//!
//! SPIR-V §2.8 forbids two non-aggregate type declarations with the same operands, and the
//! validator rejects duplicates; constants may repeat but every duplicate costs a word sequence
//! and obscures the disassembly. Both are deduplicated through hash maps keyed by a small
//! description (`LocalType`), as naga's SPIR-V back end does, instead of scanning the module.

use std::collections::HashMap;

use rspirv::dr::Builder;
use rspirv::spirv::{StorageClass, Word};

/// The handful of types a generated kernel uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocalType {
    Void,
    Bool,
    /// OpenCL kernels use signedness 0 for every integer type; signed ops carry the sign.
    I64,
    /// Barrier scopes and semantics are 32-bit constants.
    I32,
    F32,
    /// `get_global_id`'s `size_t[3]` under Physical64 addressing.
    V3I64,
    /// Storage-only scalar types of buffers other than float32 (loaded, then converted).
    F16,
    F64,
    I8,
    I16,
    /// `__global float*`
    GlobalF32,
    /// `__global` pointers to the other storage types.
    GlobalF16,
    GlobalF64,
    GlobalI8,
    GlobalI16,
    GlobalI32,
    GlobalI64,
    /// `__local float*`
    LocalF32,
    /// Pointer to a work-item id input variable (`GlobalInvocationId` and friends).
    InputV3I64,
    /// `float[n]`, the element type of a local-memory scratch array.
    ArrayF32(u32),
    /// `__local float[n]*`, the type of a module-scope scratch variable.
    LocalArrayF32(u32),
}

#[derive(Default)]
pub struct Types {
    types: HashMap<LocalType, Word>,
    constants: HashMap<(LocalType, u64), Word>,
}

impl Types {
    pub fn get(&mut self, b: &mut Builder, t: LocalType) -> Word {
        if let Some(id) = self.types.get(&t) {
            return *id;
        }
        let id = match t {
            LocalType::Void => b.type_void(),
            LocalType::Bool => b.type_bool(),
            LocalType::I64 => b.type_int(64, 0),
            LocalType::I32 => b.type_int(32, 0),
            LocalType::F32 => b.type_float(32),
            LocalType::F16 => b.type_float(16),
            LocalType::F64 => b.type_float(64),
            LocalType::I8 => b.type_int(8, 0),
            LocalType::I16 => b.type_int(16, 0),
            LocalType::GlobalF16 | LocalType::GlobalF64 | LocalType::GlobalI8 | LocalType::GlobalI16 | LocalType::GlobalI32 | LocalType::GlobalI64 => {
                let e = match t {
                    LocalType::GlobalF16 => LocalType::F16,
                    LocalType::GlobalF64 => LocalType::F64,
                    LocalType::GlobalI8 => LocalType::I8,
                    LocalType::GlobalI16 => LocalType::I16,
                    LocalType::GlobalI32 => LocalType::I32,
                    _ => LocalType::I64,
                };
                let e = self.get(b, e);
                b.type_pointer(None, StorageClass::CrossWorkgroup, e)
            }
            LocalType::V3I64 => {
                let e = self.get(b, LocalType::I64);
                b.type_vector(e, 3)
            }
            LocalType::GlobalF32 => {
                let e = self.get(b, LocalType::F32);
                b.type_pointer(None, StorageClass::CrossWorkgroup, e)
            }
            LocalType::LocalF32 => {
                let e = self.get(b, LocalType::F32);
                b.type_pointer(None, StorageClass::Workgroup, e)
            }
            LocalType::InputV3I64 => {
                let e = self.get(b, LocalType::V3I64);
                b.type_pointer(None, StorageClass::Input, e)
            }
            LocalType::ArrayF32(n) => {
                let e = self.get(b, LocalType::F32);
                let len = self.u32(b, n);
                b.type_array(e, len)
            }
            LocalType::LocalArrayF32(n) => {
                let e = self.get(b, LocalType::ArrayF32(n));
                b.type_pointer(None, StorageClass::Workgroup, e)
            }
        };
        self.types.insert(t, id);
        id
    }

    pub fn f32(&mut self, b: &mut Builder, v: f32) -> Word {
        let key = (LocalType::F32, v.to_bits() as u64);
        if let Some(id) = self.constants.get(&key) {
            return *id;
        }
        let ty = self.get(b, LocalType::F32);
        let id = b.constant_bit32(ty, v.to_bits());
        self.constants.insert(key, id);
        id
    }

    pub fn f64(&mut self, b: &mut Builder, v: f64) -> Word {
        let key = (LocalType::F64, v.to_bits());
        if let Some(id) = self.constants.get(&key) {
            return *id;
        }
        let ty = self.get(b, LocalType::F64);
        let id = b.constant_bit64(ty, v.to_bits());
        self.constants.insert(key, id);
        id
    }

    pub fn i64(&mut self, b: &mut Builder, v: i64) -> Word {
        let key = (LocalType::I64, v as u64);
        if let Some(id) = self.constants.get(&key) {
            return *id;
        }
        let ty = self.get(b, LocalType::I64);
        let id = b.constant_bit64(ty, v as u64);
        self.constants.insert(key, id);
        id
    }

    pub fn u32(&mut self, b: &mut Builder, v: u32) -> Word {
        let key = (LocalType::I32, v as u64);
        if let Some(id) = self.constants.get(&key) {
            return *id;
        }
        let ty = self.get(b, LocalType::I32);
        let id = b.constant_bit32(ty, v);
        self.constants.insert(key, id);
        id
    }

    pub fn bool(&mut self, b: &mut Builder, v: bool) -> Word {
        let key = (LocalType::Bool, v as u64);
        if let Some(id) = self.constants.get(&key) {
            return *id;
        }
        let ty = self.get(b, LocalType::Bool);
        let id = if v { b.constant_true(ty) } else { b.constant_false(ty) };
        self.constants.insert(key, id);
        id
    }
}
