// The builder's calls to charter's API (same origin; the dashboard's session signs them).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Config = { [key: string]: Json };

export interface SlotSpec {
  slotId: string;
  entryNodeId: string;
  exitNodeId: string;
  defaultEditWindow: string;
  stableRegion?: boolean;
}

export interface Contract {
  entityType?: string;
  states: { id: string; editWindow?: string; final?: boolean }[];
  transitions: { from: string; to: string; gate: string; label?: string }[];
  slots: SlotSpec[];
  fields?: Record<string, string>;
}

export interface OrgNode {
  id: string;
  type: string;
  config: Config;
}

export interface OrgEdge {
  id: string;
  sourceNodeId: string;
  targetNodeId: string;
  label?: string;
  condition?: string;
  priority?: number;
}

export interface SlotPatch {
  nodes: OrgNode[];
  edges: OrgEdge[];
  entryEdgeMode?: "serial" | "branch";
  exitEdgeMode?: "single" | "join";
  editWindowOverride?: string;
}

export interface OrgDefinition {
  baseRef: { entityType: string; envelopeVersion: number };
  slots: Record<string, SlotPatch>;
}

export type Schema = { [key: string]: any };

export interface BuilderData {
  entityType: string;
  contract: Contract;
  envelopeVersion: number;
  envelope?: Json;
  definition: OrgDefinition | null;
  draft?: OrgDefinition | null;
  currentVersionId?: string | null;
  nodeSchemas: Record<string, Schema>;
  nodeTypes: string[];
  edgeLabels?: string[];
  fields?: Record<string, string>;
  functions?: string[];
  canEdit?: boolean;
}

export interface CompileError {
  code: string;
  message: string;
  slotId?: string | null;
  nodeId?: string | null;
  edgeId?: string | null;
  path?: string | null;
  caret?: number | null;
}

export interface SlotDiff {
  addedNodes: { id: string; type: string }[];
  addedEdges: { id: string; source: string; target: string; label?: string }[];
  replacedEdges: { id: string; source: string; target: string }[];
  editWindows?: { node: string; from: string | null; to: string }[];
  slotEditWindow?: string;
}

export interface Diff {
  entityType?: string;
  envelopeVersion?: number;
  slots: Record<string, SlotDiff>;
}

export type CompileResult =
  | { ok: true; compiled?: Json; diff?: Diff; warnings?: string[] }
  | { ok: false; errors: CompileError[] };

export type CheckResult =
  | { ok: true; type?: string }
  | { ok: false; error: { message: string; caret?: number | null; line?: number | null } };

export interface Version {
  versionId: string;
  version: number;
  status: string;
  kind?: string;
  envelopeVersion?: number;
  createdAt?: string;
  createdBy?: string;
  hash?: string;
  current?: boolean;
}

export interface TemplateSummary {
  name: string;
  title?: string;
  description?: string;
  entityType?: string;
}

export interface Template extends TemplateSummary {
  contract?: Contract;
  orgDefinition: OrgDefinition;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body: any,
  ) {
    super(message);
  }
}

export class Api {
  constructor(
    readonly base: string,
    readonly csrf: string | null,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.csrf) headers["x-csrf-token"] = this.csrf;
    const response = await fetch(this.base + path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = { message: text };
    }
    if (!response.ok) {
      const message =
        parsed?.error?.message ?? parsed?.message ?? parsed?.detail ?? `HTTP ${response.status}`;
      throw new ApiError(String(message), response.status, parsed);
    }
    return parsed as T;
  }

  builder(entityType: string) {
    return this.call<BuilderData>("GET", `/definitions/${encodeURIComponent(entityType)}/builder`);
  }
  compile(orgDefinition: OrgDefinition) {
    return this.call<CompileResult>("POST", "/definitions/compile", { orgDefinition });
  }
  check(entityType: string, expression: string, kind: "condition" | "script" | "edge") {
    return this.call<CheckResult>("POST", "/expressions/check", { entityType, expression, kind });
  }
  saveDraft(orgDefinition: OrgDefinition) {
    return this.call<Json>("POST", "/definitions/drafts", orgDefinition);
  }
  publish(entityType: string, orgDefinition: OrgDefinition) {
    return this.call<Json>("POST", `/definitions/${encodeURIComponent(entityType)}/publish`, {
      orgDefinition,
    });
  }
  versions(entityType: string) {
    return this.call<Version[] | { versions: Version[] }>(
      "GET",
      `/definitions/${encodeURIComponent(entityType)}/versions`,
    ).then((r) => (Array.isArray(r) ? r : r.versions));
  }
  rollback(entityType: string, versionId: string) {
    return this.call<Json>("POST", `/definitions/${encodeURIComponent(entityType)}/rollback`, {
      versionId,
    });
  }
  templates() {
    return this.call<TemplateSummary[] | { templates: TemplateSummary[] }>("GET", "/templates").then(
      (r) => (Array.isArray(r) ? r : r.templates),
    );
  }
  template(name: string) {
    return this.call<Template>("GET", `/templates/${encodeURIComponent(name)}`);
  }
}
