//! Module layout of one kernel: capabilities, memory model, the work-item id inputs and local
//! scratch arrays its schedule needs, the entry point and its parameters, then the body: one
//! work-item per output element here (guarded by a bounds check because launches round the grid
//! up to whole work-groups), the work-group schedules in `workgroup`.

use std::collections::HashMap;

use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    self, AddressingModel, BuiltIn, Capability, Decoration, ExecutionModel, FunctionControl, MemoryModel, SelectionControl,
    StorageClass, Word,
};

use super::rowcache::{row_vectors, RowVector, ROW_CACHE};
use super::stash::{self, Stash};
use super::types::{LocalType, Types};
use super::CodegenError;
use crate::lower::kernel::{ExprId, Kernel, VarId};
use crate::lower::schedule::{column_extent, Schedule};

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
    /// The current slots of the state loops being emitted, by loop variable and slot.
    pub carried: HashMap<(VarId, u32), Word>,
    /// The final slots of each emitted state loop (visible exactly where the loop is).
    pub loop_outs: HashMap<ExprId, Vec<Word>>,
    /// Loop variables currently bound, as a bit set.
    pub bound: u128,
    pub free: Vec<u128>,
    /// Set while a row schedule's work-group folds row statistics together.
    pub coop: Option<Coop>,
    /// Whether every work-item of the work-group is at this point of the body: only there may
    /// a cooperative reduction (and its barriers) be emitted.
    pub uniform: bool,
    /// The row vectors of the cooperative row schedule and their `__local` arrays.
    pub row_cache: Vec<(RowVector, Word)>,
    /// Set while the row vectors' arrays hold the current row.
    pub cache_live: bool,
    /// Set while the early row vectors' arrays (filled before the statistics) hold it.
    pub early_live: bool,
    /// The row statistic whose summands the row schedule keeps in the output (`stash`).
    pub stash: Option<Stash>,
    /// The row's first output index, while the row's statistics are emitted.
    pub stash_base: Option<Word>,
    /// Whether this row's statistics wrote the summands.
    pub stash_written: bool,
    /// The output index of the current output, while the row's outputs are emitted and the
    /// summands were written.
    pub stash_at: Option<Word>,
}

/// What a cooperative reduction needs: the work-item's index in its group and the group size
/// (i64 values).
#[derive(Clone, Copy)]
pub struct Coop {
    pub lid: Word,
    pub group: Word,
}

pub(super) fn write(k: &Kernel) -> Result<Vec<u32>, CodegenError> {
    let mut b = Builder::new();
    b.set_version(1, 0);
    for cap in [Capability::Addresses, Capability::Kernel, Capability::Int64] {
        b.capability(cap);
    }
    // Work-group reductions (`OpGroupFAdd` and friends) of the cooperative row schedule.
    if matches!(k.schedule, Schedule::Rows { coop: true, .. }) {
        b.capability(Capability::Groups);
    }
    for cap in super::elem::capabilities(k.buffers.iter().map(|p| p.elem)) {
        b.capability(cap);
    }
    // f64 arithmetic can appear without an f64 buffer (a float64 constant folded away is not).
    if k.types.contains(&crate::lower::kernel::Ty::F64) && !k.buffers.iter().any(|p| p.elem == crate::lower::kernel::Elem::F64) {
        b.capability(Capability::Float64);
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
        carried: HashMap::new(),
        loop_outs: HashMap::new(),
        bound: 0,
        free: k.free_vars(),
        coop: None,
        uniform: false,
        row_cache: Vec::new(),
        cache_live: false,
        early_live: false,
        stash: None,
        stash_base: None,
        stash_written: false,
        stash_at: None,
    };
    w.kernel()?;
    let module = w.b.module();
    use rspirv::binary::Assemble;
    Ok(module.assemble())
}

impl<'k> Writer<'k> {
    /// A module-scope id input (`size_t[3]`), listed in the entry point's interface.
    fn builtin(&mut self, which: BuiltIn, name: &str) -> Word {
        let in_v3 = self.types.get(&mut self.b, LocalType::InputV3I64);
        let var = self.b.variable(in_v3, None, StorageClass::Input, None);
        self.b.decorate(var, Decoration::BuiltIn, [Operand::BuiltIn(which)]);
        self.b.decorate(var, Decoration::Constant, []);
        self.b.name(var, name);
        var
    }

    /// Component `dim` of a built-in id input.
    pub(super) fn load_id(&mut self, var: Word, dim: u32) -> Result<Word, CodegenError> {
        let (v3, i64t) = (self.types.get(&mut self.b, LocalType::V3I64), self.types.get(&mut self.b, LocalType::I64));
        let ids = self.b.load(v3, None, var, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(32)])?;
        Ok(self.b.composite_extract(i64t, None, ids, [dim])?)
    }

    /// A module-scope `__local float[n]` array.
    fn scratch(&mut self, n: u32, name: &str) -> Word {
        let ptr = self.types.get(&mut self.b, LocalType::LocalArrayF32(n));
        let var = self.b.variable(ptr, None, StorageClass::Workgroup, None);
        self.b.name(var, name);
        var
    }

    fn kernel(&mut self) -> Result<(), CodegenError> {
        let k = self.k;
        let void = self.types.get(&mut self.b, LocalType::Void);
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let buffer_types: Vec<Word> = k.buffers.iter().map(|p| self.global_ptr(p.elem)).collect();
        // The row schedule takes the launch's work-items per row after the sizes; a drawing
        // kernel takes the generator's seed and offset last.
        let draws = k.draws();
        let extra = usize::from(matches!(k.schedule, Schedule::Rows { .. })) + if draws { 2 } else { 0 };
        let param_types: Vec<Word> = buffer_types.into_iter().chain((0..k.params.len() + extra).map(|_| i64t)).collect();
        let fn_ty = self.b.type_function(void, param_types.clone());
        // Module-scope variables come before the function: rspirv places a variable in the
        // global section only while no block is open.
        let mut interface = Vec::new();
        let mut id = |w: &mut Self, which, name| {
            let v = w.builtin(which, name);
            interface.push(v);
            v
        };
        enum Vars {
            Elementwise { gid: Word },
            Rows { gid: Word, group_id: Word, lid: Word, groups: Word },
            Tiled { gid: Word, lid: Word, tiles: [Word; 2] },
        }
        let vars = match k.schedule {
            Schedule::Elementwise | Schedule::Columns { .. } | Schedule::Depthwise { .. } | Schedule::Channels { .. } | Schedule::Spread { .. } => Vars::Elementwise { gid: id(self, BuiltIn::GlobalInvocationId, "global_id") },
            Schedule::Rows { outer, coop, .. } => {
                if coop {
                    for rv in row_vectors(k, (outer as usize).min(k.domain.len())) {
                        let array = self.scratch(ROW_CACHE, "row_cache");
                        self.row_cache.push((rv, array));
                    }
                }
                // Kernels with cached row vectors read them back from local memory instead.
                if self.row_cache.is_empty() {
                    self.stash = stash::stash(k, (outer as usize).min(k.domain.len()));
                }
                Vars::Rows {
                    gid: id(self, BuiltIn::GlobalInvocationId, "global_id"),
                    group_id: id(self, BuiltIn::WorkgroupId, "group_id"),
                    lid: id(self, BuiltIn::LocalInvocationId, "local_id"),
                    groups: id(self, BuiltIn::NumWorkgroups, "num_groups"),
                }
            }
            Schedule::Tiled { tile, .. } => Vars::Tiled {
                gid: id(self, BuiltIn::GlobalInvocationId, "global_id"),
                lid: id(self, BuiltIn::LocalInvocationId, "local_id"),
                tiles: [self.scratch(tile * tile, "tile_a"), self.scratch(tile * tile, "tile_b")],
            },
        };

        let f = self.b.begin_function(void, None, FunctionControl::NONE, fn_ty)?;
        self.b.name(f, k.name.clone());
        for (i, ty) in param_types.iter().enumerate() {
            let p = self.b.function_parameter(*ty)?;
            let name = match k.buffers.get(i) {
                Some(buf) => format!("{}_{}", if buf.access == crate::lower::kernel::Access::Write { "out" } else { "in" }, buf.value),
                None if draws && i + 2 == param_types.len() => "seed".to_string(),
                None if draws && i + 1 == param_types.len() => "offset".to_string(),
                None if i - k.buffers.len() == k.params.len() => "row_group".to_string(),
                None => format!("size{}", i - k.buffers.len()),
            };
            self.b.name(p, name);
            self.params.push(p);
        }
        self.b.entry_point(ExecutionModel::Kernel, f, k.name.clone(), interface);

        self.label = self.b.begin_block(None)?;
        match (vars, k.schedule) {
            (Vars::Elementwise { gid }, _) => self.elementwise(gid)?,
            (Vars::Rows { gid, group_id, lid, groups }, Schedule::Rows { outer, coop, .. }) => {
                self.rows(outer, coop, [gid, group_id, lid, groups])?
            }
            (Vars::Tiled { gid, lid, tiles }, Schedule::Tiled { tile, reduce, a, b }) => self.tiled(tile, reduce, a, b, gid, lid, tiles)?,
            _ => unreachable!("variables are declared from the same schedule"),
        }
        self.b.ret()?;
        self.b.end_function()?;
        Ok(())
    }

    /// Binds output coordinates `first..first + extents.len()` to the row-major coordinates of
    /// `linear` (last dim fastest).
    pub(super) fn bind_coords(&mut self, linear: Word, extents: &[Word], first: u32) -> Result<(), CodegenError> {
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let mut rest = linear;
        for d in (0..extents.len()).rev() {
            let c = if d == 0 { rest } else { self.b.s_rem(i64t, None, rest, extents[d])? };
            let v = first + d as u32;
            self.vars.insert(VarId(v), c);
            self.bound |= 1u128 << v;
            if d > 0 {
                rest = self.b.s_div(i64t, None, rest, extents[d])?;
            }
        }
        Ok(())
    }

    /// The extents of the output coordinates, and their product.
    pub(super) fn extents(&mut self, dims: std::ops::Range<usize>) -> Result<(Vec<Word>, Word), CodegenError> {
        let i64t = self.types.get(&mut self.b, LocalType::I64);
        let mut total = self.types.i64(&mut self.b, 1);
        let mut extents = Vec::new();
        for &d in &self.k.domain[dims] {
            let e = self.emit(d)?;
            extents.push(e);
            total = self.b.i_mul(i64t, None, total, e)?;
        }
        Ok((extents, total))
    }

    /// Binds the leading output coordinates, of `extents`, from their flattened `index`: the
    /// linear variable itself where `Kernel::linearize` rewrote them as its digits, else each
    /// coordinate split off.
    fn bind_leading(&mut self, index: Word, extents: &[Word]) -> Result<(), CodegenError> {
        match self.k.linear {
            Some(l) => {
                self.vars.insert(l, index);
                self.bound |= 1u128 << l.0;
                Ok(())
            }
            None => self.bind_coords(index, extents, 0),
        }
    }

    /// Every store of the kernel at output index `at`, its coordinates bound.
    pub(super) fn store_outputs(&mut self, at: Word) -> Result<(), CodegenError> {
        for store in &self.k.stores {
            let v = self.emit(store.value)?;
            self.store_elem(store.buf, at, v)?;
        }
        Ok(())
    }

    /// One work-item per output element.
    fn elementwise(&mut self, gid_var: Word) -> Result<(), CodegenError> {
        match self.k.schedule {
            Schedule::Columns { .. } | Schedule::Depthwise { .. } => return self.columns(gid_var),
            Schedule::Channels { .. } => return self.channels(gid_var),
            Schedule::Spread { .. } => return self.spread(gid_var),
            _ => {}
        }
        let k = self.k;
        let bool_t = self.types.get(&mut self.b, LocalType::Bool);
        let gid = self.load_id(gid_var, 0)?;
        let (extents, total) = self.extents(0..k.domain.len())?;
        let in_range = self.b.s_less_than(bool_t, None, gid, total)?;
        let (body, end) = (self.b.id(), self.b.id());
        self.b.selection_merge(end, SelectionControl::NONE)?;
        self.b.branch_conditional(in_range, body, end, [])?;

        self.label = self.b.begin_block(Some(body))?;
        self.bind_leading(gid, &extents)?;
        self.store_outputs(gid)?;
        self.b.branch(end)?;
        self.label = self.b.begin_block(Some(end))?;
        Ok(())
    }

    /// One work-item per output element, the column (the last `dims` coordinates, flattened)
    /// from the grid's first dimension and the row (the other coordinates, flattened) from its
    /// second. Where the column group divides the column extent the launch covers the output
    /// exactly and nothing is bounds-checked; else the work-items past the column's end skip.
    fn columns(&mut self, gid_var: Word) -> Result<(), CodegenError> {
        let k = self.k;
        let rank = k.domain.len();
        let Some((group, dims)) = crate::lower::depthwise::column_layout(k.schedule) else { unreachable!("called on the column schedule") };
        let split = rank.saturating_sub(dims as usize);
        let (column, row) = (self.load_id(gid_var, 0)?, self.load_id(gid_var, 1)?);
        let (row_extents, _) = self.extents(0..split)?;
        let (column_extents, columns) = self.extents(split..rank)?;
        let exact = column_extent(k, dims).is_some_and(|c| c % i64::from(group) == 0);
        let mut body = |w: &mut Self| -> Result<(), CodegenError> {
            let i64t = w.types.get(&mut w.b, LocalType::I64);
            w.bind_coords(column, &column_extents, split as u32)?;
            w.bind_leading(row, &row_extents)?;
            let at = w.b.i_mul(i64t, None, row, columns)?;
            let at = w.b.i_add(i64t, None, at, column)?;
            w.store_outputs(at)
        };
        if exact {
            return body(self);
        }
        let boolt = self.types.get(&mut self.b, LocalType::Bool);
        let in_range = self.b.s_less_than(boolt, None, column, columns)?;
        self.when(in_range, &mut body)
    }
}
