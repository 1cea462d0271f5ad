//! What the compiled PTX says about a kernel: its entry name (mangled unless `extern "C"`) and
//! the size and kind of each parameter, the ground truth for how scalar arguments are passed.

/// How a PTX `.param` is declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxParam {
    /// Bytes the argument occupies.
    pub bytes: u32,
    /// `.f16`, `.f32` or `.f64`.
    pub float: bool,
    /// A byte array (`.b8 name[N]`): a struct passed by value.
    pub aggregate: bool,
}

/// One `.entry` of a PTX module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxEntry {
    pub name: String,
    pub params: Vec<PtxParam>,
}

/// Every `.entry` in PTX text, in order.
pub fn entries(ptx: &str) -> Vec<PtxEntry> {
    let mut out = Vec::new();
    let mut rest = ptx;
    while let Some(pos) = rest.find(".entry ") {
        let after = &rest[pos + ".entry ".len()..];
        let name_end = after.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(after.len());
        let name = after[..name_end].trim().to_string();
        let mut params = Vec::new();
        let body = &after[name_end..];
        // Parameters sit between the first '(' and the matching ')'; the entry may have none.
        let open = body.find('(');
        let brace = body.find('{').unwrap_or(body.len());
        if let Some(open) = open.filter(|&o| o < brace) {
            let close = body[open..].find(')').map(|c| open + c).unwrap_or(body.len());
            for decl in body[open + 1..close].split(',') {
                if let Some(p) = parse_param(decl) {
                    params.push(p);
                }
            }
        }
        out.push(PtxEntry { name, params });
        rest = &after[name_end..];
    }
    out
}

fn parse_param(decl: &str) -> Option<PtxParam> {
    let d = decl.trim();
    if !d.starts_with(".param") {
        return None;
    }
    let mut bytes = 0u32;
    let mut float = false;
    for tok in d.split_whitespace() {
        let w = match tok {
            ".u8" | ".s8" | ".b8" => 1,
            ".u16" | ".s16" | ".b16" | ".f16" => 2,
            ".u32" | ".s32" | ".b32" | ".f32" => 4,
            ".u64" | ".s64" | ".b64" | ".f64" => 8,
            _ => 0,
        };
        if w > 0 {
            bytes = w;
            float = tok.starts_with(".f");
        }
    }
    let mut aggregate = false;
    if let (Some(l), Some(r)) = (d.rfind('['), d.rfind(']')) {
        if l < r {
            if let Ok(n) = d[l + 1..r].trim().parse::<u32>() {
                bytes *= n;
                aggregate = true;
            }
        }
    }
    (bytes > 0).then_some(PtxParam { bytes, float, aggregate })
}

/// The function's own name inside an Itanium-mangled name: `vec_add` for
/// `_Z7vec_addPKfS0_Pfi`, `f` for `_ZN2ns1fEi`, `strided_load` for `_Z12strided_loadILi4EEvPKdPdi`.
/// `None` for a name that is not mangled.
pub fn mangled_base_name(s: &str) -> Option<String> {
    let rest = s.strip_prefix("_Z")?;
    let rest = rest.strip_prefix('L').unwrap_or(rest);
    let (nested, mut rest) = match rest.strip_prefix('N') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let mut last = None;
    loop {
        // CV-qualifiers of a nested member function.
        while nested && (rest.starts_with('K') || rest.starts_with('V') || rest.starts_with('r')) {
            rest = &rest[1..];
        }
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            break;
        }
        let len: usize = rest[..digits].parse().ok()?;
        let name = rest.get(digits..digits + len)?;
        last = Some(name.to_string());
        rest = &rest[digits + len..];
        if !nested {
            break;
        }
        // Template arguments of a nested component: skip to the matching `E`.
        if rest.starts_with('I') {
            let mut depth = 0i32;
            let mut cut = rest.len();
            for (i, c) in rest.char_indices() {
                match c {
                    'I' => depth += 1,
                    'E' => {
                        depth -= 1;
                        if depth == 0 {
                            cut = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            rest = &rest[cut..];
        }
        if rest.starts_with('E') {
            break;
        }
    }
    last
}

/// The entries that implement kernel `name`: an exact (`extern "C"`) match or a mangled name
/// whose function name is `name`.
pub fn find_kernel<'a>(entries: &'a [PtxEntry], name: &str) -> Vec<&'a PtxEntry> {
    let exact: Vec<&PtxEntry> = entries.iter().filter(|e| e.name == name).collect();
    if !exact.is_empty() {
        return exact;
    }
    entries.iter().filter(|e| mangled_base_name(&e.name).as_deref() == Some(name)).collect()
}

/// The Itanium code of a type a case names as a template argument (`double` -> `d`).
pub fn type_code(ty: &str) -> Option<&'static str> {
    Some(match ty.trim() {
        "float" => "f",
        "double" => "d",
        "int" => "i",
        "unsigned" | "unsigned int" | "uint" => "j",
        "char" => "c",
        "signed char" => "a",
        "unsigned char" | "uchar" => "h",
        "short" => "s",
        "unsigned short" | "ushort" => "t",
        "long" => "l",
        "unsigned long" => "m",
        "long long" => "x",
        "unsigned long long" => "y",
        "bool" => "b",
        _ => return None,
    })
}

/// The builtin-type codes among the template arguments of a plain mangled function name
/// (`_Z9reduce_smIdEvPKT_PS0_j` -> `["d"]`); empty when it has none.
pub fn template_type_codes(mangled: &str) -> Vec<String> {
    let Some(rest) = mangled.strip_prefix("_Z") else { return Vec::new() };
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    let Ok(len) = rest[..digits].parse::<usize>() else { return Vec::new() };
    let Some(args) = rest.get(digits + len..).and_then(|r| r.strip_prefix('I')) else { return Vec::new() };
    let mut out = Vec::new();
    let mut depth = 0;
    let mut chars = args.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            'E' if depth == 0 => break,
            'E' => depth -= 1,
            // A literal (`Li256E`): its type code is not a type argument.
            'L' => {
                for x in chars.by_ref() {
                    if x == 'E' {
                        break;
                    }
                }
            }
            'I' => depth += 1,
            c if depth == 0 && c.is_ascii_lowercase() => out.push(c.to_string()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#"
//
// Generated by NVIDIA NVVM Compiler
.version 9.0
.target sm_90
.address_size 64

	// .globl	_Z7vec_addPKfS0_Pfi

.visible .entry _Z7vec_addPKfS0_Pfi(
	.param .u64 .ptr .align 1 _Z7vec_addPKfS0_Pfi_param_0,
	.param .u64 .ptr .align 1 _Z7vec_addPKfS0_Pfi_param_1,
	.param .u64 .ptr .align 1 _Z7vec_addPKfS0_Pfi_param_2,
	.param .u32 _Z7vec_addPKfS0_Pfi_param_3
)
{
	.reg .pred 	%p<2>;
	ret;
}
.visible .entry saxpy(
	.param .f32 saxpy_param_0,
	.param .u64 saxpy_param_1,
	.param .align 8 .b8 saxpy_param_2[16]
)
{
	ret;
}
.visible .entry _ZN2ns6kernelEv()
{
	ret;
}
"#;

    #[test]
    fn entries_and_params() {
        let e = entries(PTX);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].name, "_Z7vec_addPKfS0_Pfi");
        assert_eq!(e[0].params.len(), 4);
        assert_eq!(e[0].params[3], PtxParam { bytes: 4, float: false, aggregate: false });
        assert_eq!(e[1].params[0], PtxParam { bytes: 4, float: true, aggregate: false });
        assert_eq!(e[1].params[2], PtxParam { bytes: 16, float: false, aggregate: true });
        assert!(e[2].params.is_empty());
        assert_eq!(find_kernel(&e, "vec_add")[0].name, "_Z7vec_addPKfS0_Pfi");
        assert_eq!(find_kernel(&e, "saxpy")[0].name, "saxpy");
        assert_eq!(find_kernel(&e, "kernel")[0].name, "_ZN2ns6kernelEv");
        assert!(find_kernel(&e, "nothing").is_empty());
    }

    #[test]
    fn mangled_names() {
        assert_eq!(mangled_base_name("_Z7vec_addPKfS0_Pfi").as_deref(), Some("vec_add"));
        assert_eq!(mangled_base_name("_Z12strided_loadILi4EEvPKdPdi").as_deref(), Some("strided_load"));
        assert_eq!(mangled_base_name("_ZN2ns1fEi").as_deref(), Some("f"));
        assert_eq!(mangled_base_name("_ZN2ns5outerIiE5innerEv").as_deref(), Some("inner"));
        assert_eq!(mangled_base_name("_ZL6staticv").as_deref(), Some("static"));
        assert_eq!(mangled_base_name("vec_add"), None);
    }
}

#[cfg(test)]
mod template_tests {
    use super::*;

    #[test]
    fn template_type_arguments_pick_the_instantiation() {
        assert_eq!(template_type_codes("_Z9reduce_smIdEvPKT_PS0_j"), vec!["d"]);
        assert_eq!(template_type_codes("_Z9reduce_smIfEvPKT_PS0_j"), vec!["f"]);
        assert_eq!(template_type_codes("_Z4tileIfLi256ELb1EEvPf"), vec!["f"]);
        assert!(template_type_codes("_Z7vec_addPKfS0_Pfi").is_empty());
        assert_eq!(type_code("double"), Some("d"));
    }
}
