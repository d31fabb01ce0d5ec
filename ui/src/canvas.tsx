// One slot's graph on a React Flow canvas: its nodes between the slot's locked entry and exit
// pins, the edges the org drew, and (dashed) the attachments the compiler adds implicitly.
import { memo, useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  BaseEdge,
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  useNodesInitialized,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeProps,
  type Node,
  type NodeChange,
  type NodeProps,
} from "@xyflow/react";
import type { CompileError, SlotDiff, SlotPatch, SlotSpec } from "./api";
import { NODE_H, layout } from "./layout";
import { localId, startsAndEnds } from "./model";

export interface Problem extends CompileError {
  key: string;
  nodeIds: string[];
  edgeIds: string[];
}

type StepData = {
  local: string;
  nodeType: string;
  summary: string;
  problems: Problem[];
  diff: "added" | null;
};
type PinData = { label: string; pin: "entry" | "exit" };
type StepNode = Node<StepData, "step">;
type PinNode = Node<PinData, "pin">;

const StepView = memo(function StepView({ data, selected }: NodeProps<StepNode>) {
  const classes = ["step", `type-${data.nodeType}`];
  if (selected) classes.push("selected");
  if (data.problems.length) classes.push("has-problem");
  if (data.diff) classes.push(`diff-${data.diff}`);
  return (
    <div className={classes.join(" ")} data-testid={`node-${data.local}`} data-problem={data.problems.length ? "true" : "false"}>
      <Handle type="target" position={Position.Left} />
      <div className="step-type">{data.nodeType.replace("_", " ")}</div>
      <div className="step-id">{data.local}</div>
      {data.summary && <div className="step-summary">{data.summary}</div>}
      {data.problems.map((p) => (
        <div className="step-problem" key={p.key} data-testid="canvas-problem" title={p.message}>
          <b>{p.code}</b> {p.message}
        </div>
      ))}
      <Handle type="source" position={Position.Right} />
    </div>
  );
});

const PinView = memo(function PinView({ data }: NodeProps<PinNode>) {
  return (
    <div className={`pin pin-${data.pin}`} data-testid={`pin-${data.pin}`} title="System node: fixed by the contract">
      {data.pin === "exit" && <Handle type="target" position={Position.Left} isConnectable={false} />}
      <span className="pin-kind">{data.pin}</span> {data.label}
      {data.pin === "entry" && <Handle type="source" position={Position.Right} isConnectable={false} />}
    </div>
  );
});

const nodeTypes = { step: StepView, pin: PinView };

/** The envelope's direct edge a slot replaces, drawn as an arc under the slot's nodes. */
function RemovedEdge({ sourceX, sourceY, targetX, targetY, markerEnd, style, data }: EdgeProps) {
  // A cubic's middle reaches 3/4 of its control points' depth: pass 30 px under the lowest node.
  const below = typeof data?.below === "number" ? data.below : sourceY + 80;
  const control = sourceY + (below + 30 - sourceY) / 0.75;
  const path = `M ${sourceX},${sourceY} C ${sourceX + 60},${control} ${targetX - 60},${control} ${targetX},${targetY}`;
  return <BaseEdge path={path} markerEnd={markerEnd} style={style} />;
}

const edgeTypes = { removed: RemovedEdge };

function summary(type: string, config: Record<string, unknown>): string {
  const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  switch (type) {
    case "condition":
    case "script":
      return config.expression ? text(config.expression) : "";
    case "approval":
      if (config.mode === "chain") return `chain ${config.chainId ?? ""}`;
      return Array.isArray(config.approvers)
        ? config.approvers.map((a) => Object.entries(a as object).map(([k, v]) => `${k}: ${v}`).join()).join(", ")
        : "";
    case "action":
      return text(config.actionType ?? "");
    case "wait_timer":
      return text(config.duration ?? config.until ?? "");
    case "wait_event":
      return text(config.eventKey ?? "");
    case "webhook_out":
      return text(config.url ?? "");
    case "notification":
      return config.to ? `${config.channel ?? "email"} → ${text(config.to)}` : "";
    case "rule":
      return text(config.ruleId ?? "");
    case "parallel_join":
      return `waits for ${config.mode ?? "all"}`;
    default:
      return "";
  }
}

export function SlotCanvas(props: {
  slot: SlotSpec;
  patch: SlotPatch;
  problems: Problem[];
  diff: SlotDiff | null;
  showDiff: boolean;
  selected: { kind: "node" | "edge"; id: string } | null;
  editable: boolean;
  onSelect: (s: { kind: "node" | "edge"; id: string } | null) => void;
  onConnect: (source: string, target: string) => void;
  onDropType: (type: string) => void;
  onDelete: (nodes: string[], edges: string[]) => void;
}) {
  const { slot, patch, problems, diff, showDiff, selected } = props;
  const flow = useReactFlow();
  const [positions, setPositions] = useState<Record<string, { x: number; y: number }>>({});
  // Nodes are rebuilt on every render, so they carry the sizes React Flow measured (without
  // them it hides a node until it is measured again, which a node of unchanged size never is).
  const [sizes, setSizes] = useState<Record<string, { width: number; height: number }>>({});
  // Fit the view to a new layout once React Flow has measured its nodes.
  const fitPending = useRef(false);
  const measured = useNodesInitialized();
  useEffect(() => {
    if (fitPending.current && measured) {
      fitPending.current = false;
      const fit = () => flow.fitView({ padding: 0.15, maxZoom: 1.1 });
      fit();
      // Again once the store has the new positions, should this render have run first.
      const again = window.setTimeout(fit, 150);
      return () => window.clearTimeout(again);
    }
  }, [positions, measured, flow]);
  const entry = slot.entryNodeId;
  const exit = slot.exitNodeId;
  const { starts, ends } = startsAndEnds(patch);

  // Lay out again whenever the graph's structure changes (not its settings).
  const structure = useMemo(
    () =>
      JSON.stringify([
        slot.slotId,
        patch.nodes.map((n) => n.id),
        patch.edges.map((e) => [e.sourceNodeId, e.targetNodeId]),
      ]),
    [slot.slotId, patch],
  );
  useEffect(() => {
    let cancelled = false;
    const implied =
      patch.nodes.length === 0
        ? [{ id: "direct", source: entry, target: exit }]
        : [
            ...starts.map((s) => ({ id: `in:${s}`, source: entry, target: s })),
            ...ends.map((e) => ({ id: `out:${e}`, source: e, target: exit })),
          ];
    layout({
      nodes: [{ id: entry, pin: "entry" }, ...patch.nodes.map((n) => ({ id: n.id })), { id: exit, pin: "exit" }],
      edges: [
        ...implied,
        ...patch.edges.map((e) => ({ id: `e:${e.id}`, source: e.sourceNodeId, target: e.targetNodeId })),
      ],
    }).then((p) => {
      if (cancelled) return;
      fitPending.current = true;
      setPositions(p);
    });
    return () => {
      cancelled = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [structure]);

  const added = new Set(showDiff && diff ? diff.addedNodes.map((n) => n.id) : []);
  const addedEdges = new Set(showDiff && diff ? diff.addedEdges.map((e) => e.id) : []);

  const nodes: Node[] = [
    {
      id: entry,
      type: "pin",
      position: positions[entry] ?? { x: 0, y: 0 },
      measured: sizes[entry],
      data: { label: entry, pin: "entry" },
      draggable: false,
      deletable: false,
      selectable: false,
      connectable: false,
    },
    ...patch.nodes.map<Node>((n, i) => ({
      id: n.id,
      type: "step",
      position: positions[n.id] ?? { x: 220 + 40 * i, y: 140 + 30 * i },
      measured: sizes[n.id],
      selected: selected?.kind === "node" && selected.id === n.id,
      draggable: props.editable,
      deletable: props.editable,
      data: {
        local: localId(slot.slotId, n.id),
        nodeType: n.type,
        summary: summary(n.type, n.config),
        problems: problems.filter((p) => p.nodeIds.includes(n.id)),
        diff: added.has(n.id) ? "added" : null,
      },
    })),
    {
      id: exit,
      type: "pin",
      position: positions[exit] ?? { x: 600, y: 0 },
      measured: sizes[exit],
      data: { label: exit, pin: "exit" },
      draggable: false,
      deletable: false,
      selectable: false,
      connectable: false,
    },
  ];

  const implicit = (id: string, source: string, target: string, className: string, label?: string): Edge => ({
    id,
    source,
    target,
    className,
    label,
    selectable: false,
    deletable: false,
    focusable: false,
    markerEnd: { type: MarkerType.ArrowClosed },
  });
  const edges: Edge[] = [];
  if (patch.nodes.length === 0) {
    edges.push(implicit("implied:direct", entry, exit, "implied", "envelope edge"));
  } else {
    for (const s of starts) edges.push(implicit(`implied:in:${s}`, entry, s, "implied"));
    for (const e of ends) edges.push(implicit(`implied:out:${e}`, e, exit, "implied"));
    if (showDiff && diff) {
      for (const r of diff.replacedEdges) {
        if (r.source === entry && r.target === exit) {
          const below = Math.max(...patch.nodes.map((n) => (positions[n.id]?.y ?? 0) + NODE_H));
          edges.push({ ...implicit(`removed:${r.id}`, entry, exit, "diff-removed"), type: "removed", data: { below } });
        }
      }
    }
  }
  for (const e of patch.edges) {
    const bad = problems.filter((p) => p.edgeIds.includes(e.id));
    const classes = ["user-edge"];
    if (bad.length) classes.push("has-problem");
    if (addedEdges.has(e.id)) classes.push("diff-added");
    const parts = [e.label, e.condition ? `if ${e.condition}` : "", bad.length ? bad.map((b) => b.code).join(", ") : ""];
    edges.push({
      id: `edge:${e.id}`,
      source: e.sourceNodeId,
      target: e.targetNodeId,
      className: classes.join(" "),
      label: parts.filter(Boolean).join(" · ") || undefined,
      selected: selected?.kind === "edge" && selected.id === e.id,
      deletable: props.editable,
      markerEnd: { type: MarkerType.ArrowClosed },
      data: { edgeId: e.id },
    });
  }

  // Keep the slot in view when the canvas itself changes size (window, panels).
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element || typeof ResizeObserver === "undefined") return;
    let last = "";
    const observer = new ResizeObserver(([entry]) => {
      const size = `${Math.round(entry.contentRect.width)}x${Math.round(entry.contentRect.height)}`;
      if (last && size !== last) flow.fitView({ padding: 0.15, maxZoom: 1.1 });
      last = size;
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [flow]);

  const own = useMemo(() => new Set(patch.nodes.map((n) => n.id)), [patch]);
  const isValidConnection = useCallback(
    (c: Connection | Edge) => c.source !== c.target && own.has(c.source) && own.has(c.target),
    [own],
  );

  const onNodesChange = useCallback(
    (changes: NodeChange[]) => {
      const measuredNow = changes.filter((c) => c.type === "dimensions" && c.dimensions);
      if (measuredNow.length) {
        setSizes((current) => {
          const next = { ...current };
          for (const c of measuredNow) if (c.type === "dimensions" && c.dimensions) next[c.id] = c.dimensions;
          return next;
        });
      }
      setPositions((current) => {
        let next = current;
        for (const change of changes) {
          if (change.type === "position" && change.position) {
            next = next === current ? { ...current } : next;
            next[change.id] = change.position;
          }
        }
        return next;
      });
    },
    [],
  );

  return (
    <div
      ref={box}
      className="canvas"
      data-testid="canvas"
      onDragOver={(e) => {
        if (e.dataTransfer.types.includes("application/x-charter-node")) {
          e.preventDefault();
          e.dataTransfer.dropEffect = "copy";
        }
      }}
      onDrop={(e) => {
        const type = e.dataTransfer.getData("application/x-charter-node");
        if (type && props.editable) {
          e.preventDefault();
          props.onDropType(type);
        }
      }}
    >
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onConnect={(c) => c.source && c.target && props.onConnect(c.source, c.target)}
        isValidConnection={isValidConnection}
        connectOnClick
        nodesConnectable={props.editable}
        onNodeClick={(_, node) => node.type === "step" && props.onSelect({ kind: "node", id: node.id })}
        onEdgeClick={(_, edge) => {
          const id = (edge.data as { edgeId?: string } | undefined)?.edgeId;
          if (id) props.onSelect({ kind: "edge", id });
        }}
        onPaneClick={() => props.onSelect(null)}
        onDelete={({ nodes: n, edges: e }) =>
          props.onDelete(
            n.filter((x) => x.type === "step").map((x) => x.id),
            e.map((x) => (x.data as { edgeId?: string } | undefined)?.edgeId).filter((x): x is string => !!x),
          )
        }
        deleteKeyCode={props.editable ? ["Delete", "Backspace"] : null}
        fitView
        minZoom={0.2}
        maxZoom={2}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={20} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
