//! The component model's own way to stack: one component's export plugged into another's
//! import, made into one component with `wac-graph` (the library behind `wac plug`).

use wac_graph::types::Package;
use wac_graph::{CompositionGraph, EncodeOptions};

/// `socket` with `plug`'s exports plugged into the imports they match.
pub fn plug(socket: &[u8], plug: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut graph = CompositionGraph::new();
    let socket = Package::from_bytes("reasons:socket", None, socket.to_vec(), graph.types_mut())?;
    let socket = graph.register_package(socket)?;
    let plug = Package::from_bytes("reasons:plug", None, plug.to_vec(), graph.types_mut())?;
    let plug = graph.register_package(plug)?;
    wac_graph::plug(&mut graph, vec![plug], socket)?;
    Ok(graph.encode(EncodeOptions::default())?)
}
