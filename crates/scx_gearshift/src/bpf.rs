//! The BPF side as seen from Rust: loading and attaching the dispatcher, the two ring buffers,
//! counters and exit info.

use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::rc::Rc;

use anyhow::{Context, Result};
use libbpf_rs::{Link, OpenObject, RingBuffer, RingBufferBuilder, UserRingBuffer};
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report, UserExitInfo};

use crate::policy::{Decision, QueuedTask};

#[allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code
)]
pub mod intf {
    include!(concat!(env!("OUT_DIR"), "/bpf_intf.rs"));
}

#[allow(
    clippy::all,
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code
)]
mod skel {
    include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
}

use intf::{
    gs_dispatch_flags_GS_DISPATCH_INTERACTIVE, gs_dispatched_task, gs_queued_task,
    gs_task_flags_GS_TASK_INTERACTIVE, gs_task_flags_GS_TASK_MESSAGE_DRIVEN,
    gs_task_flags_GS_TASK_WAKEUP,
};
use skel::{BpfSkel, BpfSkelBuilder};

/// BPF's counters (`struct gs_counters` in intf.h).
pub use skel::types::gs_counters as Counters;

// SAFETY: plain C structs of integers, valid for any bit pattern.
unsafe impl plain::Plain for gs_queued_task {}
unsafe impl plain::Plain for gs_dispatched_task {}

/// Load-time settings of the BPF part.
#[derive(Debug, Clone, Copy)]
pub struct BpfTunables {
    pub slice_max_ns: u64,
    pub slice_min_ns: u64,
    pub starvation_ns: u64,
    pub weight_cap: u64,
    /// How long a runnable task may wait before the kernel ejects the scheduler (0: the
    /// kernel's default, 30 s).
    pub watchdog_timeout_ms: u32,
    /// Test builds only: a pause between reading the topology and loading.
    pub debug_load_delay: Option<std::time::Duration>,
}

/// The kernel's watchdog timeout when the scheduler names none (`timeout_ms` 0).
const KERNEL_WATCHDOG_MS: u64 = 30_000;

/// The heartbeat's period on an idle machine (usersched.bpf.h): as slow as
/// `GS_HEARTBEAT_IDLE_MAX_NS`, but at most a quarter of the watchdog timeout, because the
/// scheduling thread waits runnable between heartbeats; never faster than the busy heartbeat.
fn idle_heartbeat_ns(watchdog_timeout_ms: u32) -> u64 {
    let timeout_ms = match watchdog_timeout_ms {
        0 => KERNEL_WATCHDOG_MS,
        ms => u64::from(ms),
    };
    (timeout_ms * 1_000_000 / 4)
        .min(intf::gs_consts_GS_HEARTBEAT_IDLE_MAX_NS as u64)
        .max(intf::gs_consts_GS_HEARTBEAT_NS as u64)
}

/// The BPF encoding of a mode (`enum gs_mode`).
fn mode_code(mode: gearshift_types::Mode) -> u32 {
    use gearshift_types::Mode;
    match mode {
        Mode::Interactive => intf::gs_mode_GS_MODE_INTERACTIVE,
        Mode::Fifo => intf::gs_mode_GS_MODE_FIFO,
        Mode::LowPower => intf::gs_mode_GS_MODE_LOWPOWER,
    }
}

/// The mode a BPF `enum gs_mode` value encodes; None for a value no mode has.
fn mode_of_code(code: u32) -> Option<gearshift_types::Mode> {
    use gearshift_types::Mode;
    [Mode::Interactive, Mode::Fifo, Mode::LowPower]
        .into_iter()
        .find(|m| mode_code(*m) == code)
}

/// The attached dispatcher. Dropping it detaches the scheduler.
pub struct Bpf<'obj> {
    // Field order matters: the link goes first so the scheduler detaches before maps go away.
    link: Option<Link>,
    queued: RingBuffer<'obj>,
    dispatched: UserRingBuffer,
    inbox: Rc<RefCell<Vec<QueuedTask>>>,
    skel: BpfSkel<'obj>,
}

fn to_task(raw: &gs_queued_task) -> QueuedTask {
    QueuedTask {
        pid: raw.pid,
        cpu: raw.cpu,
        cpumask_gen: raw.cpumask_gen,
        nr_cpus_allowed: raw.nr_cpus_allowed,
        enq_seq: raw.enq_seq,
        wakeup: raw.flags & gs_task_flags_GS_TASK_WAKEUP as u64 != 0,
        sum_exec_runtime: raw.sum_exec_runtime,
        nvcsw: raw.nvcsw,
        weight: raw.weight,
        enq_ns: raw.enq_ns,
        slept_ns: raw.slept_ns,
        interactive_hint: raw.flags & gs_task_flags_GS_TASK_INTERACTIVE as u64 != 0,
        message_driven: raw.flags & gs_task_flags_GS_TASK_MESSAGE_DRIVEN as u64 != 0,
    }
}

impl<'obj> Bpf<'obj> {
    /// Opens, loads and attaches the dispatcher; `usersched_tid` is the scheduling thread.
    pub fn attach(
        open_object: &'obj mut MaybeUninit<OpenObject>,
        tunables: BpfTunables,
        usersched_tid: i32,
    ) -> Result<Self> {
        let builder = BpfSkelBuilder::default();
        let mut open = scx_ops_open!(
            builder,
            open_object,
            gearshift_ops,
            None::<libbpf_rs::libbpf_sys::bpf_object_open_opts>
        )?;
        let rodata = open
            .maps
            .rodata_data
            .as_mut()
            .context("BPF object has no .rodata")?;
        rodata.usersched_tid = usersched_tid;
        // Its other threads are dispatched in BPF (task.bpf.h, is_usersched_helper()).
        rodata.usersched_tgid = std::process::id() as i32;
        rodata.slice_max_ns = tunables.slice_max_ns;
        rodata.slice_min_ns = tunables.slice_min_ns;
        rodata.starvation_ns = tunables.starvation_ns;
        rodata.weight_cap = tunables.weight_cap;
        rodata.heartbeat_idle_ns = idle_heartbeat_ns(tunables.watchdog_timeout_ms);
        let topo = crate::topology::read_topology()?;
        // The verifier's part takes a while on a busy machine: say that it started.
        tracing::info!("loading for CPUs {}", topo.span.to_cpulist());
        let order = crate::topology::packing_order(&topo);
        for (slot, cpu) in rodata.pack_order.iter_mut().zip(&order) {
            *slot = *cpu;
        }
        rodata.nr_pack = order.len().min(rodata.pack_order.len()) as u32;
        let (nodes, nr_nodes) = crate::topology::cpu_nodes(&topo);
        let no_node = intf::gs_consts_GS_NO_NODE as u16;
        for (slot, node) in rodata.cpu_node_ids.iter_mut().zip(
            nodes
                .iter()
                .map(|n| n.map_or(no_node, |n| n.min(no_node as usize) as u16))
                .chain(std::iter::repeat(no_node)),
        ) {
            *slot = node;
        }
        rodata.nr_nodes = nr_nodes.min(intf::gs_consts_GS_MAX_NODES as usize) as u32;
        let ops = open.struct_ops.gearshift_ops_mut();
        ops.timeout_ms = tunables.watchdog_timeout_ms;
        // With a hotplug sequence number the kernel ends a scheduler that saw a CPU come or go
        // while loading. Loading on a busy machine can outlast the gap between two hotplug
        // events (CPUs return one by one after a resume; the verifier takes tens of seconds
        // beside CPU hogs in an emulated machine), and then every attempt would be ended in
        // turn. BPF needs no such check: ops.init takes the CPUs online at that moment, and
        // ops.cpu_online/cpu_offline follow every change after it (hotplug.bpf.h).
        ops.hotplug_seq = 0;
        // Without ENQ_LAST the kernel keeps running a CPU's last runnable task when ops.dispatch
        // finds nothing, so the scheduling thread, yielding with no work, would spin instead of
        // letting its CPU idle.
        ops.flags |= *scx_utils::compat::SCX_OPS_ENQ_LAST;
        // cgroup cpu.weight needs the kernel's sched_ext cgroup support
        // (CONFIG_EXT_GROUP_SCHED); without it the callbacks are not in sched_ext_ops.
        if !matches!(
            scx_utils::compat::struct_has_field("sched_ext_ops", "cgroup_set_weight"),
            Ok(true)
        ) {
            tracing::warn!("this kernel has no sched_ext cgroup support: cgroup cpu.weight is ignored, nice still counts");
            ops.cgroup_init = std::ptr::null_mut();
            ops.cgroup_set_weight = std::ptr::null_mut();
            ops.cgroup_move = std::ptr::null_mut();
        } else {
            // Kernels before 6.15 warn that cpu.weight is ignored unless told otherwise; later
            // ones dropped the flag (and take weights as implemented).
            ops.flags |= scx_utils::compat::read_enum("scx_ops_flags", "SCX_OPS_HAS_CGROUP_WEIGHT")
                .unwrap_or(0);
        }
        if let Some(delay) = tunables.debug_load_delay {
            std::thread::sleep(delay);
        }
        let mut skel = scx_ops_load!(open, gearshift_ops, uei)?;
        if skel.maps.bss_data.is_none() {
            anyhow::bail!("BPF object has no .bss");
        }
        let link = scx_ops_attach!(skel, gearshift_ops)?;

        let inbox = Rc::new(RefCell::new(Vec::with_capacity(
            intf::gs_consts_GS_MAX_QUEUED as usize,
        )));
        let sink = inbox.clone();
        let mut rb = RingBufferBuilder::new();
        rb.add(&skel.maps.queued, move |data: &[u8]| {
            if let Ok(raw) = plain::from_bytes::<gs_queued_task>(data) {
                sink.borrow_mut().push(to_task(raw));
            }
            0
        })?;
        let queued = rb.build()?;
        let dispatched = UserRingBuffer::new(&skel.maps.dispatched)?;
        Ok(Self {
            link: Some(link),
            queued,
            dispatched,
            inbox,
            skel,
        })
    }

    /// Hands every task BPF queued since the last call to `f`.
    pub fn receive(&mut self, mut f: impl FnMut(&QueuedTask)) -> Result<usize> {
        self.queued
            .consume()
            .context("reading the queued-task ring buffer")?;
        let mut inbox = self.inbox.borrow_mut();
        inbox.iter().for_each(&mut f);
        let n = inbox.len();
        inbox.clear();
        Ok(n)
    }

    /// Sends a decision to BPF; false when the dispatch ring is full (try again later).
    pub fn dispatch(&self, d: &Decision) -> bool {
        let Ok(mut sample) = self
            .dispatched
            .reserve(std::mem::size_of::<gs_dispatched_task>())
        else {
            return false;
        };
        let Ok(out) = plain::from_mut_bytes::<gs_dispatched_task>(sample.as_mut()) else {
            return false;
        };
        *out = gs_dispatched_task {
            pid: d.pid,
            cpu: d.cpu,
            cpumask_gen: d.cpumask_gen,
            flags: if d.interactive {
                gs_dispatch_flags_GS_DISPATCH_INTERACTIVE
            } else {
                0
            },
            enq_seq: d.enq_seq,
            slice_ns: d.slice_ns,
            vtime: d.vtime,
            vruntime: d.vruntime,
        };
        self.dispatched.submit(sample).is_ok()
    }

    fn bss(&self) -> &skel::types::bss {
        // Checked in attach().
        self.skel
            .maps
            .bss_data
            .as_deref()
            .expect("BPF .bss is mapped")
    }

    /// The highest vruntime BPF gave a task whose ended slice it queued itself.
    pub fn kernel_vruntime_max(&self) -> u64 {
        // SAFETY: BPF updates it concurrently; a volatile read of a plain integer.
        unsafe { std::ptr::read_volatile(&self.bss().kernel_vruntime_max) }
    }

    /// A snapshot of BPF's counters.
    pub fn counters(&self) -> Counters {
        // SAFETY: BPF updates the counters concurrently; a volatile read of plain integers.
        unsafe { std::ptr::read_volatile(&self.bss().counters) }
    }

    /// Tells BPF how many tasks user space still holds, so it runs us again while any remain.
    pub fn set_user_pending(&mut self, n: u64) {
        if let Some(bss) = self.skel.maps.bss_data.as_deref_mut() {
            // SAFETY: shared with BPF, written with a volatile store.
            unsafe { std::ptr::write_volatile(&mut bss.nr_user_pending, n) };
        }
    }

    /// Switches mode; BPF reads it on every scheduling event, so it is in effect on return.
    pub fn set_mode(&mut self, mode: gearshift_types::Mode) {
        if let Some(bss) = self.skel.maps.bss_data.as_deref_mut() {
            // SAFETY: shared with BPF, written with a volatile store.
            unsafe { std::ptr::write_volatile(&mut bss.mode, mode_code(mode)) };
        }
    }

    /// The mode BPF has in effect (read back from BPF, not what was last asked for).
    pub fn mode(&self) -> Option<gearshift_types::Mode> {
        // SAFETY: shared with BPF, read with a volatile load.
        mode_of_code(unsafe { std::ptr::read_volatile(&self.bss().mode) })
    }

    /// Favours the tasks of the cgroup v2 of id `cgroup_id` and of its descendants (0: none);
    /// BPF reads it on every enqueue, so it is in effect on return.
    pub fn set_foreground(&mut self, cgroup_id: u64) {
        if let Some(bss) = self.skel.maps.bss_data.as_deref_mut() {
            // SAFETY: shared with BPF, written with a volatile store.
            unsafe { std::ptr::write_volatile(&mut bss.foreground_cgid, cgroup_id) };
        }
    }

    /// The foreground cgroup BPF has in effect (read back from BPF).
    pub fn foreground(&self) -> u64 {
        // SAFETY: shared with BPF, read with a volatile load.
        unsafe { std::ptr::read_volatile(&self.bss().foreground_cgid) }
    }

    /// Whether BPF has wakeup preemption on (read back from BPF).
    pub fn preemption(&self) -> bool {
        self.skel
            .maps
            .data_data
            .as_deref()
            // SAFETY: shared with BPF, read with a volatile load.
            .is_some_and(|data| unsafe { std::ptr::read_volatile(&data.preempt_enabled) })
    }

    /// Turns wakeup preemption on or off; in effect for the next wakeup.
    pub fn set_preemption(&mut self, enabled: bool) {
        if let Some(data) = self.skel.maps.data_data.as_deref_mut() {
            // SAFETY: shared with BPF, written with a volatile store.
            unsafe { std::ptr::write_volatile(&mut data.preempt_enabled, enabled) };
        }
    }

    /// True once the kernel has disabled the scheduler (error, hotplug, sysrq, unregister).
    pub fn exited(&self) -> bool {
        uei_exited!(&self.skel, uei)
    }

    /// Detaches (if still attached) and returns why the scheduler ended; prints the reason.
    pub fn detach(mut self) -> Result<UserExitInfo> {
        self.link.take();
        uei_report!(&self.skel, uei)
    }
}

#[cfg(test)]
mod tests {
    use super::{idle_heartbeat_ns, intf};
    use crate::policy::{PolicyConfig, BURST_CHARGE_SLICES};

    /// BPF queues ended slices itself at the deadline the policy would give (dispatch.bpf.h:
    /// requeue_slice_end()); the two only agree while they cap and weigh alike.
    #[test]
    fn bpf_and_policy_charge_and_cap_alike() {
        assert_eq!(
            intf::gs_consts_GS_BURST_CHARGE_SLICES as u64,
            BURST_CHARGE_SLICES
        );
        assert_eq!(
            intf::gs_consts_GS_DFL_WEIGHT_CAP as u64,
            PolicyConfig::default().weight_cap
        );
        assert_eq!(
            intf::gs_consts_GS_DFL_SLICE_MAX_NS as u64,
            PolicyConfig::default().slice_max_ns
        );
        assert_eq!(
            intf::gs_consts_GS_DFL_SLICE_MIN_NS as u64,
            PolicyConfig::default().slice_min_ns
        );
    }

    /// The idle heartbeat keeps the scheduling thread well inside the watchdog timeout: a
    /// second with the kernel's 30 s, 750 ms with the 3 s the reliability tests use, and
    /// never below the busy heartbeat however short the timeout.
    #[test]
    fn the_idle_heartbeat_stays_well_inside_the_watchdog_timeout() {
        assert_eq!(idle_heartbeat_ns(0), 1_000_000_000);
        assert_eq!(idle_heartbeat_ns(30_000), 1_000_000_000);
        assert_eq!(idle_heartbeat_ns(3_000), 750_000_000);
        assert_eq!(idle_heartbeat_ns(1), intf::gs_consts_GS_HEARTBEAT_NS as u64);
    }
}
