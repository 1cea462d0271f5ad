//! Texture fetches and surface reads and writes: `tex2D<float>(t, x, y)` (a texture object),
//! `tex1Dfetch(texRef, i)` (a file-scope texture reference), `surf2Dread(&v, s, x, y)`,
//! `surf2Dread<float>(s, x, y)` and `surf2Dwrite(v, s, x, y)`.
//!
//! Each call is one memory operation in [`Space::Texture`] or [`Space::Surface`] whose
//! "address" is an [`Expr::Opaque`] of the handle and the coordinates ([`TEXTURE_OPERANDS`]):
//! the engines count its warp-level executions and evaluate its operands (the loads inside them
//! count), and the value it reads is one the analysis does not know. Its sectors are the
//! texture unit's, computed from the texture's binding and layout, which the host sets up.

use super::cpp::unparen;
use super::*;

/// A file-scope texture or surface reference: `texture<float4, 1, cudaReadModeElementType> t;`
/// or `surface<void, cudaSurfaceType2D> s;`.
#[derive(Clone, Debug)]
pub(super) struct TextureRef {
    /// The declared type, as written.
    pub(super) decl: String,
    /// What a fetch returns: the element type, or as many `float`s for
    /// `cudaReadModeNormalizedFloat` over integers; `None` for a surface (`void`: the value's
    /// type comes with each read and write) or an element type the front end does not know.
    pub(super) value: Option<Ty>,
}

impl TextureRef {
    /// The reference declared with type `decl` (`texture<uchar4, 2, cudaReadModeNormalizedFloat>`).
    pub(super) fn declared(unit: &Unit, decl: &str) -> TextureRef {
        let inner = decl.split_once('<').and_then(|(_, r)| r.rsplit_once('>')).map_or("", |(a, _)| a);
        let mut parts = inner.split(',').map(str::trim);
        let elem = parts.next().and_then(|t| type_of_text(unit, t));
        let normalized = parts.any(|p| p.ends_with("cudaReadModeNormalizedFloat"));
        let value = match elem {
            Some(t) if normalized => normalized_float(&t),
            t => t,
        };
        TextureRef { decl: decl.to_string(), value }
    }
}

/// A type written as text (a template argument of a reference's declaration): a CUDA scalar or
/// vector type, a typedef of the file, or C's words (`unsigned char`).
fn type_of_text(unit: &Unit, text: &str) -> Option<Ty> {
    const WORDS: [&str; 7] = ["unsigned", "signed", "short", "long", "int", "char", "double"];
    let text = text.trim();
    named_type(text).or_else(|| unit.typedefs.get(text).cloned()).or_else(|| {
        (!text.is_empty() && text.split_whitespace().all(|w| WORDS.contains(&w)))
            .then(|| crate::front::cuda::types::sized_type(text))
    })
}

/// The components of a scalar or vector type: the component and how many.
fn components(t: &Ty) -> Option<(Ty, u32)> {
    match t {
        Ty::Int(_) | Ty::Float(_) => Some((t.clone(), 1)),
        Ty::Vector { name, .. } => crate::front::cuda::component_layout(name),
        _ => None,
    }
}

/// `n` components of `c` as the CUDA type of that name (`float` and 4: `float4`).
fn vector_of(c: &Ty, n: u32) -> Option<Ty> {
    let stem = match c {
        Ty::Float(4) => "float",
        Ty::Int(IntTy { bits: 8, signed: true }) => "char",
        Ty::Int(IntTy { bits: 8, signed: false }) => "uchar",
        Ty::Int(IntTy { bits: 16, signed: true }) => "short",
        Ty::Int(IntTy { bits: 16, signed: false }) => "ushort",
        Ty::Int(IntTy { bits: 32, signed: true }) => "int",
        Ty::Int(IntTy { bits: 32, signed: false }) => "uint",
        _ => return None,
    };
    if n == 1 {
        return Some(c.clone());
    }
    named_type(&format!("{stem}{n}"))
}

/// What `cudaReadModeNormalizedFloat` returns for elements of type `t`: integers become floats
/// in [0, 1] or [-1, 1], component by component; floating elements are returned as they are.
fn normalized_float(t: &Ty) -> Option<Ty> {
    let (c, n) = components(t)?;
    match c {
        Ty::Int(_) => vector_of(&Ty::Float(4), n),
        _ => Some(t.clone()),
    }
}

/// What one of the runtime's texture or surface functions is, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TextureFn {
    space: Space,
    kind: AccessKind,
    /// Coordinates a surface function takes (its boundary mode follows them); `None` for a
    /// texture function, whose arguments after the handle are all its coordinates (and level,
    /// gradients or component).
    surface_coordinates: Option<usize>,
    /// `tex2Dgather`: four texels' one component.
    gather: bool,
}

/// The runtime's texture fetches and surface reads and writes, by name (`tex2D`,
/// `tex1Dfetch`, `tex2DLayeredLod`, `texCubemap`, `surf2Dread`, `surf3Dwrite`,
/// `surfCubemapLayeredread`, ...).
fn texture_fn(name: &str) -> Option<TextureFn> {
    let name = name.rsplit("::").next().unwrap_or(name);
    if let Some(rest) = name.strip_prefix("surf") {
        let (shape, kind) = match (rest.strip_suffix("read"), rest.strip_suffix("write")) {
            (Some(s), _) => (s, AccessKind::Load),
            (_, Some(s)) => (s, AccessKind::Store),
            _ => return None,
        };
        let coordinates = match shape {
            "1D" => 1,
            "2D" | "1DLayered" => 2,
            "3D" | "2DLayered" | "Cubemap" | "CubemapLayered" => 3,
            _ => return None,
        };
        return Some(TextureFn { space: Space::Surface, kind, surface_coordinates: Some(coordinates), gather: false });
    }
    let rest = name.strip_prefix("tex")?;
    let known = ["1D", "2D", "3D", "Cubemap"].iter().any(|p| rest.starts_with(p));
    known.then_some(TextureFn {
        space: Space::Texture,
        kind: AccessKind::Load,
        surface_coordinates: None,
        gather: rest.starts_with("2Dgather"),
    })
}

/// Whether `name` is one of the runtime's texture or surface functions.
pub(super) fn is_texture_call(name: &str) -> bool {
    texture_fn(name).is_some()
}

impl Lowerer<'_, '_> {
    /// A texture fetch or a surface read or write `n`, calling `f` (the function's name, with
    /// its template argument where written) with `args`.
    pub(super) fn texture_call(&mut self, n: Node, f: Node, callee: &str, args: &[Node]) -> Result<(Expr, Ty)> {
        let tf = texture_fn(callee).ok_or_else(|| self.unsupported(n, "this texture function"))?;
        // `tex2D<float>(...)`, `surf2Dread<float4>(...)`: the value's type.
        let explicit = match f.kind() {
            "template_function" => {
                let targs = f.child_by_field_name("arguments").ok_or_else(|| self.unsupported(f, "this call"))?;
                let mut c = targs.walk();
                let first = targs.named_children(&mut c).next();
                match first {
                    Some(td) if td.kind() == "type_descriptor" => Some(self.type_descriptor(td)?),
                    _ => None,
                }
            }
            _ => None,
        };
        let missing = |l: &Self| l.unsupported(n, &format!("`{callee}` without its handle and coordinates"));
        let mut rest = args;
        // A write's data comes first; a read may take the variable it fills first
        // (`surf2Dread(&v, s, x, y)`, `tex2D(&v, t, x, y)`).
        let mut data = None;
        let mut out = None;
        if tf.kind == AccessKind::Store {
            let first = *rest.first().ok_or_else(|| missing(self))?;
            data = Some(self.expr(first)?);
            rest = &rest[1..];
        } else if let Some(target) = rest.first().and_then(|a| self.address_of(*a)) {
            out = Some(self.place(target)?);
            rest = &rest[1..];
        }
        let handle = *rest.first().ok_or_else(|| missing(self))?;
        let mut operands = Vec::new();
        let reference = match self.lookup(self.text(unparen(handle))) {
            Some(Sym::Texture(r)) => Some(r.clone()),
            _ => {
                let (h, _) = self.expr(handle)?;
                operands.push(h);
                None
            }
        };
        let coordinates = &rest[1..];
        // A surface's boundary mode (`cudaBoundaryModeTrap`) follows its coordinates: a constant
        // that moves nothing.
        let coordinates = match tf.surface_coordinates {
            Some(k) if coordinates.len() < k => return Err(missing(self)),
            Some(k) => &coordinates[..k],
            None => coordinates,
        };
        for &c in coordinates {
            // A sparse texture's `bool *isResident`: the flag is set in a register.
            if let Some(target) = self.address_of(c) {
                let place = self.place(target)?;
                let flag = Expr::Opaque { args: Vec::new(), what: TEXTURE_OPERANDS.into() };
                let st = self.write(place, flag, &Ty::Int(IntTy::BOOL), c)?;
                self.builder.pending.push(st);
                continue;
            }
            let (e, _) = self.expr(c)?;
            operands.push(e);
        }
        // The value's type: as written, else the variable filled or the data written, else the
        // reference's element type.
        let mut value = explicit
            .or_else(|| out.as_ref().map(|p| p.ty().clone()))
            .or_else(|| data.as_ref().map(|d| d.1.clone()))
            .or_else(|| reference.as_ref().and_then(|r| r.value.clone()));
        if tf.gather && reference.is_some() {
            // A reference's gather returns one component of four texels.
            value = value.and_then(|v| components(&v)).and_then(|(c, _)| vector_of(&c, 4));
        }
        let value = match value {
            Some(v) if !matches!(v, Ty::Void) => v,
            _ => {
                let hint = match &reference {
                    Some(r) => format!(" (the reference is declared `{}`)", r.decl),
                    None => String::new(),
                };
                return Err(Diagnostic::at(
                    ErrorKind::Unsupported,
                    self.span(n),
                    format!("`{callee}`: the type of the value it reads is not known{hint}"),
                )
                .note(format!("write it as the template argument: `{callee}<float>(...)`")));
            }
        };
        let width = value.size();
        let op = self.builder.memory_operation(
            tf.kind,
            tf.space,
            width,
            CacheOp::Default,
            false,
            self.text(n),
            self.span(n),
        );
        let addr = Expr::Opaque { args: operands, what: TEXTURE_OPERANDS.into() };
        if let Some((v, _)) = data {
            self.builder.pending.push(Stmt::Store { op, addr, value: v });
            return Ok((Expr::Int(0, IntTy::I32), Ty::Void));
        }
        let read = Expr::Load { op, addr: Box::new(addr) };
        if let Some(place) = out {
            let st = self.write(place, read, &value, n)?;
            self.builder.pending.push(st);
            return Ok((Expr::Int(0, IntTy::I32), Ty::Void));
        }
        Ok((read, value))
    }

    /// `x` when `a` is `&x`.
    fn address_of<'n>(&self, a: Node<'n>) -> Option<Node<'n>> {
        let a = unparen(a);
        (a.kind() == "pointer_expression" && a.child_by_field_name("operator").map(|o| self.text(o)) == Some("&"))
            .then(|| a.child_by_field_name("argument"))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let t = texture_fn("tex2D").unwrap();
        assert_eq!((t.space, t.kind, t.surface_coordinates, t.gather), (Space::Texture, AccessKind::Load, None, false));
        assert!(texture_fn("tex2Dgather").unwrap().gather);
        assert!(texture_fn("tex1Dfetch").is_some() && texture_fn("texCubemapLayeredLod").is_some());
        let s = texture_fn("surf2DLayeredwrite").unwrap();
        assert_eq!((s.space, s.kind, s.surface_coordinates), (Space::Surface, AccessKind::Store, Some(3)));
        assert_eq!(texture_fn("surf1Dread").unwrap().surface_coordinates, Some(1));
        assert_eq!(texture_fn("surfCubemapLayeredread").unwrap().surface_coordinates, Some(3));
        assert!(texture_fn("texture").is_none() && texture_fn("surface").is_none() && texture_fn("surf2D").is_none());
        assert!(texture_fn("textile").is_none());
    }
}
