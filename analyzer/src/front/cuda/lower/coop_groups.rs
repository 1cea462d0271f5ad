//! Cooperative groups (`cooperative_groups::this_thread_block()`, `tiled_partition<N>`, ...)
//! and the synchronisation objects of asynchronous copies (`cuda::pipeline`, `cuda::barrier`).
//!
//! A group is known while lowering: its ranks and sizes become expressions over the builtins,
//! its `sync()` a barrier, its shuffles and votes [`Expr::Warp`] over its lanes. Groups and
//! synchronisation objects move no memory of their own.

use super::*;

/// A group the kernel names, as far as counting needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Group {
    Block,
    /// `thread_block_tile<N>` / `tiled_partition(block, N)`: consecutive ranks of the block.
    Tile(u32),
    /// `coalesced_threads()`: the lanes of the warp running the call.
    Coalesced,
    Grid,
    /// `this_thread()`.
    Thread,
    /// `labeled_partition` / `binary_partition` of a warp-sized group: the lanes whose mask of
    /// equal labels is held in this local.
    Partition(LocalId),
    /// `cuda::pipeline`, an arrival token: waits are barriers.
    Sync,
    /// `cuda::barrier`: waits are barriers; a group's 16-byte aligned copy completing on one is
    /// a bulk (TMA) copy on sm_90.
    Barrier,
}

/// The last component of a qualified name, without template arguments: `cg::thread_block_tile<32>`
/// -> (`thread_block_tile`, Some(`32`)).
fn simple_name(text: &str) -> (&str, Option<&str>) {
    let t = text.trim();
    let (head, targs) = match t.find('<') {
        Some(i) if t.ends_with('>') => (&t[..i], Some(t[i + 1..t.len() - 1].trim())),
        _ => (t, None),
    };
    let name = head.rsplit("::").next().unwrap_or(head).trim();
    (name, targs)
}

/// Whether a declared type is a group or synchronisation object, and which when it says.
fn group_type(text: &str) -> Option<Option<Group>> {
    let t = text.trim().trim_start_matches("const ").trim_end_matches('&').trim();
    let (name, targs) = simple_name(t);
    Some(match name {
        "thread_block" => Some(Group::Block),
        "grid_group" => Some(Group::Grid),
        "coalesced_group" => Some(Group::Coalesced),
        "thread_block_tile" => {
            let n = targs.and_then(|a| a.split(',').next()).and_then(|a| a.trim().parse::<u32>().ok());
            n.map(Group::Tile)
        }
        "thread_group" => None,
        "barrier" => Some(Group::Barrier),
        "pipeline" | "pipeline_shared_state" | "arrival_token" => Some(Group::Sync),
        _ => return None,
    })
}

/// The value of an enumerator of the toolkit's synchronisation headers, which move no memory:
/// `cuda::pipeline_role` is `enum class pipeline_role { producer, consumer }` in libcu++.
pub(super) fn toolkit_enumerator(full: &str) -> Option<i128> {
    let mut parts = full.rsplit("::");
    let (name, scope) = (parts.next()?, parts.next()?);
    match (scope, name) {
        ("pipeline_role", "producer") => Some(0),
        ("pipeline_role", "consumer") => Some(1),
        _ => None,
    }
}

impl<'u, 'a> Lowerer<'u, 'a> {
    /// `cg::thread_block b = cg::this_thread_block();` and the like: binds names, emits nothing.
    /// `Ok(false)` when the declaration is not of a group.
    pub(super) fn group_declaration(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<bool> {
        let Some(t) = n.child_by_field_name("type") else { return Ok(false) };
        let ttext = self.text(t);
        let declared = group_type(ttext);
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        if declared.is_none() && self.aligned_size_declaration(n, &decls)? {
            return Ok(true);
        }
        if let Some(done) = self.partition_declaration(&decls, out)? {
            return Ok(done);
        }
        if declared.is_none() {
            // `auto g = cg::this_thread_block();`
            let auto_group = ttext == "auto"
                && decls.iter().all(|d| d.child_by_field_name("value").is_some_and(|v| self.group_of(v).is_some()));
            if !auto_group || decls.is_empty() {
                return Ok(false);
            }
        }
        for d in decls {
            let (target, init) = match d.kind() {
                "init_declarator" => (d.child_by_field_name("declarator").unwrap_or(d), d.child_by_field_name("value")),
                _ => (d, None),
            };
            let name = self.text(target).trim_start_matches(['&', '*', ' ']).to_string();
            // `T x(args)` and `T x = v` / `T x{v}`.
            let init = init.map(|i| match i.kind() {
                "argument_list" | "initializer_list" => {
                    let mut c = i.walk();
                    let first = i.named_children(&mut c).next();
                    first.unwrap_or(i)
                }
                _ => i,
            });
            let from_init = init.and_then(|i| self.group_of(i));
            let g = match (declared.flatten(), from_init) {
                (Some(g @ (Group::Sync | Group::Barrier)), _) => g,
                (_, Some(g)) => g,
                (Some(g), None) => g,
                (None, None) => {
                    return Err(self.unsupported(d, "a cooperative group whose kind is not known here"));
                }
            };
            self.scopes.last_mut().unwrap().insert(name, Sym::Group(g));
        }
        Ok(true)
    }

    /// The group an expression denotes, if it is one.
    pub(super) fn group_of(&self, n: Node) -> Option<Group> {
        match n.kind() {
            "identifier" => match self.lookup(self.text(n)) {
                Some(Sym::Group(g)) => Some(*g),
                _ => None,
            },
            "parenthesized_expression" => {
                let mut c = n.walk();
                let inner = n.named_children(&mut c).next()?;
                self.group_of(inner)
            }
            "call_expression" => {
                let f = n.child_by_field_name("function")?;
                let (name, targs) = simple_name(self.text(f));
                let args = n.child_by_field_name("arguments")?;
                let mut c = args.walk();
                let items: Vec<Node> = args.named_children(&mut c).collect();
                match name {
                    "this_thread_block" => Some(Group::Block),
                    "this_grid" => Some(Group::Grid),
                    "coalesced_threads" => Some(Group::Coalesced),
                    "this_thread" => Some(Group::Thread),
                    "tiled_partition" => {
                        let size = match targs {
                            Some(t) => self.const_text(t),
                            None => items.get(1).and_then(|a| self.const_text(self.text(*a))),
                        }?;
                        Some(Group::Tile(size))
                    }
                    "make_pipeline" | "arrive" => Some(Group::Sync),
                    _ => {
                        // A method of a synchronisation object (`bar.arrive()`).
                        if f.kind() == "field_expression" {
                            let obj = f.child_by_field_name("argument")?;
                            if matches!(self.group_of(obj), Some(Group::Sync | Group::Barrier)) {
                                return Some(Group::Sync);
                            }
                        }
                        None
                    }
                }
            }
            _ => None,
        }
    }

    pub(super) fn is_group_node(&self, n: Node) -> bool {
        self.group_of(n).is_some()
    }

    /// A compile-time integer written as text: a literal, a `const` local or a template argument.
    fn const_text(&self, t: &str) -> Option<u32> {
        let t = t.trim();
        if let Ok(v) = t.trim_end_matches(['u', 'U']).parse::<u32>() {
            return Some(v);
        }
        match self.lookup(t) {
            Some(Sym::Const(v, _)) => u32::try_from(*v).ok(),
            _ => match self.tmpl.get(t) {
                Some(TemplateArg::Int(v)) => u32::try_from(*v).ok(),
                _ => None,
            },
        }
    }

    /// The declared parameter `p` of an inlined function, when it is a group: bound to the group
    /// the call passes.
    pub(super) fn group_param(&self, p: Node, arg: Option<Node>) -> Result<Option<(String, Group)>> {
        let Some(t) = p.child_by_field_name("type") else { return Ok(None) };
        // A template's type parameter (`template <typename group_t> f(group_t g)`) given a
        // group takes that group.
        let declared = group_type(self.text(t));
        if declared.is_none() && (t.kind() != "type_identifier" || arg.and_then(|a| self.group_of(a)).is_none()) {
            return Ok(None);
        }
        let name =
            p.child_by_field_name("declarator").map(|d| self.text(d).trim_start_matches(['&', '*', ' ']).to_string());
        let g = arg.and_then(|a| self.group_of(a)).or(declared.flatten());
        match (name, g) {
            (Some(name), Some(g)) => Ok(Some((name, g))),
            (None, _) => Ok(None),
            (Some(_), None) => Err(self.unsupported(p, "a cooperative group parameter whose kind is not known")),
        }
    }

    /// `threadIdx` linearised, x fastest: the block's `thread_rank()`.
    pub(super) fn linear_tid(&self, span: Span) -> Expr {
        let u = IntTy::U32;
        let b = |x| Expr::Builtin(x);
        let bin = |op, l, r| Expr::Binary { op, ty: u, lhs: Box::new(l), rhs: Box::new(r), span };
        let yz = bin(
            BinOp::Add,
            b(Builtin::ThreadIdx(1)),
            bin(BinOp::Mul, b(Builtin::BlockDim(1)), b(Builtin::ThreadIdx(2))),
        );
        bin(BinOp::Add, b(Builtin::ThreadIdx(0)), bin(BinOp::Mul, b(Builtin::BlockDim(0)), yz))
    }

    fn block_threads(&self, span: Span) -> Expr {
        let u = IntTy::U32;
        let bin = |l, r| Expr::Binary { op: BinOp::Mul, ty: u, lhs: Box::new(l), rhs: Box::new(r), span };
        bin(
            Expr::Builtin(Builtin::BlockDim(0)),
            bin(Expr::Builtin(Builtin::BlockDim(1)), Expr::Builtin(Builtin::BlockDim(2))),
        )
    }

    /// A call that involves a group: a method (`g.sync()`, `tile.shfl_down(v, 1)`) or a free
    /// function of the cooperative-groups and `cuda::` namespaces. `None`: not one.
    pub(super) fn group_call(&mut self, n: Node, f: Node, args: &[Node]) -> Result<Option<(Expr, Ty)>> {
        let span = self.span(n);
        let void = || (Expr::Int(0, IntTy::I32), Ty::Void);
        let u32t = Ty::Int(IntTy::U32);
        let bin = |op, ty: IntTy, l: Expr, r: Expr| Expr::Binary { op, ty, lhs: Box::new(l), rhs: Box::new(r), span };
        let k = |v: i128| Expr::Int(v, IntTy::U32);
        if f.kind() == "field_expression" {
            let Some(obj) = f.child_by_field_name("argument") else { return Ok(None) };
            let Some(g) = self.group_of(obj) else { return Ok(None) };
            let method = f.child_by_field_name("field").map(|x| self.text(x)).unwrap_or("");
            let (method, _) = simple_name(method);
            let lane_expr = bin(BinOp::And, IntTy::U32, self.linear_tid(span), k(31));
            let lane = || lane_expr.clone();
            return Ok(Some(match (g, method) {
                (Group::Sync | Group::Barrier, _) => {
                    // Waits order the copies before later reads; arrivals and commits move nothing.
                    if method.contains("wait") || method == "consumer_release" || method == "producer_acquire" {
                        self.sync_point(n)?;
                    }
                    void()
                }
                (Group::Grid, "sync") => {
                    let note = "grid.sync() counted as a barrier: the counts are those of every block running to it; the cache model's block order ignores it".to_string();
                    if !self.builder.kernel.notes.contains(&note) {
                        self.builder.kernel.notes.push(note);
                    }
                    self.builder.pending.push(Stmt::Barrier { block: true });
                    void()
                }
                (_, "sync" | "barrier_wait") => {
                    self.builder.pending.push(Stmt::Barrier { block: g == Group::Block });
                    void()
                }
                (_, "barrier_arrive") => void(),
                (Group::Block, "thread_rank") => (self.linear_tid(span), u32t),
                (Group::Block, "size" | "num_threads") => (self.block_threads(span), u32t),
                (Group::Block, "group_index" | "thread_index" | "group_dim" | "dim_threads") => {
                    return Err(self.unsupported(n, "this member of a thread block used as a whole (use .x, .y or .z)"));
                }
                (Group::Tile(t), "thread_rank") => {
                    (bin(BinOp::Rem, IntTy::U32, self.linear_tid(span), k(t as i128)), u32t)
                }
                (Group::Tile(t), "size" | "num_threads") => (k(t as i128), u32t),
                (Group::Tile(t), "meta_group_rank") => {
                    (bin(BinOp::Div, IntTy::U32, self.linear_tid(span), k(t as i128)), u32t)
                }
                (Group::Tile(t), "meta_group_size") => {
                    let all = bin(BinOp::Add, IntTy::U32, self.block_threads(span), k(t as i128 - 1));
                    (bin(BinOp::Div, IntTy::U32, all, k(t as i128)), u32t)
                }
                (Group::Tile(t), m @ ("shfl" | "shfl_up" | "shfl_down" | "shfl_xor")) if t <= 32 => {
                    let op = match m {
                        "shfl" => WarpOp::Shfl,
                        "shfl_up" => WarpOp::ShflUp,
                        "shfl_down" => WarpOp::ShflDown,
                        _ => WarpOp::ShflXor,
                    };
                    if args.len() != 2 {
                        return Err(self.unsupported(n, &format!("`{m}` with {} arguments", args.len())));
                    }
                    let (v, vt) = self.expr(args[0])?;
                    let (b, bt) = self.expr(args[1])?;
                    let b = self.convert(b, &bt, &Ty::Int(IntTy::I32), n)?;
                    let ty = if let Ty::Int(t) = vt { t } else { IntTy::I32 };
                    (Expr::Warp { op, ty, args: vec![v, b, Expr::Int(t as i128, IntTy::I32)], span }, vt)
                }
                (Group::Tile(t), m @ ("any" | "all" | "ballot")) if t <= 32 => {
                    let (p, pt) = self.expr(args.first().copied().ok_or_else(|| self.unsupported(n, "this vote"))?)?;
                    let p = self.truth(p, &pt);
                    match m {
                        "any" | "all" if t == 32 => {
                            let op = if m == "any" { WarpOp::Any } else { WarpOp::All };
                            (Expr::Warp { op, ty: IntTy::I32, args: vec![p], span }, Ty::Int(IntTy::BOOL))
                        }
                        _ => {
                            // The tile's own bits of the warp's ballot.
                            let ballot = Expr::Warp { op: WarpOp::Ballot, ty: IntTy::U32, args: vec![p], span };
                            let first = bin(BinOp::And, IntTy::U32, lane(), k(!(t as i128 - 1) & 31));
                            let mask = if t == 32 { k(u32::MAX as i128) } else { k((1i128 << t) - 1) };
                            let bits =
                                bin(BinOp::And, IntTy::U32, bin(BinOp::Shr, IntTy::U32, ballot, first), mask.clone());
                            match m {
                                "ballot" => (bits, u32t),
                                "any" => (bin(BinOp::Ne, IntTy::U32, bits, k(0)), Ty::Int(IntTy::BOOL)),
                                _ => {
                                    // Every active lane of the tile: its active mask's bits.
                                    let act =
                                        Expr::Warp { op: WarpOp::ActiveMask, ty: IntTy::U32, args: Vec::new(), span };
                                    let first = bin(BinOp::And, IntTy::U32, lane(), k(!(t as i128 - 1) & 31));
                                    let abits =
                                        bin(BinOp::And, IntTy::U32, bin(BinOp::Shr, IntTy::U32, act, first), mask);
                                    (bin(BinOp::Eq, IntTy::U32, bits, abits), Ty::Int(IntTy::BOOL))
                                }
                            }
                        }
                    }
                }
                (Group::Partition(mask), "thread_rank") => {
                    let below = bin(BinOp::Sub, IntTy::U32, bin(BinOp::Shl, IntTy::U32, k(1), lane()), k(1));
                    let x = bin(BinOp::And, IntTy::U32, Expr::Local(mask), below);
                    (Expr::Warp { op: WarpOp::Popc(32), ty: IntTy::U32, args: vec![x], span }, u32t)
                }
                (Group::Partition(mask), "size" | "num_threads") => {
                    (Expr::Warp { op: WarpOp::Popc(32), ty: IntTy::U32, args: vec![Expr::Local(mask)], span }, u32t)
                }
                (Group::Coalesced | Group::Partition(_), "shfl")
                    if args.len() == 2 && self.const_text(self.text(args[1])) == Some(0) =>
                {
                    // Rank 0 is the group's lowest lane.
                    let members = match g {
                        Group::Partition(mask) => Expr::Local(mask),
                        _ => Expr::Warp { op: WarpOp::ActiveMask, ty: IntTy::U32, args: Vec::new(), span },
                    };
                    let first = Expr::Warp { op: WarpOp::Ffs(32), ty: IntTy::I32, args: vec![members], span };
                    let src = bin(BinOp::Sub, IntTy::I32, first, Expr::Int(1, IntTy::I32));
                    let (v, vt) = self.expr(args[0])?;
                    let ty = if let Ty::Int(t) = vt { t } else { IntTy::I32 };
                    (Expr::Warp { op: WarpOp::Shfl, ty, args: vec![v, src, Expr::Int(32, IntTy::I32)], span }, vt)
                }
                (Group::Coalesced, m @ ("any" | "all" | "ballot")) if args.len() == 1 => {
                    // The group is the warp's active lanes: `all` over them is `__all_sync`'s.
                    let (p, pt) = self.expr(args[0])?;
                    let p = self.truth(p, &pt);
                    match m {
                        "any" => {
                            (Expr::Warp { op: WarpOp::Any, ty: IntTy::I32, args: vec![p], span }, Ty::Int(IntTy::BOOL))
                        }
                        "all" => {
                            (Expr::Warp { op: WarpOp::All, ty: IntTy::I32, args: vec![p], span }, Ty::Int(IntTy::BOOL))
                        }
                        _ => (Expr::Warp { op: WarpOp::BallotRanks, ty: IntTy::U32, args: vec![p], span }, u32t),
                    }
                }
                (Group::Coalesced, "thread_rank") => {
                    let below = bin(BinOp::Sub, IntTy::U32, bin(BinOp::Shl, IntTy::U32, k(1), lane()), k(1));
                    let act = Expr::Warp { op: WarpOp::ActiveMask, ty: IntTy::U32, args: Vec::new(), span };
                    let x = bin(BinOp::And, IntTy::U32, act, below);
                    (Expr::Warp { op: WarpOp::Popc(32), ty: IntTy::U32, args: vec![x], span }, u32t)
                }
                (Group::Coalesced, "size" | "num_threads") => {
                    let act = Expr::Warp { op: WarpOp::ActiveMask, ty: IntTy::U32, args: Vec::new(), span };
                    (Expr::Warp { op: WarpOp::Popc(32), ty: IntTy::U32, args: vec![act], span }, u32t)
                }
                (Group::Grid, "thread_rank") => {
                    let u = IntTy::U64;
                    let to64 = |e| Expr::ToInt { ty: u, arg: Box::new(e) };
                    let blk = bin(
                        BinOp::Add,
                        u,
                        to64(Expr::Builtin(Builtin::BlockIdx(0))),
                        bin(
                            BinOp::Mul,
                            u,
                            to64(Expr::Builtin(Builtin::GridDim(0))),
                            bin(
                                BinOp::Add,
                                u,
                                to64(Expr::Builtin(Builtin::BlockIdx(1))),
                                bin(
                                    BinOp::Mul,
                                    u,
                                    to64(Expr::Builtin(Builtin::GridDim(1))),
                                    to64(Expr::Builtin(Builtin::BlockIdx(2))),
                                ),
                            ),
                        ),
                    );
                    let r = bin(
                        BinOp::Add,
                        u,
                        bin(BinOp::Mul, u, blk, to64(self.block_threads(span))),
                        to64(self.linear_tid(span)),
                    );
                    (r, Ty::Int(u))
                }
                (Group::Grid, "size" | "num_threads") => {
                    let u = IntTy::U64;
                    let to64 = |e| Expr::ToInt { ty: u, arg: Box::new(e) };
                    let g = |d| to64(Expr::Builtin(Builtin::GridDim(d)));
                    let blocks = bin(BinOp::Mul, u, g(0), bin(BinOp::Mul, u, g(1), g(2)));
                    (bin(BinOp::Mul, u, blocks, to64(self.block_threads(span))), Ty::Int(u))
                }
                (Group::Grid, "block_rank") => {
                    let u = IntTy::U32;
                    let b = |d| Expr::Builtin(Builtin::BlockIdx(d));
                    let g = |d| Expr::Builtin(Builtin::GridDim(d));
                    let r = bin(
                        BinOp::Add,
                        u,
                        b(0),
                        bin(BinOp::Mul, u, g(0), bin(BinOp::Add, u, b(1), bin(BinOp::Mul, u, g(1), b(2)))),
                    );
                    (r, u32t)
                }
                (Group::Grid, "num_blocks") => {
                    let g = |d| Expr::Builtin(Builtin::GridDim(d));
                    (bin(BinOp::Mul, IntTy::U32, g(0), bin(BinOp::Mul, IntTy::U32, g(1), g(2))), u32t)
                }
                (Group::Thread, "thread_rank") => (k(0), u32t),
                (Group::Thread, "size" | "num_threads") => (k(1), u32t),
                (_, "is_valid") => (Expr::Int(1, IntTy::BOOL), Ty::Int(IntTy::BOOL)),
                _ => return Err(self.unsupported(n, &format!("`{method}` of this cooperative group"))),
            }));
        }
        let (name, targs) = simple_name(self.text(f));
        let qualified = self.text(f).contains("::");
        match name {
            // Group-producing calls in value position (an argument): a placeholder value.
            "this_thread_block" | "this_grid" | "coalesced_threads" | "this_thread" | "tiled_partition"
            | "make_pipeline" => Ok(Some(void())),
            "sync" | "synchronize" if args.len() == 1 && self.is_group_node(args[0]) => {
                if self.group_of(args[0]) == Some(Group::Grid) {
                    return self.group_call_grid_sync(n);
                }
                let block = matches!(self.group_of(args[0]), Some(Group::Block));
                self.builder.pending.push(Stmt::Barrier { block });
                Ok(Some(void()))
            }
            "wait" | "wait_prior" | "pipeline_consumer_wait_prior"
                if args.len() == 1 && self.is_group_node(args[0]) =>
            {
                self.sync_point(n)?;
                Ok(Some(void()))
            }
            "pipeline_producer_commit" | "init" if qualified || args.len() == 2 => Ok(Some(void())),
            "reduce" | "inclusive_scan" | "exclusive_scan" if args.len() >= 2 && self.is_group_node(args[0]) => {
                let g = self.group_of(args[0]).unwrap_or(Group::Block);
                let (v, vt) = self.expr(args[1])?;
                let width = match g {
                    Group::Tile(t) if t <= 32 => t,
                    Group::Coalesced => 32,
                    // Scattered lanes: the value is data to the model.
                    Group::Partition(_) => {
                        return Ok(Some((Expr::Opaque { args: vec![v], what: format!("{name}()") }, vt)));
                    }
                    _ => return Err(self.unsupported(n, &format!("`{name}` over a group larger than a warp"))),
                };
                if name != "reduce" {
                    return Ok(Some((Expr::Opaque { args: vec![v], what: format!("{name}()") }, vt)));
                }
                let op = args.get(2).map(|o| simple_name(self.text(*o)).0.trim_end_matches("()")).unwrap_or("plus");
                let r = match op {
                    "plus" => ReduceOp::Add,
                    "less" => ReduceOp::Min,
                    "greater" => ReduceOp::Max,
                    "bit_and" => ReduceOp::And,
                    "bit_or" => ReduceOp::Or,
                    "bit_xor" => ReduceOp::Xor,
                    _ => return Ok(Some((Expr::Opaque { args: vec![v], what: "reduce()".into() }, vt))),
                };
                let ty = if let Ty::Int(t) = vt { t } else { IntTy::I32 };
                if !matches!(vt, Ty::Int(_)) {
                    // Floating-point sums are data to the model either way.
                    return Ok(Some((Expr::Opaque { args: vec![v], what: "reduce()".into() }, vt)));
                }
                Ok(Some((
                    Expr::Warp { op: WarpOp::Reduce(r), ty, args: vec![v, Expr::Int(width as i128, IntTy::I32)], span },
                    vt,
                )))
            }
            "memcpy_async" if !args.is_empty() && self.is_group_node(args[0]) => {
                self.group_memcpy_async(n, qualified && self.text(f).starts_with("cuda"), args).map(Some)
            }
            _ => {
                let _ = targs;
                Ok(None)
            }
        }
    }

    fn group_call_grid_sync(&mut self, n: Node) -> Result<Option<(Expr, Ty)>> {
        let _ = n;
        self.builder.pending.push(Stmt::Barrier { block: true });
        Ok(Some((Expr::Int(0, IntTy::I32), Ty::Void)))
    }

    /// `cooperative_groups::memcpy_async(group, dst, src, bytes)` and
    /// `cuda::memcpy_async(group, dst, src, bytes, barrier)`: the group's threads copy `bytes` in
    /// chunks of the copy's alignment (16, 8 or 4 bytes), rank `r` copying chunks
    /// `r, r + size, ...` of the source: a loop of one LDGSTS.
    fn group_memcpy_async(&mut self, n: Node, cuda_ns: bool, args: &[Node]) -> Result<(Expr, Ty)> {
        if args.len() < 4 {
            return Err(self.unsupported(n, "memcpy_async with fewer than four arguments"));
        }
        if self.no_hoist > 0 {
            return Err(self.unsupported(n, "an asynchronous copy inside a condition"));
        }
        let g = self.group_of(args[0]).unwrap_or(Group::Block);
        let (dst, dt) = self.copy_destination(args[1])?;
        let (src, st) = self.expr(args[2])?;
        let bytes = self.copy_size(args[3])? as i128;
        // The copy's alignment: `cuda::aligned_size_t<N>` when the size says, else the element
        // type's (a float copy is 4-byte LDGSTS, seen in the H200's SASS).
        let size_text = self.text(args[3]);
        let align: i128 = match size_text.find("aligned_size_t<") {
            Some(i) => size_text[i + 15..].split('>').next().and_then(|x| self.const_text(x)).unwrap_or(1) as i128,
            None => match &st {
                Ty::Ptr(p) => match &p.pointee {
                    Ty::Vector { bytes, .. } if bytes.is_power_of_two() => *bytes as i128,
                    Ty::Vector { .. } => 4,
                    t => t.size() as i128,
                },
                _ => 1,
            },
        };
        let chunk: i128 = [16, 8, 4].into_iter().find(|c| align % c == 0 && bytes % c == 0).unwrap_or(0);
        // libcu++ on sm_90: a group's copy of 16-byte aligned data completing on a
        // `cuda::barrier` is one bulk (TMA) copy, which the L1 counters do not see (measured on
        // the H200: no global-load request, no LDGSTS).
        if cuda_ns && chunk == 16 && args.get(4).is_some_and(|b| self.group_of(*b) == Some(Group::Barrier)) {
            let note = format!(
                "line {}: cuda::memcpy_async of 16-byte aligned data on a cuda::barrier is a bulk (TMA) copy on sm_90: no L1 request; its L2 and DRAM traffic is not modelled",
                self.span(n).line
            );
            if !self.builder.kernel.notes.contains(&note) {
                self.builder.kernel.notes.push(note);
            }
            self.builder.pending.push(Stmt::Eval(dst));
            let _ = src;
            return Ok((Expr::Int(0, IntTy::I32), Ty::Void));
        }
        if chunk == 0 {
            return Err(self.unsupported(
                n,
                "an asynchronous copy whose alignment or size is not a multiple of 4 bytes (it is not an LDGSTS copy)",
            ));
        }
        let span = self.span(n);
        let (rank, size) = match g {
            Group::Block => (self.linear_tid(span), self.block_threads(span)),
            Group::Tile(t) => (
                Expr::Binary {
                    op: BinOp::Rem,
                    ty: IntTy::U32,
                    lhs: Box::new(self.linear_tid(span)),
                    rhs: Box::new(Expr::Int(t as i128, IntTy::U32)),
                    span,
                },
                Expr::Int(t as i128, IntTy::U32),
            ),
            Group::Thread => (Expr::Int(0, IntTy::U32), Expr::Int(1, IntTy::U32)),
            _ => return Err(self.unsupported(n, "memcpy_async over this group")),
        };
        let i = self.builder.temporary(Ty::Int(IntTy::U32));
        self.builder.pending.push(Stmt::Eval(dst.clone()));
        self.builder.pending.push(Stmt::Assign { local: i, value: rank, span });
        let cache = if chunk == 16 { CacheOp::Cg } else { CacheOp::Ca };
        let op = self.builder.memory_operation(
            AccessKind::AsyncCopy,
            Space::Global,
            chunk as u64,
            cache,
            true,
            self.text(n),
            span,
        );
        let _ = (&dt, &st);
        let off = Expr::ToInt {
            ty: IntTy::I64,
            arg: Box::new(Expr::Binary {
                op: BinOp::Mul,
                ty: IntTy::U32,
                lhs: Box::new(Expr::Local(i)),
                rhs: Box::new(Expr::Int(chunk, IntTy::U32)),
                span,
            }),
        };
        let body = vec![Stmt::Eval(Expr::Load {
            op,
            addr: Box::new(Expr::PtrOffset { ptr: Box::new(src), bytes: Box::new(off) }),
        })];
        let step = vec![Stmt::Assign {
            local: i,
            value: Expr::Binary {
                op: BinOp::Add,
                ty: IntTy::U32,
                lhs: Box::new(Expr::Local(i)),
                rhs: Box::new(size),
                span,
            },
            span,
        }];
        let cond = Expr::Binary {
            op: BinOp::Lt,
            ty: IntTy::U32,
            lhs: Box::new(Expr::Local(i)),
            rhs: Box::new(Expr::Int(bytes / chunk, IntTy::U32)),
            span,
        };
        self.builder.pending.push(Stmt::Loop { cond: Some(cond), body, step, test_first: true, span, synthetic: true });
        // The barrier (or later wait) orders the copy before reads.
        for a in &args[4..] {
            if !self.is_group_node(*a) {
                let (x, _) = self.expr(*a)?;
                self.builder.pending.push(Stmt::Eval(x));
            }
        }
        Ok((Expr::Int(0, IntTy::I32), Ty::Void))
    }

    /// `block.group_index().x`, `block.thread_index().y`, `block.group_dim().z`,
    /// `grid.dim_blocks().x`: the builtin. `None` when `n` is not such a member.
    pub(super) fn group_member_field(&mut self, n: Node) -> Result<Option<(Expr, Ty)>> {
        let Some(arg) = n.child_by_field_name("argument").map(cpp::unparen) else { return Ok(None) };
        if arg.kind() != "call_expression" {
            return Ok(None);
        }
        let Some(f) = arg.child_by_field_name("function") else { return Ok(None) };
        let obj = f.child_by_field_name("argument").filter(|_| f.kind() == "field_expression");
        if obj.is_none_or(|o| self.group_of(o).is_none()) {
            // A component of a vector a call returns (`__half22float2(h).y`), a member of a
            // structure it returns by value (`c_mul(a, b).r`, as `C m = c_mul(a, b)` makes it):
            // a value nobody tracks, the call still evaluated.
            let (v, vt) = self.expr(arg)?;
            let field = n.child_by_field_name("field").map(|x| self.text(x)).unwrap_or("");
            let ft = super::super::types::vector_field(&vt, field).map(|(_, t)| t).or_else(|| {
                let l = self.unit.layout(cpp::struct_name(&vt)?)?;
                l.field(field).filter(|f| f.dims.is_empty()).map(|f| f.ty.clone())
            });
            return match ft {
                Some(ft) => Ok(Some((Expr::Opaque { args: vec![v], what: format!(".{field}") }, ft))),
                None => Err(self.unsupported(n, "this member of a call's result")),
            };
        }
        let method = f.child_by_field_name("field").map(|x| self.text(x)).unwrap_or("");
        let d = match n.child_by_field_name("field").map(|x| self.text(x)) {
            Some("x") => 0,
            Some("y") => 1,
            Some("z") => 2,
            _ => return Err(self.unsupported(n, "this member")),
        };
        let b = match method {
            "group_index" | "block_index" => Builtin::BlockIdx(d),
            "thread_index" => Builtin::ThreadIdx(d),
            "group_dim" | "dim_threads" => Builtin::BlockDim(d),
            "dim_blocks" => Builtin::GridDim(d),
            _ => return Err(self.unsupported(n, &format!("`{method}` of this cooperative group"))),
        };
        Ok(Some((Expr::Builtin(b), Ty::Int(IntTy::U32))))
    }

    /// `cg::thread_block_tile<32> t = cg::tiled_partition<32>(b);` parses as an expression
    /// (`a < 32 > t = ...`): recognised from its text. `Ok(false)` when it is not one.
    pub(super) fn group_statement(&mut self, n: Node) -> Result<bool> {
        let text = self.text(n).trim().trim_end_matches(';').trim();
        let Some((lhs, init)) = text.split_once('=') else { return Ok(false) };
        let lhs = lhs.trim();
        let Some(gt) = lhs.rfind('>') else { return Ok(false) };
        let (ty, name) = (lhs[..=gt].trim(), lhs[gt + 1..].trim());
        if !ty.contains("thread_block_tile")
            || name.is_empty()
            || !name.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            return Ok(false);
        }
        let init = init.trim();
        let g = match init.split_once('(') {
            Some((f, rest)) => {
                let (fname, targs) = simple_name(f);
                match (fname, targs) {
                    ("tiled_partition", Some(t)) => self.const_text(t).map(Group::Tile),
                    ("tiled_partition", None) => {
                        rest.trim_end_matches(')').split(',').nth(1).and_then(|a| self.const_text(a)).map(Group::Tile)
                    }
                    _ => None,
                }
            }
            None => match self.lookup(init) {
                Some(Sym::Group(g)) => Some(*g),
                _ => None,
            },
        };
        let g = g.or_else(|| group_type(ty).flatten());
        let Some(g) = g else {
            return Err(self.unsupported(n, "a cooperative group whose kind is not known here"));
        };
        self.scopes.last_mut().unwrap().insert(name.to_string(), Sym::Group(g));
        Ok(true)
    }

    /// `const auto shape = cuda::aligned_size_t<16>(sizeof(float4));`: a constant size.
    fn aligned_size_declaration(&mut self, n: Node, decls: &[Node]) -> Result<bool> {
        let Some(t) = n.child_by_field_name("type") else { return Ok(false) };
        if self.text(t) != "auto" || decls.len() != 1 || decls[0].kind() != "init_declarator" {
            return Ok(false);
        }
        let (Some(target), Some(init)) =
            (decls[0].child_by_field_name("declarator"), decls[0].child_by_field_name("value"))
        else {
            return Ok(false);
        };
        if init.kind() != "call_expression"
            || init.child_by_field_name("function").is_none_or(|f| simple_name(self.text(f)).0 != "aligned_size_t")
        {
            return Ok(false);
        }
        let (e, _) = self.expr(init)?;
        let Some(v) = fold_constant(&e) else { return Ok(false) };
        let name = self.text(target).to_string();
        self.scopes.last_mut().unwrap().insert(name, Sym::Const(v, IntTy::U64));
        Ok(true)
    }

    /// `auto g = cg::labeled_partition(tile, label);` / `cg::binary_partition(tile, pred)`: the
    /// mask of the lanes with the same label, computed once into a local. `None`: not one.
    fn partition_declaration(&mut self, decls: &[Node], out: &mut Vec<Stmt>) -> Result<Option<bool>> {
        let [d] = decls else { return Ok(None) };
        let (Some(target), Some(init)) = (d.child_by_field_name("declarator"), d.child_by_field_name("value")) else {
            return Ok(None);
        };
        if init.kind() != "call_expression" {
            return Ok(None);
        }
        let Some(f) = init.child_by_field_name("function") else { return Ok(None) };
        let (fname, _) = simple_name(self.text(f));
        if !matches!(fname, "labeled_partition" | "binary_partition") {
            return Ok(None);
        }
        let Some(list) = init.child_by_field_name("arguments") else { return Ok(None) };
        let mut c = list.walk();
        let items: Vec<Node> = list.named_children(&mut c).collect();
        let parent = items.first().and_then(|p| self.group_of(*p));
        if items.len() != 2 || !matches!(parent, Some(Group::Coalesced | Group::Tile(32) | Group::Partition(_))) {
            return Err(
                self.unsupported(init, "a partition of a group other than a warp-sized tile or coalesced group")
            );
        }
        let (v, vt) = self.expr(items[1])?;
        let v = if fname == "binary_partition" { self.truth(v, &vt) } else { v };
        let span = self.span(init);
        let mut label = Expr::Warp { op: WarpOp::MatchAny, ty: IntTy::U32, args: vec![v], span };
        if let Some(Group::Partition(p)) = parent {
            // A partition of a partition: the lanes that share both.
            label = Expr::Binary {
                op: BinOp::And,
                ty: IntTy::U32,
                lhs: Box::new(label),
                rhs: Box::new(Expr::Local(p)),
                span,
            };
        }
        let mask = self.builder.temporary(Ty::Int(IntTy::U32));
        self.flush(out);
        out.push(Stmt::Assign { local: mask, value: label, span });
        let name = self.text(target).trim_start_matches(['&', '*', ' ']).to_string();
        self.scopes.last_mut().unwrap().insert(name, Sym::Group(Group::Partition(mask)));
        Ok(Some(true))
    }
}
