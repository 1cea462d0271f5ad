//! An observer of the reference engine: copies one warp-level execution of one memory
//! instruction out lane by lane, for `sector-estimate explain`. Observing changes no count; the
//! engine still counts sectors only in [`Engine::record`].

use super::*;

/// Which warp-level execution to copy out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    pub op: MemOpId,
    /// Block index; `None`: blocks in launch order until a warp executes the instruction.
    pub block: Option<[u32; 3]>,
    /// Warp of the block; `None`: warps in order until one executes the instruction.
    pub warp: Option<u32>,
    /// Which execution of the instruction by that warp, counted from 0.
    pub execution: u64,
}

/// One lane's address: the object it points into and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneAddr {
    pub base: Base,
    /// Bytes past the object's start (the pointer parameter, or the shared array).
    pub offset: i64,
    /// Bytes past the 256-byte boundary at or below the object's start (a pointer parameter's
    /// allocation, or the start of shared memory): sectors and lines are numbered from there.
    pub from_boundary: i64,
    /// Address in the engine's address space, to tell lanes in different objects apart.
    pub absolute: i64,
}

/// One warp-level execution as its lanes saw it.
#[derive(Clone, Debug)]
pub struct Capture {
    pub block: [u32; 3],
    pub warp: u32,
    pub execution: u64,
    /// How many times this warp executed the instruction in all.
    pub executions: u64,
    /// `threadIdx` of each lane.
    pub tid: [[u32; 3]; WARP],
    /// Lanes the warp has: fewer than 32 in a partial last warp.
    pub lanes: u32,
    /// Lanes that executed the instruction (the active mask there).
    pub present: u32,
    /// Lanes of `present` whose load the compiler removes (the value is already in a register).
    pub elided: u32,
    /// Per lane of `present`: the address, `None` when it depends on unknown data.
    pub addrs: [Option<LaneAddr>; WARP],
    /// A store kept in a register inside its loop (LICM): memory sees one store after the loop.
    pub promoted: bool,
}

/// What the probe found.
#[derive(Clone, Debug)]
pub enum ProbeOutcome {
    Found(Box<Capture>),
    /// No warp looked at executed the instruction that often; the most executions one made.
    NotFound {
        most_executions: u64,
    },
}

pub(super) struct ProbeState {
    probe: Probe,
    seen: u64,
    capture: Option<Capture>,
}

impl Engine<'_> {
    /// Called by [`Engine::access`] for every warp-level execution while a probe is set.
    pub(super) fn observe(&mut self, id: MemOpId, a: &Vals, m: u32, elided: u32, promoted: bool) {
        let wanted = match self.probe.as_deref_mut() {
            Some(p) if p.probe.op == id => {
                p.seen += 1;
                p.capture.is_none() && p.seen - 1 == p.probe.execution
            }
            _ => false,
        };
        if !wanted {
            return;
        }
        let mut addrs = [None; WARP];
        for l in lanes(m) {
            if let K::Ptr(base, offset) = a.at(l).k {
                addrs[l] = Some(self.lane_addr(base, offset));
            }
        }
        let p = self.probe.as_deref_mut().expect("probe");
        p.capture = Some(Capture {
            block: self.block_idx,
            warp: 0,
            execution: p.probe.execution,
            executions: 0,
            tid: [[0; 3]; WARP],
            lanes: 0,
            present: m,
            elided,
            addrs,
            promoted,
        });
    }

    fn lane_addr(&self, base: Base, offset: i64) -> LaneAddr {
        let absolute = self.absolute(base, offset);
        match base {
            Base::Param(p) => LaneAddr { base, offset, from_boundary: absolute - param_base(p, 0), absolute },
            // Shared offsets are already counted from the start of shared memory.
            Base::Shared(s) => {
                let start = self.shared_base[s.0 as usize] - SHARED_WINDOW;
                LaneAddr { base, offset: offset - start, from_boundary: offset, absolute }
            }
        }
    }
}

/// Runs the warps the probe selects, in launch order, until the selected execution is seen and
/// its warp has finished. Warps affect one another only through what their block stores in
/// shared memory, which a second engine settles first as the counting run does; the other warps
/// are skipped.
pub fn probe(kernel: &Kernel, setup: &Setup, probe: Probe) -> Result<ProbeOutcome> {
    let [gx, gy, gz] = setup.grid;
    if let Some(b) = probe.block {
        if b[0] >= gx || b[1] >= gy || b[2] >= gz {
            return Err(Diagnostic::new(
                ErrorKind::Usage,
                format!(
                    "block index ({}, {}, {}) is outside the grid ({gx}, {gy}, {gz}); indices count from 0",
                    b[0], b[1], b[2]
                ),
            ));
        }
    }
    let shapes = warp_shapes(setup.block);
    if let Some(w) = probe.warp {
        if w as usize >= shapes.len() {
            return Err(Diagnostic::new(
                ErrorKind::Usage,
                format!(
                    "warp {w} does not exist: a block of {} threads has {} warps",
                    setup.threads_per_block(),
                    shapes.len()
                ),
            ));
        }
    }
    let mut none = super::NoSink;
    let mut e = Engine::new(kernel, setup, &mut none);
    e.probe = Some(Box::new(ProbeState { probe, seen: 0, capture: None }));
    let mut quiet = super::NoSink;
    let mut scout = crate::ir::provenance::shared_values_steer(kernel).then(|| Engine::new(kernel, setup, &mut quiet));
    let mut st = WarpState::new(kernel.locals.len());
    let mut most = 0u64;
    let blocks: Box<dyn Iterator<Item = [u32; 3]>> = match probe.block {
        Some(b) => Box::new(std::iter::once(b)),
        None => Box::new((0..gz).flat_map(move |z| (0..gy).flat_map(move |y| (0..gx).map(move |x| [x, y, z])))),
    };
    for b in blocks {
        let linear = b[0] as u64 + gx as u64 * (b[1] as u64 + gy as u64 * b[2] as u64);
        e.block_idx = b;
        e.block_linear = linear;
        e.boundary.begin_block(linear);
        super::settle_block(&mut scout, &mut e, &shapes, &mut st)?;
        for (w, shape) in shapes.iter().enumerate() {
            if probe.warp.is_some_and(|pw| pw as usize != w) {
                continue;
            }
            if let Some(sv) = e.shared_values.as_mut() {
                sv.begin_warp(w as u32);
            }
            if let Some(p) = e.probe.as_deref_mut() {
                p.seen = 0;
            }
            st.start(shape, &mut e.pool);
            e.exec_block(&kernel.body, shape.mask, &mut st)?;
            let p = e.probe.as_deref_mut().expect("probe");
            most = most.max(p.seen);
            if let Some(mut c) = p.capture.take() {
                c.warp = w as u32;
                c.executions = p.seen;
                c.tid = shape.tid;
                c.lanes = shape.mask;
                return Ok(ProbeOutcome::Found(Box::new(c)));
            }
        }
    }
    Ok(ProbeOutcome::NotFound { most_executions: most })
}
