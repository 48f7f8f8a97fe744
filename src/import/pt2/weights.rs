//! Weights and constants: raw little-endian bytes under `data/weights/` and `data/constants/`,
//! described by `<model>_weights_config.json` / `<model>_constants_config.json`.

use std::io::{Read, Seek};
use std::sync::Arc;

use super::archive::{Archive, MAX_JSON_BYTES, MAX_WEIGHT_BYTES};
use super::convert::Cx;
use super::schema::PayloadConfig;
use super::{Layout, Pt2Error};
use crate::ir::{Model, TensorMeta, Weight, WeightData};

pub(super) fn load<R: Read + Seek>(
    file: &str,
    archive: &mut Archive<R>,
    layout: &Layout,
    model_name: &str,
    cx: &mut Cx,
    model: &mut Model,
) -> Result<(), Pt2Error> {
    let mut total: u64 = 0;
    for folder in ["weights", "constants"] {
        let config_entry = format!("{}data/{folder}/{model_name}_{folder}_config.json", layout.root);
        if !archive.contains(&config_entry) {
            continue;
        }
        let bytes = archive.read(&config_entry, MAX_JSON_BYTES)?;
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        let config: PayloadConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| Pt2Error::Json {
            file: file.to_string(),
            entry: config_entry.clone(),
            path: e.path().to_string(),
            detail: e.into_inner().to_string(),
        })?;
        let mut fqns: Vec<&String> = config.config.keys().collect();
        fqns.sort();
        for fqn in fqns {
            let entry = &config.config[fqn];
            let Some(tm) = &entry.tensor_meta else {
                model.warnings.push(format!("{file}: {config_entry}: `{fqn}` is not a tensor (custom object); skipped"));
                continue;
            };
            let meta = cx.tensor_meta(tm, &format!("{config_entry}: config.{fqn}.tensor_meta"))?;
            let data = if entry.use_pickle {
                WeightData::Unavailable(format!("`{fqn}` is pickled in the archive; the workbench never unpickles"))
            } else {
                let path = format!("{}data/{folder}/{}", layout.root, entry.path_name);
                if !archive.contains(&path) {
                    return Err(Pt2Error::At {
                        file: file.to_string(),
                        entry: config_entry.clone(),
                        path: format!("config.{fqn}.path_name"),
                        message: format!("names `{path}`, which is not in the archive (missing tensor)"),
                    });
                }
                let remaining = MAX_WEIGHT_BYTES.saturating_sub(total);
                let bytes = archive.read(&path, remaining)?;
                total += bytes.len() as u64;
                check_size(&meta, bytes.len()).map_err(|message| Pt2Error::At {
                    file: file.to_string(),
                    entry: path.clone(),
                    path: format!("{config_entry}: config.{fqn}"),
                    message,
                })?;
                WeightData::Bytes(Arc::new(bytes))
            };
            model.weights.insert(fqn.clone(), Weight { fqn: fqn.clone(), meta, data });
        }
    }
    Ok(())
}

/// The bytes must cover every element the sizes, strides and offset address.
fn check_size(meta: &TensorMeta, have: usize) -> Result<(), String> {
    let ints = |v: &[crate::sym::Expr]| v.iter().map(|e| e.as_int()).collect::<Option<Vec<i64>>>();
    let (Some(sizes), Some(strides), Some(offset)) =
        (ints(&meta.sizes), ints(&meta.strides), meta.storage_offset.as_int())
    else {
        return Err("a stored weight has symbolic sizes".into());
    };
    if sizes.contains(&0) {
        return Ok(());
    }
    let mut last: i128 = offset as i128;
    for (&s, &st) in sizes.iter().zip(&strides) {
        if s < 0 || st < 0 {
            return Err(format!("negative size or stride in {sizes:?} / {strides:?}"));
        }
        last += (s as i128 - 1) * st as i128;
    }
    let need = (last + 1).checked_mul(meta.dtype.size_bytes() as i128).unwrap_or(i128::MAX);
    if need > have as i128 {
        return Err(format!(
            "{} {:?} with strides {:?} needs {need} bytes, the entry holds {have}",
            meta.dtype, sizes, strides
        ));
    }
    Ok(())
}
