//! The JSON of a torch.export archive (`models/<name>.json`), as serde types.
//!
//! Field names follow `torch/_export/serde/schema.py` (schema 8.x, torch 2.6–2.15). Unknown fields
//! are ignored so newer minor versions still load; unknown argument kinds are kept verbatim.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

#[derive(Deserialize)]
pub struct ExportedProgram {
    pub graph_module: GraphModule,
    #[serde(default)]
    pub range_constraints: HashMap<String, RangeConstraint>,
    pub schema_version: Option<SchemaVersion>,
    #[serde(default)]
    pub guards_code: Vec<String>,
    /// The torch that exported it (`2.11.0+cu130`); absent in older archives.
    #[serde(default)]
    pub torch_version: Option<String>,
}

/// Read alone first when the full parse fails, to say "wrong version" rather than "bad field".
#[derive(Deserialize)]
pub struct VersionOnly {
    pub schema_version: Option<SchemaVersion>,
}

#[derive(Deserialize, Clone, Copy, Debug)]
pub struct SchemaVersion {
    pub major: i64,
    pub minor: i64,
}

#[derive(Deserialize)]
pub struct RangeConstraint {
    pub min_val: Option<serde_json::Number>,
    pub max_val: Option<serde_json::Number>,
}

#[derive(Deserialize)]
pub struct GraphModule {
    pub graph: Graph,
    pub signature: Signature,
    #[serde(default)]
    pub module_call_graph: Vec<ModuleCallEntry>,
}

#[derive(Deserialize)]
pub struct ModuleCallEntry {
    pub fqn: String,
    pub signature: Option<ModuleCallSignature>,
}

#[derive(Deserialize)]
pub struct ModuleCallSignature {
    #[serde(default)]
    pub forward_arg_names: Option<Vec<String>>,
}

#[derive(Deserialize)]
pub struct Graph {
    pub inputs: Vec<Argument>,
    pub outputs: Vec<Argument>,
    pub nodes: Vec<Node>,
    pub tensor_values: HashMap<String, TensorMeta>,
    #[serde(default)]
    pub sym_int_values: HashMap<String, SymInt>,
    #[serde(default)]
    pub sym_bool_values: HashMap<String, SymBool>,
    #[serde(default)]
    pub sym_float_values: HashMap<String, SymFloat>,
}

#[derive(Deserialize)]
pub struct Node {
    pub target: String,
    pub inputs: Vec<NamedArgument>,
    pub outputs: Vec<Argument>,
    #[serde(default)]
    pub metadata: HashMap<String, String>,
    /// Present from torch 2.8 on; older archives name a node after its first output.
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Deserialize)]
pub struct NamedArgument {
    pub name: String,
    pub arg: Argument,
    #[serde(default)]
    pub kind: Option<i64>,
}

#[derive(Deserialize)]
pub struct TensorMeta {
    pub dtype: i64,
    pub sizes: Vec<SymInt>,
    pub requires_grad: bool,
    pub device: Device,
    pub strides: Vec<SymInt>,
    pub storage_offset: SymInt,
}

#[derive(Deserialize, Clone)]
pub struct Device {
    #[serde(rename = "type")]
    pub kind: String,
    pub index: Option<i64>,
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}:{}", self.kind, i),
            None => f.write_str(&self.kind),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymInt {
    AsExpr(SymExpr),
    AsInt(i64),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymBool {
    AsExpr(SymExpr),
    AsBool(bool),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymFloat {
    AsExpr(SymExpr),
    AsFloat(FloatValue),
}

#[derive(Deserialize)]
pub struct SymExpr {
    pub expr_str: String,
    #[serde(default)]
    pub hint: Option<Hint>,
}

// Variant names mirror the schema's union tags (`as_int`, ...), hence the shared prefix.
#[allow(clippy::enum_variant_names)]
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hint {
    AsInt(i64),
    AsFloat(de::IgnoredAny),
    AsBool(de::IgnoredAny),
}

/// Floats are JSON numbers, except non-finite ones, which the serializer writes as strings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatValue(pub f64);

impl<'de> Deserialize<'de> for FloatValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Num(v) => Ok(FloatValue(v)),
            Raw::Text(t) => match t.as_str() {
                "Infinity" | "inf" => Ok(FloatValue(f64::INFINITY)),
                "-Infinity" | "-inf" => Ok(FloatValue(f64::NEG_INFINITY)),
                "NaN" | "nan" => Ok(FloatValue(f64::NAN)),
                other => other
                    .parse()
                    .map(FloatValue)
                    .map_err(|_| de::Error::custom(format!("expected a float, found \"{other}\""))),
            },
        }
    }
}

#[derive(Deserialize)]
pub struct TensorArgument {
    pub name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymIntArgument {
    AsName(String),
    AsInt(i64),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymBoolArgument {
    AsName(String),
    AsBool(bool),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymFloatArgument {
    AsName(String),
    AsFloat(FloatValue),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionalTensorArgument {
    AsTensor(TensorArgument),
    AsNone(serde::de::IgnoredAny),
}

/// The schema's `Argument` union: an object with exactly one key naming the kind.
pub enum Argument {
    None,
    Tensor(String),
    Tensors(Vec<String>),
    OptionalTensors(Vec<Option<String>>),
    Int(i64),
    Ints(Vec<i64>),
    Float(f64),
    Floats(Vec<f64>),
    String(String),
    Strings(Vec<String>),
    SymInt(SymIntArgument),
    SymInts(Vec<SymIntArgument>),
    SymBool(SymBoolArgument),
    SymFloat(SymFloatArgument),
    ScalarType(i64),
    MemoryFormat(i64),
    Layout(i64),
    Device(Device),
    Bool(bool),
    Bools(Vec<bool>),
    /// A kind this build keeps verbatim (graphs of higher-order ops, custom objects, ...).
    Other { kind: String, json: String },
}

impl<'de> Deserialize<'de> for Argument {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ArgumentVisitor)
    }
}

struct ArgumentVisitor;

impl<'de> Visitor<'de> for ArgumentVisitor {
    type Value = Argument;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an Argument object with one key such as \"as_tensor\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Argument, A::Error> {
        let Some(kind) = map.next_key::<String>()? else {
            return Err(de::Error::custom("empty Argument object"));
        };
        let arg = match kind.as_str() {
            "as_none" => {
                map.next_value::<de::IgnoredAny>()?;
                Argument::None
            }
            "as_tensor" => Argument::Tensor(map.next_value::<TensorArgument>()?.name),
            "as_tensors" => {
                Argument::Tensors(map.next_value::<Vec<TensorArgument>>()?.into_iter().map(|t| t.name).collect())
            }
            "as_optional_tensors" => Argument::OptionalTensors(
                map.next_value::<Vec<OptionalTensorArgument>>()?
                    .into_iter()
                    .map(|t| match t {
                        OptionalTensorArgument::AsTensor(t) => Some(t.name),
                        OptionalTensorArgument::AsNone(_) => None,
                    })
                    .collect(),
            ),
            "as_int" => Argument::Int(map.next_value()?),
            "as_ints" => Argument::Ints(map.next_value()?),
            "as_float" => Argument::Float(map.next_value::<FloatValue>()?.0),
            "as_floats" => Argument::Floats(map.next_value::<Vec<FloatValue>>()?.into_iter().map(|f| f.0).collect()),
            "as_string" => Argument::String(map.next_value()?),
            "as_strings" => Argument::Strings(map.next_value()?),
            "as_sym_int" => Argument::SymInt(map.next_value()?),
            "as_sym_ints" => Argument::SymInts(map.next_value()?),
            "as_sym_bool" => Argument::SymBool(map.next_value()?),
            "as_sym_float" => Argument::SymFloat(map.next_value()?),
            "as_scalar_type" => Argument::ScalarType(map.next_value()?),
            "as_memory_format" => Argument::MemoryFormat(map.next_value()?),
            "as_layout" => Argument::Layout(map.next_value()?),
            "as_device" => Argument::Device(map.next_value()?),
            "as_bool" => Argument::Bool(map.next_value()?),
            "as_bools" => Argument::Bools(map.next_value()?),
            _ => {
                let raw: serde_json::Value = map.next_value()?;
                Argument::Other { kind: kind.clone(), json: raw.to_string() }
            }
        };
        if map.next_key::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::custom(format!("Argument object has more than one key (first: {kind})")));
        }
        Ok(arg)
    }
}

#[derive(Deserialize)]
pub struct Signature {
    pub input_specs: Vec<InputSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSpec {
    UserInput(de::IgnoredAny),
    Parameter { arg: TensorArgument, parameter_name: String },
    Buffer { arg: TensorArgument, buffer_name: String, persistent: bool },
    TensorConstant { arg: TensorArgument, tensor_constant_name: String },
    CustomObj { arg: TensorArgument, custom_obj_name: String },
    Token(de::IgnoredAny),
    ConstantInput(de::IgnoredAny),
}

/// `data/weights/<model>_weights_config.json` and `data/constants/<model>_constants_config.json`.
#[derive(Deserialize)]
pub struct PayloadConfig {
    pub config: HashMap<String, PayloadEntry>,
}

#[derive(Deserialize)]
pub struct PayloadEntry {
    pub path_name: String,
    #[serde(default)]
    pub use_pickle: bool,
    pub tensor_meta: Option<TensorMeta>,
}
