//! Masked loads of [`Schedule::Depthwise`] as branches around the load.
//!
//! Why: elsewhere a masked load clamps its index with a select (`mask ? index : 0`) and loads
//! unconditionally, which no work-item ever faults on but which hides from the OpenCL CPU
//! runtime that neighbouring work-items read neighbouring elements: every padded convolution tap
//! became a gather. Under a branch the index is the tap's own (affine in the work-item's
//! column), and the runtime's vectorizer turns the predicated load into a masked vector load;
//! the mask is false only at the map's borders. No work-item reads outside the buffer: the load
//! runs only where the mask holds, which is where the unclamped index is in range.

use rspirv::spirv::{SelectionControl, Word};

use super::writer::Writer;
use super::CodegenError;
use crate::lower::kernel::{ExprId, Ty};
use crate::lower::schedule::Schedule;

impl<'k> Writer<'k> {
    /// Whether masked loads of this kernel are emitted by [`Self::branch_load`].
    pub(super) fn branch_loads(&self) -> bool {
        matches!(self.k.schedule, Schedule::Depthwise { .. })
    }

    /// `mask ? buf[index] : other` for load node `e`, the load inside a branch: an `OpPhi` of
    /// the loaded value and `other` (already emitted, in the compute type) after it.
    pub(super) fn branch_load(&mut self, e: ExprId, buf: u32, (index, mask): (ExprId, ExprId), other: Word) -> Result<Word, CodegenError> {
        let idx = self.emit(index)?;
        let m = self.emit(mask)?;
        let ty = self.ty_word(self.k.ty(e));
        let pre = self.label;
        let (then, merge) = (self.b.id(), self.b.id());
        self.b.selection_merge(merge, SelectionControl::NONE)?;
        self.b.branch_conditional(m, then, merge, [])?;
        self.label = self.b.begin_block(Some(then))?;
        // Nothing emitted inside the branch may be reused after it: it would not dominate.
        self.scopes.push(Default::default());
        let loaded = self.load_elem(buf, idx);
        self.scopes.pop();
        let loaded = loaded?;
        let then_end = self.label;
        self.b.branch(merge)?;
        self.label = self.b.begin_block(Some(merge))?;
        Ok(self.b.phi(ty, None, [(loaded, then_end), (other, pre)])?)
    }

    /// A masked load's `other` (an f32 bit pattern) as a constant of compute type `t`.
    pub(super) fn masked_other(&mut self, t: Ty, other: u32) -> Word {
        let f = f32::from_bits(other);
        match t {
            Ty::F32 => self.types.f32(&mut self.b, f),
            Ty::F64 => self.types.f64(&mut self.b, f as f64),
            Ty::I64 => self.types.i64(&mut self.b, f as i64),
            Ty::Bool => self.types.bool(&mut self.b, f != 0.0),
            Ty::U32 => self.types.u32(&mut self.b, f as u32),
        }
    }
}
