//! The machine form (docs/src/json-schema.md): stable keys, integers for counts.

use super::Sheet;
use serde::Serialize;

/// The `schema_version` key of the JSON: raised whenever a key's meaning changes (new keys do
/// not raise it).
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Versioned<'a> {
    schema_version: u32,
    #[serde(flatten)]
    sheet: &'a Sheet,
}

pub fn render(sheet: &Sheet) -> String {
    let mut s = serde_json::to_string_pretty(&Versioned { schema_version: SCHEMA_VERSION, sheet })
        .expect("a sheet always serialises");
    s.push('\n');
    s
}
