//! Module layout of one kernel: capabilities, memory model, the `GlobalInvocationId` input,
//! the entry point and its parameters, then the body (one work-item per output element, guarded
//! by a bounds check because launches round the grid up to whole work-groups).

use std::collections::HashMap;

use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    self, AddressingModel, BuiltIn, Capability, Decoration, ExecutionModel, FunctionControl, MemoryModel, SelectionControl,
    StorageClass, Word,
};

use super::types::{LocalType, Types};
use super::CodegenError;
use crate::lower::kernel::{ExprId, Kernel, VarId};

/// State of one module being written.
pub struct Writer<'k> {
    pub b: Builder,
    pub k: &'k Kernel,
    pub types: Types,
    /// `OpExtInstImport "OpenCL.std"`.
    pub cl: Word,
    /// Buffer parameters, then the i64 size parameters.
    pub params: Vec<Word>,
    /// Label of the block instructions are being appended to.
    pub label: Word,
    /// Emitted expressions, innermost loop scope last; a value is visible in its scope and
    /// every scope nested inside it (it dominates them).
    pub scopes: Vec<HashMap<ExprId, Word>>,
    pub vars: HashMap<VarId, Word>,
    /// Loop variables currently bound, as a bit set.
    pub bound: u128,
    pub free: Vec<u128>,
}

pub(super) fn write(k: &Kernel) -> Result<Vec<u32>, CodegenError> {
    let mut b = Builder::new();
    b.set_version(1, 0);
    for cap in [Capability::Addresses, Capability::Kernel, Capability::Int64] {
        b.capability(cap);
    }
    let cl = b.ext_inst_import("OpenCL.std");
    b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
    let mut w = Writer {
        b,
        k,
        types: Types::default(),
        cl,
        params: Vec::new(),
        label: 0,
        scopes: vec![HashMap::new()],
        vars: HashMap::new(),
        bound: 0,
        free: k.free_vars(),
    };
    w.kernel()?;
    let module = w.b.module();
    use rspirv::binary::Assemble;
    Ok(module.assemble())
}

impl<'k> Writer<'k> {
    fn kernel(&mut self) -> Result<(), CodegenError> {
        let k = self.k;
        let void = self.types.get(&mut self.b, LocalType::Void);
        let gptr = self.types.get(&mut self.b, LocalType::GlobalF32);
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let v3 = self.types.get(&mut self.b, LocalType::V3I64);
        let in_v3 = self.types.get(&mut self.b, LocalType::InputV3I64);
        let bool_t = self.types.get(&mut self.b, LocalType::Bool);
        let param_types: Vec<Word> =
            k.buffers.iter().map(|_| gptr).chain(k.params.iter().map(|_| i64t)).collect();
        let fn_ty = self.b.type_function(void, param_types.clone());
        let gid_var = self.b.variable(in_v3, None, StorageClass::Input, None);
        self.b.decorate(gid_var, Decoration::BuiltIn, [Operand::BuiltIn(BuiltIn::GlobalInvocationId)]);
        self.b.decorate(gid_var, Decoration::Constant, []);
        self.b.name(gid_var, "global_id");

        let f = self.b.begin_function(void, None, FunctionControl::NONE, fn_ty)?;
        self.b.name(f, k.name.clone());
        for (i, ty) in param_types.iter().enumerate() {
            let p = self.b.function_parameter(*ty)?;
            let name = match k.buffers.get(i) {
                Some(buf) => format!("{}_{}", if buf.access == crate::lower::kernel::Access::Write { "out" } else { "in" }, buf.value),
                None => format!("size{}", i - k.buffers.len()),
            };
            self.b.name(p, name);
            self.params.push(p);
        }
        self.b.entry_point(ExecutionModel::Kernel, f, k.name.clone(), [gid_var]);

        self.label = self.b.begin_block(None)?;
        let ids = self.b.load(v3, None, gid_var, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(32)])?;
        let gid = self.b.composite_extract(i64t, None, ids, [0])?;
        let mut total = self.types.i64(&mut self.b, 1);
        let mut extents = Vec::new();
        for &d in &k.domain {
            let e = self.emit(d)?;
            extents.push(e);
            total = self.b.i_mul(i64t, None, total, e)?;
        }
        let in_range = self.b.s_less_than(bool_t, None, gid, total)?;
        let (body, end) = (self.b.id(), self.b.id());
        self.b.selection_merge(end, SelectionControl::NONE)?;
        self.b.branch_conditional(in_range, body, end, [])?;

        self.label = self.b.begin_block(Some(body))?;
        // Row-major coordinates of the linear index, last dim fastest.
        let mut rest = gid;
        for d in (0..extents.len()).rev() {
            let c = if d == 0 { rest } else { self.b.s_rem(i64t, None, rest, extents[d])? };
            self.vars.insert(VarId(d as u32), c);
            self.bound |= 1u128 << d;
            if d > 0 {
                rest = self.b.s_div(i64t, None, rest, extents[d])?;
            }
        }
        for store in &k.stores {
            let v = self.emit(store.value)?;
            let ptr = self.b.in_bounds_ptr_access_chain(gptr, None, self.params[store.buf as usize], gid, [])?;
            self.b.store(ptr, v, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(4)])?;
        }
        self.b.branch(end)?;
        self.label = self.b.begin_block(Some(end))?;
        self.b.ret()?;
        self.b.end_function()?;
        Ok(())
    }
}
