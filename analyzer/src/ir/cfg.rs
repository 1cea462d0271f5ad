//! The control-flow graph: a petgraph view derived from the structured statement tree, for
//! `--emit dot` and for analyses that want edges rather than nesting.

use super::{Kernel, Stmt};
use petgraph::graph::{DiGraph, NodeIndex};
use std::fmt::Write;

#[derive(Clone, Debug, Default)]
pub struct BasicBlock {
    /// One line per statement, for display.
    pub lines: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    Fall,
    True,
    False,
    Back,
    Break,
    Continue,
    Return,
}

pub struct Cfg {
    pub graph: DiGraph<BasicBlock, Edge>,
    pub entry: NodeIndex,
    pub exit: NodeIndex,
}

struct Builder<'k> {
    k: &'k Kernel,
    g: DiGraph<BasicBlock, Edge>,
    exit: NodeIndex,
    /// (continue target, break target) of enclosing loops.
    loops: Vec<(NodeIndex, NodeIndex)>,
}

impl Cfg {
    pub fn build(k: &Kernel) -> Cfg {
        let mut g = DiGraph::new();
        let entry = g.add_node(BasicBlock { lines: vec!["entry".into()] });
        let exit = g.add_node(BasicBlock { lines: vec!["exit".into()] });
        let mut b = Builder { k, g, exit, loops: Vec::new() };
        if let Some(end) = b.stmts(&k.body, entry) {
            b.g.add_edge(end, exit, Edge::Fall);
        }
        Cfg { graph: b.g, entry, exit }
    }

    /// Graphviz text.
    pub fn to_dot(&self, name: &str) -> String {
        let mut o = format!("digraph \"{}\" {{\n  node [shape=box, fontname=monospace];\n", name.replace('"', "'"));
        for i in self.graph.node_indices() {
            let label = self.graph[i].lines.join("\\l").replace('"', "\\\"");
            let _ = writeln!(o, "  n{} [label=\"{}\\l\"];", i.index(), label);
        }
        for e in self.graph.edge_indices() {
            let (a, b) = self.graph.edge_endpoints(e).expect("edge");
            let _ = writeln!(o, "  n{} -> n{} [label=\"{:?}\"];", a.index(), b.index(), self.graph[e]);
        }
        o.push_str("}\n");
        o
    }
}

impl Builder<'_> {
    fn new_block(&mut self) -> NodeIndex {
        self.g.add_node(BasicBlock::default())
    }

    /// Appends statements starting in block `cur`; returns the block control falls out of,
    /// or `None` when every path left (break, continue, return).
    fn stmts(&mut self, stmts: &[Stmt], mut cur: NodeIndex) -> Option<NodeIndex> {
        for s in stmts {
            match s {
                Stmt::Assign { local, .. } => {
                    let name = self.k.locals[local.0 as usize].name.clone();
                    self.g[cur].lines.push(format!("{name} = ..."));
                }
                Stmt::Store { op, .. } => {
                    let m = self.k.mem_op(*op);
                    self.g[cur].lines.push(format!("store {} ({}:{})", m.text, m.span.line, m.span.column));
                }
                Stmt::Eval(_) => self.g[cur].lines.push("eval".into()),
                Stmt::Barrier { .. } => self.g[cur].lines.push("barrier".into()),
                Stmt::If { then, els, span, .. } => {
                    self.g[cur].lines.push(format!("if ({}:{})", span.line, span.column));
                    let t = self.new_block();
                    let f = self.new_block();
                    self.g.add_edge(cur, t, super::cfg::Edge::True);
                    self.g.add_edge(cur, f, Edge::False);
                    let te = self.stmts(then, t);
                    let fe = self.stmts(els, f);
                    let join = self.new_block();
                    for e in [te, fe].into_iter().flatten() {
                        self.g.add_edge(e, join, Edge::Fall);
                    }
                    cur = join;
                }
                Stmt::Loop { body, step, span, .. } => {
                    let head = self.new_block();
                    self.g[head].lines.push(format!("loop ({}:{})", span.line, span.column));
                    self.g.add_edge(cur, head, Edge::Fall);
                    let body_b = self.new_block();
                    let latch = self.new_block();
                    let after = self.new_block();
                    self.g.add_edge(head, body_b, Edge::True);
                    self.g.add_edge(head, after, Edge::False);
                    self.loops.push((latch, after));
                    if let Some(e) = self.stmts(body, body_b) {
                        self.g.add_edge(e, latch, Edge::Fall);
                    }
                    self.loops.pop();
                    if let Some(e) = self.stmts(step, latch) {
                        self.g.add_edge(e, head, Edge::Back);
                    }
                    cur = after;
                }
                Stmt::Break => {
                    if let Some(&(_, brk)) = self.loops.last() {
                        self.g.add_edge(cur, brk, Edge::Break);
                    }
                    return None;
                }
                Stmt::Continue => {
                    if let Some(&(cont, _)) = self.loops.last() {
                        self.g.add_edge(cur, cont, Edge::Continue);
                    }
                    return None;
                }
                Stmt::Return => {
                    self.g.add_edge(cur, self.exit, Edge::Return);
                    return None;
                }
            }
        }
        Some(cur)
    }
}
