//! CPU topology as the BPF side uses it, from scx_utils' view of sysfs.

use std::time::Duration;

use anyhow::Result;
use scx_utils::Topology;

/// Reads the topology, again if a CPU hotplug raced with the reading: the sysfs directory
/// of a CPU going offline vanishes between the online list and the CPU's own files.
pub fn read_topology() -> Result<Topology> {
    const TRIES: u32 = 20;
    let mut tries = 1;
    loop {
        match Topology::new() {
            Ok(topo) => return Ok(topo),
            Err(e) if tries < TRIES => {
                tracing::debug!("reading the CPU topology again: {e:#}");
                tries += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(e.context(format!("reading the CPU topology ({TRIES} tries)"))),
        }
    }
}

/// CPUs in the order low-power mode fills them: node by node, LLC by LLC, core by core, SMT
/// siblings next to each other. So the first N CPUs share as few cores and caches as possible
/// and everything else can stay idle. Ids are the kernel's (they need not be contiguous).
pub fn packing_order(topo: &Topology) -> Vec<i32> {
    topo.nodes
        .values()
        .flat_map(|node| node.llcs.values())
        .flat_map(|llc| llc.cores.values())
        .flat_map(|core| core.cpus.keys())
        .map(|&cpu| cpu as i32)
        .collect()
}

/// Node id of every CPU the topology knows, indexed by CPU id (`None` for ids it does not
/// know: offline or absent, possibly in the middle of the range), and the number of node ids.
pub fn cpu_nodes(topo: &Topology) -> (Vec<Option<usize>>, usize) {
    let len = topo.all_cpus.keys().max().map_or(0, |&c| c + 1);
    let mut nodes = vec![None; len];
    for (&id, cpu) in &topo.all_cpus {
        nodes[id] = Some(cpu.node_id);
    }
    let nr_nodes = topo.nodes.keys().max().map_or(1, |&n| n + 1);
    (nodes, nr_nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cpu_of_this_machine_has_its_node() {
        let topo = Topology::new().unwrap();
        let (nodes, nr_nodes) = cpu_nodes(&topo);
        assert_eq!(nodes.iter().flatten().count(), topo.all_cpus.len());
        for (id, cpu) in &topo.all_cpus {
            assert_eq!(nodes[*id], Some(cpu.node_id));
            assert!(cpu.node_id < nr_nodes);
        }
    }

    #[test]
    fn every_cpu_of_this_machine_appears_once_with_siblings_together() {
        let topo = Topology::new().unwrap();
        let order = packing_order(&topo);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), order.len(), "no CPU twice");
        assert_eq!(order.len(), topo.all_cpus.len(), "every CPU");
        for core in topo.all_cores.values() {
            let pos: Vec<usize> = core
                .cpus
                .keys()
                .map(|c| order.iter().position(|&o| o == *c as i32).unwrap())
                .collect();
            assert_eq!(
                pos.iter().max().unwrap() - pos.iter().min().unwrap(),
                pos.len() - 1
            );
        }
    }
}
