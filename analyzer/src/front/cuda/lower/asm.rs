//! Inline PTX (`asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(x) : "l"(p));`): the global
//! loads, stores, atomics and asynchronous copies, the shared loads and stores (`ld.shared`,
//! `st.shared`) and the matrix loads and stores (`ldmatrix`, `stmatrix`) are counted; any other
//! instruction that touches memory is refused by name; the rest moves no memory and never blocks.
//!
//! A shared-memory address operand is the 32-bit value `__cvta_generic_to_shared` gives (or
//! arithmetic on it, through locals, helper functions and macros): the access's address is that
//! value as a pointer into the shared array holding it ([`Expr::SharedAddress`]), which the
//! engines resolve lane by lane.

use super::*;

/// One PTX instruction's memory role.
enum Role {
    None,
    Load(u32, Space),
    Store(u32, Space),
    Red(u32),
    Atom(u32),
    AsyncCopy,
    Wait,
    /// `ldmatrix` (`store` false) or `stmatrix` of `n` 8x8 matrices of 16-bit elements.
    Matrix {
        n: u8,
        store: bool,
    },
}

/// Bytes of a PTX type suffix (`.f32`, `.v4.u32`, `.b128`), vector width included.
fn ptx_width(parts: &[&str]) -> Option<u32> {
    let mut vec = 1;
    let mut elem = None;
    for p in parts {
        match *p {
            "v2" => vec = 2,
            "v4" => vec = 4,
            "v8" => vec = 8,
            _ => {
                let bits = p.trim_start_matches(['b', 'u', 's', 'f']);
                if p.len() > bits.len() && p.len() - bits.len() == 1 {
                    if let Ok(b) = bits.parse::<u32>() {
                        if matches!(b, 8 | 16 | 32 | 64 | 128) {
                            elem = Some(b / 8);
                        }
                    }
                }
                if p == &"f16x2" || p == &"bf16x2" {
                    elem = Some(4);
                }
            }
        }
    }
    elem.map(|e| e * vec)
}

/// `ldmatrix`/`stmatrix`: the number of matrices of `.m8n8` `.b16` (`.x1`, `.x2`, `.x4`; with or
/// without `.trans`), in shared memory (`.shared`, `.shared::cta`) or at a generic address.
fn matrix_count(opcode: &str, parts: &[&str]) -> std::result::Result<u8, String> {
    let mut n = None;
    for p in &parts[1..] {
        match *p {
            "sync" | "aligned" | "trans" | "m8n8" | "b16" | "shared" | "shared::cta" => {}
            "x1" => n = Some(1),
            "x2" => n = Some(2),
            "x4" => n = Some(4),
            other => {
                return Err(format!(
                    "`{opcode}`: `.{other}` is not modelled (only .m8n8 .x1/.x2/.x4 .b16 in shared memory)"
                ))
            }
        }
    }
    if !parts.contains(&"m8n8") || !parts.contains(&"b16") {
        return Err(format!("`{opcode}`: only the .m8n8 shape of .b16 is modelled"));
    }
    n.ok_or_else(|| format!("`{opcode}`: the number of matrices (.x1, .x2, .x4) is missing"))
}

fn role(opcode: &str) -> std::result::Result<Role, String> {
    let parts: Vec<&str> = opcode.split('.').collect();
    let head = parts[0];
    let global = parts.contains(&"global");
    // `.shared` is the block's own shared memory (`.shared::cta` says so explicitly);
    // `.shared::cluster` reaches other blocks' and is not modelled.
    let shared = parts.iter().any(|p| matches!(*p, "shared" | "shared::cta"));
    let width = || ptx_width(&parts[1..]).ok_or_else(|| format!("`{opcode}`: the access width is not known"));
    match head {
        "ld" | "ldu" if global => Ok(Role::Load(width()?, Space::Global)),
        "st" if global => Ok(Role::Store(width()?, Space::Global)),
        "ld" if shared => Ok(Role::Load(width()?, Space::Shared)),
        "st" if shared => Ok(Role::Store(width()?, Space::Shared)),
        "red" if global => Ok(Role::Red(width()?)),
        "atom" if global => Ok(Role::Atom(width()?)),
        "ldmatrix" => Ok(Role::Matrix { n: matrix_count(opcode, &parts)?, store: false }),
        "stmatrix" => Ok(Role::Matrix { n: matrix_count(opcode, &parts)?, store: true }),
        "cp" if parts.get(1) == Some(&"async") => match parts.get(2) {
            Some(&"ca") | Some(&"cg") => Ok(Role::AsyncCopy),
            Some(&"commit_group") => Ok(Role::None),
            Some(&"wait_group") | Some(&"wait_all") => Ok(Role::Wait),
            _ => Err(format!("`{opcode}` (bulk and tensor copies are not modelled)")),
        },
        "ld" | "ldu" | "st" | "red" | "atom" | "cp" | "prefetch" | "prefetchu" | "tex" | "tld4" | "suld" | "sust"
        | "sured" | "mbarrier" | "multimem" => Err(format!(
            "`{opcode}` touches memory that is not modelled (only ld/st.global, ld/st.shared, red/atom.global, ldmatrix, stmatrix and cp.async are)"
        )),
        "wmma" if opcode.contains("load") || opcode.contains("store") => {
            Err(format!("`{opcode}` touches memory that is not modelled"))
        }
        "bar" | "barrier" | "membar" | "fence" => Ok(Role::Wait),
        _ => Ok(Role::None),
    }
}

/// The text of a string literal or of adjacent ones, escapes resolved.
fn literal_text(src: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    let mut chars = src.chars();
    while let Some(c) = chars.next() {
        match (inside, c) {
            (false, '"') => inside = true,
            (true, '"') => inside = false,
            (true, '\\') => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(x) => out.push(x),
                None => {}
            },
            (true, x) => out.push(x),
            _ => {}
        }
    }
    out
}

impl<'u, 'a> Lowerer<'u, 'a> {
    /// An `asm` statement: its memory instructions as accesses, its outputs as values nobody
    /// knows (a `%laneid` read is the lane number).
    pub(super) fn inline_asm(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        let code = n.child_by_field_name("assembly_code").map(|c| literal_text(self.text(c))).unwrap_or_default();
        // `%%laneid` in the template is PTX's `%laneid`.
        let code = code.replace("%%", "%");
        let operands = |field: &str| -> Vec<Node> {
            let mut v = Vec::new();
            if let Some(list) = n.child_by_field_name(field) {
                let mut c = list.walk();
                for o in list.named_children(&mut c) {
                    if let Some(val) = o.child_by_field_name("value") {
                        v.push(val);
                    }
                }
            }
            v
        };
        // A `"memory"` clobber is a compiler barrier: no loaded value is reused across it.
        if let Some(c) = n.child_by_field_name("clobbers") {
            if self.text(c).contains("\"memory\"") {
                self.flush(out);
                out.push(Stmt::Barrier { block: false });
            }
        }
        let outs = operands("output_operands");
        let ins = operands("input_operands");
        let nouts = outs.len();
        // `%N` numbers outputs first, then inputs.
        let mut in_vals: Vec<Option<(Expr, Ty)>> = Vec::new();
        for i in &ins {
            in_vals.push(Some(self.expr(*i)?));
        }
        self.flush(out);
        let operand = |s: &str| -> Option<usize> {
            s.trim().trim_start_matches('[').trim_end_matches(']').trim().strip_prefix('%')?.parse().ok()
        };
        let mut out_vals: Vec<Option<Expr>> = vec![None; nouts];
        for ins_text in code.split([';', '\n']) {
            let t = ins_text.trim();
            if t.is_empty()
                || t.starts_with('{')
                || t.starts_with('}')
                || t.starts_with(".reg")
                || t.starts_with("//")
                || t.ends_with(':')
            {
                continue;
            }
            let t = t.trim_start_matches('{').trim();
            // A predicate guard `@p`.
            let t = if t.starts_with('@') { t.split_once(char::is_whitespace).map_or("", |x| x.1).trim() } else { t };
            let (opcode, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
            let ops: Vec<&str> = rest.split(',').map(str::trim).collect();
            let role = role(opcode).map_err(|why| {
                Diagnostic::at(ErrorKind::Unsupported, self.span(n), format!("inline assembly: {why}"))
                    .note("write the access in C++ so that it can be counted")
            })?;
            let addr_of = |this: &Self, s: &str| -> Result<Expr> {
                let idx = operand(s).filter(|i| *i >= nouts).ok_or_else(|| {
                    Diagnostic::at(
                        ErrorKind::Unsupported,
                        this.span(n),
                        format!("inline assembly: the address `{s}` is not a plain input operand"),
                    )
                })?;
                match in_vals.get(idx - nouts) {
                    Some(Some((e, _))) => Ok(e.clone()),
                    _ => Err(Diagnostic::at(
                        ErrorKind::Unsupported,
                        this.span(n),
                        format!("inline assembly: operand `{s}` is unknown"),
                    )),
                }
            };
            let text = self.text(n).to_string();
            let span = self.span(n);
            // nvcc keeps every inline `asm` memory access (it cannot see what the text does):
            // each is a volatile access of its own.
            let asm_access = |builder: &mut KernelBuilder, kind, space, width: u32, cache| {
                builder.memory_operation(kind, space, width.into(), cache, true, &text, span)
            };
            // A shared-memory operand is an address in the shared window: the pointer into the
            // shared array holding it.
            let located = |space: Space, addr: Expr| match space {
                Space::Shared => Expr::SharedAddress { addr: Box::new(addr), span },
                Space::Global | Space::Texture | Space::Surface => addr,
            };
            match role {
                Role::None => {
                    if opcode.starts_with("mov") && ops.len() == 2 && ops[1] == "%laneid" {
                        if let Some(i) = operand(ops[0]).filter(|i| *i < nouts) {
                            out_vals[i] = Some(Expr::Binary {
                                op: BinOp::And,
                                ty: IntTy::U32,
                                lhs: Box::new(self.linear_tid(span)),
                                rhs: Box::new(Expr::Int(31, IntTy::U32)),
                                span,
                            });
                        }
                    }
                }
                Role::Wait => out.push(Stmt::Barrier { block: false }),
                Role::Matrix { n: count, store } => {
                    // `ldmatrix {d..}, [a]` and `stmatrix [a], {r..}`; the registers are data.
                    let at = ops.iter().position(|o| o.starts_with('[')).unwrap_or(if store { 0 } else { 1 });
                    let addr = addr_of(self, ops.get(at).copied().unwrap_or(""))?;
                    let addr = located(Space::Shared, addr);
                    let kind = if store { AccessKind::Store } else { AccessKind::Load };
                    let op = asm_access(&mut self.builder, kind, Space::Shared, 16, CacheOp::Default);
                    self.builder.kernel.mem_ops[op.0 as usize].matrix = count;
                    if store {
                        out.push(Stmt::Store {
                            op,
                            addr,
                            value: Expr::Opaque { args: Vec::new(), what: "asm".into() },
                        });
                    } else {
                        let note = "ldmatrix counted at every execution: ptxas removes one whose registers are never read afterwards (seen in LeetCUDA's HGEMM: the fragments loaded after the last k tile), which the source path does not detect; `--via sass` counts what the compiler kept".to_string();
                        if !self.builder.kernel.notes.contains(&note) {
                            self.builder.kernel.notes.push(note);
                        }
                        out.push(Stmt::Eval(Expr::Load { op, addr: Box::new(addr) }));
                    }
                }
                Role::Load(..) | Role::Atom(_) => {
                    let (w, space) = match role {
                        Role::Load(w, space) => (w, space),
                        Role::Atom(w) => (w, Space::Global),
                        _ => unreachable!("a load or an atomic"),
                    };
                    let at = ops.iter().position(|o| o.starts_with('[')).unwrap_or(1);
                    let addr = located(space, addr_of(self, ops.get(at).copied().unwrap_or(""))?);
                    let kind = if matches!(role, Role::Load(..)) { AccessKind::Load } else { AccessKind::Atom };
                    let cache = if opcode.contains(".nc") {
                        CacheOp::Nc
                    } else if opcode.contains(".cg") {
                        CacheOp::Cg
                    } else if opcode.contains(".cs") {
                        CacheOp::Cs
                    } else {
                        CacheOp::Default
                    };
                    let op = asm_access(&mut self.builder, kind, space, w, cache);
                    let load = Expr::Load { op, addr: Box::new(addr) };
                    // The first output register receives the value; the others are data too.
                    let targets: Vec<usize> = ops[..at]
                        .iter()
                        .flat_map(|o| o.split(['{', '}', ' ']))
                        .filter_map(operand)
                        .filter(|i| *i < nouts)
                        .collect();
                    match targets.first() {
                        Some(&first) => {
                            out_vals[first] = Some(Expr::Opaque { args: vec![load], what: "asm".into() });
                        }
                        None => out.push(Stmt::Eval(load)),
                    }
                }
                Role::Store(..) | Role::Red(_) => {
                    let (w, space) = match role {
                        Role::Store(w, space) => (w, space),
                        Role::Red(w) => (w, Space::Global),
                        _ => unreachable!("a store or a reduction"),
                    };
                    let addr = located(space, addr_of(self, ops.first().copied().unwrap_or(""))?);
                    if matches!(role, Role::Store(..)) {
                        let op = asm_access(&mut self.builder, AccessKind::Store, space, w, CacheOp::Default);
                        out.push(Stmt::Store {
                            op,
                            addr,
                            value: Expr::Opaque { args: Vec::new(), what: "asm".into() },
                        });
                    } else {
                        let op = asm_access(&mut self.builder, AccessKind::Red, Space::Global, w, CacheOp::Default);
                        out.push(Stmt::Eval(Expr::Load { op, addr: Box::new(addr) }));
                    }
                }
                Role::AsyncCopy => {
                    let src = addr_of(self, ops.get(1).copied().unwrap_or(""))?;
                    let size = ops.get(2).copied().unwrap_or("");
                    let bytes = match operand(size) {
                        Some(i) if i >= nouts => match in_vals.get(i - nouts) {
                            Some(Some((e, _))) => fold_constant(e),
                            _ => None,
                        },
                        _ => size.parse::<i128>().ok(),
                    };
                    let bytes = match bytes {
                        Some(b @ (4 | 8 | 16)) => b as u32,
                        _ => {
                            return Err(Diagnostic::at(
                                ErrorKind::Unsupported,
                                span,
                                format!("inline assembly: `{opcode}` with a copy size that is not 4, 8 or 16 bytes"),
                            ))
                        }
                    };
                    // `.cg` (16 bytes only) bypasses L1: LDGSTS.BYPASS.
                    let cache = if opcode.contains(".cg") { CacheOp::Cg } else { CacheOp::Ca };
                    let op = asm_access(&mut self.builder, AccessKind::AsyncCopy, Space::Global, bytes, cache);
                    out.push(Stmt::Eval(Expr::Load { op, addr: Box::new(src) }));
                }
            }
        }
        // Outputs: what was computed above, anything else a value nobody knows, computed from the
        // inputs (so that what fills them stays live: `vabsdiff4 %0, %1, %2` of two loads keeps
        // both loads).
        let inputs: Vec<Expr> = in_vals.iter().flatten().map(|(e, _)| e.clone()).collect();
        for (i, o) in outs.iter().enumerate() {
            let v = out_vals[i].take().unwrap_or_else(|| Expr::Opaque { args: inputs.clone(), what: "asm".into() });
            let place = self.place(*o)?;
            let ty = match &place {
                Place::Local(_, t) | Place::Memory(MemoryPlace { ty: t, .. }) | Place::ThreadArray(t) => t.clone(),
            };
            let s = self.write(place, v, &ty, n)?;
            self.flush(out);
            out.push(s);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_of_ptx_types() {
        assert_eq!(ptx_width(&["nc", "f32"]), Some(4));
        assert_eq!(ptx_width(&["nc", "v4", "f32"]), Some(16));
        assert_eq!(ptx_width(&["L1::no_allocate", "v2", "u64"]), Some(16));
        assert_eq!(ptx_width(&["b128"]), Some(16));
        assert_eq!(ptx_width(&["u8"]), Some(1));
        assert_eq!(ptx_width(&["add"]), None);
    }

    #[test]
    fn roles_of_instructions() {
        assert!(matches!(role("ld.global.nc.f32"), Ok(Role::Load(4, Space::Global))));
        assert!(matches!(role("st.global.v4.f32"), Ok(Role::Store(16, Space::Global))));
        assert!(matches!(role("ld.shared.f32"), Ok(Role::Load(4, Space::Shared))));
        assert!(matches!(role("ld.shared::cta.v4.u32"), Ok(Role::Load(16, Space::Shared))));
        assert!(matches!(role("st.shared.v2.f32"), Ok(Role::Store(8, Space::Shared))));
        assert!(matches!(role("ldmatrix.sync.aligned.x4.m8n8.shared.b16"), Ok(Role::Matrix { n: 4, store: false })));
        assert!(matches!(
            role("ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16"),
            Ok(Role::Matrix { n: 2, store: false })
        ));
        assert!(matches!(role("ldmatrix.sync.aligned.x1.m8n8.b16"), Ok(Role::Matrix { n: 1, store: false })));
        assert!(matches!(
            role("stmatrix.sync.aligned.x4.trans.m8n8.shared.b16"),
            Ok(Role::Matrix { n: 4, store: true })
        ));
        assert!(matches!(role("red.global.add.u32"), Ok(Role::Red(4))));
        assert!(matches!(role("atom.global.cas.b64"), Ok(Role::Atom(8))));
        assert!(matches!(role("cp.async.cg.shared.global.L2::128B"), Ok(Role::AsyncCopy)));
        assert!(matches!(role("cp.async.wait_group"), Ok(Role::Wait)));
        assert!(matches!(role("add.u32"), Ok(Role::None)));
        assert!(matches!(role("shfl.sync.bfly.b32"), Ok(Role::None)));
        for refused in [
            "ld.shared::cluster.f32",
            "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8",
            "ldmatrix.sync.aligned.m8n8.shared.b16",
            "cp.async.bulk.shared::cluster.global",
            "prefetch.global.L2",
        ] {
            let e = role(refused).err().unwrap_or_default();
            assert!(e.contains(refused), "{refused}: {e}");
        }
    }

    #[test]
    fn string_pieces_join() {
        assert_eq!(
            literal_text(r#""ld.global.f32 %0, [%1];\n" "st.global.f32 [%1], %0;""#),
            "ld.global.f32 %0, [%1];\nst.global.f32 [%1], %0;"
        );
    }
}
