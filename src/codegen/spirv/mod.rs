//! SPIR-V for OpenCL-flavoured consumers (Intel's OpenCL and Level Zero drivers): Kernel
//! execution model, Physical64 addressing, OpenCL memory model, math through `OpenCL.std`.
//!
//! Split by concern like naga's `back/spv`: [`types`] deduplicates types and constants,
//! `writer` lays out the module and the kernel entry, `block` emits expressions and loops.

mod block;
mod channels;
mod depthwise;
mod elem;
mod erf;
mod rowcache;
mod spread;
mod stash;
mod workgroup;
pub mod types;
mod writer;

use serde::Serialize;

use crate::lower::Kernel;

/// One compiled kernel: its entry point name and the module words.
#[derive(Clone, Debug, Serialize)]
pub struct SpirvModule {
    pub name: String,
    #[serde(skip)]
    pub words: Vec<u32>,
}

impl SpirvModule {
    /// Little-endian bytes, as `.spv` files store them.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CodegenError {
    #[error("SPIR-V builder: {0}")]
    Builder(String),
    #[error("loop variable {0} is used outside its loop")]
    UnboundVar(u32),
    #[error("no SPIR-V for {0}")]
    Unsupported(String),
    #[error("kernel `{kernel}`: {source}")]
    Kernel { kernel: String, source: Box<CodegenError> },
}

impl From<rspirv::dr::Error> for CodegenError {
    fn from(e: rspirv::dr::Error) -> Self {
        CodegenError::Builder(e.to_string())
    }
}

/// Generates the SPIR-V module of `kernel`.
pub fn compile(kernel: &Kernel) -> Result<SpirvModule, CodegenError> {
    puffin::profile_scope!("codegen", &kernel.name);
    let words = writer::write(kernel)
        .map_err(|e| CodegenError::Kernel { kernel: kernel.name.clone(), source: Box::new(e) })?;
    Ok(SpirvModule { name: kernel.name.clone(), words })
}

pub use rowcache::RowVector;

/// The row vectors `kernel` caches in local memory (early ones, read by the row statistics
/// too, before the vectors that read them): none unless it is on the cooperative row schedule.
pub fn row_vectors(kernel: &Kernel) -> Vec<RowVector> {
    match kernel.schedule {
        crate::lower::schedule::Schedule::Rows { outer, coop: true, .. } => rowcache::row_vectors(kernel, (outer as usize).min(kernel.domain.len())),
        _ => Vec::new(),
    }
}

/// Readable assembly: `spirv-dis` when installed (the standard text form), else rspirv's own
/// disassembler.
pub fn disassemble(module: &SpirvModule) -> String {
    if let Some(text) = spirv_dis(&module.to_bytes()) {
        return text;
    }
    use rspirv::binary::Disassemble;
    match rspirv::dr::load_words(&module.words) {
        Ok(m) => m.disassemble(),
        Err(e) => format!("; could not parse module `{}`: {e}\n", module.name),
    }
}

fn spirv_dis(bytes: &[u8]) -> Option<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("spirv-dis")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(bytes).ok()?;
    let out = child.wait_with_output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
