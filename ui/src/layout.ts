// Positions for a slot's graph, left to right, from elkjs (its bundled, worker-less build).
import ELK from "elkjs/lib/elk.bundled.js";


const elk = new ELK();

export const NODE_W = 180;
export const NODE_H = 84;
export const PIN_W = 150;
export const PIN_H = 40;

export interface LayoutInput {
  nodes: { id: string; pin?: "entry" | "exit" }[];
  edges: { id: string; source: string; target: string }[];
}

export async function layout(input: LayoutInput): Promise<Record<string, { x: number; y: number }>> {
  const graph = {
    id: "slot",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.spacing.nodeNode": "40",
      "elk.layered.spacing.nodeNodeBetweenLayers": "70",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
    },
    children: input.nodes.map((n) => ({
      id: n.id,
      width: n.pin ? PIN_W : NODE_W,
      height: n.pin ? PIN_H : NODE_H,
      layoutOptions: (n.pin === "entry"
          ? { "elk.layered.layering.layerConstraint": "FIRST" }
          : n.pin === "exit"
            ? { "elk.layered.layering.layerConstraint": "LAST" }
            : {}) as Record<string, string>,
    })),
    edges: input.edges.map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  };
  const out = await elk.layout(graph);
  const positions: Record<string, { x: number; y: number }> = {};
  for (const child of out.children ?? []) positions[child.id] = { x: child.x ?? 0, y: child.y ?? 0 };
  return positions;
}
