// The visual slot builder: an org admin edits the body slots of an entity type's workflow,
// with live compilation through charter's API, and publishes or rolls back versions.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ReactFlowProvider } from "@xyflow/react";
import type {
  Api,
  BuilderData,
  CompileError,
  CompileResult,
  Config,
  Diff,
  OrgDefinition,
  OrgEdge,
  SlotPatch,
  SlotSpec,
  TemplateSummary,
  Version,
} from "./api";
import { SlotCanvas, type Problem } from "./canvas";
import { ExpressionEditor, NodeForm, type FormContext } from "./forms";
import {
  LOCAL_ID,
  defaultConfig,
  edgeIdFor,
  emptyPatch,
  forCompile,
  freshLocalId,
  localId,
  prefix,
  removeNode,
  renameNode,
  withSlot,
} from "./model";

const PALETTE = [
  "action",
  "approval",
  "condition",
  "script",
  "rule",
  "wait_timer",
  "wait_event",
  "webhook_out",
  "notification",
  "parallel_split",
  "parallel_join",
];
const EDGE_LABELS = ["true", "false", "approved", "rejected", "timeout", "failed"];

type Selection = { kind: "node" | "edge"; id: string } | null;
type CompileState = { pending: boolean; result: CompileResult | null; failure: string | null };

/** A copy of ``base`` (the published definition, a draft or a template) to edit, or an empty
 * definition on the org's envelope. */
function editableCopy(data: BuilderData, base: OrgDefinition | null | undefined): OrgDefinition {
  const def: OrgDefinition = base
    ? JSON.parse(JSON.stringify(base))
    : { baseRef: { entityType: data.entityType, envelopeVersion: data.envelopeVersion }, slots: {} };
  def.slots = def.slots ?? {};
  for (const patch of Object.values(def.slots)) {
    patch.nodes = patch.nodes ?? [];
    patch.edges = patch.edges ?? [];
    for (const node of patch.nodes) node.config = node.config ?? {};
  }
  return def;
}

/** Which nodes and edges a refusal concerns: the ids it names, else those its message names. */
function toProblems(errors: CompileError[], def: OrgDefinition): Problem[] {
  const allNodes = Object.values(def.slots).flatMap((p) => p.nodes.map((n) => n.id));
  const allEdges = Object.values(def.slots).flatMap((p) => p.edges.map((e) => e.id));
  return errors.map((error, i) => {
    let nodeIds = error.nodeId ? [error.nodeId] : [];
    let edgeIds = error.edgeId ? [error.edgeId] : [];
    if (!nodeIds.length && !edgeIds.length) {
      const text = error.message;
      const named = (id: string) => new RegExp(`(^|[\\s,(])${id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=$|[\\s,:;.)'])`).test(text);
      edgeIds = allEdges.filter((id) => text.includes(`edge ${id} `) || text.includes(`Edge ${id} `));
      nodeIds = allNodes.filter(named);
    }
    return { ...error, key: `${i}:${error.code}`, nodeIds, edgeIds };
  });
}

function slotOf(def: OrgDefinition, problem: Problem): string | null {
  if (problem.slotId) return problem.slotId;
  for (const [slotId, patch] of Object.entries(def.slots)) {
    if (patch.nodes.some((n) => problem.nodeIds.includes(n.id))) return slotId;
    if (patch.edges.some((e) => problem.edgeIds.includes(e.id))) return slotId;
  }
  return null;
}

export function App(props: { api: Api; entityType: string; definitionsUrl: string }) {
  const { api, entityType } = props;
  const [data, setData] = useState<BuilderData | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [def, setDef] = useState<OrgDefinition | null>(null);
  const [slotId, setSlotId] = useState<string | null>(null);
  const [selected, setSelected] = useState<Selection>(null);
  const [compile, setCompile] = useState<CompileState>({ pending: true, result: null, failure: null });
  const [showDiff, setShowDiff] = useState(true);
  const [versions, setVersions] = useState<Version[]>([]);
  const [templates, setTemplates] = useState<TemplateSummary[]>([]);
  const [message, setMessage] = useState<{ text: string; bad?: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const [dirty, setDirty] = useState(false);

  const load = useCallback(async () => {
    try {
      const loaded = await api.builder(entityType);
      setData(loaded);
      setDef(editableCopy(loaded, loaded.definition));
      setSlotId((current) => current ?? loaded.contract.slots[0]?.slotId ?? null);
      setSelected(null);
      setDirty(false);
      setLoadError(null);
    } catch (e: any) {
      setLoadError(String(e.message ?? e));
    }
    api.versions(entityType).then(setVersions, () => setVersions([]));
  }, [api, entityType]);

  useEffect(() => {
    load();
    api.templates().then(setTemplates, () => setTemplates([]));
  }, [load, api]);

  // Live compile, debounced; the newest answer wins.
  const compileSeq = useRef(0);
  useEffect(() => {
    if (!def) return;
    const mine = ++compileSeq.current;
    setCompile((c) => ({ ...c, pending: true }));
    const timer = window.setTimeout(() => {
      api.compile(forCompile(def)).then(
        (result) => mine === compileSeq.current && setCompile({ pending: false, result, failure: null }),
        (e) => mine === compileSeq.current && setCompile({ pending: false, result: null, failure: String(e.message ?? e) }),
      );
    }, 300);
    return () => window.clearTimeout(timer);
  }, [def, api]);

  const problems = useMemo<Problem[]>(
    () => (def && compile.result && !compile.result.ok ? toProblems(compile.result.errors, def) : []),
    [compile.result, def],
  );
  const diff: Diff | null = compile.result && compile.result.ok ? (compile.result.diff ?? null) : null;

  const ctx: FormContext = useMemo(() => ({ api, entityType }), [api, entityType]);

  // Leaving with unsaved changes asks first.
  useEffect(() => {
    if (!dirty) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

  if (loadError) return <div className="builder-error">Could not load the builder: {loadError}</div>;
  if (!data || !def) return <div className="builder-loading">Loading…</div>;

  const canEdit = data.canEdit !== false;
  const labels = data.edgeLabels?.length ? data.edgeLabels : EDGE_LABELS;
  const slot: SlotSpec | undefined = data.contract.slots.find((s) => s.slotId === slotId);
  const patch: SlotPatch = (slotId && def.slots[slotId]) || emptyPatch();

  const change = (next: OrgDefinition) => {
    setDef(next);
    setDirty(true);
  };
  const changePatch = (next: SlotPatch) => slotId && change(withSlot(def, slotId, next));

  const addNode = (type: string) => {
    if (!slotId || !canEdit) return;
    const local = freshLocalId(patch, slotId, type);
    const id = prefix(slotId) + local;
    const config = defaultConfig(data.nodeSchemas[type]);
    changePatch({ ...patch, nodes: [...patch.nodes, { id, type, config }] });
    setSelected({ kind: "node", id });
  };

  const connect = (source: string, target: string, label = "") => {
    if (!slotId || source === target) return;
    const edge: OrgEdge = { id: edgeIdFor(patch, slotId, source, target), sourceNodeId: source, targetNodeId: target };
    if (label) edge.label = label;
    changePatch({ ...patch, edges: [...patch.edges, edge] });
    setSelected({ kind: "edge", id: edge.id });
  };

  const remove = (nodes: string[], edges: string[]) => {
    let next = patch;
    for (const n of nodes) next = removeNode(next, n);
    next = { ...next, edges: next.edges.filter((e) => !edges.includes(e.id)) };
    changePatch(next);
    setSelected(null);
  };

  const run = async (what: string, action: () => Promise<unknown>, after?: () => Promise<void> | void) => {
    setBusy(true);
    setMessage(null);
    try {
      await action();
      setMessage({ text: what });
      if (after) await after();
    } catch (e: any) {
      setMessage({ text: String(e.message ?? e), bad: true });
    } finally {
      setBusy(false);
    }
  };

  const saveDraft = () => {
    const saved = forCompile(def);
    return run("Draft saved.", () => api.saveDraft(saved), () => {
      setDirty(false);
      setData({ ...data, draft: saved });
    });
  };
  const publish = () =>
    run("Published.", () => api.publish(entityType, forCompile(def)), async () => {
      await load();
      setMessage({ text: "Published." });
    });
  const rollback = (v: Version) =>
    run(`Rolled back to version ${v.version}.`, () => api.rollback(entityType, v.versionId), async () => {
      await load();
      setMessage({ text: `Rolled back to version ${v.version}.` });
    });

  const useTemplate = async (name: string) => {
    try {
      const template = await api.template(name);
      // A template written for another entity type still fits the slots both declare; the
      // live compile says whether its expressions fit this contract's fields.
      const ours = new Set(data.contract.slots.map((s) => s.slotId));
      const theirs = Object.keys(template.orgDefinition.slots ?? {});
      const fitting = theirs.filter((s) => ours.has(s));
      if (fitting.length === 0) {
        setMessage({
          text: `Template ${name} fills slot(s) ${theirs.join(", ") || "none"}; ${entityType} declares ${[...ours].join(", ")}.`,
          bad: true,
        });
        return;
      }
      const next = editableCopy(data, {
        baseRef: { entityType, envelopeVersion: data.envelopeVersion },
        slots: Object.fromEntries(fitting.map((s) => [s, template.orgDefinition.slots[s]])),
      });
      change(next);
      setSlotId(fitting[0]);
      setSelected(null);
      const skipped = theirs.filter((s) => !ours.has(s));
      setMessage({
        text: `Started from template ${template.title ?? name}` + (skipped.length ? ` (not ${entityType}'s: ${skipped.join(", ")}).` : "."),
      });
    } catch (e: any) {
      setMessage({ text: String(e.message ?? e), bad: true });
    }
  };

  const status = compile.pending
    ? "compiling…"
    : compile.failure
      ? "compile failed"
      : problems.length === 0
        ? "ok"
        : `${problems.length} ${problems.length === 1 ? "problem" : "problems"}`;

  const selectProblem = (p: Problem) => {
    const owner = slotOf(def, p);
    if (owner) setSlotId(owner);
    if (p.nodeIds[0]) setSelected({ kind: "node", id: p.nodeIds[0] });
    else if (p.edgeIds[0]) setSelected({ kind: "edge", id: p.edgeIds[0] });
  };

  return (
    <div className="builder">
      <aside className="side left">
        <SlotsPanel
          data={data}
          def={def}
          current={slotId}
          problems={problems}
          onPick={(s) => {
            setSlotId(s);
            setSelected(null);
          }}
        />
        {canEdit && (
          <section className="palette" aria-label="Node palette">
            <h3>Add a node</h3>
            <p className="muted">Click, or drag onto the canvas.</p>
            {PALETTE.filter((t) => !data.nodeTypes || data.nodeTypes.includes(t)).map((type) => (
              <button
                type="button"
                key={type}
                className={`palette-item type-${type}`}
                data-testid={`palette-${type}`}
                draggable
                disabled={!slot}
                onDragStart={(e) => {
                  e.dataTransfer.setData("application/x-charter-node", type);
                  e.dataTransfer.effectAllowed = "copy";
                }}
                onClick={() => addNode(type)}
              >
                {type.replace("_", " ")}
              </button>
            ))}
          </section>
        )}
      </aside>

      <section className="centre">
        <div className="toolbar">
          {props.definitionsUrl && (
            <a href={props.definitionsUrl} className="back">
              ← Definitions
            </a>
          )}
          <strong>{slot ? slot.slotId : "no slot"}</strong>
          {slot && (
            <span className="muted">
              {" "}
              between {slot.entryNodeId} and {slot.exitNodeId} · edit window {patch.editWindowOverride ?? slot.defaultEditWindow}
            </span>
          )}
          <span className="spacer" />
          <span className={`compile-status ${status === "ok" ? "good" : compile.pending ? "" : "bad"}`} data-testid="compile-status">
            {status}
          </span>
          <label className="inline">
            <input type="checkbox" data-testid="show-diff" checked={showDiff} onChange={(e) => setShowDiff(e.target.checked)} /> diff
          </label>
          {canEdit && data.draft && (
            <button
              type="button"
              data-testid="open-draft"
              title="Replace the canvas with the last saved draft"
              onClick={() => {
                change(editableCopy(data, data.draft));
                setSelected(null);
                setMessage({ text: "Opened the saved draft." });
              }}
            >
              Open draft
            </button>
          )}
          {canEdit && (
            <>
              <button type="button" data-testid="save-draft" disabled={busy} onClick={saveDraft}>
                Save draft
              </button>
              <button
                type="button"
                className="primary"
                data-testid="publish"
                disabled={busy || compile.pending || problems.length > 0 || !!compile.failure}
                onClick={publish}
              >
                Publish
              </button>
            </>
          )}
        </div>
        {message && (
          <div className={`message ${message.bad ? "bad" : "good"}`} data-testid="message" role="status">
            {message.text}
          </div>
        )}
        {compile.failure && <div className="message bad">{compile.failure}</div>}
        {slot ? (
          <ReactFlowProvider>
            <SlotCanvas
              slot={slot}
              patch={patch}
              problems={problems}
              diff={diff?.slots?.[slot.slotId] ?? null}
              showDiff={showDiff}
              selected={selected}
              editable={canEdit}
              onSelect={setSelected}
              onConnect={(s, t) => connect(s, t)}
              onDropType={addNode}
              onDelete={remove}
            />
          </ReactFlowProvider>
        ) : (
          <div className="canvas empty">This contract declares no slots.</div>
        )}
        <div className="below">
          <ProblemsList problems={problems} onPick={selectProblem} />
          {showDiff && <DiffText diff={diff} />}
        </div>
      </section>

      <aside className="side right">
        {slot && selected?.kind === "node" && patch.nodes.some((n) => n.id === selected.id) ? (
          <NodeInspector
            ctx={ctx}
            data={data}
            slotId={slot.slotId}
            patch={patch}
            nodeId={selected.id}
            editable={canEdit}
            problems={problems.filter((p) => p.nodeIds.includes(selected.id))}
            onPatch={changePatch}
            onSelect={setSelected}
            onConnect={connect}
            onRemove={() => remove([selected.id], [])}
            labels={labels}
          />
        ) : slot && selected?.kind === "edge" && patch.edges.some((e) => e.id === selected.id) ? (
          <EdgeInspector
            ctx={ctx}
            slotId={slot.slotId}
            patch={patch}
            edgeId={selected.id}
            editable={canEdit}
            problems={problems.filter((p) => p.edgeIds.includes(selected.id))}
            onPatch={changePatch}
            onRemove={() => remove([], [selected.id])}
            labels={labels}
          />
        ) : slot ? (
          <SlotSettings slot={slot} patch={patch} editable={canEdit} onPatch={changePatch} />
        ) : null}
        <VersionsPanel versions={versions} editable={canEdit} busy={busy} dirty={dirty} onRollback={rollback} />
        {canEdit && templates.length > 0 && <TemplatePicker templates={templates} entityType={entityType} onUse={useTemplate} />}
      </aside>
    </div>
  );
}

// -- left: the lifecycle with its slots ----------------------------------------------------------

function SlotsPanel(props: {
  data: BuilderData;
  def: OrgDefinition;
  current: string | null;
  problems: Problem[];
  onPick: (slotId: string) => void;
}) {
  const { contract } = props.data;
  const shown = new Set<string>();
  const slotButton = (s: SlotSpec) => {
    if (shown.has(s.slotId)) {
      // A slot before a gate that several transitions share: one button, the rest name it.
      return (
        <span key={s.slotId} className="slot-again">
          {s.slotId.replace(/^slot:/, "")}
        </span>
      );
    }
    shown.add(s.slotId);
    const count = props.def.slots[s.slotId]?.nodes.length ?? 0;
    const bad = props.problems.some((p) => slotOf(props.def, p) === s.slotId);
    return (
      <button
        type="button"
        key={s.slotId}
        className={`slot ${props.current === s.slotId ? "current" : ""} ${bad ? "has-problem" : ""}`}
        data-testid={`slot-${s.slotId}`}
        onClick={() => props.onPick(s.slotId)}
        title={`${s.entryNodeId} → ${s.exitNodeId}`}
      >
        {s.slotId.replace(/^slot:/, "")}
        <span className="count">{count ? `${count} node${count === 1 ? "" : "s"}` : "empty"}</span>
      </button>
    );
  };
  const at = (entry: string, exit: string) => contract.slots.filter((s) => s.entryNodeId === entry && s.exitNodeId === exit);
  return (
    <section className="lifecycle" aria-label="Lifecycle and slots">
      <h3>Lifecycle · {props.data.entityType}</h3>
      <ol className="transitions">
        {contract.transitions.map((t, i) => {
          const before = at(`sys:state:${t.from}`, `sys:gate:${t.gate}`);
          const after = at(`sys:gate:${t.gate}`, `sys:state:${t.to}`);
          return (
            <li key={i}>
              <span className="state">{t.from}</span>
              {before.map(slotButton)}
              <span className="gate">◆ {t.gate}{t.label ? ` (${t.label})` : ""}</span>
              {after.map(slotButton)}
              <span className="state">{t.to}</span>
            </li>
          );
        })}
      </ol>
      {contract.slots.filter((s) => !shown.has(s.slotId)).length > 0 && (
        <div className="other-slots">{contract.slots.filter((s) => !shown.has(s.slotId)).map(slotButton)}</div>
      )}
    </section>
  );
}

// -- right: what is selected ---------------------------------------------------------------------

function NodeInspector(props: {
  ctx: FormContext;
  data: BuilderData;
  slotId: string;
  patch: SlotPatch;
  nodeId: string;
  editable: boolean;
  problems: Problem[];
  onPatch: (p: SlotPatch) => void;
  onSelect: (s: Selection) => void;
  onConnect: (source: string, target: string, label?: string) => void;
  onRemove: () => void;
  labels: string[];
}) {
  const { slotId, patch, nodeId } = props;
  const node = patch.nodes.find((n) => n.id === nodeId)!;
  const [local, setLocal] = useState(localId(slotId, nodeId));
  const [target, setTarget] = useState("");
  const [label, setLabel] = useState("");
  // Another node was picked (a rename keeps the text being typed).
  useEffect(() => {
    if (localId(slotId, nodeId) !== local) {
      setLocal(localId(slotId, nodeId));
      setTarget("");
      setLabel("");
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [nodeId, slotId]);
  const others = patch.nodes.filter((n) => n.id !== nodeId);
  const idProblem = !LOCAL_ID.test(local)
    ? "letters, digits, _ and - only"
    : local !== localId(slotId, nodeId) && patch.nodes.some((n) => n.id === prefix(slotId) + local)
      ? "another node has this id"
      : null;
  const setConfig = (config: Config) =>
    props.onPatch({ ...patch, nodes: patch.nodes.map((n) => (n.id === nodeId ? { ...n, config } : n)) });
  const outgoing = patch.edges.filter((e) => e.sourceNodeId === nodeId);
  return (
    <section className="inspector" data-testid="inspector-node">
      <h3>
        {node.type.replace("_", " ")} <span className="muted">node</span>
      </h3>
      {props.problems.map((p) => (
        <div className="problem-inline" key={p.key}>
          <b>{p.code}</b> {p.message}
        </div>
      ))}
      <fieldset disabled={!props.editable}>
        <label className="field">
          <span className="field-name">id</span>
          <input
            data-testid="field-id"
            className={idProblem ? "invalid" : undefined}
            value={local}
            onChange={(e) => {
              const value = e.target.value;
              setLocal(value);
              const fresh = prefix(slotId) + value;
              if (LOCAL_ID.test(value) && fresh !== nodeId && !patch.nodes.some((n) => n.id === fresh)) {
                props.onPatch(renameNode(patch, slotId, nodeId, value));
                props.onSelect({ kind: "node", id: fresh });
              }
            }}
          />
          <span className="hint">
            {idProblem ?? (
              <>
                <code>{prefix(slotId)}</code>
                {local}
              </>
            )}
          </span>
        </label>
        <NodeForm ctx={props.ctx} nodeType={node.type} schema={props.data.nodeSchemas[node.type] ?? {}} config={node.config} onChange={setConfig} />
        <div className="connect">
          <span className="field-name">Connect to…</span>
          <select data-testid="connect-target" value={target} onChange={(e) => setTarget(e.target.value)}>
            <option value="">—</option>
            {others.map((n) => (
              <option key={n.id} value={n.id}>
                {localId(slotId, n.id)}
              </option>
            ))}
          </select>
          <select data-testid="connect-label" value={label} onChange={(e) => setLabel(e.target.value)}>
            {["", ...props.labels].map((l) => (
              <option key={l} value={l}>
                {l || "no label"}
              </option>
            ))}
          </select>
          <button
            type="button"
            data-testid="connect"
            disabled={!target}
            onClick={() => {
              props.onConnect(nodeId, target, label);
              setTarget("");
              setLabel("");
            }}
          >
            Connect
          </button>
        </div>
        {outgoing.length > 0 && (
          <ul className="edges">
            {outgoing.map((e) => (
              <li key={e.id}>
                <button type="button" className="link" onClick={() => props.onSelect({ kind: "edge", id: e.id })}>
                  → {localId(slotId, e.targetNodeId)}
                  {e.label ? ` [${e.label}]` : ""}
                  {e.condition ? ` if ${e.condition}` : ""}
                </button>
              </li>
            ))}
          </ul>
        )}
        <button type="button" className="danger" data-testid="delete-node" onClick={props.onRemove}>
          Delete node
        </button>
      </fieldset>
    </section>
  );
}

function EdgeInspector(props: {
  ctx: FormContext;
  slotId: string;
  patch: SlotPatch;
  edgeId: string;
  editable: boolean;
  problems: Problem[];
  onPatch: (p: SlotPatch) => void;
  onRemove: () => void;
  labels: string[];
}) {
  const { slotId, patch, edgeId } = props;
  const edge = patch.edges.find((e) => e.id === edgeId)!;
  const set = (changes: Partial<OrgEdge>) =>
    props.onPatch({ ...patch, edges: patch.edges.map((e) => (e.id === edgeId ? { ...e, ...changes } : e)) });
  return (
    <section className="inspector" data-testid="inspector-edge">
      <h3>
        Edge <span className="muted">{edge.id}</span>
      </h3>
      <p>
        {localId(slotId, edge.sourceNodeId)} → {localId(slotId, edge.targetNodeId)}
      </p>
      {props.problems.map((p) => (
        <div className="problem-inline" key={p.key}>
          <b>{p.code}</b> {p.message}
        </div>
      ))}
      <fieldset disabled={!props.editable}>
        <label className="field">
          <span className="field-name">label</span>
          <select data-testid="field-label" value={edge.label ?? ""} onChange={(e) => set({ label: e.target.value || undefined })}>
            {["", ...props.labels].map((l) => (
              <option key={l} value={l}>
                {l || "none"}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-name">condition</span>
          <ExpressionEditor
            ctx={props.ctx}
            kind="edge"
            testid="field-condition"
            value={edge.condition ?? ""}
            placeholder="optional, e.g. entity.grand_total > 10000"
            onChange={(v) => set({ condition: v || undefined })}
          />
        </label>
        <label className="field">
          <span className="field-name">priority</span>
          <input
            type="number"
            data-testid="field-priority"
            value={edge.priority ?? 0}
            onChange={(e) => set({ priority: Number(e.target.value) || undefined })}
          />
        </label>
        <button type="button" className="danger" data-testid="delete-edge" onClick={props.onRemove}>
          Delete edge
        </button>
      </fieldset>
    </section>
  );
}

function SlotSettings(props: { slot: SlotSpec; patch: SlotPatch; editable: boolean; onPatch: (p: SlotPatch) => void }) {
  const { slot, patch } = props;
  return (
    <section className="inspector" data-testid="slot-settings">
      <h3>Slot {slot.slotId}</h3>
      <p className="muted">
        Its first nodes follow {slot.entryNodeId}; its last lead to {slot.exitNodeId} (drawn dashed: the compiler attaches them).
        {slot.stableRegion ? " A stable region." : ""}
      </p>
      <fieldset disabled={!props.editable}>
        <SelectField
          name="entryEdgeMode"
          label="entry"
          value={patch.entryEdgeMode ?? "serial"}
          options={[
            ["serial", "serial: one first node"],
            ["branch", "branch: several first nodes"],
          ]}
          onChange={(v) => props.onPatch({ ...patch, entryEdgeMode: v as "serial" | "branch" })}
        />
        <SelectField
          name="exitEdgeMode"
          label="exit"
          value={patch.exitEdgeMode ?? "single"}
          options={[
            ["single", "single: one last node"],
            ["join", "join: several last nodes"],
          ]}
          onChange={(v) => props.onPatch({ ...patch, exitEdgeMode: v as "single" | "join" })}
        />
        <SelectField
          name="editWindowOverride"
          label="edit window"
          value={patch.editWindowOverride ?? ""}
          options={[
            ["", `${slot.defaultEditWindow} (the slot's)`],
            ...["editable", "amend_only", "locked"].map((w): [string, string] => [w, w]),
          ]}
          onChange={(v) => props.onPatch({ ...patch, editWindowOverride: v || undefined })}
        />
      </fieldset>
    </section>
  );
}

function SelectField(props: {
  name: string;
  label: string;
  value: string;
  options: [string, string][];
  onChange: (value: string) => void;
}) {
  return (
    <label className="field">
      <span className="field-name">{props.label}</span>
      <select data-testid={`field-${props.name}`} value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

// -- below the canvas ----------------------------------------------------------------------------

function ProblemsList(props: { problems: Problem[]; onPick: (p: Problem) => void }) {
  return (
    <section className="problems" aria-label="Problems">
      <h3>Problems</h3>
      {props.problems.length === 0 ? (
        <p className="muted">None: the workflow compiles.</p>
      ) : (
        <ul>
          {props.problems.map((p) => (
            <li key={p.key}>
              <button type="button" className="problem" data-testid="problem" onClick={() => props.onPick(p)}>
                <b>{p.code}</b> {p.message}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function DiffText(props: { diff: Diff | null }) {
  const slots = Object.entries(props.diff?.slots ?? {});
  return (
    <section className="diff-text" aria-label="Changes from the envelope" data-testid="diff-text">
      <h3>Changes from the envelope</h3>
      {slots.length === 0 ? (
        <p className="muted">{props.diff ? "None: the bare lifecycle." : "Shown once the workflow compiles."}</p>
      ) : (
        slots.map(([slotId, d]) => (
          <div key={slotId}>
            <h4>
              {slotId}
              {d.slotEditWindow ? ` · ${d.slotEditWindow}` : ""}
            </h4>
            <ul>
              {d.addedNodes.map((n) => (
                <li className="added" key={`n${n.id}`}>
                  + node {n.id} ({n.type})
                </li>
              ))}
              {d.addedEdges.map((e) => (
                <li className="added" key={`e${e.id}`}>
                  + edge {e.source} → {e.target}
                  {e.label ? ` [${e.label}]` : ""}
                </li>
              ))}
              {d.replacedEdges.map((e) => (
                <li className="removed" key={`r${e.id}`}>
                  − edge {e.source} → {e.target}
                </li>
              ))}
              {(d.editWindows ?? []).map((w) => (
                <li key={`w${w.node}`}>
                  ~ {w.node}: {w.from ?? "—"} → {w.to}
                </li>
              ))}
            </ul>
          </div>
        ))
      )}
    </section>
  );
}

function VersionsPanel(props: {
  versions: Version[];
  editable: boolean;
  busy: boolean;
  dirty: boolean;
  onRollback: (v: Version) => void;
}) {
  return (
    <section className="versions" aria-label="Version history">
      <h3>Versions</h3>
      {props.versions.length === 0 ? (
        <p className="muted">None published yet.</p>
      ) : (
        <ul>
          {props.versions.filter((v) => v.kind !== "org_patch" || v.status === "draft").map((v) => (
            <li key={v.versionId} className={v.current ? "current" : ""} data-testid={`version-${v.versionId}`}>
              <span>
                v{v.version} · {v.status}
                {v.kind ? ` · ${v.kind}` : ""}
                {v.current ? " · current" : ""}
              </span>
              <span className="muted small">
                {v.createdAt ? new Date(v.createdAt).toLocaleString() : ""}
                {v.createdBy ? ` · ${v.createdBy}` : ""}
              </span>
              {props.editable && !v.current && v.status === "published" && (
                <button
                  type="button"
                  className="small"
                  data-testid={`rollback-${v.versionId}`}
                  disabled={props.busy}
                  title={props.dirty ? "Unsaved changes in the canvas are replaced" : undefined}
                  onClick={() => props.onRollback(v)}
                >
                  Roll back to v{v.version}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function TemplatePicker(props: { templates: TemplateSummary[]; entityType: string; onUse: (name: string) => void }) {
  const [name, setName] = useState("");
  return (
    <section className="templates" aria-label="Templates">
      <h3>Start from a template</h3>
      <select data-testid="template-select" value={name} onChange={(e) => setName(e.target.value)}>
        <option value="">—</option>
        {props.templates.map((t) => (
          <option key={t.name} value={t.name} title={t.description}>
            {t.title ?? t.name}
            {t.entityType && t.entityType !== props.entityType ? ` (for ${t.entityType})` : ""}
          </option>
        ))}
      </select>
      <button type="button" data-testid="use-template" disabled={!name} onClick={() => props.onUse(name)}>
        Use
      </button>
    </section>
  );
}
