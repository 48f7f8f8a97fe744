//! Buffer element types: the pointer type of each storage, and the conversions between storage
//! and the three compute types on load and store (float16 through `vload_half`/`vstore_half`, bfloat16 by its
//! bits, narrow integers sign- or zero-extended to i64 and truncated back, bool as a byte).

use rspirv::dr::Operand;
use rspirv::spirv::{self, Capability, Word};

use super::types::LocalType;
use super::writer::Writer;
use super::CodegenError;
use crate::lower::kernel::{Elem, Ty};

/// The capabilities a storage type needs beyond `Kernel`/`Int64`, declared only when used so a
/// float32 kernel builds on a device without half or byte support.
pub(super) fn capabilities(elems: impl Iterator<Item = Elem>) -> Vec<Capability> {
    let mut caps = Vec::new();
    for e in elems {
        let c = match e {
            // Half pointers only: values are converted by vload_half/vstore_half, so the module
            // needs no half arithmetic (the Float16 capability, an extension in OpenCL).
            Elem::F16 => Capability::Float16Buffer,
            Elem::F64 => Capability::Float64,
            Elem::BF16 | Elem::I16 => Capability::Int16,
            Elem::I8 | Elem::U8 | Elem::Bool => Capability::Int8,
            _ => continue,
        };
        if !caps.contains(&c) {
            caps.push(c);
        }
    }
    caps
}

fn storage(e: Elem) -> (LocalType, LocalType) {
    match e {
        Elem::F32 => (LocalType::F32, LocalType::GlobalF32),
        Elem::F64 => (LocalType::F64, LocalType::GlobalF64),
        Elem::F16 => (LocalType::F16, LocalType::GlobalF16),
        Elem::BF16 | Elem::I16 => (LocalType::I16, LocalType::GlobalI16),
        Elem::I64 | Elem::U64 => (LocalType::I64, LocalType::GlobalI64),
        Elem::I32 => (LocalType::I32, LocalType::GlobalI32),
        Elem::I8 | Elem::U8 | Elem::Bool => (LocalType::I8, LocalType::GlobalI8),
    }
}

impl<'k> Writer<'k> {
    pub(super) fn global_ptr(&mut self, e: Elem) -> Word {
        let (_, p) = storage(e);
        self.types.get(&mut self.b, p)
    }

    fn elem_ptr(&mut self, buf: u32, index: Word) -> Result<(Elem, Word), CodegenError> {
        let e = self.k.buffers[buf as usize].elem;
        let gptr = self.global_ptr(e);
        Ok((e, self.b.in_bounds_ptr_access_chain(gptr, None, self.params[buf as usize], index, [])?))
    }

    /// `buffer[index]` converted to the buffer's compute type.
    pub(super) fn load_elem(&mut self, buf: u32, index: Word) -> Result<Word, CodegenError> {
        if self.k.buffers[buf as usize].elem == Elem::F16 {
            let f32t = self.ty_word(Ty::F32);
            let base = self.params[buf as usize];
            return self.cl(f32t, spirv::CLOp::vload_half, &[index, base]);
        }
        let (e, ptr) = self.elem_ptr(buf, index)?;
        let (st, _) = storage(e);
        let st = self.types.get(&mut self.b, st);
        let raw = self.b.load(st, None, ptr, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(e.bytes())])?;
        let ty = self.ty_word(e.ty());
        Ok(match e {
            Elem::F32 | Elem::F64 | Elem::I64 | Elem::U64 => raw,
            Elem::F16 => return Err(CodegenError::Unsupported("float16 loads go through vload_half".into())),
            Elem::BF16 => {
                let u32t = self.types.get(&mut self.b, LocalType::I32);
                let wide = self.b.u_convert(u32t, None, raw)?;
                let sixteen = self.types.u32(&mut self.b, 16);
                let bits = self.b.shift_left_logical(u32t, None, wide, sixteen)?;
                self.b.bitcast(ty, None, bits)?
            }
            Elem::I32 | Elem::I16 | Elem::I8 => self.b.s_convert(ty, None, raw)?,
            Elem::U8 => self.b.u_convert(ty, None, raw)?,
            Elem::Bool => {
                let i8t = self.types.get(&mut self.b, LocalType::I8);
                let zero = self.b.constant_bit32(i8t, 0);
                self.b.i_not_equal(ty, None, raw, zero)?
            }
        })
    }

    /// Stores `v` (of the buffer's compute type) at `buffer[index]`.
    pub(super) fn store_elem(&mut self, buf: u32, index: Word, v: Word) -> Result<(), CodegenError> {
        if self.k.buffers[buf as usize].elem == Elem::F16 {
            // vstore_half rounds to nearest even (the default rounding mode).
            let void = self.types.get(&mut self.b, LocalType::Void);
            let base = self.params[buf as usize];
            self.cl(void, spirv::CLOp::vstore_half, &[v, index, base])?;
            return Ok(());
        }
        let (e, ptr) = self.elem_ptr(buf, index)?;
        let (st, _) = storage(e);
        let st = self.types.get(&mut self.b, st);
        let raw = match e {
            Elem::F32 | Elem::F64 | Elem::I64 | Elem::U64 => v,
            Elem::F16 => return Err(CodegenError::Unsupported("float16 stores go through vstore_half".into())),
            Elem::BF16 => self.bf16_bits(v, st)?,
            Elem::I32 | Elem::I16 | Elem::I8 | Elem::U8 => self.b.s_convert(st, None, v)?,
            Elem::Bool => {
                let (one, zero) = (self.b.constant_bit32(st, 1), self.b.constant_bit32(st, 0));
                self.b.select(st, None, v, one, zero)?
            }
        };
        self.b.store(ptr, raw, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(e.bytes())])?;
        Ok(())
    }

    /// float32 → bfloat16 bits, rounding to nearest even; NaN stays a quiet NaN.
    fn bf16_bits(&mut self, v: Word, i16t: Word) -> Result<Word, CodegenError> {
        let u32t = self.types.get(&mut self.b, LocalType::I32);
        let boolt = self.ty_word(Ty::Bool);
        let bits = self.b.bitcast(u32t, None, v)?;
        let sixteen = self.types.u32(&mut self.b, 16);
        let one = self.types.u32(&mut self.b, 1);
        let bias = self.types.u32(&mut self.b, 0x7fff);
        let hi = self.b.shift_right_logical(u32t, None, bits, sixteen)?;
        let lsb = self.b.bitwise_and(u32t, None, hi, one)?;
        let add = self.b.i_add(u32t, None, bias, lsb)?;
        let rounded = self.b.i_add(u32t, None, bits, add)?;
        let top = self.b.shift_right_logical(u32t, None, rounded, sixteen)?;
        let qnan = self.types.u32(&mut self.b, 0x7fc0);
        let nan = self.b.is_nan(boolt, None, v)?;
        let r = self.b.select(u32t, None, nan, qnan, top)?;
        Ok(self.b.u_convert(i16t, None, r)?)
    }

    /// float32 → the nearest float16 value, as float32. The float16 quantum at `x` is the power
    /// of two `q = 2^(max(e, -14) - 10)` (`e` the exponent of `x`); `rint(x / q) · q` is then
    /// exact arithmetic apart from the one rounding (to nearest even, the default mode), a
    /// carry lands on the next power of two, and magnitudes past float16's largest finite
    /// value (65504) become infinities. NaN and infinities pass through.
    pub(super) fn round_f16(&mut self, x: Word) -> Result<Word, CodegenError> {
        let u32t = self.types.get(&mut self.b, LocalType::I32);
        let f32t = self.ty_word(Ty::F32);
        let boolt = self.ty_word(Ty::Bool);
        let bits = self.b.bitcast(u32t, None, x)?;
        let (c23, cff) = (self.types.u32(&mut self.b, 23), self.types.u32(&mut self.b, 0xff));
        let shifted = self.b.shift_right_logical(u32t, None, bits, c23)?;
        let e = self.b.bitwise_and(u32t, None, shifted, cff)?;
        // Biased exponents: float16's smallest normal is 2^-14 (127 - 14 = 113), and its
        // significand has 10 fraction bits.
        let min_normal = self.types.u32(&mut self.b, 113);
        let e = self.cl(u32t, spirv::CLOp::u_max, &[e, min_normal])?;
        let ten = self.types.u32(&mut self.b, 10);
        let qe = self.b.i_sub(u32t, None, e, ten)?;
        let q_bits = self.b.shift_left_logical(u32t, None, qe, c23)?;
        let q = self.b.bitcast(f32t, None, q_bits)?;
        let c254 = self.types.u32(&mut self.b, 254);
        let inv_e = self.b.i_sub(u32t, None, c254, qe)?;
        let inv_bits = self.b.shift_left_logical(u32t, None, inv_e, c23)?;
        let inv = self.b.bitcast(f32t, None, inv_bits)?;
        let scaled = self.b.f_mul(f32t, None, x, inv)?;
        let whole = self.cl(f32t, spirv::CLOp::rint, &[scaled])?;
        let r = self.b.f_mul(f32t, None, whole, q)?;
        let mag = self.cl(f32t, spirv::CLOp::fabs, &[r])?;
        let max = self.types.f32(&mut self.b, 65504.0);
        let over = self.b.f_ord_greater_than(boolt, None, mag, max)?;
        let inf = self.types.f32(&mut self.b, f32::INFINITY);
        let signed_inf = self.cl(f32t, spirv::CLOp::copysign, &[inf, x])?;
        Ok(self.b.select(f32t, None, over, signed_inf, r)?)
    }

    /// float32 → the nearest bfloat16 value, as float32: the store's rounding (to nearest even
    /// on the upper 16 bits), kept in a float and in 32-bit integers; NaN passes through.
    pub(super) fn round_bf16(&mut self, x: Word) -> Result<Word, CodegenError> {
        let u32t = self.types.get(&mut self.b, LocalType::I32);
        let f32t = self.ty_word(Ty::F32);
        let boolt = self.ty_word(Ty::Bool);
        let bits = self.b.bitcast(u32t, None, x)?;
        let sixteen = self.types.u32(&mut self.b, 16);
        let one = self.types.u32(&mut self.b, 1);
        let bias = self.types.u32(&mut self.b, 0x7fff);
        let hi = self.b.shift_right_logical(u32t, None, bits, sixteen)?;
        let lsb = self.b.bitwise_and(u32t, None, hi, one)?;
        let add = self.b.i_add(u32t, None, bias, lsb)?;
        let rounded = self.b.i_add(u32t, None, bits, add)?;
        let mask = self.types.u32(&mut self.b, 0xffff_0000);
        let top = self.b.bitwise_and(u32t, None, rounded, mask)?;
        let r = self.b.bitcast(f32t, None, top)?;
        let nan = self.b.is_nan(boolt, None, x)?;
        Ok(self.b.select(f32t, None, nan, x, r)?)
    }

    /// `x` of compute type `from` as compute type `to`.
    pub(super) fn cast(&mut self, x: Word, from: Ty, to: Ty) -> Result<Word, CodegenError> {
        let ty = self.ty_word(to);
        Ok(match (from, to) {
            _ if from == to => x,
            (Ty::F32, Ty::F64) | (Ty::F64, Ty::F32) => self.b.f_convert(ty, None, x)?,
            (Ty::I64, Ty::F32 | Ty::F64) => self.b.convert_s_to_f(ty, None, x)?,
            (Ty::F32 | Ty::F64, Ty::I64) => self.b.convert_f_to_s(ty, None, x)?,
            (Ty::Bool, Ty::F32) => {
                let (one, zero) = (self.types.f32(&mut self.b, 1.0), self.types.f32(&mut self.b, 0.0));
                self.b.select(ty, None, x, one, zero)?
            }
            (Ty::Bool, Ty::F64) => {
                let (one, zero) = (self.types.f64(&mut self.b, 1.0), self.types.f64(&mut self.b, 0.0));
                self.b.select(ty, None, x, one, zero)?
            }
            (Ty::F64, Ty::Bool) => {
                let zero = self.types.f64(&mut self.b, 0.0);
                self.b.f_unord_not_equal(ty, None, x, zero)?
            }
            (Ty::Bool, Ty::I64) => {
                let (one, zero) = (self.types.i64(&mut self.b, 1), self.types.i64(&mut self.b, 0));
                self.b.select(ty, None, x, one, zero)?
            }
            (Ty::F32, Ty::Bool) => {
                let zero = self.types.f32(&mut self.b, 0.0);
                self.b.f_unord_not_equal(ty, None, x, zero)?
            }
            (Ty::I64, Ty::Bool) => {
                let zero = self.types.i64(&mut self.b, 0);
                self.b.i_not_equal(ty, None, x, zero)?
            }
            // Words widen with zeros and narrow by truncation (UConvert both ways).
            (Ty::U32, Ty::I64) | (Ty::I64, Ty::U32) => self.b.u_convert(ty, None, x)?,
            (Ty::U32, Ty::F32 | Ty::F64) => self.b.convert_u_to_f(ty, None, x)?,
            (Ty::F32 | Ty::F64, Ty::U32) => self.b.convert_f_to_u(ty, None, x)?,
            (Ty::U32, Ty::Bool) => {
                let zero = self.types.u32(&mut self.b, 0);
                self.b.i_not_equal(ty, None, x, zero)?
            }
            (Ty::Bool, Ty::U32) => {
                let (one, zero) = (self.types.u32(&mut self.b, 1), self.types.u32(&mut self.b, 0));
                self.b.select(ty, None, x, one, zero)?
            }
            (f, t) => return Err(CodegenError::Unsupported(format!("cast from {f:?} to {t:?}"))),
        })
    }
}
