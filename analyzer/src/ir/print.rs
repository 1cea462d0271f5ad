//! The IR as text (`--emit ir`), for lowering snapshots and for reading what a front end made
//! of a kernel. One statement a line, C-like; every memory access is shown with its operation
//! number (`load#3`), width and the source text it came from, so a test can see how many
//! accesses the lowering made and what each address is.

use super::*;
use std::fmt::Write;

/// The whole kernel: parameters, shared arrays, locals, memory operations, then the body.
pub fn kernel(k: &Kernel) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "kernel {}", k.name);
    for (i, p) in k.params.iter().enumerate() {
        let _ = writeln!(o, "  param p{i} {}: {}", p.name, ty(&p.ty));
    }
    for (i, a) in k.shared.iter().enumerate() {
        let dims: Vec<String> = a.dims.iter().map(|d| d.to_string()).collect();
        let ext = if a.is_extern { " extern" } else { "" };
        let _ = writeln!(o, "  shared s{i} {}: {}[{}]{ext}", a.name, ty(&a.elem), dims.join("]["));
    }
    for (i, l) in k.locals.iter().enumerate() {
        let _ = writeln!(o, "  local l{i} {}: {}", l.name, ty(&l.ty));
    }
    for (i, m) in k.mem_ops.iter().enumerate() {
        let kind = m.kind.name();
        let mut flags = String::new();
        if m.volatile {
            flags.push_str(" volatile");
        }
        if m.cache != CacheOp::Default {
            let _ = write!(flags, " cache={}", m.cache.name());
        }
        let space = m.space.name();
        let _ =
            writeln!(o, "  {kind}#{i} {space} {}B{flags} `{}` at {}:{}", m.width, m.text, m.span.line, m.span.column);
    }
    for n in &k.notes {
        let _ = writeln!(o, "  note {n}");
    }
    o.push_str("{\n");
    block(&mut o, &k.body, 1);
    o.push_str("}\n");
    o
}

fn ty(t: &Ty) -> String {
    match t {
        Ty::Ptr(p) => {
            let mut s = format!("{}*", ty(&p.pointee));
            if p.space == Space::Shared {
                s.push_str(" shared");
            }
            if p.volatile {
                s.push_str(" volatile");
            }
            if p.restrict {
                s.push_str(" restrict");
            }
            s
        }
        t => t.display(),
    }
}

fn block(o: &mut String, stmts: &[Stmt], depth: usize) {
    for s in stmts {
        stmt(o, s, depth);
    }
}

fn stmt(o: &mut String, s: &Stmt, depth: usize) {
    let pad = "  ".repeat(depth);
    match s {
        Stmt::Assign { local, value, .. } => {
            let _ = writeln!(o, "{pad}l{} = {}", local.0, expr(value));
        }
        Stmt::Store { op, addr, value } => {
            let _ = writeln!(o, "{pad}store#{}[{}] = {}", op.0, expr(addr), expr(value));
        }
        Stmt::Eval(e) => {
            let _ = writeln!(o, "{pad}eval {}", expr(e));
        }
        Stmt::If { cond, then, els, .. } => {
            let _ = writeln!(o, "{pad}if {} {{", expr(cond));
            block(o, then, depth + 1);
            if !els.is_empty() {
                let _ = writeln!(o, "{pad}}} else {{");
                block(o, els, depth + 1);
            }
            let _ = writeln!(o, "{pad}}}");
        }
        Stmt::Loop { cond, body, step, test_first, synthetic, .. } => {
            let head = match (cond, test_first) {
                (Some(c), true) => format!("while {}", expr(c)),
                (Some(c), false) => format!("do-while {}", expr(c)),
                (None, _) => "loop".to_string(),
            };
            let syn = if *synthetic { " (inlined call)" } else { "" };
            let _ = writeln!(o, "{pad}{head}{syn} {{");
            block(o, body, depth + 1);
            if !step.is_empty() {
                let _ = writeln!(o, "{pad}}} step {{");
                block(o, step, depth + 1);
            }
            let _ = writeln!(o, "{pad}}}");
        }
        Stmt::Break => {
            let _ = writeln!(o, "{pad}break");
        }
        Stmt::Continue => {
            let _ = writeln!(o, "{pad}continue");
        }
        Stmt::Return => {
            let _ = writeln!(o, "{pad}return");
        }
        Stmt::Barrier { .. } => {
            let _ = writeln!(o, "{pad}barrier");
        }
    }
}

fn bin(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::And => "&",
        BinOp::Or => "|",
        BinOp::Xor => "^",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Min => "min",
        BinOp::Max => "max",
    }
}

fn int_ty(t: IntTy) -> String {
    if t.bits == 1 {
        return "bool".into();
    }
    format!("{}{}", if t.signed { "i" } else { "u" }, t.bits)
}

/// One expression, fully parenthesised, integer operators tagged with their type.
pub fn expr(e: &Expr) -> String {
    match e {
        Expr::Int(v, t) => format!("{v}{}", int_ty(*t)),
        Expr::Float(f) => format!("{f:?}f"),
        Expr::Local(l) => format!("l{}", l.0),
        Expr::Param(p) => format!("p{}", p.0),
        Expr::Builtin(b) => {
            let (n, d) = match b {
                Builtin::ThreadIdx(d) => ("threadIdx", *d),
                Builtin::BlockIdx(d) => ("blockIdx", *d),
                Builtin::BlockDim(d) => ("blockDim", *d),
                Builtin::GridDim(d) => ("gridDim", *d),
                Builtin::WarpSize => return "warpSize".into(),
            };
            format!("{n}.{}", ["x", "y", "z"].get(d as usize).copied().unwrap_or("?"))
        }
        Expr::Binary { op: op @ (BinOp::Min | BinOp::Max), ty, lhs, rhs, .. } => {
            format!("{}.{}({}, {})", bin(*op), int_ty(*ty), expr(lhs), expr(rhs))
        }
        Expr::Binary { op, ty, lhs, rhs, .. } => format!("({} {}.{} {})", expr(lhs), bin(*op), int_ty(*ty), expr(rhs)),
        Expr::FloatBinary { op, lhs, rhs } => format!("({} {}.f {})", expr(lhs), bin(*op), expr(rhs)),
        Expr::Unary { op, ty, arg } => {
            let o = match op {
                UnOp::Neg => "-",
                UnOp::Not => "~",
                UnOp::LogicalNot => "!",
            };
            format!("{o}.{}{}", int_ty(*ty), expr(arg))
        }
        Expr::ToInt { ty, arg } => format!("{}({})", int_ty(*ty), expr(arg)),
        Expr::ToFloat(a) => format!("float({})", expr(a)),
        Expr::Logical { and, lhs, rhs } => {
            format!("({} {} {})", expr(lhs), if *and { "&&" } else { "||" }, expr(rhs))
        }
        Expr::Select { cond, then, els } => format!("({} ? {} : {})", expr(cond), expr(then), expr(els)),
        Expr::PtrOffset { ptr, bytes } => format!("({} +B {})", expr(ptr), expr(bytes)),
        Expr::SharedBase(s) => format!("s{}", s.0),
        Expr::PtrDiff { lhs, rhs } => format!("({} -B {})", expr(lhs), expr(rhs)),
        Expr::SharedAddress { addr, .. } => format!("shared({})", expr(addr)),
        Expr::Load { op, addr } => format!("load#{}[{}]", op.0, expr(addr)),
        Expr::Opaque { args, what } => {
            let a: Vec<String> = args.iter().map(expr).collect();
            format!("opaque<{what}>({})", a.join(", "))
        }
        Expr::Warp { op, ty, args, .. } => {
            let a: Vec<String> = args.iter().map(expr).collect();
            format!("warp<{op:?}>.{}({})", int_ty(*ty), a.join(", "))
        }
    }
}
