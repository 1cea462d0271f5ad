//! The GPU's own intrinsics: atomics, warp shuffles and votes, bit counts, half-precision
//! conversions, asynchronous copies. Hooked into [`Lowerer::call`]; cooperative groups are in
//! [`super::coop_groups`], inline PTX in [`super::asm`].

use super::*;

/// `atomicAdd_block` -> `atomicAdd`: the scope changes the ordering, not the memory moved.
fn atomic_base(name: &str) -> Option<&str> {
    let base = name.strip_suffix("_block").or_else(|| name.strip_suffix("_system")).unwrap_or(name);
    matches!(
        base,
        "atomicAdd"
            | "atomicSub"
            | "atomicExch"
            | "atomicMin"
            | "atomicMax"
            | "atomicInc"
            | "atomicDec"
            | "atomicCAS"
            | "atomicAnd"
            | "atomicOr"
            | "atomicXor"
    )
    .then_some(base)
}

/// What the front end calls an atomic's value: an [`Expr::Opaque`] over its operands and the
/// atomic itself (an [`Expr::Load`] of kind [`AccessKind::Atom`]), so operands are evaluated
/// first and the old value is data nobody knows.
pub(super) const ATOMIC_WHAT: &str = "atomic";
/// An integer `atomicAdd`/`atomicSub`: [`ATOMIC_WHAT`] that nvcc may aggregate per warp.
const AGGREGABLE_WHAT: &str = "atomic add";

fn is_atomic_what(what: &str) -> bool {
    what == ATOMIC_WHAT || what == AGGREGABLE_WHAT
}

/// A kernel launched from device code, or the device runtime's stream and launch calls that
/// serve one: dynamic parallelism, whose child grids are launches of their own. cuRAND's
/// device functions are refused here too, as its state type is.
pub(super) fn device_side_launch(text: &str, name: &str, span: Span) -> Option<Diagnostic> {
    let launch = text.contains("<<<");
    let runtime = matches!(
        name,
        "cudaStreamCreateWithFlags"
            | "cudaStreamDestroy"
            | "cudaDeviceSynchronize"
            | "cudaLaunchDevice"
            | "cudaGetParameterBuffer"
            | "cudaGraphLaunch"
    );
    if name.starts_with("curand") || name.starts_with("skipahead") {
        return Some(
            cpp::unknown_type(span, "curandState").note(format!("`{name}` is one of cuRAND's device functions")),
        );
    }
    (launch || runtime).then(|| {
        Diagnostic::at(
            ErrorKind::Unsupported,
            span,
            format!("`{name}`: a device-side launch (dynamic parallelism) is not modelled"),
        )
        .note("analyse the child kernel on its own, with the launch the parent makes")
    })
}

impl<'u, 'a> Lowerer<'u, 'a> {
    /// A call to one of the GPU's intrinsics, or `None` when `name` is none of them.
    pub(super) fn gpu_call(&mut self, n: Node, name: &str, args: &[Node]) -> Result<Option<(Expr, Ty)>> {
        if let Some(base) = atomic_base(name) {
            return self.atomic(n, base, args).map(Some);
        }
        if name.starts_with("__atomic") || name.starts_with("cuda::atomic") || name.starts_with("std::atomic") {
            return Err(Diagnostic::at(
                ErrorKind::Unsupported,
                self.span(n),
                format!("`{name}` is not supported: write it with atomicAdd, atomicCAS, ... (CUDA's atomic functions)"),
            ));
        }
        // `cuda::aligned_size_t<16>(bytes)`: the size, with an alignment promise.
        if (name.starts_with("cuda::aligned_size_t") || name.starts_with("aligned_size_t")) && args.len() == 1 {
            let (e, t) = self.expr(args[0])?;
            return Ok(Some((e, t)));
        }
        if name == "__cvta_generic_to_shared" && args.len() == 1 {
            // The address in the shared window, an integer (inline PTX adds to it; an asm
            // operand of a shared access turns it back into its array: `Expr::SharedAddress`).
            let (p, _) = self.expr(args[0])?;
            return Ok(Some((Expr::ToInt { ty: IntTy::U64, arg: Box::new(p) }, Ty::Int(IntTy::U64))));
        }
        if name == "__cvta_generic_to_global" && args.len() == 1 {
            // An address for inline PTX: the pointer itself, as the asm operand needs it.
            let (p, _) = self.expr(args[0])?;
            return Ok(Some((p, Ty::Int(IntTy::U64))));
        }
        if name == "cudaGraphSetConditional" && args.len() == 2 {
            // Sets the value a conditional graph node reads after the kernel: the device
            // runtime's business, not one of the kernel's loads or stores.
            let mut xs = Vec::new();
            for a in args {
                xs.push(self.expr(*a)?.0);
            }
            let note = "cudaGraphSetConditional(...) counted as moving no memory (it sets the graph's conditional value through the device runtime)".to_string();
            if !self.builder.kernel.notes.contains(&note) {
                self.builder.kernel.notes.push(note);
            }
            return Ok(Some((Expr::Opaque { args: xs, what: format!("{name}()") }, Ty::Void)));
        }
        if let Some(r) = self.mul_intrinsic(n, name, args)? {
            return Ok(Some(r));
        }
        if let Some(r) = self.warp_call(n, name, args)? {
            return Ok(Some(r));
        }
        if let Some(r) = self.async_copy_call(n, name, args)? {
            return Ok(Some(r));
        }
        if let Some(ty) = half_function(name) {
            let mut xs = Vec::new();
            for a in args {
                xs.push(self.expr(*a)?.0);
            }
            return Ok(Some((Expr::Opaque { args: xs, what: format!("{name}()") }, ty)));
        }
        // Vector constructors written as functional casts: `__half2(a, b)`, `float2(x, y)`.
        if let Some(ty @ Ty::Vector { .. }) = named_type(name) {
            let mut xs = Vec::new();
            for a in args {
                xs.push(self.expr(*a)?.0);
            }
            return Ok(Some((Expr::Opaque { args: xs, what: format!("{name}()") }, ty)));
        }
        Ok(None)
    }

    /// `atomicAdd(p, v)` and friends on global or shared memory: one access of the pointee's
    /// width. Whether its result is used (ATOM) or not (RED) is settled once the kernel is
    /// lowered ([`settle_atomics`]).
    fn atomic(&mut self, n: Node, base: &str, args: &[Node]) -> Result<(Expr, Ty)> {
        let want = if base == "atomicCAS" { 3 } else { 2 };
        if args.len() != want {
            return Err(self.unsupported(n, &format!("`{base}` with {} arguments", args.len())));
        }
        let (p, pt) = self.expr(args[0])?;
        let Ty::Ptr(pt) = pt else {
            return Err(self.unsupported(n, &format!("`{base}` on something that is not a pointer")));
        };
        if is_void(&pt.pointee) {
            return Err(self.unsupported(n, &format!("`{base}` through a void pointer")));
        }
        let mut xs = Vec::new();
        for a in &args[1..] {
            xs.push(self.expr(*a)?.0);
        }
        // A floating-point add on shared memory has no ATOMS form: nvcc reads the old value
        // (LDS) and retries a compare-and-swap (ATOMS.CAST.SPIN) until it sticks.
        let cas_loop =
            pt.space == Space::Shared && base == "atomicAdd" && matches!(&pt.pointee, Ty::Float(_) | Ty::Vector { .. });
        if cas_loop {
            let lds = self.builder.memory_operation(
                AccessKind::Load,
                Space::Shared,
                pt.pointee.size(),
                CacheOp::Default,
                true,
                self.text(n),
                self.span(n),
            );
            xs.push(Expr::Load { op: lds, addr: Box::new(p.clone()) });
            let note = "a floating-point atomicAdd on shared memory is a compare-and-swap loop (one LDS and one ATOMS per pass, measured on the H200): counted as one pass, exact when no two lanes of a warp add to the same address".to_string();
            if !self.builder.kernel.notes.contains(&note) {
                self.builder.kernel.notes.push(note);
            }
        }
        let op = self.builder.memory_operation(
            AccessKind::Atom,
            pt.space,
            pt.pointee.size(),
            CacheOp::Default,
            true,
            self.text(n),
            self.span(n),
        );
        self.builder.kernel.mem_ops[op.0 as usize].compare_and_swap = base == "atomicCAS";
        xs.push(Expr::Load { op, addr: Box::new(p) });
        // Integer adds are what nvcc may fold into one lane's atomic (see `mark_aggregated`).
        let what = if matches!(base, "atomicAdd" | "atomicSub") && pt.pointee.is_int() {
            AGGREGABLE_WHAT
        } else {
            ATOMIC_WHAT
        };
        Ok((Expr::Opaque { args: xs, what: what.into() }, pt.pointee.clone()))
    }

    /// Shuffles, votes, warp reductions and bit counts: [`Expr::Warp`].
    fn warp_call(&mut self, n: Node, name: &str, args: &[Node]) -> Result<Option<(Expr, Ty)>> {
        let span = self.span(n);
        let i32c = |v: i128| Expr::Int(v, IntTy::I32);
        let shfl = match name {
            "__shfl_sync" | "__shfl" => Some(WarpOp::Shfl),
            "__shfl_up_sync" | "__shfl_up" => Some(WarpOp::ShflUp),
            "__shfl_down_sync" | "__shfl_down" => Some(WarpOp::ShflDown),
            "__shfl_xor_sync" | "__shfl_xor" => Some(WarpOp::ShflXor),
            _ => None,
        };
        if let Some(op) = shfl {
            // The mask names the lanes taking part; the lanes that run the call are the model's.
            let skip = name.ends_with("_sync") as usize;
            if args.len() < skip + 2 || args.len() > skip + 3 {
                return Err(self.unsupported(n, &format!("`{name}` with {} arguments", args.len())));
            }
            let (v, vt) = self.expr(args[skip])?;
            let (b, bt) = self.expr(args[skip + 1])?;
            let b = self.convert(b, &bt, &Ty::Int(IntTy::I32), n)?;
            let w = match args.get(skip + 2) {
                Some(a) => {
                    let (w, wt) = self.expr(*a)?;
                    self.convert(w, &wt, &Ty::Int(IntTy::I32), n)?
                }
                None => i32c(32),
            };
            let ty = match vt {
                Ty::Int(t) => t,
                _ => IntTy::I32,
            };
            return Ok(Some((Expr::Warp { op, ty, args: vec![v, b, w], span }, vt)));
        }
        let vote = match name {
            "__ballot_sync" | "__ballot" => Some((WarpOp::Ballot, IntTy::U32)),
            "__any_sync" | "__any" => Some((WarpOp::Any, IntTy::I32)),
            "__all_sync" | "__all" => Some((WarpOp::All, IntTy::I32)),
            _ => None,
        };
        if let Some((op, ty)) = vote {
            let skip = name.ends_with("_sync") as usize;
            if args.len() != skip + 1 {
                return Err(self.unsupported(n, &format!("`{name}` with {} arguments", args.len())));
            }
            let (p, pt) = self.expr(args[skip])?;
            let p = self.truth(p, &pt);
            return Ok(Some((Expr::Warp { op, ty, args: vec![p], span }, Ty::Int(ty))));
        }
        if name == "__match_any_sync" && args.len() == 2 {
            let (v, vt) = self.expr(args[1])?;
            let ty = if let Ty::Int(t) = vt { t } else { IntTy::I64 };
            let _ = ty;
            return Ok(Some((
                Expr::Warp { op: WarpOp::MatchAny, ty: IntTy::U32, args: vec![v], span },
                Ty::Int(IntTy::U32),
            )));
        }
        if name == "__activemask" {
            return Ok(Some((
                Expr::Warp { op: WarpOp::ActiveMask, ty: IntTy::U32, args: Vec::new(), span },
                Ty::Int(IntTy::U32),
            )));
        }
        let reduce = match name {
            "__reduce_add_sync" => Some(ReduceOp::Add),
            "__reduce_min_sync" => Some(ReduceOp::Min),
            "__reduce_max_sync" => Some(ReduceOp::Max),
            "__reduce_and_sync" => Some(ReduceOp::And),
            "__reduce_or_sync" => Some(ReduceOp::Or),
            "__reduce_xor_sync" => Some(ReduceOp::Xor),
            _ => None,
        };
        if let Some(r) = reduce {
            if args.len() != 2 {
                return Err(self.unsupported(n, &format!("`{name}` with {} arguments", args.len())));
            }
            let (v, vt) = self.expr(args[1])?;
            let ty = match vt {
                Ty::Int(t) => promote(t),
                _ => IntTy::U32,
            };
            let v = self.convert(v, &vt, &Ty::Int(ty), n)?;
            return Ok(Some((Expr::Warp { op: WarpOp::Reduce(r), ty, args: vec![v, i32c(32)], span }, Ty::Int(ty))));
        }
        let bits = match name {
            "__popc" => Some((WarpOp::Popc(32), IntTy::U32, IntTy::I32)),
            "__popcll" => Some((WarpOp::Popc(64), IntTy::U64, IntTy::I32)),
            "__ffs" => Some((WarpOp::Ffs(32), IntTy::I32, IntTy::I32)),
            "__ffsll" => Some((WarpOp::Ffs(64), IntTy::I64, IntTy::I32)),
            "__clz" => Some((WarpOp::Clz(32), IntTy::I32, IntTy::I32)),
            "__clzll" => Some((WarpOp::Clz(64), IntTy::I64, IntTy::I32)),
            "__brev" => Some((WarpOp::Brev(32), IntTy::U32, IntTy::U32)),
            "__brevll" => Some((WarpOp::Brev(64), IntTy::U64, IntTy::U64)),
            _ => None,
        };
        if let Some((op, arg_ty, ty)) = bits {
            if args.len() != 1 {
                return Err(self.unsupported(n, &format!("`{name}` with {} arguments", args.len())));
            }
            let (x, xt) = self.expr(args[0])?;
            let x = self.convert(x, &xt, &Ty::Int(arg_ty), n)?;
            return Ok(Some((Expr::Warp { op, ty, args: vec![x], span }, Ty::Int(ty))));
        }
        Ok(None)
    }

    /// `__pipeline_memcpy_async(dst, src, bytes)` and `cuda::memcpy_async(dst, src, bytes, pipe)`
    /// of one thread: one LDGSTS of `bytes` from `src`; the pipeline's waits are barriers.
    fn async_copy_call(&mut self, n: Node, name: &str, args: &[Node]) -> Result<Option<(Expr, Ty)>> {
        let void = || (Expr::Int(0, IntTy::I32), Ty::Void);
        match name {
            "__pipeline_commit" | "__pipeline_arrive_on" => {
                for a in args {
                    let (x, _) = self.expr(*a)?;
                    self.builder.pending.push(Stmt::Eval(x));
                }
                return Ok(Some(void()));
            }
            "__pipeline_wait_prior" => {
                self.sync_point(n)?;
                return Ok(Some(void()));
            }
            _ => {}
        }
        let per_thread = match name {
            "__pipeline_memcpy_async" => (3..=4).contains(&args.len()),
            "cuda::memcpy_async" | "memcpy_async" | "cuda::std::memcpy_async" => {
                args.len() == 4 && !self.is_group_node(args[0])
            }
            _ => false,
        };
        if !per_thread {
            return Ok(None);
        }
        let (dst, dt) = self.copy_destination(args[0])?;
        let (src, st) = self.expr(args[1])?;
        let bytes = self.copy_size(args[2])?;
        for a in &args[3..] {
            if !self.is_group_node(*a) {
                let (x, _) = self.expr(*a)?;
                self.builder.pending.push(Stmt::Eval(x));
            }
        }
        self.async_copy(n, dst, &dt, src, &st, bytes)?;
        Ok(Some(void()))
    }

    /// One asynchronous copy of `bytes` from `src` (global) to `dst` (shared), issued by each
    /// thread that runs it.
    pub(super) fn async_copy(&mut self, n: Node, dst: Expr, dt: &Ty, src: Expr, st: &Ty, bytes: u32) -> Result<()> {
        if self.no_hoist > 0 {
            return Err(self.unsupported(n, "an asynchronous copy inside a condition"));
        }
        if !matches!(bytes, 4 | 8 | 16) {
            return Err(self.unsupported(
                n,
                &format!("an asynchronous copy of {bytes} bytes (LDGSTS copies 4, 8 or 16 bytes per thread)"),
            ));
        }
        let space = |t: &Ty| match t {
            Ty::Ptr(p) => Some(p.space),
            _ => None,
        };
        if space(st) == Some(Space::Shared) || space(dt) == Some(Space::Global) && self.dst_is_param(&dst) {
            return Err(self.unsupported(n, "an asynchronous copy that is not from global to shared memory"));
        }
        // The destination's address is computed (its loads count), the shared side is the
        // copy's own business.
        self.builder.pending.push(Stmt::Eval(dst));
        // 16-byte copies bypass L1 (`cp.async.cg`), smaller ones go through it (`.ca`).
        let cache = if bytes == 16 { CacheOp::Cg } else { CacheOp::Ca };
        let op = self.builder.memory_operation(
            AccessKind::AsyncCopy,
            Space::Global,
            bytes as u64,
            cache,
            true,
            self.text(n),
            self.span(n),
        );
        self.builder.pending.push(Stmt::Eval(Expr::Load { op, addr: Box::new(src) }));
        Ok(())
    }

    /// A copy's shared destination: only the loads inside it count, so a form the front end
    /// cannot use as a value (a row of a 2-D shared array, `buf[stage]`) is fine when it holds
    /// no access.
    pub(super) fn copy_destination(&mut self, a: Node) -> Result<(Expr, Ty)> {
        match self.expr(a) {
            Ok(v) => Ok(v),
            Err(e) => {
                let mut stack = vec![a];
                let mut depth = 0;
                while let Some(x) = stack.pop() {
                    if x.kind() == "subscript_expression" {
                        depth += 1;
                    }
                    if x.kind() == "call_expression"
                        || x.kind() == "pointer_expression" && self.text(x).starts_with('*')
                    {
                        return Err(e);
                    }
                    let mut c = x.walk();
                    stack.extend(x.named_children(&mut c));
                }
                if depth > 1 {
                    return Err(e);
                }
                Ok((Expr::Int(0, IntTy::I32), Ty::Void))
            }
        }
    }

    fn dst_is_param(&self, e: &Expr) -> bool {
        matches!(crate::ir::licm::root_base(e), Some(Base::Param(_)))
    }

    /// A copy's size: a constant (`16`, `sizeof(float4)`, `cuda::aligned_size_t<16>(16)`).
    pub(super) fn copy_size(&mut self, a: Node) -> Result<u32> {
        let mut node = a;
        // `cuda::aligned_size_t<16>(bytes)`: the size is the argument.
        if node.kind() == "call_expression" {
            if let Some(args) = node.child_by_field_name("arguments") {
                let mut c = args.walk();
                let first = args.named_children(&mut c).next();
                if let Some(f) = first {
                    node = f;
                }
            }
        }
        let (e, _) = self.expr(node)?;
        match fold_constant(&e) {
            Some(v) if v > 0 && v <= 1 << 20 => Ok(v as u32),
            _ => Err(self.unsupported(a, "an asynchronous copy whose size is not a constant")),
        }
    }

    /// The ordering points of asynchronous copies and barriers (waits): memory the copies wrote
    /// is read after them, so no loaded value is kept across.
    pub(super) fn sync_point(&mut self, _n: Node) -> Result<()> {
        self.builder.pending.push(Stmt::Barrier { block: false });
        Ok(())
    }
}

/// Half-precision and bfloat16 conversions and arithmetic: values not tracked, arguments
/// evaluated; the result's type as CUDA declares it.
fn half_function(name: &str) -> Option<Ty> {
    let vec = |n: &str| Some(Ty::Vector { name: n.into(), bytes: if n.contains('4') { 16 } else { 8 } });
    let half2 = || Some(Ty::Vector { name: "__half2".into(), bytes: 4 });
    let bf162 = || Some(Ty::Vector { name: "__nv_bfloat162".into(), bytes: 4 });
    match name {
        "__half22float2" | "__bfloat1622float2" => vec("float2"),
        "__half2float" | "__low2float" | "__high2float" | "__bfloat162float" | "__half2float_rn" => Some(Ty::Float(4)),
        "__half2int_rn"
        | "__half2int_rz"
        | "__half2int_rd"
        | "__half2int_ru"
        | "__hisnan"
        | "__hisinf"
        | "__heq"
        | "__hne"
        | "__hlt"
        | "__hle"
        | "__hgt"
        | "__hge"
        | "__hbeq2"
        | "__hbne2"
        | "__hblt2"
        | "__hble2"
        | "__hbgt2"
        | "__hbge2"
        | "__half_as_short"
        | "__bfloat16_as_short" => Some(Ty::Int(IntTy::I32)),
        "__half_as_ushort" | "__bfloat16_as_ushort" | "__half2ushort_rn" | "__half2uint_rn" => {
            Some(Ty::Int(IntTy::U32))
        }
        _ if name.contains("bfloat162") || name.ends_with("bf162") => bf162(),
        _ if name.contains("bfloat16") => Some(Ty::Float(2)),
        "__float2half2_rn" | "__floats2half2_rn" | "__halves2half2" | "__float22half2_rn" | "__half2half2"
        | "__lowhigh2highlow" | "__low2half2" | "__high2half2" | "__lows2half2" | "__highs2half2" | "h2sqrt"
        | "h2rsqrt" | "h2exp" | "h2log" | "h2sin" | "h2cos" | "h2rcp" | "h2floor" | "h2ceil" | "h2trunc" => half2(),
        _ if name.starts_with("__h") && (name.ends_with('2') || name.contains("2_")) => half2(),
        "__float2half" | "__float2half_rn" | "__float2half_rz" | "__int2half_rn" | "__uint2half_rn"
        | "__ushort_as_half" | "__short_as_half" | "__low2half" | "__high2half" | "hsqrt" | "hrsqrt" | "hexp"
        | "hlog" | "hsin" | "hcos" | "hrcp" | "hfloor" | "hceil" | "htrunc" | "__double2half" | "hlog2" | "hlog10"
        | "hexp2" | "hexp10" | "hrint" | "__habs" | "__hneg" => Some(Ty::Float(2)),
        "h2log2" | "h2log10" | "h2exp2" | "h2exp10" | "h2rint" => half2(),
        _ if name.starts_with("__h") && name.len() <= 12 => Some(Ty::Float(2)),
        _ => None,
    }
}

/// Atomics whose old value nobody reads are reductions (RED): a call evaluated for its effect,
/// or assigned to a variable that is never read. nvcc emits RED for them (measured on the H200).
/// Shared-memory atomics stay ATOM (ATOMS has no reduction form).
pub(super) fn settle_atomics(k: &mut Kernel) {
    let mut read = vec![false; k.locals.len()];
    let mut mark_reads = |e: &Expr| {
        crate::ir::licm::walk(e, &mut |x| {
            if let Expr::Local(l) = x {
                read[l.0 as usize] = true;
            }
        })
    };
    visit(&k.body, &mut |s| match s {
        Stmt::Assign { value, .. } => mark_reads(value),
        Stmt::Store { addr, value, .. } => {
            mark_reads(addr);
            mark_reads(value);
        }
        Stmt::Eval(e) => mark_reads(e),
        Stmt::If { cond, .. } => mark_reads(cond),
        Stmt::Loop { cond: Some(c), .. } => mark_reads(c),
        _ => {}
    });
    let mut unused = Vec::new();
    visit(&k.body, &mut |s| {
        let e = match s {
            Stmt::Eval(e) => e,
            Stmt::Assign { local, value, .. } if !read[local.0 as usize] => value,
            _ => return,
        };
        if let Some(op) = discarded_atomic(e) {
            unused.push(op);
        }
    });
    mark_aggregated(k);
    for op in unused {
        let m = &mut k.mem_ops[op.0 as usize];
        // RED has add, min, max, inc, dec and the bitwise operations; an exchange or a
        // compare-and-swap stays ATOM with its result discarded.
        let no_red = m.text.starts_with("atomicExch") || m.text.starts_with("atomicCAS");
        if m.space == Space::Global && !no_red {
            m.kind = AccessKind::Red;
        }
    }
}

/// The atomic whose value `e` is, through conversions.
fn discarded_atomic(e: &Expr) -> Option<MemOpId> {
    match e {
        Expr::ToInt { arg, .. } | Expr::ToFloat(arg) => discarded_atomic(arg),
        Expr::Opaque { args, what } if is_atomic_what(what) => match args.last() {
            Some(Expr::Load { op, .. }) => Some(*op),
            _ => None,
        },
        _ => None,
    }
}

fn visit(stmts: &[Stmt], f: &mut impl FnMut(&Stmt)) {
    for s in stmts {
        f(s);
        match s {
            Stmt::If { then, els, .. } => {
                visit(then, f);
                visit(els, f);
            }
            Stmt::Loop { body, step, .. } => {
                visit(body, f);
                visit(step, f);
            }
            _ => {}
        }
    }
}

/// nvcc performs an integer atomic add once per warp when its address and its value are the
/// same in every lane as far as its divergence analysis sees (a parameter, `blockIdx`,
/// constants, and locals computed from them outside lane-dependent branches): measured on the
/// H200, `atomicAdd(counter, 1)` by every lane is one RED of one sector per warp (VOTEU + one
/// REDG), while 32 lanes on one address computed from loaded data cost 32 sectors. Other
/// atomics on one address are counted lane after lane.
fn mark_aggregated(k: &mut Kernel) {
    let mut varying = vec![false; k.locals.len()];
    // Fixpoint: a local is varying once any assignment to it is, or happens under a varying
    // branch or loop.
    loop {
        let before = varying.clone();
        assign_varying(&k.body, false, &mut varying);
        if varying == before {
            break;
        }
    }
    let mut ops = Vec::new();
    visit(&k.body, &mut |s| {
        let mut see = |e: &Expr| {
            crate::ir::licm::walk(e, &mut |x| {
                // An integer add of a value and at an address the same in every lane.
                if let Expr::Opaque { args, what } = x {
                    if what == AGGREGABLE_WHAT {
                        if let Some((Expr::Load { op, addr }, values)) = args.split_last() {
                            if !is_varying(addr, &varying) && values.iter().all(|v| !is_varying(v, &varying)) {
                                ops.push(*op);
                            }
                        }
                    }
                }
            })
        };
        match s {
            Stmt::Assign { value, .. } => see(value),
            Stmt::Store { addr, value, .. } => {
                see(addr);
                see(value);
            }
            Stmt::Eval(e) => see(e),
            Stmt::If { cond, .. } => see(cond),
            Stmt::Loop { cond: Some(c), .. } => see(c),
            _ => {}
        }
    });
    for op in ops {
        let m = &mut k.mem_ops[op.0 as usize];
        if m.kind.is_atomic() && m.space == Space::Global {
            m.warp_aggregated = true;
        }
    }
}

fn assign_varying(stmts: &[Stmt], under: bool, varying: &mut Vec<bool>) {
    for s in stmts {
        match s {
            Stmt::Assign { local, value, .. } if under || is_varying(value, varying) => {
                varying[local.0 as usize] = true;
            }
            Stmt::If { cond, then, els, .. } => {
                let u = under || is_varying(cond, varying);
                assign_varying(then, u, varying);
                assign_varying(els, u, varying);
            }
            Stmt::Loop { cond, body, step, .. } => {
                // A loop left by a lane-dependent test runs different iterations per lane.
                let mut u = under || cond.as_ref().is_some_and(|c| is_varying(c, varying));
                visit(body, &mut |x| {
                    if let Stmt::If { cond, .. } = x {
                        u |= is_varying(cond, varying);
                    }
                });
                assign_varying(body, u, varying);
                assign_varying(step, u, varying);
            }
            _ => {}
        }
    }
}

/// Whether `e` may differ between the lanes of a warp, as a compiler's divergence analysis sees.
fn is_varying(e: &Expr, varying: &[bool]) -> bool {
    match e {
        Expr::Builtin(Builtin::ThreadIdx(_)) => true,
        Expr::Local(l) => varying[l.0 as usize],
        Expr::Warp { op, args, .. } => match op {
            WarpOp::Ballot | WarpOp::Any | WarpOp::All | WarpOp::ActiveMask | WarpOp::Reduce(_) => false,
            _ => {
                let _ = args;
                true
            }
        },
        Expr::Load { op: _, addr } => is_varying(addr, varying),
        Expr::Opaque { args, what } => is_atomic_what(what) || args.iter().any(|a| is_varying(a, varying)),
        Expr::Binary { lhs, rhs, .. }
        | Expr::FloatBinary { lhs, rhs, .. }
        | Expr::Logical { lhs, rhs, .. }
        | Expr::PtrDiff { lhs, rhs } => is_varying(lhs, varying) || is_varying(rhs, varying),
        Expr::Unary { arg, .. }
        | Expr::ToInt { arg, .. }
        | Expr::ToFloat(arg)
        | Expr::SharedAddress { addr: arg, .. } => is_varying(arg, varying),
        Expr::Select { cond, then, els } => {
            is_varying(cond, varying) || is_varying(then, varying) || is_varying(els, varying)
        }
        Expr::PtrOffset { ptr, bytes } => is_varying(ptr, varying) || is_varying(bytes, varying),
        Expr::Int(..) | Expr::Float(_) | Expr::Param(_) | Expr::Builtin(_) | Expr::SharedBase(_) => false,
    }
}

impl<'u, 'a> Lowerer<'u, 'a> {
    /// `__umul24`, `__mul24`, `__umulhi`, `__mulhi`: integer arithmetic the compiler inlines,
    /// often in an index (`__umul24(blockIdx.x, blockDim.x) + threadIdx.x`), so computed as the
    /// hardware does rather than left unknown: the 24-bit forms multiply the low 24 bits (sign-
    /// extended for `__mul24`) and keep the low 32 bits; the `hi` forms keep the high 32 bits
    /// of the 64-bit product.
    fn mul_intrinsic(&mut self, n: Node, name: &str, args: &[Node]) -> Result<Option<(Expr, Ty)>> {
        let (signed, high) = match name {
            "__umul24" => (false, false),
            "__mul24" => (true, false),
            "__umulhi" => (false, true),
            "__mulhi" => (true, true),
            _ => return Ok(None),
        };
        if args.len() != 2 {
            return Err(self.unsupported(n, &format!("`{name}` with {} arguments", args.len())));
        }
        let span = self.span(n);
        let t32 = if signed { IntTy::I32 } else { IntTy::U32 };
        let bin = |op, ty, lhs, rhs| Expr::Binary { op, ty, lhs: Box::new(lhs), rhs: Box::new(rhs), span };
        let mut xs = Vec::new();
        for a in args {
            let (e, t) = self.expr(*a)?;
            xs.push(self.convert(e, &t, &Ty::Int(t32), n)?);
        }
        let (b, a) = (xs.pop().unwrap(), xs.pop().unwrap());
        if high {
            let t64 = if signed { IntTy::I64 } else { IntTy::U64 };
            let wide = |e| Expr::ToInt { ty: t64, arg: Box::new(e) };
            let p = bin(BinOp::Mul, t64, wide(a), wide(b));
            let hi = bin(BinOp::Shr, t64, p, Expr::Int(32, t64));
            return Ok(Some((Expr::ToInt { ty: t32, arg: Box::new(hi) }, Ty::Int(t32))));
        }
        // The low 24 bits, sign-extended for `__mul24`: (x << 8) >> 8.
        let low24 = |e| bin(BinOp::Shr, t32, bin(BinOp::Shl, t32, e, Expr::Int(8, t32)), Expr::Int(8, t32));
        Ok(Some((bin(BinOp::Mul, t32, low24(a), low24(b)), Ty::Int(t32))))
    }

    /// Math functions that return results through pointers to the caller's locals
    /// (`sincosf(x, &s, &c)`, `frexpf(x, &e)`, `modff(x, &ip)`): registers, not memory. Each
    /// named local gets a value nobody tracks, as any math result.
    pub(super) fn out_param_math(&mut self, n: Node, name: &str, args: &[Node]) -> Result<Option<(Expr, Ty)>> {
        let (outs, ret): (&[usize], Ty) = match name {
            "sincosf" | "sincospif" | "__sincosf" => (&[1, 2], Ty::Void),
            "sincos" | "sincospi" => (&[1, 2], Ty::Void),
            "frexpf" | "modff" => (&[1], Ty::Float(4)),
            "frexp" | "modf" => (&[1], Ty::Float(8)),
            "remquof" => (&[2], Ty::Float(4)),
            "remquo" => (&[2], Ty::Float(8)),
            _ => return Ok(None),
        };
        let mut ins = Vec::new();
        let mut targets = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let local = (a.kind() == "pointer_expression")
                .then(|| a.child_by_field_name("argument"))
                .flatten()
                .filter(|x| x.kind() == "identifier")
                .and_then(|x| match self.lookup(self.text(x)) {
                    Some(Sym::Local(id, ty)) => Some((*id, ty.clone())),
                    _ => None,
                })
                // A helper's pointer parameter bound to the caller's `&x`.
                .or_else(|| match self.pointed_own_object(*a) {
                    Some(Sym::Local(id, ty)) => Some((id, ty)),
                    _ => None,
                });
            match (outs.contains(&i), local) {
                (true, Some(t)) => targets.push(t),
                // A pointer into memory: the function stores through it; not modelled.
                (true, None) => {
                    return Err(
                        self.unsupported(*a, &format!("`{name}` storing its result through a pointer into memory"))
                    )
                }
                (false, _) => ins.push(self.expr(*a)?.0),
            }
        }
        let span = self.span(n);
        for (id, ty) in targets {
            let v = Expr::Opaque { args: ins.clone(), what: format!("{name}()") };
            let v = match ty {
                Ty::Int(t) => Expr::ToInt { ty: t, arg: Box::new(v) },
                _ => v,
            };
            self.builder.pending.push(Stmt::Assign { local: id, value: v, span });
        }
        Ok(Some((Expr::Opaque { args: ins, what: format!("{name}()") }, ret)))
    }
}
