// The org definition the builder edits, and what the canvas derives from it.
import type { Config, OrgDefinition, OrgEdge, OrgNode, SlotPatch, SlotSpec } from "./api";

export const LOCAL_ID = /^[A-Za-z0-9_-]+$/;

export function prefix(slotId: string): string {
  return `usr:${slotId}:`;
}

export function localId(slotId: string, nodeId: string): string {
  const p = prefix(slotId);
  return nodeId.startsWith(p) ? nodeId.slice(p.length) : nodeId;
}

export function emptyPatch(): SlotPatch {
  return { nodes: [], edges: [], exitEdgeMode: "join" };
}

export function freshLocalId(patch: SlotPatch, slotId: string, type: string): string {
  const taken = new Set(patch.nodes.map((n) => localId(slotId, n.id)));
  for (let n = 1; ; n++) {
    const candidate = `${type}_${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}

export function edgeIdFor(patch: SlotPatch, slotId: string, source: string, target: string): string {
  const base = `${localId(slotId, source)}->${localId(slotId, target)}`;
  const taken = new Set(patch.edges.map((e) => e.id));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}#${n}`)) return `${base}#${n}`;
}

/** Default configuration of a new node: each choice's default, nothing else. */
export function defaultConfig(schema: any): Config {
  const config: Config = {};
  const props = schema?.properties ?? schema?.oneOf?.[0]?.properties ?? {};
  for (const [key, prop] of Object.entries<any>(props)) {
    if (prop && prop.default !== undefined) config[key] = prop.default;
  }
  return config;
}

/** The slot's first nodes (nothing leads in) and last nodes (nothing leads out): the
 * compiler attaches the slot's entry to the former and the latter to its exit. */
export function startsAndEnds(patch: SlotPatch): { starts: string[]; ends: string[] } {
  const ids = patch.nodes.map((n) => n.id);
  const incoming = new Set(patch.edges.map((e) => e.targetNodeId));
  const outgoing = new Set(patch.edges.map((e) => e.sourceNodeId));
  return {
    starts: ids.filter((id) => !incoming.has(id)).sort(),
    ends: ids.filter((id) => !outgoing.has(id)).sort(),
  };
}

/** What the compiler is sent: slots without nodes are left out (the envelope's own edge). */
export function forCompile(def: OrgDefinition): OrgDefinition {
  const slots: Record<string, SlotPatch> = {};
  for (const [slotId, patch] of Object.entries(def.slots).sort(([a], [b]) => a.localeCompare(b))) {
    if (patch.nodes.length === 0) continue;
    const out: SlotPatch = { ...patch, nodes: patch.nodes.map(cleanNode), edges: patch.edges.map(cleanEdge) };
    slots[slotId] = out;
  }
  return { baseRef: def.baseRef, slots };
}

function cleanNode(node: OrgNode): OrgNode {
  const config: Config = {};
  for (const [key, value] of Object.entries(node.config)) {
    if (value === "" || value === null || value === undefined) continue;
    config[key] = value;
  }
  return { id: node.id, type: node.type, config };
}

function cleanEdge(edge: OrgEdge): OrgEdge {
  const out: OrgEdge = { id: edge.id, sourceNodeId: edge.sourceNodeId, targetNodeId: edge.targetNodeId };
  if (edge.label) out.label = edge.label;
  if (edge.condition && edge.condition.trim()) out.condition = edge.condition;
  if (edge.priority) out.priority = edge.priority;
  return out;
}

export function withSlot(def: OrgDefinition, slotId: string, patch: SlotPatch): OrgDefinition {
  return { ...def, slots: { ...def.slots, [slotId]: patch } };
}

/** Renames a node (its local id) and the edges that name it. */
export function renameNode(patch: SlotPatch, slotId: string, oldId: string, local: string): SlotPatch {
  const newId = prefix(slotId) + local;
  const swap = (id: string) => (id === oldId ? newId : id);
  return {
    ...patch,
    nodes: patch.nodes.map((n) => (n.id === oldId ? { ...n, id: newId } : n)),
    edges: patch.edges.map((e) => {
      const renamed = { ...e, sourceNodeId: swap(e.sourceNodeId), targetNodeId: swap(e.targetNodeId) };
      const generated = `${localId(slotId, e.sourceNodeId)}->${localId(slotId, e.targetNodeId)}`;
      if (e.id === generated) renamed.id = `${localId(slotId, renamed.sourceNodeId)}->${localId(slotId, renamed.targetNodeId)}`;
      return renamed;
    }),
  };
}

export function removeNode(patch: SlotPatch, nodeId: string): SlotPatch {
  return {
    ...patch,
    nodes: patch.nodes.filter((n) => n.id !== nodeId),
    edges: patch.edges.filter((e) => e.sourceNodeId !== nodeId && e.targetNodeId !== nodeId),
  };
}

/** Where a slot sits in the lifecycle: between a state and a gate, or a gate and a state. */
export function slotPlace(slot: SlotSpec): string {
  const name = (id: string) => id.replace(/^sys:(state|gate):/, "");
  return `${name(slot.entryNodeId)} → ${name(slot.exitNodeId)}`;
}
