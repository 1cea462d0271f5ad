//! The machine form (CONTRACT.md): stable keys, integers for counts.

use super::Sheet;

pub fn render(sheet: &Sheet) -> String {
    let mut s = serde_json::to_string_pretty(sheet).expect("a sheet always serialises");
    s.push('\n');
    s
}
