//! Structures, classes and unions defined inside a function body (a kernel's or a `__device__`
//! function's): `struct alignas(sizeof(scalar_t) * VEC_ELEMS) U { scalar_t data[VEC_ELEMS]; };`.
//! Each definition is laid out as a file-scope one is, with the template arguments and local
//! constants in scope, and its name stands for it for the rest of the body (as a local typedef).

use super::layout::{complete_layout, layout_of};
use super::*;

impl Lowerer<'_, '_> {
    /// Defines the structure a specifier with a body declares (`None` for a specifier without
    /// one, which names a type declared elsewhere) and returns its type.
    pub(in crate::front::cuda::lower) fn local_struct(&mut self, spec: Node) -> Result<Option<Ty>> {
        if !matches!(spec.kind(), "struct_specifier" | "class_specifier" | "union_specifier") {
            return Ok(None);
        }
        let Some(body) = spec.child_by_field_name("body") else { return Ok(None) };
        let mut c = body.walk();
        let method =
            body.named_children(&mut c).find(|m| matches!(m.kind(), "function_definition" | "template_declaration"));
        if let Some(m) = method {
            return Err(self.unsupported(
                m,
                "a member function of a structure defined inside a function (define the structure at file scope)",
            ));
        }
        let name = spec.child_by_field_name("name").map(|x| self.text(x).to_string());
        let stem = name.clone().unwrap_or_else(|| "(anonymous)".to_string());
        // A name of its own in the unit: the same name in another function (or this one with
        // other template arguments) is another structure.
        let key = std::iter::once(stem.clone())
            .chain((2..).map(|k| format!("{stem}#{k}")))
            .find(|k| self.unit.layout(k).is_none() && !self.unit.typedefs.contains_key(k))
            .expect("an unused name");
        // Its members may point to the structure itself: incomplete while they are laid out.
        let incomplete =
            Layout { name: key.clone(), size: 0, align: 1, fields: Vec::new(), targs: Vec::new(), consts: Vec::new() };
        self.unit.instances.borrow_mut().insert(key.clone(), incomplete.clone());
        let saved = name.as_ref().map(|n| (n.clone(), self.tmpl.get(n).cloned()));
        if let Some(n) = &name {
            self.tmpl.insert(n.clone(), TemplateArg::Type(incomplete.ty()));
        }
        let layout = layout_of(self.unit, spec, body, &key, &self.tmpl);
        let by_value_self =
            layout.as_ref().is_some_and(|l| l.fields.iter().any(|f| struct_name(&f.ty) == Some(key.as_str())));
        let layout = match layout {
            Some(l) if !by_value_self => l,
            _ => {
                self.unit.instances.borrow_mut().remove(&key);
                if let Some((n, old)) = saved {
                    match old {
                        Some(o) => self.tmpl.insert(n, o),
                        None => self.tmpl.remove(&n),
                    };
                }
                return Err(self.member_type_error(body).unwrap_or_else(|| {
                    self.unsupported(spec, "a structure defined inside a function whose members cannot be laid out")
                }));
            }
        };
        self.unit.instances.borrow_mut().insert(key.clone(), layout.clone());
        let layout = complete_layout(self.unit, &layout);
        self.unit.instances.borrow_mut().insert(key, layout.clone());
        let ty = layout.ty();
        if let Some(n) = name {
            self.tmpl.insert(n, TemplateArg::Type(ty.clone()));
        }
        Ok(Some(ty))
    }

    /// The error of the first member whose type is not known, if any.
    fn member_type_error(&self, body: Node) -> Option<Diagnostic> {
        let mut c = body.walk();
        let fields: Vec<Node> = body.named_children(&mut c).filter(|f| f.kind() == "field_declaration").collect();
        fields.into_iter().find_map(|f| type_of_specifier(self.unit, f.child_by_field_name("type")?, &self.tmpl).err())
    }
}
