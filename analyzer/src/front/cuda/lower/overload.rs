//! C++ overloads: one name, several definitions. The toolkit's `helper_math.h` defines
//! `make_float3(float)`, `make_float3(float4)`, `make_float3(int3)`, ... beside the toolkit's own
//! `make_float3(float, float, float)`, and `fminf(float2, float2)` beside `fminf(float, float)`.
//! A call takes the definition whose parameters fit its arguments: the right number of them
//! (defaults counted) and no argument whose known type cannot convert to its parameter (a
//! vector is never a scalar, a `float3` never a `float4`). Among those, exact types beat
//! conversions, as C++'s overload resolution ranks them. When no definition of the file fits,
//! the call means the toolkit's function of that name.
//!
//! Argument types are read from the syntax ([`Lowerer::arg_type`]) so that nothing is lowered
//! twice; an argument whose type cannot be read makes the choice uncertain, and an uncertain
//! choice never shadows a function the toolkit provides.

use super::*;

/// What overload resolution needs of a type.
#[derive(Clone, Debug, PartialEq)]
enum Class {
    Scalar(Ty),
    /// A CUDA vector type or a structure, by name.
    Named(String),
    Ptr,
    Unknown,
}

fn class_of(ty: &Ty) -> Class {
    match ty {
        Ty::Void => Class::Unknown,
        Ty::Int(_) | Ty::Float(_) => Class::Scalar(ty.clone()),
        Ty::Vector { name, .. } => Class::Named(name.clone()),
        Ty::Ptr(_) => Class::Ptr,
    }
}

/// How well an argument fits a parameter: `None` when it cannot, 3 for the same type, 2 for a
/// conversion, 1 when a type is unknown.
fn fit(param: &Class, arg: &Class) -> Option<u32> {
    match (param, arg) {
        (Class::Unknown, _) | (_, Class::Unknown) => Some(1),
        (Class::Scalar(p), Class::Scalar(a)) => Some(if p == a { 3 } else { 2 }),
        (Class::Named(p), Class::Named(a)) => (p == a).then_some(3),
        (Class::Ptr, Class::Ptr) => Some(2),
        // An array read from the syntax may look like its element (a `__constant__` array):
        // neither ruled out nor certain.
        (Class::Ptr, Class::Scalar(_)) | (Class::Scalar(_), Class::Ptr) => Some(0),
        _ => None,
    }
}

impl<'u, 'a> Lowerer<'u, 'a> {
    /// The file's definition a call `name(args)` means, with whether every argument's type was
    /// known. `None` when no definition of the file fits.
    pub(super) fn pick_overload(&self, name: &str, args: &[Node]) -> Option<(String, Node<'a>, bool)> {
        let last = cpp::last_segment(name);
        let defs: Vec<(&str, Node<'a>)> = match self
            .unit
            .overloads
            .get(name)
            .map(|d| (name, d))
            .or_else(|| self.unit.overloads.get_key_value(last).map(|(k, d)| (k.as_str(), d)))
        {
            Some((key, d)) => d.iter().map(|&f| (key, f)).collect(),
            // A template declared without a body and defined only in explicit specializations
            // (`template <> float MIN<float>(float, float)`): a deduced call `MIN(a, b)` is the
            // specialization whose parameters the arguments fit.
            None => {
                // In name order: the first of equally fitting ones is the same on every run.
                let prefix = format!("{name}<");
                let mut specs: Vec<(&str, Node<'a>)> = self
                    .unit
                    .overloads
                    .iter()
                    .filter(|(k, _)| k.starts_with(&prefix) && k.ends_with('>'))
                    .flat_map(|(k, d)| d.iter().map(move |&f| (k.as_str(), f)))
                    .collect();
                specs.sort_by_key(|(k, f)| (*k, f.start_byte()));
                specs
            }
        };
        let arg_classes: Vec<Class> = args.iter().map(|a| class_of(&self.arg_type(*a))).collect();
        let mut best: Option<(u32, &str, Node<'a>, bool)> = None;
        for (key, def) in defs {
            let Some(params) = self.param_classes(def) else { continue };
            let required = params.iter().filter(|(_, has_default)| !has_default).count();
            if args.len() < required || args.len() > params.len() {
                continue;
            }
            let mut score = 0;
            let mut certain = true;
            let mut fits = true;
            for ((p, _), a) in params.iter().zip(&arg_classes) {
                match fit(p, a) {
                    Some(s) => {
                        score += s;
                        certain &= s >= 2;
                    }
                    None => {
                        fits = false;
                        break;
                    }
                }
            }
            if fits && best.as_ref().is_none_or(|(b, _, _, _)| score > *b) {
                best = Some((score, key, def, certain));
            }
        }
        best.map(|(_, key, def, certain)| (key.to_string(), def, certain))
    }

    /// A definition's parameters: their classes and whether each has a default. `None` for a
    /// definition whose declarator cannot be read.
    fn param_classes(&self, def: Node<'a>) -> Option<Vec<(Class, bool)>> {
        let params = function_declarator(def)?.child_by_field_name("parameters")?;
        let mut c = params.walk();
        let nodes: Vec<Node> = params
            .named_children(&mut c)
            .filter(|p| matches!(p.kind(), "parameter_declaration" | "optional_parameter_declaration"))
            .collect();
        if nodes.len() == 1 && self.text(nodes[0]).trim() == "void" {
            return Some(Vec::new());
        }
        Some(
            nodes
                .iter()
                .map(|p| {
                    let has_default = p.kind() == "optional_parameter_declaration";
                    let mut pointer = false;
                    let mut d = p.child_by_field_name("declarator");
                    while let Some(x) = d {
                        // An array parameter (`float3 v[16]`) is a pointer to its element.
                        pointer |= matches!(
                            x.kind(),
                            "pointer_declarator"
                                | "abstract_pointer_declarator"
                                | "array_declarator"
                                | "abstract_array_declarator"
                        );
                        d = x.child_by_field_name("declarator");
                    }
                    let class = if pointer {
                        Class::Ptr
                    } else {
                        match p.child_by_field_name("type").map(|t| type_of_specifier(self.unit, t, &self.tmpl)) {
                            Some(Ok(ty)) => class_of(&ty),
                            _ => Class::Unknown,
                        }
                    };
                    (class, has_default)
                })
                .collect(),
        )
    }

    /// The type of an argument as the syntax tells it, without lowering it: `Ty::Void` when it
    /// cannot be told.
    pub(super) fn arg_type(&self, n: Node) -> Ty {
        let n = cpp::unparen(n);
        match n.kind() {
            // An array names its address.
            "identifier" if matches!(self.lookup(self.text(n)), Some(Sym::Shared(_)) | Some(Sym::LocalArray(..))) => {
                Ty::shared_ptr(self.peek_type(n))
            }
            // A row of a shared array decays to a pointer to its elements.
            "subscript_expression" => match self.shared_row_syntax(n) {
                Some((id, _)) => Ty::shared_ptr(self.builder.kernel.shared[id.0 as usize].elem.clone()),
                None => self.peek_type(n),
            },
            "number_literal" => {
                let t = self.text(n).to_ascii_lowercase();
                let hex = t.starts_with("0x");
                if !hex && (t.contains('.') || t.contains('e') || t.ends_with('f')) {
                    Ty::Float(if t.ends_with('f') { 4 } else { 8 })
                } else {
                    Ty::Int(if t.contains('u') { IntTy::U32 } else { IntTy::I32 })
                }
            }
            "char_literal" => Ty::Int(IntTy::I32),
            "true" | "false" => Ty::Int(IntTy::BOOL),
            "cast_expression" => n
                .child_by_field_name("type")
                .and_then(|td| td.child_by_field_name("type"))
                .and_then(|t| type_of_specifier(self.unit, t, &self.tmpl).ok())
                .unwrap_or(Ty::Void),
            "field_expression" => {
                let field = n.child_by_field_name("field").map(|f| self.text(f)).unwrap_or("");
                let base = n.child_by_field_name("argument").map(|a| self.arg_type(a));
                match base {
                    Some(Ty::Vector { name, .. })
                        if !name.starts_with("struct ") && matches!(field, "x" | "y" | "z" | "w") =>
                    {
                        named_type(name.trim_end_matches(|c: char| c.is_ascii_digit())).unwrap_or(Ty::Void)
                    }
                    _ => self.peek_type(n),
                }
            }
            "unary_expression" => match n.child_by_field_name("operator").map(|o| self.text(o)) {
                Some("!") => Ty::Int(IntTy::BOOL),
                _ => n.child_by_field_name("argument").map(|a| self.arg_type(a)).unwrap_or(Ty::Void),
            },
            "binary_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                if matches!(op, "<" | ">" | "<=" | ">=" | "==" | "!=" | "&&" | "||") {
                    return Ty::Int(IntTy::BOOL);
                }
                let l = n.child_by_field_name("left").map(|x| self.arg_type(x)).unwrap_or(Ty::Void);
                let r = n.child_by_field_name("right").map(|x| self.arg_type(x)).unwrap_or(Ty::Void);
                match (&l, &r) {
                    (Ty::Vector { .. }, _) => l,
                    (_, Ty::Vector { .. }) => r,
                    (Ty::Ptr(_), _) => l,
                    (Ty::Void, _) | (_, Ty::Void) => Ty::Void,
                    (Ty::Float(a), Ty::Float(b)) => Ty::Float((*a).max(*b)),
                    (Ty::Float(_), _) => l,
                    (_, Ty::Float(_)) => r,
                    _ => l,
                }
            }
            "conditional_expression" => {
                n.child_by_field_name("consequence").map(|x| self.arg_type(x)).unwrap_or(Ty::Void)
            }
            "call_expression" => {
                let Some(f) = n.child_by_field_name("function") else { return Ty::Void };
                let name = self.text(f);
                let args = n
                    .child_by_field_name("arguments")
                    .map(|a| {
                        let mut c = a.walk();
                        a.named_children(&mut c).collect::<Vec<_>>()
                    })
                    .unwrap_or_default();
                if let Some((_, def, _)) = self.pick_overload(name, &args) {
                    if let Some(Ok(ty)) =
                        def.child_by_field_name("type").map(|t| type_of_specifier(self.unit, t, &self.tmpl))
                    {
                        return ty;
                    }
                }
                match known_function(name) {
                    Some(t) => t,
                    None => named_type(name).unwrap_or(Ty::Void),
                }
            }
            _ => self.peek_type(n),
        }
    }
}
